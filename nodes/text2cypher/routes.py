"""Where each text-to-Cypher step leads: pure functions of the state returning the next node's name.

A router never asks which flow it is in, nor opens the flow's context (model, database, limits):
whatever it needs, the step before it recorded in the state. The budget check for a correction,
which needs the limits, is `can_correct`, written by `execute` and `evaluate`. Each flow's builder
(`graphs.text2cypher_builders`) picks the routers that fit the nodes it wires.
"""

from __future__ import annotations

from typing import Literal

from langgraph.types import Send

from reflexion_agents.schemas.text2cypher import Text2CypherState


def after_start(state: Text2CypherState) -> Literal["guardrail", "__end__"]:
    """An empty question ends the run before any call."""
    return "__end__" if state.get("stop_reason") else "guardrail"


def after_guardrail(state: Text2CypherState) -> Literal["generate", "__end__"]:
    """A question the graph can answer is drafted as one query; a refused one ends the run."""
    return "__end__" if state.get("stop_reason") else "generate"


def after_guardrail_planning(state: Text2CypherState) -> Literal["plan", "__end__"]:
    """A question the graph can answer is split into sub-questions; a refused one ends the run."""
    return "__end__" if state.get("stop_reason") else "plan"


def after_query_written(state: Text2CypherState) -> Literal["check_query", "summarize"]:
    """A query drafted or corrected runs (checked against the graph first); no query (budget, a model
    error) goes to the summary, which reports why."""
    return "summarize" if state.get("stop_reason") else "check_query"


def to_summary(state: Text2CypherState) -> Literal["summarize"]:
    """A flow that never corrects: whatever the query did, the summary reports it. A router rather
    than a plain edge, so the drawing shows `execute`'s exit as it always has (dashed)."""
    return "summarize"


def after_execute(state: Text2CypherState) -> Literal["correct", "summarize"]:
    """A database error goes to a correction while one is allowed (`can_correct`); rows, or an error
    no correction may follow, to the summary."""
    if state.get("stop_reason") or not state.get("feedback"):
        return "summarize"
    return "correct" if state.get("can_correct") else "summarize"


def after_execute_evaluating(state: Text2CypherState) -> Literal["correct", "evaluate", "summarize"]:
    """As `after_execute`, except that rows are judged before the summary."""
    if state.get("stop_reason") or state.get("feedback"):
        return after_execute(state)
    return "evaluate"


def after_evaluate(state: Text2CypherState) -> Literal["correct", "summarize"]:
    """Rows judged poor go to a correction while one is allowed (`can_correct`); accepted rows, or
    poor ones no correction may follow, to the summary."""
    if state.get("stop_reason") or state.get("evaluated_ok"):
        return "summarize"
    return "correct" if state.get("can_correct") else "summarize"


def fan_out(state: Text2CypherState) -> list[Send] | Literal["summarize"]:
    """One parallel `subquery` branch per pending sub-question, or on to the summary."""
    if state.get("stop_reason") or not state.get("pending"):
        return "summarize"
    return [
        Send(
            "subquery",
            {
                "sub": q,
                "question": state["question"],
                "round": state.get("round", 1),
                "run_context": state.get("run_context"),
            },
        )
        for q in state["pending"]
    ]
