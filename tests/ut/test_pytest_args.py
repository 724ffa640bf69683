"""The user's pytest args, read by pytest's own parser, and what each kind of process gets.

Each case parses a real command line with pytest (its plugins and a project conftest that
adds ``--case``, ``--level``, ``--fast`` and the original dispatcher's ``--platform``,
``--device``, ``--runtime``, ``--max-parallel``), has the plugin describe it as the up-front
collection child does, and checks what L2, a Resource child or a retry process, and the
collection get; then pytest must accept every argv simpler would hand a child.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from types import SimpleNamespace
from typing import cast

import pytest

from simpler.orchestrator.pytest_args import (
    NO_DISTRIBUTION,
    PytestArgs,
    collection_argv,
    l2_user_args,
    l2_xdist_flags,
    resource_child_argv,
    undistributed_options,
)
from simpler.plugin.invocation import describe_args, write_arg_description

pytest_plugins = ["pytester"]

CONFTEST = """
def pytest_addoption(parser):
    parser.addoption("--case", help="run one case of the project's own")
    parser.addoption("--level", type=int)
    parser.addoption("--fast", action="store_true")
    # The original device dispatcher's own names: simpler's are --simpler-..., never these.
    parser.addoption("--platform")
    parser.addoption("--device")
    parser.addoption("--runtime")
    parser.addoption("--max-parallel", type=int)
"""
NODE = "tests/st/test_a.py::TestA::test_add[float16-2]"
SAME = "="  # the process gets the args exactly as given
WORKERS = 2  # L2's xdist workers: one per device of --device 0-1


@dataclass(frozen=True)
class Case:
    given: str
    l2: str = SAME  # the user's args in L2's command line
    child: str = SAME  # in a Resource child or a retry process, before ``-n 0 --dist no``
    l2_own: str = "-n 2 --dist loadfile"  # what L2 adds before them to size xdist


CASES = {
    "keyword": Case("-k 'not slow and add'"),
    "marker": Case("-m 'not slow'"),
    "deselect a node id": Case(f"--deselect {NODE}"),
    "deselect, with =": Case(f"--deselect={NODE}"),
    "ignore a directory": Case("--ignore tests/st"),
    "ignore, with =": Case("--ignore=tests/st"),
    "exit first": Case("-x"),
    "maxfail": Case("--maxfail 2"),
    "-n and --dist": Case("-n 2 --dist loadfile", l2_own="", child=""),
    "-n auto": Case("-n auto", l2="-n 2", l2_own="", child=""),
    "-nauto": Case("-nauto", l2="-n 2", l2_own="", child=""),
    "--numprocesses=logical": Case("--numprocesses=logical", l2="-n 2", l2_own="", child=""),
    "-n 0": Case("-n 0", l2_own="", child=""),
    "xdist's other knobs": Case(
        "--maxprocesses 2 --max-worker-restart 0 -d --tx popen --dist=load -x",
        child="-x",
    ),
    "block a plugin": Case("-p no:randomly"),
    "load a plugin": Case("-p xdist -pno:cacheprovider"),
    "override an ini value": Case("-o addopts= --override-ini=console_output_style=classic"),
    "another ini file": Case("-c other.ini"),
    "rootdir": Case("--rootdir tests"),
    "warnings as errors": Case("-W error -W ignore::DeprecationWarning"),
    "traceback style": Case("--tb short"),
    "quiet and verbose": Case("-q -v -qv -vvv"),
    "report chars": Case("-rA"),
    "timeout plugin": Case("--timeout 30"),
    "conftest option with a value": Case("--case foo"),
    "conftest option whose value is a path": Case("--case tests/st --level=3"),
    "conftest flag": Case("--fast"),
    "node id with params": Case(f"{NODE} -x", child="-x"),
    "a directory": Case("tests/st --case foo", child="--case foo"),
    "selection between options": Case(
        "-x tests/st/test_a.py -k add tests/st --fast", child="-x -k add --fast"
    ),
    "the project's own --platform and --max-parallel": Case(
        "--platform a2a3 --device 3 --runtime r --max-parallel 4"
    ),
    "-- ends the options": Case("--fast -- tests/st", child="--fast"),
    "a sim fault for every process": Case(
        "tests/st --simpler-sim-fault hang@TestTrigger#1 --simpler-sim-fault=force_reset_fail -n 2",
        child="--simpler-sim-fault hang@TestTrigger#1 --simpler-sim-fault=force_reset_fail",
        l2_own="",
    ),
}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with its own command-line options, a test tree and a second ini file."""
    pytester.makeconftest(CONFTEST)
    (pytester.path / "tests" / "st").mkdir(parents=True)
    (pytester.path / "tests" / "st" / "test_a.py").write_text("def test_add(): pass\n")
    (pytester.path / "other.ini").write_text("[pytest]\n")
    return pytester


def _read(project: pytest.Pytester, *args: str) -> PytestArgs:
    """As in ``simpler run``: pytest parses simpler's own args and the user's, the plugin
    describes that command line, the orchestrator keeps the user's part."""
    own = ("--collect-only", f"--basetemp={project.path / 'basetemp'}")
    config = project.parseconfig(*own, *args)
    target = project.path / "args.json"
    write_arg_description(config, target)
    return PytestArgs.read(json.loads(target.read_text()), list(args))


def _accepts(project: pytest.Pytester, *args: str) -> pytest.Config:
    """pytest parses ``args`` as a child of simpler would get them (UsageError if not)."""
    return project.parseconfig(f"--basetemp={project.path / 'basetemp'}", *args)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_each_kind_of_process_gets_what_it_can_take(project: pytest.Pytester, case: Case) -> None:
    given = shlex.split(case.given)
    parsed = _read(project, *given)
    assert parsed.given == given
    assert parsed.xdist

    assert l2_xdist_flags(parsed, WORKERS) == shlex.split(case.l2_own)
    l2 = l2_user_args(parsed, WORKERS)
    assert l2 == (given if case.l2 == SAME else shlex.split(case.l2))
    child = undistributed_options(parsed)
    assert child == [*(given if case.child == SAME else shlex.split(case.child)), *NO_DISTRIBUTION]
    collection = collection_argv("a5sim", [0, 1], "args.json", "suite.json", given)
    assert collection[-len(given) :] == given

    # Never an argument a child cannot take: pytest itself accepts each argv simpler builds.
    resource = resource_child_argv(NODE, parsed)
    assert _accepts(project, *resource[3:]).option.numprocesses == 0
    _accepts(project, "--simpler-class-lines", *l2_xdist_flags(parsed, WORKERS), *l2)


def test_a_shard_runs_its_own_files_with_the_users_options(project: pytest.Pytester) -> None:
    parsed = _read(project, "tests/st", "-n", "auto", "--case", "foo", NODE)
    files = ["tests/st/test_b.py", "tests/st/test_c.py"]
    assert l2_user_args(parsed, WORKERS, files) == ["-n", "2", "--case", "foo", *files]


def test_one_device_runs_l2_in_one_process_whatever_the_addopts_say(
    project: pytest.Pytester,
) -> None:
    project.makeini("[pytest]\naddopts = -n 4\n")
    parsed = _read(project, "tests/st")
    own = l2_xdist_flags(parsed, 1)
    assert own == list(NO_DISTRIBUTION)
    assert _accepts(project, *own, *l2_user_args(parsed, 1)).option.numprocesses == 0


def test_an_n_in_the_projects_addopts_never_reaches_a_child(project: pytest.Pytester) -> None:
    """``-p no:xdist`` (what children used to get) is a usage error under such addopts."""
    project.makeini("[pytest]\naddopts = -n 4 --dist loadfile\n")
    parsed = _read(project, "tests/st", "--case", "foo")
    child = _accepts(project, *resource_child_argv(NODE, parsed)[3:])
    assert (child.option.numprocesses, child.option.dist) == (0, "no")
    with pytest.raises(pytest.UsageError, match="-n"):
        _accepts(project, "-p", "no:xdist", "tests/st")


def test_without_xdist_a_child_gets_no_dash_n(project: pytest.Pytester) -> None:
    parsed = _read(project, "-p", "no:xdist", "--fast", "tests/st")
    assert not parsed.xdist
    assert undistributed_options(parsed) == ["-p", "no:xdist", "--fast"]
    assert l2_xdist_flags(parsed, WORKERS) == []
    _accepts(project, *resource_child_argv(NODE, parsed)[3:])


def test_the_description_names_each_option_as_pytest_does(project: pytest.Pytester) -> None:
    config = _accepts(project)
    described = describe_args(config, ["-xq", "--case", "a", "-n3", "tests/st", "--", "-k"])
    assert described is not None
    assert described["args"] == [
        {"start": 0, "args": ["-xq"], "calls": [["maxfail", []], ["verbose", []]]},
        {"start": 1, "args": ["--case", "a"], "calls": [["case", ["a"]]]},
        {"start": 3, "args": ["-n3"], "calls": [["numprocesses", ["3"]]]},
        {"start": 4, "args": ["tests/st"], "calls": [["file_or_dir", ["tests/st"]]]},
        {"start": 5, "args": ["--"], "calls": [["file_or_dir", []]]},
        {"start": 6, "args": ["-k"], "calls": [["file_or_dir", ["-k"]]]},
    ]


def test_a_pytest_that_hides_its_parser_is_refused_not_guessed(project: pytest.Pytester) -> None:
    # A Config with no ``_parser``, as a future pytest might have: its public face only.
    real = _accepts(project)
    public = ("invocation_params", "getini", "getoption", "option", "pluginmanager", "rootpath")
    config = cast(pytest.Config, SimpleNamespace(**{name: getattr(real, name) for name in public}))
    assert describe_args(config, ["-x"]) is None
    target = project.path / "args.json"
    write_arg_description(config, target)
    with pytest.raises(ValueError, match="cannot forward"):
        PytestArgs.read(json.loads(target.read_text()), ["-x"])
    assert PytestArgs.read(json.loads(target.read_text()), []) == PytestArgs()  # none to forward


def test_numprocesses_is_the_last_n_given(project: pytest.Pytester) -> None:
    assert _read(project, "-n", "2", "--numprocesses=auto").numprocesses == "auto"
    assert _read(project, "-x").numprocesses is None
    looks_like_n = _read(project, "--case=-n")  # a value, not xdist
    assert (looks_like_n.values("case"), looks_like_n.numprocesses) == (["-n"], None)


def test_x_given_or_in_the_addopts_is_read_as_pytest_resolves_it(
    project: pytest.Pytester,
) -> None:
    """The L2 session keeps one process under -x/--maxfail, wherever they were written."""
    assert _read(project, "tests/st").maxfail == 0
    assert _read(project, "tests/st", "-x").maxfail == 1
    project.makeini("[pytest]\naddopts = --maxfail 3\n")
    assert _read(project, "tests/st").maxfail == 3
