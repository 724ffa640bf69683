"""SIMPLER_SIM_FAULTS parsing: every fault of docs/design.md, and every malformed spec named."""

from __future__ import annotations

import pytest

from simpler.runner.faults import FaultPlan, LaunchFault, parse_faults


def test_empty_spec_injects_nothing() -> None:
    assert parse_faults(None) == FaultPlan()
    assert parse_faults("  ") == FaultPlan()


def test_every_fault_kind_parses() -> None:
    plan = parse_faults(
        "force_reset_fail, drain_false_negative,init_fail,launch_fail@test_b,hang@TestX::test_y#2"
    )
    assert plan.flags == {"force_reset_fail", "drain_false_negative", "init_fail"}
    assert plan.launches == (
        LaunchFault("launch_fail", "test_b", None),
        LaunchFault("hang", "TestX::test_y", 2),
    )


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("explode", "unknown fault 'explode'"),
        ("hang", "needs a selector"),
        ("hang@", "needs a selector"),
        ("hang@x#0", "positive integer"),
        ("hang@x#-1", "positive integer"),
        ("hang@x#two", "positive integer"),
        ("hang@x#", "positive integer"),
        ("init_fail@x", "takes no selector"),
        ("init_fail,,hang@x", "empty fault"),
    ],
)
def test_malformed_spec_is_a_value_error_naming_the_problem(spec: str, names: str) -> None:
    with pytest.raises(ValueError, match=names) as caught:
        parse_faults(spec)
    assert "SIMPLER_SIM_FAULTS" in str(caught.value)
