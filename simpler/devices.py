"""Device specs: ``0``, ``0-7``, ``0,2,5``, ``0,2-4,7`` <-> sorted lists of device ids."""

from __future__ import annotations

__all__ = ["format_devices", "parse_devices"]


def parse_devices(spec: str) -> list[int]:
    """The ids ``spec`` names, ascending; ValueError naming the bad part otherwise."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("device spec is empty: expected e.g. 0, 0-7, 0,2,5 or 0,2-4,7")
    ids: set[int] = set()
    for part in spec.split(","):
        ids.update(_parse_part(part.strip(), spec))
    return sorted(ids)


def _parse_part(part: str, spec: str) -> range:
    low, dash, high = part.partition("-")
    if not _is_id(low) or (dash and not _is_id(high)):
        raise ValueError(
            f"bad device spec {spec!r}: {part!r} is not an id or a range like 2-4 "
            "(ids are integers 0 or more)"
        )
    first, last = int(low), int(high) if dash else int(low)
    if last < first:
        raise ValueError(f"bad device spec {spec!r}: range {part!r} runs backwards")
    return range(first, last + 1)


def _is_id(text: str) -> bool:
    return text.isascii() and text.isdigit()


def format_devices(ids: list[int]) -> str:
    """The shortest spec for ``ids``: [0, 1, 2, 5] -> '0-2,5'."""
    parts: list[str] = []
    ordered = sorted(set(ids))
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or ordered[i] != ordered[i - 1] + 1:
            first, last = ordered[start], ordered[i - 1]
            parts.append(str(first) if first == last else f"{first}-{last}")
            start = i
    return ",".join(parts)
