"""What a run's coverage is asked to be: ``simpler run --cov[=SRC] --cov-report ...``, or the
same pytest-cov spellings after ``--``, which simpler takes out of the pytest args itself so
that no child ever sees them (each would write a ``.coverage`` over the others').

pytest-cov's meanings are kept (docs/coverage.md, "Coming from pytest-cov"): ``--cov X`` takes
the next argument as a source unless it is an option.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from simpler.reporting.records import CoverageRecord
from simpler.usage import UsageError

__all__ = [
    "MIN_COVERAGE",
    "REPORT_KINDS",
    "CovOptions",
    "CovRequest",
    "add_cov_arguments",
    "cov_options",
    "parse_report",
    "split_cov_args",
]

MIN_COVERAGE = (7, 10)  # COVERAGE_PROCESS_CONFIG and the .pth file its wheel installs
REPORT_KINDS = ("term", "term-missing", "xml", "html", "json", "lcov")
# Where each file report goes when its kind names no path (coverage.py's own defaults).
DEFAULT_PATHS = {"xml": "coverage.xml", "html": "htmlcov", "json": "coverage.json",
                 "lcov": "coverage.lcov"}  # fmt: skip
CONTEXTS = ("test",)
# pytest-cov's options that take one value (``--cov`` takes one optionally, ``--no-cov`` none).
_VALUED = ("--cov-report", "--cov-context", "--cov-fail-under", "--cov-config")


@dataclass(frozen=True)
class Report:
    kind: str  # one of REPORT_KINDS
    path: str | None = None  # the file or folder of a file report; None: coverage.py's default
    skip_covered: bool = False  # term:skip-covered, as pytest-cov spells it

    @property
    def target(self) -> str:
        return self.path or DEFAULT_PATHS.get(self.kind, "")


@dataclass(frozen=True)
class CovRequest:
    """A command's coverage options as typed, not yet checked (``cov_options`` checks them)."""

    cov: tuple[str, ...] | None = None  # --cov's sources ("" for a bare --cov); None: none
    cov_report: tuple[str, ...] = ()
    cov_fail_under: str | None = None
    cov_context: str | None = None
    cov_config: str | None = None
    cov_branch: bool = False
    no_cov: bool = False


@dataclass(frozen=True)
class CovOptions:
    """A run's coverage settings; ``enabled`` False: no coverage at all."""

    enabled: bool = False
    sources: tuple[str, ...] = ()  # --cov=SRC values; empty: the config's [run] source
    reports: tuple[Report, ...] = (Report("term"),)
    context: str | None = None  # "test": each line's contexts name the tests that ran it
    fail_under: float | None = None  # the gate; None: the figure is advisory
    config: str | None = None  # --cov-config; None: coverage.py's own search (.coveragerc, ...)
    branch: bool = False  # --cov-branch: measure branches whatever the config says

    def add_to(self, record: CoverageRecord) -> CoverageRecord:
        """The run's ``coverage`` record with these settings in it."""
        return record.replace(
            sources=list(self.sources),
            reports=[[r.kind, r.path, r.skip_covered] for r in self.reports],
            context=self.context,
            fail_under=self.fail_under,
            config=self.config,
            branch=self.branch,
        )

    @classmethod
    def from_record(cls, record: CoverageRecord) -> CovOptions:
        """The settings a run's ``coverage`` record kept (a field that is not one: unset)."""
        return cls(
            enabled=True,
            sources=record.sources,
            reports=tuple(Report(str(k), path, bool(skip)) for k, path, skip in record.reports),
            context=record.context,
            fail_under=record.fail_under,
            config=record.config,
            branch=record.branch,
        )


def add_cov_arguments(parser: argparse.ArgumentParser, *, run: bool) -> None:
    """The coverage options of ``simpler run`` (``run``) or ``simpler report``."""
    if run:
        parser.add_argument(
            "--cov",
            action="append",
            nargs="?",
            const="",
            metavar="SOURCE",
            help="measure every process of the run with coverage.py (repeatable; the `cov` "
            "extra); without SOURCE, the coverage config's [run] source",
        )
        parser.add_argument(
            "--cov-context", choices=CONTEXTS, help="name the test on each line it ran"
        )
        parser.add_argument("--cov-config", metavar="F", help="coverage.py's config file")
        parser.add_argument("--cov-branch", action="store_true", help="measure branches too")
        parser.add_argument("--no-cov", action="store_true", help="no coverage, whatever is asked")
    parser.add_argument(
        "--cov-report",
        action="append",
        metavar="KIND[:PATH]",
        help=f"coverage report (repeatable): {', '.join(REPORT_KINDS)}; default term",
    )
    parser.add_argument(
        "--cov-fail-under",
        metavar="N",
        help="a run whose total coverage is below N percent exits 1 (default: advisory)",
    )


def split_cov_args(pytest_args: list[str]) -> tuple[list[str], list[str]]:
    """``pytest_args`` without pytest-cov's options, and those options as simpler's own."""
    rest: list[str] = []
    taken: list[str] = []
    i = 0
    while i < len(pytest_args):
        arg = pytest_args[i]
        name = arg.split("=", 1)[0]
        if arg == "--":
            rest += pytest_args[i:]  # what follows a bare -- is a selection, never an option
            break
        if name in ("--no-cov", "--cov-branch"):
            taken.append(arg)
        elif name == "--cov":
            value_follows = "=" not in arg and i + 1 < len(pytest_args)
            if value_follows and not pytest_args[i + 1].startswith("-"):
                taken += [arg + "=" + pytest_args[i + 1]]
                i += 1
            else:
                taken.append(arg)
        elif name in _VALUED:
            if "=" in arg:
                taken.append(arg)
            elif i + 1 < len(pytest_args):
                taken += [arg, pytest_args[i + 1]]
                i += 1
            else:
                raise UsageError(f"simpler run: {arg} (after --) expects a value")
        else:
            rest.append(arg)
        i += 1
    return rest, taken


def cov_options(asked: CovRequest, prog: str) -> CovOptions:
    """The coverage a command's options ask for; bad values are a UsageError."""
    if asked.no_cov:
        return CovOptions()
    reports = tuple(parse_report(text, prog) for text in asked.cov_report)
    fail_under = _fail_under(asked.cov_fail_under, prog)
    sources = asked.cov
    if sources is None:  # simpler report: the runs' own settings, unless these say otherwise
        return CovOptions(reports=reports, fail_under=fail_under)
    config = asked.cov_config
    if config is not None and not Path(config).is_file():
        raise UsageError(f"{prog}: --cov-config {config}: no such file")
    check_coverage_installed(prog)
    return CovOptions(
        enabled=True,
        sources=tuple(s for s in sources if s),
        reports=tuple(r for r in reports if r.kind) if reports else (Report("term"),),
        context=asked.cov_context,
        fail_under=fail_under,
        config=config,
        branch=asked.cov_branch,
    )


def parse_report(text: str, prog: str) -> Report:
    """``KIND[:PATH]`` (``term:skip-covered`` as pytest-cov spells it); ``""``: no report."""
    if text == "":
        return Report("")
    kind, _, rest = text.partition(":")
    if kind not in REPORT_KINDS:
        raise UsageError(
            f"{prog}: --cov-report {text!r}: not a report kind (known: {', '.join(REPORT_KINDS)})"
        )
    if kind.startswith("term"):
        if rest not in ("", "skip-covered"):
            raise UsageError(
                f"{prog}: --cov-report {text!r}: a term report takes only :skip-covered"
            )
        return Report(kind, None, rest == "skip-covered")
    return Report(kind, rest or None)


def _fail_under(text: str | None, prog: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        raise UsageError(f"{prog}: --cov-fail-under {text!r}: expected a percentage from 0 to 100")
    return value


def check_coverage_installed(prog: str) -> None:
    """coverage.py, new enough, or one line naming the extra (exit 2 before any test runs)."""
    if importlib.util.find_spec("coverage") is None:
        raise UsageError(
            f"{prog}: --cov needs coverage.py, which is not installed: pip install 'simpler[cov]'"
        )
    version = importlib.metadata.version("coverage")
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    if parts < MIN_COVERAGE:
        floor = ".".join(map(str, MIN_COVERAGE))
        raise UsageError(
            f"{prog}: --cov needs coverage.py >= {floor} (this is {version}): "
            "pip install 'simpler[cov]'"
        )
