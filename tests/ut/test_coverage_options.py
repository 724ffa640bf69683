"""What a user types for coverage: simpler's own options and pytest-cov's spellings after --."""

from __future__ import annotations

import argparse

import pytest

from simpler.commands.shared import cov_request
from simpler.coverage import options
from simpler.coverage.options import CovRequest, Report, cov_options, parse_report, split_cov_args
from simpler.reporting.records import CoverageRecord
from simpler.usage import UsageError


def _run_args(*argv: str) -> CovRequest:
    parser = argparse.ArgumentParser()
    options.add_cov_arguments(parser, run=True)
    return cov_request(parser.parse_args(list(argv)))


def test_pytest_cov_spellings_after_the_double_dash_are_taken_out_of_the_pytest_args() -> None:
    rest, taken = split_cov_args(
        [
            "tests/st",
            "--cov=simpler",
            "--cov-report",
            "xml:c.xml",
            "-k",
            "add",
            "--cov-fail-under=80",
        ]
    )
    assert rest == ["tests/st", "-k", "add"]
    assert taken == ["--cov=simpler", "--cov-report", "xml:c.xml", "--cov-fail-under=80"]


def test_a_bare_cov_takes_the_next_argument_as_its_source_as_pytest_cov_does() -> None:
    assert split_cov_args(["--cov", "mylib", "tests"]) == (["tests"], ["--cov=mylib"])
    assert split_cov_args(["--cov", "-x", "tests"]) == (["-x", "tests"], ["--cov"])
    assert split_cov_args(["tests", "--cov"]) == (["tests"], ["--cov"])


def test_cov_branch_is_taken_without_a_value() -> None:
    assert split_cov_args(["--cov-branch", "tests"]) == (["tests"], ["--cov-branch"])
    assert cov_options(_run_args("--cov", "--cov-branch"), "simpler run").branch


def test_what_follows_a_bare_double_dash_is_never_taken() -> None:
    assert split_cov_args(["--", "--cov=x"]) == (["--", "--cov=x"], [])


def test_options_that_only_start_like_cov_are_left_to_pytest() -> None:
    assert split_cov_args(["--covenant", "--cov-branch-x"]) == (
        ["--covenant", "--cov-branch-x"],
        [],
    )


def test_a_cov_option_without_its_value_is_one_usage_line() -> None:
    with pytest.raises(UsageError, match=r"--cov-report .* expects a value"):
        split_cov_args(["tests", "--cov-report"])


def test_cov_without_a_source_measures_what_the_config_says_and_reports_term() -> None:
    got = cov_options(_run_args("--cov"), "simpler run")
    assert got.enabled and got.sources == () and got.reports == (Report("term"),)
    assert got.fail_under is None and got.context is None


def test_repeated_sources_and_reports_are_all_kept() -> None:
    got = cov_options(
        _run_args("--cov=a", "--cov=b", "--cov-report=xml:out/c.xml", "--cov-report=html"),
        "simpler run",
    )
    assert got.sources == ("a", "b")
    assert [(r.kind, r.target) for r in got.reports] == [("xml", "out/c.xml"), ("html", "htmlcov")]


def test_an_empty_report_asks_for_none() -> None:
    assert cov_options(_run_args("--cov", "--cov-report="), "simpler run").reports == ()


def test_no_cov_turns_it_all_off() -> None:
    assert not cov_options(_run_args("--cov=x", "--no-cov"), "simpler run").enabled


@pytest.mark.parametrize("text", ["pdf", "xml2", "term:bogus", "html-missing"])
def test_a_report_kind_that_is_not_one_is_a_usage_error_naming_the_kinds(text: str) -> None:
    with pytest.raises(UsageError, match="--cov-report") as caught:
        parse_report(text, "simpler run")
    assert "\n" not in str(caught.value)


def test_term_skip_covered_is_read_as_pytest_cov_spells_it() -> None:
    assert parse_report("term-missing:skip-covered", "p") == Report("term-missing", None, True)


@pytest.mark.parametrize("value", ["eighty", "-1", "101", "nan"])
def test_a_fail_under_that_is_not_a_percentage_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="--cov-fail-under"):
        cov_options(_run_args("--cov", "--cov-fail-under", value), "simpler run")


def test_a_missing_config_file_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"--cov-config .*no such file"):
        cov_options(_run_args("--cov", "--cov-config", "/nonexistent/.coveragerc"), "simpler run")


def test_without_coverage_py_the_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(options.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match=r"pip install 'simpler\[cov\]'"):
        cov_options(_run_args("--cov"), "simpler run")


def test_an_old_coverage_py_is_refused_with_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(options.importlib.metadata, "version", lambda name: "6.5.0")
    with pytest.raises(UsageError, match=r">= 7\.10 \(this is 6\.5\.0\)"):
        cov_options(_run_args("--cov"), "simpler run")


def test_the_settings_survive_the_report_record() -> None:
    got = cov_options(
        _run_args("--cov=a", "--cov-report=xml:c.xml", "--cov-context=test", "--cov-branch"),
        "simpler run",
    )
    written = got.add_to(CoverageRecord.build(run="run-1", phase="", event="run"))
    assert options.CovOptions.from_record(written) == got
