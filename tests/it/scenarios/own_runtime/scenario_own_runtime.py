"""A fault in the first class, then three classes on the same pooled worker of ``myhw``."""

import pytest

pytestmark = pytest.mark.runtime("own")


class TestTrigger:
    def test_launch(self, worker):
        worker.run("fault_once")


class TestVictim1:
    def test_run(self, worker):
        assert worker.run("add", 1) == ("add", 1)


class TestVictim2:
    def test_run(self, worker):
        assert worker.runner.card["sticky"] is False
        assert worker.run("noop") == ("noop",)


class TestVictim3:
    def test_run(self, worker):
        assert worker.run("add", 2) == ("add", 2)
