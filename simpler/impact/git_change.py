"""What changed since a commit, as git sees the checkout: the commits a map may come from and
the files that differ between one of them and the working tree (uncommitted changes and new
files included, as a user's next run would see them).

Every way git cannot answer is a :class:`GitUnanswered` whose message names what to do (a
shallow clone: ``fetch-depth: 0``): the selection then fails closed, the whole suite runs.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Change",
    "GitUnanswered",
    "ancestors",
    "change_since",
    "clean_head",
    "merge_base",
]


class GitUnanswered(RuntimeError):
    """git cannot say what changed (not a checkout, REV unknown, a clone too shallow)."""


@dataclass(frozen=True)
class Change:
    since: str  # the full hash of the commit the files are compared with
    files: dict[str, str | None]  # path from the root -> its source now (None: deleted)


def merge_base(root: Path, rev: str) -> str:
    """Where HEAD's line met ``rev``'s: the newest commit both have."""
    _git(root, "rev-parse", "--git-dir", what="not a git checkout")
    resolved = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}",
                    what=f"{rev} is not a commit here")  # fmt: skip
    try:
        return _git(root, "merge-base", "HEAD", resolved, what="")
    except GitUnanswered:
        shallow = _git(root, "rev-parse", "--is-shallow-repository", what="") == "true"
        if shallow:
            raise GitUnanswered(
                f"this clone is too shallow to find where HEAD met {rev} "
                "(fetch the history: actions/checkout's fetch-depth: 0)"
            ) from None
        raise GitUnanswered(f"HEAD and {rev} share no commit") from None


def clean_head(root: Path) -> str:
    """HEAD's full hash, when the working tree is HEAD's (untracked files aside): what a map
    measured now belongs to. GitUnanswered says why not."""
    _git(root, "rev-parse", "--git-dir", what="not a git checkout")
    head = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", what="no commit yet")
    if _git(root, "status", "--porcelain", "--untracked-files=no", what=""):
        raise GitUnanswered("the working tree has changes: a map belongs to a commit")
    return head


def ancestors(root: Path, commit: str, limit: int) -> list[str]:
    """``commit`` and its ancestors, newest first, at most ``limit``."""
    return _git(root, "rev-list", f"--max-count={limit}", commit, what="").split()


def change_since(root: Path, commit: str) -> Change:
    """The files that differ between ``commit`` and the working tree, with their sources."""
    names = _git(root, "diff", "--name-only", "-z", "--no-renames", commit, what="").split("\0")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z", what="")
    files: dict[str, str | None] = {}
    for name in [*names, *untracked.split("\0")]:
        if name:
            path = root / name
            files[name] = _source(path)
    return Change(commit, files)


def _source(path: Path) -> str | None:
    if not path.is_file():
        return None  # deleted (or a folder where a file was)
    return path.read_text(encoding="utf-8", errors="replace")


def _git(root: Path, *args: str, what: str) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    except OSError as error:
        raise GitUnanswered(f"git cannot run: {error.strerror or error}") from None
    if done.returncode != 0:
        reason = what or (done.stderr.strip().splitlines() or [f"git {args[0]} failed"])[-1]
        raise GitUnanswered(reason)
    return done.stdout.strip("\n")
