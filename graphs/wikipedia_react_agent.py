"""`WikipediaReActAgent`: the few-shot, text-protocol ReAct agent over Wikipedia, on the Reflexion engine.

    agent = WikipediaReActAgent(checkpointer=InMemorySaver())
    result = agent("Who was Milhouse named after?", thread_id="chat-1")
    result.answer, result.sources
    agent("And who voices him?", thread_id="chat-1")  # the same conversation goes on

The model writes `Thought N` / `Action N` with `<search>`, `<lookup>` or `<finish>`;
generation stops at the closing tag, the action runs, and `Observation N` is
appended. On the engine: `draft` and `revise` are the model's turns, `execute_tool`
runs the action, and the run stops when the model finishes or `max_calls` model
calls have been made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from typing_extensions import Unpack

from reflexion_agents.graphs.action_loop_agent import ActionLoopAgent
from reflexion_agents.graphs.action_parts import ActionRules, action_parts
from reflexion_agents.graphs.loop_parts import LoopParts
from reflexion_agents.graphs.runner import RunOptions
from reflexion_agents.nodes.checkpoints import DURABLE
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.nodes.models.run_models import RunModels
from reflexion_agents.nodes.prompts.react_text import REACT_PROMPT, STOP_SEQUENCES, question_text
from reflexion_agents.nodes.react.action_responder import ActionResponder
from reflexion_agents.nodes.react.results import react_result
from reflexion_agents.nodes.react.text_protocol import read_text_reply
from reflexion_agents.nodes.react.wikipedia_step import run_wikipedia_action
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.nodes.tools.functions import FINISH
from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
from reflexion_agents.nodes.tools.wikipedia_backends import WikipediaBackend
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.react import ReActAction, ReActResult, WikipediaReActState
from reflexion_agents.schemas.reflexion import ReflexionState, ToolOutcome, ToolRun
from reflexion_agents.schemas.settings import MAX_CALLS_LIMIT, WIKIPEDIA_DEFAULTS, WikipediaSettings, checked_settings


def check_max_calls(max_calls: Any) -> int:
    """`max_calls` if it is a whole number within `WikipediaSettings`' bound."""
    return checked_settings(WikipediaSettings, max_calls=max_calls).max_calls


def load_prompt(prompt: str | os.PathLike[str]) -> str:
    """The ReAct prompt, given as text or as a path to a file holding it.

    A trailing `Question\\n{question}` (the Gemini ReAct notebook's prompt format) is dropped: here the
    question is the first message of each turn, so follow-up questions share the prompt.
    """
    if isinstance(prompt, os.PathLike) or (
        isinstance(prompt, str) and "\n" not in prompt and len(prompt) < 1024 and Path(prompt).is_file()
    ):
        text = Path(prompt).read_text(encoding="utf-8")
    elif isinstance(prompt, str):
        text = prompt
    else:
        raise ConfigurationError(f"prompt must be text or a path, got {type(prompt).__name__}")
    text = text.replace("{question}", "").rstrip()
    if text.endswith("Question"):
        text = text[: -len("Question")].rstrip()
    if not text:
        raise ConfigurationError("the ReAct prompt is empty")
    return text + "\n"


class WikipediaTurn:
    """The text-protocol ReAct turn and tool step: the prompt, the pages, and how the model is called
    (stopped at the closing action tags, with the caller's generation settings)."""

    def __init__(
        self,
        prompt: str | os.PathLike[str] = REACT_PROMPT,
        wikipedia: WikipediaTools | WikipediaBackend | None = None,
        generation_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.prompt = load_prompt(prompt)
        self.tools = wikipedia if isinstance(wikipedia, WikipediaTools) else WikipediaTools(wikipedia)
        self.generation_kwargs = dict(generation_kwargs or {})
        if "stop" in self.generation_kwargs:
            raise ConfigurationError(
                "generation_kwargs must not set `stop`: the agent stops on the closing action tags"
            )

    def responder(self, chat: BaseChatModel) -> ActionResponder:
        runnable = chat.bind(stop=STOP_SEQUENCES, **self.generation_kwargs)
        return ActionResponder(runnable, self.prompt, read_text_reply)

    @staticmethod
    def question_message(question: str) -> HumanMessage:
        return HumanMessage(content=question_text(question))

    def run_tool(self, state: Any) -> ToolRun:
        action = ReActAction.model_validate(state["parsed_action"])
        return run_wikipedia_action(self.tools, action, cast(WikipediaReActState, state))

    @staticmethod
    def done(outcome: ToolOutcome) -> str | None:
        return "finished" if outcome.detail.get("tool") == FINISH else None


DONE_LABEL = "finish called"


def wikipedia_parts(turn: WikipediaTurn, models: RunModels, max_calls: int, **parts: Any) -> LoopParts:
    """The text-protocol ReAct agent's loop parts, from functions (`graphs.action_parts`); a run may ask
    for up to `MAX_CALLS_LIMIT` model calls, above the agent's own."""
    rules = ActionRules(max_calls, turn.done, DONE_LABEL, MAX_CALLS_LIMIT)
    own: dict[str, Any] = {
        "name": "WikipediaReActAgent",
        "state_schema": WikipediaReActState,
        "run_tool": lambda state, run: turn.run_tool(state),
        "result_of": react_result,
        "question_message": turn.question_message,
    }
    return action_parts(rules, models, turn.responder, **{**own, **parts})


class WikipediaReActAgent(ActionLoopAgent[ReActResult]):
    """Text-protocol ReAct with `search` / `lookup` / `finish` over Wikipedia (or a local corpus)."""

    state_schema = WikipediaReActState
    done_label = DONE_LABEL

    def __init__(
        self,
        conversation_factory: Callable[[], Any] | None = None,
        max_calls: int = WIKIPEDIA_DEFAULTS.max_calls,
        *,
        prompt: str | os.PathLike[str] = REACT_PROMPT,
        wikipedia: WikipediaTools | WikipediaBackend | None = None,
        generation_kwargs: dict[str, Any] | None = None,
        checkpointer: Any = DURABLE,
    ) -> None:
        self.turn = WikipediaTurn(prompt, wikipedia, generation_kwargs)
        super().__init__(
            conversation_factory or chat_model_from_env, check_max_calls(max_calls), checkpointer=checkpointer
        )
        self.max_steps_ceiling = MAX_CALLS_LIMIT  # `max_calls` may be set per call, above the agent's default
        self.prompt, self.tools, self.generation_kwargs = self.turn.prompt, self.turn.tools, self.turn.generation_kwargs

    @property
    def max_calls(self) -> int:
        return self.max_steps

    def _turn_responder(self, chat: BaseChatModel) -> ActionResponder:
        return self.turn.responder(chat)

    def _question_message(self, question: str) -> HumanMessage:
        return self.turn.question_message(question)

    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        return self.turn.run_tool(state)

    def _done(self, outcome: ToolOutcome) -> str | None:
        return self.turn.done(outcome)

    def _parse_final_result(self, output: ReflexionState) -> ReActResult:
        return react_result(output)

    @staticmethod
    def _with_calls(options: RunOptions, max_calls: int | None) -> RunOptions:
        """`max_calls` is the run's step limit (`context={"max_steps": ...}` says the same)."""
        if max_calls is not None:
            options["context"] = {**(options.get("context") or {}), "max_steps": check_max_calls(max_calls)}
        return options

    def execute(self, question: str, *, max_calls: int | None = None, **options: Unpack[RunOptions]) -> ReActResult:
        """Answer `question` in at most `max_calls` model calls; in a checkpointed thread, earlier turns
        stay in the memory."""
        return self.runner.ask(question, **self._with_calls(options, max_calls))

    async def aexecute(
        self, question: str, *, max_calls: int | None = None, **options: Unpack[RunOptions]
    ) -> ReActResult:
        return await self.runner.aask(question, **self._with_calls(options, max_calls))

    __call__ = execute  # `agent(question)`, as the Gemini ReAct notebook calls its agent
