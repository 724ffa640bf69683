"""The exceptions a device test can raise, and which of them mean the card is in trouble."""

from __future__ import annotations

__all__ = ["DeviceRuntimeError", "GoldenMismatch"]


class DeviceRuntimeError(RuntimeError):
    """A device call returned a non-zero rc: the card or its context may be poisoned.

    ``process_must_end``: the card holds work that nothing in this process can stop (a GPU
    kernel still running past the op-timeout): no in-process reset is tried, and the
    process that holds the context must end and be replaced.
    """

    def __init__(
        self,
        rc: int,
        where: str,
        message: str,
        *,
        device: int,
        platform: str,
        process_must_end: bool = False,
    ) -> None:
        self.rc = rc
        self.where = where
        self.message = message
        self.device = device
        self.platform = platform
        self.process_must_end = process_must_end
        super().__init__(f"{platform} device {device}: rc {rc} at {where}: {message}")

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only arguments need help to survive pickling (xdist sends errors across).
        return (
            _rebuild_device_error,
            (self.rc, self.where, self.message, self.device, self.platform, self.process_must_end),
        )


def _rebuild_device_error(
    rc: int, where: str, message: str, device: int, platform: str, process_must_end: bool = False
) -> DeviceRuntimeError:
    return DeviceRuntimeError(
        rc, where, message, device=device, platform=platform, process_must_end=process_must_end
    )


class GoldenMismatch(AssertionError):
    """A kernel ran but its output differs from the golden: a test failure, not a device fault."""
