"""Traces and summaries of an evaluation run."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class AgentAnswer(BaseModel):
    """What an agent or flow ended with: the query its answer rests on, and that query's rows."""

    cypher: str | None = None
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    executed: bool = Field(default=False, description="The final query ran without error.")
    stop_reason: str | None = None
    steps: int = Field(default=0, description="Queries run (tool steps or attempts).")
    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None


class QuestionTrace(BaseModel):
    """One question: its gold query and result, the agent's answer, the score and the cost."""

    index: int
    question: str
    type: str
    gold_cypher: str
    gold_rows: int | None = None
    excluded: str | None = Field(
        default=None, description="Why the question was not scored (a gold query the backend cannot run)."
    )
    answer: AgentAnswer | None = None
    correct: bool | None = None
    latency_s: float | None = None
    fault: str | None = None


class GroupScore(BaseModel):
    """The scores of a group of scored questions (all of them, one question type, one fault kind)."""

    name: str
    scored: int
    correct: int
    executable: int
    gold_non_empty: int = Field(description="Scored questions whose gold result has rows.")
    correct_non_empty: int
    mean_steps: float
    mean_llm_calls: float
    mean_input_tokens: float
    mean_output_tokens: float
    tokens_per_correct: float = Field(
        default=0.0,
        description="Tokens (in and out) the group spent, over its correct answers: what a right answer costs.",
    )
    llm_calls_per_correct: float = Field(
        default=0.0, description="Model calls the group made, over its correct answers."
    )
    latency_p50_s: float
    latency_p95_s: float
    stop_reasons: dict[str, int]


class EvaluationReport(BaseModel):
    agent: str
    model: str
    dataset: str
    backend: str
    questions: int
    excluded: int
    excluded_reasons: dict[str, int]
    not_applicable: int = Field(default=0, description="Questions a fault could not be applied to (corrupting model).")
    overall: GroupScore
    by_type: list[GroupScore]
    by_fault: list[GroupScore] = Field(default_factory=list)
    wall_s: float
    concurrency: int
    options: dict[str, Any] = Field(default_factory=dict, description="The run's settings, to repeat it.")
    traces: list[QuestionTrace]
