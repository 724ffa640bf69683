"""The data every stage of the capacity report passes on: registrations and input errors."""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "NIGHTLY_PREFIXES",
    "NO_SUITE_LABEL",
    "InputError",
    "Loaded",
    "Registration",
    "suite_label",
]

# Suites named like this run on a schedule even when no registration says so.
NIGHTLY_PREFIXES = ("nightly-", "weekly-")
# Real registries hold registrations with an empty suite (sglang's disabled NPU tests): they
# are kept, unsized, under this name wherever a report shows a suite to a person.
NO_SUITE_LABEL = "(no suite)"


def suite_label(suite: str) -> str:
    """The suite as a person reads it: the empty suite gets a visible name."""
    return suite or NO_SUITE_LABEL


class InputError(Exception):
    """Input the report cannot be built from; the message is one line for the user."""


class Registration(NamedTuple):
    """One registered test file of one suite on one backend.

    A NamedTuple rather than a frozen dataclass: a registry holds tens of thousands, and
    building a tuple costs a fraction of a frozen dataclass's checked assignments (nor does
    ``simpler capacity`` then import dataclasses at all).
    """

    filename: str
    backend: str
    suite: str  # "" when the registry gave none: unsized, yet counted like any other
    est_time: float  # seconds
    nightly: bool = False
    disabled: str | None = None  # the reason it is disabled, or None when it runs

    @property
    def enabled(self) -> bool:
        return self.disabled is None

    @property
    def per_commit(self) -> bool:
        """Runs on every commit: neither flagged nightly nor in a nightly/weekly suite."""
        return not self.nightly and not self.suite.startswith(NIGHTLY_PREFIXES)


class Loaded:
    """What one input source yielded: its registrations and the warnings worth printing."""

    __slots__ = ("registrations", "warnings")

    def __init__(
        self, registrations: list[Registration] | None = None, warnings: list[str] | None = None
    ) -> None:
        self.registrations = registrations if registrations is not None else []
        self.warnings = warnings if warnings is not None else []

    def extend(self, other: Loaded) -> None:
        self.registrations.extend(other.registrations)
        self.warnings.extend(other.warnings)
