"""The worker lifecycle as one table: its states, its edges, and the choices between them.

Where a worker may go more than one way (a poisoned worker; a reset attempt's outcome), one
trigger has several edges, each with its ``conditions``, and the machine takes the first
whose conditions hold, as ``transitions`` means it: the worker only fires the trigger.
recovery.lifecycle runs this table; recovery.diagram draws it.
"""

from __future__ import annotations

from typing import Any

from transitions import Machine, Transition
from transitions.extensions.states import Tags, add_state_features

__all__ = ["RUNNABLE_STATES", "STATES", "TRANSITIONS", "Edge", "LifecycleMachine"]

# A test may run on a worker in a state tagged ``runnable`` (and, with recovery off, on a
# poisoned one: see recovery.lifecycle.PooledWorker.runnable).
STATES: list[dict[str, Any]] = [
    {"name": "created"},
    {"name": "healthy", "tags": ["runnable"]},
    {"name": "poisoned"},
    {"name": "force_reset"},
    {"name": "rebuilt", "tags": ["runnable"]},
    {"name": "skipped"},
    {"name": "closed"},
]

# The whole lifecycle, choices included; docs/lifecycle.md is generated from it. An edge's
# ``label`` is its name in the records and the diagram: a trigger with a choice (``heal``,
# ``attempt_done``) names none of its own. Its edges are tried in this order; conditions
# are the attributes and methods of recovery.lifecycle.PooledWorker (each method is given the
# trigger's event).
TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "init_ok", "source": "created", "dest": "healthy"},
    {"trigger": "device_error", "source": ["created", "healthy", "rebuilt"], "dest": "poisoned"},
    # An op nothing in the process can stop (a GPU kernel past the op-timeout): no reset is
    # tried; the process holding the context must end, and a fresh one re-runs the tests.
    {
        "trigger": "heal",
        "label": "process_must_end",
        "source": "poisoned",
        "dest": "skipped",
        "conditions": ["recovery", "needs_fresh_process"],
        "before": "_explain_process_end",
    },
    # With recovery off no edge of ``heal`` holds: the worker stays poisoned and runs on.
    {
        "trigger": "heal",
        "label": "start_force_reset",
        "source": "poisoned",
        "dest": "force_reset",
        "conditions": "recovery",
        "before": "_first_attempt",
    },
    {
        "trigger": "attempt_done",
        "label": "rebuild_ok",
        "source": "force_reset",
        "dest": "rebuilt",
        "conditions": "reset_took",
    },
    {
        "trigger": "attempt_done",
        "label": "reset_retry",
        "source": "force_reset",
        "dest": "force_reset",
        "conditions": "attempts_left",
        "before": "_next_attempt",
    },
    {
        "trigger": "attempt_done",
        "label": "give_up",
        "source": "force_reset",
        "dest": "skipped",
        "before": "_explain_give_up",
    },
    {
        "trigger": "close",
        "source": [s["name"] for s in STATES if s["name"] != "closed"],
        "dest": "closed",
    },
]

RUNNABLE_STATES = tuple(s["name"] for s in STATES if "runnable" in s.get("tags", ()))


class Edge(Transition):
    """A transition that keeps its ``label``: the name of the edge taken, for the records.

    (The diagram's GraphMachine reads the same key for its edge labels.)
    """

    def __init__(self, *args: Any, label: str | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.label = label


@add_state_features(Tags)
class LifecycleMachine(Machine):
    """The machine the table needs: tagged states and labelled edges."""

    transition_cls = Edge
