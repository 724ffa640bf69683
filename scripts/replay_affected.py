"""Replay per-test selection over a repository's history: is it safe, and what does it save?

For each of the last K commits whose diff touches a ``.py`` file, in a ``git worktree`` of
its own:

1. the map at the parent: ``simpler run --impact-map`` of the suite, in a fresh history;
2. the selection for the commit: ``simpler affected PARENT --format json``;
3. the full suite at the commit, without selection (measured: its map is the commit's);
4. safety: the share of the full run's new failures (failing at the commit, passed at the
   parent) that the selection ran; and the selected tests' share of the full run's time
   (the seconds of every attempt, as the report says them);
5. mutants: in up to M functions whose body the commit changed (a ``raise`` as the first
   statement after the docstring), one at a time, two selections (since the parent: the
   commit and the mutant; since the commit: the mutant alone, which a commit that runs
   everything cannot hide) and the full suite: every test that fails under the mutant and
   passed without it must be in both ("caught"). A mutant no test kills is "not killed";
   one that crashes simpler's own run kills no test, and is said apart.

``python scripts/replay_affected.py [--commits K] [--mutants M] [--repo DIR]
[--simpler worktree|self] [--json FILE] [-- SUITE ARGS]`` prints a line per commit, then
safety over every new failure and killed mutant, and the median time share over the
Python-only commits (every changed file is Python, docs or markdown). Exit 0 when safety is
100%, 1 when the selection missed something, 2 on a usage error, 3 when a replay step
broke (a run that crashed, not a test that failed).

``--simpler worktree`` (the default) self-hosts: each commit's own simpler (orchestrator,
plugin and code under test alike) runs its own suite, from its worktree (PYTHONPATH, with
PYTHONSAFEPATH so that nothing else is imported as simpler), and only commits whose parent
already keeps maps are replayed. A mutant's selection is decided by the commit's simpler
without the mutant (a second worktree): a mutant in the selection's own code must not
decide whether it is caught. ``--simpler self`` runs the installed simpler instead (a
project that is not simpler). Every run uses this interpreter's environment, so the maps'
environment digests match.

The default suite is a fixed sample of simpler's unit tests (``SAMPLE``, about 15 s under
``simpler run``): the impact map and selection, the history, the report and its records,
the plugin's activation and quarantine marks, the command line, sharding and the runner
library's ABI; a file a commit lacks is left out at that commit.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from bench import outside_actions

from simpler.contract import GREEN_OUTCOMES, PASSING_OUTCOMES
from simpler.impact.blocks import MODULE, blocks_of, is_docstring
from simpler.reporting.records import TestRecord
from simpler.reporting.report_file import read_records
from simpler.reporting.verdicts import decide_verdicts

__all__ = ["SAMPLE", "main"]

SAMPLE = tuple(
    f"tests/ut/test_{name}.py"
    for name in (
        "impact_blocks", "impact_git", "impact_map", "impact_select", "impact_store",
        "impact_rules", "impact_recent", "impact_kernels",
        "history_import", "history_cli", "history_show",
        "summary", "records", "report_file", "junit",
        "plugin_activation", "quarantine_marks",
        "command_options", "coverage_options", "sharding", "runner_library_abi",
    )
)  # fmt: skip
RUN_OPTIONS = ("--platform", "a5sim", "--device", "0")  # one L2 process: no xdist, one order
RUN_TIMEOUT_S = 1800
MUTANT = 'raise RuntimeError("simpler replay mutant")'
# What a commit may change besides Python and still count as Python-only: simpler's own
# default non-code paths (docs/**, *.md, *.rst).
DOC_SUFFIXES = (".md", ".rst")
# A replay started inside a run (its own test, CI) must not steer the runs it starts: their
# run, report, history, phase and coverage are their own. Locks and the compiled-library
# cache are the host's.
KEPT = ("SIMPLER_LOCK_DIR", "SIMPLER_CACHE_DIR")
EXIT_SAFE, EXIT_MISSED, EXIT_USAGE, EXIT_BROKEN = 0, 1, 2, 3


class UsageProblem(Exception):
    """The command line or the repository cannot be replayed: one line, exit 2."""


class ReplayBroke(Exception):
    """A step of the replay itself failed (a run crashed, a selection did not answer)."""


@dataclass(frozen=True)
class Outcomes:
    """A run's final verdict per test (its outcome) and the seconds its attempts took."""

    outcome: dict[str, str]
    seconds: dict[str, float]

    def passed(self) -> set[str]:
        return {n for n, outcome in self.outcome.items() if outcome in PASSING_OUTCOMES}

    def failing(self) -> set[str]:
        return {n for n, outcome in self.outcome.items() if outcome not in GREEN_OUTCOMES}


@dataclass(frozen=True)
class Selection:
    selected: frozenset[str]
    total: int
    run_all: str | None  # the rule that failed closed, when one did


@dataclass(frozen=True)
class Target:
    """A function whose body the commit changed: where a mutant goes."""

    path: str
    qualname: str
    line: int  # the line the mutant is inserted before
    indent: int


@dataclass
class MutantResult:
    target: str  # path::qualname
    killed: list[str]  # failing under the mutant (or no longer run), passed without it
    broke_run: bool  # simpler's own run under the mutant crashed: counted apart
    missed: list[str]  # killed, yet not selected since the parent (the commit and the mutant)
    missed_alone: list[str]  # killed, yet not selected since the commit (the mutant alone)
    selected: int
    selected_alone: int

    @property
    def caught(self) -> bool:
        return bool(self.killed) and not self.missed and not self.missed_alone


@dataclass
class CommitReplay:
    sha: str
    subject: str
    python_only: bool
    selected: int
    total: int
    time_share: float  # the selected tests' seconds over the full run's
    run_all: str | None
    new_failures: list[str]
    new_failures_missed: list[str]
    mutants: list[MutantResult] = field(default_factory=list)
    # Changed functions no sound mutant goes into: a stub, a one-line body, a mutant that
    # would change import-time code.
    mutants_skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    repo: Path
    head: str  # the newest commit replayed
    commits: int
    mutants: int
    self_hosted: bool  # each commit's own simpler runs its suite
    suite: tuple[str, ...]
    json_file: Path | None


# --- git ------------------------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ReplayBroke(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _source_at(repo: Path, commit: str, path: str) -> str | None:
    done = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True,
                          text=True, check=False)  # fmt: skip
    return done.stdout if done.returncode == 0 else None


def _changed_files(repo: Path, parent: str, commit: str) -> list[str]:
    names = _git(repo, "diff", "--name-only", "--no-renames", "-z", parent, commit)
    return [name for name in names.split("\0") if name]


def _recent_commits(repo: Path, head: str, count: int) -> list[tuple[str, str | None, str]]:
    """The last ``count`` commits of ``head``'s first-parent line: (sha, parent, subject)."""
    lines = _git(repo, "log", "--first-parent", f"--max-count={count}", "--format=%H %P%x00%s",
                 head, "--")  # fmt: skip
    commits = []
    for line in lines.splitlines():
        hashes, _, subject = line.partition("\0")
        sha, *parents = hashes.split()
        commits.append((sha, parents[0] if parents else None, subject))
    return commits


def _keeps_maps(repo: Path, commit: str) -> bool:
    """The commit's own simpler has ``run --impact-map`` and ``simpler affected``."""
    run = _source_at(repo, commit, "simpler/commands/run.py") or ""
    return (
        "--impact-map" in run
        and _source_at(repo, commit, "simpler/commands/affected.py") is not None
    )


@contextmanager
def _worktree(repo: Path, commit: str, where: Path) -> Iterator[Path]:
    """A detached worktree of ``commit``, removed whatever happens (an error, a Ctrl-C):
    one left behind keeps its folder registered in the repository."""
    try:
        _git(repo, "worktree", "add", "--detach", "--quiet", str(where), commit)
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=repo,
                       capture_output=True, check=False)  # fmt: skip
        subprocess.run(["git", "worktree", "prune"], cwd=repo, capture_output=True, check=False)


# --- simpler's runs -------------------------------------------------------------------------


def _env(simpler_from: Path | None) -> dict[str, str]:
    env = {
        key: value
        for key, value in outside_actions(os.environ).items()
        if key in KEPT or not key.startswith(("SIMPLER_", "COVERAGE_"))
    }
    if simpler_from is not None:
        # The worktree's simpler first, and no current folder or script folder before it:
        # every process below (pytest, its workers, what a test starts) imports the same one.
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(simpler_from),
                                                          env.get("PYTHONPATH")]))  # fmt: skip
        env["PYTHONSAFEPATH"] = "1"
    return env


def _simpler(work: Path, simpler_from: Path | None, log: Path, *args: str) -> int:
    """``python -m simpler ARGS`` in ``work``, its output kept in ``log`` and its errors in
    ``log``.err; its exit code."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out, log.with_suffix(".err").open("w") as err:
        try:
            done = subprocess.run([sys.executable, "-m", "simpler", *args], cwd=work,
                                  env=_env(simpler_from), stdout=out, stderr=err,
                                  timeout=RUN_TIMEOUT_S, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise ReplayBroke(
                f"simpler {args[0]} ran past {RUN_TIMEOUT_S} s (log: {log})"
            ) from None
    return done.returncode


def _tail(log: Path, lines: int = 12) -> str:
    said = [*log.read_text(errors="replace").splitlines()[-lines:],
            *log.with_suffix(".err").read_text(errors="replace").splitlines()[-lines:]]  # fmt: skip
    return "\n".join(said)


def _suite_at(work: Path, suite: Sequence[str]) -> list[str]:
    """``suite`` without the paths this commit lacks (a test file added later); options and
    their values stay."""
    return [arg for arg in suite if not _names_path(arg) or (work / arg.split("::")[0]).exists()]


def _names_path(arg: str) -> bool:
    return not arg.startswith("-") and ("/" in arg or arg.split("::")[0].endswith(".py"))


def _run_suite(
    work: Path, simpler_from: Path | None, report: Path, suite: Sequence[str], *extra: str
) -> tuple[int, Outcomes]:
    """``simpler run`` of the suite; its exit code and the verdicts its report holds."""
    log = report.with_suffix(".log")
    code = _simpler(work, simpler_from, log, "run", *RUN_OPTIONS, *extra,
                    "--report", str(report), "--", *suite)  # fmt: skip
    return code, (_outcomes(report) if report.exists() else Outcomes({}, {}))


def _checked_run(
    work: Path, simpler_from: Path | None, report: Path, suite: Sequence[str], *extra: str
) -> Outcomes:
    """A run of unchanged code: a verdict on every test, or the replay broke."""
    code, outcomes = _run_suite(work, simpler_from, report, suite, *extra)
    if code not in (0, 1) or not outcomes.outcome:
        log = report.with_suffix(".log")
        raise ReplayBroke(f"simpler run in {work} exited {code}:\n{_tail(log)}")
    return outcomes


def _outcomes(report: Path) -> Outcomes:
    records = read_records(report).records
    verdicts = decide_verdicts(records)
    seconds: dict[str, float] = {}
    for record in records:
        if isinstance(record, TestRecord):  # every attempt's time: what the test cost the run
            seconds[record.nodeid] = seconds.get(record.nodeid, 0.0) + record.duration_s
    return Outcomes({n: v.outcome for n, v in verdicts.items()}, seconds)


def _select(
    work: Path, simpler_from: Path | None, since: str, history: Path, suite: Sequence[str],
    log: Path,
) -> Selection:  # fmt: skip
    """``simpler affected SINCE --format json``: which tests the change since SINCE (the
    worktree's, uncommitted mutants included) can break."""
    code = _simpler(work, simpler_from, log, "affected", since, "--format", "json",
                    "--history", str(history), "--", *suite)  # fmt: skip
    try:
        document = json.loads(log.read_text()) if code == 0 else None
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise ReplayBroke(f"simpler affected in {work} exited {code}:\n{_tail(log)}")
    tests = document["tests"]
    selected = frozenset(t["nodeid"] for t in tests if t["selected"])
    return Selection(selected, len(tests), document.get("run_all"))


def _time_share(selection: Selection, full: Outcomes) -> float:
    total = sum(full.seconds.values())
    chosen = sum(s for nodeid, s in full.seconds.items() if nodeid in selection.selected)
    return chosen / total if total else 0.0


# --- mutants --------------------------------------------------------------------------------


def _is_test_file(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return "tests" in parts[:-1] or name.startswith("test_") or name == "conftest.py"


def _changed_targets(
    repo: Path, parent: str, commit: str, files: Sequence[str]
) -> tuple[list[list[Target]], list[str]]:
    """Per changed non-test Python file, the functions whose checksum the commit changed
    (or that are new), in line order; and the changed functions no mutant can go into."""
    per_file, skipped = [], []
    for path in sorted(f for f in files if f.endswith(".py") and not _is_test_file(f)):
        now = _source_at(repo, commit, path)
        if now is None:
            continue  # deleted: nothing left to mutate
        try:
            was = {
                n: b.checksum
                for n, b in blocks_of(_source_at(repo, parent, path) or "").blocks.items()
            }
            blocks = blocks_of(now).blocks
        except (SyntaxError, ValueError):
            continue
        changed = {n for n, b in blocks.items() if n != MODULE and was.get(n) != b.checksum}
        by_span = {(b.first_line, b.last_line): n for n, b in blocks.items() if n in changed}
        targets = []
        for node in ast.walk(ast.parse(now)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            qualname = by_span.get((first, node.end_lineno or node.lineno))
            if qualname is None:
                continue
            target = _target(path, qualname, node, now)
            if target is None:
                skipped.append(f"{path}::{qualname}")
            else:
                targets.append(target)
        if targets:
            per_file.append(sorted(targets, key=lambda t: t.line))
    return per_file, skipped


def _target(path: str, qualname: str, node: ast.FunctionDef | ast.AsyncFunctionDef,
            source: str) -> Target | None:  # fmt: skip
    """Where a ``raise`` goes in ``node``: before its first statement after the docstring.
    A generator keeps its ``yield`` (it raises at its first ``next``), a property raises when
    read: both still break what uses them. None where no mutant is sound: a stub (only a
    docstring, ``pass`` or ``...``: an ``@overload``, an abstract method, a protocol), or a
    body that starts on the ``def``'s own line."""
    body = node.body[1:] if is_docstring(node.body[0]) else node.body
    if not body or all(_is_stub(statement) for statement in body):
        return None
    first = body[0]
    line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
    text = source.splitlines()[line - 1]
    if text[: first.col_offset].strip() or line <= node.lineno:
        return None
    return Target(path, qualname, line, first.col_offset)


def _is_stub(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Pass) or (
        isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
    )


def _pick(per_file: list[list[Target]], count: int) -> list[Target]:
    """Up to ``count`` targets, one file after another in turn (files sorted, functions in
    line order): the mutants spread over the files the commit changed."""
    picked: list[Target] = []
    for depth in range(max((len(t) for t in per_file), default=0)):
        picked += [targets[depth] for targets in per_file if depth < len(targets)]
    return picked[:count]


def _mutated(source: str, target: Target) -> str | None:
    """``source`` with the mutant in ``target``, when the result compiles and the map sees it
    as that function's change alone (no import-time code changed); else None."""
    lines = source.splitlines(keepends=True)
    lines.insert(target.line - 1, " " * target.indent + MUTANT + "\n")
    mutated = "".join(lines)
    try:
        compile(mutated, target.path, "exec")
        before, after = blocks_of(source).blocks, blocks_of(mutated).blocks
    except (SyntaxError, ValueError):
        return None
    if after[MODULE].checksum != before[MODULE].checksum:
        return None
    if after[target.qualname].checksum == before[target.qualname].checksum:
        return None
    return mutated


# --- one commit -----------------------------------------------------------------------------


def _python_only(files: Sequence[str]) -> bool:
    return all(
        f.endswith(".py") or f.endswith(DOC_SUFFIXES) or f.startswith("docs/") for f in files
    )


@dataclass(frozen=True)
class Maps:
    """The two histories of a commit's replay: the map at its parent, the map at itself."""

    parent: str
    parent_history: Path
    commit: str
    commit_history: Path


def _replay_commit(
    settings: Settings, sha: str, parent: str, subject: str, files: list[str], scratch: Path
) -> CommitReplay:
    repo, hosted = settings.repo, settings.self_hosted
    maps = Maps(parent, scratch / "parent.db", sha, scratch / "commit.db")
    with _worktree(repo, parent, scratch / "parent") as before:
        at_parent = _checked_run(before, before if hosted else None, scratch / "parent.jsonl",
                                 _suite_at(before, settings.suite), "--impact-map",
                                 "--history", str(maps.parent_history))  # fmt: skip
    with _worktree(repo, sha, scratch / "commit") as work:
        simpler_from = work if hosted else None
        suite = _suite_at(work, settings.suite)
        selection = _select(work, simpler_from, parent, maps.parent_history, suite,
                            scratch / "affected.log")  # fmt: skip
        # Measured too: the commit's own map tells whether a mutant alone is selected.
        full = _checked_run(work, simpler_from, scratch / "commit.jsonl", suite, "--impact-map",
                            "--history", str(maps.commit_history))  # fmt: skip
        new = sorted(full.failing() & at_parent.passed())
        replay = CommitReplay(
            sha, subject, _python_only(files), len(selection.selected), selection.total,
            _time_share(selection, full), selection.run_all, new,
            [n for n in new if n not in selection.selected],
        )  # fmt: skip
        per_file, replay.mutants_skipped = _changed_targets(repo, parent, sha, files)
        targets = _pick(per_file, settings.mutants)
        if targets:
            with _worktree(repo, sha, scratch / "tool") as tool:
                for index, target in enumerate(targets):
                    result = _replay_mutant(settings, work, tool if hosted else None, maps,
                                            suite, full, target,
                                            scratch / f"mutant-{index}")  # fmt: skip
                    if result is None:
                        replay.mutants_skipped.append(f"{target.path}::{target.qualname}")
                    else:
                        replay.mutants.append(result)
    return replay


def _replay_mutant(
    settings: Settings, work: Path, tool: Path | None, maps: Maps, suite: Sequence[str],
    full: Outcomes, target: Target, scratch: Path,
) -> MutantResult | None:  # fmt: skip
    """The mutant in ``work``'s file; its selections, decided by ``tool``'s simpler (which has
    no mutant): since the parent (the commit's change and the mutant) and since the commit
    (the mutant alone); its full run, by ``work``'s simpler (which has it). The file is
    restored after."""
    file = work / target.path
    mutated = _mutated(file.read_text(encoding="utf-8"), target)
    if mutated is None:
        return None
    file.write_text(mutated, encoding="utf-8")
    try:
        with_commit = _select(work, tool, maps.parent, maps.parent_history, suite,
                              scratch / "affected-parent.log")  # fmt: skip
        alone = _select(work, tool, maps.commit, maps.commit_history, suite,
                        scratch / "affected-commit.log")  # fmt: skip
        simpler_from = work if settings.self_hosted else None
        code, under = _run_suite(work, simpler_from, scratch / "full.jsonl", suite)
    finally:
        _git(work, "checkout", "--", target.path)
    passed = full.passed()
    # A test that passed without the mutant and fails with it; or no longer runs, in a run
    # that otherwise ended (its file no longer collects). A run that crashed (the mutant is
    # in simpler's own orchestrator, which every run of the commit goes through, selected or
    # not) kills no test: it is said apart, no part of safety.
    broke = code not in (0, 1)
    vanished = set() if broke else passed - set(under.outcome)
    killed = sorted((under.failing() & passed) | vanished)
    return MutantResult(
        f"{target.path}::{target.qualname}", killed, broke,
        _missed(killed, with_commit), _missed(killed, alone),
        len(with_commit.selected), len(alone.selected),
    )  # fmt: skip


def _missed(killed: list[str], selection: Selection) -> list[str]:
    return [nodeid for nodeid in killed if nodeid not in selection.selected]


# --- the replay -----------------------------------------------------------------------------


def _commit_line(replay: CommitReplay) -> str:
    subject = replay.subject if len(replay.subject) <= 40 else replay.subject[:39] + "…"
    new = len(replay.new_failures)
    failures = (
        "no new failure"
        if not new
        else f"new failures {new - len(replay.new_failures_missed)} of {new} selected"
    )
    killed = [m for m in replay.mutants if m.killed]
    caught = sum(m.caught for m in killed)
    not_killed = sum(not m.killed and not m.broke_run for m in replay.mutants)
    broke = sum(m.broke_run for m in replay.mutants)
    apart = [
        f"{n} {what}" for n, what in ((not_killed, "not killed"), (broke, "broke the run")) if n
    ]
    return (
        f"{replay.sha[:7]} {subject:40} py-only {'yes' if replay.python_only else 'no ':3} "
        f"selected {replay.selected:3} of {replay.total:3} time {replay.time_share:6.1%}  "
        f"{failures}; mutants caught {caught} of {len(killed)} killed"
        + (f" ({', '.join(apart)})" if apart else "")
    )


def _details(replay: CommitReplay) -> list[str]:
    lines = []
    if replay.run_all:
        lines.append(f"  everything ran: {replay.run_all}")
    lines += [f"  missed new failure: {n}" for n in replay.new_failures_missed]
    for mutant in replay.mutants:
        state = "caught" if mutant.caught else "MISSED" if mutant.killed else "not killed"
        killed = f"killed {len(mutant.killed)}" + (", broke the run" if mutant.broke_run else "")
        lines.append(f"  mutant {mutant.target}: {killed}; selected {mutant.selected} since "
                     f"the parent, {mutant.selected_alone} alone: {state}")  # fmt: skip
        lines += [f"    missed since the parent: {n}" for n in mutant.missed]
        lines += [f"    missed alone: {n}" for n in mutant.missed_alone]
    if replay.mutants_skipped:
        lines.append(f"  no mutant in: {', '.join(replay.mutants_skipped)}")
    return lines


def _totals(replays: list[CommitReplay]) -> dict[str, object]:
    failures = sum(len(r.new_failures) for r in replays)
    failures_caught = failures - sum(len(r.new_failures_missed) for r in replays)
    killed = [m for r in replays for m in r.mutants if m.killed]
    caught = sum(m.caught for m in killed)
    python_only = [r.time_share for r in replays if r.python_only]
    return {
        "new_failures": failures,
        "new_failures_selected": failures_caught,
        "mutants": sum(len(r.mutants) for r in replays),
        "mutants_killed": len(killed),
        "mutants_caught": caught,
        "mutants_broke_run": sum(m.broke_run for r in replays for m in r.mutants),
        "safety": (failures_caught + caught) / (failures + len(killed))
        if failures + len(killed)
        else 1.0,
        "python_only_commits": len(python_only),
        "median_time_share_python_only": statistics.median(python_only) if python_only else None,
    }


def _replayable(settings: Settings) -> tuple[list[tuple[str, str, str, list[str]]], list[str]]:
    """The commits to replay (sha, parent, subject, changed files), oldest first, and a line
    for each commit left out and why."""
    chosen, notes = [], []
    for sha, parent, subject in _recent_commits(settings.repo, settings.head, settings.commits):
        if parent is None:
            notes.append(f"{sha[:7]} left out: the first commit has no parent to map")
            continue
        files = _changed_files(settings.repo, parent, sha)
        if not any(f.endswith(".py") for f in files):
            notes.append(f"{sha[:7]} left out: it changes no Python")
        elif settings.self_hosted and not _keeps_maps(settings.repo, parent):
            notes.append(f"{sha[:7]} left out: its parent's simpler keeps no impact map")
        else:
            chosen.append((sha, parent, subject, files))
    return chosen[::-1], notes


def replay(settings: Settings) -> int:
    started = time.monotonic()
    commits, notes = _replayable(settings)
    if not commits:
        raise UsageProblem(f"no commit among the last {settings.commits} can be replayed: "
                           + "; ".join(notes))  # fmt: skip
    print(f"suite ({'simpler unit tests, SAMPLE' if settings.suite == SAMPLE else 'given'}): "
          + " ".join(settings.suite))  # fmt: skip
    print(f"simpler: {'each commit its own' if settings.self_hosted else 'the installed one'}")
    for note in notes:
        print(note)
    replays = []
    with tempfile.TemporaryDirectory(prefix="simpler-replay-") as folder:
        for index, (sha, parent, subject, files) in enumerate(commits):
            scratch = Path(folder) / f"{index}-{sha[:7]}"
            replays.append(_replay_commit(settings, sha, parent, subject, files, scratch))
            print("\n".join([_commit_line(replays[-1]), *_details(replays[-1])]), flush=True)
    totals = _totals(replays)
    seconds = time.monotonic() - started
    print(_totals_text(totals, seconds))
    if settings.json_file is not None:
        document = {"suite": list(settings.suite), "left_out": notes, "seconds": seconds,
                    "commits": [asdict(r) for r in replays], **totals}  # fmt: skip
        settings.json_file.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return EXIT_SAFE if totals["safety"] == 1.0 else EXIT_MISSED


def _totals_text(totals: dict[str, object], seconds: float) -> str:
    median = totals["median_time_share_python_only"]
    share = f"{median:.1%}" if isinstance(median, float) else "none"
    safety = totals["safety"]
    assert isinstance(safety, float)
    return (
        f"safety {safety:.0%}: {totals['new_failures_selected']} of {totals['new_failures']} "
        f"new failure(s) selected, {totals['mutants_caught']} of {totals['mutants_killed']} "
        f"killed mutant(s) caught ({totals['mutants']} mutant(s), "
        f"{totals['mutants_broke_run']} of which broke simpler's own run)\n"
        f"time share, median over {totals['python_only_commits']} Python-only commit(s): "
        f"{share}\nreplayed in {seconds:.0f} s"
    )


# --- the command line -----------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageProblem(message)


def _settings(argv: list[str]) -> Settings:
    own, suite = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    parser = _Parser(prog="replay_affected.py", description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=8, metavar="K")
    parser.add_argument("--mutants", type=int, default=3, metavar="M")
    parser.add_argument("--repo", type=Path, default=Path("."))
    parser.add_argument("--head", default="HEAD", help="the newest commit to replay")
    parser.add_argument("--simpler", choices=("worktree", "self"), default="worktree")
    parser.add_argument("--json", type=Path, dest="json_file", metavar="FILE")
    args = parser.parse_args(own)
    if args.commits < 1 or args.mutants < 0:
        raise UsageProblem("--commits must be 1 or more, --mutants 0 or more")
    if not args.repo.is_dir():
        raise UsageProblem(f"{args.repo} is not a folder")
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=args.repo,
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        raise UsageProblem(f"{args.repo} is not a git checkout")
    root = Path(done.stdout.strip())
    head = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{args.head}^{{commit}}"],
                          cwd=root, capture_output=True, text=True, check=False)  # fmt: skip
    if head.returncode != 0:
        raise UsageProblem(f"{args.head} is not a commit in {root}")
    return Settings(root, head.stdout.strip(), args.commits, args.mutants,
                    args.simpler == "worktree", tuple(suite) or SAMPLE, args.json_file)  # fmt: skip


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str]) -> int:
    # A cancelled CI step's SIGTERM unwinds as a Ctrl-C does: each worktree removes itself.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        return replay(_settings(argv))
    except UsageProblem as problem:
        print(f"replay_affected.py: {problem}", file=sys.stderr)
        return EXIT_USAGE
    except ReplayBroke as broke:
        print(f"replay_affected.py: a replay step broke: {broke}", file=sys.stderr)
        return EXIT_BROKEN
    except KeyboardInterrupt:  # the worktrees are gone already: each removes itself
        print("replay_affected.py: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    with suppress(BrokenPipeError):
        sys.exit(main(sys.argv[1:]))
