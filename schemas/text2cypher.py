"""Structured outputs, state and results of the text-to-Cypher flows."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, Field, field_validator
from typing_extensions import TypedDict

from reflexion_agents.schemas.constants import (
    Flow as Flow,  # the flows' names, in a module the CLI's parser reads cheaply
)
from reflexion_agents.schemas.query_check import QueryCheck
from reflexion_agents.schemas.query_check import ValueMapping as ValueMapping  # the flows' results name it
from reflexion_agents.schemas.reflexion import TokenUsage
from reflexion_agents.schemas.reply_text import stop_words
from reflexion_agents.schemas.run_result import RunResult
from reflexion_agents.schemas.state_channels import MessageMemory

FlowStopReason = Literal[
    "answered",  # the rows were summarised into an answer
    "refused",  # the guardrail judged the question out of the graph's scope
    "query_failed",  # the query failed and the flow does not correct (naive)
    "retries_exhausted",  # corrections ran out; the answer uses the best result so far
    "budget",  # the cap on LLM calls was reached; the answer uses the best result so far
    "tool_unavailable",  # the database could not be reached
    "model_error",  # the model's replies could not be used
    "invalid_input",  # the question was empty
    "rejected",  # the reviewer rejected the query the flow paused on (human approval)
    "awaiting_approval",  # paused before a query runs: resume the thread with a decision
]


class GuardrailDecision(BaseModel):
    """Whether the graph described in the prompt can answer the question."""

    answerable: bool = Field(description="True if the graph's data can answer the question.")
    reason: str = Field(default="", description="One sentence: why.")
    suggestions: list[str] = Field(
        default_factory=list, description="If not answerable: 2-3 questions the graph can answer."
    )


class StandaloneQuestion(BaseModel):
    """The user's latest question, rewritten to be understood without the conversation before it."""

    question: str = Field(description="The question, with what its references stand for named.")


class CypherQuery(BaseModel):
    """One read-only Cypher statement that answers the question."""

    cypher: str = Field(description="The Cypher statement, without comments or explanations.")


class Evaluation(BaseModel):
    """Whether the rows answer the question."""

    ok: bool = Field(description="True if the rows are enough to answer the question.")
    critique: str = Field(
        default="", description="If not ok: what is wrong with the query or its rows, and how to fix it."
    )


class Summary(BaseModel):
    """The answer to the question, grounded in the rows."""

    answer: str

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, answer: str) -> str:
        """A blank summary would end the run "answered" with no answer: the model is asked again instead."""
        if not answer.strip():
            raise ValueError("the answer is blank: write the answer to the question")
        return answer


class SubQuestions(BaseModel):
    """The information to fetch, as independent questions that can run in parallel."""

    questions: list[str] = Field(description="One question if a single Cypher statement can answer it; at most 4.")


class InformationCheck(BaseModel):
    """Whether the information gathered answers the question."""

    enough: bool
    missing: list[str] = Field(
        default_factory=list, description="If not enough: further questions to fetch (at most 3)."
    )


class Attempt(BaseModel):
    """One query the flow ran, and what came of it."""

    cypher: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = False
    error: str | None = None
    critique: str | None = None
    mappings: list[ValueMapping] = Field(default_factory=list)
    check: QueryCheck | None = Field(default=None, description="The schema check of the query before it ran.")


class SubAnswer(BaseModel):
    """A planner sub-question and the query that fetched it."""

    question: str
    attempt: Attempt


def add_or_reset(left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Parallel branches append their results; `None` clears the list for a new question."""
    return [] if right is None else [*(left or []), *right]


class Text2CypherState(TypedDict, total=False):
    """The flows' state. Lists of attempts hold plain dicts (`Attempt` dumps) so any checkpointer stores them."""

    messages: MessageMemory  # each question and the answer message of its run
    question: str
    asked_id: str | None  # the user message a run took as its question: a later run does not take it again
    schema_text: str
    examples: list[dict[str, str]]
    cypher: str  # the query the next step runs
    mappings: list[dict[str, str]]  # the value mappings of that query
    check: dict[str, Any] | None  # the schema check of that query (a `QueryCheck` dump)
    run_context: dict[str, Any]  # the context the run started with: a resume without one keeps these settings
    attempts: list[dict[str, Any]]  # every query run, in order
    feedback: str | None  # the database error or the critique the next correction reads
    corrections: int
    evaluated_ok: bool
    can_correct: bool  # set by execute and evaluate: another correction is allowed and the budget keeps its calls
    usage: dict[str, int]
    stop_reason: FlowStopReason | None
    answer: str | None
    suggestions: list[str]
    learned: bool
    error: str | None
    # written by the last node, `reply`, with the answer message (`Text2CypherResult.reply_fields`)
    query: str | None
    columns: list[str] | None
    rows: list[list[Any]] | None
    thread_id: str | None  # the run's thread, as a client continues it
    # the iterative planner
    round: int
    pending: list[str]  # sub-questions the next round fetches
    subanswers: Annotated[list[dict[str, Any]], add_or_reset]  # filled in parallel by `Send`


class Text2CypherInput(TypedDict, total=False):
    """What a flow takes: one question in plain language, as `question` or as a user message (what
    LangGraph Studio and chat clients send)."""

    question: str
    messages: MessageMemory


class Text2CypherOutput(TypedDict, total=False):
    """What a flow returns: the answer (the last message, an `AIMessage`, says it too), the query it
    is based on and its rows, why it stopped, every query it ran and what it cost."""

    answer: str | None
    query: str | None
    columns: list[str] | None
    rows: list[list[Any]] | None
    thread_id: str | None  # the run's thread, as a client continues it
    messages: MessageMemory
    question: str
    stop_reason: FlowStopReason | None
    attempts: list[dict[str, Any]]
    subanswers: Annotated[list[dict[str, Any]], add_or_reset]
    suggestions: list[str]
    learned: bool
    usage: dict[str, int]
    error: str | None


class Text2CypherResult(RunResult):
    """The end of one question: the answer, what it is based on, and why the flow stopped."""

    answer: str | None
    stop_reason: FlowStopReason | None
    cypher: str | None = Field(default=None, description="The query the answer is based on.")
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = False
    mappings: list[ValueMapping] = Field(default_factory=list)
    attempts: list[Attempt] = Field(default_factory=list)
    subanswers: list[SubAnswer] = Field(default_factory=list)
    suggestions: list[str] = Field(default_factory=list)
    learned: bool = Field(
        default=False, description="True if the corrected query was stored as a new few-shot example."
    )
    usage: TokenUsage = Field(default_factory=TokenUsage)
    error: str | None = None

    @property
    def answered(self) -> bool:
        return self.stop_reason == "answered"

    def reply_text(self) -> str:
        """The answer in words; a run that did not answer also says why it stopped (a refusal says it
        itself, with the questions the graph can answer)."""
        if self.answered and self.answer:
            return self.answer
        said = self.answer or "No answer." + (f" {self.error}" if self.error else "")
        if self.stop_reason == "refused":
            return said
        return f"{said}\n\nStopped: {stop_words(self.stop_reason)}."

    restated_fields: ClassVar[tuple[str, ...]] = ("cypher",)

    def reply_fields(self) -> dict[str, Any]:
        """The summary is the answer (None when there is none); the message says why there is none."""
        ran = self.cypher is not None and self.query_ran
        return {
            "answer": self.answer,
            "query": self.cypher,
            "columns": self.columns if ran else None,
            "rows": self.rows if ran else None,
        }

    @property
    def query(self) -> str | None:
        return self.cypher

    @property
    def query_rows(self) -> list[list[Any]]:
        return self.rows

    @property
    def query_ran(self) -> bool:
        tried = self.attempts or [s.attempt for s in self.subanswers]
        return any(a.cypher == self.cypher and a.error is None for a in tried)

    @property
    def queries_tried(self) -> int:
        return len(self.attempts) or len(self.subanswers)

    def summary(self) -> str:
        return f"Stopped: {self.stop_reason}\n{self.answer or self.error or ''}"
