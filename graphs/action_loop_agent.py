"""`ActionLoopAgent`: the engine for agents whose every model turn proposes one action.

ReAct and the structured-output agent do not score results: each turn (draft,
then every revise) proposes an action, `execute_tool` runs or checks it, and the
stop rules run right there, before the model is called again, so a limit of N
steps is exactly N model turns (a tool that calls the model itself, such as the
ReAct LLM fallback, adds its own calls). A subclass supplies the turn's responder, the
tool step, and which outcome ends the run.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from pydantic import BaseModel

from graphs.reflexion_agent import ReflexionAgent
from nodes.react.action_responder import ActionResponder
from nodes.reflexion.steps import outcomes_of
from schemas.reflexion import ReflexionState, StopReason, ToolOutcome, ToolRun


class ActionLoopAgent(ReflexionAgent):
    """One responder for every turn; stop rules checked after each tool step."""

    skip_repeated_actions = False  # a repeat can mean something new (the next lookup match, a retry)

    @abstractmethod
    def _turn_responder(self) -> ActionResponder:
        """The responder for every model turn."""

    @abstractmethod
    def _run_tool(self, state: ReflexionState) -> ToolRun:
        """Run (or check) the action of the newest turn."""

    @abstractmethod
    def _done(self, outcome: ToolOutcome) -> StopReason | None:
        """The stop reason this outcome ends the run with (finished, validated), or None."""

    def _create_initial_responder(self, prompt: str | None = None) -> ActionResponder:
        return self._turn_responder()

    def _create_revise_responder(self, prompt: str | None = None) -> ActionResponder:
        return self._turn_responder()

    def _tool_function(self, state: Any) -> Any:  # the seed's hook; these agents run `_run_tool`
        raise NotImplementedError(f"{type(self).__name__} runs its actions through _run_tool")

    def _action_of(self, parsed: BaseModel) -> str:
        return str(getattr(parsed, "action", ""))

    def _score_from_revision(self, parsed: BaseModel) -> float | None:
        return None  # nothing is scored: the tool step's outcome decides

    def _stop_after_tool(self, state: ReflexionState) -> StopReason | None:
        done = self._done(outcomes_of(state)[-1])
        if done:
            return done
        # Every step took one model call; another step would exceed the limit.
        return "max_steps" if state.get("steps", 0) >= self._max_steps(state) else None

    def _stop_reason(self, state: ReflexionState) -> StopReason | None:
        return None  # all stop rules run right after the tool step
