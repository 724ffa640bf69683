"""The retry phase: fresh processes for the poison-skipped tests and each test that poisoned.

The victims run together in a fresh process; when a fault inside it poisons that process's
worker beyond reset, the victims still queued behind the fault are registered again and
get another fresh process, so a second fault costs only the test that caused it. Each
trigger gets bounded extra attempts, each in a process of its own.
"""

from __future__ import annotations

from simpler.contract import EXIT_FAILED, EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.pytest_args import undistributed_options
from simpler.orchestrator.pytest_run import phase_call, phase_exit, run_pytest
from simpler.reporting.queries import poison_skipped, poison_triggers, quarantined_devices
from simpler.scheduler.locks import hold_devices

__all__ = ["RETRY_ATTEMPTS", "VICTIM_PROCESSES", "retry_phase"]

RETRY_ATTEMPTS = (2, 3)  # the triggering test's extra attempts, each on a clean card
VICTIM_ATTEMPT = 2  # a victim's first real run is its second attempt
VICTIM_PROCESSES = 4  # fresh processes the victims may take, each after another fault


def retry_phase(ctx: RunContext) -> int:
    records = ctx.records()
    victims = poison_skipped(records)
    triggers = poison_triggers(records)
    flags = undistributed_options(ctx.pytest_args)
    # A fresh process sees a clean card, but prefer one that was never quarantined.
    clean = [d for d in ctx.devices if d not in quarantined_devices(records)] or ctx.devices
    worst = EXIT_OK
    if not victims and not triggers:
        return worst
    with hold_devices(clean[:1]):
        if victims:
            worst = max(worst, _retry_victims(ctx, victims, flags, clean[:1], len(records)))
        for nodeid in triggers:
            worst = max(worst, _retry_trigger(ctx, nodeid, flags, clean[:1]))
    return worst


def _retry_victims(
    ctx: RunContext, victims: list[str], flags: list[str], device: list[int], seen: int
) -> int:
    """Fresh processes until every victim has run, a process makes no progress, or the bound.

    ``seen``: how many of the run's records were there before the first process; each round
    reads the report once and looks only at what its process appended.
    """
    pending, worst = victims, EXIT_OK
    for _ in range(VICTIM_PROCESSES):
        extra = ["--simpler-retry-role", "victim", *pending]
        call = phase_call(
            ctx, "retry", device, attempt=VICTIM_ATTEMPT, extra=extra, user_args=flags
        )
        worst = max(worst, phase_exit(run_pytest(call)))
        records = ctx.records()
        queued_again = [n for n in poison_skipped(records[seen:]) if n in pending]
        seen = len(records)
        if not queued_again or len(queued_again) == len(pending):
            break  # all ran, or none could: another process would change nothing
        pending = queued_again
    return worst


def _retry_trigger(ctx: RunContext, nodeid: str, flags: list[str], device: list[int]) -> int:
    """Up to two more attempts, each in a process of its own so a second fault stays contained."""
    for attempt in RETRY_ATTEMPTS:
        extra = ["--simpler-retry-role", "trigger", nodeid]
        call = phase_call(ctx, "retry", device, attempt=attempt, extra=extra, user_args=flags)
        if phase_exit(run_pytest(call)) == EXIT_OK:
            return EXIT_OK
    return EXIT_FAILED
