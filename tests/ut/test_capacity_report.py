"""The numbers and their views: per device count and backend, markdown and JSON."""

from __future__ import annotations

import json
from typing import Any

from simpler.capacity.aggregate import BACKEND_DISPLAY_ORDER, aggregate, backend_order
from simpler.capacity.model import Registration
from simpler.capacity.render import escape_cell, format_seconds, render_markdown
from simpler.capacity.render_json import render_json


def reg(
    suite: str,
    backend: str = "cuda",
    est_time: float = 10.0,
    *,
    nightly: bool = False,
    disabled: str | None = None,
    filename: str = "test_x.py",
) -> Registration:
    return Registration(filename, backend, suite, est_time, nightly=nightly, disabled=disabled)


def as_json(registrations: list[Registration]) -> dict[str, Any]:
    decoded: dict[str, Any] = json.loads(render_json(aggregate(registrations)))
    return decoded


def table_rows(markdown: str, heading: str) -> list[list[str]]:
    """The body rows of the first table after ``heading``, split into stripped cells."""
    after = markdown.split(heading, 1)[1].splitlines()
    start = next(index for index, line in enumerate(after) if line.startswith("|"))
    rows = []
    for line in after[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return rows


# The keys every size group had before the per-commit/nightly split, meaning what they meant.
KEPT_KEYS = ("enabled", "disabled", "est_time_s", "backends", "suites")

MIXED = [
    reg("stage-a-1-gpu", "cuda", 30),
    reg("stage-a-1-gpu", "rocm", 40),
    reg("stage-b-2-gpu", "cuda", 120),
    reg("16-npu", "npu", 600, nightly=True),
    reg("1-hcu", "hcu", 5, disabled="flaky on hcu"),
    reg("stress", "cuda", 50),
    reg("mm-gen-*", "xpu", 1),
]


def test_registrations_are_grouped_by_the_device_count_of_their_suite() -> None:
    summary = as_json(MIXED)["device_count_summary"]
    assert list(summary) == ["1", "2", "16", "unsized"]
    assert {key: summary["1"][key] for key in KEPT_KEYS} == {
        "enabled": 2,
        "disabled": 1,
        "est_time_s": 70.0,  # the disabled registration's time is not counted
        "backends": {"cuda": 1, "rocm": 1},
        "suites": ["1-hcu", "stage-a-1-gpu"],
    }
    assert summary["unsized"]["suites"] == ["mm-gen-*", "stress"]
    assert summary["unsized"]["backends"] == {"cuda": 1, "xpu": 1}


def test_totals_cover_every_group() -> None:
    totals = as_json(MIXED)["totals"]
    assert (totals["enabled"], totals["disabled"], totals["est_time_s"]) == (6, 1, 841.0)
    assert list(totals["backends"]) == ["cuda", "rocm", "npu", "xpu"]


def test_an_empty_registry_reports_zeroes_and_says_there_is_nothing() -> None:
    empty = {"enabled": 0, "disabled": 0, "est_time_s": 0.0, "backends": {}, "suites": []}
    nothing = {"enabled": 0, "est_time_s": 0.0, "device_hours": 0.0}
    document = as_json([])
    assert list(document["device_count_summary"]) == ["unsized"]
    for tally in (document["device_count_summary"]["unsized"], document["totals"]):
        assert {key: tally[key] for key in KEPT_KEYS} == empty
        assert tally["by_backend"] == {}
    assert document["totals"]["per_commit"] == document["totals"]["nightly"] == nothing
    assert "_No registrations._" in render_markdown(aggregate([]), "all")


def test_ten_thousand_registrations_add_up() -> None:
    sizes = ["1-gpu", "2-gpu", "4-npu", "8-gpu", "stress"]
    registrations = [
        reg(
            f"suite{index % 250}-{sizes[index % 5]}",
            backend=("cuda", "npu")[index % 2],
            est_time=1.5,
            disabled="off" if index % 10 == 0 else None,
        )
        for index in range(10_000)
    ]
    document = as_json(registrations)
    summary, totals = document["device_count_summary"], document["totals"]
    assert list(summary) == ["1", "2", "4", "8", "unsized"]
    assert all(group["enabled"] + group["disabled"] == 2000 for group in summary.values())
    assert (totals["enabled"], totals["disabled"]) == (9000, 1000)
    assert totals["est_time_s"] == 9000 * 1.5
    # Every tenth registration is disabled: an even index, so cuda's, and a 1-gpu suite.
    assert totals["backends"] == {"cuda": 4000, "npu": 5000}
    assert (summary["1"]["enabled"], summary["1"]["disabled"]) == (1000, 1000)
    assert (summary["unsized"]["enabled"], summary["unsized"]["disabled"]) == (2000, 0)
    assert len(totals["suites"]) == 250


def test_the_summary_table_has_sizes_ascending_then_unsized_and_backends_in_display_order() -> None:
    markdown = render_markdown(aggregate(MIXED), "summary")
    header = next(line for line in markdown.splitlines() if line.startswith("| Devices"))
    assert header == "| Devices | cuda | rocm | npu | xpu | Total | Disabled |"
    assert table_rows(markdown, "## Device Count Summary") == [
        ["1", "1", "1", "0", "0", "2", "1"],
        ["2", "1", "0", "0", "0", "1", "0"],
        ["16", "0", "0", "1", "0", "1", "0"],
        ["Unsized", "1", "0", "0", "1", "2", "0"],
        ["**Total**", "3", "1", "1", "1", "6", "1"],
    ]


def test_unknown_backends_follow_the_known_ones_alphabetically() -> None:
    names = ["zeta", "sim", "alpha", "NPU", "cuda", "dcu"]
    assert sorted(names, key=backend_order) == ["cuda", "NPU", "dcu", "sim", "alpha", "zeta"]
    assert BACKEND_DISPLAY_ORDER[:4] == ("cuda", "amd", "npu", "cpu")


def test_amd_and_rocm_share_the_second_slot_whatever_the_registry_calls_it() -> None:
    names = ["xpu", "rocm", "AMD", "mlx", "cpu", "npu", "cuda", "musa"]
    assert sorted(names, key=backend_order) == [
        "cuda",
        "AMD",
        "rocm",
        "npu",
        "cpu",
        "xpu",
        "musa",
        "mlx",
    ]


def test_the_summary_lists_every_unsized_suite_and_why() -> None:
    registrations = [reg("stress"), reg("2-gpu-4-gpu"), reg("nightly-pd-sep-4-node")]
    markdown = render_markdown(aggregate(registrations), "summary")
    assert table_rows(markdown, "### Unsized suites (3)") == [
        ["2-gpu-4-gpu", "cuda", "1", "0", "tokens disagree: 2, 4"],
        ["nightly-pd-sep-4-node", "cuda", "1", "0", "no N-gpu/npu/hcu/xpu/dcu token"],
        ["stress", "cuda", "1", "0", "no N-gpu/npu/hcu/xpu/dcu token"],
    ]


def test_the_drill_down_has_a_details_block_per_size_and_a_table_per_backend() -> None:
    markdown = render_markdown(aggregate(MIXED), "by-device-count")
    assert markdown.count("<details>") == markdown.count("</details>") == 4
    assert "<summary><b>1 device</b>: 2 enabled, 1 disabled, est. 1m 10s</summary>" in markdown
    assert "<summary><b>16 devices</b>" in markdown
    one_device = markdown.split("<summary><b>1 device</b>", 1)[1].split("</details>", 1)[0]
    assert one_device.index("**cuda**") < one_device.index("**rocm**") < one_device.index("**hcu**")
    assert table_rows(one_device, "**hcu**") == [["1-hcu", "0", "1", "0.0s", "Per-Commit"]]
    assert table_rows(markdown, "**npu**") == [["16-npu", "1", "0", "10m 00s", "Nightly"]]


def test_a_suite_is_nightly_by_an_enabled_registration_or_by_its_name() -> None:
    registrations = [
        reg("a-1-gpu", nightly=True),
        reg("a-1-gpu"),  # one enabled nightly registration makes the suite nightly
        reg("b-1-gpu", nightly=True, disabled="off"),  # a disabled one does not
        reg("b-1-gpu"),
        reg("nightly-c-1-gpu"),
        reg("weekly-d-1-gpu"),
    ]
    by_suite = {row["suite"]: row["type"] for row in as_json(registrations)["by_suite"]}
    assert by_suite == {
        "a-1-gpu": "Nightly",
        "b-1-gpu": "Per-Commit",
        "nightly-c-1-gpu": "Nightly",
        "weekly-d-1-gpu": "Nightly",
    }


def test_the_by_suite_table_lists_each_suite_per_backend_with_its_size() -> None:
    markdown = render_markdown(aggregate(MIXED), "by-suite")
    rows = table_rows(markdown, "## By Suite")
    # By device count (unsized last), then name, then backend in display order.
    assert [row[:3] for row in rows] == [
        ["1-hcu", "hcu", "1"],
        ["stage-a-1-gpu", "cuda", "1"],
        ["stage-a-1-gpu", "rocm", "1"],
        ["stage-b-2-gpu", "cuda", "2"],
        ["16-npu", "npu", "16"],
        ["mm-gen-*", "xpu", "Unsized"],
        ["stress", "cuda", "Unsized"],
    ]
    # Hundreds of rows in a real registry: the table is folded away.
    folded = markdown.split("## By Suite", 1)[1]
    assert folded.lstrip().startswith("<details>\n<summary>7 suites per backend")
    assert folded.rstrip().endswith("</details>")


def test_section_all_is_every_section_in_order() -> None:
    markdown = render_markdown(aggregate(MIXED), "all")
    headings = [line for line in markdown.splitlines() if line.startswith("## ")]
    assert headings == ["## Device Count Summary", "## By Device Count", "## By Suite"]


def test_pipes_newlines_and_html_cannot_break_a_cell() -> None:
    assert escape_cell("a|b") == "a\\|b"
    assert escape_cell("two\nlines\r\nhere") == "two<br>lines<br>here"
    assert escape_cell("back\\|slash") == "back\\\\\\|slash"
    assert escape_cell("</details>") == "&lt;/details&gt;"


def test_a_suite_with_a_pipe_stays_in_its_column() -> None:
    markdown = render_markdown(aggregate([reg("a|b-1-gpu", disabled="x\ny")]), "by-suite")
    row = next(line for line in markdown.splitlines() if line.startswith("| a"))
    assert row == "| a\\|b-1-gpu | cuda | 1 | 0 | 1 | 0.0s | Per-Commit |"


def test_durations_read_like_durations() -> None:
    assert [format_seconds(s) for s in (0, 4.25, 45, 750, 3600, 11_100)] == [
        "0.0s",
        "4.2s",
        "45s",
        "12m 30s",
        "1h 00m",
        "3h 05m",
    ]
