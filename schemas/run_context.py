"""Per-run settings: the `context_schema` of every graph.

A run passes them as `graph.invoke(inputs, context={...})`, or from a LangGraph
server client as `client.runs.create(..., context={...})`. Every field is
optional: left unset, it is the agent's own setting, which comes from the
environment (`REFLEXION_MODEL`, `REFLEXION_DATABASE_URL`, `REFLEXION_GRAPH`, ...)
when the agent was built with none. Nothing here can make a query write to the
graph: writes are a constructor option, never a run option.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from schemas.graphdb import GRAPH_NAME_PATTERN

MODEL_HELP = (
    "Chat model as LangChain's init_chat_model names it, 'provider:model': 'openai:gpt-4.1-mini' (any "
    "OpenAI-compatible server through OPENAI_BASE_URL), 'anthropic:...', 'ollama:...', 'google_genai:...' "
    "(their packages are extras). Default: $REFLEXION_MODEL."
)


class AgentContext(BaseModel):
    """Settings every agent reads at run time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, description=MODEL_HELP)
    max_steps: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Step limit for this run (tool steps; model turns for ReAct; attempts for extraction). "
        "It can lower the agent's limit, never raise it above the agent's ceiling.",
    )


class DatabaseContext(BaseModel):
    """Which graph database a run queries, and whether a human approves each query first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    database_url: str | None = Field(
        default=None,
        description="'embedded' (the embedded FalkorDB), 'falkordb://host:port', or a Neo4j URI "
        "('bolt://', 'neo4j://', 'neo4j+s://'; credentials in the URI). Only databases the operator "
        "allows in $REFLEXION_ALLOWED_DATABASES (and the agent's own) may be named. "
        "Default: the agent's database.",
    )
    graph: str | None = Field(
        default=None,
        pattern=GRAPH_NAME_PATTERN,
        description="The FalkorDB graph, or the Neo4j database (letters, digits, _, . and -). "
        "Default: $REFLEXION_GRAPH, else 'movies'.",
    )
    row_cap: int | None = Field(default=None, ge=1, description="Rows a query may return (default 100).")
    query_timeout: float | None = Field(default=None, gt=0, description="Seconds a query may run (default 10).")
    require_approval: bool | None = Field(
        default=None,
        description="Pause before each generated query runs (LangGraph interrupt); resume with "
        "{'action': 'approve'}, {'action': 'edit', 'query': ...} or {'action': 'reject'}. "
        "Default: $REFLEXION_REQUIRE_APPROVAL, else false.",
    )


class KGQueryContext(AgentContext, DatabaseContext):
    """Run settings of the knowledge-graph Reflexion agent."""

    score_threshold: float | None = Field(
        default=None, ge=0, le=10, description="Stop once the revise step scores a result at least this (0-10)."
    )


class Text2CypherContext(DatabaseContext):
    """Run settings of the text-to-Cypher flows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, description=MODEL_HELP)
    max_llm_calls: int | None = Field(default=None, ge=1, description="Model calls a question may cost (default 12).")
    max_retries: int | None = Field(default=None, ge=0, description="Corrections after the first query (default 3).")
    map_values: bool | None = Field(
        default=None,
        description="false runs the model's literals as written; otherwise a literal the graph does not store is "
        "replaced by the stored value it unmistakably means (never for IDs or codes). A run may turn it off only.",
    )
