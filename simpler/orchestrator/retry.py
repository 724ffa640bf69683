"""The retry phase: fresh processes for the poison-skipped tests and each test that poisoned."""

from __future__ import annotations

from simpler.contract import EXIT_FAILED, EXIT_OK
from simpler.orchestrator.context import RunContext
from simpler.orchestrator.pytest_args import without_selection
from simpler.orchestrator.pytest_run import phase_call, phase_exit, run_pytest
from simpler.reporting.queries import poison_skipped, poison_triggers, quarantined_devices
from simpler.scheduler.locks import hold_devices

__all__ = ["RETRY_ATTEMPTS", "retry_phase"]

RETRY_ATTEMPTS = (2, 3)  # the triggering test's extra attempts, each on a clean card


def retry_phase(ctx: RunContext) -> int:
    records = ctx.records()
    victims = poison_skipped(records)
    triggers = poison_triggers(records)
    flags = without_selection(ctx.pytest_args)
    # A fresh process sees a clean card, but prefer one that was never quarantined.
    clean = [d for d in ctx.devices if d not in quarantined_devices(records)] or ctx.devices
    worst = EXIT_OK
    if not victims and not triggers:
        return worst
    with hold_devices(clean[:1]):
        if victims:
            extra = ["--simpler-retry-role", "victim", *victims]
            call = phase_call(ctx, "retry", clean[:1], attempt=2, extra=extra, user_args=flags)
            worst = max(worst, phase_exit(run_pytest(call)))
        for nodeid in triggers:
            worst = max(worst, _retry_trigger(ctx, nodeid, flags, clean[:1]))
    return worst


def _retry_trigger(ctx: RunContext, nodeid: str, flags: list[str], device: list[int]) -> int:
    """Up to two more attempts, each in a process of its own so a second fault stays contained."""
    for attempt in RETRY_ATTEMPTS:
        extra = ["--simpler-retry-role", "trigger", nodeid]
        call = phase_call(ctx, "retry", device, attempt=attempt, extra=extra, user_args=flags)
        if phase_exit(run_pytest(call)) == EXIT_OK:
            return EXIT_OK
    return EXIT_FAILED
