"""The data every stage of the capacity report passes on: registrations and input errors."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NIGHTLY_PREFIXES", "InputError", "Loaded", "Registration"]

# Suites named like this run on a schedule even when no registration says so.
NIGHTLY_PREFIXES = ("nightly-", "weekly-")


class InputError(Exception):
    """Input the report cannot be built from; the message is one line for the user."""


@dataclass(frozen=True, slots=True)
class Registration:
    """One registered test file of one suite on one backend."""

    filename: str
    backend: str
    suite: str
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


@dataclass
class Loaded:
    """What one input source yielded: its registrations and the warnings worth printing."""

    registrations: list[Registration] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def extend(self, other: Loaded) -> None:
        self.registrations.extend(other.registrations)
        self.warnings.extend(other.warnings)
