"""The Python face of the C++ device runner.

C++ returns codes; this module raises them as ``DeviceRuntimeError``. The
native library loads on the first ``open_runner`` call, so importing this
module does not import cppyy.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simpler.contract import BUILTIN_PLATFORMS, SIM_PLATFORMS
from simpler.contract.settings import OP_TIMEOUT_MS_ENV, SIM_FAULTS_ENV, positive_int_env
from simpler.errors import DeviceRuntimeError
from simpler.runner import library
from simpler.runner.directions import InOut, Out
from simpler.runner.faults import FaultPlan, parse_faults

if TYPE_CHECKING:
    import numpy.typing as npt

    from simpler.runner.kernels import Launch

__all__ = [
    "SIM_PLATFORMS",
    "InOut",
    "KernelArgumentError",
    "Out",
    "Runner",
    "configure_faults",
    "launched_kernels",
    "note_launch",
    "op_timeout_ms",
    "open_runner",
    "set_test_context",
]

DEFAULT_OP_TIMEOUT_MS = 500
DEFAULT_DRAIN_TIMEOUT_MS = 2000
# runner.h SIMPLER_RC_INVALID_ARGUMENT: the runner refused a launch's arguments.
INVALID_ARGUMENT_RC = 107000
# runner.h SIMPLER_UNUSABLE_PROCESS_MUST_END: what unusable() says of a card only a new
# process can heal.
UNUSABLE_PROCESS_MUST_END = 2

_state_lock = threading.Lock()
_faults: FaultPlan | None = None  # None: not configured yet, read SIMPLER_SIM_FAULTS
_test: tuple[str, int] = ("", 1)
_pushed_in: int | None = None  # the process whose library got this state (a fork has its own)
# The kernels the running test launched, each with the sources its library says it was built
# from: the test's record carries them into the impact map.
_launched: dict[str, tuple[str, ...]] = {}
_sources_known: dict[tuple[str, str, str], tuple[str, ...]] = {}  # (library, platform, kernel)


def configure_faults(spec: str | None, source: str = "--simpler-sim-fault") -> FaultPlan:
    """Replace the injected faults (a ``SIMPLER_SIM_FAULTS``-style spec) for this process."""
    global _faults
    plan = parse_faults(spec, source)
    with _state_lock:
        _faults = plan
        for native_library in library.loaded():
            native_library.push_faults(plan)
    return plan


def set_test_context(nodeid: str, attempt: int = 1) -> None:
    """Tell the runner which test (and attempt) is running, for fault selectors."""
    global _test
    if attempt < 1:
        raise ValueError(f"attempt must be 1 or more, got {attempt}")
    with _state_lock:
        _test = (nodeid, attempt)
        _launched.clear()
        for native_library in library.loaded():
            native_library.push_test(nodeid, attempt)


def launched_kernels() -> dict[str, tuple[str, ...]]:
    """The kernels launched since the running test began (:func:`set_test_context`), by name,
    each with the source files it was built from (absolute; () when its library does not say)."""
    with _state_lock:
        return dict(_launched)


def note_launch(kernel: str, sources: Iterable[str | os.PathLike[str]] = ()) -> None:
    """Tell simpler that the running test launched ``kernel``, built from ``sources`` (paths,
    absolute or from the project's root). simpler's own runners say this themselves; a
    project's runner (``pytest_simpler_create_runner``) calls it from its own launch, so that
    a change to one kernel's source selects only the tests that launched it."""
    if not isinstance(kernel, str) or not kernel:
        raise TypeError(f"kernel must be a non-empty str, got {kernel!r}")
    named = tuple(str(Path(source).resolve()) for source in sources)
    with _state_lock:
        _launched[kernel] = tuple(dict.fromkeys([*_launched.get(kernel, ()), *named]))


def _note_launch(native_library: library.NativeLibrary, platform: str, kernel: str) -> None:
    key = (native_library.origin, platform, kernel)
    with _state_lock:
        if key not in _sources_known:
            _sources_known[key] = native_library.kernel_sources(platform, kernel)
        _launched[kernel] = _sources_known[key]


def op_timeout_ms() -> int:
    return positive_int_env(OP_TIMEOUT_MS_ENV, DEFAULT_OP_TIMEOUT_MS)


class KernelArgumentError(ValueError):
    """The runner refused a launch's arguments (runner.h SIMPLER_RC_INVALID_ARGUMENT).

    A usage error, not a device error: nothing reached the card, the runner stays usable.
    """

    def __init__(self, rc: int, where: str, message: str) -> None:
        self.rc = rc
        self.where = where
        super().__init__(f"rc {rc} at {where}: {message}")


def open_runner(platform: str, device: int, runtime: str = "default") -> Runner:
    """A runner on ``device`` of ``platform`` running ``runtime`` (call ``init()`` next)."""
    if not isinstance(platform, str):
        raise TypeError(f"platform must be a str, got {type(platform).__name__}")
    if not isinstance(runtime, str):
        raise TypeError(f"runtime must be a str, got {type(runtime).__name__}")
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be an int, got {type(device).__name__}")
    if device < 0:
        raise ValueError(f"device id must be 0 or more, got {device}")
    timeout = op_timeout_ms()
    native_library = _loaded_library(platform)
    if native_library.kind == library.SIM and platform not in SIM_PLATFORMS:
        raise ValueError(f"unknown platform {platform!r} (known: {', '.join(BUILTIN_PLATFORMS)})")
    native = native_library.create(platform, runtime, device, timeout)
    if not native:
        raise ValueError(
            f"platform {platform!r} (runtime {runtime!r}) is not implemented by "
            f"{native_library.origin}"
        )
    return Runner(platform, device, native, native_library)


def _loaded_library(platform: str) -> library.NativeLibrary:
    global _faults, _pushed_in
    with _state_lock:
        first_load = library.kind_for(platform) not in {n.kind for n in library.loaded()}
        if _faults is None:
            _faults = parse_faults(os.environ.get(SIM_FAULTS_ENV))
        native_library = library.load(platform)
        # A process forked from a warm one finds the library loaded, but not told its faults.
        if first_load or _pushed_in != os.getpid():
            native_library.push_faults(_faults)
            native_library.push_test(*_test)
            _pushed_in = os.getpid()
    return native_library


class Runner:
    """One device context on one card; every failed call raises ``DeviceRuntimeError``."""

    def __init__(
        self, platform: str, device: int, native: Any, native_library: library.NativeLibrary
    ) -> None:
        self.platform = platform
        self.device = device
        self._open_native = native
        self._library = native_library
        self._release = weakref.finalize(self, native_library.destroy, native)

    @property
    def _native(self) -> Any:
        # A freed native runner must never be called: that would crash the interpreter.
        if not self._release.alive:
            raise ValueError(f"runner for {self.platform} device {self.device} is closed")
        return self._open_native

    def __repr__(self) -> str:
        state = "closed" if not self._release.alive else "unusable" if self.unusable else "usable"
        return f"<Runner {self.platform} device {self.device} {state}>"

    def init(self) -> None:
        self._check(self._native.init())

    def run(self, kernel: str, *args: object) -> npt.NDArray[Any] | tuple[Any, ...] | None:
        """Launch ``kernel``; returns its output array(s), or None when it writes none.

        Arrays are inputs unless marked ``Out(array)``/``InOut(array)``; ints, floats,
        bools and numpy scalars are scalars. The simulated card's kernels allocate their
        output: ``run("vector_add", a, b)`` returns ``a + b``.
        """
        # numpy loads with the first launch
        from simpler.runner.kernels import known_kernels, prepare_launch

        launch = prepare_launch(kernel, args, known=known_kernels(self._library.kind))
        native = self._native
        _note_launch(self._library, self.platform, launch.kernel)
        rc = native.run(launch.kernel, *self._c_arrays(launch))
        if rc == INVALID_ARGUMENT_RC and not native.unusable():
            raise KernelArgumentError(int(rc), str(native.last_where()), str(native.last_message()))
        self._check(rc)
        return launch.result()

    def _c_arrays(self, launch: Launch) -> tuple[Any, int, Any, int]:
        packed, library_ = launch.packed, self._library
        tensors, scalars = packed.tensors, packed.scalars
        # A null pointer for an empty list: the runner must not read it anyway.
        t = library_.tensor_pointer(packed.address(tensors)) if len(tensors) else library_.nullptr
        s = library_.scalar_pointer(packed.address(scalars)) if len(scalars) else library_.nullptr
        return t, len(tensors), s, len(scalars)

    def drain(self, timeout_ms: int = DEFAULT_DRAIN_TIMEOUT_MS) -> None:
        if timeout_ms < 0:
            raise ValueError(f"drain timeout must be 0 or more ms, got {timeout_ms}")
        self._check(self._native.drain(timeout_ms))

    def soft_reset(self) -> None:
        self._check(self._native.soft_reset())

    def force_reset(self) -> None:
        self._check(self._native.force_reset())

    def probe(self) -> bool:
        return bool(self._native.probe())

    def finalize(self) -> int:
        """0 only when the card is confirmed clean; the rc otherwise (never raises)."""
        return int(self._native.finalize())

    @property
    def unusable(self) -> bool:
        return bool(self._native.unusable())

    @property
    def origin(self) -> str:
        """Where the native library came from: "cached-library", "built-library", "jit", or
        the path of a user's runner library."""
        return self._library.origin

    @property
    def process_must_end(self) -> bool:
        """The card holds work nothing in this process can stop: only a new process heals it."""
        return int(self._native.unusable()) == UNUSABLE_PROCESS_MUST_END

    @property
    def last_where(self) -> str:
        return str(self._native.last_where())

    def close(self) -> None:
        """Free the native runner (the card's state is the card's, not the runner's)."""
        self._release()

    def _check(self, rc: int) -> None:
        if rc != 0:
            native = self._native
            raise DeviceRuntimeError(
                int(rc),
                str(native.last_where()),
                str(native.last_message()),
                device=self.device,
                platform=self.platform,
                process_must_end=int(native.unusable()) == UNUSABLE_PROCESS_MUST_END,
            )
