"""What a test needs from simpler: the runtime of its pooled worker and, for a Resource test,
how many devices; and the listing of it that ``simpler run``'s up-front collection reads.

The project's hook answers first (through ``item.ihook``, once per test), the marker when no
hook does. A bad answer or a raising hook is a ``BadHookAnswer``: one line naming the test
and the hook (docs/architecture.md, "What a test needs").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from simpler.contract import USAGE_ERROR_KEY

__all__ = [
    "DEFAULT_RUNTIME",
    "BadHookAnswer",
    "DeviceNeed",
    "check_answers",
    "device_need",
    "refuse",
    "refused",
    "runtime_of",
    "write_listing",
    "write_listing_error",
]

DEFAULT_RUNTIME = "default"
RUNTIME_HOOK = "pytest_simpler_runtime"
DEVICE_COUNT_HOOK = "pytest_simpler_device_count"


class BadHookAnswer(Exception):
    """A project's hook answered what simpler cannot use; the message is one line (the
    plugin raises it as a ``pytest.UsageError``)."""


@dataclass(frozen=True)
class DeviceNeed:
    """A Resource test's devices; ``est``/``timeout`` as the marker gave them (checked by
    the orchestrator), None without a marker."""

    count: int
    est: Any = None
    timeout: Any = None


_RUNTIME = pytest.StashKey[str]()
_DEVICES = pytest.StashKey["DeviceNeed | None"]()
_REFUSED = pytest.StashKey[str]()


def runtime_of(item: pytest.Item) -> str:
    """The runtime of the test's pooled worker: the hook's, the marker's, or ``default``."""
    if _RUNTIME not in item.stash:
        answer = _ask(item, RUNTIME_HOOK)
        if answer is None:
            marker = item.get_closest_marker("runtime")
            answer = str(marker.args[0]) if marker and marker.args else DEFAULT_RUNTIME
        elif not isinstance(answer, str) or not answer.strip():
            raise _bad(item, RUNTIME_HOOK, answer, "a runtime is a non-empty str")
        item.stash[_RUNTIME] = answer
    return item.stash[_RUNTIME]


def device_need(item: pytest.Item) -> DeviceNeed | None:
    """How many devices the test needs (None: an L2 test): the hook's count, or the marker's."""
    if _DEVICES not in item.stash:
        marker = item.get_closest_marker("device_count")
        est = marker.kwargs.get("est") if marker else None
        timeout = marker.kwargs.get("timeout") if marker else None
        answer = _ask(item, DEVICE_COUNT_HOOK)
        need: DeviceNeed | None = None
        if answer is not None:
            # bool is an int, but device_count True is a mistake, not one device.
            if isinstance(answer, bool) or not isinstance(answer, int) or answer < 1:
                raise _bad(item, DEVICE_COUNT_HOOK, answer, "a device count is an int of 1 or more")
            need = DeviceNeed(int(answer), est, timeout)
        elif marker is not None:
            # The marker's count as written: the orchestrator checks it (a usage error there).
            count = marker.args[0] if marker.args else marker.kwargs.get("n", 1)
            need = DeviceNeed(count, est, timeout)
        item.stash[_DEVICES] = need
    return item.stash[_DEVICES]


def check_answers(items: Iterable[pytest.Item], pooled: Callable[[pytest.Item], bool]) -> None:
    """Ask every test for its device count, and every ``pooled`` one for its runtime, so that
    a bad answer stops the session at collection (``BadHookAnswer``), before anything runs."""
    for item in items:
        device_need(item)
        if pooled(item):
            runtime_of(item)


def write_listing(
    target: Path, items: Iterable[pytest.Item], pooled: Callable[[pytest.Item], bool]
) -> None:
    """For ``simpler run``: every collected test, with its device count (None: an L2 test)."""
    listing = []
    for item in items:
        entry: dict[str, Any] = {"nodeid": item.nodeid, "devices": None, "pooled": pooled(item)}
        if item.get_closest_marker("unskippable") is not None:
            entry["unskippable"] = True
        need = device_need(item)
        if need is not None:
            entry.update(devices=need.count, est_s=need.est, timeout_s=need.timeout)
        listing.append(entry)
    target.write_text(json.dumps(listing))


def refuse(session: pytest.Session, bad: BadHookAnswer) -> pytest.UsageError:
    """The session ends on ``bad``: the usage error to raise, its line in the listing for
    ``simpler run`` (``--simpler-list``), and ``refused`` says so to the listing's writer.

    In an xdist worker the line also stops the session: xdist's controller, which collects
    nothing itself, then ends with it instead of a crash report.
    """
    config = session.config
    config.stash[_REFUSED] = str(bad)
    if hasattr(config, "workerinput"):
        session.shouldstop = f"simpler: {bad}"
    target = config.option.simpler_list
    if target:
        write_listing_error(Path(target), str(bad))
    return pytest.UsageError(str(bad))


def refused(config: pytest.Config) -> bool:
    """A bad hook answer ended the collection (pytest still calls ``pytest_collection_finish``
    after ``pytest_collection_modifyitems`` raised): no listing may overwrite its line."""
    return _REFUSED in config.stash


def write_listing_error(target: Path, message: str) -> None:
    """The listing of a refused collection: the orchestrator stops with this one line."""
    target.write_text(json.dumps({USAGE_ERROR_KEY: message}))


def _ask(item: pytest.Item, hook: str) -> Any:
    try:
        return getattr(item.ihook, hook)(item=item)
    except Exception as error:  # a project's hook: one line, never a traceback
        raise BadHookAnswer(f"{item.nodeid}: {hook} raised {_short(error)}") from None


def _bad(item: pytest.Item, hook: str, answer: object, rule: str) -> BadHookAnswer:
    return BadHookAnswer(
        f"{item.nodeid}: {hook} returned {_short(answer)} ({type(answer).__name__}); {rule} "
        "(None: no answer, the marker decides)"
    )


def _short(value: object) -> str:
    """``repr`` on one line, cut to a readable length."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:77] + "..."
