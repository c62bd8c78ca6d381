"""`AgentLoop`: the base of the agent classes, which hand their hooks to the loop as functions.

    START -> draft -> execute_tool -> revise -> (route) -> execute_tool | reply -> END

The loop itself is built from functions (`graphs.loop_parts.LoopParts`, `graphs.loop_nodes.
build_loop_graph`): the `build_*_graph` functions need no class. A class is the API users already
know: biochatter's `ReflexionAgent` (graphs/engine.py: scored revisions, biochatter's hooks) and
`ActionLoopAgent` (one action per model turn: ReAct, validated extraction) are siblings on this
base, which keeps what every agent class shares: its constructor's checks, its models
(`RunModels`), its compiled graph (made on first use from `parts()`), and `Runner` (`execute`,
`resume`). An agent's hooks are its methods, handed over when the graph is built.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.graphs.loop_nodes import built_in_hooks
from reflexion_agents.graphs.loop_parts import LoopParts, Turn
from reflexion_agents.graphs.loop_target import LoopTarget, compiled_loop
from reflexion_agents.graphs.runner import ResumeOptions, Runner
from reflexion_agents.nodes.checkpoints import resolve_checkpointer
from reflexion_agents.nodes.common.responder import Responder
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries
from reflexion_agents.nodes.models.run_models import RunModels
from reflexion_agents.nodes.run_settings import RunSettings, own_settings
from reflexion_agents.nodes.settings_checks import checkpointer_setting
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.reflexion import ReflexionInput, ReflexionOutput, ReflexionState, ToolRun
from reflexion_agents.schemas.run_context import AgentContext
from reflexion_agents.schemas.run_result import RunResult

logger = logging.getLogger(__name__)

ResultT = TypeVar("ResultT", bound=RunResult)


class AgentLoop(ABC, Generic[ResultT]):
    """The loop shared by every agent; `ResultT` is what a run returns."""

    #: The graph's state; an agent may extend `ReflexionState` with fields of its own.
    state_schema: type = ReflexionState
    #: What a run takes and returns, and its per-run settings (`graph.invoke(..., context=...)`):
    #: the forms LangGraph Studio and SDK clients show.
    input_schema: type = ReflexionInput
    graph_output_schema: type = ReflexionOutput
    context_schema: type[AgentContext] = AgentContext

    def __init__(
        self,
        conversation_factory: Callable[[], Any],
        max_steps: int,
        *,
        tool_results_in_prompt: int | None,
        checkpointer: Any,
        agent_logger: Any = None,
    ) -> None:
        if not callable(conversation_factory):
            raise ConfigurationError("conversation_factory must be a callable that returns a chat model")
        self.conversation_factory = conversation_factory
        self.max_steps = max_steps
        self.tool_results_in_prompt = tool_results_in_prompt
        self.checkpointer = resolve_checkpointer(checkpointer_setting(checkpointer))
        #: biochatter's `ReflexionAgentLogger` (or any object with `log_step_message` and
        #: `log_final_result`): told of every step and of the result, as in biochatter.
        self.agent_logger = agent_logger
        #: The highest step limit a run may ask for; the compiled graph's recursion limit fits it.
        self.max_steps_ceiling = max_steps
        #: The name a thread is stored under: a thread is resumed only by the graph that wrote it.
        self.graph_name = type(self).__name__
        self.models = RunModels(conversation_factory)
        self.runner: Runner[ResultT] = Runner(LoopTarget(self))
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None
        self._own: RunSettings | None = None

    # -- what an agent supplies ----------------------------------------------------

    @abstractmethod
    def _responder(self, turn: Turn, prompt: str | None, run: RunSettings) -> Responder | ResponderWithRetries | Any:
        """The responder answering this turn in a run with settings `run` (anything with
        `respond`/`arespond`, or biochatter's `ResponderWithRetries`)."""

    @abstractmethod
    def _action_of(self, parsed: BaseModel) -> str:
        """The action a parsed draft or revision proposes, as the text the tool step runs."""

    @abstractmethod
    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        """Run the pending action."""

    @abstractmethod
    def _parse_final_result(self, output: ReflexionState) -> ResultT:
        """The result of a finished run, read from typed state (never from message text)."""

    def _stop_after_tool(self, state: ReflexionState, run: RunSettings) -> str | None:
        """A stop reason checked as soon as the tool ran, before the model is called again."""
        return None

    def _responder_ready(self, turn: Turn, prompt: str | None, run: RunSettings) -> bool:
        """Whether building this turn's responder is quick, with nothing to read from a database or
        a file, so an async run builds it on the event loop instead of in a worker thread. By default
        it is not known (a subclass's hook may read anything): the thread is the safe choice."""
        return False

    def _tool_ready(self, state: ReflexionState, run: RunSettings) -> None:
        """Raise `DatabaseUnavailableError` when the tool cannot be reached, so a run ends
        `tool_unavailable` before any model call is spent. Tools that need no check do nothing."""

    def _tool_ready_quick(self, state: ReflexionState, run: RunSettings) -> bool:
        """Whether `_tool_ready` reads nothing this time, so an async run checks on the event loop. By
        default it is not known (a subclass's hook may read anything): the thread is the safe choice."""
        return False

    def _question_message(self, question: str) -> HumanMessage:
        """How a question enters the memory."""
        return HumanMessage(content=question)

    # -- the run's model and settings -------------------------------------------------

    @property
    def chat(self) -> BaseChatModel:
        """The agent's own chat model, made once from `conversation_factory`."""
        return self.models.for_run(None)

    @property
    def conversation(self) -> Any:
        """What `conversation_factory` returned, made once on first use (biochatter subclasses read
        `self.conversation.chat`). A run whose responders need no model never calls the factory."""
        return self.models.conversation

    def own_settings(self) -> RunSettings:
        """The settings of a hook called outside a run: the agent's own, no context (read once: an
        agent's settings are read when it is built)."""
        if self._own is None:
            self._own = own_settings(self.context_schema, self.parts().limits)
        return self._own

    @abstractmethod
    def parts(self) -> LoopParts:
        """The loop's parts (`graphs.loop_parts.LoopParts`): the family's rules, with this agent's
        hooks (`hook_parts`) in place of the parts they stand for."""

    def hook_parts(self) -> dict[str, Any]:
        """This agent's hooks, as the `LoopParts` they stand for (bound methods, taken when the graph is
        built): a subclass's own replace the package's."""
        return {
            "name": self.graph_name,
            "state_schema": self.state_schema,
            "context_schema": self.context_schema,
            "input_schema": self.input_schema,
            "output_schema": self.graph_output_schema,
            "responder": self._responder,
            "responder_ready": self._responder_ready,
            "action_of": self._action_of,
            "run_tool": self._run_tool,
            "tool_ready": self._tool_ready,
            "tool_ready_quick": self._tool_ready_quick,
            "stop_after_tool": self._stop_after_tool,
            "question_message": self._question_message,
            "result_of": self._parse_final_result,
            "result_blocks": not built_in_hooks(self, "_parse_final_result"),
        }

    # -- the graph and the run API ---------------------------------------------------------

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """The compiled state machine (`graphs.loop_target.compiled_loop`), made on first use."""
        if self._graph is None:
            self._graph = compiled_loop(self)
        return self._graph

    def resume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> ResultT:
        """Continue the run stored in `thread_id` (see `Runner.resume`)."""
        return self.runner.resume(thread_id, approval, **options)

    async def aresume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> ResultT:
        return await self.runner.aresume(thread_id, approval, **options)
