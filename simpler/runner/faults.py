"""Parse ``SIMPLER_SIM_FAULTS``: the faults the simulated card injects for reproduction and chaos.

Comma-separated: the flags ``force_reset_fail``, ``drain_false_negative``, ``init_fail``, and
launch faults ``KIND@SELECTOR[#ATTEMPT]`` (SELECTOR a substring of the running test's node id,
ATTEMPT 1-based). Which kinds each platform injects (``unsupported_on`` names the rest):
docs/design.md, "Injected faults".
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from simpler.contract.settings import RUNNER_LIBRARY_ENV, SIM_FAULTS_ENV

__all__ = [
    "CUDA_FAULTS",
    "FLAG_FAULTS",
    "GPU_FAULT_KERNELS",
    "LAUNCH_FAULTS",
    "SIM_FAULTS",
    "FaultPlan",
    "LaunchFault",
    "parse_faults",
]

FLAG_FAULTS = ("force_reset_fail", "drain_false_negative", "init_fail")
# The CUDA runner's fault kernels (simpler/runner/cuda/kernels.cu), each a real device fault.
GPU_FAULT_KERNELS = ("illegal_address", "trap", "device_assert", "misaligned")
LAUNCH_FAULTS = ("hang", "launch_fail", "stuck", *GPU_FAULT_KERNELS)
SIM_FAULTS = frozenset((*FLAG_FAULTS, "hang", "launch_fail", "stuck"))
CUDA_FAULTS = frozenset(("hang", *GPU_FAULT_KERNELS))


@dataclass(frozen=True)
class LaunchFault:
    kind: str
    selector: str
    attempt: int | None = None  # None: every attempt


@dataclass(frozen=True)
class FaultPlan:
    flags: frozenset[str] = frozenset()
    launches: tuple[LaunchFault, ...] = field(default_factory=tuple)

    def has(self, flag: str) -> bool:
        return flag in self.flags

    def kinds(self) -> list[str]:
        return sorted(self.flags | {fault.kind for fault in self.launches})

    def unsupported_on(self, platform: str) -> list[str]:
        """The kinds ``platform`` cannot inject (none where simpler's own runner does not run
        it: a project's runtime, or a runner library, which runs every platform)."""
        from simpler.contract import BUILTIN_PLATFORMS

        if platform not in BUILTIN_PLATFORMS or os.environ.get(RUNNER_LIBRARY_ENV):
            return []  # their faults are their own
        supported = CUDA_FAULTS if platform == "cuda" else SIM_FAULTS
        return [kind for kind in self.kinds() if kind not in supported]


def parse_faults(spec: str | None, source: str = SIM_FAULTS_ENV) -> FaultPlan:
    """Return the plan for ``spec``; raise ValueError naming ``source`` and the bad item."""
    if spec is None or not spec.strip():
        return FaultPlan()
    flags: set[str] = set()
    launches: list[LaunchFault] = []
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            raise ValueError(f"{source}: empty fault between commas in {spec!r}")
        name, at, target = item.partition("@")
        if name in FLAG_FAULTS:
            if at:
                raise ValueError(f"{source}: fault {name!r} takes no selector, got {item!r}")
            flags.add(name)
        elif name in LAUNCH_FAULTS:
            launches.append(_parse_launch_fault(name, target, item, source))
        else:
            known = ", ".join(FLAG_FAULTS + tuple(f"{k}@SELECTOR[#ATTEMPT]" for k in LAUNCH_FAULTS))
            raise ValueError(f"{source}: unknown fault {name!r} in {spec!r} (known: {known})")
    return FaultPlan(frozenset(flags), tuple(launches))


def _parse_launch_fault(name: str, target: str, item: str, source: str) -> LaunchFault:
    selector, hash_sign, attempt_text = target.partition("#")
    if not selector:
        raise ValueError(f"{source}: {item!r} needs a selector: {name}@SELECTOR[#ATTEMPT]")
    if not hash_sign:
        return LaunchFault(name, selector)
    if not (attempt_text.isascii() and attempt_text.isdigit()) or int(attempt_text) < 1:
        raise ValueError(f"{source}: attempt in {item!r} must be a positive integer")
    return LaunchFault(name, selector, int(attempt_text))
