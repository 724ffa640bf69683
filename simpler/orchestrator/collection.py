"""Ask pytest once, up front, what the user's args are and (when needed) what the suite holds.

``simpler run`` needs this before anything starts. Every phase that starts pytest forwards
the user's args by what pytest's own parser says each one is (``PytestArgs``), and the
Resource phase and ``--shard`` need the suite collected (not run): which tests are L2,
which need devices; a Resource test that can never fit the pool is a usage error. One
pytest process answers both; it collects only when the listing is wanted.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simpler.contract import USAGE_ERROR_KEY
from simpler.orchestrator.pytest_args import (
    PYTEST_INTERNAL_ERROR,
    PYTEST_NO_TESTS,
    PytestArgs,
    collection_argv,
)
from simpler.split.listing import ResourceTest, SuiteListing
from simpler.usage import InfraError

__all__ = [
    "ListingError",
    "SuiteInspection",
    "collect_suite",
    "inspect_suite",
    "internal_error_reason",
]


class ListingError(RuntimeError):
    """The suite could not be collected."""


@dataclass(frozen=True)
class SuiteInspection:
    """What one up-front pytest process told: the user's args and, if asked, the suite."""

    pytest_args: PytestArgs
    listing: SuiteListing | None = None
    listing_error: str | None = None  # the suite was wanted but could not be collected
    runner_hook: bool = False  # a conftest or plugin implements pytest_simpler_create_runner
    fork_children: bool = True  # the project's ini lets children fork from a warm process


def inspect_suite(
    platform: str, devices: list[int], pytest_args: list[str], *, listing: bool
) -> SuiteInspection:
    """Ask pytest what each of ``pytest_args`` is and, when ``listing``, collect the suite.

    A ValueError is a usage error: pytest refused the args, an ``-n`` asks for more
    workers than there are devices, a ``device_count`` marker is malformed, or a project's
    ``pytest_simpler_runtime``/``pytest_simpler_device_count`` hook answered what simpler
    cannot use.
    """
    with tempfile.TemporaryDirectory(prefix="simpler-collect-") as folder:
        described = Path(folder) / "args.json"
        listed = Path(folder) / "suite.json" if listing else None
        argv = collection_argv(
            platform, devices, str(described), str(listed) if listed else None, pytest_args
        )
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        output = (done.stdout + done.stderr).strip().splitlines()
        if done.returncode == PYTEST_INTERNAL_ERROR:
            # Every phase would meet the same error (a config warning under filterwarnings =
            # error, a plugin that crashed): the run stops here, with pytest's exit code.
            raise InfraError(
                f"pytest stopped with an internal error collecting the suite: "
                f"{internal_error_reason(output)}"
            )
        if not described.exists():
            raise ValueError(f"pytest refused the arguments after --: {_error_line(output)}")
        description = json.loads(described.read_text())
        if description.get(USAGE_ERROR_KEY):  # the project's options, fixture or loop
            raise ValueError(str(description[USAGE_ERROR_KEY]))
        hook = bool(description.get("runner_hook"))
        fork = description.get("fork_children") is not False
        parsed = PytestArgs.read(description, pytest_args)
        if listed is None:
            return SuiteInspection(parsed, runner_hook=hook, fork_children=fork)
        _check_hook_answers(listed)
        if done.returncode not in (0, PYTEST_NO_TESTS) or not listed.exists():
            error = f"collecting the suite failed: {(output or ['no output'])[-1]}"
            return SuiteInspection(
                parsed, listing_error=error, runner_hook=hook, fork_children=fork
            )
        entries = json.loads(listed.read_text())
    return SuiteInspection(parsed, _suite(entries), runner_hook=hook, fork_children=fork)


def collect_suite(platform: str, devices: list[int], pytest_args: list[str]) -> SuiteListing:
    """Run pytest's collection (not the tests) and read what the plugin listed."""
    found = inspect_suite(platform, devices, pytest_args, listing=True)
    if found.listing is None:
        raise ListingError(found.listing_error or "collecting the suite failed")
    return found.listing


def internal_error_reason(output: list[str]) -> str:
    """pytest's own last ``INTERNALERROR>`` line, the exception named without its module
    (``PytestConfigWarning: Unknown config option: timeout``)."""
    marked = [line.partition("INTERNALERROR>")[2].strip() for line in output]
    reason = next((line for line in reversed(marked) if line), None)
    if reason is None:
        return (output or ["no output"])[-1].strip()
    name, colon, message = reason.partition(": ")
    if colon and re.fullmatch(r"[\w.]+", name):
        return f"{name.rpartition('.')[2]}: {message}"
    return reason


def _error_line(output: list[str]) -> str:
    """pytest's own words for what it refused (its usage error), else its last line."""
    errors = [line for line in output if "error" in line.lower()]
    return (errors or output or ["no output"])[-1].strip()


def _check_hook_answers(listed: Path) -> None:
    """A project's hook answered a runtime or device count simpler cannot use: the plugin
    wrote its one line (``{"usage_error": ...}``, simpler/plugin/needs.py) instead of the
    listing, and nothing may run."""
    if not listed.exists():
        return
    refused = json.loads(listed.read_text())
    if isinstance(refused, dict) and USAGE_ERROR_KEY in refused:
        raise ValueError(str(refused[USAGE_ERROR_KEY]))


def _suite(entries: list[dict[str, Any]]) -> SuiteListing:
    suite = SuiteListing()
    for entry in entries:
        if entry.get("unskippable") is True:
            suite.unskippable.add(entry["nodeid"])
        if entry["devices"] is None:
            suite.l2.append(entry["nodeid"])
            if entry.get("pooled") is False:
                suite.plain.add(entry["nodeid"])
        else:
            suite.resource.append(_resource_test(entry))
    return suite


def _resource_test(entry: dict[str, Any]) -> ResourceTest:
    count = entry["devices"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(
            f"{entry['nodeid']}: device_count must be a positive integer, got {count!r}"
        )
    return ResourceTest(
        entry["nodeid"], count, _seconds(entry, "est_s"), _seconds(entry, "timeout_s")
    )


def _seconds(entry: dict[str, Any], key: str) -> float | None:
    value = entry.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"{entry['nodeid']}: device_count {key[:-2]}= must be positive seconds")
    return float(value)
