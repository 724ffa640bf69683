"""``InitCloseRunner``: a runner for simpler's lifecycle over a worker that has only ``init()``
and ``close()``.

From what such a worker can tell it gives the rest of the lifecycle's runner (``probe()``
"not known bad", ``force_reset()`` a reopen, ``unusable`` after a device error seen through
it, ``finalize()`` that error's rc, ``close()`` at most once) and forwards every other
attribute to the worker (docs/writing_tests.md, "Plugging in your runtime").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from simpler.errors import DeviceRuntimeError

__all__ = ["InitCloseRunner"]

# finalize()'s rc for a device error that came without one of its own.
UNKNOWN_RC = -1

Translate = Callable[[BaseException | None], BaseException | None]


class InitCloseRunner:
    """The lifecycle's runner over a worker with only ``init()`` and ``close()``.

    Subclass it and override ``open_worker`` (and ``close_worker`` when closing is not
    ``worker.close()``), or pass ``open_worker=`` a function that returns the worker
    initialized; ``worker.run(...)`` in a test then reaches the worker's ``run`` through this
    runner (an example: docs/writing_tests.md, "Plugging in your runtime").
    """

    def __init__(self, open_worker: Callable[[], Any] | None = None) -> None:
        self._open = open_worker
        self._translate: Translate = _as_is
        self.worker: Any = None  # the open worker; None before init() and after close()
        self.unusable = False
        self._rc = 0  # the rc of the device error that made it unusable

    # The project's part.

    def open_worker(self) -> Any:
        """A new worker, initialized (its ``init()`` called). Override, or pass ``open_worker=``."""
        if self._open is None:
            raise NotImplementedError(
                f"{type(self).__name__}: override open_worker() or pass open_worker="
            )
        return self._open()

    def close_worker(self, worker: Any) -> None:
        """Close one worker; called at most once per worker."""
        worker.close()

    # What the lifecycle calls.

    def init(self) -> None:
        if self.worker is None:
            self.worker = self.device_call(self.open_worker)

    def probe(self) -> bool:
        """Not known bad: a worker is open and no device error was seen through it."""
        return self.worker is not None and not self.unusable

    def force_reset(self) -> None:
        """Close the worker and open a new one in place."""
        self.close()
        self.worker = self.device_call(self.open_worker)
        self.unusable, self._rc = False, 0

    def finalize(self) -> int:
        """0 when no device error is known; the rc of the one seen otherwise (never raises)."""
        return self._rc if self.unusable else 0

    def close(self) -> None:
        """Close the open worker; a second call (or one after a failed reopen) does nothing."""
        worker, self.worker = self.worker, None  # let go first: a close that raises is done
        if worker is not None:
            self.close_worker(worker)

    # Device errors.

    def use_translator(self, translate: Translate) -> None:
        """How the project's exceptions become device errors: the plugin passes its
        ``pytest_simpler_device_error`` hook."""
        self._translate = translate

    def device_call(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``call(*args, **kwargs)``; a device error it raises marks this runner unusable.

        A subclass that defines its own methods over the worker calls through this, e.g.
        ``return self.device_call(self.worker.run, kernel, *tensors)``.
        """
        try:
            return call(*args, **kwargs)
        except Exception as error:
            self._saw(error)
            raise

    def _saw(self, error: Exception) -> None:
        seen = error if isinstance(error, DeviceRuntimeError) else self._translate(error)
        if isinstance(seen, DeviceRuntimeError):
            self.unusable = True
            self._rc = seen.rc or UNKNOWN_RC

    def __getattr__(self, name: str) -> Any:
        """The worker's own API (``run``, ``register``, ...), its calls watched for device
        errors. Only names this class does not define reach here."""
        worker = self.__dict__.get("worker")
        if name.startswith("__") or worker is None:
            raise AttributeError(f"{type(self).__name__} has no {name!r} (no worker is open)")
        value = getattr(worker, name)
        if not callable(value):
            return value
        return functools.partial(self.device_call, value)

    def __repr__(self) -> str:
        state = "closed" if self.worker is None else "unusable" if self.unusable else "open"
        return f"<{type(self).__name__} {state}>"


def _as_is(error: BaseException | None) -> BaseException | None:
    return error
