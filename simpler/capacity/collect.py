"""Registrations for this project's own scene tests, read from their ``device_count`` markers.

The test files are parsed with ``ast``, never imported, so that ``simpler capacity`` starts
fast without a device: a test's count is the closest ``device_count(n)`` (function, class,
module), else 1, and ``est=`` its seconds. A path whose ``conftest.py`` sizes its tests with
the ``pytest_simpler_device_count`` hook is collected through pytest (``collect_pytest``).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from simpler.capacity.collect_pytest import collect_through_pytest, sized_by_hook
from simpler.capacity.model import InputError, Loaded, Registration

__all__ = [
    "DEFAULT_DEVICE_COUNT",
    "DEFAULT_EST_S",
    "SCENE_BACKEND",
    "UNKNOWN_COUNT_SUITE",
    "collect",
    "scene_suite",
]

SCENE_BACKEND = "sim"
DEFAULT_DEVICE_COUNT = 1
DEFAULT_EST_S = 1.0
# The suite of a test whose marker names its count in a way ast cannot evaluate: the
# name has no N-npu token, so the report lists it as unsized rather than guess.
UNKNOWN_COUNT_SUITE = "unknown-npu-scene"

_NORECURSE = frozenset({"__pycache__", "_darcs", "build", "CVS", "dist", "node_modules", "venv"})

_Scope = ast.Module | ast.ClassDef
_Marker = tuple[int | None, float | None]  # (device count, est seconds) as far as known


def scene_suite(device_count: int) -> str:
    return f"{device_count}-npu-scene"


def collect(paths: Sequence[str], *, lenient: bool) -> Loaded:
    """Registrations for every scene test under ``paths`` (files or directories).

    A path whose ``conftest.py`` answers device counts (``pytest_simpler_device_count``) is
    collected through pytest instead (``collect_pytest``): only pytest can ask that hook.
    """
    loaded = Loaded()
    for path in paths:
        files = _test_files(Path(path))
        if sized_by_hook(Path(path), walk_skip=_NORECURSE):
            loaded.extend(_collect_through_pytest(Path(path), lenient=lenient))
            continue
        for test_file in files:
            loaded.extend(_collect_file(test_file, lenient=lenient))
    return loaded


def _collect_through_pytest(path: Path, *, lenient: bool) -> Loaded:
    try:
        tests = collect_through_pytest(path)
    except InputError as error:
        if not lenient:
            raise
        return Loaded(warnings=[f"{error} (skipped)"])
    registrations = [
        Registration(
            filename=test.filename,
            backend=SCENE_BACKEND,
            suite=scene_suite(test.devices),
            est_time=DEFAULT_EST_S if test.est_s is None else test.est_s,
        )
        for test in tests
    ]
    return Loaded(registrations)


def _test_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(_walk_test_files(path))
    raise InputError(f"--collect: {path}: no such file or directory")


def _walk_test_files(root: Path) -> Iterator[Path]:
    """``test_*.py`` and ``*_test.py`` under ``root``, skipping what pytest skips by default."""
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = [name for name in subdirectories if not _skipped_directory(name)]
        for name in files:
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                yield Path(directory) / name


def _skipped_directory(name: str) -> bool:
    # pytest's default norecursedirs: hidden folders, virtual envs, build output.
    return name.startswith(".") or name.endswith(".egg") or name in _NORECURSE


def _collect_file(path: Path, *, lenient: bool) -> Loaded:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        problem = f"--collect: cannot parse {path}: {_reason(exc)}"
        if not lenient:
            raise InputError(problem) from None
        return Loaded(warnings=[f"{problem} (skipped)"])
    loaded = Loaded()
    for test in _tests(tree, module_marker=_closest_marker(_pytestmark_calls(tree))):
        loaded.extend(_registration(path, test))
    return loaded


@dataclass(frozen=True, slots=True)
class _SceneTest:
    qualname: str
    line: int
    marker: _Marker | None  # None: no device_count marker anywhere above the test


def _tests(
    scope: _Scope, *, module_marker: _Marker | None, prefix: str = ""
) -> Iterator[_SceneTest]:
    """The tests pytest would collect from ``scope``, each with its closest marker."""
    for node in scope.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            own = _closest_marker(_decorator_calls(node))
            yield _SceneTest(prefix + node.name, node.lineno, own or module_marker)
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            class_calls = [*_pytestmark_calls(node), *_decorator_calls(node)]
            class_marker = _closest_marker(class_calls) or module_marker
            yield from _tests(node, module_marker=class_marker, prefix=f"{prefix}{node.name}::")


def _is_test_class(node: ast.ClassDef) -> bool:
    # pytest does not collect a Test* class that defines __init__, and warns about it.
    defines_init = any(
        isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body
    )
    return node.name.startswith("Test") and not defines_init


def _decorator_calls(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[ast.Call]:
    # Decorators apply bottom-up and pytest's closest marker is the first applied one.
    return [decorator for decorator in reversed(node.decorator_list) if _is_device_count(decorator)]


def _pytestmark_calls(scope: _Scope) -> list[ast.Call]:
    """The device_count markers of a ``pytestmark = ...`` (one mark or a list) in ``scope``."""
    calls: list[ast.Call] = []
    for node in scope.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if not any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in targets
        ):
            continue
        marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
        calls.extend(mark for mark in marks if _is_device_count(mark))
    return calls


def _is_device_count(node: ast.expr) -> TypeGuard[ast.Call]:
    """``pytest.mark.device_count(...)`` or ``mark.device_count(...)``."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    function = node.func
    if function.attr != "device_count":
        return False
    owner = function.value
    return (isinstance(owner, ast.Attribute) and owner.attr == "mark") or (
        isinstance(owner, ast.Name) and owner.id == "mark"
    )


def _closest_marker(calls: Sequence[ast.expr]) -> _Marker | None:
    first = calls[0] if calls else None
    if not isinstance(first, ast.Call):
        return None
    count_node = first.args[0] if first.args else _keyword(first, "n")
    est_node = _keyword(first, "est")
    return _literal_count(count_node), _literal_seconds(est_node)


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)


def _literal_count(node: ast.expr | None) -> int | None:
    value = _literal(node)
    # bool is an int subclass, but device_count(True) is a mistake, not one device.
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def _literal_seconds(node: ast.expr | None) -> float | None:
    value = _literal(node)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _literal(node: ast.expr | None) -> object:
    if node is None:
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):  # a name or expression: only an import knows
        return None


def _registration(path: Path, test: _SceneTest) -> Loaded:
    count, est = test.marker if test.marker is not None else (DEFAULT_DEVICE_COUNT, None)
    warnings: list[str] = []
    if count is None:
        warnings.append(
            f"--collect: {path}:{test.line}: {test.qualname}: device_count(...) is not a "
            "literal integer >= 1; the test is reported as unsized"
        )
    registration = Registration(
        filename=str(path),
        backend=SCENE_BACKEND,
        suite=UNKNOWN_COUNT_SUITE if count is None else scene_suite(count),
        est_time=DEFAULT_EST_S if est is None else est,
    )
    return Loaded([registration], warnings)


def _reason(exc: OSError | SyntaxError | ValueError) -> str:
    if isinstance(exc, SyntaxError):
        return f"line {exc.lineno}: {exc.msg}"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)
