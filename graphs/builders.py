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

These functions are the public way in. They build each agent from functions (its parts: the turn's
responder, the tool step, the stop rules, the result), with no class (a text-to-Cypher flow is wired
by `Text2CypherFlow` over its builder in `graphs.text2cypher_builders`); the agent classes of the same
family (`graphs/kg_query_agent.py`, `graphs/react_agent.py`, ...) hand their hooks over as the same
parts, so the node names, pictures, stop reasons and threads are the same either way.
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


def refuse_unknown_settings(builder: Callable[..., Any], what: str, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings`, once `builder` takes every one of them; else a `ConfigurationError` naming `what`."""
    try:
        inspect.signature(builder).bind_partial(**settings)
    except TypeError as e:
        raise ConfigurationError(f"{what} does not take that setting: {e}") from e
    return settings


def factory_of(model: Any, settings: dict[str, Any]) -> Callable[[], Any]:
    """What makes the agent's chat model: `model`, or biochatter's `conversation_factory` taken out of
    `settings`, not both; neither is the environment's model."""
    factory = settings.pop("conversation_factory", None)
    if model is not None and factory is not None:
        raise ConfigurationError("give the graph a model= or a conversation_factory=, not both")
    return factory if factory is not None else model_factory(model)


def conversation(model: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with the agent's `conversation_factory` for `model` (a chat model or a name)."""
    given = dict(settings)
    return {**given, "conversation_factory": factory_of(model, given)}


def compiled(parts: Any, checkpointer: Any) -> Graph:
    """An agent's parts as its graph, with `checkpointer` (none by default, as `create_react_agent`)."""
    from reflexion_agents.graphs.loop_nodes import build_loop_graph
    from reflexion_agents.nodes.checkpoints import resolve_checkpointer
    from reflexion_agents.nodes.settings_checks import checkpointer_setting

    return build_loop_graph(parts, resolve_checkpointer(checkpointer_setting(checkpointer)))


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
    """A ReAct agent calling `tools` (functions with type hints and a docstring, or LangChain tools)
    until it finishes, built from functions (`graphs.react_agent.react_parts`)."""
    from reflexion_agents.graphs.react_agent import ReActAgent, ReActTurn, react_parts
    from reflexion_agents.nodes.models.run_models import RunModels
    from reflexion_agents.schemas.settings import REACT_DEFAULTS, ReActSettings, checked_settings

    given = refuse_unknown_settings(ReActAgent, "the ReAct agent", dict(settings))
    factory = factory_of(model, given)
    max_steps = checked_settings(ReActSettings, max_steps=given.pop("max_steps", REACT_DEFAULTS.max_steps)).max_steps
    return compiled(react_parts(ReActTurn(tools, **given), RunModels(factory), max_steps), checkpointer)


def build_wikipedia_react_graph(model: Any = None, *, checkpointer: Any = None, **settings: Any) -> Graph:
    """The ReAct paper's agent: search and look up Wikipedia in text turns until it finishes; built from
    functions (`graphs.wikipedia_react_agent.wikipedia_parts`)."""
    from reflexion_agents.graphs.wikipedia_react_agent import (
        WikipediaReActAgent,
        WikipediaTurn,
        check_max_calls,
        wikipedia_parts,
    )
    from reflexion_agents.nodes.models.run_models import RunModels
    from reflexion_agents.schemas.settings import WIKIPEDIA_DEFAULTS

    given = refuse_unknown_settings(WikipediaReActAgent, "the Wikipedia agent", dict(settings))
    factory = factory_of(model, given)
    max_calls = check_max_calls(given.pop("max_calls", WIKIPEDIA_DEFAULTS.max_calls))
    return compiled(wikipedia_parts(WikipediaTurn(**given), RunModels(factory), max_calls), checkpointer)


def build_extraction_graph(
    output_schema: type[BaseModel], model: Any = None, *, checkpointer: Any = None, **settings: Any
) -> Graph:
    """Validated structured output: extract an `output_schema` from a passage, retrying with the
    validation errors until it validates; built from functions (`graphs.structured_output_agent`)."""
    from reflexion_agents.graphs.structured_output_agent import (
        ExtractionTurn,
        StructuredOutputReflectionAgent,
        extraction_parts,
    )
    from reflexion_agents.nodes.models.run_models import RunModels
    from reflexion_agents.schemas.settings import EXTRACTION_DEFAULTS, ExtractionSettings, checked_settings

    given = refuse_unknown_settings(StructuredOutputReflectionAgent, "the extraction agent", dict(settings))
    factory = factory_of(model, given)
    retries = checked_settings(
        ExtractionSettings, max_retries=given.pop("max_retries", EXTRACTION_DEFAULTS.max_retries)
    )
    parts = extraction_parts(ExtractionTurn(output_schema, **given), RunModels(factory), retries.max_retries)
    return compiled(parts, checkpointer)


def build_text2cypher_graph(
    flow: Flow = "retry_evaluate", model: Any = None, database: Any = None, *, checkpointer: Any = None, **settings: Any
) -> Graph:
    """A text-to-Cypher flow (`naive`, `retry`, `retry_evaluate`, `planner`) over `database`."""
    from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow

    given = conversation(model, refuse_unknown_settings(Text2CypherFlow, f"the {flow} flow", settings))
    if database is not None:
        given["database"] = database
    return Text2CypherFlow(flow, checkpointer=checkpointer, **given).graph
