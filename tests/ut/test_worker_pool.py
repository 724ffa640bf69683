"""The pooled workers of one process, and a device context that holds one runtime at a time."""

from __future__ import annotations

from typing import Any

import pytest
from pooled_workers import ORIGIN, keeping

from simpler.errors import DeviceRuntimeError
from simpler.plugin.options import one_runtime_per_device, plugin_active
from simpler.plugin.worker_pool import WorkerPool

pytest_plugins = ["pytester"]


class OneRuntimeContext:
    """A card whose context caches one runtime, as CANN's does: a second runtime's init
    fails while the first one's runner is still open."""

    def __init__(self) -> None:
        self.open_runtime: str | None = None
        self.sticky = False
        self.reset_works = True
        self.inits: list[str] = []


class Runner:
    def __init__(self, card: OneRuntimeContext, runtime: str, device: int) -> None:
        self.card, self.runtime, self.device = card, runtime, device

    @property
    def unusable(self) -> bool:
        return self.card.sticky

    def init(self) -> None:
        if self.card.sticky or self.card.open_runtime not in (None, self.runtime):
            raise DeviceRuntimeError(
                507899,
                "rtSetDevice",
                f"context holds {self.card.open_runtime}",
                device=0,
                platform="myhw",
            )
        self.card.open_runtime = self.runtime
        self.card.inits.append(self.runtime)

    def probe(self) -> bool:
        return not self.card.sticky

    def force_reset(self) -> None:
        if not self.card.reset_works:
            raise DeviceRuntimeError(
                507033, "rtDeviceReset", "reset failed", device=0, platform="myhw"
            )
        self.card.sticky = False  # the cached runtime stays until its runner closes

    def finalize(self) -> int:
        return 507899 if self.card.sticky else 0

    def close(self) -> None:
        if self.card.open_runtime == self.runtime:
            self.card.open_runtime = None


def _pool(card: OneRuntimeContext, records: list[dict[str, Any]], **options: Any) -> WorkerPool:
    def factory_for(runtime: str) -> Any:
        return lambda platform, device: Runner(card, runtime, device)

    return WorkerPool(
        "myhw", 0, "gw0", keeping(records), origin=ORIGIN, recovery=True, factory_for=factory_for,
        **options,
    )  # fmt: skip


def test_without_the_option_a_second_runtime_cannot_start_on_such_a_context() -> None:
    card, records = OneRuntimeContext(), []
    pool = _pool(card, records)
    assert pool.get("host").runnable
    # The second runtime's init fails: without the option the pool keeps both open.
    assert not pool.get("aicpu").runnable


def test_the_option_retires_one_runtime_before_another_starts_on_the_device() -> None:
    card, records = OneRuntimeContext(), []
    pool = _pool(card, records, one_runtime_per_device=True)
    host = pool.get("host")
    assert host.runnable
    aicpu = pool.get("aicpu")
    assert aicpu.runnable and host.state == "closed"
    retired = [r for r in records if r["dest"] == "closed"]
    assert [r["runtime"] for r in retired] == ["host"]
    assert "retired: runtime 'aicpu' starts on device 0" in retired[0]["reason"]
    # Back to the first runtime: a new worker, and the other one retired in turn.
    again = pool.get("host")
    assert again is not host and again.runnable and aicpu.state == "closed"
    assert card.inits == ["host", "aicpu", "host"]
    assert pool.get("host") is again  # the same runtime keeps its worker


def test_a_worker_that_could_not_be_recovered_keeps_skipping_after_a_retirement() -> None:
    card, records = OneRuntimeContext(), []
    pool = _pool(card, records, one_runtime_per_device=True)
    host = pool.get("host")
    card.sticky, card.reset_works = True, False
    host.after_test(None, "test_fault")
    assert host.state == "skipped" and host.skip_reason
    card.sticky, card.reset_works = False, True  # the next runtime finds a clean card
    assert pool.get("aicpu").runnable
    # Its runtime's later tests are still skipped and registered, never silently re-run.
    later = pool.get("host")
    assert later is host and not later.runnable and later.skip_reason


def test_the_setting_comes_from_the_ini_without_activating_the_plugin(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini("[pytest]\nsimpler_one_runtime_per_device = true\n")
    config = pytester.parseconfig()
    assert one_runtime_per_device(config)
    # A pool setting in a project's ini shapes the worker fixture, and switches nothing on.
    assert not plugin_active(config)


def test_the_setting_comes_from_the_option(pytester: pytest.Pytester) -> None:
    assert not one_runtime_per_device(pytester.parseconfig())
    assert one_runtime_per_device(pytester.parseconfig("--simpler-one-runtime-per-device"))


class SharedContext(OneRuntimeContext):
    """A card whose one context every runtime shares (a GPU's primary context)."""


class SharedRunner(Runner):
    def init(self) -> None:
        if self.card.sticky:
            raise DeviceRuntimeError(700, "cuModuleLoad", "sticky", device=0, platform="myhw")
        self.card.inits.append(self.runtime)


def _shared_pool(card: SharedContext, records: list[dict[str, Any]]) -> WorkerPool:
    def factory_for(runtime: str) -> Any:
        return lambda platform, device: SharedRunner(card, runtime, device)

    return WorkerPool(
        "myhw", 0, "gw0", keeping(records), origin=ORIGIN, recovery=True, factory_for=factory_for
    )


@pytest.mark.parametrize("reset_works", [True, False])
def test_a_fault_under_one_runtime_is_checked_for_before_another_runtime_runs(
    reset_works: bool,
) -> None:
    card, records = SharedContext(), []
    pool = _shared_pool(card, records)
    host, aicpu = pool.get("host"), pool.get("aicpu")
    card.sticky, card.reset_works = True, reset_works
    host.after_test(None, "test_fault")  # the card is dirty for both runtimes now
    if reset_works:
        # The reset cleaned the shared card: the other runtime's worker probes clean, runs on.
        assert host.state == "rebuilt" and pool.get("aicpu") is aicpu and aicpu.runnable
        assert aicpu.path == ["created", "healthy"]
    else:
        # It never runs a test on the dirty card: it probes, fails to heal, and gives up, so
        # its tests are registered for a fresh process instead of failing there.
        assert not pool.get("aicpu").runnable and aicpu.state == "skipped"
        assert aicpu.path[:3] == ["created", "healthy", "poisoned"]
