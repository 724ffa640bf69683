"""How a record's fields are read from the dict of its line: each reader gives the field's
type, and a value of an unexpected type reads as absent instead of failing the read (a report
file is written by many processes and versions). :class:`Field` binds a reader to a record
class's attribute of the same name (simpler.reporting.records).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar, overload

__all__ = [
    "Field", "flag", "float_", "int_", "ints", "kernels", "list_", "mapping",
    "opt_flag", "opt_strings", "opt_text", "positive_counts", "processes", "str_only",
    "strings", "text", "true",
]  # fmt: skip

T = TypeVar("T")


class _Record(Protocol):
    """What a field reads from: a record's dict (simpler.reporting.records.Record)."""

    @property
    def raw(self) -> Mapping[str, Any]: ...


def text(raw: Mapping[str, Any], key: str) -> str:
    """An optional text field: ``""`` when absent or null, else the value as text."""
    value = raw.get(key)
    return "" if value is None else str(value)


def opt_text(raw: Mapping[str, Any], key: str) -> str | None:
    """An optional text field where null means something (a test never run, no signal)."""
    value = raw.get(key)
    return None if value is None else str(value)


def int_(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def float_(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def ints(raw: Mapping[str, Any], key: str) -> tuple[int, ...]:
    value = raw.get(key)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in value if isinstance(v, int) and not isinstance(v, bool))


def strings(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    return opt_strings(raw, key) or ()


def opt_strings(raw: Mapping[str, Any], key: str) -> tuple[str, ...] | None:
    """A list of text whose absence says something apart from an empty list (a plan)."""
    value = raw.get(key)
    if not isinstance(value, list | tuple):
        return None
    return tuple(v for v in value if isinstance(v, str))


class Field(Generic[T]):
    """A typed field of a record, read from its ``raw`` dict on access by ``read``: the
    record types below are lists of their fields, one line each. Read on the class it is
    the field itself, whose ``key`` names it in the file (``TestRecord.nodeid.key``): how
    code that reads many records as plain dicts names their fields."""

    def __init__(self, read: Callable[[Mapping[str, Any], str], T]) -> None:
        self._read = read
        self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name  # each attribute is named as the record's field is

    @overload
    def __get__(self, record: None, owner: type | None = None) -> Field[T]: ...
    @overload
    def __get__(self, record: _Record, owner: type | None = None) -> T: ...
    def __get__(self, record: _Record | None, owner: type | None = None) -> T | Field[T]:
        return self if record is None else self._read(record.raw, self.key)


def str_only(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    return value if isinstance(value, str) else ""


def flag(raw: Mapping[str, Any], key: str) -> bool:
    return bool(raw.get(key))


def true(raw: Mapping[str, Any], key: str) -> bool:
    """Only a JSON ``true``: a test quarantine mark is never guessed from another value."""
    return raw.get(key) is True


def positive_counts(raw: Mapping[str, Any], key: str) -> dict[str, int]:
    """Outcome to number of test records; anything but a positive count is left out."""
    counts = raw.get(key)
    if not isinstance(counts, dict):
        return {}
    return {str(k): v for k, v in counts.items() if isinstance(v, int) and v > 0}


def kernels(raw: Mapping[str, Any], key: str) -> dict[str, tuple[str, ...]]:
    """``{kernel: [source, ...]}``; what is not that shape reads as no kernel."""
    value = raw.get(key)
    if not isinstance(value, dict):
        return {}
    return {
        str(name): tuple(s for s in sources if isinstance(s, str))
        for name, sources in value.items()
        if isinstance(sources, list)
    }


def opt_flag(raw: Mapping[str, Any], key: str) -> bool | None:
    """A flag whose absence says something apart from false (``reached_summary``)."""
    value = raw.get(key)
    return value if isinstance(value, bool) else None


def mapping(raw: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    value = raw.get(key)
    return value if isinstance(value, dict) else None


def list_(raw: Mapping[str, Any], key: str) -> tuple[Any, ...]:
    value = raw.get(key)
    return tuple(value) if isinstance(value, list | tuple) else ()


def processes(raw: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """``pid``, ``name``, ``cmdline``, ``test``, ``signal`` of each (a non-dict: left out)."""
    processes = raw.get(key)
    if not isinstance(processes, list):
        return []
    return [process for process in processes if isinstance(process, dict)]
