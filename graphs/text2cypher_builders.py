"""The text-to-Cypher flows as data: one short builder per flow over the shared steps, one registry.

naive:          guardrail -> generate -> check_query -> execute -> summarize -> reply
retry:          ... execute -(error)-> correct -> check_query -> execute ...
retry_evaluate: ... execute -> evaluate -(poor rows)-> correct ...; a corrected query the
                evaluator accepts is stored as a new few-shot example
planner:        guardrail -> plan -> subquery x N (parallel, `Send`) -> check -> (next round) -> summarize

Every flow ends in `reply`, which says the answer as an AI message (a run refused or stopped early
goes there straight), and every conditional edge is drawn with what takes it (`labelled`).

A flow is its wiring: the steps it runs, the routers (`nodes.text2cypher.routes`) that join them,
and what that wiring lets the steps several flows share do (`corrects`, `evaluates`, handed to them
in their `FlowContext`), so no step asks which flow it is in. A fifth flow is a builder here, one
line in `FLOW_BUILDERS`, and its name in `schemas.text2cypher.Flow` (checked against the registry).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias, get_args

from langgraph.graph import END, START, StateGraph

from reflexion_agents.graphs.labelled_routes import Exits, labelled
from reflexion_agents.nodes.common.reply import REPLY_NODE
from reflexion_agents.nodes.text2cypher import planner, routes, steps
from reflexion_agents.nodes.text2cypher.context import FlowContext
from reflexion_agents.schemas.run_context import Text2CypherContext
from reflexion_agents.schemas.text2cypher import Flow, Text2CypherInput, Text2CypherOutput, Text2CypherState

Step: TypeAlias = Callable[[Any, FlowContext], dict[str, Any]]
Graph: TypeAlias = StateGraph[Any, Any, Any, Any]


#: A step bound to its run: a LangGraph node function, `(state)` or `(state, runtime)`.
Node: TypeAlias = Callable[..., dict[str, Any]]


@dataclass(frozen=True)
class Wiring:
    """What a builder takes from the flow object: the first node (it records the run's settings),
    `node`, which makes a step a node that runs with the run's `FlowContext`, and the last node,
    `reply` (the answer message, from the flow's typed result)."""

    start: Node
    node: Callable[[Step], Node]
    reply: Node


def route(graph: Graph, source: str, router: Callable[[Any], Any], exits: Exits) -> None:
    """`source`'s conditional edge, each exit drawn with its label; `"__end__"` leads to `reply`."""
    exits = {chosen: (label, REPLY_NODE if node == END else node) for chosen, (label, node) in exits.items()}
    graph.add_conditional_edges(source, *labelled(router, exits))


def opening(wire: Wiring, onward: str, after_guardrail: Callable[[Any], str]) -> Graph:
    """The part every flow shares: `start`, then the guardrail, which `after_guardrail` leaves for
    `onward`; and the end, `reply`."""
    graph: Graph = StateGraph(
        Text2CypherState,
        context_schema=Text2CypherContext,
        input_schema=Text2CypherInput,
        output_schema=Text2CypherOutput,
    )
    graph.add_node("start", wire.start)  # needs neither model nor database
    graph.add_node("guardrail", wire.node(steps.guardrail))
    graph.add_node(REPLY_NODE, wire.reply)
    graph.add_edge(START, "start")
    route(graph, "start", routes.after_start, {"guardrail": ("question", "guardrail"), END: ("empty question", END)})
    route(
        graph,
        "guardrail",
        after_guardrail,
        {onward: ("in scope", onward), END: ("out of scope, model error, database down", END)},
    )
    graph.add_edge(REPLY_NODE, END)
    return graph


#: A query drafted or corrected runs; none written (budget, a model error) goes to the summary.
QUERY_WRITTEN: Exits = {"check_query": ("query written", "check_query"), "summarize": ("no query", "summarize")}


def one_query(wire: Wiring) -> Graph:
    """The opening, then generate -> check_query -> execute and the summary; `execute`'s exit is the
    builder's to wire. A query written (drafted or corrected) runs, unless writing it stopped the run."""
    graph = opening(wire, "generate", routes.after_guardrail)
    for name, step in (
        ("generate", steps.generate),
        ("check_query", steps.check_query),
        ("execute", steps.execute),
        ("summarize", steps.summarize),
    ):
        graph.add_node(name, wire.node(step))
    route(graph, "generate", routes.after_query_written, QUERY_WRITTEN)
    graph.add_edge("check_query", "execute")
    graph.add_edge("summarize", REPLY_NODE)
    return graph


def build_naive(wire: Wiring) -> Graph:
    """One query, summarised; a failed one is reported, never corrected."""
    graph = one_query(wire)
    route(graph, "execute", routes.to_summary, {"summarize": ("rows or error", "summarize")})
    return graph


def with_correction(graph: Graph, wire: Wiring) -> Graph:
    """A `correct` node, whose rewritten query is checked against the graph and runs again."""
    graph.add_node("correct", wire.node(steps.correct))
    route(graph, "correct", routes.after_query_written, QUERY_WRITTEN)
    return graph


def build_retry(wire: Wiring) -> Graph:
    """A database error goes to `correct`, whose query runs again, while retries and budget allow."""
    graph = with_correction(one_query(wire), wire)
    route(
        graph,
        "execute",
        routes.after_execute,
        {"correct": ("database error", "correct"), "summarize": ("rows, or no retry left", "summarize")},
    )
    return graph


def build_retry_evaluate(wire: Wiring) -> Graph:
    """As retry, and rows that ran are judged first: poor ones go to `correct` too."""
    graph = with_correction(one_query(wire), wire)
    graph.add_node("evaluate", wire.node(steps.evaluate))
    route(
        graph,
        "execute",
        routes.after_execute_evaluating,
        {
            "evaluate": ("rows", "evaluate"),
            "correct": ("database error", "correct"),
            "summarize": ("error, no retry left", "summarize"),
        },
    )
    route(
        graph,
        "evaluate",
        routes.after_evaluate,
        {"correct": ("poor rows", "correct"), "summarize": ("rows accepted, or no retry left", "summarize")},
    )
    return graph


def build_planner(wire: Wiring) -> Graph:
    """Sub-questions fetched in parallel, checked, and fetched again for what is missing."""
    graph = opening(wire, "plan", routes.after_guardrail_planning)
    graph.add_node("plan", wire.node(planner.plan))
    graph.add_node("subquery", wire.node(planner.subquery))
    graph.add_node("check", wire.node(planner.check))
    graph.add_node("summarize", wire.node(planner.summarize_plan))
    route(
        graph,
        "plan",
        routes.fan_out,
        {"subquery": ("each sub-question, in parallel", "subquery"), "summarize": ("nothing to fetch", "summarize")},
    )
    graph.add_edge("subquery", "check")
    route(
        graph,
        "check",
        routes.fan_out,
        {"subquery": ("each missing piece, in parallel", "subquery"), "summarize": ("enough", "summarize")},
    )
    graph.add_edge("summarize", REPLY_NODE)
    return graph


@dataclass(frozen=True)
class FlowBuilder:
    """A flow's builder, and what its wiring lets the shared steps do (`FlowContext`'s flags)."""

    build: Callable[[Wiring], Graph]
    corrects: bool = False  # it wires `correct`: corrections count against `max_retries`
    evaluates: bool = False  # it wires `evaluate`: only accepted rows are "answered", and learned


FLOW_BUILDERS: dict[Flow, FlowBuilder] = {
    "naive": FlowBuilder(build_naive),
    "retry": FlowBuilder(build_retry, corrects=True),
    "retry_evaluate": FlowBuilder(build_retry_evaluate, corrects=True, evaluates=True),
    "planner": FlowBuilder(build_planner),
}
FLOWS: tuple[Flow, ...] = tuple(FLOW_BUILDERS)

if set(FLOWS) != set(get_args(Flow)):  # mypy checks each key is a Flow; this, that each Flow has a builder
    raise TypeError(
        f"reflexion_agents.schemas.text2cypher.Flow {get_args(Flow)} and FLOW_BUILDERS {FLOWS} name different flows"
    )
