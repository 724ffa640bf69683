"""TOML values written as text, for a file both simpler and people edit (the quarantine).

Only what those files need: a basic string with every character TOML requires escaped,
so a node id with quotes, backslashes or brackets reads back exactly as it was.
"""

from __future__ import annotations

__all__ = ["toml_string"]

_SHORT_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in value:
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")  # TOML allows no raw control character
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
