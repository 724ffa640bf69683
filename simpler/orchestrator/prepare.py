"""A ``simpler run``'s options (a RunOptions) turned into a run, before anything runs: the
devices, the run id, the phases, the quarantine, the up-front collection, the share of the
suite this run runs (all of it, ``--shard I/N``, or ``--plan F --job ID``), the fit of its
Resource tests to the devices and the history database. Everything the user got wrong is a
UsageError here, one line and exit 2, so that no test has started when it is said.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from simpler.contract import PHASE_ORDER
from simpler.contract.settings import DEADLINE_ENV, RUN_ID_ENV
from simpler.coverage.options import CovRequest, cov_options
from simpler.coverage.process_env import RunCoverage, data_dir_of
from simpler.devices import parse_devices
from simpler.orchestrator.children import ChildStarts
from simpler.orchestrator.collection import inspect_suite
from simpler.orchestrator.context import RunContext, RunSetup
from simpler.orchestrator.deadline import run_deadline
from simpler.orchestrator.empty_run import record_nothing_to_run
from simpler.orchestrator.options import RunOptions
from simpler.orchestrator.preflight import check_env_numbers, check_faults, check_platform
from simpler.orchestrator.pytest_args import PytestArgs
from simpler.orchestrator.quarantine_setup import load_run_quarantine, warn_unmatched
from simpler.orchestrator.run_identity import check_run_id, run_id_for
from simpler.orchestrator.slots import cpu_count, run_slots
from simpler.split.listing import ResourceTest, SuiteListing
from simpler.usage import InfraError, UsageError

if TYPE_CHECKING:
    from simpler.impact.run_map import MapTarget
    from simpler.orchestrator.affected_run import AffectedRun

__all__ = ["prepare_run"]

PROG = "simpler run"


def prepare_run(options: RunOptions, pytest_args: list[str]) -> tuple[RunContext, list[str]] | None:
    """The run and its phases, or None when this run's share of a split suite is empty."""
    from simpler.reporting import report_file as report  # not at the top: `capacity` skips it
    from simpler.split.run_share import RunShare

    devices = _devices(options.device)
    _check_run_ids(options.run_id)
    asked = _impact_coverage(options.coverage) if options.impact_map else options.coverage
    coverage = cov_options(asked, PROG)  # bad options, or no coverage.py: before any process
    phases = _phases(options.phases)
    slots = run_slots(options.jobs, len(devices), PROG)
    check_faults(options.platform, pytest_args)
    check_env_numbers()
    quarantine = load_run_quarantine(options.quarantine, PROG)  # before anything runs
    split = RunShare.read(options.shard, options.shard_durations, options.plan, options.job)
    children = _early_children(options, phases, coverage.enabled)
    with _closed_on_error(children):
        listing, parsed_args, fork = _listing(
            options.platform, devices, phases, pytest_args, split.splits
        )
        if not fork:
            children.refuse("the project's simpler_fork_children = false")
        if options.isolate is not None and parsed_args.numprocesses is not None:
            raise UsageError(
                f"{PROG}: -n {parsed_args.numprocesses} after -- and --isolate {options.isolate} "
                "both say how the L2 tests share processes: give one (-j N sets how many run at "
                "once)"
            )
        warn_unmatched(quarantine, listing)
        affected = _affected(options, listing, verbose=parsed_args.verbose)
        if affected is not None and affected.runs_nothing:
            children.close()
            record_nothing_to_run(options, split.label, len(listing.nodeids()) if listing else 0,
                                  affected.headline, affected.record)  # fmt: skip
            print(f"simpler: {affected.headline} -> exit 0")  # a deliberate, loud empty run
            return None
        if affected is not None:
            listing = affected.listing
        l2_files: list[str] | None = None
        resource_tests = listing.resource if listing is not None else None
        if split.splits and listing is not None:
            mine = split.share(listing, len(devices))
            if mine.empty:
                children.close()
                why = f"{split} has nothing to run (the suite has fewer units)"
                decided = affected.record if affected is not None else None
                record_nothing_to_run(options, split.label, len(listing.nodeids()), why, decided)
                print(f"{PROG}: {why}")
                return None
            l2_files, resource_tests = mine.l2_files, mine.resource
            _check_fit(mine.resource, devices, phases)
        path = report.report_path(options.report).resolve()
        starts_run = "l2" in phases or options.new_run
        run_id = run_id_for(path, explicit=options.run_id, starts_run=starts_run)
        history = _history(options.history, phases)
        if not ((resource_tests and "resource" in phases) or (options.isolate and "l2" in phases)):
            # Started on the chance: this run's L2 and Resource start no child. Its preloads
            # may still run; the run goes on, and waits for its end with the tests'.
            children.close(wait=False)
        measured = RunCoverage(coverage, data_dir_of(path, run_id)) if coverage.enabled else None
        impact_map = _impact_target(history, path, run_id) if options.impact_map else None
        # Last: the collection above is part of the start-up the deadline must leave room for.
        deadline = run_deadline(options.deadline or os.environ.get(DEADLINE_ENV), PROG)
        setup = RunSetup(
            options=options,
            devices=devices,
            report=path,
            run_id=run_id,
            slots=slots,
            pytest_args=parsed_args,
            resource_tests=resource_tests,
            l2_files=l2_files,
            l2_tests=_l2_tests(listing, l2_files),
            l2_plain=frozenset(listing.plain) if listing is not None else frozenset(),
            shard=split.label,
            history=history,
            impact_map=impact_map,
            only_tests=affected.only_tests if affected is not None else None,
            affected=affected.record if affected is not None else None,
            test_quarantine=quarantine,
            coverage=measured,
            deadline=deadline,
        )
        return RunContext(setup, children=children), phases


def _early_children(options: RunOptions, phases: list[str], coverage: bool) -> ChildStarts:
    """How the run's children start, the warm process already starting where the run may
    fork one (an isolated L2, a Resource phase) and a core is free beside the up-front
    collection: its preloads then cost the run nothing. Closed again when it is not needed."""
    children = ChildStarts(options.platform)
    if coverage:
        children.preload_more.append("coverage")  # each child starts it after its fork
    may_fork = "resource" in phases or (options.isolate is not None and "l2" in phases)
    if may_fork and cpu_count() > 1:
        children.start(dict(os.environ))
    return children


@contextmanager
def _closed_on_error(children: ChildStarts) -> Iterator[None]:
    """No warm process outlives a run refused before it started."""
    try:
        yield
    except BaseException:
        children.close()
        raise


def _affected(
    options: RunOptions, listing: SuiteListing | None, *, verbose: bool
) -> AffectedRun | None:
    """``--affected-since``: the suite cut to what the change can break, said now; with
    pytest's ``-v``, each test's reasons too (the report keeps them whatever the verbosity)."""
    if options.affected_since is None:
        if options.affected_shadow:
            raise UsageError(f"{PROG}: --affected-shadow goes with --affected-since REV")
        return None
    if listing is None:
        print(f"{PROG}: --affected-since: the suite was not collected: everything runs")
        return None
    from simpler.orchestrator.affected_run import select_affected

    affected = select_affected(
        options.affected_since, listing, options.history, options.platform,
        shadow=options.affected_shadow,
    )  # fmt: skip
    print(f"{PROG}: {affected.headline}", flush=True)
    if verbose:
        print(*affected.every_test, sep="\n", flush=True)
    return affected


def _impact_coverage(asked: CovRequest) -> CovRequest:
    """``--impact-map`` measures the run, each line naming the tests that ran it."""
    if asked.no_cov:
        raise UsageError(f"{PROG}: --impact-map measures the run: it cannot go with --no-cov")
    # No source named: the checkout, whose code the map is of (not what is installed beside).
    sources = asked.cov if asked.cov is not None and any(asked.cov) else (".",)
    return replace(asked, cov=sources, cov_context="test")


def _impact_target(history: str | None, report: Path, run_id: str) -> MapTarget | None:
    """Where the map goes: the run's history, else the default one. Not a checkout (nothing
    to name the map by) is a usage error; a working tree with changes keeps no map, said now."""
    from simpler.history.store import store_ref
    from simpler.impact.git_change import GitUnanswered
    from simpler.impact.run_map import map_target

    try:
        return map_target(store_ref(history), Path.cwd(), report, run_id)
    except GitUnanswered as why:
        if "working tree" not in str(why):
            raise UsageError(f"{PROG}: --impact-map: {why}") from None
        print(f"{PROG}: --impact-map: {why}; this run keeps no map", file=sys.stderr)
        return None


def _devices(text: str) -> list[int]:
    try:
        return parse_devices(text)
    except ValueError as error:
        raise UsageError(f"{PROG}: {error}") from None


def _check_run_ids(explicit: str | None) -> None:
    from_env = os.environ.get(RUN_ID_ENV) or None
    for source, named in (("--run-id", explicit), (RUN_ID_ENV, from_env)):
        if named is not None and not check_run_id(named):
            raise UsageError(
                f"{PROG}: {source} {named!r} is not a run id (letters, digits, . _ : + -)"
            )


def _phases(text: str) -> list[str]:
    phases = [p.strip() for p in text.split(",") if p.strip()]
    unknown = [p for p in phases if p not in PHASE_ORDER]
    if unknown or not phases:
        named = ", ".join(unknown) or "(none)"
        raise UsageError(f"{PROG}: unknown phase {named} (known: {', '.join(PHASE_ORDER)})")
    return phases


def _l2_tests(listing: SuiteListing | None, files: list[str] | None) -> list[str] | None:
    """The L2 tests this run (this share: ``files``) is to run; None when not listed."""
    if listing is None:
        return None
    from simpler.base.nodeids import file_of

    return [n for n in listing.l2 if files is None or file_of(n) in files]


def _history(explicit: str | None, phases: list[str]) -> str | None:
    """The database this run goes into when its report phase ends; opened now, so that a
    file that is not one stops the run before any test (HistoryUnusable: exit 3)."""
    from simpler.orchestrator.run_history import check_history, history_target

    target = history_target(explicit)
    if target is not None and "report" in phases:
        check_history(target)
    return target


def _listing(
    platform: str, devices: list[int], phases: list[str], pytest_args: list[str], split: bool
) -> tuple[SuiteListing | None, PytestArgs, bool]:
    """Asked of pytest before anything starts: what each pytest arg is, for every phase that
    forwards them, and the suite when needed, so a test that can never fit is refused up front."""
    if set(phases) == {"report"}:
        return None, PytestArgs(), True  # the report starts no pytest
    try:
        # L2 needs the suite too: its tests that use no device run apart, as plain pytest.
        wanted = "resource" in phases or "l2" in phases or split
        found = inspect_suite(platform, devices, pytest_args, listing=wanted)
    except ValueError as error:
        raise UsageError(f"{PROG}: {error}") from None
    except InfraError as error:
        raise InfraError(f"{PROG}: {error}") from None
    check_platform(platform, found.runner_hook)
    listing = found.listing
    if found.listing_error is not None:
        if split:
            raise UsageError(
                f"{PROG}: {found.listing_error}; a suite that cannot be collected cannot be sharded"
            )
        # The L2 phase collects the same files and shows the error in full: the run goes red there.
        print(f"{PROG}: {found.listing_error}", file=sys.stderr)
    if listing is None:
        return None, found.pytest_args, found.fork_children
    if not split:  # a share is fitted once it is known: a job runs only its own tests
        _check_fit(listing.resource, devices, phases)
    return listing, found.pytest_args, found.fork_children


def _check_fit(tests: list[ResourceTest], devices: list[int], phases: list[str]) -> None:
    """Only a run that has the Resource phase must fit its tests to the devices."""
    too_big = [t for t in tests if t.devices > len(devices) and "resource" in phases]
    if too_big:
        names = ", ".join(f"{t.nodeid} needs {t.devices}" for t in too_big)
        raise UsageError(
            f"{PROG}: Resource test(s) can never fit the {len(devices)} device(s) of "
            f"--device: {names}"
        )
