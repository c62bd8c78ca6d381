"""The result of a ReAct run, read from the engine's typed outcomes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reflexion_agents.nodes.reflexion.steps import outcomes_of, usage_of_state
from reflexion_agents.nodes.tools.functions import FINISH
from reflexion_agents.schemas.react import ReActResult, ReActStep
from reflexion_agents.schemas.reflexion import ToolOutcome


def react_step(outcome: ToolOutcome) -> ReActStep:
    return ReActStep(
        step=outcome.step,
        thought=outcome.detail.get("thought", ""),
        action=outcome.action,
        tool=outcome.detail.get("tool"),
        args=outcome.detail.get("args", {}),
        observation=outcome.content,
        error=outcome.error,
        source=outcome.source,
    )


def best_observation(outcomes: list[ToolOutcome]) -> str | None:
    """The newest observation of a tool that ran without error: the best answer short of a finish."""
    return next((o.content for o in reversed(outcomes) if o.executed and o.error is None and o.content), None)


def react_result(state: Mapping[str, Any]) -> ReActResult:
    outcomes = outcomes_of(state)
    finished = state.get("stop_reason") == "finished"
    last = outcomes[-1] if outcomes else None
    answer = (
        last.content
        if finished and last is not None and last.detail.get("tool") == FINISH
        else best_observation(outcomes)
    )
    sources = list(dict.fromkeys(o.source for o in outcomes if o.source))
    return ReActResult(
        answer=answer,
        finished=finished,
        stop_reason=state.get("stop_reason"),
        steps=[react_step(o) for o in outcomes],
        sources=sources,
        usage=usage_of_state(state),
        error=state.get("error"),
    )
