"""How the history's queries name outcomes: which verdicts are passes, and which (run, test)
pairs need a second look because something other than a plain pass happened.

Shared by the scores and their evidence, so that both read the same rows the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

from simpler.contract import GREEN_OUTCOMES

__all__ = ["RAN_GREEN", "UNUSUAL_VERDICT", "sql_list"]

# Green verdicts that say the test ran: everything green but a skip. A skipped run is
# neither a pass nor a failure of the test.
RAN_GREEN = GREEN_OUTCOMES - {"skipped"}

# A verdict (table alias ``v``) that is not a plain pass at the first attempt: about 1% of
# them. Every failed attempt belongs to one: an attempt after it gives the verdict a second
# attempt, and a failure as the last attempt gives it an outcome other than passed. So the
# readers join attempts to these rows only, never scan the million attempts for the few
# that failed.
UNUSUAL_VERDICT = "(v.outcome <> 'passed' OR v.attempts > 1)"


def sql_list(values: Iterable[str]) -> str:
    """``('a', 'b')`` for a fixed set of outcome names (constants, never user input)."""
    return "(" + ", ".join(f"'{value}'" for value in sorted(values)) + ")"
