"""Self-correcting LLM agents as LangGraph state machines.

The one importable name of the project. Its folders, `graphs/` (the agents and flows), `nodes/`
(their steps, the databases, the models) and `schemas/` (the data they exchange), are its
subpackages `reflexion_agents.graphs`, `reflexion_agents.nodes` and `reflexion_agents.schemas`, so a
user's own `graphs.py`, `nodes.py` or `schemas.py` is never mistaken for them.

The names below load on first use: `import reflexion_agents` costs nothing, and the `reflexion`
command starts without importing LangGraph.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reflexion_agents.nodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from reflexion_agents.graphs.builders import (
        build_extraction_graph,
        build_react_graph,
        build_text2cypher_graph,
        build_wikipedia_react_graph,
    )
    from reflexion_agents.graphs.engine import ReflexionAgent, ResponderWithRetries
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.graphs.kg_query_graph import build_kg_query_graph
    from reflexion_agents.graphs.react_agent import ReActAgent
    from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent
    from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
    from reflexion_agents.graphs.wikipedia_react_agent import WikipediaReActAgent
    from reflexion_agents.nodes.graphdb import FalkorDBGraph, GraphDatabase, Neo4jGraph, connect
    from reflexion_agents.schemas.errors import ConfigurationError, QueryError, ReflexionError

__all__ = [
    "ConfigurationError",
    "FalkorDBGraph",
    "GraphDatabase",
    "KGQueryReflexionAgent",
    "Neo4jGraph",
    "QueryError",
    "ReActAgent",
    "ReflexionAgent",
    "ReflexionError",
    "ResponderWithRetries",
    "StructuredOutputReflectionAgent",
    "Text2CypherFlow",
    "WikipediaReActAgent",
    "build_extraction_graph",
    "build_kg_query_graph",
    "build_react_graph",
    "build_text2cypher_graph",
    "build_wikipedia_react_graph",
    "connect",
]

#: The module each name of `__all__` is defined in.
_SOURCES = {
    "ConfigurationError": "reflexion_agents.schemas.errors",
    "FalkorDBGraph": "reflexion_agents.nodes.graphdb",
    "GraphDatabase": "reflexion_agents.nodes.graphdb",
    "KGQueryReflexionAgent": "reflexion_agents.graphs.kg_query_agent",
    "Neo4jGraph": "reflexion_agents.nodes.graphdb",
    "QueryError": "reflexion_agents.schemas.errors",
    "ReActAgent": "reflexion_agents.graphs.react_agent",
    "ReflexionAgent": "reflexion_agents.graphs.engine",
    "ReflexionError": "reflexion_agents.schemas.errors",
    "ResponderWithRetries": "reflexion_agents.graphs.engine",
    "StructuredOutputReflectionAgent": "reflexion_agents.graphs.structured_output_agent",
    "Text2CypherFlow": "reflexion_agents.graphs.text2cypher_flow",
    "WikipediaReActAgent": "reflexion_agents.graphs.wikipedia_react_agent",
    "connect": "reflexion_agents.nodes.graphdb",
    **{
        name: "reflexion_agents.graphs.builders"
        for name in (
            "build_extraction_graph",
            "build_react_graph",
            "build_text2cypher_graph",
            "build_wikipedia_react_graph",
        )
    },
    "build_kg_query_graph": "reflexion_agents.graphs.kg_query_graph",
}


__getattr__, __dir__ = lazy_exports(__name__, _SOURCES)
