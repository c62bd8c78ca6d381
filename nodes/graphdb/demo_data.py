"""The example graphs shipped with the package: movies (see demo/SOURCES.md) and shop (demo/shop/)."""

from __future__ import annotations

from pathlib import Path

from reflexion_agents.nodes.graphdb.cypher_script import LoadReport, load_cypher_script
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase, graph_name
from reflexion_agents.schemas.errors import GraphDatabaseError, GraphNotFoundError

DEMO_DIR = Path(__file__).parent / "demo"
MOVIES_CYPHER = DEMO_DIR / "movies.cypher"
MOVIES_QUESTIONS_CSV = DEMO_DIR / "text2cypher_movies.csv"
MOVIES_SCHEMA_CONFIG = DEMO_DIR / "movies_schema_config.yaml"
SHOP_DIR = DEMO_DIR / "shop"
SHOP_CYPHER = SHOP_DIR / "shop.cypher"
SHOP_QUESTIONS_CSV = SHOP_DIR / "text2cypher_shop.csv"


def ensure_movies_graph(db: GraphDatabase) -> LoadReport | None:
    """Load the movies graph into `db` unless it already holds nodes; returns the load report."""
    try:
        if db.query("MATCH (n) RETURN n LIMIT 1", row_cap=1).rows:
            return None
    except GraphNotFoundError:
        pass  # a new graph: load it
    report = load_cypher_script(db, MOVIES_CYPHER)
    return report


def is_movies_graph(db: GraphDatabase) -> bool:
    """The movies demo: the graph named `movies`, or one holding its labels and ACTED_IN (Neo4j's
    movies example is often loaded into the default database)."""
    if graph_name(db) == "movies":
        return True
    try:
        return {"Movie", "Person"} <= set(db.labels()) and "ACTED_IN" in db.relationship_types()
    except GraphDatabaseError:
        return False
