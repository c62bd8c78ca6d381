"""What a question costs in the default checkpointer's SQLite file, and how a thread grows with its steps.

    python -m benchmarks.checkpoint_size [--questions 20]

`KGQueryReflexionAgent` answers `--questions` questions, each in a thread of its own, on the movies
graph with the default checkpointer (SQLite, `nodes.checkpoints.sqlite_checkpointer`), for runs of
1, 3, 5 and 10 iterations (a draft or revision, then its query; the queries return 1 to 20 rows).
The scripted model answers at once. After the runs, the file's write-ahead log is folded into it,
and the table gives the file's bytes per question and what the rows hold (checkpoints, and the
writes of each step), and, for the same runs, the file LangGraph's own `SqliteSaver` writes (same
WAL settings and compressing serializer): the layout the default saver (`nodes/compact_saver.py`)
replaced. Its compression dictionary was trained on other runs (the shop graph's questions, the
simulated model: `benchmarks/build_checkpoint_dictionary.py`).

Two targets, from the state's two growing lists being stored as each step's additions
(`schemas/state_channels.py`) rather than whole at every step:
- at most 20 KB of file per 5-iteration question;
- storage linear in the steps: a 10-iteration question at most 2.2x a 5-iteration one (a thread
  that stored its whole state at every step grew with the square of its steps: 4x).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from benchmarks.harness import loop_script, machine, movies_database, result_line
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.checkpoints import sqlite_checkpointer, wal_connection
from reflexion_agents.nodes.compressed_serde import CompressedSerializer
from reflexion_agents.nodes.models import ScriptedChatModel

TARGET_KB = 20.0  # a 5-iteration question
TARGET_GROWTH = 2.2  # 10 iterations against 5
QUERIES = [
    "MATCH (p:Person {{name: 'Tom Hanks'}})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title, {i} AS attempt",
    "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) RETURN p.name AS name, count(m) AS movies, {i} AS attempt "
    "ORDER BY movies DESC LIMIT 20",
    "MATCH (m:Movie {{title: 'The Matrix'}}) RETURN m.title AS title, m.released AS released, {i} AS attempt",
]


def file_bytes(path: Path) -> int:
    """The SQLite file's bytes, its write-ahead log folded in."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def stored_bytes(path: Path) -> tuple[int, int, int]:
    """(the file's bytes, the checkpoints' bytes, the writes' bytes)."""
    size = file_bytes(path)
    with sqlite3.connect(path) as connection:
        checkpoints = connection.execute("SELECT sum(length(checkpoint) + length(metadata)) FROM thread_checkpoints")
        writes = connection.execute("SELECT sum(length(pack)) FROM thread_writes")
        return size, int(checkpoints.fetchone()[0] or 0), int(writes.fetchone()[0] or 0)


def run_questions(db: object, checkpointer: object, iterations: int, questions: int) -> None:
    """`questions` questions of `iterations` iterations each, each in a thread of its own."""
    model = ScriptedChatModel()
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model,
        database=db,
        max_steps=iterations,
        checkpointer=checkpointer,
        trust_non_empty_result=False,
    )
    for question in range(questions):
        queries = [QUERIES[(question + i) % len(QUERIES)].format(i=i) for i in range(iterations)]
        model.replies, model.calls = loop_script(queries), []
        result = agent.execute(f"Question {question}: which movies?")
        assert result.steps == iterations, (result.stop_reason, result.error)


def langgraph_layout_kb(db: object, folder: Path, iterations: int, questions: int) -> float:
    """KB of file per question with LangGraph's own `SqliteSaver` (same file settings, same
    compressing serializer): the layout the default saver replaced, measured on the same runs."""
    path = folder / f"langgraph-{iterations}.sqlite"
    saver = SqliteSaver(wal_connection(str(path)), serde=CompressedSerializer())
    saver.setup()
    empty = file_bytes(path)
    run_questions(db, saver, iterations, questions)
    return (file_bytes(path) - empty) / questions / 1024


def measure(db: object, folder: Path, iterations: int, questions: int) -> tuple[float, float, float]:
    """KB per question: (file, checkpoints, writes), for questions of `iterations` iterations."""
    path = folder / f"threads-{iterations}.sqlite"
    checkpointer = sqlite_checkpointer(path)
    checkpointer.setup()
    empty = stored_bytes(path)
    run_questions(db, checkpointer, iterations, questions)
    after = stored_bytes(path)
    file, checkpoints, writes = ((a - e) / questions / 1024 for a, e in zip(after, empty, strict=True))
    return file, checkpoints, writes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    rows, langgraphs = {}, {}
    with movies_database() as db, tempfile.TemporaryDirectory() as folder:
        for iterations in (1, 3, 5, 10):
            rows[iterations] = measure(db, Path(folder), iterations, args.questions)
            langgraphs[iterations] = langgraph_layout_kb(db, Path(folder), iterations, args.questions)
    print(
        "| iterations a question | file KB / question | checkpoints KB | writes KB | LangGraph's SqliteSaver: file KB |"
    )
    print("|---:|---:|---:|---:|---:|")
    for iterations, (file, checkpoints, writes) in rows.items():
        print(f"| {iterations} | {file:.1f} | {checkpoints:.1f} | {writes:.1f} | {langgraphs[iterations]:.1f} |")
    print(f"\n{args.questions} questions a row, each in its own thread of one SQLite file.")
    print(f"Machine: {machine()}\n")
    print(result_line("checkpoint_kb_per_question", rows[5][0], TARGET_KB, unit="KB"))
    print(result_line("checkpoint_growth_10_vs_5_iterations", rows[10][0] / rows[5][0], TARGET_GROWTH, unit="x"))


if __name__ == "__main__":
    main()
