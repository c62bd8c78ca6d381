"""Conditional edges whose drawing says what takes each one ("score > 7", "database error").

LangGraph draws a conditional edge with the key its router returned, when that key differs from the
node it leads to (`path_map`). The routers here stay plain (they return the next node's name, or
`"__end__"`, as biochatter's `_should_continue` does); `labelled` wraps one so it returns the label
instead, and gives the map from each label to the node it leads to. `Send` fan-outs pass through.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from langgraph.types import Send

#: What a route returns -> (the label drawn on that edge, the node the edge leads to).
Exits = Mapping[str, tuple[str, str]]


def labelled(route: Callable[[Any], Any], exits: Exits) -> tuple[Callable[[Any], Any], dict[Hashable, str]]:
    """(a router that returns the label of the exit `route` chose, the label -> node map for
    `add_conditional_edges`). A route's answer not in `exits` is a wiring bug: it raises, naming it."""
    labels = {returned: label for returned, (label, _) in exits.items()}
    if len(set(labels.values())) != len(labels):
        raise ValueError(f"two exits of {route} share a label: {labels}")

    def router(state: Any) -> Any:
        chosen = route(state)
        if isinstance(chosen, (list, Send)):  # a fan-out: LangGraph sends each branch itself
            return chosen
        try:
            return labels[chosen]
        except KeyError:
            raise ValueError(f"{router.__name__} chose {chosen!r}, which is none of its exits {list(labels)}") from None

    router.__name__ = getattr(route, "__name__", "route")
    router.__doc__ = route.__doc__
    return router, {label: node for label, node in exits.values()}


def chooser(route: Callable[[Any], Any], exits: Exits) -> Callable[[Any], Any]:
    """A function of the state that returns the node `route` leads to (or its fan-out), for a node that
    routes itself with LangGraph's `Command(goto=...)`; the drawing's labels are the node's
    `destinations` (`destinations_of`). A route's answer not in `exits` is a wiring bug: it raises."""

    def choose(state: Any) -> Any:
        chosen = route(state)
        if isinstance(chosen, (list, Send)):
            return chosen
        try:
            return exits[chosen][1]
        except KeyError:
            name = getattr(route, "__name__", "route")
            raise ValueError(f"{name} chose {chosen!r}, which is none of its exits {list(exits)}") from None

    return choose


def destinations_of(exits: Exits) -> dict[str, str]:
    """The node -> label map LangGraph draws a routing node's edges with."""
    return {node: label for label, node in exits.values()}
