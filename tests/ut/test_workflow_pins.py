"""The workflows run exactly the actions reviewed: every ``uses:`` is pinned to a full commit
SHA with its tag beside it, and the pytest-floor job installs the floor pyproject.toml asks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simpler.base.compat import tomllib

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.y*ml"))
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(?P<ref>.*)$", re.MULTILINE)
PINNED = re.compile(r"[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*")


def _uses(text: str) -> list[str]:
    return [match["ref"].strip() for match in USES.finditer(text)]


def test_there_are_workflows_to_check() -> None:
    assert WORKFLOWS and all(_uses(path.read_text()) for path in WORKFLOWS)


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda path: path.name)
def test_every_action_is_pinned_to_a_commit_with_its_tag_beside_it(path: Path) -> None:
    unpinned = [ref for ref in _uses(path.read_text()) if not PINNED.fullmatch(ref)]
    assert unpinned == [], f"{path.name}: pin each to a 40-hex SHA, then `# vX.Y.Z`"


@pytest.mark.parametrize(
    "ref",
    [
        "actions/checkout@v4",
        "actions/checkout@11d5960a326750d5838078e36cf38b85af677262",
        "actions/checkout@11d5960a326750d5838078e36cf38b85af67726 # v4.4.0",
        "actions/checkout@main # v4.4.0",
    ],
)
def test_a_tag_a_branch_or_a_bare_or_short_sha_is_not_a_pin(ref: str) -> None:
    assert not PINNED.fullmatch(ref)


def test_the_floor_job_installs_the_pytest_pyproject_allows() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = [re.fullmatch(r"pytest>=([\d.]+)", dep) for dep in project["dependencies"]]
    floor = next(found[1] for found in floors if found)
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    assert re.findall(r"'pytest==([\d.]+)\.\*'", workflow) == [floor]


def test_ci_runs_the_oldest_and_the_newest_python_simpler_supports() -> None:
    """The floor requires-python states, the Pythons noxfile.py knows, and the versions the
    workflow tests on are one set of facts: the tests on the oldest and the newest, the
    scene suite on the oldest."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floor = re.fullmatch(r">=(3\.\d+)", project["requires-python"])
    assert floor is not None
    noxfile = (ROOT / "noxfile.py").read_text()
    listed = re.search(r"^PYTHONS = \(([^)]*)\)", noxfile, re.MULTILINE)
    assert listed is not None
    pythons = re.findall(r'"(3\.\d+)"', listed[1])
    oldest, newest = pythons[0], pythons[-1]
    assert oldest == floor[1]
    workflow = (ROOT / ".github" / "workflows" / "ci.yml").read_text()
    jobs = set(re.findall(r'- \{ python: "(3\.\d+)", session: (\w+) \}', workflow))
    assert {(oldest, "tests"), (newest, "tests"), (oldest, "st_a5")} <= jobs
