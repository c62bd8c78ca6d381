"""`reflexion eval` over 1,000 and 10,000 questions: does its memory stay bounded?

    python -m benchmarks.eval_memory [--small 1000] [--large 10000]

The movies questions, repeated to the size asked, scored by the Reflexion agent with the oracle
(the gold query at every step, no latency) by the real command, `reflexion eval --model oracle`,
each size in a process of its own on the same embedded FalkorDB. The peak resident memory of that
process is measured (`ru_maxrss`, read by the process as the command returns), with its wall time,
and the report it wrote is checked: every question scored and correct.

Target: the large run's peak at most 1.25 times the small run's (a run that kept every trace and
gold result grew with its questions).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.harness import machine, movies_database, result_line
from reflexion_agents.nodes.evaluation.dataset import load_dataset

TARGET = 1.25

#: Run in the measured process: the command, then its own peak memory (kB) on the last line.
CHILD = """
import resource, sys
from reflexion_agents.graphs.cli import main
code = main(sys.argv[1:])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(code)
"""


def dataset(path: Path, size: int) -> Path:
    """The movies questions repeated to `size` rows, each question numbered so no two are alike."""
    items = load_dataset()
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "cypher", "type"])
        for n in range(size):
            item = items[n % len(items)]
            writer.writerow([f"{item.question} (#{n})", item.cypher, item.type])
    return path


def measured(db: object, folder: Path, size: int) -> tuple[int, float, int]:
    """(peak kB, wall seconds, questions in the report) of `reflexion eval` over `size` questions."""
    server = db.server  # type: ignore[attr-defined]
    url = f"falkordb://{server.host}:{server.port}"
    env = {**os.environ, "REFLEXION_DATABASE_URL": url, "REFLEXION_GRAPH": "movies"}
    out = folder / f"out-{size}"
    command = [sys.executable, "-c", CHILD, "eval", "--model", "oracle", "--out", str(out)]
    command += ["--dataset", str(dataset(folder / f"questions-{size}.csv", size))]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    (report_file,) = out.glob("*.json")
    report = json.loads(report_file.read_text(encoding="utf-8"))
    overall = report["overall"]
    assert overall["correct"] == overall["scored"] and len(report["traces"]) == size, overall
    return int(done.stdout.strip().splitlines()[-1]), wall, len(report["traces"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10_000)
    args = parser.parse_args()
    with movies_database() as db, tempfile.TemporaryDirectory() as folder:
        runs = {size: measured(db, Path(folder), size) for size in (args.small, args.large)}
    print("| questions | peak memory (MB) | wall (s) | questions/s | traces in the report |")
    print("|---:|---:|---:|---:|---:|")
    for size, (peak, wall, traces) in runs.items():
        print(f"| {size:,} | {peak / 1024:.0f} | {wall:.1f} | {size / wall:.0f} | {traces:,} |")
    print(f"\nThe oracle model, concurrency 8, one process. Machine: {machine()}\n")
    ratio = runs[args.large][0] / runs[args.small][0]
    print(result_line("eval_memory_large_vs_small", ratio, TARGET, unit="x"))


if __name__ == "__main__":
    main()
