"""A process killed with SIGKILL in the middle of a run (the default SQLite checkpointer, in WAL mode
with `synchronous=NORMAL`, LangGraph's default `async` durability) leaves a thread the next
process resumes from its last saved step: the queries that ran are not asked for or run again."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from langchain_core.messages import ToolMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.checkpoints import sqlite_checkpointer
from reflexion_agents.nodes.models import ScriptedChatModel
from tests.helpers import HANG_GUARD_S, TOM_HANKS_QUERY, revise, wait_until

ROOT = Path(__file__).resolve().parents[1]

# The run that dies: two queries run, and the third model call never returns until SIGKILL.
CHILD = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
    from reflexion_agents.nodes.checkpoints import sqlite_checkpointer
    from reflexion_agents.nodes.graphdb import FalkorDBGraph
    from reflexion_agents.nodes.models import ScriptedChatModel
    from tests.helpers import draft, revise

    host, port, marker = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])

    def hangs(messages):
        # LangGraph's `async` durability writes a step's checkpoint while the next step runs: wait
        # (from another connection, as the resuming process reads) until the second query's step is
        # committed, so the kill tests what a resume does with committed steps, not the race (for as
        # long as it takes: the test's own deadline is the guard against a hang)
        saver = sqlite_checkpointer(Path(os.environ["REFLEXION_CHECKPOINTS"]))
        while True:
            saved = saver.get_tuple({"configurable": {"thread_id": "crashed"}})
            if saved is not None and saved.checkpoint["channel_values"].get("steps") == 2:
                break
            time.sleep(0.05)
        marker.write_text("in the third model call")
        time.sleep(600)

    first = "MATCH (p:Person {name: 'Nobody 1'}) RETURN p.name AS name"
    second = "MATCH (p:Person {name: 'Nobody 2'}) RETURN p.name AS name"
    model = ScriptedChatModel(replies=[draft(first), revise(second, 1), hangs])
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model, database=FalkorDBGraph("movies", host=host, port=port)
    )
    agent.execute("Who is nobody?", thread_id="crashed")
    """
)


def test_a_run_killed_mid_step_resumes_in_a_new_process_without_redoing_its_queries(movies_db, tmp_path):
    checkpoints, marker = tmp_path / "threads.sqlite", tmp_path / "marker"
    env = {**os.environ, "REFLEXION_CHECKPOINTS": str(checkpoints), "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, movies_db.host, str(movies_db.port), str(marker)], cwd=ROOT, env=env
    )
    try:
        reached = "the run never reached its third model call with its second step saved"
        wait_until(lambda: marker.exists() or child.poll() is not None, reached)
        assert child.poll() is None, "the run ended before it reached its third model call"
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=HANG_GUARD_S)
    finally:
        child.kill()  # whatever failed above: no run left sleeping
        child.wait()
    assert child.returncode == -signal.SIGKILL

    model = ScriptedChatModel(replies=[revise(TOM_HANKS_QUERY, 2), revise(TOM_HANKS_QUERY, 9)])
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model, database=movies_db, checkpointer=sqlite_checkpointer(checkpoints)
    )
    result = agent.resume("crashed")
    # the first call is the one the crash interrupted, sent the two results saved before it
    assert sum(isinstance(m, ToolMessage) for m in model.calls[0]) == 2
    ran = [outcome.action for outcome in result.outcomes]
    assert ran[:2] == [
        "MATCH (p:Person {name: 'Nobody 1'}) RETURN p.name AS name",
        "MATCH (p:Person {name: 'Nobody 2'}) RETURN p.name AS name",
    ]
    assert ran[2:] == [TOM_HANKS_QUERY] and result.query_rows and result.stop_reason == "score_threshold"
