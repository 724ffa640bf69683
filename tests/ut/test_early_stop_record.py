"""``-x`` cuts a session short: its session record counts the tests that ended in *that*
session, so the summary's "N of M selected test(s) not run" holds for every session a
process runs (pytest's in-process runs share the plugin's modules)."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

THREE_TESTS = """
def test_first():
    assert False

def test_second():
    pass

def test_third():
    pass
"""


@pytest.fixture(autouse=True)
def _outside_simpler(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SIMPLER_PHASE", "SIMPLER_REPORT", "SIMPLER_RUN_ID"):
        monkeypatch.delenv(name, raising=False)


def _stopped_session(pytester: pytest.Pytester, report: str) -> dict[str, object]:
    pytester.runpytest_inprocess("-p", "no:xdist", "-x", "--simpler-report", report)
    lines = (pytester.path / report).read_text().splitlines()
    sessions = [r for r in map(json.loads, lines) if r["type"] == "session"]
    assert len(sessions) == 1, sessions
    return sessions[0]


def test_each_stopped_session_counts_only_its_own_finished_tests(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_three=THREE_TESTS)
    first = _stopped_session(pytester, "first.jsonl")
    second = _stopped_session(pytester, "second.jsonl")
    assert (first["collected"], first["finished"]) == (3, 1)
    assert (second["collected"], second["finished"]) == (3, 1)
