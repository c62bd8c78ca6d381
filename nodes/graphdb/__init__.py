"""Graph databases behind one small protocol: FalkorDB (embedded default) and Neo4j.

The names below are imported on first use (PEP 562), not with the package: importing one light
module of it (`nodes.graphdb.locations`, say) must not load both database drivers, numpy (through
the neo4j driver) and pydantic, which cost a command-line answer like `reflexion --help` a second.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from reflexion_agents.nodes.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from reflexion_agents.nodes.graphdb.connect import connect
    from reflexion_agents.nodes.graphdb.cypher_script import LoadReport, load_cypher_script
    from reflexion_agents.nodes.graphdb.demo_data import MOVIES_CYPHER, ensure_movies_graph
    from reflexion_agents.nodes.graphdb.falkordb_graph import FalkorDBGraph
    from reflexion_agents.nodes.graphdb.neo4j_graph import Neo4jGraph
    from reflexion_agents.nodes.graphdb.protocol import GraphDatabase

__all__ = [
    "MOVIES_CYPHER",
    "FalkorDBGraph",
    "GraphDatabase",
    "LoadReport",
    "Neo4jGraph",
    "connect",
    "ensure_movies_graph",
    "load_cypher_script",
]

#: The module each name of `__all__` is defined in.
_SOURCES = {
    "MOVIES_CYPHER": "reflexion_agents.nodes.graphdb.demo_data",
    "FalkorDBGraph": "reflexion_agents.nodes.graphdb.falkordb_graph",
    "GraphDatabase": "reflexion_agents.nodes.graphdb.protocol",
    "LoadReport": "reflexion_agents.nodes.graphdb.cypher_script",
    "Neo4jGraph": "reflexion_agents.nodes.graphdb.neo4j_graph",
    "connect": "reflexion_agents.nodes.graphdb.connect",
    "ensure_movies_graph": "reflexion_agents.nodes.graphdb.demo_data",
    "load_cypher_script": "reflexion_agents.nodes.graphdb.cypher_script",
}


__getattr__, __dir__ = lazy_exports(__name__, _SOURCES)


class _Package(types.ModuleType):
    """This package, keeping `nodes.graphdb.connect` the function `connect`. Importing a submodule
    binds it on its package under its own name, so the first `from nodes.graphdb.connect import ...`
    would otherwise leave the module where `from nodes.graphdb import connect` expects the function
    (the names load on first use, so nothing has bound the function before)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _SOURCES.get(name) == value.__name__:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
