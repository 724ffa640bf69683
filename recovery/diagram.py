"""The lifecycle diagram, drawn by transitions from the same table the workers run on."""

from __future__ import annotations

from transitions.extensions import GraphMachine

from recovery.lifecycle import STATES, TRANSITIONS

__all__ = ["mermaid"]


class _Blank:
    """A model for drawing only: the diagram shows the machine, not a worker."""


def mermaid() -> str:
    machine = GraphMachine(
        model=_Blank(),
        states=STATES,
        transitions=TRANSITIONS,
        initial="created",
        auto_transitions=False,
        graph_engine="mermaid",
        title="Worker lifecycle",
    )
    drawn = str(machine.get_graph().draw(None))
    return "\n".join(line.rstrip() for line in drawn.strip().splitlines()) + "\n"
