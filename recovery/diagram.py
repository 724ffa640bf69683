"""The lifecycle diagram, drawn by transitions from the same table the workers run on."""

from __future__ import annotations

from transitions.extensions import GraphMachine
from transitions.extensions.states import Tags, add_state_features

from recovery.table import STATES, TRANSITIONS

__all__ = ["mermaid"]


class _Blank:
    """A model for drawing only: the diagram shows the machine, not a worker."""


@add_state_features(Tags)
class _TaggedGraphMachine(GraphMachine):
    """Reads the table's state tags, as the workers' machine does (edge labels it reads as is)."""


def mermaid() -> str:
    machine = _TaggedGraphMachine(
        model=_Blank(),
        states=STATES,
        transitions=TRANSITIONS,
        initial="created",
        auto_transitions=False,
        graph_engine="mermaid",
        title="Worker lifecycle",
        # The choices are the table's: each edge shows its conditions, each state its tags.
        show_conditions=True,
        show_state_attributes=True,
    )
    drawn = str(machine.get_graph().draw(None))
    return "\n".join(line.rstrip() for line in drawn.strip().splitlines()) + "\n"
