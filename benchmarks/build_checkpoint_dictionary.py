"""How `nodes/checkpoint_dictionary_1.zdict` was made (not a benchmark; kept to make the next one).

    python -m benchmarks.build_checkpoint_dictionary OUT.zdict [--questions 60]

The registered graphs that query a database answer the shop graph's questions
(`demo/shop/text2cypher_shop.csv`) with the simulated model (`nodes/evaluation/simulated.py`: faulty
drafts, repeats, odd scores), each question in a thread of its own, into a compact SQLite file whose
values are stored uncompressed. Every stored checkpoint, its metadata and every pack of a step's
writes is a sample; zstd trains a dictionary of `--size` bytes on them. The movies graph, which
`benchmarks/checkpoint_size` measures on, is not used.

A shipped dictionary never changes (rows name it): write a new one to a new file
(`checkpoint_dictionary_2.zdict`), give it the next mark, and keep the old one for reading.
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import uuid
from pathlib import Path
from typing import Any

import ormsgpack
import zstandard
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from benchmarks.harness import scratch_database
from reflexion_agents.graphs import registry
from reflexion_agents.nodes.checkpoint_rows import unpack_writes
from reflexion_agents.nodes.compact_saver import CompactSqliteSaver
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.evaluation.gold import run_gold
from reflexion_agents.nodes.evaluation.oracle import scoring
from reflexion_agents.nodes.evaluation.simulated import Misbehaviour, SimulatedChatModel, simulated_run
from reflexion_agents.nodes.graphdb.cypher_script import load_cypher_script
from reflexion_agents.nodes.graphdb.demo_data import SHOP_CYPHER, SHOP_QUESTIONS_CSV


def record_runs(path: Path, questions: int) -> int:
    """Run every database graph over the shop questions into the file at `path`; the runs made."""
    saver = CompactSqliteSaver(
        sqlite3.connect(path, check_same_thread=False), serde=JsonPlusSerializer(), packs_compressed=False
    )
    runs = 0
    with scratch_database("shop", movies=False) as db:
        load_cypher_script(db, SHOP_CYPHER)
        items = load_dataset(SHOP_QUESTIONS_CSV, limit=questions)
        gold = run_gold(db, items, timeout=10.0, row_cap=100)
        for name in sorted(registry.WITH_DATABASE):
            graph: Any = registry.build(name, model=SimulatedChatModel(), database=db, checkpointer=saver).graph
            for item in items:
                if gold[item.index].error:
                    continue
                run = simulated_run(item.question, item.cypher, gold[item.index].rows, Misbehaviour())
                with scoring(run) as config:
                    config["configurable"] = {"thread_id": str(uuid.uuid4())}
                    graph.invoke({"messages": [{"role": "user", "content": item.question}]}, config)
                runs += 1
    return runs


def samples(path: Path) -> list[bytes]:
    """The stored checkpoints, their metadata and the write packs, as the bytes the saver compresses."""
    with sqlite3.connect(path) as connection:
        stored = connection.execute("SELECT checkpoint, metadata FROM thread_checkpoints").fetchall()
        checkpoints = [bytes(part) for row in stored for part in row]
        packs = [
            ormsgpack.packb([list(w) for w in unpack_writes(row[0])])
            for row in connection.execute("SELECT pack FROM thread_writes")
        ]
    return checkpoints + packs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--size", type=int, default=16 * 1024, help="the dictionary's bytes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "runs.sqlite"
        runs = record_runs(path, args.questions)
        found = samples(path)
    trained = zstandard.train_dictionary(args.size, found, level=3)
    args.out.write_bytes(trained.as_bytes())
    print(f"{runs} runs, {len(found)} samples ({sum(map(len, found)) // 1024} KB) -> {args.out} ({args.size} bytes)")


if __name__ == "__main__":
    main()
