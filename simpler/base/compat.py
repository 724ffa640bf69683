"""What simpler takes from Python 3.11's standard library, on Python 3.10 as well.

``tomllib`` (``tomli`` on 3.10), ``UTC`` and :func:`iso_moment` (ISO 8601 as 3.11 reads it):
every use of them goes through here (docs/setup.md, "Versions").
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.10 branch, run by nox -s tests-3.10
    import tomli as tomllib

__all__ = ["UTC", "iso_moment", "tomllib"]

UTC = timezone.utc

# The forms 3.11 reads that 3.10 refuses, each rewritten into one 3.10 reads.
_BASIC_DATE = re.compile(r"^(\d{4})(\d{2})(\d{2})(?=$|[T ])")  # 20250131 -> 2025-01-31
_BASIC_TIME = re.compile(r"(?<=[T ])(\d{2})(\d{2})(\d{2})?(?=$|[.,+\-Z])")  # T1230 -> T12:30
_FRACTION = re.compile(r"[.,](\d+)")  # any number of digits; 3.10 takes 3 or 6
_ZULU = re.compile(r"Z$")
_BASIC_OFFSET = re.compile(r"(?<=\d)([+-])(\d{2})(\d{2})$")  # -0530 -> -05:30


def iso_moment(text: str) -> datetime:
    """``text`` (ISO 8601, as Python 3.11's ``fromisoformat`` reads it) as a datetime;
    ValueError when it is not one."""
    text = text.strip()
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        if sys.version_info >= (3, 11):
            raise
    return datetime.fromisoformat(_as_310_reads(text))


def _as_310_reads(text: str) -> str:
    text = _BASIC_DATE.sub(r"\1-\2-\3", text)
    text = _BASIC_TIME.sub(lambda m: ":".join(g for g in m.groups() if g), text)
    text = _FRACTION.sub(lambda m: "." + (m.group(1) + "000000")[:6], text)
    text = _BASIC_OFFSET.sub(r"\1\2:\3", text)
    return _ZULU.sub("+00:00", text)
