"""open_runner refuses what it cannot open with a ValueError or TypeError, never a crash."""

from __future__ import annotations

import pytest

from simpler.runner import open_runner


@pytest.mark.parametrize(
    ("platform", "device", "error", "names"),
    [
        ("a9sim", 0, ValueError, "unknown platform 'a9sim'"),
        ("", 0, ValueError, "unknown platform ''"),
        ("a5sim", -1, ValueError, "device id must be 0 or more"),
        ("a5sim", "0", TypeError, "device must be an int"),
        ("a5sim", True, TypeError, "device must be an int"),
        (None, 0, TypeError, "platform must be a str"),
    ],
)
def test_bad_platform_or_device(platform: object, device: object, error: type, names: str) -> None:
    with pytest.raises(error, match=names):
        open_runner(platform, device)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["0", "-5", "soon", "1.5"])
def test_bad_op_timeout_is_named(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("SIMPLER_OP_TIMEOUT_MS", value)
    with pytest.raises(ValueError, match="SIMPLER_OP_TIMEOUT_MS"):
        open_runner("a5sim", 0)


def test_a_closed_runner_refuses_calls_instead_of_crashing(fresh_device: int) -> None:
    r = open_runner("a5sim", fresh_device)
    r.init()
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.run("noop")
    assert "closed" in repr(r)


def test_running_before_init_is_a_device_error_not_a_crash(fresh_device: int) -> None:
    from simpler import DeviceRuntimeError

    r = open_runner("a2a3sim", fresh_device)
    with pytest.raises(DeviceRuntimeError, match="not initialized"):
        r.run("noop")
