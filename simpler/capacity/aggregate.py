"""Add registrations up per device count, backend and suite: the numbers every view shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from simpler.capacity.model import NIGHTLY_PREFIXES, Registration
from simpler.capacity.sizing import device_count

__all__ = [
    "BACKEND_DISPLAY_ORDER",
    "Capacity",
    "SizeGroup",
    "SuiteStats",
    "Tally",
    "aggregate",
    "backend_order",
    "sorted_suites",
]

# Columns read the same in every report: the common backends first, in a fixed order,
# then any other backend alphabetically.
BACKEND_DISPLAY_ORDER = ("cuda", "rocm", "npu", "hcu", "xpu", "dcu", "sim")


def backend_order(backend: str) -> tuple[int, str]:
    """Sort key giving BACKEND_DISPLAY_ORDER, then the rest alphabetically."""
    name = backend.lower()
    known = BACKEND_DISPLAY_ORDER.index(name) if name in BACKEND_DISPLAY_ORDER else None
    return (len(BACKEND_DISPLAY_ORDER) if known is None else known, name)


@dataclass
class Tally:
    """Counts over a set of registrations; times and backend counts cover enabled ones only."""

    enabled: int = 0
    disabled: int = 0
    est_time_s: float = 0.0
    backends: Counter[str] = field(default_factory=Counter)
    suites: set[str] = field(default_factory=set)

    def add(self, registration: Registration) -> None:
        self.suites.add(registration.suite)
        if not registration.enabled:
            self.disabled += 1
            return
        self.enabled += 1
        self.est_time_s += registration.est_time
        self.backends[registration.backend] += 1


@dataclass
class SuiteStats:
    """One suite on one backend."""

    suite: str
    backend: str
    size: int | None
    enabled: int = 0
    disabled: int = 0
    est_time_s: float = 0.0
    any_enabled_nightly: bool = False

    def add(self, registration: Registration) -> None:
        if not registration.enabled:
            self.disabled += 1
            return
        self.enabled += 1
        self.est_time_s += registration.est_time
        self.any_enabled_nightly = self.any_enabled_nightly or registration.nightly

    @property
    def nightly(self) -> bool:
        return self.any_enabled_nightly or self.suite.startswith(NIGHTLY_PREFIXES)

    @property
    def type_label(self) -> str:
        return "Nightly" if self.nightly else "Per-Commit"


def sorted_suites(suites: Iterable[SuiteStats]) -> list[SuiteStats]:
    """By suite name, then backend in display order."""
    return sorted(suites, key=lambda stats: (stats.suite, backend_order(stats.backend)))


@dataclass
class SizeGroup:
    """Every registration whose suite needs ``size`` devices (None: unsized)."""

    size: int | None
    tally: Tally = field(default_factory=Tally)
    suites: dict[tuple[str, str], SuiteStats] = field(default_factory=dict)  # (backend, suite)

    def add(self, registration: Registration) -> None:
        self.tally.add(registration)
        key = (registration.backend, registration.suite)
        stats = self.suites.get(key)
        if stats is None:
            stats = self.suites[key] = SuiteStats(
                registration.suite, registration.backend, self.size
            )
        stats.add(registration)

    def backends(self) -> list[str]:
        """Every backend with a registration here, enabled or not, in display order."""
        return sorted({backend for backend, _ in self.suites}, key=backend_order)

    def suites_of(self, backend: str) -> list[SuiteStats]:
        return sorted(
            (stats for (owner, _), stats in self.suites.items() if owner == backend),
            key=lambda stats: stats.suite,
        )


@dataclass
class Capacity:
    """The whole report: groups by device count (ascending, unsized last) and the totals."""

    groups: list[SizeGroup]
    totals: Tally

    def active_backends(self) -> list[str]:
        """Backends with at least one enabled registration, in display order."""
        return sorted(self.totals.backends, key=backend_order)

    def sized_groups(self) -> list[SizeGroup]:
        return [group for group in self.groups if group.size is not None]

    def unsized_group(self) -> SizeGroup:
        last = self.groups[-1] if self.groups else None
        return last if last is not None and last.size is None else SizeGroup(None)

    def all_suites(self) -> list[SuiteStats]:
        """Every (suite, backend), sorted by suite name then backend display order."""
        return sorted_suites(stats for group in self.groups for stats in group.suites.values())

    def unsized_suite_names(self) -> list[str]:
        return sorted(self.unsized_group().tally.suites)


def aggregate(registrations: Iterable[Registration]) -> Capacity:
    groups: dict[int | None, SizeGroup] = {}
    totals = Tally()
    sizes: dict[str, int | None] = {}  # many registrations share a suite: size each name once
    for registration in registrations:
        suite = registration.suite
        if suite not in sizes:
            sizes[suite] = device_count(suite)
        size = sizes[suite]
        group = groups.get(size)
        if group is None:
            group = groups[size] = SizeGroup(size)
        group.add(registration)
        totals.add(registration)
    ordered = sorted(groups.values(), key=lambda group: (group.size is None, group.size or 0))
    return Capacity(ordered, totals)
