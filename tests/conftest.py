"""Shared fixtures: one real embedded FalkorDB for the session, loaded with the movies graph."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Agents checkpoint to SQLite by default: keep the suite's threads out of the user's data directory.
_SCRATCH = Path(tempfile.mkdtemp(prefix="reflexion-test-"))
os.environ["REFLEXION_CHECKPOINTS"] = str(_SCRATCH / "checkpoints.sqlite")
os.environ["REFLEXION_DATA_DIR"] = str(_SCRATCH / "falkordb")  # an embedded database opened by default stays here too

from graphs.kg_query_agent import KGQueryReflexionAgent
from nodes.graphdb import FalkorDBGraph, ensure_movies_graph, load_cypher_script
from nodes.graphdb.demo_data import SHOP_CYPHER
from nodes.graphdb.embedded import EmbeddedFalkorDB
from nodes.models import ScriptedChatModel, tool_reply

TOM_HANKS_QUERY = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
EMPTY_QUERY = "MATCH (p:Person {name: 'Nobody At All'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedFalkorDB]:
    server = EmbeddedFalkorDB.start(tmp_path_factory.mktemp("falkordb"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def movies_db(falkordb_server: EmbeddedFalkorDB) -> FalkorDBGraph:
    db = FalkorDBGraph("movies", host=falkordb_server.host, port=falkordb_server.port, server=falkordb_server)
    ensure_movies_graph(db)
    return db


@pytest.fixture(scope="session")
def shop_db(falkordb_server: EmbeddedFalkorDB) -> FalkorDBGraph:
    """The shop example graph, loaded from its Neo4j-style import script (LOAD CSV included)."""
    db = FalkorDBGraph("shop", host=falkordb_server.host, port=falkordb_server.port, server=falkordb_server)
    if "shop" not in db.graphs():
        load_cypher_script(db, SHOP_CYPHER)
    return db


def graph_fingerprint(db: FalkorDBGraph) -> str:
    """A digest of every node and relationship with its properties: equal means unchanged."""
    nodes = db.query("MATCH (n) RETURN labels(n), properties(n)", row_cap=None).rows
    rels = db.query("MATCH (a)-[r]->(b) RETURN properties(a), type(r), properties(r), properties(b)", row_cap=None).rows
    text = json.dumps(sorted(json.dumps(r, sort_keys=True) for r in nodes + rels))
    return hashlib.sha256(text.encode()).hexdigest()


def draft(query: str, reflection: str = "first try") -> object:
    return tool_reply("GenerateQuery", {"answer": query, "reflection": reflection, "search_queries": []})


def revise(query: str, score: object = 5, previous: str = "") -> object:
    return tool_reply(
        "ReviseQuery", {"answer": previous, "reflection": "critique", "revised_query": query, "score": score}
    )


def make_agent(movies_db: FalkorDBGraph, replies: list, **kwargs) -> tuple[KGQueryReflexionAgent, ScriptedChatModel]:
    """A knowledge-graph agent on the movies graph whose model replies from `replies`."""
    model = ScriptedChatModel(replies=replies)
    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, **kwargs), model
