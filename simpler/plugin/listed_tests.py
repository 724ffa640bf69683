"""Node ids ``simpler run`` tells a pytest process in a file, one a line: the L2 tests that
use no device (``--simpler-no-device-tests``), the tests a change can break
(``--simpler-only-tests``). Read once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["listed_tests"]

_READ = pytest.StashKey[dict[str, frozenset[str]]]()


def listed_tests(config: pytest.Config, option: str) -> frozenset[str] | None:
    """The node ids of the file option ``option`` names; None when it names none."""
    path = getattr(config.option, option, None)
    if not path:
        return None
    read = config.stash.setdefault(_READ, {})
    if option not in read:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
        read[option] = frozenset(line for line in lines if line)
    return read[option]
