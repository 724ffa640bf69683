"""The device count of a suite, read from the ``N-KIND`` tokens in its name."""

from __future__ import annotations

import re

__all__ = ["DEVICE_KINDS", "count_tokens", "device_count", "unsized_reason"]

DEVICE_KINDS = ("gpu", "npu", "hcu", "xpu", "dcu")

# A token must be bounded by dashes or the ends of the name, so that the digits of
# "-tp4", "qwen3-235b" or "4-node" are never mistaken for a device count.
_TOKEN = re.compile(rf"(?<![^-])(\d+)-(?:{'|'.join(DEVICE_KINDS)})(?![^-])", re.IGNORECASE)


def count_tokens(suite: str) -> list[int]:
    """Every device count the name states, in order (``x-2-gpu-y-4-npu`` gives [2, 4])."""
    return [int(match.group(1)) for match in _TOKEN.finditer(suite)]


def device_count(suite: str) -> int | None:
    """The count the name states; None (unsized) when it states none or several that differ."""
    counts = set(count_tokens(suite))
    return counts.pop() if len(counts) == 1 else None


def unsized_reason(suite: str) -> str:
    """Why ``suite`` has no device count, in words for the report."""
    if not suite:
        return "no suite given"
    counts = count_tokens(suite)
    if not counts:
        return "no N-" + "/".join(DEVICE_KINDS) + " token"
    return "tokens disagree: " + ", ".join(str(count) for count in counts)
