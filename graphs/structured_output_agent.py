"""`StructuredOutputReflectionAgent`: extract a pydantic model from a passage, validate, reflect, retry.

    agent = StructuredOutputReflectionAgent(CarCollection, max_retries=3)
    result = agent.extract("I own two cars: a Fiat Panda with 45Hp and a Honda Civic with 330Hp.")
    result.value      # a validated CarCollection, or None
    result.attempts   # every output and its error

On the engine: `draft` extracts, `execute_tool` validates, `revise` extracts again
with the wrong output and its error in the memory; the run stops as soon as an
output validates, or after `max_retries` retries (so at most `max_retries + 1`
extractions; a run with `max_retries=0` makes exactly one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from pydantic import BaseModel
from typing_extensions import Unpack

from reflexion_agents.graphs.action_loop_agent import ActionLoopAgent
from reflexion_agents.graphs.action_parts import ActionRules, action_parts
from reflexion_agents.graphs.loop_parts import LoopParts
from reflexion_agents.graphs.runner import RunOptions
from reflexion_agents.nodes.checkpoints import DURABLE
from reflexion_agents.nodes.extraction.validation import read_extraction_reply, run_validation, validate_data
from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.resolve import chat_model_from_env
from reflexion_agents.nodes.models.run_models import RunModels
from reflexion_agents.nodes.prompts.extraction import EXTRACTION_SYSTEM_PROMPT, extraction_prompt
from reflexion_agents.nodes.react.action_responder import ActionResponder
from reflexion_agents.nodes.reflexion.steps import outcomes_of, usage_of_state
from reflexion_agents.nodes.run_settings import RunSettings
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.extraction import ExtractionAttempt, ExtractionResult, ExtractionStopReason, RawExtraction
from reflexion_agents.schemas.reflexion import ReflexionState, ToolOutcome, ToolRun
from reflexion_agents.schemas.settings import EXTRACTION_DEFAULTS, ExtractionSettings, checked_settings


class ExtractionTurn:
    """Validated extraction's turn and tool step: the schema to fill, one extractor per chat model (the
    schema bound as a tool where the model calls tools, else JSON read from its text), the validation."""

    def __init__(self, output_schema: type[BaseModel], tool_calling: bool | None = None) -> None:
        if not (isinstance(output_schema, type) and issubclass(output_schema, BaseModel)):
            raise ConfigurationError(f"output_schema must be a pydantic model class, got {output_schema!r}")
        self.output_schema, self.tool_calling = output_schema, tool_calling
        self._extractors = KeyedCache()

    def _make_extractor(self, chat: Any) -> ActionResponder:
        runnable = chat
        if self.tool_calling is not False:
            try:
                runnable = chat.bind_tools([self.output_schema], tool_choice=self.output_schema.__name__)
            except NotImplementedError:  # a plain-text model: the JSON is read from its text
                if self.tool_calling:
                    raise ConfigurationError(
                        f"{type(chat).__name__} has no tool calling; use tool_calling=None"
                    ) from None
        return ActionResponder(runnable, EXTRACTION_SYSTEM_PROMPT, read_extraction_reply)

    def responder(self, chat: BaseChatModel) -> ActionResponder:
        return self._extractors.get(id(chat), lambda: self._make_extractor(chat))

    def question_message(self, question: str) -> HumanMessage:
        return HumanMessage(content=extraction_prompt(question, self.output_schema))

    @staticmethod
    def action_of(parsed: BaseModel) -> str:
        output: str = parsed.output  # type: ignore[attr-defined]
        return output

    def run_tool(self, state: Any) -> ToolRun:
        return run_validation(self.output_schema, RawExtraction.model_validate(state["parsed_action"]))

    @staticmethod
    def done(outcome: ToolOutcome) -> str | None:
        return "validated" if outcome.error is None else None

    def result_of(self, output: Any) -> ExtractionResult:
        outcomes = outcomes_of(output)
        attempts = [ExtractionAttempt(attempt=o.step, output=o.action, error=o.error) for o in outcomes]
        validated = outcomes[-1] if outcomes and output.get("stop_reason") == "validated" else None
        error = output.get("error")
        if validated is None and error is None:
            error = f"no output fitted {self.output_schema.__name__} in {len(attempts)} attempts"
            if attempts:
                error += f"; the last error: {attempts[-1].error}"
        return ExtractionResult(
            value=validate_data(self.output_schema, validated.detail["data"])[0] if validated else None,
            ok=validated is not None,
            stop_reason=cast(ExtractionStopReason | None, output.get("stop_reason")),
            attempts=attempts,
            usage=usage_of_state(output),
            error=None if validated else error,
        )


DONE_LABEL = "valid output"


def extraction_parts(turn: ExtractionTurn, models: RunModels, max_retries: int, **parts: Any) -> LoopParts:
    """Validated extraction's loop parts, from functions (`graphs.action_parts`): at most `max_retries`
    corrections after the first attempt."""
    rules = ActionRules(max_retries + 1, turn.done, DONE_LABEL)
    own: dict[str, Any] = {
        "name": "StructuredOutputReflectionAgent",
        "run_tool": lambda state, run: turn.run_tool(state),
        "result_of": turn.result_of,
        "question_message": turn.question_message,
        "action_of": turn.action_of,
    }
    return action_parts(rules, models, turn.responder, **{**own, **parts})


class StructuredOutputReflectionAgent(ActionLoopAgent[ExtractionResult]):
    """Validated structured output from tool-calling and plain-text models alike."""

    done_label = DONE_LABEL

    def __init__(
        self,
        output_schema: type[BaseModel],
        conversation_factory: Callable[[], Any] | None = None,
        max_retries: int = EXTRACTION_DEFAULTS.max_retries,
        *,
        tool_calling: bool | None = None,
        checkpointer: Any = DURABLE,
    ) -> None:
        self.turn = ExtractionTurn(output_schema, tool_calling)
        max_retries = checked_settings(ExtractionSettings, max_retries=max_retries).max_retries
        super().__init__(conversation_factory or chat_model_from_env, max_retries + 1, checkpointer=checkpointer)
        self.output_schema, self.max_retries, self.tool_calling = output_schema, max_retries, tool_calling

    def _turn_responder(self, chat: BaseChatModel) -> ActionResponder:
        return self.turn.responder(chat)

    def _question_message(self, question: str) -> HumanMessage:
        return self.turn.question_message(question)

    def _action_of(self, parsed: BaseModel) -> str:
        return self.turn.action_of(parsed)

    def _run_tool(self, state: ReflexionState, run: RunSettings) -> ToolRun:
        return self.turn.run_tool(state)

    def _done(self, outcome: ToolOutcome) -> str | None:
        return self.turn.done(outcome)

    def _parse_final_result(self, output: ReflexionState) -> ExtractionResult:
        return self.turn.result_of(output)

    def extract(self, passage: str, **options: Unpack[RunOptions]) -> ExtractionResult:
        """Extract `output_schema` from `passage`; the result says whether it validated, and why not."""
        return self.execute(passage, **options)

    async def aextract(self, passage: str, **options: Unpack[RunOptions]) -> ExtractionResult:
        return await self.aexecute(passage, **options)
