"""The test quarantine file: what loads, what is refused (naming file and line), which node
ids an entry covers, and the edits ``simpler history quarantine --write`` makes."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from simpler.reporting.quarantine_file import (
    NEW_FILE_HEADER,
    QuarantineEntry,
    QuarantineFileError,
    add_entries,
    load_quarantine,
    parse_quarantine,
    remove_entries,
)
from simpler.reporting.records import TestRecord

TODAY = date(2026, 3, 1)
SOON = TODAY + timedelta(days=30)


def entry_text(nodeid: str, expires: date = SOON, extra: str = 'owner = "alice"\n') -> str:
    return f'[[quarantine]]\nnodeid = "{nodeid}"\nreason = "flaky"\n{extra}expires = {expires}\n'


def parse(text: str) -> list[QuarantineEntry]:
    return list(parse_quarantine(text, Path("q.toml"), today=TODAY).entries)


def record_of(nodeid: str) -> TestRecord:
    return TestRecord.build(run="run-1", phase="l2", nodeid=nodeid, outcome="failed")


def refusal(text: str) -> str:
    with pytest.raises(QuarantineFileError) as caught:
        parse_quarantine(text, Path("q.toml"), today=TODAY)
    message = str(caught.value)
    assert "\n" not in message  # one line, for `error: ...` and exit 2
    return message


# --- loading -------------------------------------------------------------------------------


def test_entries_load_with_the_line_of_their_header() -> None:
    text = "# a comment\n\n" + entry_text("tests/a.py::test_x") + "\n" + entry_text("tests/b.py")
    first, second = parse(text)
    assert (first.nodeid, first.line, first.owner, first.expires) == (
        "tests/a.py::test_x",
        3,
        "alice",
        SOON,
    )
    assert (second.nodeid, second.line) == ("tests/b.py", 9)
    assert not first.expired and first.platforms is None


def test_a_toml_syntax_error_names_the_file_and_its_line() -> None:
    text = entry_text("tests/a.py::test_x") + 'reason = "a\n'  # an unclosed string on line 6
    assert refusal(text).startswith("quarantine file q.toml:6:")


def test_a_syntax_error_at_the_end_names_the_last_line() -> None:
    assert refusal("# one\nnodeid =").startswith("quarantine file q.toml:2:")


@pytest.mark.parametrize("key", ["nodeid", "reason", "expires"])
def test_a_missing_required_key_is_named_with_the_entry_line(key: str) -> None:
    lines = entry_text("tests/a.py::test_x").splitlines(keepends=True)
    text = "# header\n" + "".join(line for line in lines if not line.startswith(key))
    assert refusal(text) == f"quarantine file q.toml:2: missing required key {key!r}"


def test_an_entry_needs_an_owner_or_an_issue() -> None:
    message = refusal(entry_text("tests/a.py::test_x", extra=""))
    assert message == "quarantine file q.toml:1: tests/a.py::test_x needs an 'owner' or an 'issue'"
    assert parse(entry_text("t.py::a", extra='issue = "https://x/1"\n'))[0].issue == "https://x/1"


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ('expires = "2026-03-10"', "'expires' must be a TOML date"),
        ("expires = 2026-03-10T00:00:00", "'expires' must be a TOML date"),
        ("reason = 3", "'reason' must be a non-empty string"),
        ('reason = ""', "'reason' must be a non-empty string"),
        ('platforms = "a5sim"', "'platforms' must be a list"),
        ("platforms = []", "'platforms' must be a list"),
        ('platform = ["a5sim"]', "unknown key 'platform'"),  # a typo would quarantine everywhere
    ],
)
def test_a_wrong_type_or_unknown_key_is_named(line: str, named: str) -> None:
    key = line.split(" ")[0]
    base = [ln for ln in entry_text("t.py::a").splitlines() if not ln.startswith(key)]
    text = "\n".join([*base, line]) + "\n"
    message = refusal(text)
    assert message.startswith("quarantine file q.toml:1: ") and named in message


def test_an_expiry_beyond_90_days_is_refused_and_named() -> None:
    far = TODAY + timedelta(days=91)
    message = refusal(entry_text("tests/a.py::test_x") + "\n" + entry_text("t.py::late", far))
    assert message.startswith("quarantine file q.toml:7: t.py::late expires 2026-05-31")
    assert "more than 90 days ahead (at most 2026-05-30)" in message
    assert parse(entry_text("t.py::edge", TODAY + timedelta(days=90)))  # 90 exactly loads


def test_an_expired_entry_loads_flagged_and_is_named_as_a_problem() -> None:
    loaded = parse_quarantine(
        entry_text("t.py::old", TODAY - timedelta(days=1)) + entry_text("t.py::today", TODAY),
        Path("q.toml"),
        today=TODAY,
    )
    old, last_day = loaded.entries
    assert old.expired and not last_day.expired  # active through its expires day
    assert loaded.problems == (
        "q.toml:1: quarantine of t.py::old expired on 2026-02-28: it gates again",
    )
    assert loaded.match("t.py::old", "a5sim") is None
    assert loaded.expired_match("t.py::old", "a5sim") is old
    old_record = loaded.mark(record_of("t.py::old"), "a5sim")
    assert (old_record.quarantined, old_record.quarantine_expired) == (False, "2026-02-28")
    today_record = loaded.mark(record_of("t.py::today"), "a5sim")
    assert (today_record.quarantined, today_record.quarantine_expired) == (True, None)


def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(QuarantineFileError, match=r"cannot read quarantine file .*missing"):
        load_quarantine(tmp_path / "missing.toml")


# --- matching ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "nodeid", "covered"),
    [
        ("tests/a.py::TestX::test_y", "tests/a.py::TestX::test_y", True),
        ("tests/a.py::TestX", "tests/a.py::TestX::test_y", True),
        ("tests/a.py::TestX", "tests/a.py::TestXY::test_y", False),
        ("tests/a.py::TestX::test_y", "tests/a.py::TestX::test_y_big", False),
        ("tests/a.py::test_p", "tests/a.py::test_p[1-a::b]", True),
        ("tests/a.py::test_p[1]", "tests/a.py::test_p[10]", False),
        ("tests/a.py", "tests/a.py::TestX::test_y", True),
        ("tests/a.py", "tests/a.pyx::test_y", False),
        ("tests/st", "tests/st/test_a.py::test_y", True),
        ("tests/st", "tests/stx/test_a.py::test_y", False),
    ],
)
def test_an_entry_covers_its_node_id_and_what_pytest_selects_under_it(
    prefix: str, nodeid: str, covered: bool
) -> None:
    (entry,) = parse(entry_text(prefix))
    assert entry.covers(nodeid) is covered


def test_platforms_limit_where_an_entry_quarantines() -> None:
    loaded = parse_quarantine(
        entry_text("t.py::a", extra='owner = "o"\nplatforms = ["a2a3sim"]\n'),
        Path("q.toml"),
        today=TODAY,
    )
    assert loaded.match("t.py::a", "a2a3sim") is not None
    assert loaded.match("t.py::a", "a5sim") is None
    unmarked = record_of("t.py::a")
    assert loaded.mark(unmarked, "a5sim") is unmarked


def test_the_closest_entry_wins() -> None:
    loaded = parse_quarantine(
        entry_text("t.py") + entry_text("t.py::TestX", extra='issue = "I-2"\n'),
        Path("q.toml"),
        today=TODAY,
    )
    found = loaded.match("t.py::TestX::test_y", None)
    assert found is not None and found.issue == "I-2"


def test_entries_that_cover_no_collected_test_are_found() -> None:
    loaded = parse_quarantine(
        entry_text("t.py::TestX") + entry_text("t.py::gone"), Path("q.toml"), today=TODAY
    )
    assert [e.nodeid for e in loaded.unmatched(["t.py::TestX::test_a", "t.py::other"])] == [
        "t.py::gone"
    ]


# --- editing -------------------------------------------------------------------------------

ODD_ID = 'tests/a.py::test_p[say "hi" \\ [x] ]'


def new_entry(nodeid: str, **fields: object) -> QuarantineEntry:
    values: dict[str, object] = {"reason": "flaky\ton a2a3", "expires": SOON, "owner": "bob"}
    values.update(fields)
    return QuarantineEntry(nodeid, **values)  # type: ignore[arg-type]


def test_add_creates_the_file_with_a_header_and_escapes_values(tmp_path: Path) -> None:
    target = tmp_path / "simpler-quarantine.toml"
    added = add_entries(target, [new_entry(ODD_ID, platforms=("a5sim",))], today=TODAY)
    assert [e.nodeid for e in added] == [ODD_ID]
    text = target.read_text()
    assert text.startswith(NEW_FILE_HEADER)
    (read,) = load_quarantine(target, today=TODAY).entries
    assert (read.nodeid, read.reason, read.owner, read.platforms, read.expires) == (
        ODD_ID,
        "flaky\ton a2a3",
        "bob",
        ("a5sim",),
        SOON,
    )


def test_add_keeps_every_existing_byte_and_skips_node_ids_already_there(tmp_path: Path) -> None:
    target = tmp_path / "q.toml"
    before = "# ours\r\n" + entry_text("t.py::a").replace("\n", "  # why\n", 1) + "# tail"
    target.write_bytes(before.encode())
    added = add_entries(target, [new_entry("t.py::a"), new_entry("t.py::b")], today=TODAY)
    after = target.read_bytes().decode()
    assert [e.nodeid for e in added] == ["t.py::b"]
    assert after.startswith(before + "\n")  # the last line only gains the newline it lacked
    assert [e.nodeid for e in load_quarantine(target, today=TODAY).entries] == [
        "t.py::a",
        "t.py::b",
    ]


def test_remove_takes_out_exactly_the_named_blocks(tmp_path: Path) -> None:
    target = tmp_path / "q.toml"
    keep_a = "# header\n\n" + entry_text("t.py::a") + "\n"
    doomed = entry_text(ODD_ID.replace("\\", "\\\\").replace('"', '\\"'))
    doomed = doomed.replace("reason", "# inside the block\nreason") + "\n"
    keep_b = "# about b\n" + entry_text("t.py::b", extra='owner = "o"\nplatforms = [\n  "x",\n]\n')
    target.write_text(keep_a + doomed + keep_b)
    assert remove_entries(target, [ODD_ID, "t.py::absent"], today=TODAY) == [ODD_ID]
    assert target.read_text() == keep_a + keep_b
    assert remove_entries(target, ["t.py::b"], today=TODAY) == ["t.py::b"]
    assert target.read_text() == keep_a + "# about b\n"


def test_remove_matches_node_ids_exactly_not_as_prefixes(tmp_path: Path) -> None:
    target = tmp_path / "q.toml"
    text = entry_text("t.py::TestX") + "\n" + entry_text("t.py::TestX::test_y")
    target.write_text(text)
    assert remove_entries(target, ["t.py::TestX::test_y"], today=TODAY) == ["t.py::TestX::test_y"]
    assert target.read_text() == entry_text("t.py::TestX") + "\n"


def test_an_edit_whose_result_would_not_load_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "q.toml"
    target.write_text(entry_text("t.py::a"))
    far = new_entry("t.py::far", expires=TODAY + timedelta(days=120))
    with pytest.raises(QuarantineFileError, match="more than 90 days"):
        add_entries(target, [far], today=TODAY)
    assert target.read_text() == entry_text("t.py::a")
