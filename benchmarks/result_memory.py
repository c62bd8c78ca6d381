"""Memory: peak RSS for a result-capped query over a large result.

    python -m benchmarks.result_memory [--nodes 1000000] [--timeout 120]

A model-written query can match the whole graph. The adapter's row cap (the agent's
default is DEFAULT_ROW_CAP) is meant to keep such a result small all the way: the
query is wrapped in `CALL { ... } RETURN ... LIMIT cap + 1`, so the database stops
early and the rows never cross the wire. This measures it. It starts the embedded
FalkorDB in a temporary directory, generates `--nodes` nodes with two properties,
and runs each case in a fresh Python process (so peaks do not mix), reporting the
rows returned, the wall time, the process's peak RSS growth (VmHWM after the query
minus VmRSS before it, the peak reset first), the bytes the server sent, and the
same peak growth for the server. `RETURN *` (columns the adapter cannot name) is wrapped as
`RETURN * LIMIT cap + 1`; the agent's tool path shows how many rows reach the model.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import redis

from benchmarks.harness import machine, proc_status_kb, scratch_database
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.nodes.graphdb.protocol import DEFAULT_ROW_CAP

GRAPH = "large"
QUERY = "MATCH (n) RETURN n.id, n.name"
STAR = "MATCH (n) WITH n.id AS id, n.name AS name RETURN *"  # same rows, columns the wrapper cannot name
# case: (path, query, row cap)
CASES = {
    "adapter, default cap": ("adapter", QUERY, DEFAULT_ROW_CAP),
    "adapter, cap 10,000": ("adapter", QUERY, 10_000),
    "adapter, uncapped": ("adapter", QUERY, None),
    "adapter, default cap, RETURN *": ("adapter", STAR, DEFAULT_ROW_CAP),
    "agent tool, default cap": ("agent", QUERY, DEFAULT_ROW_CAP),
    "agent tool, uncapped": ("agent", QUERY, None),
}


def reset_peak(pid: int | str) -> bool:
    """Reset VmHWM to the current RSS (Linux `clear_refs` 5); False where that is not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def run_case(name: str, data_dir: str, timeout: float) -> dict:
    """One case in this (fresh) process; the server of `data_dir` is already running."""
    path, cypher, cap = CASES[name]
    server = EmbeddedFalkorDB.start(data_dir)  # reuses the running server, never stops it
    db = FalkorDBGraph(GRAPH, host=server.host, port=server.port, server=server)
    stats = redis.Redis(host=server.host, port=server.port)
    if path == "agent":
        from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent

        agent = KGQueryReflexionAgent(
            database=db, conversation_factory=lambda: None, checkpointer=None, query_timeout=timeout, row_cap=cap
        )
    db.query("MATCH (n) RETURN n.id LIMIT 1")  # connection and imports warm
    server_reset, own_reset = reset_peak(server.pid), reset_peak("self")
    before, sent = proc_status_kb("self", "VmRSS"), stats.info("stats")["total_net_output_bytes"]
    server_before = proc_status_kb(server.pid, "VmRSS")
    started = time.perf_counter()
    if path == "agent":
        message = agent._query_message(cypher, "call-0")  # what the tool step adds to the conversation
        rows, truncated = len(message.artifact["rows"]), message.artifact["truncated"]
        shown = f"{len(message.content):,} chars, {message.content.count(chr(10)) - 1} rows"
    else:
        result = db.query(cypher, timeout=timeout, row_cap=cap)
        rows, truncated, shown = len(result.rows), result.truncated, ""
    wall = time.perf_counter() - started
    return {
        "rows": rows,
        "truncated": truncated,
        "wall": wall,
        "shown": shown,
        "growth_mb": (proc_status_kb("self", "VmHWM") - before) / 1024 if own_reset else None,
        "sent_mb": (stats.info("stats")["total_net_output_bytes"] - sent) / 2**20,
        "server_mb": max(0, proc_status_kb(server.pid, "VmHWM") - server_before) / 1024 if server_reset else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--timeout", type=float, default=120.0, help="query timeout in seconds")
    parser.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case, args.data_dir, args.timeout)))
        return
    results = {}
    with scratch_database(GRAPH, movies=False) as db:
        started = time.perf_counter()
        for s in range(0, args.nodes, 250_000):
            db.write(
                "UNWIND range($s, $e - 1) AS i CREATE (:Item {id: i, name: 'Item number ' + toString(i)})",
                {"s": s, "e": min(args.nodes, s + 250_000)},
            )
        print(f"Generated {args.nodes:,} (:Item {{id, name}}) nodes in {time.perf_counter() - started:.1f} s.")
        for name in CASES:
            command = [
                sys.executable,
                "-m",
                "benchmarks.result_memory",
                "--case",
                name,
                "--data-dir",
                str(db.server.data_dir),
                "--timeout",
                str(args.timeout),
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            results[name] = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"Query: `{QUERY}` (RETURN * case: `{STAR}`); default row cap {DEFAULT_ROW_CAP}. Peak RSS growth: "
        "VmHWM after the call minus VmRSS before it; server peak growth: the same for "
        "redis-server.\n"
    )
    print(
        "| case | row cap | rows returned | truncated | wall time (s) | peak RSS growth (MB) | sent by server (MB) "
        "| server peak growth (MB) | model message |\n|---|---:|---:|---|---:|---:|---:|---:|---|"
    )

    def mb(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.1f}"

    for name, r in results.items():
        cap = CASES[name][2]
        print(
            f"| {name} | {'none' if cap is None else f'{cap:,}'} | {r['rows']:,} | {r['truncated']} | {r['wall']:.2f} "
            f"| {mb(r['growth_mb'])} | {r['sent_mb']:.2f} | {mb(r['server_mb'])} | {r['shown']} |"
        )
    print(f"\nMachine: {machine()}")


if __name__ == "__main__":
    main()
