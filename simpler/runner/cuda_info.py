"""What the CUDA runner can tell about the card, for the record: scripts/gpu_check.py reads it.

Each call loads the CUDA runner (and so the driver) on first use.
"""

from __future__ import annotations

from typing import Any

from simpler.runner import library

__all__ = ["device_info", "memory_info", "raw_primary_ctx_reset"]


def _gbl() -> Any:
    return library.load("cuda").gbl


def device_info(device: int) -> dict[str, Any]:
    """The card's name, the driver's version and the compute capability (for the record)."""
    gbl = _gbl()
    capability = int(gbl.simpler_cuda_compute_capability(device))
    return {
        "name": str(gbl.simpler_cuda_device_name(device)) or "unknown",
        "driver_version": int(gbl.simpler_cuda_driver_version()),
        "compute_capability": f"{capability // 10}.{capability % 10}" if capability >= 0 else "?",
        "total_bytes": int(gbl.simpler_cuda_total_bytes(device)),
    }


def memory_info(device: int) -> tuple[int, int]:
    """(free bytes after this process's first init on ``device``, free bytes now).

    -1 for a baseline not recorded yet; a negative free count is -CUresult.
    """
    gbl = _gbl()
    return int(gbl.simpler_cuda_baseline_free(device)), int(gbl.simpler_cuda_free_bytes(device))


def raw_primary_ctx_reset(device: int) -> int:
    """cuDevicePrimaryCtxReset straight through (for measuring it); the CUresult."""
    return int(_gbl().simpler_cuda_raw_primary_ctx_reset(device))
