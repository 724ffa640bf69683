"""The benchmark's Resource suite: 16 one-device no-op tests, each a child of its own."""

import pytest

from simpler.runner import open_runner


@pytest.mark.parametrize("index", range(16))
@pytest.mark.device_count(1, est=1.0)
def test_noop_on_one_device(index, simpler_platform, devices):
    runner = open_runner(simpler_platform, devices[0])
    runner.init()
    runner.run("noop")
    assert runner.finalize() == 0
