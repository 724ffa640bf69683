"""Names that several parts share: phases, exit codes, outcomes, platforms, the ANSI pattern.

Pure data, importable from anywhere (the noxfile reads it too): nothing here imports
another module of the project.
"""

from __future__ import annotations

import re

__all__ = [
    "BUILTIN_PLATFORMS",
    "EXIT_FAILED",
    "EXIT_INFRA",
    "EXIT_NO_TESTS",
    "EXIT_OK",
    "EXIT_USAGE",
    "FAILED_OUTCOMES",
    "GREEN_OUTCOMES",
    "NO_DEVICE_SPEC",
    "OUTCOME_ORDER",
    "PASSING_OUTCOMES",
    "PHASE_ORDER",
    "RETIRED_NOT_RUN",
    "SELECTING_PHASES",
    "SIM_PLATFORMS",
    "TEST_PHASES",
    "phase_rank",
    "strip_ansi",
]

# The phases of a run, in the order they run and their records are ranked.
PHASE_ORDER = ("l2", "resource", "retry", "report")
# The phases that run tests in a pytest process (the report phase only reads).
TEST_PHASES = PHASE_ORDER[:-1]
# The phases that select tests from the suite and plan them (the retry only re-runs what
# they left).
SELECTING_PHASES = PHASE_ORDER[:2]
_PHASE_RANKS = {phase: rank for rank, phase in enumerate(PHASE_ORDER)}


def phase_rank(phase: str) -> int:
    """Where ``phase`` stands in PHASE_ORDER; a phase this version does not know ranks first
    (-1), so a record of any known phase supersedes it: what simpler ran itself decides."""
    return _PHASE_RANKS.get(phase, -1)


# simpler's exit codes (docs/design.md, Exit codes). EXIT_NO_TESTS is pytest's own "no tests
# collected": a run whose test phases selected nothing is neither green nor red.
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INFRA, EXIT_NO_TESTS = 0, 1, 2, 3, 5

# A test record's outcome, in the order the summary lists them.
# pytest's own outcomes where pytest has one (xfailed, xpassed: a non-strict XPASS; a strict
# one is failed), and simpler's: poison_skipped, recovered, flaky.
OUTCOME_ORDER = (
    "passed",
    "failed",
    "error",
    "skipped",
    "xfailed",
    "xpassed",
    "poison_skipped",
    "recovered",
    "flaky",
)
PASSING_OUTCOMES = frozenset({"passed", "recovered", "flaky"})
# Anything outside this set (an outcome this version does not know included) is a failure:
# a verdict nobody can read must not pass for green.
GREEN_OUTCOMES = PASSING_OUTCOMES | {"skipped", "xfailed", "xpassed"}
# The outcomes of a test that failed in its own attempt (the ones that poison a worker).
FAILED_OUTCOMES = frozenset({"failed", "error"})

# A device is retired when a worker on it could not be reset: it takes no other job of the
# run. A Resource job that never started because too few devices were left says so in
# these words, which the history reads as the device's doing (reports written before the
# word "retired" said "outside quarantine" instead).
RETIRED_NOT_RUN = "device(s) left that are not retired"

# The platforms the embedded simulated card implements.
SIM_PLATFORMS = ("a5sim", "a2a3sim")
# Every platform simpler runs by itself: the simulated cards and a real NVIDIA GPU.
BUILTIN_PLATFORMS = (*SIM_PLATFORMS, "cuda")

# The key of the one line the plugin's up-front child writes when simpler cannot bind the
# project (its options, worker fixture, loop or a hook's answer): the orchestrator stops on it.
USAGE_ERROR_KEY = "usage_error"

# ``--deadline``: a test process gets when its tests must be over (epoch seconds) and the
# learned durations to judge by, and starts no test that cannot end by then.
DEADLINE_AT_ENV = "SIMPLER_DEADLINE_AT"
DURATIONS_ENV = "SIMPLER_DURATIONS"

# The device spec of a process that holds no device (an isolated unit whose tests use none):
# its argv's ``--simpler-device`` and its ``SIMPLER_DEVICES``. A test in it that asks for a
# device fails saying so, never shares a card.
NO_DEVICE_SPEC = "none"

# CSI sequences (colours, cursor moves) and OSC sequences (titles, links) a test may print.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)
