"""Shared fixtures: one real embedded FalkorDB for the session, loaded with the movies graph.

Only fixtures live here; the helpers tests import are in `tests/helpers.py`."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# -- kinds of test ---------------------------------------------------------------------------------
# `unit` tests need no database, no server and no other process, and run in seconds (`make test-fast`);
# `integration` tests use the real embedded database (the fixtures above, or a server of their own)
# or start processes; `server` tests start LangGraph's server or PostgreSQL. A test is given its kind
# here, from the fixtures it uses, else from its own marker or its module's `pytestmark`; no list
# is kept by hand, and a `unit` test that starts a process fails (below).
DATABASE_FIXTURES = {"falkordb_server", "movies_db", "shop_db"}
KINDS = ("unit", "integration", "server")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: needs no database, server or other process (make test-fast)")
    config.addinivalue_line("markers", "integration: the real embedded database, or other processes")
    config.addinivalue_line("markers", "server: LangGraph's server, PostgreSQL or a JavaScript client")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        declared = {mark.name for mark in item.iter_markers() if mark.name in KINDS}
        if declared:
            continue
        uses_database = DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))
        item.add_marker(pytest.mark.integration if uses_database else pytest.mark.unit)


# Hold `unit` to its word: a test of that kind that starts a process (a database server, the command
# line, make), in the test or in a fixture it sets up, fails saying to mark it `integration`.
_in_unit_test = False
_start_process = subprocess.Popen._execute_child  # type: ignore[attr-defined]


def _start_unless_in_a_unit_test(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> Any:
    if _in_unit_test:
        raise AssertionError(
            f"a unit test started a process ({args!r}): mark it integration (pytestmark or @pytest.mark.integration)"
        )
    return _start_process(self, args, *rest, **kwargs)


subprocess.Popen._execute_child = _start_unless_in_a_unit_test  # type: ignore[attr-defined]


def _while_in(item: pytest.Item) -> Iterator[None]:
    """A hook wrapper's body: processes are refused while a `unit` test's hook runs."""
    global _in_unit_test
    _in_unit_test = item.get_closest_marker("unit") is not None
    try:
        yield
    finally:
        _in_unit_test = False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _while_in(item)  # the fixtures it sets up


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _while_in(item)  # the test itself
