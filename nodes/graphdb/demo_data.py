"""The example graphs shipped with the package: movies (see demo/SOURCES.md) and shop (demo/shop/)."""

from __future__ import annotations

from pathlib import Path

from nodes.graphdb.cypher_script import LoadReport, load_cypher_script
from nodes.graphdb.protocol import GraphDatabase
from schemas.errors import GraphNotFoundError

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
    server = getattr(db, "server", None)
    if server is not None:
        server.save()
    return report
