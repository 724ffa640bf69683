"""pytest's edge outcomes, for the verdict fidelity tests: simpler must call each one as pytest."""

import unittest

import pytest


def test_pass():
    pass


def test_fail():
    assert 1 == 2


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup boom")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown boom")


def test_setup_error(broken_setup):
    pass


def test_teardown_error(broken_teardown):
    pass


def test_fail_and_teardown_error(broken_teardown):
    raise AssertionError("call boom")


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    raise AssertionError("still broken")


@pytest.mark.xfail(reason="maybe fixed")
def test_xpass():
    pass


@pytest.mark.xfail(reason="must fail", strict=True)
def test_xpass_strict():
    pass


def test_imperative_xfail():
    pytest.xfail("not today")


@pytest.mark.skip(reason="not here")
def test_skip():
    pass


def test_imperative_skip():
    pytest.skip("skipped inside")


class TestUnit(unittest.TestCase):
    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        pass

    def test_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_subtests_pass(self):
        for i in range(2):
            with self.subTest(i=i):
                self.assertTrue(True)
