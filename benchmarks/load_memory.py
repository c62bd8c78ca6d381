"""Memory of a large LOAD CSV: the loader's peak while a script's `LOAD CSV` streams a big file.

    python -m benchmarks.load_memory [--mb 1024] [--row-bytes 500] [--ways script nodes]

A CSV of `--mb` megabytes (rows of an id and a text of `--row-bytes` characters) is written under
the home directory and loaded two ways, each on a server of its own: by a script, the way Neo4j
scripts read it (`LOAD CSV WITH HEADERS FROM 'file:///big.csv' AS row ...`, from `--csv-dir`; every
row goes to the database in batches of 1,000, and the statement keeps one node, so the server does
not grow with the file), and as nodes (`load_nodes_csv`, as `reflexion load big.csv --label Row
--key id` runs it: two passes, the first typing the columns). Each load runs in a fresh process;
its peak RSS (VmHWM) is compared with its RSS just before the load (the interpreter, the imports,
the connection). Before the loader streamed, it read the whole file and every row into memory: a
200 MB file took it to 1.4 GB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import machine, proc_status_kb, result_line, scratch_database

TARGET_MB = 300.0
WAYS = {
    "script": "a script's LOAD CSV (one node kept)",
    "nodes": "the file as nodes (`reflexion load big.csv --label Row --key id`)",
}
SCRIPT = (
    "LOAD CSV WITH HEADERS FROM 'file:///big.csv' AS row\n"
    "WITH row WHERE row.id = '0' CREATE (:Row {id: toInteger(row.id), size: size(row.text)});\n"
)


def write_csv(path: Path, megabytes: int, row_bytes: int) -> int:
    """Write the CSV; the number of rows."""
    text = "x" * row_bytes
    rows, target = 0, megabytes * 1024 * 1024
    with path.open("w") as out:
        out.write("id,text\n")
        written = 8
        while written < target:
            line = f'{rows},"{text} {rows}"\n'
            out.write(line)
            written += len(line)
            rows += 1
    return rows


def child(way: str, port: int, graph: str, script: str, csv_dir: str) -> None:
    """The load, in this fresh process: print (RSS before, peak after, rows, seconds) as JSON."""
    from reflexion_agents.nodes.graphdb import FalkorDBGraph, load_cypher_script
    from reflexion_agents.nodes.graphdb.csv_loader import load_nodes_csv

    db = FalkorDBGraph(graph, port=port)
    db.write("CREATE (:Start)")
    before = proc_status_kb("self", "VmRSS")
    started = time.perf_counter()
    if way == "script":
        rows = load_cypher_script(db, Path(script), csv_dir=csv_dir).csv_rows
    else:
        rows = load_nodes_csv(db, Path(csv_dir) / "big.csv", "Row", "id").rows
    seconds = time.perf_counter() - started
    print(json.dumps([before, proc_status_kb("self", "VmHWM"), rows, seconds]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=1024)
    parser.add_argument("--row-bytes", type=int, default=500)
    parser.add_argument("--ways", nargs="+", default=list(WAYS), choices=list(WAYS))
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        way, port, graph, script, csv_dir = args.child
        child(way, int(port), graph, script, csv_dir)
        return
    results = []
    with tempfile.TemporaryDirectory(dir=Path.home()) as folder:
        rows = write_csv(Path(folder) / "big.csv", args.mb, args.row_bytes)
        script = Path(folder) / "scripts" / "big.cypher"
        script.parent.mkdir()
        script.write_text(SCRIPT)
        for way in args.ways:
            with scratch_database("big", movies=False) as db:  # a server of its own for each way
                command = [sys.executable, "-m", "benchmarks.load_memory", "--child", way, str(db.port), "big"]
                out = subprocess.run([*command, str(script), folder], capture_output=True, text=True, check=True)
            results.append((way, *json.loads(out.stdout.strip().splitlines()[-1])))
    print("| load | CSV | rows | loaded | seconds | loader RSS before (MB) | loader peak (MB) | growth (MB) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for way, before_kb, peak_kb, loaded, seconds in results:
        print(
            f"| {WAYS[way]} | {args.mb:,} MB | {rows:,} | {loaded:,} | {seconds:.1f} | {before_kb / 1024:.0f} | "
            f"{peak_kb / 1024:.0f} | {(peak_kb - before_kb) / 1024:.0f} |"
        )
    print(f"\n{machine()}")
    for way, before_kb, peak_kb, _, _ in results:
        print(result_line(f"{way}_load_peak_growth_mb", (peak_kb - before_kb) / 1024, TARGET_MB, unit="MB"))


if __name__ == "__main__":
    main()
