"""Each agent and flow as LangGraph's own agents are made: a function that returns the compiled graph.

    from reflexion_agents import build_kg_query_graph
    graph = build_kg_query_graph(model=ChatOpenAI(model="gpt-4o-mini"), database=connect(url), max_steps=5)
    state = graph.invoke({"messages": [("user", "Who directed The Matrix?")]})
    state["answer"], state["rows"], state["stop_reason"]

As with LangGraph's `create_react_agent`, a graph keeps no threads unless given a `checkpointer`
(`InMemorySaver()`, or `nodes.checkpoints.durable_checkpointer()` for the SQLite or PostgreSQL one
`$REFLEXION_CHECKPOINTS` names); a run may lower a limit with `context={"max_steps": 2}` (the
graph's `context_schema` lists the fields). `model` is a LangChain chat model or a
`provider:model` name, or None for the one the run's context or the environment names.
`settings` are the agent's own (`score_threshold=8`, `row_cap=50`, ...): one it does not have is a
`ConfigurationError` naming it.

These functions are the public way in; the graphs are built by the agent classes of the same
family (`graphs/kg_query_agent.py`, `graphs/react_agent.py`, ...), whose node names, pictures and
stop reasons they keep.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph.state import CompiledStateGraph
from pydantic import BaseModel

from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.text2cypher import Flow

Graph = CompiledStateGraph[Any, Any, Any, Any]


def checked_settings(builder: Callable[..., Any], what: str, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings`, once `builder` takes every one of them; else a `ConfigurationError` naming `what`."""
    try:
        inspect.signature(builder).bind_partial(**settings)
    except TypeError as e:
        raise ConfigurationError(f"{what} does not take that setting: {e}") from e
    return settings


def conversation(model: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with the agent's `conversation_factory` for `model` (a chat model or a name)."""
    if model is None:
        return settings
    if "conversation_factory" in settings:
        raise ConfigurationError("give the graph a model= or a conversation_factory=, not both")
    return {**settings, "conversation_factory": model_factory(model)}


def model_factory(model: Any) -> Callable[[], Any]:
    """What makes the chat model `model` names: a LangChain chat model, a `provider:model` name, or
    None for the one the environment names (`$REFLEXION_MODEL`)."""
    from reflexion_agents.nodes.models.resolve import chat_model_from_env

    if model is None:
        return chat_model_from_env
    if isinstance(model, str):
        return lambda: chat_model_from_env(model)
    return lambda: model


def build_react_graph(
    tools: Sequence[Any] = (), model: Any = None, *, checkpointer: Any = None, **settings: Any
) -> Graph:
    """A ReAct agent calling `tools` (functions with type hints and a docstring) until it finishes."""
    from reflexion_agents.graphs.react_agent import ReActAgent

    given = conversation(model, checked_settings(ReActAgent, "the ReAct agent", settings))
    return ReActAgent(tools, checkpointer=checkpointer, **given).graph


def build_wikipedia_react_graph(model: Any = None, *, checkpointer: Any = None, **settings: Any) -> Graph:
    """The ReAct paper's agent: search and look up Wikipedia in text turns until it finishes."""
    from reflexion_agents.graphs.wikipedia_react_agent import WikipediaReActAgent

    given = conversation(model, checked_settings(WikipediaReActAgent, "the Wikipedia agent", settings))
    return WikipediaReActAgent(checkpointer=checkpointer, **given).graph


def build_extraction_graph(
    output_schema: type[BaseModel], model: Any = None, *, checkpointer: Any = None, **settings: Any
) -> Graph:
    """Validated structured output: extract an `output_schema` from a passage, retrying with the
    validation errors until it validates."""
    from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent

    given = conversation(model, checked_settings(StructuredOutputReflectionAgent, "the extraction agent", settings))
    return StructuredOutputReflectionAgent(output_schema, checkpointer=checkpointer, **given).graph


def build_text2cypher_graph(
    flow: Flow = "retry_evaluate", model: Any = None, database: Any = None, *, checkpointer: Any = None, **settings: Any
) -> Graph:
    """A text-to-Cypher flow (`naive`, `retry`, `retry_evaluate`, `planner`) over `database`."""
    from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow

    given = conversation(model, checked_settings(Text2CypherFlow, f"the {flow} flow", settings))
    if database is not None:
        given["database"] = database
    return Text2CypherFlow(flow, checkpointer=checkpointer, **given).graph
