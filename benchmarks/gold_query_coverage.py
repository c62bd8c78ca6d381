"""How many gold queries run on the FalkorDB adapter, and why the rest fail.

    python -m benchmarks.gold_query_coverage [--graph movies|shop] [--csv PATH] [--timeout 10]

Starts the embedded FalkorDB in a temporary directory, loads the graph (movies: 767 questions;
shop, loaded from its import script: 80), runs every gold query read-only through the adapter,
and prints a table of failures grouped by reason.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import Counter, defaultdict

from benchmarks.harness import scratch_database
from reflexion_agents.nodes.evaluation.gold import reason_for
from reflexion_agents.nodes.graphdb import load_cypher_script
from reflexion_agents.nodes.graphdb.demo_data import MOVIES_QUESTIONS_CSV, SHOP_CYPHER, SHOP_QUESTIONS_CSV
from reflexion_agents.schemas.errors import QueryError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", choices=("movies", "shop"), default="movies")
    parser.add_argument("--csv", help="the (question, cypher) pairs; the graph's own by default")
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    questions = args.csv or (MOVIES_QUESTIONS_CSV if args.graph == "movies" else SHOP_QUESTIONS_CSV)
    with open(questions, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    with scratch_database(args.graph, movies=args.graph == "movies") as db:
        if args.graph == "shop":
            load_cypher_script(db, SHOP_CYPHER)
        ran, empty, failures = 0, 0, defaultdict(list)
        started = time.perf_counter()
        for row in rows:
            query = row["cypher"]
            try:
                result = db.query(query, timeout=args.timeout, row_cap=None)
            except QueryError as e:
                failures[reason_for(query, e)].append(row)
                continue
            ran += 1
            empty += result.is_empty
        elapsed = time.perf_counter() - started
    failed = sum(len(v) for v in failures.values())
    votes = Counter("votes" in r["cypher"] for r in rows)[True]
    print(
        f"Gold queries: {len(rows)}; executed: {ran} ({ran / len(rows):.1%}); failed: {failed}; {elapsed:.1f} s in all"
    )
    print(
        f"Executed with an empty or all-null result: {empty}"
        + (f" (queries using Movie.votes, absent from movies.cypher: {votes})\n" if args.graph == "movies" else "\n")
    )
    print("| reason | failed queries | of which the source flags as a syntax error on Neo4j |\n|---|---:|---:|")
    for reason, failed_rows in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        flagged = sum(r.get("syntax_error", "").strip().lower() == "true" for r in failed_rows)
        print(f"| {reason} | {len(failed_rows)} | {flagged} |")


if __name__ == "__main__":
    main()
