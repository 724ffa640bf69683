"""What simpler takes from 3.11's standard library reads the same on 3.10: the dates a user
types (``--before``, ``--prune-before``) in every form 3.11's ``fromisoformat`` reads."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from simpler.base import compat
from simpler.base.compat import UTC, iso_moment, tomllib

FORMS = [
    ("2025-01-31", datetime(2025, 1, 31)),
    ("20250131", datetime(2025, 1, 31)),
    ("2025-01-31T12:30", datetime(2025, 1, 31, 12, 30)),
    ("2025-01-31T1230", datetime(2025, 1, 31, 12, 30)),
    ("20250131T123005", datetime(2025, 1, 31, 12, 30, 5)),
    ("2025-01-31 12:30:05.5", datetime(2025, 1, 31, 12, 30, 5, 500_000)),
    ("2025-01-31T12:30:05,25", datetime(2025, 1, 31, 12, 30, 5, 250_000)),
    ("2025-01-31T12:00Z", datetime(2025, 1, 31, 12, tzinfo=UTC)),
    ("2025-01-31T12:00:00.5Z", datetime(2025, 1, 31, 12, 0, 0, 500_000, tzinfo=UTC)),
    ("2025-01-31T12:00+02:00", datetime(2025, 1, 31, 12, tzinfo=timezone(timedelta(hours=2)))),
    (" 2025-01-31T12:00-0530 ", datetime(2025, 1, 31, 12, tzinfo=timezone(-timedelta(hours=5.5)))),
]


@pytest.mark.parametrize(("typed", "meant"), FORMS)
def test_every_form_311_reads_reads_the_same_here(typed: str, meant: datetime) -> None:
    assert iso_moment(typed) == meant and iso_moment(typed).tzinfo == meant.tzinfo


@pytest.mark.parametrize(("typed", "meant"), FORMS)
def test_the_310_rewrite_alone_reads_every_form(typed: str, meant: datetime) -> None:
    """The rewrite 3.10 relies on, checked on whatever Python runs the tests."""
    assert datetime.fromisoformat(compat._as_310_reads(typed.strip())) == meant


@pytest.mark.parametrize("typed", ["", "yesterday", "2025-13-01", "2025-01-31T25:00", "31/01/2025"])
def test_what_is_not_a_date_is_refused(typed: str) -> None:
    with pytest.raises(ValueError):
        iso_moment(typed)


def test_toml_reads_as_311s_tomllib() -> None:
    assert tomllib.loads('a = 1\n[b]\nc = "d"\n') == {"a": 1, "b": {"c": "d"}}
    with pytest.raises(tomllib.TOMLDecodeError):
        tomllib.loads("a = = 1")
