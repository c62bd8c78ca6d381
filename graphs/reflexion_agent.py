"""`ReflexionAgent`: draft, act, reflect and revise, compiled as a LangGraph state machine.

    START -> draft -> execute_tool -> revise -> (should_continue?) -> execute_tool | END

Subclasses supply the seed's hooks (`_tool_function`, `_create_initial_responder`,
`_create_revise_responder`, optionally the logging and parsing hooks). The engine
owns the loop: typed state, stop rules, duplicate actions, token accounting, and a
step limit that ends normally with the best result instead of a recursion error.

The ReAct and structured-output agents run on this same loop through a few more
hooks: `_run_tool` (a tool step with its own message kind and state), `_action_of`
(how a parsed reply names its action), `_stop_after_tool` (stop rules checked right
after the tool ran), `state_schema` and `skip_repeated_actions`.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from nodes.checkpoints import DURABLE, INTERRUPT, paused_on, resolve_checkpointer, resume_plan
from nodes.common.responder import Responder, ResponderReply
from nodes.common.responder_with_retries import ResponderWithRetries, arespond_with, respond_with
from nodes.keyed_cache import KeyedCache
from nodes.models.resolve import chat_model_from_env, resolve_chat_model
from nodes.models.wire import without_surrogates
from nodes.reflexion.prompt_view import prompt_messages
from nodes.reflexion.scoring import parse_score
from nodes.reflexion.steps import (
    default_action_of,
    draft_update,
    fresh_run,
    outcomes_of,
    revise_update,
    run_from_message,
    skipped_tool_run,
    stopped_tool_message,
    tool_update,
    unavailable_tool_run,
    usage_of_state,
    with_notice,
)
from nodes.reflexion.stop_rules import (
    DEFAULT_MAX_REPEATS,
    DEFAULT_MAX_STEPS,
    DEFAULT_SCORE_THRESHOLD,
    MAX_STEPS_LIMIT,
    answer_outcome,
    check_stop,
    satisfied_by_score,
    unbelieved_score_note,
)
from nodes.run_context import checked_context, current_context, runtime_context, started_context, stored_context
from nodes.run_limits import limits_of, recorded, recorded_limits, refuse_raised_limits, with_limits
from nodes.settings_checks import checkpointer_setting, whole_number
from schemas.errors import ConfigurationError, DatabaseUnavailableError
from schemas.reflexion import (
    ReflexionAgentResult,
    ReflexionInput,
    ReflexionOutput,
    ReflexionState,
    StopReason,
    ToolRun,
)
from schemas.run_context import AgentContext

logger = logging.getLogger(__name__)

__all__ = ["ReflexionAgent", "ResponderWithRetries", "StepCallback"]


StepCallback = Callable[[int, str, BaseMessage | None, dict[str, Any]], None]


class ReflexionAgent(ABC):
    """Abstract Reflexion agent with the seed's constructor and hooks."""

    #: The graph's state; a subclass may extend `ReflexionState` with fields of its own.
    state_schema: type = ReflexionState
    #: What a run takes and returns, and its per-run settings (`graph.invoke(..., context=...)`):
    #: the forms LangGraph Studio and SDK clients show.
    input_schema: type = ReflexionInput
    graph_output_schema: type = ReflexionOutput
    context_schema: type[AgentContext] = AgentContext
    #: Skip an action that already ran in this run (right for queries; wrong where a repeat
    #: means something new, such as ReAct's "next match" lookup).
    skip_repeated_actions: bool = True

    def __init__(
        self,
        conversation_factory: Callable[[], Any],
        max_steps: int = DEFAULT_MAX_STEPS,
        *,
        score_threshold: float = DEFAULT_SCORE_THRESHOLD,
        max_model_retries: int = 2,
        max_repeats: int = DEFAULT_MAX_REPEATS,
        trust_non_empty_result: bool = True,
        tool_results_in_prompt: int | None = None,
        checkpointer: Any = DURABLE,
        agent_logger: Any = None,
    ) -> None:
        whole_number("max_steps", max_steps, low=1, high=MAX_STEPS_LIMIT)
        if not callable(conversation_factory):
            raise ConfigurationError("conversation_factory must be a callable that returns a chat model")
        whole_number("max_repeats", max_repeats, low=1)
        if (
            isinstance(score_threshold, bool)
            or not isinstance(score_threshold, (int, float))
            or not 0 <= score_threshold <= 10
        ):
            raise ConfigurationError(f"score_threshold must be a number from 0 to 10, got {score_threshold!r}")
        self.conversation_factory = conversation_factory
        self.max_steps = max_steps
        self.score_threshold = float(score_threshold)
        self.max_model_retries = whole_number("max_model_retries", max_model_retries, low=0, high=10)
        self.max_repeats = max_repeats
        self.trust_non_empty_result = bool(trust_non_empty_result)
        self.tool_results_in_prompt = whole_number("tool_results_in_prompt", tool_results_in_prompt, low=1, none=True)
        self.checkpointer = resolve_checkpointer(checkpointer_setting(checkpointer))
        #: biochatter's `ReflexionAgentLogger` (or any object with `log_step_message` and
        #: `log_final_result`): told of every step and of the result, as in biochatter.
        self.agent_logger = agent_logger
        self._conversation: Any = None
        self._chat: BaseChatModel | None = None
        self._models = KeyedCache()  # models runs name in their context, one client per name
        self._graph: CompiledStateGraph | None = None

    # -- hooks a subclass implements (the seed's API) ------------------------

    @abstractmethod
    def _tool_function(self, state: list[BaseMessage]) -> ToolMessage:
        """Run the newest action in the memory; return a ToolMessage whose artifact is a ToolOutcome."""

    @abstractmethod
    def _create_initial_responder(self, prompt: str | None = None) -> Responder | ResponderWithRetries:
        """The responder for the draft step: the engine's `Responder`, or biochatter's
        `ResponderWithRetries` (its `respond` returns the model's AIMessage)."""

    @abstractmethod
    def _create_revise_responder(self, prompt: str | None = None) -> Responder | ResponderWithRetries:
        """The responder for the revise step: scores the last result and revises the action."""

    def _log_step_message(self, step: int, node: str, output: BaseMessage | None) -> None:
        if logger.isEnabledFor(logging.INFO):  # a lone surrogate would make a UTF-8 handler print a traceback
            shown = without_surrogates(str(getattr(output, "content", output)))
            logger.info("step %d, %s: %s", step, node, shown)
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

    def _parse_final_result(self, output: ReflexionState) -> ReflexionAgentResult:
        """The result of a finished run, read from typed state (never from message text)."""
        outcomes = outcomes_of(output)
        chosen = answer_outcome(outcomes, output.get("stop_reason"))
        return ReflexionAgentResult(
            answer=chosen.action if chosen else None,
            tool_result=chosen.rows if chosen and chosen.error is None else None,
            columns=chosen.columns if chosen else [],
            truncated=chosen.truncated if chosen else False,
            stop_reason=output.get("stop_reason"),
            steps=output.get("steps", 0),
            score=output.get("last_score"),
            usage=usage_of_state(output),
            error=output.get("error") or (chosen.error if chosen else None),
            outcomes=outcomes,
        )

    def _score_from_revision(self, parsed: BaseModel) -> float | None:
        return parse_score(getattr(parsed, "score", None))

    def _action_of(self, parsed: BaseModel) -> str:
        """The action a parsed draft or revision proposes, as the text the tool step runs."""
        return default_action_of(parsed)

    def _run_tool(self, state: ReflexionState) -> ToolRun:
        """Run the pending action. By default, the seed's `_tool_function` on the memory."""
        return run_from_message(state, self._tool_function(state["messages"]))

    def _max_steps_ceiling(self) -> int:
        """The highest step limit a run may ask for; the compiled graph's recursion limit fits it."""
        return self.max_steps

    def run_context(self) -> Any:
        """This run's settings (`context_schema`); every field unset outside a run."""
        return current_context(self.context_schema)

    def _max_steps(self, state: ReflexionState) -> int:
        """This run's step limit: the one recorded when the run started (`nodes.run_limits`), which a
        resume's context may lower; while a run starts, its context's (at most the ceiling), else the
        agent's."""
        asked = self.run_context().max_steps
        ceiling, own = recorded("max_steps", self._max_steps_ceiling()), recorded("max_steps", self.max_steps)
        return min(asked, ceiling) if asked is not None else own

    def _run_limits(self) -> dict[str, Any]:
        """The limits a starting run records, so they hold when another agent or process resumes it.
        A subclass with limits of its own (timeouts, row caps) adds them."""
        return {"max_steps": self._max_steps({})}

    def _score_threshold(self) -> float:
        asked = getattr(self.run_context(), "score_threshold", None)
        return float(asked) if asked is not None else self.score_threshold

    def _stop_after_tool(self, state: ReflexionState) -> StopReason | None:
        """Stop rules checked as soon as the tool ran, before the model is called again.
        The Reflexion loop has none: its revise step scores every result first."""
        return None

    def _stop_reason(self, state: ReflexionState) -> StopReason | None:
        """The stop rules, in order: step limit, score above threshold, non-empty result, no progress."""
        return check_stop(
            state,
            max_steps=self._max_steps(state),
            score_threshold=self._score_threshold(),
            max_repeats=self.max_repeats,
            trust_non_empty_result=self.trust_non_empty_result,
        )

    def _should_continue(self, state: ReflexionState) -> Literal["execute_tool", "__end__"]:
        """Route after revise: run the revised action, or end once a stop reason is set."""
        return END if state.get("stop_reason") else "execute_tool"

    # -- engine ---------------------------------------------------------------

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

    def _revised(self, state: ReflexionState, reply: ResponderReply) -> dict[str, Any]:
        update = revise_update(state, reply, self._score_from_revision, self._action_of)
        if "stop_reason" not in update:
            revised = {**state, **update}
            update["stop_reason"] = self._stop_reason(revised)
            stopped = stopped_tool_message(update["messages"], update["stop_reason"]) if update["stop_reason"] else None
            if stopped is not None:
                update["messages"].append(stopped)
            elif satisfied_by_score(revised, self._score_threshold()) is False:
                update["notice"] = unbelieved_score_note(revised)
        return update

    def _new_question(self, state: ReflexionState) -> dict[str, Any]:
        """A run started with messages only (LangGraph server, Studio, `graph.invoke`) asks the last
        user message: it becomes the run's question, rewritten as `_question_message` makes it."""
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        if not isinstance(last, HumanMessage):
            return {}
        if last.content == self._question_message(state.get("question") or "").content:
            return {}  # `execute` already shaped it
        question = last.text.strip()
        message = self._question_message(question)
        message.id = last.id  # replaces the raw message in the memory
        return {"question": question, "messages": [message]}

    def _drafted(self, asked: dict[str, Any], reply: ResponderReply) -> dict[str, Any]:
        update = draft_update(reply, self._action_of)
        if asked:
            update = {**asked, **update, "messages": [*asked["messages"], *update.get("messages", [])]}
        return update

    def _asked(self, state: ReflexionState) -> tuple[dict[str, Any], ReflexionState, dict[str, Any] | None]:
        """(the question update, the state the draft sees, or the update that ends a run with no question)."""
        asked = self._new_question(state)
        messages = state.get("messages") or []
        state = {**state, **asked, "messages": [*messages[: -1 if asked else None], *asked.get("messages", [])]}  # type: ignore[typeddict-item]
        if (state.get("question") or "").strip():
            return asked, state, None
        ended = {
            **asked,
            **fresh_run(),
            "stop_reason": "invalid_input",
            "error": "the run has no question: send a non-empty user message",
        }
        return asked, state, ended

    def _tool_ready(self, state: ReflexionState) -> None:
        """Raise `DatabaseUnavailableError` when the tool cannot be reached, so a run ends
        `tool_unavailable` before any model call is spent. The engine's tools need no check."""

    @staticmethod
    def _unavailable_before_draft(asked: dict[str, Any], error: Exception) -> dict[str, Any]:
        return {**asked, **fresh_run(), "stop_reason": "tool_unavailable", "error": str(error)}

    def _prompt_view(self, state: ReflexionState) -> list[BaseMessage]:
        """The memory as the model sees it: older tool results shortened when `tool_results_in_prompt` is set."""
        return prompt_messages(state["messages"], self.tool_results_in_prompt)

    def _draft_node(self, state: ReflexionState) -> dict[str, Any]:
        asked, state, ended = self._asked(state)
        if ended is not None:
            return ended
        try:
            self._tool_ready(state)
        except DatabaseUnavailableError as e:
            return self._unavailable_before_draft(asked, e)
        return self._drafted(
            asked, respond_with(self._create_initial_responder(state.get("prompt")), self._prompt_view(state))
        )

    async def _adraft_node(self, state: ReflexionState) -> dict[str, Any]:
        asked, state, ended = self._asked(state)
        if ended is not None:
            return ended
        try:
            # Checking the tool and building a responder may read the database: keep them off the event loop.
            await asyncio.to_thread(self._tool_ready, state)
        except DatabaseUnavailableError as e:
            return self._unavailable_before_draft(asked, e)
        responder = await asyncio.to_thread(self._create_initial_responder, state.get("prompt"))
        return self._drafted(asked, await arespond_with(responder, self._prompt_view(state)))

    def _revise_node(self, state: ReflexionState) -> dict[str, Any]:
        return self._revised(
            state, respond_with(self._create_revise_responder(state.get("prompt")), self._prompt_view(state))
        )

    async def _arevise_node(self, state: ReflexionState) -> dict[str, Any]:
        responder = await asyncio.to_thread(self._create_revise_responder, state.get("prompt"))
        return self._revised(state, await arespond_with(responder, self._prompt_view(state)))

    def _execute_tool_node(self, state: ReflexionState) -> dict[str, Any]:
        skipped = skipped_tool_run(state) if self.skip_repeated_actions else None
        if skipped is not None:
            return tool_update(state, with_notice(skipped, state.get("notice")))
        try:
            run = self._run_tool(state)
        except DatabaseUnavailableError as e:
            return tool_update(state, unavailable_tool_run(state, e), stop_reason="tool_unavailable")
        update = tool_update(state, with_notice(run, state.get("notice")))
        update["stop_reason"] = self._stop_after_tool({**state, **update})
        return update

    async def _aexecute_tool_node(self, state: ReflexionState) -> dict[str, Any]:
        return await asyncio.to_thread(self._execute_tool_node, state)

    @staticmethod
    def _route_after_draft(state: ReflexionState) -> Literal["execute_tool", "__end__"]:
        """Only a draft the model could not produce ends the run here."""
        return END if state.get("stop_reason") else "execute_tool"

    @staticmethod
    def _route_after_execute_tool(state: ReflexionState) -> Literal["revise", "__end__"]:
        return END if state.get("stop_reason") else "revise"

    def _in_run(
        self, node: Callable[[Any], Any], anode: Callable[[Any], Any], starts: bool
    ) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
        """A node (sync and async) that reads the run's stored context; the run's first node stores
        the context the run was started with and the limits in force, so a resumed run keeps its
        settings and limits whoever resumes it (`nodes.run_limits`), and which graph it is."""
        graph = type(self).__name__

        def begin(state: ReflexionState) -> dict[str, Any] | None:
            if not starts:
                refuse_raised_limits(state.get("run_context"), runtime_context())
                return state.get("run_context")
            with stored_context(None), recorded_limits(None):  # not those of a run this one runs inside
                return with_limits(started_context(graph), self._run_limits())

        def sync(state: ReflexionState) -> Any:
            run_context = begin(state)
            with stored_context(run_context), recorded_limits(run_context):
                update = node(state)
            return {**update, "run_context": run_context} if starts else update

        async def asynchronous(state: ReflexionState) -> Any:
            run_context = begin(state)
            with stored_context(run_context), recorded_limits(run_context):
                update = await anode(state)
            return {**update, "run_context": run_context} if starts else update

        return sync, asynchronous

    def build_graph(self) -> CompiledStateGraph:
        """Compile the state machine; nodes run sync under `invoke` and async under `ainvoke`."""
        builder = StateGraph(
            self.state_schema,
            context_schema=self.context_schema,
            input_schema=self.input_schema,
            output_schema=self.graph_output_schema,
        )
        for name, node, anode in (
            ("draft", self._draft_node, self._adraft_node),
            ("execute_tool", self._execute_tool_node, self._aexecute_tool_node),
            ("revise", self._revise_node, self._arevise_node),
        ):
            sync, asynchronous = self._in_run(node, anode, starts=name == "draft")
            builder.add_node(name, RunnableLambda(sync, afunc=asynchronous, name=name))
        builder.add_edge(START, "draft")
        builder.add_conditional_edges("draft", self._route_after_draft)
        builder.add_conditional_edges("execute_tool", self._route_after_execute_tool)
        builder.add_conditional_edges("revise", self._should_continue)
        compiled = builder.compile(checkpointer=self.checkpointer, name=type(self).__name__)
        # Any caller (execute, a notebook, LangGraph server) gets a recursion limit that fits any
        # step limit a run may ask for.
        return compiled.with_config(recursion_limit=self._recursion_limit())

    @property
    def graph(self) -> CompiledStateGraph:
        if self._graph is None:
            self._graph = self.build_graph()
        return self._graph

    def _question_message(self, question: str) -> HumanMessage:
        """How a question enters the memory."""
        return HumanMessage(content=question)

    def _inputs(self, question: str, prompt: str | None) -> dict[str, Any]:
        if not isinstance(question, str) or not question.strip():
            raise ConfigurationError("the question must be a non-empty string")
        question = question.strip()
        return {"messages": [self._question_message(question)], "question": question, "prompt": prompt}

    def _recursion_limit(self, steps: int | None = None) -> int:
        # Each step is execute_tool + revise; the draft and a margin come on top. A resumed run may
        # have recorded more steps than this agent's ceiling: its limit is the run's (`steps`).
        return 2 * max(self._max_steps_ceiling(), steps or 0) + 5

    def _config(self, thread_id: str | None, steps: int | None = None) -> dict[str, Any]:
        config: dict[str, Any] = {"recursion_limit": self._recursion_limit(steps)}
        if self.checkpointer is not None:
            config["configurable"] = {"thread_id": thread_id or uuid.uuid4().hex}
        return config

    def _report(self, chunk: dict[str, Any], state: dict[str, Any], on_step: StepCallback | None) -> None:
        for node, update in chunk.items():
            if node == INTERRUPT:
                continue
            messages = (update or {}).get("messages") or []
            message = messages[0] if messages else None  # the node's own message comes first
            step = (update or {}).get("steps", state.get("steps", 0))
            self._log_step_message(step, node, message)
            if on_step is not None:
                on_step(step, node, message, update or {})

    def _finish(self, state: dict[str, Any], config: dict[str, Any], pending: Any = None) -> Any:
        result = self._parse_final_result(state)
        fields = getattr(type(result), "model_fields", {})
        extra: dict[str, Any] = {}
        if "thread_id" in fields:
            extra["thread_id"] = config.get("configurable", {}).get("thread_id")
        if pending is not None and "pending_approval" in fields:
            extra.update(stop_reason="awaiting_approval", pending_approval=pending)
        result = result.model_copy(update=extra) if extra else result
        self._log_final_result(result)
        return result

    def _run(
        self,
        inputs: Any,
        thread_id: str | None,
        on_step: StepCallback | None,
        context: Any = None,
        steps: int | None = None,
    ) -> Any:
        """Stream one run of the graph from `inputs`, reporting each step; return the parsed result.
        `steps`: a resumed run's recorded step limit, which the recursion limit must fit."""
        state, pending = inputs, None
        config = self._config(thread_id, steps)
        context = checked_context(self.context_schema, context)
        for mode, chunk in self.graph.stream(inputs, config, stream_mode=["updates", "values"], context=context):
            if mode == "values":
                state = chunk
            else:
                pending = paused_on(chunk) or pending
                self._report(chunk, state, on_step)
        return self._finish(state, config, pending)

    async def _arun(
        self,
        inputs: Any,
        thread_id: str | None,
        on_step: StepCallback | None,
        context: Any = None,
        steps: int | None = None,
    ) -> Any:
        state, pending = inputs, None
        config = self._config(thread_id, steps)
        context = checked_context(self.context_schema, context)
        async for mode, chunk in self.graph.astream(inputs, config, stream_mode=["updates", "values"], context=context):
            if mode == "values":
                state = chunk
            else:
                pending = paused_on(chunk) or pending
                self._report(chunk, state, on_step)
        return self._finish(state, config, pending)

    def resume(
        self,
        thread_id: str,
        approval: Any = None,
        *,
        on_step: StepCallback | None = None,
        context: dict[str, Any] | None = None,
    ) -> Any:
        """Continue the run stored in `thread_id` from its last saved step: after a crash or Ctrl-C,
        or, with `approval` ("approve", {"action": "edit", "query": ...}, "reject"), after a pause.
        A finished run returns its result again without calling the model.

        The run keeps the limits it started with (steps, query timeout, row cap, read-only, approval),
        not this agent's: a `context` may lower them, and one that would raise them is refused with a
        `ConfigurationError` before anything runs (`nodes.run_limits`)."""
        inputs, finished = resume_plan(self.graph, self.checkpointer, thread_id, approval, type(self).__name__)
        if finished is not None:
            return self._finish(finished, self._config(thread_id))
        return self._run(inputs, thread_id, on_step, context, self._resume_steps(thread_id))

    async def aresume(
        self,
        thread_id: str,
        approval: Any = None,
        *,
        on_step: StepCallback | None = None,
        context: dict[str, Any] | None = None,
    ) -> Any:
        inputs, finished = resume_plan(self.graph, self.checkpointer, thread_id, approval, type(self).__name__)
        if finished is not None:
            return self._finish(finished, self._config(thread_id))
        steps = await asyncio.to_thread(self._resume_steps, thread_id)
        return await self._arun(inputs, thread_id, on_step, context, steps)

    def _resume_steps(self, thread_id: str) -> int | None:
        """The step limit the stored run started with (None if it recorded none): the recursion limit
        must fit it."""
        values = self.graph.get_state({"configurable": {"thread_id": thread_id}}).values
        return limits_of(values.get("run_context")).get("max_steps")

    def execute(
        self,
        question: str,
        prompt: str | None = None,
        *,
        on_step: StepCallback | None = None,
        thread_id: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> ReflexionAgentResult:
        """Run the loop on `question`; `prompt` is the task prompt (for the KG agent, the kg_prompt);
        `context` holds this run's settings (`context_schema`: model, step limit, ...)."""
        return self._run(self._inputs(question, prompt), thread_id, on_step, context)

    async def aexecute(
        self,
        question: str,
        prompt: str | None = None,
        *,
        on_step: StepCallback | None = None,
        thread_id: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> ReflexionAgentResult:
        """`execute`, asynchronously: model calls are awaited, tool calls run in a worker thread."""
        return await self._arun(self._inputs(question, prompt), thread_id, on_step, context)
