"""Read and validate a registry file: a JSON list, or JSON Lines, of registrations.

Each registration is ``{"filename", "backend", "suite", "est_time", "nightly", "disabled"}``:
``filename``, ``backend`` and ``est_time`` required, a suite-less entry kept unsized and warned
of, other fields ignored. An unreadable entry is an error naming the file and the entry, a
skipped warning with ``lenient`` (docs/reference.md, "Capacity from a real registry").
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from simpler.capacity.model import InputError, Loaded, Registration

__all__ = ["load_registry"]

_TEXT_FIELDS = ("filename", "backend")
_new_tuple = tuple.__new__
# More seconds than any test runs, yet an int float() still takes: beyond ~1e308 it raises.
_MOST_SECONDS = 10**15
NO_SUITE_NAMES_SHOWN = 5  # the warning stays one readable line


class _Entry(NamedTuple):
    """One entry as found in the file, before validation."""

    position: int  # among the entries, from 0 (not `index`: tuples have that method)
    line: int | None  # 1-based line in a JSON Lines file; None in a JSON list
    value: object  # the decoded JSON, or None when the line was not JSON
    parse_error: str | None = None


def load_registry(path: Path, *, lenient: bool) -> Loaded:
    """The valid registrations of ``path``; InputError on a bad entry unless ``lenient``."""
    text = _read_text(path)
    loaded = Loaded()
    problems: list[str] = []
    without_suite: list[str] = []
    registrations = loaded.registrations
    for raw in _entries(path, text):
        # The fast path builds nothing but the registration; an _Entry is only built when
        # something about the entry is worth saying.
        registration = _well_formed(raw[2])
        if registration is None:
            entry = _Entry(*raw)
            outcome = _registration(entry)
            if not isinstance(outcome, Registration):
                problems.append(f"{path}: {_describe(entry)}: {outcome}")
                continue
            registration = outcome
        registrations.append(registration)
        if not registration.suite:
            without_suite.append(_describe(_Entry(*raw)))
    if problems and not lenient:
        raise InputError(_first_of(problems))
    loaded.warnings.extend(f"{problem} (skipped)" for problem in problems)
    if without_suite:
        loaded.warnings.append(_no_suite_warning(path, without_suite))
    return loaded


def _no_suite_warning(path: Path, entries: list[str]) -> str:
    shown = ", ".join(entries[:NO_SUITE_NAMES_SHOWN])
    rest = len(entries) - NO_SUITE_NAMES_SHOWN
    more = f", and {rest} more" if rest > 0 else ""
    count = "1 registration has" if len(entries) == 1 else f"{len(entries)} registrations have"
    return f"{path}: {count} no suite; counted as unsized: {shown}{more}"


def _read_text(path: Path) -> str:
    try:
        # utf-8-sig: registries exported on Windows often start with a byte-order mark.
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read registry {path}: {reason}") from None


_RawEntry = tuple[int, int | None, object, str | None]  # an _Entry's fields, cheaper to build


def _entries(path: Path, text: str) -> Iterator[_RawEntry]:
    """The file's entries, whichever of the two accepted shapes it has."""
    stripped = text.lstrip()
    if not stripped:
        return iter(())  # an empty registry is a valid, empty report
    if stripped.startswith("["):
        return _list_entries(path, text)
    if stripped.startswith("{"):
        return _json_lines_entries(path, text)
    raise InputError(f"{path}: unknown top-level shape: {_shape_hint(text)}")


def _list_entries(path: Path, text: str) -> Iterator[_RawEntry]:
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as exc:
        # A broken list cannot be split into entries, so even lenient mode stops here.
        raise InputError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    assert isinstance(decoded, list)  # the text starts with "["
    # Built in C: zip and itertools make the 20k tuples without a Python-level loop.
    return zip(itertools.count(), itertools.repeat(None), decoded, itertools.repeat(None))


def _json_lines_entries(path: Path, text: str) -> Iterator[_RawEntry]:
    lines = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    if _is_one_pretty_printed_object(lines, text):
        raise InputError(f"{path}: unknown top-level shape: {_shape_hint(text)}")
    for index, (number, line) in enumerate(lines):
        try:
            yield (index, number, json.loads(line), None)
        except json.JSONDecodeError as exc:
            yield (index, number, None, f"not valid JSON: {exc.msg}")


def _is_one_pretty_printed_object(lines: list[tuple[int, str]], text: str) -> bool:
    """A multi-line single object (e.g. ``{"registrations": [...]}``) is not JSON Lines."""
    if len(lines) < 2:
        return False
    try:
        json.loads(lines[0][1])
    except json.JSONDecodeError:
        return _decodes(text)
    return False


def _decodes(text: str) -> bool:
    try:
        json.loads(text)
    except json.JSONDecodeError:
        return False
    return True


def _shape_hint(text: str) -> str:
    expected = "expected a JSON list of registrations or JSON Lines of objects"
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return f"{expected}, got text that is not JSON"
    return f"{expected}, got one JSON {_json_type(decoded)}"


def _registration(entry: _Entry) -> Registration | str:
    """The entry as a Registration, or what is wrong with it."""
    if entry.parse_error is not None:
        return entry.parse_error
    value = entry.value
    if not isinstance(value, dict):
        return f"must be an object, got {_json_type(value)}"
    problems = [
        problem
        for problem in (
            *(_text_problem(value, name) for name in _TEXT_FIELDS),
            _optional_text_problem(value, "suite", "a string (empty when there is none)"),
            _est_time_problem(value),
            _nightly_problem(value),
            _optional_text_problem(value, "disabled", "null or a reason string"),
        )
        if problem is not None
    ]
    if problems:
        return "; ".join(problems)
    return Registration(
        filename=value["filename"],
        backend=value["backend"],
        suite=_suite_of(value),
        est_time=float(value["est_time"]),
        nightly=value.get("nightly", False),
        disabled=value.get("disabled"),
    )


def _well_formed(value: object) -> Registration | None:
    """The registration when every field is plainly right: the fast path of 20k entries.

    None sends the entry through the checks that say what is wrong with it. Exact type
    checks suffice here: json gives exact types, and anything else takes the slow path.
    """
    if type(value) is not dict:
        return None
    get = value.get
    filename, backend, suite = get("filename"), get("backend"), get("suite")
    est_time, nightly, disabled = get("est_time"), get("nightly", False), get("disabled")
    if type(filename) is not str or type(backend) is not str or not filename or not backend:
        return None
    if filename.isspace() or backend.isspace():
        return None
    if type(suite) is not str:
        if suite is not None:
            return None
        suite = ""
    elif suite.isspace():
        suite = ""
    if type(est_time) is int:
        if not 0 <= est_time <= _MOST_SECONDS:
            return None
        est_time = float(est_time)
    elif type(est_time) is not float or not 0 <= est_time < math.inf:  # NaN fails too
        return None
    if est_time < 0 or (nightly is not False and nightly is not True):
        return None
    if disabled is not None and type(disabled) is not str:
        return None
    # tuple.__new__ straight away: the NamedTuple's own __new__ is one more Python call.
    return _new_tuple(Registration, (filename, backend, suite, est_time, nightly, disabled))


def _text_problem(value: dict[str, object], name: str) -> str | None:
    if name not in value:
        return f"{name} is missing"
    field_value = value[name]
    if not isinstance(field_value, str) or not field_value.strip():
        return f"{name} must be a non-empty string, got {_shown(field_value)}"
    return None


def _optional_text_problem(value: dict[str, object], name: str, expected: str) -> str | None:
    given = value.get(name)
    if given is not None and not isinstance(given, str):
        return f"{name} must be {expected}, got {_shown(given)}"
    return None


def _suite_of(value: dict[str, Any]) -> str:
    """The suite, "" when the entry has none (missing, null or blank)."""
    suite = value.get("suite")
    return suite if isinstance(suite, str) and suite.strip() else ""


def _est_time_problem(value: dict[str, object]) -> str | None:
    if "est_time" not in value:
        return "est_time is missing"
    est_time = value["est_time"]
    # bool is an int subclass in Python, but `true` is no number of seconds.
    if isinstance(est_time, bool) or not isinstance(est_time, int | float):
        return f"est_time must be a number of seconds, got {_shown(est_time)}"
    if isinstance(est_time, int) and est_time > _MOST_SECONDS:
        return f"est_time is too large to be seconds, got {_shown(est_time)}"
    if not math.isfinite(est_time) or est_time < 0:
        return f"est_time must be a finite number >= 0, got {est_time!r}"
    return None


def _nightly_problem(value: dict[str, object]) -> str | None:
    nightly = value.get("nightly", False)
    if not isinstance(nightly, bool):
        return f"nightly must be true or false, got {_shown(nightly)}"
    return None


def _describe(entry: _Entry) -> str:
    """How the user finds the entry: its index, its line, and its filename when it has one;
    in a JSON list, an entry without a filename has no line either: its own text, then."""
    where = f"entry [{entry.position}]"
    if entry.line is not None:
        where += f" at line {entry.line}"
    filename = entry.value.get("filename") if isinstance(entry.value, dict) else None
    if isinstance(filename, str):
        where += f" (filename {filename!r})"
    elif entry.line is None:
        where += f" {_excerpt(entry.value)}"
    return where


def _excerpt(value: object, width: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _first_of(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    return f"{problems[0]} [and {len(problems) - 1} more bad entries; --lenient skips them]"


def _shown(value: object) -> str:
    """A value as the user wrote it in JSON, with its type: ``string "12s"``."""
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{_json_type(value)} {text}"


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"
