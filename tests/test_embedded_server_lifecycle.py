"""The shared embedded server lives while anyone uses it and stops when its last user stops,
however that user ends; a server that died under a live agent is started again on the next query.

The users here are real separate processes ended the way service managers, terminals and the
kernel end them (normal exit, SIGTERM, SIGINT, SIGHUP, SIGKILL).

No bound here is a bare number of seconds: a server is waited for until it is gone (a minute at
most, against a hang), and how soon it must be gone allows three times what starting it took (its
user's start, timed in the same test), so a busy machine stretches the bound with the work.
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

from reflexion_agents.nodes.graphdb.embedded import STATE_FILE, EmbeddedFalkorDB
from reflexion_agents.nodes.graphdb.falkordb_graph import FalkorDBGraph
from tests.helpers import HANG_GUARD_S, wait_until

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.integration  # servers and their users in processes of their own

# A user: joins (or starts) the directory's server, says its port, then waits for "exit" on stdin.
# It is ended by these signals as a program started at a terminal is, whatever the suite inherited:
# under nohup (or as a background job of a script) SIGHUP (or SIGINT) would be ignored, and the
# SIGHUP case waited in vain for its user to end.
USER = """
import signal, sys
for number, default in ((signal.SIGHUP, signal.SIG_DFL), (signal.SIGTERM, signal.SIG_DFL),
                        (signal.SIGINT, signal.default_int_handler)):
    if signal.getsignal(number) == signal.SIG_IGN:
        signal.signal(number, default)
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB

server = EmbeddedFalkorDB.start(sys.argv[1])
print(server.port, server.owned, flush=True)
sys.stdin.readline()
"""


def _user(directory: Path) -> tuple[subprocess.Popen, int, bool]:
    """A user process of `directory`'s server, once it uses it: its process, the port, and whether it
    started the server."""
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


def _wait_gone(pid: int) -> float:
    """Wait until `pid` has ended (failing after `HANG_GUARD_S`); the seconds it took."""
    return wait_until(lambda: not _alive(pid), f"the server {pid} is still running")


def _started_user(directory: Path) -> tuple[subprocess.Popen, float]:
    """A user that started `directory`'s server, and the seconds that took: a new Python process,
    the server and its watchdog, and their first exchange. How long stopping them may take is
    measured against it, so the bound grows on a busy machine."""
    started = time.monotonic()
    user, _, owned = _user(directory)
    assert owned
    return user, time.monotonic() - started


def test_the_server_outlives_its_starter_while_another_process_uses_it(tmp_path):
    starter, port, owned = _user(tmp_path)
    assert owned
    other = EmbeddedFalkorDB.start(tmp_path)
    try:
        assert other.port == port and not other.owned
        db = FalkorDBGraph("g", host=other.host, port=other.port, server=other)
        db.write("CREATE (:Seen {n: 1})")
        starter.communicate("exit\n", timeout=HANG_GUARD_S)  # the starter leaves normally
        assert starter.returncode == 0
        answers = [db.query("MATCH (s:Seen) RETURN s.n").rows for _ in range(100)]
        assert answers == [[[1]]] * 100
    finally:
        other.stop()
    _wait_gone(_server_pid(tmp_path) if (tmp_path / STATE_FILE).exists() else other.pid)


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL], ids=lambda s: s.name)
def test_the_server_stops_when_its_last_user_is_ended_by_any_signal(tmp_path, how):
    user, start_s = _started_user(tmp_path)
    pid = _server_pid(tmp_path)
    user.send_signal(how)
    assert user.wait(HANG_GUARD_S) == -how  # ended by the signal (an uncaught KeyboardInterrupt too)
    gone_s = _wait_gone(pid)  # no orphan left behind
    assert gone_s < 5 + 3 * start_s, (gone_s, start_s)  # soon: the watchdog looks 4 times a second
    wait_until(lambda: not (tmp_path / STATE_FILE).exists(), "the state file is left")  # the watchdog clears it


def test_the_server_stops_when_its_directory_was_deleted_under_it(tmp_path):
    directory = tmp_path / "data"
    user, start_s = _started_user(directory)
    pid = _server_pid(directory)
    shutil.rmtree(directory)
    user.send_signal(signal.SIGTERM)
    user.wait(HANG_GUARD_S)
    gone_s = _wait_gone(pid)
    # its final save has nowhere to go: it stops without one, not after the 60 s a shutdown may wait
    assert gone_s < 15 + 3 * start_s, (gone_s, start_s)


def test_a_user_leaving_normally_after_its_directory_was_deleted_leaves_quietly(tmp_path):
    directory = tmp_path / "data"
    user, start_s = _started_user(directory)
    pid = _server_pid(directory)
    shutil.rmtree(directory)
    _, errors = user.communicate("exit\n", timeout=HANG_GUARD_S)
    assert user.returncode == 0 and "Traceback" not in errors, errors
    gone_s = _wait_gone(pid)
    assert gone_s < 15 + 3 * start_s, (gone_s, start_s)


def test_a_server_left_by_a_crash_is_reused_and_stopped_after_its_new_users(tmp_path):
    user, port, _ = _user(tmp_path)
    state = json.loads((tmp_path / STATE_FILE).read_text())
    os.kill(state["watchdog"], signal.SIGKILL)  # the crash takes the watchdog too
    user.kill()
    user.wait(HANG_GUARD_S)
    time.sleep(0.5)  # a stopper, were one left, would have had its chance (a slow machine can only hide a bug)
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
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
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
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.nodes.models import ScriptedChatModel
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
