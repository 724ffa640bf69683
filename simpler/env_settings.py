"""Numbers read from the environment: a bad value is a ValueError that names the variable."""

from __future__ import annotations

import os

__all__ = ["positive_int_env"]


def positive_int_env(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{name} must be a positive integer, got {text!r}")
    return int(text)
