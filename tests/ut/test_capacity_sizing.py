"""A suite's device count comes from N-KIND tokens bounded by dashes or the ends of its name."""

from __future__ import annotations

import pytest

from simpler.capacity.sizing import count_tokens, device_count, unsized_reason


@pytest.mark.parametrize(
    ("suite", "count"),
    [
        ("16-npu", 16),
        ("1-hcu", 1),
        ("x-2-gpu-y", 2),
        ("stage-b-test-large-8-gpu", 8),
        ("4-xpu-smoke", 4),
        ("perf-2-dcu", 2),
        ("nightly-8-gpu-h200", 8),
        ("8-GPU", 8),  # a capitalised kind is still a kind
    ],
)
def test_a_bounded_token_gives_the_count(suite: str, count: int) -> None:
    assert device_count(suite) == count


@pytest.mark.parametrize(
    "suite",
    [
        "stress",
        "mm-gen-*",
        "mm-gen-vlm",
        "-tp4",  # tensor parallelism is not a device count
        "qwen3-235b",  # nor is a parameter count
        "4-node",  # nodes are not a device kind
        "nightly-pd-sep-4-node",
        "2-gpus",  # the kind must end at a dash or the end of the name
        "x2-gpu",  # the count must start at a dash or the start of the name
        "llm_8-gpu",  # an underscore is no boundary
        "8-tpu",  # not one of gpu, npu, hcu, xpu, dcu
    ],
)
def test_a_name_without_a_bounded_token_is_unsized(suite: str) -> None:
    assert device_count(suite) is None
    assert unsized_reason(suite) == "no N-gpu/npu/hcu/xpu/dcu token"


def test_an_empty_suite_is_unsized_for_want_of_a_name() -> None:
    assert device_count("") is None
    assert unsized_reason("") == "no suite given"


def test_two_agreeing_tokens_give_their_count() -> None:
    assert count_tokens("2-gpu-ep-2-gpu") == [2, 2]
    assert device_count("2-gpu-ep-2-gpu") == 2
    assert device_count("8-gpu-8-npu") == 8  # kinds may differ; the count is what matters


def test_two_disagreeing_tokens_leave_the_suite_unsized() -> None:
    assert count_tokens("2-gpu-4-gpu") == [2, 4]
    assert device_count("2-gpu-4-gpu") is None
    assert unsized_reason("2-gpu-4-gpu") == "tokens disagree: 2, 4"


def test_adjacent_tokens_share_their_dash() -> None:
    # "1-gpu-2-gpu": the dash after the first kind is the second count's left boundary.
    assert count_tokens("1-gpu-2-gpu") == [1, 2]
