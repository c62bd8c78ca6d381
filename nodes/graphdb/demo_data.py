"""The movies example graph shipped with the package (see demo/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from nodes.graphdb.cypher_script import LoadReport, load_cypher_script
from nodes.graphdb.protocol import GraphDatabase
from schemas.errors import GraphNotFoundError

DEMO_DIR = Path(__file__).parent / "demo"
MOVIES_CYPHER = DEMO_DIR / "movies.cypher"
MOVIES_QUESTIONS_CSV = DEMO_DIR / "text2cypher_movies.csv"
MOVIES_SCHEMA_CONFIG = DEMO_DIR / "movies_schema_config.yaml"


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
