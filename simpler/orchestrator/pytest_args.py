"""Every pytest command line simpler starts, and what the user's own pytest args ask for.

``PytestArgs`` reads what pytest's own parser made of each arg in the up-front child, never
its text; each kind of process gets only what it can take. What a process is told of the run
is in its environment, never here (docs/architecture.md, "What pytest's parser makes of the
arguments").
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from simpler.devices import format_devices

__all__ = [
    "AUTO_WORKERS",
    "NO_DISTRIBUTION",
    "OPTION",
    "PLUGIN",
    "PYTEST_INTERNAL_ERROR",
    "PYTEST_NO_TESTS",
    "PYTEST_USAGE_ERROR",
    "SELECTION",
    "XDIST",
    "ArgGroup",
    "PytestArgs",
    "collection_argv",
    "l2_user_args",
    "l2_xdist_flags",
    "option_values",
    "pytest_argv",
    "resource_child_argv",
    "undistributed_options",
]

# pytest's "no tests collected" and "usage error" exit codes.
PYTEST_NO_TESTS = 5
PYTEST_USAGE_ERROR = 4
PYTEST_INTERNAL_ERROR = 3

# What each argument is, by what pytest's parser applied for it.
SELECTION = "selection"  # test paths and node ids (and a bare ``--``, which only precedes them)
XDIST = "xdist"  # how pytest-xdist distributes: -n, --dist, -d, --tx, ...
PLUGIN = "plugin"  # -p NAME, -p no:NAME
OPTION = "option"  # every other option, with its values

FILE_OR_DIR = "file_or_dir"  # pytest's name for its positional arguments
# pytest-xdist's options that start, size or steer distribution, and simpler's own
# --simpler-max-parallel, which sizes it: none of them may reach a process that must not distribute.
XDIST_DESTS = frozenset(
    {
        "numprocesses",
        "maxprocesses",
        "maxworkerrestart",
        "dist",
        "distload",
        "loadscopereorder",
        "maxschedchunk",
        "tx",
        "px",
        "rsyncdir",
        "rsyncignore",
        "looponfail",
        "simpler_max_parallel",
    }
)
AUTO_WORKERS = ("auto", "logical")
# Last on a command line, so it also wins over an ``-n`` in the project's addopts, where
# ``-p no:xdist`` would turn that ``-n`` into a usage error. Only where xdist is loaded.
NO_DISTRIBUTION = ("-n", "0", "--dist", "no")


@dataclass(frozen=True)
class ArgGroup:
    """One of the user's arguments with the values it took, as pytest's parser read them."""

    args: tuple[str, ...]  # as the user wrote them
    calls: tuple[tuple[str, tuple[str, ...]], ...]  # (pytest's dest, values) per option applied

    @property
    def kind(self) -> str:
        dests = {dest for dest, _ in self.calls}
        if dests == {FILE_OR_DIR}:
            return SELECTION
        if dests and dests <= XDIST_DESTS:
            return XDIST
        if dests == {"plugins"}:
            return PLUGIN
        return OPTION  # a cluster such as -qv, or an argument pytest did not know

    def values(self, dest: str) -> list[str]:
        return [value for name, values in self.calls if name == dest for value in values]


@dataclass(frozen=True)
class PytestArgs:
    """The user's pytest args (after ``--`` of ``simpler run``), as pytest's parser read them."""

    groups: tuple[ArgGroup, ...] = ()
    xdist: bool = True  # pytest-xdist is loaded where they run (it is simpler's dependency)
    # pytest's --maxfail as the session resolves it (-x: 1), the project's addopts included.
    maxfail: int = 0

    @classmethod
    def read(cls, description: dict[str, Any], user_args: list[str]) -> PytestArgs:
        """The plugin's description of a command line that ends with ``user_args``."""
        entries = description.get("args")
        if entries is None and not user_args:
            maxfail = description.get("maxfail")
            return cls(maxfail=maxfail if isinstance(maxfail, int) else 0)
        if entries is None:
            raise ValueError(
                "this pytest does not tell what its arguments are, so simpler cannot forward "
                "the ones after --"
            )
        groups = [
            ArgGroup(
                tuple(entry["args"]),
                tuple((dest, tuple(values)) for dest, values in entry["calls"]),
            )
            for entry in entries
        ]
        left = len(user_args)
        mine: list[ArgGroup] = []
        for group in reversed(groups):  # the user's args come last, after simpler's own
            if left <= 0:
                break
            left -= len(group.args)
            mine.insert(0, group)
        maxfail = description.get("maxfail")
        parsed = cls(
            tuple(mine),
            bool(description.get("xdist")),
            maxfail if isinstance(maxfail, int) else 0,
        )
        if left != 0 or parsed.given != list(user_args):
            raise ValueError(f"pytest read the arguments after -- differently: {parsed.given}")
        return parsed

    @property
    def given(self) -> list[str]:
        return [arg for group in self.groups for arg in group.args]

    def without(self, *kinds: str) -> list[str]:
        return [arg for group in self.groups if group.kind not in kinds for arg in group.args]

    def values(self, dest: str) -> list[str]:
        """Every value given to the option pytest calls ``dest``, in order."""
        return [value for group in self.groups for value in group.values(dest)]

    @property
    def verbose(self) -> bool:
        """``-v``, ``-vv`` or ``--verbose`` among them."""
        return any(arg == "--verbose" or (len(arg) > 1 and arg[0] == "-" and set(arg[1:]) == {"v"})
                   for arg in self.given)  # fmt: skip

    @property
    def numprocesses(self) -> str | None:
        """The ``-n`` given (``"4"``, ``"auto"``, ``"logical"``); the last one counts."""
        given = self.values("numprocesses")
        return given[-1] if given else None


def pytest_argv(*args: str) -> list[str]:
    """The command line of a pytest process on this interpreter."""
    return [sys.executable, "-m", "pytest", *args]


def l2_xdist_flags(user_args: PytestArgs, workers: int) -> list[str]:
    """L2's own xdist flags where the user gave no ``-n``: a worker per slot, whole files each.

    Before the user's args, so that their ``--dist`` still wins; with one device, one process
    whatever the project's addopts say.
    """
    if user_args.numprocesses is not None or not user_args.xdist:
        return []
    if workers > 1:
        return ["-n", str(workers), "--dist", "loadfile"]
    return list(NO_DISTRIBUTION)


def l2_user_args(
    user_args: PytestArgs, workers: int | None, files: list[str] | None = None
) -> list[str]:
    """The user's args as given, with ``-n auto|logical`` sized to ``workers`` (the run's slots;
    None: leave it to xdist).

    ``files``: a shard's L2 files, in place of the user's own selection.
    """
    argv: list[str] = []
    for group in user_args.groups:
        if files is not None and group.kind == SELECTION:
            continue
        asked = group.values("numprocesses") if group.kind == XDIST else []
        sized = workers is not None and asked and asked[-1] in AUTO_WORKERS
        argv += ["-n", str(workers)] if sized else group.args
    return [*argv, *(files or [])]


def undistributed_options(user_args: PytestArgs) -> list[str]:
    """The user's options for a process that runs tests it names itself, on its own devices.

    A Resource child or a retry process: no selection (forwarding ``tests/st`` would run
    everything again), no xdist control, and ``-n 0`` so that it never distributes.
    """
    return [
        *user_args.without(SELECTION, XDIST),
        *(NO_DISTRIBUTION if user_args.xdist else ()),
    ]


def resource_child_argv(nodeid: str, user_args: PytestArgs) -> tuple[str, ...]:
    """A Resource child for one test (the scheduler tells it its devices)."""
    return tuple(pytest_argv(nodeid, *undistributed_options(user_args)))


def collection_argv(
    platform: str, devices: list[int], described: str, listing: str | None, user_args: list[str]
) -> list[str]:
    """Ask pytest what each user arg is (into ``described``) and, given ``listing``, collect
    (not run) the suite and have the plugin list each test's device count there.

    The user's args as given: xdist starts no worker under --collect-only, and ``-p no:xdist``
    would make an ``-n`` in the project's addopts a usage error.
    """
    own = ["--collect-only", "-q", "--simpler-platform", platform]
    own += ["--simpler-device", format_devices(devices)]
    own += [f"--simpler-args={described}"]
    if listing is not None:
        own += [f"--simpler-list={listing}"]
    return pytest_argv(*own, *user_args)


def option_values(user_args: list[str], option: str) -> list[str]:
    """Every value given to a long ``option`` as ``--opt V`` or ``--opt=V`` (a text pre-check)."""
    values: list[str] = []
    for i, arg in enumerate(user_args):
        if arg == option and i + 1 < len(user_args):
            values.append(user_args[i + 1])
        elif arg.startswith(option + "="):
            values.append(arg.split("=", 1)[1])
    return values
