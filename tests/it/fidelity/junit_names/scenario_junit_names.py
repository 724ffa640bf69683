"""Tests whose JUnit names pytest makes in every way: module level, classes, nesting, params."""

import pytest


def test_module_level():
    pass


def test_fails():
    assert 1 == 2


@pytest.fixture
def broken():
    raise RuntimeError("setup boom")


def test_setup_error(broken):
    pass


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfailed():
    raise AssertionError("still broken")


@pytest.mark.parametrize("value", [1, "a::b", "x.y/z", "[1]"])
def test_params(value):
    pass


class TestOuter:
    def test_method(self):
        pass

    @pytest.mark.parametrize("n", [0, 1], ids=["zero", "one"])
    def test_param_method(self, n):
        assert n == 0

    class TestInner:
        def test_nested(self):
            pass


@pytest.mark.device_count(1, est=1.0)
def test_on_a_device():
    pass


class TestOnDevices:
    @pytest.mark.device_count(1, est=1.0)
    def test_in_a_class(self):
        pass
