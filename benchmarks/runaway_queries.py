"""Runaway queries: time to control, the server's peak memory and its health after, per timeout.

    python -m benchmarks.runaway_queries [--timeouts 0.5 1 2 5]

Each kind runs on a fresh embedded server (the movies graph, default limits), so each peak is its
own. Per kind and timeout: the time until the adapter gave control back (and what it raised);
another client asking a simple question every 0.1 s from the start until a second after control
came back (how many it asked, how many failed, the slowest answer); the server's peak RSS
(VmHWM); whether it is the same server process after; how long it then took to answer
`RETURN 1`. The promises checked at the end: control within the timeout + 10% (or + 100 ms), no
bystander failure and none slower than 1 s, the server's peak under threads x the per-query
memory cap, no restart, the next query at once.

The kinds: a literal billion-value range, a 25-deep nesting, 24 NOTs in a row and a procedure
call in a unit subquery (refused before the server sees them); ranges sized at run time (stopped
by the guard before they are built); a reduce that nests its accumulator (refused); a reduce
appending one value a step (quadratic time, bounded memory); a string `reduce` (one expression,
which FalkorDB's timeout does not interrupt); a four-way Cartesian product.
"""

from __future__ import annotations

import argparse
import threading
import time

from benchmarks.harness import machine, proc_status_kb, result_line, scratch_database
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.embedded import DEFAULT_THREADS, query_memory_bytes

KINDS = {
    "literal range 1e9": "UNWIND range(1, 1000000000) AS x RETURN count(x)",
    "nesting 25 deep": "RETURN " + "[" * 25 + "1" + "]" * 25,
    "24 NOTs in a row": "RETURN " + "NOT " * 24 + "true",
    "run-time range": "MATCH (m:Movie) WITH count(m) AS c UNWIND range(1, c * 1000000) AS x RETURN count(x)",
    "run-time range in any()": "MATCH (m:Movie) WITH count(m) AS c RETURN any(x IN range(1, c * 1000000) WHERE x < 0)",
    "reduce into itself": (
        "MATCH (m:Movie) WITH count(m) AS c RETURN size(reduce(l = [], x IN range(1, c * 30) | l + [l]))"
    ),
    "reduce appending": (
        "MATCH (m:Movie) WITH count(m) AS c RETURN size(reduce(l = [], x IN range(1, c * 3000) | l + [x]))"
    ),
    "string reduce": (
        "MATCH (m:Movie) WITH count(m) AS c RETURN size(reduce(s = '', x IN range(1, c * 2000) | s + 'abcdefghij'))"
    ),
    "procedure in a unit subquery": "CALL { CALL db.labels() } RETURN 1 AS one",
    "cartesian 4-way": "MATCH (a), (b), (c), (d) RETURN count(*)",
}


def measure(kind: str, cypher: str, timeout: float) -> dict:
    with scratch_database() as db:
        bystander: dict = {"waits": [], "failures": 0}
        running = threading.Event()

        def ask_something_else() -> None:
            """Another client asks a simple question every 0.1 s for as long as the runaway runs."""
            other = FalkorDBGraph("movies", host=db.host, port=db.port)
            while running.is_set():
                started = time.perf_counter()
                try:
                    other.query("MATCH (m:Movie) RETURN count(m)", timeout=5)
                except Exception:
                    bystander["failures"] += 1
                bystander["waits"].append(time.perf_counter() - started)
                time.sleep(0.1)

        pid = db.server.pid
        running.set()
        helper = threading.Thread(target=ask_something_else)
        helper.start()
        started = time.perf_counter()
        try:
            db.query(cypher, timeout=timeout)
            outcome = "rows"
        except Exception as e:
            outcome = type(e).__name__
        control_s = time.perf_counter() - started
        time.sleep(max(1.0, timeout))  # the server may still be working on what the client gave up on
        running.clear()
        helper.join()
        answered = time.perf_counter()
        db.query("RETURN 1")
        next_ms = (time.perf_counter() - answered) * 1000
        peak_mb = proc_status_kb(db.server.pid, "VmHWM") / 1024
        survived = db.server.pid == pid
    return {
        "kind": kind,
        "timeout": timeout,
        "control_s": control_s,
        "outcome": outcome,
        "bystander_max_s": max(bystander["waits"], default=0.0),
        "bystander_asked": len(bystander["waits"]),
        "bystander_failures": bystander["failures"],
        "peak_mb": peak_mb,
        "next_ms": next_ms,
        "survived": survived,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeouts", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    args = parser.parse_args()
    rows = [measure(kind, cypher, t) for t in args.timeouts for kind, cypher in KINDS.items()]
    print(
        "| kind | timeout s | control back s | raised | bystander: asked, failed, slowest s | server peak MB "
        "| same server | next query ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['kind']} | {r['timeout']} | {r['control_s']:.3f} | {r['outcome']} | {r['bystander_asked']}, "
            f"{r['bystander_failures']}, {r['bystander_max_s']:.3f} | {r['peak_mb']:.0f} | "
            f"{'yes' if r['survived'] else 'RESTARTED'} | {r['next_ms']:.1f} |"
        )
    print(f"\n{machine()}")
    memory_bound_mb = DEFAULT_THREADS * query_memory_bytes() / 2**20 + 300
    worst_over = max(r["control_s"] - r["timeout"] - max(0.1 * r["timeout"], 0.1) for r in rows)
    print(f"RESULT control_within_timeout {worst_over:+.3f}s 0 {'PASS' if worst_over <= 0 else 'FAIL'}")
    failures = sum(r["bystander_failures"] for r in rows)
    print(f"RESULT bystander_failures {failures} 0 {'PASS' if failures == 0 else 'FAIL'}")
    slowest = max(r["bystander_max_s"] for r in rows)
    print(result_line("bystander_slowest_s", slowest, 1.0, unit="s"))
    restarted = sum(not r["survived"] for r in rows)
    print(f"RESULT server_restarts {restarted} 0 {'PASS' if restarted == 0 else 'FAIL'}")
    peak = max(r["peak_mb"] for r in rows)
    print(f"RESULT server_peak_mb {peak:.0f} {memory_bound_mb:.0f} {'PASS' if peak < memory_bound_mb else 'FAIL'}")
    slowest_next = max(r["next_ms"] for r in rows)
    print(f"RESULT next_query_ms {slowest_next:.1f} 100 {'PASS' if slowest_next < 100 else 'FAIL'}")


if __name__ == "__main__":
    main()
