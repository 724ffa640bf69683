"""``[tool.simpler.affected]``: its patterns and its count of recent runs, with defaults, and
a table simpler cannot read refused as file:line and what is wrong."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simpler.impact.rules import DEFAULT_NON_CODE, load_rules
from simpler.impact.select import Rules


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(text)
    return tmp_path


def test_without_the_table_docs_and_markdown_are_non_code(tmp_path: Path) -> None:
    assert load_rules(tmp_path) == Rules(non_code=DEFAULT_NON_CODE)
    assert load_rules(_project(tmp_path, "[project]\nname = 'x'\n")).recent_runs == 20


def test_the_table_sets_each_rule(tmp_path: Path) -> None:
    text = (
        "[project]\nname = 'x'\n\n[tool.simpler.affected]\nnon_code = ['docs/**']\n"
        "run_all = ['requirements*.txt']\nrecent_runs = 5\n"
    )
    assert load_rules(_project(tmp_path, text)) == Rules(
        non_code=("docs/**",), run_all=("requirements*.txt",), recent_runs=5
    )


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("non_code = 'docs/**'", ":6: non_code must be a list of path patterns"),
        ("recent_runs = -1", ":6: recent_runs must be a whole number of runs (0: none)"),
        ("recent_runs = true", ":6: recent_runs must be a whole number of runs (0: none)"),
        ("skip = ['x']", ":5: unknown key skip (known: non_code, run_all, recent_runs, platforms)"),
    ],
)
def test_a_table_it_cannot_read_is_named_by_file_and_line(
    tmp_path: Path, body: str, says: str
) -> None:
    text = f"[project]\nname = 'x'\n\n# the selection's rules\n[tool.simpler.affected]\n{body}\n"
    with pytest.raises(ValueError, match=re.escape(f"pyproject.toml{says}")) as refused:
        load_rules(_project(tmp_path, text))
    assert "\n" not in str(refused.value)


def test_a_file_that_is_not_toml_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape("pyproject.toml: ")):
        load_rules(_project(tmp_path, "[tool.simpler.affected\n"))


def test_each_platforms_trees(tmp_path: Path) -> None:
    text = "[tool.simpler.affected.platforms]\na5sim = ['src/a5/**']\na2a3sim = ['src/a2a3/**']\n"
    rules = load_rules(_project(tmp_path, text))
    assert rules.platforms == {"a5sim": ("src/a5/**",), "a2a3sim": ("src/a2a3/**",)}
    bad = "[tool.simpler.affected]\nplatforms = {a5sim = 'src/a5'}\n"
    with pytest.raises(ValueError, match=re.escape("platforms must map each platform")):
        load_rules(_project(tmp_path, bad))
