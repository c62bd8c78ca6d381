"""How long loading takes once the embedded database runs: CSV files of nodes and relationships,
and the shop example's LOAD CSV import script, each all or nothing as `reflexion load` runs them.

    python -m benchmarks.load_speed [--rows 1000 10000] [--repeats 3]

Start-up (the interpreter, the imports, starting the embedded server) is not counted: it is the
same for every command and is measured by its own benchmark.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.harness import machine, scratch_database
from reflexion_agents.nodes.graphdb import load_cypher_script
from reflexion_agents.nodes.graphdb.atomic_load import load_atomically
from reflexion_agents.nodes.graphdb.csv_loader import load_nodes_csv, load_relationships_csv
from reflexion_agents.nodes.graphdb.demo_data import SHOP_CYPHER


def write_files(folder: Path, rows: int) -> tuple[Path, Path]:
    people, knows = folder / f"people_{rows}.csv", folder / f"knows_{rows}.csv"
    with people.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "name", "zip", "score"])
        out.writerows([i, f"Person {i}", f"{i % 100000:05d}", i / 7] for i in range(rows))
    with knows.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["a", "b", "since"])
        out.writerows([i, (i * 7 + 1) % rows, 1990 + i % 30] for i in range(rows))
    return people, knows


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    lines = ["| load | rows | median time (s) |", "|---|---:|---:|"]
    with tempfile.TemporaryDirectory() as folder, scratch_database("bench", movies=False) as db:
        for rows in args.rows:
            people, knows = write_files(Path(folder), rows)
            node_times, rel_times = [], []
            for run in range(args.repeats):
                graph = db.sibling(f"bench_{rows}_{run}")
                # Each lambda runs at once, inside `timed`; the defaults bind this iteration's values.
                node_times.append(
                    timed(
                        lambda graph=graph, people=people: load_atomically(
                            graph, lambda g: load_nodes_csv(g, people, "Person", "id")
                        )
                    )
                )
                rel_times.append(
                    timed(
                        lambda graph=graph, knows=knows: load_atomically(
                            graph,
                            lambda g: load_relationships_csv(
                                g, knows, "KNOWS", ("Person", "id", "a"), ("Person", "id", "b")
                            ),
                        )
                    )
                )
                graph.clear()
            lines.append(f"| CSV nodes, merged on a key | {rows:,} | {statistics.median(node_times):.3f} |")
            lines.append(f"| CSV relationships | {rows:,} | {statistics.median(rel_times):.3f} |")
        shop_times = []
        for run in range(args.repeats):
            graph = db.sibling(f"shop_{run}")
            shop_times.append(
                timed(lambda graph=graph: load_atomically(graph, lambda g: load_cypher_script(g, SHOP_CYPHER)))
            )
            graph.clear()
        lines.append(f"| shop.cypher (LOAD CSV, 12 statements) | 727 | {statistics.median(shop_times):.3f} |")
    print("\n".join(lines))
    print(f"\n{machine()}")


if __name__ == "__main__":
    main()
