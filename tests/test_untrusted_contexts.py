"""A run's context comes from whoever calls the server: it may not send the server's credentials,
or its connections, anywhere the operator did not configure, nor create anything on the database."""

from __future__ import annotations

import contextlib
import socket
import threading
import uuid

import pytest

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.graphdb.locations import connection_args_from_url
from reflexion_agents.schemas.errors import ConfigurationError
from tests.flow_script import flow_model
from tests.helpers import TOM_HANKS_QUERY, draft, make_agent, revise


class Listener:
    """A TCP port on loopback standing in for a foreign database host: it records every connection."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(0.5)
            with contextlib.suppress(OSError):
                self.received += conn.recv(65536)
            conn.close()

    def __enter__(self) -> Listener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop = True
        self._thread.join(timeout=2)
        self.sock.close()


@pytest.fixture
def operator_env(monkeypatch):
    monkeypatch.setenv("NEO4J_URI", "bolt://db.internal.example:7687")
    monkeypatch.setenv("NEO4J_USERNAME", "operator")
    monkeypatch.setenv("NEO4J_PASSWORD", "s3cret")
    monkeypatch.delenv("REFLEXION_ALLOWED_DATABASES", raising=False)
    monkeypatch.delenv("REFLEXION_DATABASE_URL", raising=False)
    return monkeypatch


@pytest.mark.parametrize("scheme", ["bolt", "neo4j", "falkordb"])
def test_a_context_naming_another_host_is_refused_and_the_host_hears_nothing(movies_db, operator_env, scheme):
    with Listener() as host:
        agent, model = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)], checkpointer=None)
        with pytest.raises(ConfigurationError, match="REFLEXION_ALLOWED_DATABASES"):
            agent.execute("Tom Hanks movies?", context={"database_url": f"{scheme}://127.0.0.1:{host.port}"})
        flow = Text2CypherFlow(
            "naive", conversation_factory=lambda: flow_model(), database=movies_db, checkpointer=None
        )
        with pytest.raises(ConfigurationError, match="may not use the database"):
            flow.ask("Tom Hanks movies?", context={"database_url": f"{scheme}://127.0.0.1:{host.port}"})
    assert host.connections == 0 and model.calls == []


def test_configured_credentials_go_only_to_the_configured_server(operator_env):
    own = connection_args_from_url("bolt://db.internal.example:7687")
    assert (own["user"], own["password"]) == ("operator", "s3cret")
    foreign = connection_args_from_url("bolt://attacker.example:7687")
    assert foreign["password"] is None and foreign["user"] == "neo4j"
    same_host_other_port = connection_args_from_url("bolt://db.internal.example:7688")
    assert same_host_other_port["password"] is None
    assert connection_args_from_url("bolt://me:mine@attacker.example")["password"] == "mine"  # the caller's own


def test_an_allowed_foreign_host_is_reached_without_the_operators_password(movies_db, operator_env):
    with Listener() as host:
        operator_env.setenv("REFLEXION_ALLOWED_DATABASES", f"bolt://127.0.0.1:{host.port}")
        agent, model = make_agent(movies_db, [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)], checkpointer=None)
        result = agent.execute("Tom Hanks movies?", context={"database_url": f"bolt://127.0.0.1:{host.port}"})
    assert result.stop_reason == "tool_unavailable" and model.calls == []  # the listener speaks no Bolt
    assert host.connections >= 1 and b"s3cret" not in host.received and b"operator" not in host.received


@pytest.mark.parametrize("graph", ["", " ", "a b", "x;DROP", "../etc"])
def test_empty_or_odd_graph_names_are_refused(movies_db, graph):
    agent = KGQueryReflexionAgent(
        connection_args={"backend": "falkordb"}, conversation_factory=lambda: None, checkpointer=None
    )
    with pytest.raises(ConfigurationError):
        agent.execute("q", context={"graph": graph})


def test_runs_naming_graphs_that_do_not_exist_create_nothing(movies_db, falkordb_server):
    before = set(movies_db.graphs())
    args = {"backend": "falkordb", "host": falkordb_server.host, "port": falkordb_server.port, "graph": "movies"}
    flow = Text2CypherFlow("retry_evaluate", args, conversation_factory=lambda: flow_model(), checkpointer=None)
    agent = KGQueryReflexionAgent(lambda: None, args, checkpointer=None)
    for _ in range(5):
        name = f"nosuch_{uuid.uuid4().hex[:8]}"
        assert flow.ask("Anything?", context={"graph": name}).stop_reason == "tool_unavailable"
        assert agent.execute("Anything?", context={"graph": name}).stop_reason == "tool_unavailable"
    assert set(movies_db.graphs()) == before
