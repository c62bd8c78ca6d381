"""The parts of a loop whose every model turn proposes one action (ReAct, validated extraction), as
functions: `action_parts` makes the loop's `LoopParts` from the turn's responder, the tool step, the
outcome that ends the run and the result.

Nothing is scored: each turn (draft, then every revise) proposes an action, `execute_tool` runs or
checks it, and the stop rules run right there, before the model is called again, so a limit of N
steps is exactly N model turns (a tool that calls the model itself, such as the ReAct LLM fallback,
adds its own calls). A repeated action runs again: it can mean something new (the next lookup
match, a retry).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from reflexion_agents.graphs.loop_parts import LoopParts
from reflexion_agents.nodes.common.responder import ResponderReply
from reflexion_agents.nodes.models.run_models import RunModels
from reflexion_agents.nodes.reflexion.steps import outcomes_of, revise_update
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.reflexion import ReflexionInput, ReflexionOutput, ReflexionState, ToolOutcome
from reflexion_agents.schemas.run_context import AgentContext


def action_of(parsed: BaseModel) -> str:
    return str(getattr(parsed, "action", ""))


@dataclass(frozen=True)
class ActionRules:
    """What decides an action loop's run: its step limit (and the highest a run may ask for), the stop
    reason an outcome ends the run with (`done`: finished, validated), and the drawing's words for it."""

    max_steps: int
    done: Callable[[ToolOutcome], str | None]
    done_label: str = "done"
    max_steps_ceiling: int | None = None

    @property
    def ceiling(self) -> int:
        return self.max_steps_ceiling or self.max_steps

    def limits(self, context: Any, recorded: Mapping[str, Any]) -> dict[str, Any]:
        """The step limit: the run's (at most the ceiling), else the one it started with, else the agent's."""
        asked = context.max_steps
        ceiling = recorded.get("max_steps", self.ceiling)
        return {"max_steps": min(asked, ceiling) if asked is not None else recorded.get("max_steps", self.max_steps)}

    def stop_after_tool(self, state: Any, run: RunSettings) -> str | None:
        """The outcome's own stop reason, else the step limit: every step took one model call, and
        another would exceed it."""
        done = self.done(outcomes_of(state)[-1])
        if done:
            return done
        return "max_steps" if state.get("steps", 0) >= run.limit("max_steps") else None

    @staticmethod
    def revised(state: Any, reply: ResponderReply, run: RunSettings) -> dict[str, Any]:
        return revise_update(state, reply, lambda parsed: None, action_of)  # nothing is scored

    def labels(self) -> dict[str, tuple[str, str]]:
        return {
            "draft": ("action", "no question, model error"),
            "execute_tool": ("next turn", f"{self.done_label}, step limit"),
            "revise": ("action", "model error"),
        }


def action_parts(
    rules: ActionRules, models: RunModels, turn_responder: Callable[[BaseChatModel], Any], **parts: Any
) -> LoopParts:
    """An action loop's parts: `rules` decide the stops; every turn is answered by `turn_responder` over
    the run's model; `parts` give the rest (`name`, `run_tool`, `result_of`, and any `LoopParts` field,
    which replaces what would be given here)."""
    given: dict[str, Any] = {
        "state_schema": ReflexionState,
        "context_schema": AgentContext,
        "input_schema": ReflexionInput,
        "output_schema": ReflexionOutput,
        "limits": rules.limits,
        "responder": lambda turn, prompt, run: turn_responder(models.for_run(run.context.model)),
        "responder_ready": lambda turn, prompt, run: models.ready(run.context.model),
        "action_of": action_of,
        "revised": rules.revised,
        "stop_after_tool": rules.stop_after_tool,
        "labels": rules.labels(),
        "max_steps_ceiling": rules.ceiling,
    }
    return LoopParts(**{**given, **parts})
