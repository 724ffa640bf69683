"""The test quarantine file (``simpler-quarantine.toml``): read it, match node ids, edit it.

An active entry marks its tests' records ``quarantined`` and keeps their failures out of the
exit code; an expired one still loads. Anything else wrong is a :class:`QuarantineFileError`,
one line naming file and line (docs/quarantine.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from simpler.base.atomic_write import write_atomically
from simpler.base.compat import tomllib
from simpler.base.toml_text import toml_string
from simpler.reporting.records import ChildRecord, PoisonSkipRecord, TestRecord

__all__ = [
    "MAX_DAYS_AHEAD",
    "QUARANTINE_FILE_NAME",
    "QuarantineEntry",
    "QuarantineFile",
    "QuarantineFileError",
    "add_entries",
    "entry_block",
    "load_quarantine",
    "parse_quarantine",
    "remove_entries",
]

QUARANTINE_FILE_NAME = "simpler-quarantine.toml"
MAX_DAYS_AHEAD = 90  # a quarantine is a loan with a due date, never a quiet delete
OfATest = TestRecord | PoisonSkipRecord | ChildRecord  # the records it marks
NEW_FILE_HEADER = (
    "# simpler's test quarantine: a quarantined test still runs in every phase, and its\n"
    "# failure does not change the exit code. Every entry expires at most 90 days ahead;\n"
    "# an expired entry gates again. See docs/quarantine.md.\n"
)
_KEYS = ("nodeid", "reason", "owner", "issue", "expires", "platforms")
_HEADER = re.compile(r"\s*\[\[\s*quarantine\s*\]\]\s*(#.*)?$")
_TOML_POSITION = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


class QuarantineFileError(ValueError):
    """The quarantine file cannot be used; the message is one line naming file and line."""


@dataclass(frozen=True)
class QuarantineEntry:
    nodeid: str
    reason: str
    expires: date
    owner: str | None = None
    issue: str | None = None
    platforms: tuple[str, ...] | None = None  # None: every platform
    line: int = 0  # 1-based line of its [[quarantine]] header; 0: not from a file
    expired: bool = False  # its expires day had passed when the file was loaded

    def covers(self, nodeid: str) -> bool:
        """Itself, or a test under it as pytest selects: ``a.py::TestX`` covers
        ``a.py::TestX::test_y`` and ``a.py::TestX[1]``, never ``a.py::TestXY``; a folder
        (no ``::``) covers the files below it."""
        prefix = self.nodeid
        if not nodeid.startswith(prefix):
            return False
        rest = nodeid[len(prefix) :]
        if not rest or rest.startswith(("::", "[")):
            return True
        return "::" not in prefix and (prefix.endswith("/") or rest.startswith("/"))

    def applies_on(self, platform: str | None) -> bool:
        return self.platforms is None or platform is None or platform in self.platforms

    @property
    def who(self) -> str:
        """Whom to ask about it: ``owner alice; issue URL``."""
        named = (("owner", self.owner), ("issue", self.issue))
        return "; ".join(f"{key} {value}" for key, value in named if value)


@dataclass(frozen=True)
class QuarantineFile:
    path: Path
    entries: tuple[QuarantineEntry, ...] = ()
    problems: tuple[str, ...] = ()  # what still loads but needs a person: expired entries

    def match(self, nodeid: str, platform: str | None) -> QuarantineEntry | None:
        """The active entry that quarantines ``nodeid`` on ``platform`` (the closest)."""
        return self._closest(nodeid, platform, expired=False)

    def expired_match(self, nodeid: str, platform: str | None) -> QuarantineEntry | None:
        """The expired entry covering ``nodeid``, when no active one does: it gates again."""
        if self.match(nodeid, platform) is not None:
            return None
        return self._closest(nodeid, platform, expired=True)

    def entry_for(self, nodeid: str) -> QuarantineEntry | None:
        """Any entry covering ``nodeid``, active first: what the summary says about it."""
        found = self._closest(nodeid, None, expired=False)
        return found or self._closest(nodeid, None, expired=True)

    def mark(self, record: OfATest, platform: str | None) -> OfATest:
        """``record`` with ``quarantined`` set, or ``quarantine_expired``, when an entry covers
        its test; else ``record`` itself."""
        if self.match(record.nodeid, platform) is not None:
            return record.replace(quarantined=True)
        expired = self.expired_match(record.nodeid, platform)
        return record.replace(quarantine_expired=expired.expires.isoformat()) if expired else record

    def unmatched(self, nodeids: Iterable[str]) -> list[QuarantineEntry]:
        """The entries that cover none of ``nodeids`` (whatever their platforms)."""
        ids = list(nodeids)
        return [e for e in self.entries if not any(e.covers(n) for n in ids)]

    def where(self, entry: QuarantineEntry) -> str:
        return f"{self.path}:{entry.line}" if entry.line else str(self.path)

    def _closest(
        self, nodeid: str, platform: str | None, *, expired: bool
    ) -> QuarantineEntry | None:
        found = [
            e
            for e in self.entries
            if e.expired == expired and e.applies_on(platform) and e.covers(nodeid)
        ]
        return max(found, key=lambda e: len(e.nodeid), default=None)


def load_quarantine(path: str | os.PathLike[str], *, today: date | None = None) -> QuarantineFile:
    """Read and check the file at ``path``; QuarantineFileError when it cannot be used."""
    target = Path(path)
    return parse_quarantine(_read_text(target), target, today=today)


def parse_quarantine(text: str, path: Path, *, today: date | None = None) -> QuarantineFile:
    """``text`` as the quarantine file ``path`` (named in every message)."""
    today = today or date.today()
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise QuarantineFileError(f"quarantine file {_toml_error(path, text, error)}") from None
    unknown = sorted(set(document) - {"quarantine"})
    if unknown:
        raise QuarantineFileError(
            f"quarantine file {path}: unknown top-level key {unknown[0]!r} "
            "(it holds only [[quarantine]] entries)"
        )
    raw = document.get("quarantine", [])
    if not isinstance(raw, list):
        raise QuarantineFileError(f"quarantine file {path}: 'quarantine' must be [[quarantine]]")
    lines = _header_lines(text, len(raw))
    entries = tuple(
        _entry(item, path, line or 0, number, today)
        for number, (item, line) in enumerate(zip(raw, lines, strict=True), 1)
    )
    problems = tuple(
        f"{path}:{e.line}: quarantine of {e.nodeid} expired on {e.expires}: it gates again"
        for e in entries
        if e.expired
    )
    return QuarantineFile(path, entries, problems)


def add_entries(
    path: str | os.PathLike[str], entries: Sequence[QuarantineEntry], *, today: date | None = None
) -> list[QuarantineEntry]:
    """Append a ``[[quarantine]]`` block per entry whose node id the file does not hold yet
    (creating the file, with a short header, if missing); the entries added.

    Every other byte of the file stays as it was; the result must load, or nothing is written.
    """
    target = Path(path)
    text = _read_text(target) if target.exists() else NEW_FILE_HEADER
    present = {e.nodeid for e in parse_quarantine(text, target, today=today).entries}
    added = []
    for entry in entries:
        if entry.nodeid not in present:
            present.add(entry.nodeid)
            added.append(entry)
    if not added:
        return []
    if text and not text.endswith(("\n", "\r")):
        text += "\n"
    text += "".join("\n" + entry_block(entry) for entry in added)
    _write_checked(target, text, today)
    return added


def remove_entries(
    path: str | os.PathLike[str], nodeids: Iterable[str], *, today: date | None = None
) -> list[str]:
    """Remove the blocks whose ``nodeid`` is exactly one of ``nodeids``; the ones removed.

    A block is its header line through its last key line (comments inside it included) and
    one blank line after it; every other line stays byte for byte.
    """
    target = Path(path)
    text = _read_text(target)
    loaded = parse_quarantine(text, target, today=today)
    wanted = set(nodeids)
    lines = _lines(text)
    starts = _header_indices(lines)
    if len(starts) != len(loaded.entries):
        raise QuarantineFileError(
            f"quarantine file {target}: cannot edit it: its entries are not all "
            "[[quarantine]] blocks"
        )
    doomed: set[int] = set()
    removed = []
    for number, (start, entry) in enumerate(zip(starts, loaded.entries, strict=True)):
        if entry.nodeid not in wanted:
            continue
        removed.append(entry.nodeid)
        end = starts[number + 1] if number + 1 < len(starts) else len(lines)
        end = _block_end(lines, start, end)
        if end < len(lines) and not lines[end].strip():
            end += 1  # the blank line that kept it apart from what follows
        doomed.update(range(start, end))
    if removed:
        kept = "".join(line for index, line in enumerate(lines) if index not in doomed)
        _write_checked(target, kept, today)
    return removed


# --- reading ------------------------------------------------------------------------------


def _entry(item: object, path: Path, line: int, number: int, today: date) -> QuarantineEntry:
    where = f"{path}:{line}" if line else f"{path} (entry {number})"
    if not isinstance(item, dict):
        raise QuarantineFileError(f"quarantine file {where}: an entry must be a table")
    unknown = sorted(set(item) - set(_KEYS))
    if unknown:
        raise QuarantineFileError(
            f"quarantine file {where}: unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})"
        )
    nodeid = _text(item, "nodeid", where, required=True) or ""
    reason = _text(item, "reason", where, required=True) or ""
    owner, issue = _text(item, "owner", where), _text(item, "issue", where)
    if owner is None and issue is None:
        raise QuarantineFileError(
            f"quarantine file {where}: {nodeid} needs an 'owner' or an 'issue'"
        )
    expires = _expires(item, where, nodeid, today)
    return QuarantineEntry(
        nodeid=nodeid,
        reason=reason,
        expires=expires,
        owner=owner,
        issue=issue,
        platforms=_platforms(item, where),
        line=line,
        expired=expires < today,
    )


def _text(item: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = item.get(key)
    if value is None and required:
        raise QuarantineFileError(f"quarantine file {where}: missing required key {key!r}")
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise QuarantineFileError(f"quarantine file {where}: {key!r} must be a non-empty string")
    return value


def _expires(item: dict[str, Any], where: str, nodeid: str, today: date) -> date:
    value = item.get("expires")
    if value is None:
        raise QuarantineFileError(f"quarantine file {where}: missing required key 'expires'")
    # A datetime is a date too, to Python: a time of day in it is still not a date.
    if isinstance(value, datetime) or not isinstance(value, date):
        raise QuarantineFileError(
            f"quarantine file {where}: 'expires' must be a TOML date such as 2027-02-01 "
            f"(no quotes, no time), got {value!r}"
        )
    latest = today + timedelta(days=MAX_DAYS_AHEAD)
    if value > latest:
        raise QuarantineFileError(
            f"quarantine file {where}: {nodeid} expires {value}, more than {MAX_DAYS_AHEAD} "
            f"days ahead (at most {latest})"
        )
    return value


def _platforms(item: dict[str, Any], where: str) -> tuple[str, ...] | None:
    value = item.get("platforms")
    if value is None:
        return None
    names = value if isinstance(value, list) else []
    if not names or not all(isinstance(p, str) and p.strip() for p in names):
        raise QuarantineFileError(
            f"quarantine file {where}: 'platforms' must be a list of platform names"
        )
    return tuple(names)


def _toml_error(path: Path, text: str, error: tomllib.TOMLDecodeError) -> str:
    """``F:LINE:COLUMN: what`` from tomllib's ``What (at line L, column C)``."""
    message = str(error).splitlines()[0] if str(error) else "invalid TOML"
    position = _TOML_POSITION.search(message)
    if position is None:
        return f"{path}: {message}"
    what = message[: position.start()]
    what = what[:1].lower() + what[1:]
    if position.group(1) is None:  # "at end of document": the last line is where it broke
        return f"{path}:{max(len(_lines(text)), 1)}: {what} at the end of the file"
    return f"{path}:{position.group(1)}:{position.group(2)}: {what}"


def _header_lines(text: str, count: int) -> list[int | None]:
    """The 1-based line of each entry's ``[[quarantine]]`` header; None for an entry written
    another way (an inline array), which messages then name by its number."""
    found = [index + 1 for index in _header_indices(_lines(text))]
    return list(found) if len(found) == count else [None] * count


def _lines(text: str) -> list[str]:
    """The lines as TOML counts them (only ``\n`` ends one), each with its ending."""
    return [line for line in re.split(r"(?<=\n)", text) if line]


def _header_indices(lines: Sequence[str]) -> list[int]:
    """The 0-based indices of the ``[[quarantine]]`` header lines, outside multi-line strings."""
    inside = _inside_strings(lines)
    return [i for i, line in enumerate(lines) if i not in inside and _HEADER.match(line)]


def _inside_strings(lines: Sequence[str]) -> set[int]:
    """The indices of the lines that start inside a multi-line string: part of a value."""
    inside: set[int] = set()
    quote = ""
    for index, line in enumerate(lines):
        if quote:
            inside.add(index)
        for delimiter in re.findall(r'"""|\'\'\'', line):
            if not quote:
                quote = delimiter
            elif delimiter == quote:
                quote = ""
    return inside


def _block_end(lines: Sequence[str], start: int, limit: int) -> int:
    """One past the block at ``start``: through its last key line, not the comments or blank
    lines before the next block (they belong to what follows)."""
    inside = _inside_strings(lines)
    end = start + 1
    for index in range(start + 1, limit):
        stripped = lines[index].strip()
        if index in inside or (stripped and not stripped.startswith("#")):
            end = index + 1
    return end


# --- writing ------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as error:
        why = error.strerror or str(error)
        raise QuarantineFileError(f"cannot read quarantine file {path}: {why}") from None
    except UnicodeDecodeError as error:
        raise QuarantineFileError(f"quarantine file {path} is not UTF-8: {error}") from None


def _write_checked(target: Path, text: str, today: date | None) -> None:
    parse_quarantine(text, target, today=today)  # what is written must load
    data = text.encode("utf-8")
    write_atomically(target, lambda stream: stream.write(data))


def entry_block(entry: QuarantineEntry) -> str:
    lines = ["[[quarantine]]", f"nodeid = {toml_string(entry.nodeid)}"]
    lines.append(f"reason = {toml_string(entry.reason)}")
    lines += [
        f"{key} = {toml_string(value)}"
        for key, value in (("owner", entry.owner), ("issue", entry.issue))
        if value
    ]
    lines.append(f"expires = {entry.expires.isoformat()}")
    if entry.platforms:
        lines.append(f"platforms = [{', '.join(map(toml_string, entry.platforms))}]")
    return "\n".join(lines) + "\n"
