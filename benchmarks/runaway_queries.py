"""Runaway queries: time to control, the server's peak memory and its health after, per timeout.

    python -m benchmarks.runaway_queries [--timeouts 0.5 1 2 5]

Each kind runs on a fresh embedded server (the movies graph, default limits), so each peak is its
own. Per kind and timeout: the time until the adapter gave control back (and what it raised), the
time an unrelated 0.5 s query started 0.3 s later took, the server's peak RSS (VmHWM), and how
long the server then took to answer `RETURN 1`. The promise checked at the end: control within
the timeout + 10% (or + 100 ms), every bystander answered, the server's peak under threads x the
per-query memory cap, the next query at once.

The kinds: a literal billion-value range and a 25-deep nesting (refused before the server sees
them), a range whose size is computed at run time, a string `reduce` (one expression, which
FalkorDB's timeout does not interrupt), a four-way Cartesian product.
"""

from __future__ import annotations

import argparse
import threading
import time

from benchmarks.harness import machine, proc_status_kb, scratch_database
from nodes.graphdb import FalkorDBGraph
from nodes.graphdb.embedded import DEFAULT_THREADS, query_memory_bytes

KINDS = {
    "literal range 1e9": "UNWIND range(1, 1000000000) AS x RETURN count(x)",
    "nesting 25 deep": "RETURN " + "[" * 25 + "1" + "]" * 25,
    "run-time range": "MATCH (m:Movie) WITH count(m) AS c UNWIND range(1, c * 1000000) AS x RETURN count(x)",
    "string reduce": (
        "MATCH (m:Movie) WITH count(m) AS c RETURN size(reduce(s = '', x IN range(1, c * 2000) | s + 'abcdefghij'))"
    ),
    "cartesian 4-way": "MATCH (a), (b), (c), (d) RETURN count(*)",
}


def measure(kind: str, cypher: str, timeout: float) -> dict:
    with scratch_database() as db:
        bystander: dict = {}

        def ask_something_else() -> None:
            time.sleep(0.3)
            other = FalkorDBGraph("movies", host=db.host, port=db.port)
            started = time.perf_counter()
            try:
                other.query("MATCH (m:Movie) RETURN count(m)", timeout=0.5)
                bystander["outcome"] = "answered"
            except Exception as e:
                bystander["outcome"] = type(e).__name__
            bystander["s"] = time.perf_counter() - started

        helper = threading.Thread(target=ask_something_else)
        helper.start()
        started = time.perf_counter()
        try:
            db.query(cypher, timeout=timeout)
            outcome = "rows"
        except Exception as e:
            outcome = type(e).__name__
        control_s = time.perf_counter() - started
        helper.join()
        answered = time.perf_counter()
        db.query("RETURN 1")
        next_ms = (time.perf_counter() - answered) * 1000
        peak_mb = proc_status_kb(db.server.pid, "VmHWM") / 1024
    return {
        "kind": kind,
        "timeout": timeout,
        "control_s": control_s,
        "outcome": outcome,
        "bystander_s": bystander["s"],
        "bystander": bystander["outcome"],
        "peak_mb": peak_mb,
        "next_ms": next_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeouts", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    args = parser.parse_args()
    rows = [measure(kind, cypher, t) for t in args.timeouts for kind, cypher in KINDS.items()]
    print("| kind | timeout s | control back s | raised | bystander s | bystander | server peak MB | next query ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['kind']} | {r['timeout']} | {r['control_s']:.3f} | {r['outcome']} | {r['bystander_s']:.3f} | "
            f"{r['bystander']} | {r['peak_mb']:.0f} | {r['next_ms']:.1f} |"
        )
    print(f"\n{machine()}")
    memory_bound_mb = DEFAULT_THREADS * query_memory_bytes() / 2**20 + 300
    worst_over = max(r["control_s"] - r["timeout"] - max(0.1 * r["timeout"], 0.1) for r in rows)
    print(f"RESULT control_within_timeout {worst_over:+.3f}s 0 {'PASS' if worst_over <= 0 else 'FAIL'}")
    all_answered = all(r["bystander"] == "answered" for r in rows)
    print(
        f"RESULT bystanders_answered {sum(r['bystander'] == 'answered' for r in rows)}/{len(rows)} all "
        f"{'PASS' if all_answered else 'FAIL'}"
    )
    peak = max(r["peak_mb"] for r in rows)
    print(f"RESULT server_peak_mb {peak:.0f} {memory_bound_mb:.0f} {'PASS' if peak < memory_bound_mb else 'FAIL'}")
    slowest_next = max(r["next_ms"] for r in rows)
    print(f"RESULT next_query_ms {slowest_next:.1f} 100 {'PASS' if slowest_next < 100 else 'FAIL'}")


if __name__ == "__main__":
    main()
