"""Structured outputs of the knowledge-graph query agent, as users of biochatter's `KGQueryReflexionAgent` know them."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field

from reflexion_agents.schemas.reflexion import ReflexionAgentResult, StopReason


class GenerateQuery(BaseModel):
    """Generate the query."""

    answer: str = Field(description="Cypher query for graph database according to user's question.")
    reflection: str = Field(
        default="",
        description="Your reflection on the initial answer, critique of what to improve",
    )
    search_queries: list[str] = Field(default_factory=list, description="query for graph database")


class ReviseQuery(GenerateQuery):
    """Revise your previous query according to your question."""

    answer: str = Field(default="", description="The previous query, as it was executed.")
    revised_query: str = Field(description="Revised query")
    score: str | int | float | None = Field(
        default=None,
        description=(
            "the score for the query based on its query result"
            " and relevance to the user's question,"
            " with 0 representing the lowest score and 10 representing the highest score."
        ),
    )


KGQueryStopReason = Literal[StopReason, "rejected"]
"""The engine's stop reasons, and `rejected`: the reviewer rejected the query the run paused on."""


class KGQueryResult(ReflexionAgentResult):
    """`ReflexionAgentResult` with the knowledge-graph agent's stop reasons."""

    action_noun: ClassVar[str] = "query"
    action_language: ClassVar[str] = "cypher"

    stop_reason: str | None = Field(
        description="Why the run stopped: a `KGQueryStopReason`, or a reason of a subclass's own."
    )
