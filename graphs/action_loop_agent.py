"""`ActionLoopAgent`: the loop for agents whose every model turn proposes one action.

ReAct and the structured-output agent do not score results: each turn (draft,
then every revise) proposes an action, `execute_tool` runs or checks it, and the
stop rules run right there, before the model is called again, so a limit of N
steps is exactly N model turns (a tool that calls the model itself, such as the
ReAct LLM fallback, adds its own calls). An agent supplies the turn's responder,
the tool step, and which outcome ends the run. A repeated action runs again: it
can mean something new (the next lookup match, a retry).
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.graphs.action_parts import ActionRules, action_of, action_parts
from reflexion_agents.graphs.loop import AgentLoop
from reflexion_agents.graphs.loop_nodes import built_in_hooks
from reflexion_agents.graphs.loop_parts import LoopParts, Turn
from reflexion_agents.graphs.runner import RunOptions
from reflexion_agents.nodes.react.action_responder import ActionResponder
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.reflexion import ReflexionState, ToolOutcome
from reflexion_agents.schemas.run_result import RunResult
from reflexion_agents.schemas.settings import AgentSettings, checked_settings

ResultT = TypeVar("ResultT", bound=RunResult)


class ActionLoopAgent(AgentLoop[ResultT]):
    """One responder for every turn; stop rules checked after each tool step."""

    def __init__(self, conversation_factory: Any, max_steps: int, *, checkpointer: Any) -> None:
        checked_settings(AgentSettings, max_steps=max_steps)
        super().__init__(conversation_factory, max_steps, tool_results_in_prompt=None, checkpointer=checkpointer)

    @abstractmethod
    def _turn_responder(self, chat: BaseChatModel) -> ActionResponder:
        """The responder for every model turn, over the run's chat model."""

    #: The drawing's words for what `_done` looks for.
    done_label = "done"

    @abstractmethod
    def _done(self, outcome: ToolOutcome) -> str | None:
        """The stop reason this outcome ends the run with (finished, validated), or None."""

    def rules(self) -> ActionRules:
        """What decides this agent's runs (`graphs.action_parts.ActionRules`), with its `_done` hook."""
        return ActionRules(self.max_steps, self._done, self.done_label, self.max_steps_ceiling)

    def _responder(self, turn: Turn, prompt: str | None, run: RunSettings) -> ActionResponder:
        return self._turn_responder(self.models.for_run(run.context.model))

    def _responder_ready(self, turn: Turn, prompt: str | None, run: RunSettings) -> bool:
        """The package's action responders are built from the chat model alone; a subclass's own
        `_turn_responder` may read anything."""
        return self.models.ready(run.context.model) and built_in_hooks(self, "_turn_responder", "_responder")

    def _action_of(self, parsed: BaseModel) -> str:
        return action_of(parsed)

    def _stop_after_tool(self, state: ReflexionState, run: RunSettings) -> str | None:
        return self.rules().stop_after_tool(state, run)

    def parts(self) -> LoopParts:
        """The action loop's parts (`graphs.action_parts.action_parts`), this agent's hooks in place."""
        return action_parts(self.rules(), self.models, self._turn_responder, **self.hook_parts())

    def execute(self, question: str, **options: Unpack[RunOptions]) -> ResultT:
        """Answer `question`; in a checkpointed thread, earlier turns stay in the memory."""
        return self.runner.ask(question, **options)

    async def aexecute(self, question: str, **options: Unpack[RunOptions]) -> ResultT:
        """`execute`, asynchronously: model calls are awaited, tool calls run in a worker thread."""
        return await self.runner.aask(question, **options)
