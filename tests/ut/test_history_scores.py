"""Flake scores: each field follows the definition the scores' docstring states, device and
infra failures never count against a test, the window selects the runs, and the SQL agrees
with a plain walk over every row of random histories."""

from __future__ import annotations

import itertools
import json
import random
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from history_rows import HOUR, T0, Try, add_run, add_test, open_db, seed

from simpler.contract import PASSING_OUTCOMES, PHASE_ORDER
from simpler.history.flake_stats import concentrated_place, flip_count, state_of, wilson_interval
from simpler.history.model import CAUSES, LastFailure, TestScore
from simpler.history.outcome_sql import RAN_GREEN
from simpler.history.render_scores import EMPTY, render_json, render_markdown, render_table
from simpler.history.scores import SCORES_SQL, compute_scores
from simpler.history.window import select_window

FLAKY_JSON_KEYS = [
    "nodeid", "runs", "passed", "failed_test", "failed_device", "failed_infra",
    "pass_on_retry", "same_commit_flips", "flip_rate", "flake_rate", "flake_rate_low",
    "flake_rate_high", "state", "last_failure",
]  # fmt: skip


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    with closing(open_db(tmp_path)) as connection:
        yield connection


def score_of(conn: sqlite3.Connection, nodeid: str, **bounds: Any) -> TestScore:
    """``bounds``: select_window's (window_days, last_runs, branch, now)."""
    found = compute_scores(conn, window=select_window(**bounds))
    (score,) = [s for s in found if s.nodeid == nodeid]
    return score


def test_each_count_follows_its_definition(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::a": ".RF.VDPsxQ."})
    score = score_of(conn, "t.py::a")
    assert (score.runs, score.passed) == (11, 6)  # . R . V x . : green and ran
    assert (score.failed_test, score.failed_device, score.failed_infra) == (3, 3, 0)
    assert score.pass_on_retry == 1
    # Own failures over the runs that passed or failed by their own fault (6 + F + Q).
    assert score.flake_rate == pytest.approx(3 / 8)
    assert (score.flake_rate_low, score.flake_rate_high) == pytest.approx(wilson_interval(3, 8))
    # Failed by its own fault: .RF.VDPsxQ. -> 01100000010: four changes over ten gaps.
    assert score.flip_rate == pytest.approx(4 / 10)
    assert score.same_commit_flips == 0  # every run on its own commit
    assert score.last_failure == LastFailure("run009", "c9", "AssertionError: run 9")
    assert score.state == "flaky"


def test_a_run_counts_once_under_its_first_cause_of_test_device_infra(
    conn: sqlite3.Connection,
) -> None:
    seed(conn, {"t.py::a": "B.D"})
    add_run(conn, "late", started=T0 + 10 * HOUR, complete=False)
    add_test(
        conn, "late", "t.py::a", Try("failed", "device"), Try("failed", "infra", phase="retry")
    )
    score = score_of(conn, "t.py::a")
    assert (score.failed_test, score.failed_device, score.failed_infra) == (1, 2, 0)
    assert score.flake_rate == 0.5  # B and the pass: the device runs say nothing


def test_device_and_infra_failures_leave_a_test_stable_and_out_of_its_rate(
    conn: sqlite3.Connection,
) -> None:
    seed(conn, {"t.py::victim": ".VDP.I.", "t.py::storm": "F.DDDD."})
    victim = score_of(conn, "t.py::victim")
    assert (victim.failed_test, victim.failed_device, victim.failed_infra) == (0, 3, 1)
    assert (victim.state, victim.flake_rate, victim.flip_rate) == ("stable", 0.0, 0.0)
    assert victim.last_failure is None
    storm = score_of(conn, "t.py::storm")
    # One own failure in the three runs that said anything: the device runs are left out.
    assert storm.flake_rate == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("strip", "state"),
    [
        ("FFFF", "broken"),
        ("FFsFDFP", "broken"),  # skips and device faults do not make it pass
        ("FQF", "broken"),
        ("FFFR", "flaky"),  # it passed once, on retry
        ("FFF.....", "flaky"),  # broken, then fixed: one flip
        ("....", "stable"),
        ("ssss", "stable"),
    ],
)
def test_the_state(conn: sqlite3.Connection, strip: str, state: str) -> None:
    seed(conn, {"t.py::a": strip})
    assert score_of(conn, "t.py::a").state == state


def test_a_commit_that_both_failed_and_passed_is_a_same_commit_flip(
    conn: sqlite3.Connection,
) -> None:
    # a: F and . -> flip; b: R is no clean pass -> none; c: V passed with no own failure ->
    # flip; d: a skip is no pass -> none.
    seed(conn, {"t.py::a": "F.RFFVFs"}, commits=["a", "a", "b", "b", "c", "c", "d", "d"])
    assert score_of(conn, "t.py::a").same_commit_flips == 2


def test_flips_count_only_the_runs_the_test_was_in(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::gappy": "-F-.-F", "t.py::full": "......"})
    score = score_of(conn, "t.py::gappy")
    assert (score.runs, score.flip_rate) == (3, 1.0)  # F . F: two changes over two gaps
    assert score_of(conn, "t.py::full").runs == 6


def test_the_last_failure_is_the_latest_runs_last_own_attempt(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::a": "F.."}, message=lambda run, nodeid: "old")
    add_run(conn, "late", started=T0 + 10 * HOUR, commit="abc")
    add_test(
        conn,
        "late",
        "t.py::a",
        Try("failed", "test", message="first"),
        Try("failed", "test", phase="retry", message="second"),
        Try("failed", "device", phase="report", message="a device fault, not its own"),
    )
    assert score_of(conn, "t.py::a").last_failure == LastFailure("late", "abc", "second")


def test_a_pass_at_a_later_attempt_counts_the_earlier_failure(conn: sqlite3.Connection) -> None:
    add_run(conn, "r1", started=T0)
    add_test(conn, "r1", "t.py::a", Try("failed", "infra"), Try("passed", phase="retry"))
    score = score_of(conn, "t.py::a")
    assert (score.passed, score.failed_infra, score.state) == (1, 1, "stable")


def test_the_window_selects_runs_by_days_count_and_branch(conn: sqlite3.Connection) -> None:
    branches = ["main", "dev"] * 5
    seed(conn, {"t.py::a": "FFFFF....."}, branches=branches)  # type: ignore[arg-type]
    now = T0 + 9 * HOUR
    assert score_of(conn, "t.py::a").runs == 10
    recent = score_of(conn, "t.py::a", window_days=3.5 / 24, now=now)  # runs 6-9
    assert (recent.runs, recent.failed_test, recent.state) == (4, 0, "stable")
    assert score_of(conn, "t.py::a", last_runs=6).failed_test == 1  # runs 4-9
    assert score_of(conn, "t.py::a", branch="dev").runs == 5
    assert score_of(conn, "t.py::a", branch="dev", last_runs=2).runs == 2
    assert compute_scores(conn, window=select_window(branch="nope")) == []


def test_a_run_without_a_start_time_is_the_oldest(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::a": "F.."})
    add_run(conn, "undated", started=None)
    add_test(conn, "undated", "t.py::a", Try("failed", "test"))
    score = score_of(conn, "t.py::a")
    assert score.flip_rate == 1 / 3  # F F . .: one change in three gaps
    assert score.last_failure is not None and score.last_failure.run_id == "run000"
    assert score_of(conn, "t.py::a", last_runs=2).failed_test == 0  # the first to leave
    assert score_of(conn, "t.py::a", window_days=365, now=T0).runs == 3


@pytest.mark.parametrize("window", [{"window_days": 0}, {"window_days": -1}, {"last_runs": 0}])
def test_an_empty_window_by_mistake_is_refused(
    conn: sqlite3.Connection, window: dict[str, float]
) -> None:
    with pytest.raises(ValueError, match="must be"):
        compute_scores(conn, window=select_window(**window))  # type: ignore[arg-type]


def test_tests_below_min_runs_are_left_out(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::often": "F...", "t.py::rarely": "--F."})
    assert [s.nodeid for s in compute_scores(conn, min_runs=3)] == ["t.py::often"]


def test_sorted_by_rate_then_upper_bound_then_nodeid(conn: sqlite3.Connection) -> None:
    seed(
        conn,
        {
            "t.py::half_of_two": "--F.",
            "t.py::half_of_four": "F.F.",
            "t.py::all": "FFFF",
            "t.py::b_none": "....",
            "t.py::a_none": "....",
        },
    )
    order = [s.nodeid for s in compute_scores(conn)]
    assert order == [
        "t.py::all",
        "t.py::half_of_two",  # the same rate on less evidence: a higher upper bound
        "t.py::half_of_four",
        "t.py::a_none",
        "t.py::b_none",
    ]


def test_failures_all_on_one_card_make_a_test_device_sensitive(conn: sqlite3.Connection) -> None:
    # Own failures in runs 0, 4, 8 and 12, always on device 3; passes on all 8 devices.
    strips = {
        "t.py::card": "F...F...F...F...",
        "t.py::anywhere": "F...F...F...F...",
        "t.py::twice": "F.......F.......",
        "t.py::one_card_only": "F...F...F...F...",
    }

    def device(run: int, nodeid: str) -> int:
        if nodeid.endswith("one_card_only"):
            return 3
        if nodeid.endswith("anywhere"):
            return run % 8
        return 3 if run % 4 == 0 else run % 8

    seed(conn, strips, device=device)
    card = score_of(conn, "t.py::card")
    assert (card.state, card.devices) == ("device-sensitive", ("ci-1/dev3",))
    assert score_of(conn, "t.py::anywhere").state == "flaky"  # devices 0 and 4
    assert score_of(conn, "t.py::twice").state == "flaky"  # 1 chance in 8 to share a card
    assert score_of(conn, "t.py::one_card_only").state == "flaky"  # it never ran elsewhere


def test_failures_all_on_one_runner_make_a_test_device_sensitive(
    conn: sqlite3.Connection,
) -> None:
    # Four runner labels in turn; own failures in runs 1, 5, 9 and 13: all on ci-1, on
    # cards 1 and 5 (one card in a run of failures would say device first).
    runners = [f"ci-{i % 4}" for i in range(16)]
    seed(conn, {"t.py::a": ".F...F...F...F.."}, runners=runners, device=lambda run, _: run % 8)
    score = score_of(conn, "t.py::a")
    assert (score.state, score.devices) == ("device-sensitive", ("ci-1/dev1", "ci-1/dev5"))


def test_scores_as_json_carry_exactly_the_designed_keys(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::a": "F.R.", "t.py::b": "...."})
    documents = json.loads(render_json(compute_scores(conn)))
    assert [list(d) for d in documents] == [FLAKY_JSON_KEYS, FLAKY_JSON_KEYS]
    assert documents[0]["last_failure"] == {
        "run_id": "run002",
        "commit": "c2",
        "message": "AssertionError: run 2",
    }
    assert documents[0]["flake_rate"] == 0.5 and documents[1]["last_failure"] is None


def test_the_table_aligns_its_columns_and_counts_states(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::a": "F.R.", "t.py::long_name_b": "....", "t.py::c": "FFFF"})
    lines = render_table(compute_scores(conn)).splitlines()
    assert lines[0].split()[0] == "state"
    assert len({line.index("t.py::") for line in lines[1:4]}) == 1
    assert lines[-1] == "3 tests: 1 broken, 1 flaky, 1 stable"
    assert render_table([]) == f"{EMPTY}\n"


def test_markdown_escapes_pipes_and_counts_the_stable_tests(conn: sqlite3.Connection) -> None:
    seed(conn, {"t.py::test[a|b]": "F.", "t.py::x`y": "F.", "t.py::ok": ".."})
    text = render_markdown(compute_scores(conn))
    rows = [line for line in text.splitlines() if line.startswith("| flaky")]
    assert len(rows) == 2
    assert all(row.replace("\\|", "").count("|") == 12 for row in rows)  # 11 cells each
    assert "``t.py::x`y``" not in text and "`` t.py::x`y ``" in text
    assert text.endswith("1 more test is stable in the window.\n")
    assert render_markdown([]) == "No test in the window.\n"


def test_wilson_interval_known_values() -> None:
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_flip_count_from_failed_positions() -> None:
    assert flip_count([], 5) == 0
    assert flip_count([0, 1, 2], 3) == 0
    assert flip_count([2], 5) == 2
    assert flip_count([0, 4], 5) == 2
    assert flip_count([1, 3], 5) == 4


def test_a_concentration_needs_two_runs_another_place_and_no_luck() -> None:
    spread = Counter({f"dev{i}": 10 for i in range(8)})
    assert concentrated_place(["dev3"] * 3, 3, spread) == "dev3"  # 8 / 8**3 = 1.6%
    assert concentrated_place(["dev3"] * 2, 2, spread) is None  # 1 in 8
    assert concentrated_place(["dev3"], 1, spread) is None
    assert concentrated_place(["dev3", "dev4", "dev3"], 3, spread) is None
    assert concentrated_place([None, None, None], 3, spread) is None
    assert concentrated_place(["dev3"] * 5, 5, Counter({"dev3": 10})) is None
    assert state_of(failed_test=3, passed=0, device_sensitive=True) == "broken"


# A plain walk over every row, by the docstring's definitions, to hold the SQL to them.


def reference_scores(conn: sqlite3.Connection, run_ids: list[str]) -> dict[str, dict[str, object]]:
    runs = {r[0]: r for r in conn.execute('SELECT run_id, "commit", runner FROM runs')}
    verdicts = {
        (r, n): o for r, n, o in conn.execute("SELECT run_id, nodeid, outcome FROM verdicts")
    }
    attempts: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        "SELECT run_id, nodeid, phase, attempt, outcome, cause, device, message FROM attempts"
    ):
        attempts.setdefault((row[0], row[1]), []).append(row)
    found = {}
    for nodeid in sorted({n for _, n in verdicts}):
        mine = [r for r in run_ids if (r, nodeid) in verdicts]
        tries = {r: attempts[r, nodeid] for r in mine}
        causes = {r: {a[5] for a in tries[r]} for r in mine}
        own = [r for r in mine if "test" in causes[r]]
        passed = [r for r in mine if verdicts[r, nodeid] in RAN_GREEN]
        judged = len(set(passed) | set(own))
        status = [r in own for r in mine]
        flips = sum(a != b for a, b in itertools.pairwise(status))
        clean_commits = {runs[r][1] for r in passed if r not in own}
        own_tries = [a for r in own for a in tries[r] if a[5] == "test"]
        last = None
        if own:
            latest = [a for a in own_tries if a[0] == own[-1]]
            a = max(latest, key=lambda a: (PHASE_ORDER.index(a[2]), a[3]))
            last = {"run_id": own[-1], "commit": runs[own[-1]][1], "message": a[7]}
        runner_spread = Counter(runs[r][2] for r in mine)
        used = {
            (r, f"{runs[r][2]}/dev{a[6]}")
            for r in mine
            for a in tries[r]
            if a[5] == "test" or a[4] in PASSING_OUTCOMES
        }
        own_cards = [f"{runs[a[0]][2]}/dev{a[6]}" for a in own_tries]
        sensitive = bool(
            concentrated_place([runs[r][2] for r in own], len(own), runner_spread)
            or concentrated_place(own_cards, len(own), Counter(card for _, card in used))
        )
        found[nodeid] = {
            "runs": len(mine),
            "passed": len(passed),
            "failed_test": len(own),
            "failed_device": sum(1 for r in mine if causes[r] & {"test", "device"} == {"device"}),
            "failed_infra": sum(1 for r in mine if causes[r] & set(CAUSES) == {"infra"}),
            "pass_on_retry": sum(1 for r in mine if verdicts[r, nodeid] == "flaky"),
            "same_commit_flips": len({runs[r][1] for r in own} & clean_commits),
            "flip_rate": flips / (len(mine) - 1) if len(mine) > 1 else 0.0,
            "flake_rate": len(own) / judged if judged else 0.0,
            "state": state_of(failed_test=len(own), passed=len(passed), device_sensitive=sensitive),
            "last_failure": last,
        }
    return found


@pytest.mark.parametrize("seed_value", range(6))
def test_the_scores_agree_with_a_walk_over_every_row(
    conn: sqlite3.Connection, seed_value: int
) -> None:
    rng = random.Random(seed_value)
    marks = "." * 30 + "FRVDPIQBsx-" + "F" * 4 + "-" * 4
    length = 24
    strips = {f"t.py::test_{i}": "".join(rng.choices(marks, k=length)) for i in range(12)}
    strips["t.py::broken"] = "F" * length
    run_ids = seed(
        conn,
        strips,
        commits=[f"c{rng.randrange(length // 2)}" for _ in range(length)],
        runners=[rng.choice(["ci-1", "ci-2", "ci-3"]) for _ in range(length)],
        device=lambda run, nodeid: rng.randrange(4),
    )
    for window, chosen in (({}, run_ids), ({"last_runs": 10}, run_ids[-10:])):
        expected = reference_scores(conn, chosen)
        scores = compute_scores(conn, window=select_window(**window))  # type: ignore[arg-type]
        got = {s.nodeid: s.to_json() for s in scores}
        for nodeid, fields in expected.items():
            if fields["runs"] == 0:
                assert nodeid not in got
                continue
            actual = {key: got[nodeid][key] for key in fields}
            assert _rounded(actual) == _rounded(fields), nodeid


@pytest.mark.parametrize("seed_value", range(3))
def test_the_one_statement_table_agrees_with_the_scores(
    conn: sqlite3.Connection, seed_value: int
) -> None:
    rng = random.Random(seed_value)
    marks = "." * 20 + "FRVDPIQBsx-"
    strips = {f"t.py::test_{i}": "".join(rng.choices(marks, k=20)) for i in range(15)}
    seed(conn, strips, device=lambda run, nodeid: rng.randrange(4))
    params = {**select_window(last_runs=15).params(), "min_runs": 2}
    by_hand = {row[0]: row[1:] for row in conn.execute(SCORES_SQL, params)}
    scores = {
        s.nodeid: s for s in compute_scores(conn, window=select_window(last_runs=15), min_runs=2)
    }
    assert sorted(by_hand) == sorted(scores)
    for nodeid, (runs, passed, skipped, judged, *failures, retried) in by_hand.items():
        score = scores[nodeid]
        assert (runs, passed, retried) == (score.runs, score.passed, score.pass_on_retry)
        assert failures == [score.failed_test, score.failed_device, score.failed_infra]
        assert score.flake_rate == (score.failed_test / judged if judged else 0.0)
        assert skipped == strips[nodeid][-15:].count("s")


def _rounded(fields: dict[str, object]) -> dict[str, object]:
    return {k: round(v, 9) if isinstance(v, float) else v for k, v in fields.items()}
