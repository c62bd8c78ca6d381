"""Per-run settings: the `context_schema` of every graph.

A run passes them as `graph.invoke(inputs, context={...})`, or from a LangGraph
server client as `client.runs.create(..., context={...})`. Every field is
optional: left unset, it is the agent's own setting, which comes from the
environment (`REFLEXION_MODEL`, `REFLEXION_DATABASE_URL`, `REFLEXION_GRAPH`, ...)
when the agent was built with none. Nothing here can make a query write to the
graph: writes are a constructor option, never a run option.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from reflexion_agents.schemas.graphdb import GRAPH_NAME_PATTERN
from reflexion_agents.schemas.settings import AgentSettings, DatabaseSettings, FlowSettings, field_like, plain_number

MODEL_HELP = (
    "Chat model as LangChain's init_chat_model names it, 'provider:model': 'openai:gpt-4.1-mini' (any "
    "OpenAI-compatible server through OPENAI_BASE_URL), 'anthropic:...', 'ollama:...', 'google_genai:...' "
    "(their packages are extras). Default: $REFLEXION_MODEL."
)


def run_setting(settings: type[BaseModel], name: str, note: str = "", *, mention_default: bool = True) -> Any:
    """An optional run-context field (unset: the agent's own setting) with the bounds and description
    of the settings field `name`; the description names that field's default unless
    `mention_default` is false, then adds `note`."""
    info = settings.model_fields[name]
    text = (info.description or name).rstrip(".")
    if mention_default and info.default is not None:
        text += f" (default {plain_number(info.default)})"
    # Lax, as JSON clients send them ("5", "true"): a run's context is parsed, a constructor's argument checked.
    described = " ".join(filter(None, (text + ".", note)))
    return field_like(settings, name, default=None, description=described, strict=False)


class AgentContext(BaseModel):
    """Settings every agent reads at run time."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, description=MODEL_HELP)
    max_steps: int | None = run_setting(
        AgentSettings,
        "max_steps",
        "It can lower the agent's limit, never raise it above the agent's ceiling.",
        mention_default=False,  # each agent has its own
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
    row_cap: int | None = run_setting(DatabaseSettings, "row_cap")
    query_timeout: float | None = run_setting(DatabaseSettings, "query_timeout")
    require_approval: bool | None = run_setting(DatabaseSettings, "require_approval")


class KGQueryContext(AgentContext, DatabaseContext):
    """Run settings of the knowledge-graph Reflexion agent."""

    score_threshold: float | None = run_setting(AgentSettings, "score_threshold")


class Text2CypherContext(DatabaseContext):
    """Run settings of the text-to-Cypher flows."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str | None = Field(default=None, description=MODEL_HELP)
    max_llm_calls: int | None = run_setting(FlowSettings, "max_llm_calls")
    max_retries: int | None = run_setting(FlowSettings, "max_retries")
    map_values: bool | None = run_setting(
        FlowSettings, "map_values", "A run may turn it off only.", mention_default=False
    )
