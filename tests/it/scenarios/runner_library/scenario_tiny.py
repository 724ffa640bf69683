"""A suite driving tiny_runner.cpp through the worker fixture: dtypes, a usage error, a fault."""

import numpy as np
import pytest

from simpler.runner import InOut, KernelArgumentError, Out

pytestmark = pytest.mark.runtime("tinyrt")


class TestDtypes:
    def test_iota_fills_an_int32_out(self, worker):
        out = worker.run("iota", Out(np.zeros(5, np.int32)), 3)
        assert out.dtype == np.int32 and out.tolist() == [3, 4, 5, 6, 7]

    def test_axpy_updates_a_float64_inout(self, worker):
        y = np.ones(4)
        assert worker.run("axpy", np.arange(4.0), InOut(y), 0.5) is y
        assert y.tolist() == [1.0, 1.5, 2.0, 2.5]

    def test_a_wrong_signature_is_a_usage_error(self, worker):
        with pytest.raises(KernelArgumentError, match="iota takes one int32 OUT tensor"):
            worker.run("iota", Out(np.zeros(2, np.int64)), 0)
        assert worker.runner.probe() and not worker.runner.unusable


class TestTrigger:
    def test_fault(self, worker):
        worker.run("fault")


class TestAfterHeal:
    def test_iota(self, worker):
        assert worker.run("iota", Out(np.empty(3, np.int32)), -1).tolist() == [-1, 0, 1]

    def test_axpy(self, worker):
        y = np.zeros(2)
        worker.run("axpy", np.full(2, 2.0), InOut(y), 1.5)
        assert y.tolist() == [3.0, 3.0]
