"""`AgentLoop`: the state machine every agent is built on (three working nodes, and `reply`).

    START -> draft -> execute_tool -> revise -> (route) -> execute_tool | reply -> END

What the loop owns, for every agent: the typed state, the question (from `execute` or from
a user message a LangGraph client sent), the run's model and settings (its context, kept in
the state so a resumed run keeps them), the step limit that ends a run normally instead of
with a recursion error, token accounting, and running through the shared `Runner`.

What an agent adds is how a turn is answered and what ends the run. Two families build on it
as siblings: `ReflexionAgent` (graphs/engine.py: scored revisions, biochatter's hooks) and
`ActionLoopAgent` (one action per model turn: ReAct, validated extraction). The nodes
themselves, the same for every agent, are in `graphs/loop_nodes.py`.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.graphs.loop_nodes import LoopNodes
from reflexion_agents.graphs.runner import ResumeOptions, Runner
from reflexion_agents.nodes.checkpoints import resolve_checkpointer
from reflexion_agents.nodes.common.responder import Responder, ResponderReply
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries
from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.resolve import chat_model_from_env, resolve_chat_model
from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.nodes.run_context import current_context
from reflexion_agents.nodes.run_limits import recorded
from reflexion_agents.nodes.settings_checks import checkpointer_setting
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.reflexion import ReflexionInput, ReflexionOutput, ReflexionState, ToolRun
from reflexion_agents.schemas.run_context import AgentContext
from reflexion_agents.schemas.run_result import RunResult

logger = logging.getLogger(__name__)

ResultT = TypeVar("ResultT", bound=RunResult)
Turn = Literal["draft", "revise"]


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
        self.runner: Runner[ResultT] = Runner(self)
        self._conversation: Any = None
        self._chat: BaseChatModel | None = None
        self._models = KeyedCache()  # models runs name in their context, one client per name
        self._graph: CompiledStateGraph[Any, Any, Any, Any] | None = None

    # -- what an agent supplies ----------------------------------------------------

    @abstractmethod
    def _responder(self, turn: Turn, prompt: str | None) -> Responder | ResponderWithRetries | Any:
        """The responder answering this turn (anything with `respond`/`arespond`, or biochatter's
        `ResponderWithRetries`)."""

    @abstractmethod
    def _action_of(self, parsed: BaseModel) -> str:
        """The action a parsed draft or revision proposes, as the text the tool step runs."""

    @abstractmethod
    def _run_tool(self, state: ReflexionState) -> ToolRun:
        """Run the pending action."""

    @abstractmethod
    def _revised(self, state: ReflexionState, reply: ResponderReply) -> dict[str, Any]:
        """The state update of a revise turn, with the stop reason it ends the run with, if any."""

    @abstractmethod
    def _parse_final_result(self, output: ReflexionState) -> ResultT:
        """The result of a finished run, read from typed state (never from message text)."""

    def _stop_after_tool(self, state: ReflexionState) -> str | None:
        """A stop reason checked as soon as the tool ran, before the model is called again."""
        return None

    def _skipped(self, state: ReflexionState) -> ToolRun | None:
        """A tool step that runs nothing (the action already ran), or None to run the action."""
        return None

    def _responder_ready(self, turn: Turn, prompt: str | None) -> bool:
        """Whether building this turn's responder is quick, with nothing to read from a database or
        a file, so an async run builds it on the event loop instead of in a worker thread. By default
        it is not known (a subclass's hook may read anything): the thread is the safe choice."""
        return False

    def _built_in_hooks(self, *names: str) -> bool:
        """Whether these hooks are this package's own: not replaced on the instance, nor overridden
        by a class of the user's (whose hook may read a file or a database)."""
        for name in names:
            if name in vars(self):
                return False
            owner = next(c for c in type(self).__mro__ if name in vars(c))
            if not owner.__module__.startswith(f"{__package__}."):
                return False
        return True

    def _model_ready(self) -> bool:
        """Whether this run's chat model is made already: making one may read files (a client's
        certificates) or run a user's `conversation_factory`."""
        named = self.run_context().model
        return self._models.peek(named) is not None if named else self._chat is not None

    def _tool_ready(self, state: ReflexionState) -> None:
        """Raise `DatabaseUnavailableError` when the tool cannot be reached, so a run ends
        `tool_unavailable` before any model call is spent. Tools that need no check do nothing."""

    def _route_labels(self) -> dict[str, tuple[str, str]]:
        """What the drawing writes on each node's two exits: (going on, stopping, with the stop
        reasons that can end the run there). Labels only: the routes themselves decide."""
        return {
            "draft": ("drafted", "no question, model error, database down"),
            "execute_tool": ("result", "database down"),
            "revise": ("revised", "model error"),
        }

    def _question_message(self, question: str) -> HumanMessage:
        """How a question enters the memory."""
        return HumanMessage(content=question)

    def _route_after_revise(self, state: ReflexionState) -> Literal["execute_tool", "__end__"]:
        """Run the revised action, or end once a stop reason is set."""
        return "__end__" if state.get("stop_reason") else "execute_tool"

    # -- logging (biochatter's hooks) ------------------------------------------------

    def _log_step_message(self, step: int, node: str, output: BaseMessage | None) -> None:
        if logger.isEnabledFor(logging.INFO):  # a lone surrogate would make a UTF-8 handler print a traceback
            logger.info("step %d, %s: %s", step, node, without_surrogates(str(getattr(output, "content", output))))
        if self.agent_logger is not None:
            self.agent_logger.log_step_message(step, node, output)

    def _log_final_result(self, output: Any) -> None:
        if logger.isEnabledFor(logging.INFO):
            answer = getattr(output, "answer", getattr(output, "value", None))
            logger.info("final (%s): %s", output.stop_reason, without_surrogates(str(answer)))
        if self.agent_logger is not None:
            self.agent_logger.log_final_result(output)

    def get_logs(self) -> str:
        """biochatter's: the text the `agent_logger` kept ("" without one)."""
        return str(getattr(self.agent_logger, "logs", "") or "")

    # -- the run's model and settings -------------------------------------------------

    @property
    def chat(self) -> BaseChatModel:
        """This run's chat model: the one its context names (one shared client per name), else the
        agent's own, made once from `conversation_factory`."""
        named = self.run_context().model
        if named:
            return self._models.get(named, lambda: chat_model_from_env(named))
        if self._chat is None:
            self._chat = resolve_chat_model(self.conversation)
        return self._chat

    @property
    def conversation(self) -> Any:
        """What `conversation_factory` returned, made once on first use (biochatter subclasses read
        `self.conversation.chat`). A run whose responders need no model never calls the factory."""
        if self._conversation is None:
            self._conversation = self.conversation_factory()
        return self._conversation

    def run_context(self) -> Any:
        """This run's settings (`context_schema`); every field unset outside a run."""
        return current_context(self.context_schema)

    def _max_steps_ceiling(self) -> int:
        """The highest step limit a run may ask for; the compiled graph's recursion limit fits it."""
        return self.max_steps

    def _max_steps(self, state: ReflexionState) -> int:
        """This run's step limit: the one recorded when the run started (`nodes.run_limits`), which a
        resume's context may lower; while a run starts, its context's (at most the ceiling), else the
        agent's."""
        asked = self.run_context().max_steps
        ceiling, own = recorded("max_steps", self._max_steps_ceiling()), recorded("max_steps", self.max_steps)
        limit: int = min(asked, ceiling) if asked is not None else own
        return limit

    def _run_limits(self) -> dict[str, Any]:
        """The limits a starting run records, so they hold when another agent or process resumes it.
        An agent with limits of its own (timeouts, row caps) adds them."""
        return {"max_steps": self._max_steps({})}

    # -- the graph and the run API (`graphs.runner.RunTarget`) ------------------------------

    def build_graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        """Compile the state machine; nodes run sync under `invoke` and async under `ainvoke`."""
        compiled = LoopNodes(self).builder().compile(checkpointer=self.checkpointer, name=self.graph_name)
        # Any caller (execute, a notebook, LangGraph server) gets a recursion limit that fits any
        # step limit a run may ask for.
        return compiled.with_config(recursion_limit=self.recursion_limit())

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]:
        if self._graph is None:
            self._graph = self.build_graph()
        return self._graph

    @property
    def graph_name(self) -> str:
        return type(self).__name__

    def recursion_limit(self, steps: int | None = None) -> int:
        # Each step is execute_tool + revise; the draft and a margin come on top. A resumed run may
        # have recorded more steps than this agent's ceiling: its limit is the run's (`steps`).
        return 2 * max(self._max_steps_ceiling(), steps or 0) + 5

    def question_input(self, question: str, prompt: str | None = None) -> dict[str, Any]:
        if not isinstance(question, str) or not question.strip():
            raise ConfigurationError("the question must be a non-empty string")
        question = question.strip()
        return {"messages": [self._question_message(question)], "question": question, "prompt": prompt}

    def result_of(self, state: dict[str, Any]) -> ResultT:
        return self._parse_final_result(state)  # type: ignore[arg-type]

    def log_step(self, step: int, node: str, message: BaseMessage | None) -> None:
        self._log_step_message(step, node, message)

    def logs_steps(self) -> bool:
        """True with biochatter's `agent_logger`, a `log_step` or `_log_step_message` of the user's
        own (a subclass's, or one set on the instance), or this module's logger at INFO."""
        own_hook = not self._built_in_hooks("log_step", "_log_step_message")
        return own_hook or self.agent_logger is not None or logger.isEnabledFor(logging.INFO)

    def log_result(self, result: ResultT) -> None:
        self._log_final_result(result)

    def resume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> ResultT:
        """Continue the run stored in `thread_id` (see `Runner.resume`)."""
        return self.runner.resume(thread_id, approval, **options)

    async def aresume(self, thread_id: str, approval: Any = None, **options: Unpack[ResumeOptions]) -> ResultT:
        return await self.runner.aresume(thread_id, approval, **options)
