"""Nothing the embedded server acknowledged is lost when it is killed (kill -9) right after.

Each write is in the server's journal, fsynced, before the writer hears it succeeded. The writes
here are the ones users are told succeeded: `reflexion load` of a public import script (the shop
graph's, LOAD CSV included) and `reflexion examples load`, run as the CLI in a process of their
own, and an example the retry_evaluate flow learned. The server is killed the moment the writer
returns, with no save in between, and the next start must hold every write. A data directory from
before the journal (a snapshot alone) keeps its graphs when the journal is turned on.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.embedded import AOF_DIR, RDB_FILE, EmbeddedFalkorDB
from reflexion_agents.nodes.text2cypher.fewshots import EXAMPLE_LABEL, FewShotStore
from tests.flow_script import flow_model

pytestmark = pytest.mark.integration  # servers killed with kill -9

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "nodes" / "graphdb" / "demo" / "shop"
HANKS = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
OK = {"answerable": True, "reason": "people and their movies"}


def reflexion(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The `reflexion` command line, in a process of its own, on `data_dir`."""
    env = {**os.environ, "REFLEXION_DATA_DIR": str(data_dir)}
    command = [sys.executable, "-c", "from reflexion_agents.graphs.cli import main; raise SystemExit(main())", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def killed(server: EmbeddedFalkorDB) -> None:
    """kill -9 the server, and wait for its end (the event, not a clock)."""
    os.kill(server.pid, signal.SIGKILL)
    if server.owned:  # our child: reaped here
        os.waitpid(server.pid, 0)
    else:  # another process's: its start waits on the pid through the lock, as any start does
        while Path(f"/proc/{server.pid}/stat").exists() and ") Z" not in Path(f"/proc/{server.pid}/stat").read_text():
            os.sched_yield()


def stored_examples(db: FalkorDBGraph) -> list[tuple[str, str, str]]:
    """(question, cypher, source) of every example stored for `db`'s graph, by question."""
    rows = (
        FewShotStore(db)
        .db.query(f"MATCH (e:{EXAMPLE_LABEL}) RETURN e.question, e.cypher, e.source ORDER BY e.question")
        .rows
    )
    return [tuple(row) for row in rows]


def restarted(data_dir: Path, graph: str) -> FalkorDBGraph:
    server = EmbeddedFalkorDB.start(data_dir)
    return FalkorDBGraph(graph, host=server.host, port=server.port, server=server)


def test_a_load_and_an_examples_load_survive_kill_9_right_after(tmp_path):
    holder = EmbeddedFalkorDB.start(tmp_path)  # keeps the server up after each CLI process ends
    try:
        loaded = reflexion(tmp_path, "load", str(SHOP / "shop.cypher"), "--graph", "shop")
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        examples = tmp_path / "examples.csv"
        examples.write_text(
            "question,cypher\n"
            "How many products are there?,MATCH (p:Product) RETURN count(p) AS n\n"
            "Which categories exist?,MATCH (c:Category) RETURN c.categoryName AS name\n"
        )
        stored = reflexion(tmp_path, "examples", "load", "shop", str(examples))
        assert stored.returncode == 0 and "2 example(s) stored" in stored.stdout, stored.stdout + stored.stderr
        before = FalkorDBGraph("shop", host=holder.host, port=holder.port, server=holder).counts()
        killed(holder)
    finally:
        holder.stop()
    shop = restarted(tmp_path, "shop")
    try:
        assert before[0] > 0 and shop.counts() == before
        assert stored_examples(shop) == [
            ("How many products are there?", "MATCH (p:Product) RETURN count(p) AS n", "user"),
            ("Which categories exist?", "MATCH (c:Category) RETURN c.categoryName AS name", "user"),
        ]
    finally:
        shop.server.stop()


def test_an_example_the_flow_learned_survives_kill_9_right_after(tmp_path):
    db = FalkorDBGraph.embedded("movies", data_dir=str(tmp_path))
    from reflexion_agents.nodes.graphdb.demo_data import ensure_movies_graph

    ensure_movies_graph(db)
    wrong = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title AS title"
    model = flow_model(
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": wrong}, {"cypher": HANKS}],
        Evaluation=[{"ok": False, "critique": "movies he directed, not acted in"}, {"ok": True}],
        Summary=[{"answer": "12 movies."}],
    )
    flow = Text2CypherFlow("retry_evaluate", conversation_factory=lambda: model, database=db, checkpointer=None)
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert result.learned
    killed(db.server)
    db.server.stop()
    again = restarted(tmp_path, "movies")
    try:
        learned = [e for e in stored_examples(again) if e[2] == "learned"]
        assert learned == [("Which movies did Tom Hanks act in?", HANKS, "learned")]
        assert again.counts()[0] > 100  # the movies graph, loaded without a save, is all there
    finally:
        again.server.stop()


def test_a_directory_from_before_the_journal_keeps_its_graphs(tmp_path):
    server = EmbeddedFalkorDB.start(tmp_path)
    FalkorDBGraph("old", host=server.host, port=server.port, server=server).write(
        "UNWIND range(1, 500) AS i CREATE (:Old {i: i})"
    )
    server.save()  # the snapshot an older version kept
    killed(server)
    server.stop()
    shutil.rmtree(tmp_path / AOF_DIR)  # as it was: the snapshot alone
    assert (tmp_path / RDB_FILE).exists()
    old = restarted(tmp_path, "old")
    try:
        assert old.counts() == (500, 0)
        old.write("CREATE (:New)")
        killed(old.server)
    finally:
        old.server.stop()
    again = restarted(tmp_path, "old")
    try:
        assert again.counts() == (501, 0)
    finally:
        again.server.stop()
