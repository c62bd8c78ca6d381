"""The shared embedded server lives while anyone uses it and stops when its last user stops,
however that user ends; a server that died under a live agent is started again on the next query.

The users here are real separate processes ended the way service managers, terminals and the
kernel end them (normal exit, SIGTERM, SIGINT, SIGHUP, SIGKILL).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodes.graphdb.embedded import STATE_FILE, EmbeddedFalkorDB
from nodes.graphdb.falkordb_graph import FalkorDBGraph

ROOT = Path(__file__).resolve().parent.parent

# A user: joins (or starts) the directory's server, says its port, then waits for "exit" on stdin.
USER = """
import sys
from nodes.graphdb.embedded import EmbeddedFalkorDB
server = EmbeddedFalkorDB.start(sys.argv[1])
print(server.port, server.owned, flush=True)
sys.stdin.readline()
"""


def _user(directory: Path) -> tuple[subprocess.Popen, int, bool]:
    process = subprocess.Popen(
        [sys.executable, "-c", USER, str(directory)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    port, owned = process.stdout.readline().split()
    return process, int(port), owned == "True"


def _server_pid(directory: Path) -> int:
    return int(json.loads((directory / STATE_FILE).read_text())["pid"])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and not stat.read_text().split(") ", 1)[1].startswith("Z")


def _wait_gone(pid: int, within_s: float = 10.0) -> float:
    started = time.monotonic()
    while _alive(pid):
        assert time.monotonic() - started < within_s, f"the server {pid} is still running after {within_s}s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_the_server_outlives_its_starter_while_another_process_uses_it(tmp_path):
    starter, port, owned = _user(tmp_path)
    assert owned
    other = EmbeddedFalkorDB.start(tmp_path)
    try:
        assert other.port == port and not other.owned
        db = FalkorDBGraph("g", host=other.host, port=other.port, server=other)
        db.write("CREATE (:Seen {n: 1})")
        starter.communicate("exit\n", timeout=30)  # the starter leaves normally
        assert starter.returncode == 0
        answers = [db.query("MATCH (s:Seen) RETURN s.n").rows for _ in range(100)]
        assert answers == [[[1]]] * 100
    finally:
        other.stop()
    _wait_gone(_server_pid(tmp_path) if (tmp_path / STATE_FILE).exists() else other.pid)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_the_server_stops_when_its_last_user_is_ended_by_any_signal(tmp_path, how):
    user, _, _ = _user(tmp_path)
    pid = _server_pid(tmp_path)
    user.send_signal(how)
    user.wait(30)
    assert _wait_gone(pid) < 5  # no orphan left behind
    deadline = time.monotonic() + 5
    while (tmp_path / STATE_FILE).exists():  # the watchdog clears it as it leaves
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_the_server_stops_when_its_directory_was_deleted_under_it(tmp_path):
    directory = tmp_path / "data"
    user, _, _ = _user(directory)
    pid = _server_pid(directory)
    shutil.rmtree(directory)
    user.send_signal(signal.SIGTERM)
    user.wait(30)
    assert _wait_gone(pid) < 15  # its final save has nowhere to go: it stops without one


def test_a_user_leaving_normally_after_its_directory_was_deleted_leaves_quietly(tmp_path):
    directory = tmp_path / "data"
    user, _, _ = _user(directory)
    pid = _server_pid(directory)
    shutil.rmtree(directory)
    _, errors = user.communicate("exit\n", timeout=30)
    assert user.returncode == 0 and "Traceback" not in errors, errors
    assert _wait_gone(pid) < 15


def test_a_server_left_by_a_crash_is_reused_and_stopped_after_its_new_users(tmp_path):
    user, port, _ = _user(tmp_path)
    state = json.loads((tmp_path / STATE_FILE).read_text())
    os.kill(state["watchdog"], signal.SIGKILL)  # the crash takes the watchdog too
    user.kill()
    user.wait(30)
    time.sleep(0.5)
    assert _alive(state["pid"])  # nobody left to stop it

    again = EmbeddedFalkorDB.start(tmp_path)
    assert again.port == port and not again.owned  # reused, not a second server on the same files
    again.stop()
    _wait_gone(state["pid"])


def test_a_live_graph_reconnects_after_the_embedded_server_died(tmp_path):
    db = FalkorDBGraph.embedded("g", data_dir=str(tmp_path))
    try:
        db.write("CREATE (:Kept {n: 7})")
        os.kill(db.server.pid, signal.SIGKILL)
        _wait_gone(db.server.pid)
        assert db.query("MATCH (k:Kept) RETURN k.n").rows == [[7]]  # a new server, the saved graph
        examples = db.sibling("g__other")
        assert examples.port == db.port  # siblings follow the link to the new server
    finally:
        db.server.stop()


def _descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_runs_naming_many_graphs_do_not_leak_connections(movies_db, falkordb_server):
    from graphs.kg_query_agent import KGQueryReflexionAgent
    from graphs.text2cypher_flow import Text2CypherFlow
    from tests.flow_script import flow_model

    for args in (
        {"backend": "falkordb", "host": falkordb_server.host, "port": falkordb_server.port, "graph": "movies"},
        {"backend": "falkordb", "data_dir": str(falkordb_server.data_dir), "graph": "movies"},
    ):
        agent = KGQueryReflexionAgent(lambda: None, args, checkpointer=None)
        flow = Text2CypherFlow("retry", args, conversation_factory=lambda: flow_model(), checkpointer=None)
        agent.execute("warm up", context={"graph": "nosuch_0"})
        before = _descriptors()
        for i in range(150):
            assert agent.execute("Anything?", context={"graph": f"nosuch_{i}"}).stop_reason == "tool_unavailable"
            assert flow.ask("Anything?", context={"graph": f"nosuch_{i}"}).stop_reason == "tool_unavailable"
        assert _descriptors() - before < 10  # one shared connection pool, not one per graph name
        agent.close()
        flow.close()


def test_a_live_agent_answers_again_after_its_embedded_server_was_killed(tmp_path):
    from graphs.kg_query_agent import KGQueryReflexionAgent
    from nodes.models import ScriptedChatModel
    from tests.helpers import TOM_HANKS_QUERY, draft, revise

    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)] * 2)
    agent = KGQueryReflexionAgent(lambda: model, {"backend": "falkordb", "data_dir": str(tmp_path)}, checkpointer=None)
    try:
        first = agent.execute("Tom Hanks movies?")
        assert first.stop_reason == "score_threshold" and len(first.tool_result) == 12
        os.kill(agent.db.server.pid, signal.SIGKILL)
        _wait_gone(agent.db.server.pid)
        again = agent.execute("Tom Hanks movies?")  # the same agent object, no rebuild
        assert again.stop_reason == "score_threshold" and again.tool_result == first.tool_result
    finally:
        agent.close()
        agent.db.server.stop()
