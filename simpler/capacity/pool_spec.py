"""The ``--pool`` argument: ``N`` (one pool for every backend) or ``BACKEND=N,...``.

A real machine holds one kind of device, so the per-backend form gives each backend its own
pool and its own dry run. Parse errors name the bad part, since the whole value can be long.
"""

from __future__ import annotations

from typing import NamedTuple

from simpler.capacity.aggregate import backend_slot

__all__ = ["PoolSpec", "parse_pool_spec"]


class PoolSpec(NamedTuple):
    """Either one pool of ``size`` devices, or one pool per backend slot."""

    size: int | None = None  # the single pool shared by every backend
    per_backend: tuple[tuple[str, int], ...] = ()  # (backend as the user wrote it, devices)


def parse_pool_spec(text: str) -> PoolSpec:
    """The spec of ``text``; ValueError naming the part that is wrong."""
    if "=" not in text:
        return PoolSpec(size=_devices(text, repr(text)))
    pools: list[tuple[str, int]] = []
    seen: dict[str, str] = {}
    parts = text.split(",")
    for part in parts:
        # The part alone when it is the whole value; else where it sits in the value.
        where = repr(part.strip()) if len(parts) == 1 else f"{part.strip()!r} in {text!r}"
        backend, equals, count = part.partition("=")
        backend = backend.strip()
        if not equals or not backend:
            raise ValueError(f"{where} is not BACKEND=N (e.g. cuda=8,amd=8)")
        slot = backend_slot(backend)
        if slot in seen:
            raise ValueError(f"{where} repeats the pool of {seen[slot]!r}")
        seen[slot] = backend
        pools.append((backend, _devices(count, where)))
    return PoolSpec(per_backend=tuple(pools))


def _devices(count: str, where: str) -> int:
    try:
        value = int(count.strip())
    except ValueError:
        raise ValueError(f"{where}: not a whole number of devices") from None
    if value < 1:
        raise ValueError(f"{where}: needs at least 1 device, got {value}")
    return value
