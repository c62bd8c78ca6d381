"""`ReflexionAgent`: draft, act, reflect and revise, compiled as a LangGraph state machine.

    START -> draft -> execute_tool -> revise -> (should_continue?) -> execute_tool | reply -> END

A subclass supplies biochatter's hooks, with biochatter's names and constructor:
`_tool_function`, `_create_initial_responder`, `_create_revise_responder`, and optionally
`_log_step_message`, `_log_final_result`, `_parse_final_result` and `_should_continue`.
The engine owns the rest: the revise step's score, the stop rules (step limit, score above
the threshold, non-empty result, empty result, no progress; each ends a run only when the evidence
agrees: `nodes.reflexion.stop_rules`), the skipping of an action that already ran, and a result
that is the best executed action, typed `ResultT`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any, Literal, TypeVar, cast

from langchain_core.messages import BaseMessage, ToolMessage
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.graphs.loop import AgentLoop
from reflexion_agents.graphs.loop_parts import LoopParts, Turn, route_on_stop
from reflexion_agents.graphs.loop_target import log_result, log_step, question_input
from reflexion_agents.graphs.reflexion_parts import ReflexionRules, reflexion_parts
from reflexion_agents.graphs.runner import RunOptions, StepCallback
from reflexion_agents.nodes.checkpoints import DURABLE
from reflexion_agents.nodes.common.responder import Responder, ResponderReply
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries
from reflexion_agents.nodes.graphdb.cypher_text import normalise_query
from reflexion_agents.nodes.reflexion.steps import default_action_of, run_from_message
from reflexion_agents.nodes.reflexion.stop_rules import STOP_RULES, StopRule
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.reflexion import ReflexionAgentResult, ReflexionState, ToolRun
from reflexion_agents.schemas.run_result import RunResult
from reflexion_agents.schemas.settings import AGENT_DEFAULTS, AgentSettings, checked_settings

__all__ = ["ReflexionAgent", "ResponderWithRetries", "StepCallback"]

ResultT = TypeVar("ResultT", bound=RunResult)


class ReflexionAgent(AgentLoop[ResultT]):
    """Abstract Reflexion agent with biochatter's constructor and hooks; a run returns `ResultT`
    (`ReflexionAgentResult` unless the agent declares its own `result_type`)."""

    #: The result a run returns; its fields are those of `ReflexionAgentResult`.
    result_type: type[ReflexionAgentResult] = ReflexionAgentResult
    #: How a skipped action is named to the model ("the same query that already ran").
    action_noun = "query"
    #: Whether the tool step checks each action against what the tool holds (`ToolOutcome.check`):
    #: only then can no rows be taken as the answer (`empty_result`, `not_in_graph`).
    checks_its_actions = False
    #: The stop rules a revision is checked against, in order (`nodes.reflexion.stop_rules.STOP_RULES`);
    #: an agent of the user's may add its own.
    stop_rules: tuple[StopRule, ...] = STOP_RULES

    def __init__(
        self,
        conversation_factory: Callable[[], Any],
        max_steps: int = AGENT_DEFAULTS.max_steps,
        *,
        score_threshold: float = AGENT_DEFAULTS.score_threshold,
        max_model_retries: int = AGENT_DEFAULTS.max_model_retries,
        max_repeats: int = AGENT_DEFAULTS.max_repeats,
        trust_non_empty_result: bool = AGENT_DEFAULTS.trust_non_empty_result,
        tool_results_in_prompt: int | None = AGENT_DEFAULTS.tool_results_in_prompt,
        checkpointer: Any = DURABLE,
        agent_logger: Any = None,
        **more_settings: Any,
    ) -> None:
        """`more_settings`: any other `AgentSettings` field (a stop rule's own setting), checked as the
        named ones are."""
        settings = checked_settings(
            AgentSettings,
            max_steps=max_steps,
            score_threshold=score_threshold,
            max_model_retries=max_model_retries,
            max_repeats=max_repeats,
            trust_non_empty_result=trust_non_empty_result,
            tool_results_in_prompt=tool_results_in_prompt,
            **more_settings,
        )
        super().__init__(
            conversation_factory,
            settings.max_steps,
            tool_results_in_prompt=settings.tool_results_in_prompt,
            checkpointer=checkpointer,
            agent_logger=agent_logger,
        )
        self.settings = settings
        self.max_model_retries = settings.max_model_retries
        self.score_threshold = settings.score_threshold
        self.max_repeats = settings.max_repeats
        self.trust_non_empty_result = settings.trust_non_empty_result
        self._rules: ReflexionRules | None = None

    # -- biochatter's hooks -------------------------------------------------------

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

    def _parse_final_result(self, output: ReflexionState) -> ResultT:
        """The result of a finished run: the executed action chosen as the answer, and its rows."""
        return cast(ResultT, self.rules().result_of(output))

    def _log_step_message(self, step: int, node: str, output: BaseMessage | None) -> None:
        """biochatter's hook: told of every step (to the logger, and to `agent_logger` when there is one)."""
        log_step(step, node, output)
        if self.agent_logger is not None:
            self.agent_logger.log_step_message(step, node, output)

    def _log_final_result(self, output: Any) -> None:
        """biochatter's hook: told of the result."""
        log_result(output)
        if self.agent_logger is not None:
            self.agent_logger.log_final_result(output)

    def get_logs(self) -> str:
        """biochatter's: the text the `agent_logger` kept ("" without one)."""
        return str(getattr(self.agent_logger, "logs", "") or "")

    def _should_continue(self, state: ReflexionState) -> Literal["execute_tool", "__end__"]:
        """Route after revise: run the revised action, or end once a stop reason is set."""
        return route_on_stop(state)

    # -- the engine's hooks, handed to the loop (`graphs.reflexion_parts`) -------------------

    def _responder(self, turn: Turn, prompt: str | None, run: RunSettings) -> Responder | ResponderWithRetries:
        """biochatter's responder hooks (they know nothing of a run: an agent whose responders depend on
        the run's settings, its model or database, overrides this instead)."""
        return self._create_initial_responder(prompt) if turn == "draft" else self._create_revise_responder(prompt)

    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        """Run the pending action: biochatter's `_tool_function` on the memory."""
        return run_from_message(state, self._tool_function(cast(list[BaseMessage], state["messages"])))

    def _action_of(self, parsed: BaseModel) -> str:
        return default_action_of(parsed)

    def _action_key(self, action: str) -> str:
        """What makes two actions the same for the repeat check: by default, equal once layout,
        comments and a trailing semicolon are left out (differences inside string literals count)."""
        return normalise_query(action)

    def _stop_reason(self, state: ReflexionState, run: RunSettings) -> str | None:
        """The stop rules, in order: step limit, score above threshold, non-empty result, empty result,
        no progress (`nodes.reflexion.stop_rules`: what evidence each needs)."""
        return self.rules().stop(state, run)

    def _revised(self, state: ReflexionState, reply: ResponderReply, run: RunSettings) -> dict[str, Any]:
        return self.rules().revised(state, reply, run)

    def rules(self) -> ReflexionRules:
        """What decides this agent's runs (`graphs.reflexion_parts.ReflexionRules`), with its hooks:
        its stop reason, what makes two actions the same, the action a revision proposes."""
        if self._rules is None:
            self._rules = ReflexionRules(
                settings=self.settings.model_dump(),
                result_type=self.result_type,
                checks_its_actions=self.checks_its_actions,
                stop_rules=self.stop_rules,
                key=self._action_key,
                action_of=self._action_of,
                stop_reason=self._stop_reason,
            )
        return self._rules

    def parts(self) -> LoopParts:
        """The loop's parts: the Reflexion rules, with this agent's hooks handed over as functions."""
        return reflexion_parts(self.rules(), **self.hook_parts())

    def hook_parts(self) -> dict[str, Any]:
        """biochatter's routing and this agent's revision step beside the hooks every agent hands over."""
        return {**super().hook_parts(), "route_after_revise": self._should_continue, "revised": self._revised}

    # -- running ----------------------------------------------------------------------

    def execute(self, question: str, prompt: str | None = None, **options: Unpack[RunOptions]) -> ResultT:
        """Run the loop on `question`; `prompt` is the task prompt (for the KG agent, the kg_prompt);
        `context` holds this run's settings (`context_schema`: model, step limit, ...)."""
        return self.runner.run(question_input(self, question, prompt), **options)

    async def aexecute(self, question: str, prompt: str | None = None, **options: Unpack[RunOptions]) -> ResultT:
        """`execute`, asynchronously: model calls are awaited, tool calls run in a worker thread."""
        return await self.runner.arun(question_input(self, question, prompt), **options)
