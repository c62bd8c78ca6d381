"""Graph databases behind one small protocol: FalkorDB (embedded default) and Neo4j."""

from nodes.graphdb.connect import connect
from nodes.graphdb.cypher_script import LoadReport, load_cypher_script
from nodes.graphdb.demo_data import MOVIES_CYPHER, ensure_movies_graph
from nodes.graphdb.falkordb_graph import FalkorDBGraph
from nodes.graphdb.neo4j_graph import Neo4jGraph
from nodes.graphdb.protocol import GraphDatabase

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
