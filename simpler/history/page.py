"""The history as one page to look at: the flaky table, each test's strip of runs, why
failed attempts failed, and what the selection would have missed in shadow runs.

Pure: scores, strips, attribution counts and shadow misses in, one self-contained HTML file
out. It loads nothing (inline style, a Content Security Policy that forbids every fetch) and
reads as text without JavaScript or colour (docs/history.md, "Reading it").
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from datetime import datetime

from simpler.base.compat import UTC
from simpler.history.model import CAUSES, STATES, ShadowMisses, StripMark, TestScore

__all__ = ["CAUSE_MEANINGS", "MARKS", "STATE_MEANINGS", "render_page"]

# mark: (CSS class, what it means, cell colour, letter colour). The cell colours appear nowhere
# else on the page (badges and borders use other shades), so a screenshot can find the strips.
MARKS: dict[str, tuple[str, str, str, str]] = {
    ".": ("pass", "passed", "#43a047", "#ffffff"),
    "F": ("fail", "failed: the test's own failure", "#d32f2f", "#ffffff"),
    "R": ("recovered", "failed, then passed on retry (recovered or flaky)", "#ffb300", "#212121"),
    "D": ("device", "failed: attributed to the device", "#8e24aa", "#ffffff"),
    "I": ("infra", "failed: attributed to infrastructure", "#546e7a", "#ffffff"),
    "s": ("skipped", "skipped", "#cfd8dc", "#212121"),
    "Q": ("quarantined", "failed while quarantined (did not gate)", "#6d4c41", "#ffffff"),
}
_OTHER_MARK = ("other", "unknown mark", "#9e9e9e", "#ffffff")
CAUSE_MEANINGS = {
    "test": "The test's own failure: none of the causes below applies. "
    "Only these count against a test's flakiness.",
    "device": "The test ran on a worker that another test poisoned, was poison-skipped, "
    "its card was retired, or its worker crashed while another test ran.",
    "infra": "The run's report is incomplete, a Resource child never started, "
    "or the whole session timed out.",
}
STATE_MEANINGS = {
    "broken": "fails every run in the window",
    "flaky": "fails some runs by its own fault",
    "device-sensitive": "its own failures all fell on one device or runner",
    "stable": "no failure of its own worth acting on",
}
# state: (badge background, badge text); the row's left edge takes the background too.
_STATE_LOOKS = {
    "broken": ("#b71c1c", "#ffffff"),
    "flaky": ("#ffe082", "#3e2723"),
    "device-sensitive": ("#e1bee7", "#4a148c"),
    "stable": ("#c8e6c9", "#1b5e20"),
}
_MESSAGE_SHOWN = 160  # characters of a failure's first line in the cell; the tooltip has more
_MESSAGE_TOOLTIP = 2000
# Characters HTML cannot carry: C0/C1 controls (a parse error, shown as boxes or dropped) and
# lone surrogates, which a JSON report may hold but UTF-8 cannot encode at all.
_NOT_HTML = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# The page fetches nothing; this makes that a rule the browser enforces, not a habit.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"
_COLUMNS = (
    ("Test", "pytest node id"),
    ("State", "; ".join(f"{state}: {meaning}" for state, meaning in STATE_MEANINGS.items())),
    ("Flake rate", "runs failed by the test's own fault / runs, with its Wilson 95% interval"),
    ("Runs", "runs in the window in which the test had a verdict"),
    ("Passed", "runs whose final outcome was green"),
    ("Failed: test", "runs with a failure of the test's own (counts against flakiness)"),
    ("device", "runs whose failure was attributed to the device (does not count)"),
    ("infra", "runs whose failure was attributed to infrastructure (does not count)"),
    ("Pass on retry", "runs where a failure of its own was followed by a pass"),
    ("Flip rate", "pass/fail changes between consecutive runs / (runs - 1)"),
    ("Same-commit flips", "commits on which the test both failed by its own fault and passed"),
    ("Runs, oldest \u2192 newest", "one cell a run; hover a cell for its run and commit"),
    ("Last failure", "the latest failure of the test's own: run, commit, message"),
)


def render_page(
    scores: Sequence[TestScore],
    strips: Mapping[str, Sequence[StripMark]],
    attribution: Mapping[str, int],
    *,
    title: str,
    generated: str,
    window: str,
    shadow: ShadowMisses | None = None,
) -> str:
    """The whole page. ``scores`` are shown in the order given (the caller sorts); ``strips``
    maps a node id to its runs oldest first (a test without one shows "no runs"; a strip
    without a score is not shown); ``attribution`` counts failed attempts by cause;
    ``shadow`` is what the selection would have missed (None: no shadow run)."""
    parts = [
        _head(title),
        "<header>",
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">Window: {_e(window)} \u00b7 generated {_e(generated)} \u00b7 '
        f"{len(scores)} test(s)</p>",
        "</header>",
        _attribution(attribution),
        _shadow(shadow or ShadowMisses(0, 0, 0, 0)),
    ]
    if scores:
        parts += [_states(), _legend(), _table(scores, strips), _SCRIPT]
    else:
        parts.append(_empty(attribution))
    parts.append("</body>\n</html>\n")
    return "\n".join(parts)


def _head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)}</title>\n<style>\n{_style()}</style>\n</head>\n<body>"
    )


def _style() -> str:
    marks = "".join(
        f".m-{name}{{background:{fill};color:{ink}}}\n"
        for name, _, fill, ink in [*MARKS.values(), _OTHER_MARK]
    )
    states = "".join(
        f".state-{state} .badge{{background:{fill};color:{ink}}}\n"
        f"tr.state-{state} td:first-child{{border-left:4px solid {fill}}}\n"
        for state, (fill, ink) in _STATE_LOOKS.items()
    )
    return (
        "body{margin:16px;background:#fff;color:#212121;"
        "font:14px/1.4 'DejaVu Sans',Helvetica,Arial,sans-serif}\n"
        "h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:20px 0 6px}\n"
        ".meta{color:#555;margin:0}\n"
        "table{border-collapse:collapse}\n"
        "th,td{padding:4px 8px;border-bottom:1px solid #e0e0e0;text-align:left;"
        "vertical-align:top}\n"
        "th{background:#f5f5f5;font-size:12px}\n"
        "td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
        "td.muted{color:#757575}\n"
        ".nodeid{font-family:'DejaVu Sans Mono',monospace;font-size:12px;min-width:18em;"
        "max-width:36em;overflow-wrap:break-word}\n"
        ".badge{display:inline-block;padding:1px 6px;border-radius:8px;font-size:12px;"
        "white-space:nowrap;background:#eeeeee}\n"
        ".ci{color:#757575;font-size:12px;white-space:nowrap}\n"
        ".scroll{overflow-x:auto}.strip{white-space:nowrap}\n"
        # Square cells with a gap, no rounding: the letter sits in the middle, the colour
        # fills the rest, and the edges stay crisp enough to count runs at a glance.
        ".m{display:inline-block;width:14px;height:18px;line-height:18px;margin-right:2px;"
        "text-align:center;vertical-align:top;font:bold 11px/18px 'DejaVu Sans Mono',monospace}\n"
        ".last{font-size:12px;min-width:14em;max-width:28em}\n"
        ".msg{color:#424242;overflow-wrap:anywhere}\n"
        ".legend{list-style:none;padding:0;margin:0}"
        ".legend li{display:inline-block;margin:2px 18px 2px 0}\n"
        ".empty{font-size:16px;padding:16px;background:#f5f5f5;border:1px solid #e0e0e0}\n"
        "#filter{margin:0 0 8px;padding:4px;width:24em}\n" + marks + states
    )


def _attribution(attribution: Mapping[str, int]) -> str:
    causes = [*CAUSES, *sorted(set(attribution) - set(CAUSES))]
    rows = [
        f'<tr data-cause="{_e(cause)}"><th scope="row">{_e(cause)}</th>'
        f'<td class="num count">{attribution.get(cause, 0)}</td>'
        f"<td>{_e(CAUSE_MEANINGS.get(cause, ''))}</td></tr>"
        for cause in causes
    ]
    return (
        '<section id="attribution">\n<h2>Failed attempts by cause</h2>\n'
        '<table class="causes">\n<thead><tr><th>Cause</th><th>Failed attempts</th>'
        "<th>What it means</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n"
        "</table>\n</section>"
    )


def _shadow(shadow: ShadowMisses) -> str:
    """The miss rate in one line, then the newest misses; with no shadow run, a line saying
    so (as the other sections say they are empty rather than vanish)."""
    line = shadow.headline()
    parts = [
        '<section id="shadow">\n<h2>Selection (shadow runs)</h2>',
        f'<p class="shadow-line">{_e(line[:1].upper() + line[1:])}.</p>',
    ]
    if shadow.runs and not shadow.newest:
        parts.append('<p class="meta">No failure was left out.</p>')
    elif shadow.newest:
        rows = "\n".join(
            f'<tr><td><code>{_e(run_id)}</code></td><td class="nodeid">'
            f"<code>{_breakable(nodeid)}</code></td></tr>"
            for run_id, nodeid in shadow.newest
        )
        parts.append(
            f'<p class="meta">{shadow.runs_with_misses} of {shadow.runs} shadow run(s) had a '
            "miss; the newest misses:</p>\n"
            '<table id="misses">\n<thead><tr><th>Run</th>'
            "<th>Failed, and the selection left it out</th></tr></thead>\n"
            f"<tbody>\n{rows}\n</tbody>\n</table>"
        )
    return "\n".join([*parts, "</section>"])


def _states() -> str:
    items = "".join(
        f'<li class="state-{state}"><span class="badge">{state}</span> '
        f"{_e(STATE_MEANINGS[state])}</li>"
        for state in STATES
    )
    return f'<section id="states">\n<h2>States</h2>\n<ul class="legend">{items}</ul>\n</section>'


def _legend() -> str:
    items = "".join(
        f'<li><span class="m m-{name}">{_e(mark)}</span> <code>{_e(mark)}</code> {_e(meaning)}</li>'
        for mark, (name, meaning, _, _) in MARKS.items()
    )
    return (
        '<section id="legend">\n<h2>Marks in the strips</h2>\n'
        f'<ul class="legend">{items}</ul>\n</section>'
    )


def _table(scores: Sequence[TestScore], strips: Mapping[str, Sequence[StripMark]]) -> str:
    head = "".join(f'<th title="{_e(tip)}">{_e(name)}</th>' for name, tip in _COLUMNS)
    rows = "\n".join(_row(score, strips.get(score.nodeid, ())) for score in scores)
    return (
        '<section id="flaky">\n<h2>Tests, in the order of the flaky table</h2>\n'
        '<div class="scroll"><table id="scores">\n'
        f"<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table></div>\n</section>"
    )


def _row(score: TestScore, strip: Sequence[StripMark]) -> str:
    state = score.state if score.state in _STATE_LOOKS else "unknown"
    rate = (
        f'{_percent(score.flake_rate)} <span class="ci">'
        f"[{_percent(score.flake_rate_low)}\u2013{_percent(score.flake_rate_high)}]</span>"
    )
    counts = [
        (score.runs, ""),
        (score.passed, ""),
        (score.failed_test, ""),
        (score.failed_device, " muted"),  # shown, but they do not count against the test
        (score.failed_infra, " muted"),
        (score.pass_on_retry, ""),
    ]
    cells = [
        f'<td class="nodeid"><code>{_breakable(score.nodeid)}</code></td>',
        f'<td class="state"><span class="badge" title="{_e(STATE_MEANINGS.get(state, ""))}">'
        f"{_e(score.state)}</span></td>",
        f'<td class="rate">{rate}</td>',
        *(f'<td class="num{more}">{count}</td>' for count, more in counts),
        f'<td class="num">{_percent(score.flip_rate)}</td>',
        f'<td class="num">{score.same_commit_flips}</td>',
        f'<td class="strip">{_strip(strip)}</td>',
        f'<td class="last">{_last_failure(score)}</td>',
    ]
    return (
        f'<tr class="state-{state}" data-nodeid="{_e(score.nodeid)}" data-state="{_e(state)}">'
        + "".join(cells)
        + "</tr>"
    )


def _strip(strip: Sequence[StripMark]) -> str:
    if not strip:
        return '<span class="ci">no runs</span>'
    # No whitespace between cells: the strip's text reads as the CLI's, e.g. "..FR.D".
    return "".join(
        f'<span class="m m-{look[0]}" title="{_e(_cell_tooltip(mark, look[1]))}">'
        f"{_e(mark.mark)}</span>"
        for mark in strip
        for look in [MARKS.get(mark.mark, _OTHER_MARK)]
    )


def _cell_tooltip(mark: StripMark, meaning: str) -> str:
    parts = [f"run {mark.run_id}", f"commit {mark.commit or 'unknown'}"]
    if mark.started is not None:
        parts.append(datetime.fromtimestamp(mark.started, UTC).strftime("%Y-%m-%d %H:%M UTC"))
    return " \u00b7 ".join([*parts, f"{mark.mark} {meaning}"])


def _last_failure(score: TestScore) -> str:
    last = score.last_failure
    if last is None:
        return '<span class="ci">none in the window</span>'
    lines = last.message.strip().splitlines()
    shown = lines[0] if lines else ""
    if len(shown) > _MESSAGE_SHOWN or len(lines) > 1:
        shown = shown[:_MESSAGE_SHOWN].rstrip() + "\u2026"
    commit = (last.commit or "unknown commit")[:12]
    return (
        f"run <code>{_e(last.run_id)}</code> \u00b7 <code>{_e(commit)}</code><br>"
        f'<span class="msg" title="{_e(last.message[:_MESSAGE_TOOLTIP])}">{_e(shown)}</span>'
    )


def _empty(attribution: Mapping[str, int]) -> str:
    if any(attribution.values()):
        text = "No test has enough runs in the window to be scored."
    else:
        text = "No runs in the window: there is nothing to score yet."
    return f'<p class="empty" id="empty">{text}</p>'


# Built by the script, not written in the HTML: with JavaScript off there is no dead box.
_SCRIPT = """<script>
(function () {
  var table = document.getElementById("scores");
  var box = document.createElement("input");
  box.type = "search"; box.id = "filter"; box.placeholder = "filter by node id";
  table.parentNode.parentNode.insertBefore(box, table.parentNode);
  box.addEventListener("input", function () {
    var text = box.value.toLowerCase();
    table.querySelectorAll("tbody tr").forEach(function (row) {
      row.hidden = text !== "" && row.dataset.nodeid.toLowerCase().indexOf(text) < 0;
    });
  });
})();
</script>"""


def _breakable(nodeid: str) -> str:
    """The node id, escaped, allowed to wrap after a path's ``/`` and pytest's ``::`` (a
    ``<wbr>`` adds no text: the id still reads, copies and searches whole)."""
    return re.sub("(/|::)", r"\1<wbr>", _e(nodeid))


def _percent(value: float) -> str:
    return f"{value * 100:.1f}%"


def _e(text: str) -> str:
    """Text or attribute value, escaped (quotes too) and stripped of what HTML cannot hold."""
    return html.escape(_NOT_HTML.sub("\ufffd", text), quote=True)
