"""What changed since a commit, from a real git checkout: committed, staged, unstaged and new
files, deletions; and every way git cannot answer is one line that says what to do."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from simpler.impact.git_change import GitUnanswered, ancestors, change_since, merge_base


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _commit(root: Path, message: str) -> str:
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return _git(root, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("A = 1\n")
    (root / "b.py").write_text("B = 1\n")
    (root / "gone.py").write_text("G = 1\n")
    _commit(root, "first")
    return root


def test_every_kind_of_change_since_a_commit_with_its_source_now(repo: Path) -> None:
    first = _git(repo, "rev-parse", "HEAD")
    (repo / "a.py").write_text("A = 2\n")
    _commit(repo, "committed")
    (repo / "b.py").write_text("B = 2\n")  # unstaged
    (repo / "gone.py").unlink()
    (repo / "new.py").write_text("N = 1\n")  # untracked
    (repo / ".gitignore").write_text("ignored.py\n")
    (repo / "ignored.py").write_text("I = 1\n")
    change = change_since(repo, first)
    assert change.files == {
        "a.py": "A = 2\n", "b.py": "B = 2\n", "gone.py": None, "new.py": "N = 1\n",
        ".gitignore": "ignored.py\n",
    }  # fmt: skip


def test_the_merge_base_and_its_ancestors(repo: Path) -> None:
    first = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "topic")
    (repo / "a.py").write_text("A = 3\n")
    second = _commit(repo, "on topic")
    assert merge_base(repo, "main") == first
    assert ancestors(repo, second, 5) == [second, first]


@pytest.mark.parametrize(("rev", "says"), [("no-such-rev", "no-such-rev is not a commit here")])
def test_a_rev_that_is_not_a_commit_is_one_line(repo: Path, rev: str, says: str) -> None:
    with pytest.raises(GitUnanswered, match=says):
        merge_base(repo, rev)


def test_outside_a_checkout_it_says_so(tmp_path: Path) -> None:
    with pytest.raises(GitUnanswered, match="not a git checkout"):
        merge_base(tmp_path, "HEAD")


def test_a_clone_too_shallow_names_fetch_depth_0(repo: Path, tmp_path: Path) -> None:
    first = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "topic")
    for n in range(3):
        (repo / "a.py").write_text(f"A = {n + 10}\n")
        _commit(repo, f"topic {n}")
    _git(repo, "checkout", "-q", "main")
    (repo / "b.py").write_text("B = 9\n")
    _commit(repo, "main moves on")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "topic",
                    f"file://{repo}", str(shallow)], check=True)  # fmt: skip
    _git(shallow, "fetch", "-q", "--depth", "1", "origin", "main:main")
    with pytest.raises(GitUnanswered, match="fetch-depth: 0"):
        merge_base(shallow, "main")
    assert first  # the history the full clone has and the shallow one lacks
