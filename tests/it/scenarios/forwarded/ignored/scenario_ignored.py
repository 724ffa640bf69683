"""Under the directory that ``--ignore`` names: nothing here may run."""

import pytest


def test_pooled_must_not_run(worker):
    raise AssertionError("--ignore was not honoured")


@pytest.mark.device_count(1)
def test_resource_must_not_run(devices):
    raise AssertionError("--ignore was not honoured")
