"""`ReActAgent`: reason, call a tool, observe, until `finish`; tools are plain Python functions.

    agent = ReActAgent(tools=[multiply, add, divide], max_steps=6, add_llm_as_fallback=True)
    agent.call("What is 465 times 321, then add 95297, then divide by 13.2?")   # the answer
    agent.execute(...)                                                        # answer, steps, stop reason

Models with native tool calling get the tools bound (one call per step is
required); other models write `{"thought": ..., "action": "fn(a=1)"}`, parsed
without `eval`. On the engine: `draft` and `revise` are the model's turns,
`execute_tool` runs the call, and the run stops on `finish` or at `max_steps`
with the best answer so far. Subclass and override any hook to change a step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.tools import BaseTool

from reflexion_agents.graphs.action_loop_agent import ActionLoopAgent
from reflexion_agents.graphs.action_parts import ActionRules, action_parts
from reflexion_agents.graphs.loop_parts import LoopParts
from reflexion_agents.nodes.checkpoints import DURABLE
from reflexion_agents.nodes.common.responder import usage_of
from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.nodes.models.run_models import RunModels
from reflexion_agents.nodes.models.wire import sendable, without_surrogates
from reflexion_agents.nodes.prompts.react_tools import (
    DEFAULT_EXAMPLES,
    REACT_SYSTEM_TEMPLATE,
    check_template,
    react_system_prompt,
)
from reflexion_agents.nodes.react.action_responder import ActionResponder
from reflexion_agents.nodes.react.function_step import run_function_action
from reflexion_agents.nodes.react.results import react_result
from reflexion_agents.nodes.react.tool_protocol import read_tool_reply
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.nodes.tools.call_expression import FunctionExpression
from reflexion_agents.nodes.tools.functions import (
    FINISH,
    LLM_FALLBACK,
    LLM_FALLBACK_DESCRIPTION,
    FunctionTool,
    finish,
    function_tools,
)
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.react import ReActAction, ReActResult
from reflexion_agents.schemas.reflexion import ReflexionState, TokenUsage, ToolOutcome, ToolRun
from reflexion_agents.schemas.settings import REACT_DEFAULTS, ReActSettings, checked_settings


def llm_tool(input: str) -> str:
    """Placeholder whose signature is the fallback tool's schema; the agent answers it with its model."""
    raise NotImplementedError


class ReActTurn:
    """The tool-calling ReAct agent's turn and tool step: its tools (a user's, `finish`, and the LLM
    fallback when asked for), its prompt, and one responder per chat model (a run may name its own)."""

    def __init__(
        self,
        tools: Sequence[Callable[..., Any] | BaseTool | FunctionTool] = (),
        *,
        add_llm_as_fallback: bool = False,
        template: str = REACT_SYSTEM_TEMPLATE,
        examples: Sequence[FunctionExpression] | None = None,
        native_tool_calls: bool | None = None,
    ) -> None:
        offered: list[Callable[..., Any] | BaseTool | FunctionTool] = list(tools)
        if add_llm_as_fallback:
            offered.append(FunctionTool(llm_tool, name=LLM_FALLBACK, description=LLM_FALLBACK_DESCRIPTION))
        offered.append(FunctionTool(finish))
        self.tools = function_tools(offered)  # a user tool named `finish` or `llm_tool` is refused here
        self.add_llm_as_fallback = add_llm_as_fallback
        self.template = check_template(template)
        self.examples = [*(examples or []), *DEFAULT_EXAMPLES]
        self.native_tool_calls = native_tool_calls
        self._responders = KeyedCache()

    def _bound_model(self, chat: Any) -> tuple[Any, bool]:
        """(runnable, native): the model with the tools bound, or the bare model for the text format."""
        if self.native_tool_calls is not False:
            try:
                return chat.bind_tools([t.tool for t in self.tools.values()], tool_choice="any"), True
            except NotImplementedError:
                if self.native_tool_calls:
                    raise ConfigurationError(
                        f"{type(chat).__name__} has no native tool calling; use native_tool_calls=None"
                    ) from None
        return chat, False

    def _make_responder(self, chat: Any) -> ActionResponder:
        runnable, native = self._bound_model(chat)
        system = react_system_prompt(self.template, list(self.tools.values()), self.examples, native=native)
        return ActionResponder(runnable, system, read_tool_reply)

    def responder(self, chat: BaseChatModel) -> ActionResponder:
        return self._responders.get(id(chat), lambda: self._make_responder(chat))

    def run_tool(self, state: ReflexionState, chat: BaseChatModel) -> ToolRun:
        """Run the model's call; the LLM fallback is answered by `chat`, the run's model."""
        special = {LLM_FALLBACK: lambda args: ask_llm(chat, args)} if self.add_llm_as_fallback else {}
        return run_function_action(self.tools, ReActAction.model_validate(state["parsed_action"]), special)

    @staticmethod
    def done(outcome: ToolOutcome) -> str | None:
        return "finished" if outcome.detail.get("tool") == FINISH and outcome.error is None else None


def ask_llm(chat: BaseChatModel, args: dict[str, Any]) -> tuple[str, TokenUsage]:
    """The LLM-fallback tool: the run's model answers a sub-question from its own knowledge. Its answer
    is the observation: plain text (`reply.text` is a `str` subclass, which pydantic re-encodes and
    refuses if it holds a lone surrogate), with any lone surrogate shown as U+FFFD."""
    reply = chat.invoke(sendable([HumanMessage(content=str(args["input"]))]))
    return without_surrogates(reply.text), usage_of(reply)


DONE_LABEL = "finish called"


def react_parts(turn: ReActTurn, models: RunModels, max_steps: int, **parts: Any) -> LoopParts:
    """The tool-calling ReAct agent's loop parts, from functions (`graphs.action_parts`)."""
    rules = ActionRules(max_steps, turn.done, DONE_LABEL)
    own: dict[str, Any] = {
        "name": "ReActAgent",
        "run_tool": lambda state, run: turn.run_tool(state, models.for_run(run.context.model)),
        "result_of": react_result,
    }
    return action_parts(rules, models, turn.responder, **{**own, **parts})


class ReActAgent(ActionLoopAgent[ReActResult]):
    """Tool-calling ReAct with a built-in `finish` tool and an optional LLM-fallback tool."""

    done_label = DONE_LABEL

    def __init__(
        self,
        tools: Sequence[Callable[..., Any] | BaseTool | FunctionTool] = (),
        conversation_factory: Callable[[], Any] | None = None,
        max_steps: int = REACT_DEFAULTS.max_steps,
        *,
        add_llm_as_fallback: bool = False,
        template: str = REACT_SYSTEM_TEMPLATE,
        examples: Sequence[FunctionExpression] | None = None,
        native_tool_calls: bool | None = None,
        checkpointer: Any = DURABLE,
    ) -> None:
        max_steps = checked_settings(ReActSettings, max_steps=max_steps).max_steps
        super().__init__(conversation_factory or chat_model_from_env, max_steps, checkpointer=checkpointer)
        self.turn = ReActTurn(
            tools,
            add_llm_as_fallback=add_llm_as_fallback,
            template=template,
            examples=examples,
            native_tool_calls=native_tool_calls,
        )
        self.tools, self.add_llm_as_fallback = self.turn.tools, add_llm_as_fallback
        self.template, self.examples, self.native_tool_calls = self.turn.template, self.turn.examples, native_tool_calls

    def _turn_responder(self, chat: BaseChatModel) -> ActionResponder:
        return self.turn.responder(chat)

    @property
    def system_prompt(self) -> str:
        """The planner's system prompt, as the agent's own model receives it."""
        return self._turn_responder(self.chat).system_prompt

    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        return self.turn.run_tool(state, self.models.for_run(run.context.model))

    def _done(self, outcome: ToolOutcome) -> str | None:
        return self.turn.done(outcome)

    def _parse_final_result(self, output: ReflexionState) -> ReActResult:
        return react_result(output)

    def call(self, query: str, **kwargs: Any) -> str | None:
        """The answer alone, as LightRAG's `ReActAgent.call` returns it."""
        return self.execute(query, **kwargs).answer
