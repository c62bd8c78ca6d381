"""Shared fixtures: one real embedded FalkorDB for the session, loaded with the movies graph.

Only fixtures live here; the helpers tests import are in `tests/helpers.py`."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Agents checkpoint to SQLite by default: keep the suite's threads out of the user's data directory.
_SCRATCH = Path(tempfile.mkdtemp(prefix="reflexion-test-"))
os.environ["REFLEXION_CHECKPOINTS"] = str(_SCRATCH / "checkpoints.sqlite")
os.environ["REFLEXION_DATA_DIR"] = str(_SCRATCH / "falkordb")  # an embedded database opened by default stays here too

from reflexion_agents.nodes.graphdb import FalkorDBGraph, ensure_movies_graph, load_cypher_script
from reflexion_agents.nodes.graphdb.demo_data import SHOP_CYPHER
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB


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
