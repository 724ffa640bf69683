"""Add registrations up per device count, backend and suite: the numbers every view shows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from simpler.capacity.model import NIGHTLY_PREFIXES, Registration
from simpler.capacity.sizing import device_count

__all__ = [
    "BACKEND_ALIASES",
    "BACKEND_DISPLAY_ORDER",
    "Bucket",
    "Capacity",
    "Schedules",
    "SizeGroup",
    "Split",
    "SuiteStats",
    "Tally",
    "aggregate",
    "backend_order",
    "backend_slot",
    "sorted_suites",
]

# Columns read the same in every report: the common backends first, in a fixed order,
# then any other backend alphabetically.
BACKEND_DISPLAY_ORDER = ("cuda", "amd", "npu", "cpu", "hcu", "xpu", "dcu", "musa", "mlx", "sim")
# Names registries use for the same hardware: sglang says "amd", others say "rocm".
BACKEND_ALIASES = {"rocm": "amd"}


def backend_slot(backend: str) -> str:
    """The display slot of a backend: its lower-case name, aliases folded (rocm is amd)."""
    name = backend.lower()
    return BACKEND_ALIASES.get(name, name)


def backend_order(backend: str) -> tuple[int, str]:
    """Sort key giving BACKEND_DISPLAY_ORDER, then the rest alphabetically."""
    slot = backend_slot(backend)
    known = BACKEND_DISPLAY_ORDER.index(slot) if slot in BACKEND_DISPLAY_ORDER else None
    return (len(BACKEND_DISPLAY_ORDER) if known is None else known, backend.lower())


# Plain classes with __slots__, not dataclasses: `simpler capacity` would otherwise be the
# only reason its process imports dataclasses and inspect, a tenth of its time on 20k entries.


class Split:
    """The enabled registrations of one schedule (per commit, or nightly)."""

    __slots__ = ("count", "device_s", "est_time_s")

    def __init__(self) -> None:
        self.count = 0
        self.est_time_s = 0.0
        self.device_s = 0.0  # est_time times devices; unsized registrations add no device time

    def add(self, count: int, est_time_s: float, size: int | None) -> None:
        self.count += count
        self.est_time_s += est_time_s
        if size is not None:
            self.device_s += est_time_s * size

    @property
    def device_hours(self) -> float:
        return self.device_s / 3600


class Schedules:
    """Enabled registrations split into what runs on every commit and what runs at night."""

    __slots__ = ("nightly", "per_commit")

    def __init__(self) -> None:
        self.per_commit = Split()
        self.nightly = Split()

    def add(self, bucket: Bucket, size: int | None) -> None:
        split = self.per_commit if bucket.per_commit else self.nightly
        split.add(bucket.count, bucket.est_time_s, size)

    @property
    def device_hours(self) -> float:
        return self.per_commit.device_hours + self.nightly.device_hours


class Tally:
    """Counts over a set of registrations; times and backend counts cover enabled ones only."""

    __slots__ = (
        "backend_schedules",
        "backends",
        "disabled",
        "enabled",
        "est_time_s",
        "schedules",
        "suites",
    )

    def __init__(self) -> None:
        self.enabled = 0
        self.disabled = 0
        self.est_time_s = 0.0
        self.backends: Counter[str] = Counter()
        self.suites: set[str] = set()
        self.schedules = Schedules()
        self.backend_schedules: dict[str, Schedules] = {}

    def add(self, bucket: Bucket, size: int | None) -> None:
        self.suites.add(bucket.suite)
        self.enabled += bucket.count
        self.est_time_s += bucket.est_time_s
        self.backends[bucket.backend] += bucket.count
        self.schedules.add(bucket, size)
        schedules = self.backend_schedules.get(bucket.backend)
        if schedules is None:
            schedules = self.backend_schedules[bucket.backend] = Schedules()
        schedules.add(bucket, size)

    def add_disabled(self, registration: Registration) -> None:
        self.suites.add(registration.suite)
        self.disabled += 1


class SuiteStats:
    """One suite on one backend."""

    __slots__ = (
        "backend",
        "disabled",
        "disabled_reasons",
        "enabled",
        "est_time_s",
        "nightly_count",
        "per_commit",
        "size",
        "suite",
    )

    def __init__(self, suite: str, backend: str, size: int | None) -> None:
        self.suite = suite
        self.backend = backend
        self.size = size
        self.enabled = 0
        self.disabled = 0
        self.est_time_s = 0.0
        self.per_commit = 0  # enabled registrations that run on every commit
        self.nightly_count = 0  # enabled registrations that run at night
        self.disabled_reasons: list[tuple[str, str]] = []  # (filename, why)

    def add(self, bucket: Bucket) -> None:
        self.enabled += bucket.count
        self.est_time_s += bucket.est_time_s
        if bucket.per_commit:
            self.per_commit += bucket.count
        else:
            self.nightly_count += bucket.count

    def add_disabled(self, registration: Registration) -> None:
        self.disabled += 1
        self.disabled_reasons.append((registration.filename, registration.disabled or ""))

    @property
    def nightly(self) -> bool:
        """Any enabled registration runs at night, or the name says the suite does."""
        return self.nightly_count > 0 or self.suite.startswith(NIGHTLY_PREFIXES)

    @property
    def type_label(self) -> str:
        return "Nightly" if self.nightly else "Per-Commit"

    @property
    def type_cell(self) -> str:
        """The label, or both counts when the suite runs partly per commit, partly at night."""
        if self.per_commit and self.nightly_count:
            return f"{self.per_commit} per-commit, {self.nightly_count} nightly"
        return self.type_label


def sorted_suites(suites: Iterable[SuiteStats]) -> list[SuiteStats]:
    """By device count (unsized last), then suite name, then backend in display order."""
    return sorted(
        suites,
        key=lambda stats: (
            stats.size is None,
            stats.size or 0,
            stats.suite,
            backend_order(stats.backend),
        ),
    )


class SizeGroup:
    """Every registration whose suite needs ``size`` devices (None: unsized)."""

    __slots__ = ("size", "suites", "tally")

    def __init__(self, size: int | None) -> None:
        self.size = size
        self.tally = Tally()
        self.suites: dict[tuple[str, str], SuiteStats] = {}  # by (backend, suite)

    def add(self, bucket: Bucket) -> None:
        self.tally.add(bucket, self.size)
        self._stats(bucket.backend, bucket.suite).add(bucket)

    def add_disabled(self, registration: Registration) -> None:
        self.tally.add_disabled(registration)
        self._stats(registration.backend, registration.suite).add_disabled(registration)

    def _stats(self, backend: str, suite: str) -> SuiteStats:
        stats = self.suites.get((backend, suite))
        if stats is None:
            stats = self.suites[(backend, suite)] = SuiteStats(suite, backend, self.size)
        return stats

    def backends(self) -> list[str]:
        """Every backend with a registration here, enabled or not, in display order."""
        return sorted({backend for backend, _ in self.suites}, key=backend_order)

    def suites_of(self, backend: str) -> list[SuiteStats]:
        return sorted(
            (stats for (owner, _), stats in self.suites.items() if owner == backend),
            key=lambda stats: stats.suite,
        )


class Capacity:
    """The whole report: groups by device count (ascending, unsized last) and the totals."""

    __slots__ = ("groups", "totals")

    def __init__(self, groups: list[SizeGroup], totals: Tally) -> None:
        self.groups = groups
        self.totals = totals

    def active_backends(self) -> list[str]:
        """Backends with at least one enabled registration, in display order."""
        return sorted(self.totals.backends, key=backend_order)

    def sized_groups(self) -> list[SizeGroup]:
        return [group for group in self.groups if group.size is not None]

    def unsized_group(self) -> SizeGroup:
        last = self.groups[-1] if self.groups else None
        return last if last is not None and last.size is None else SizeGroup(None)

    def all_suites(self) -> list[SuiteStats]:
        """Every (suite, backend), by device count, suite name, then backend display order."""
        return sorted_suites(stats for group in self.groups for stats in group.suites.values())

    def unsized_suite_names(self) -> list[str]:
        return sorted(self.unsized_group().tally.suites)


class Bucket:
    """The enabled registrations of one suite on one backend and one schedule, added up."""

    __slots__ = ("backend", "count", "est_time_s", "per_commit", "suite")

    def __init__(self, suite: str, backend: str, *, per_commit: bool) -> None:
        self.suite = suite
        self.backend = backend
        self.per_commit = per_commit
        self.count = 0
        self.est_time_s = 0.0


def aggregate(registrations: Iterable[Registration]) -> Capacity:
    # One pass that only buckets: a registry of 20k registrations has a few hundred buckets,
    # and everything else is done per bucket, so the report costs little more than the JSON.
    buckets: dict[tuple[str, str, bool], Bucket] = {}
    disabled: list[Registration] = []
    for registration in registrations:
        if registration.disabled is not None:
            disabled.append(registration)
            continue
        key = (registration.suite, registration.backend, registration.nightly)
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = Bucket(*key[:2], per_commit=registration.per_commit)
        bucket.count += 1
        bucket.est_time_s += registration.est_time
    groups: dict[int | None, SizeGroup] = {}
    totals = Tally()
    sizes: dict[str, int | None] = {}  # many buckets share a suite: size each name once
    for bucket in buckets.values():
        size = _size_of(bucket.suite, sizes)
        _group(groups, size).add(bucket)
        totals.add(bucket, size)
    for registration in disabled:
        _group(groups, _size_of(registration.suite, sizes)).add_disabled(registration)
        totals.add_disabled(registration)
    ordered = sorted(groups.values(), key=lambda group: (group.size is None, group.size or 0))
    return Capacity(ordered, totals)


def _size_of(suite: str, sizes: dict[str, int | None]) -> int | None:
    if suite not in sizes:
        sizes[suite] = device_count(suite)
    return sizes[suite]


def _group(groups: dict[int | None, SizeGroup], size: int | None) -> SizeGroup:
    group = groups.get(size)
    if group is None:
        group = groups[size] = SizeGroup(size)
    return group
