"""Structured outputs of the knowledge-graph query agent, as users of biochatter's `KGQueryReflexionAgent` know them."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema, WithJsonSchema

from reflexion_agents.schemas.reflexion import ReflexionAgentResult, StopReason

#: How `ReviseQuery.score` is declared to the model: a number (the field takes what models write,
#: "8/10" and "eight" too, and `nodes.reflexion.scoring` reads them).
SCORE_SCHEMA = {"type": "number"}


def _without_defaults(schema: dict[str, Any]) -> None:
    """A tool definition's fields without their defaults: an optional field is one not required, and
    the model reads the definition with every call."""
    for field_schema in schema.get("properties", {}).values():
        field_schema.pop("default", None)


class GenerateQuery(BaseModel):
    """Generate the query."""

    model_config = ConfigDict(json_schema_extra=_without_defaults)

    # Fields the model is not asked for are kept out of the tool definition (`SkipJsonSchema`): it is
    # resent with every call, and a draft has nothing to reflect on yet. A reply that fills them is
    # still read, as biochatter's models do.
    answer: str = Field(description="The Cypher query.")
    reflection: SkipJsonSchema[str] = Field(
        default="",
        description="Your reflection on the initial answer, critique of what to improve",
    )
    search_queries: SkipJsonSchema[list[str]] = Field(default_factory=list, description="query for graph database")


class ReviseQuery(GenerateQuery):
    """Revise your previous query according to your question."""

    answer: SkipJsonSchema[str] = Field(default="", description="The previous query, as it was executed.")
    reflection: str = Field(default="", description="What is wrong or missing in the result.")
    revised_query: str = Field(description="The query to run next.")
    score: Annotated[str | int | float | None, WithJsonSchema(SCORE_SCHEMA)] = Field(
        default=None, description="0-10: how well the result shown answers the question."
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
