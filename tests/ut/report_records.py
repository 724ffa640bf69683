"""Report records for the tests of what reads them: the common fields filled in, the rest given.

Defaults describe the plain case (a passing L2 test, a child on devices 4 and 5 that
passed); a test overrides what its scenario is about.
"""

from __future__ import annotations

from typing import Any

from simpler.reporting.records import Record, from_dict


def record(kind: str, phase: str = "l2", run: str = "run-1", **fields: Any) -> Record:
    return from_dict({"schema": 1, "run": run, "ts": 0.0, "phase": phase, "type": kind, **fields})


def result(nodeid: str, outcome: str, phase: str = "l2", **fields: Any) -> Record:
    fields = {
        "attempt": 1,
        "runtime": "host_build_graph",
        "device": 0,
        "message": "",
        "tail": "",
        "rc": None,
        "where": None,
        "worker": None,
        "poisoned": False,
        "duration_s": 0.5,
        **fields,
    }
    return record("test", phase, nodeid=nodeid, outcome=outcome, **fields)


def child(**fields: Any) -> Record:
    fields = {
        "label": "two_cards",
        "nodeid": "tests/st/test_m.py::test_two",
        "returncode": 0,
        "signal": None,
        "devices": [4, 5],
        "duration_s": 1.0,
        "timed_out": False,
        "reached_summary": True,
        "tail": "",
        "log": ".simpler/logs/two_cards.log",
        **fields,
    }
    return record("child", "resource", **fields)


def phase_span(phase: str, *inner: Record, run: str = "run-1", ended: bool = True) -> list[Record]:
    """A phase's start record, what happened inside it, and (unless it died) its end record."""
    end = record("phase", phase, run, event="end", counts={}, returncode=0, duration_s=1.0)
    return [record("phase", phase, run, event="start"), *inner, *([end] if ended else [])]
