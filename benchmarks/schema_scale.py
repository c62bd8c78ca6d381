"""Schema introspection time and schema-prompt size on a generated graph of one million nodes against the movies graph.

    python -m benchmarks.schema_scale [--nodes 1000000] [--rels N] [--repeats 5]

The agents read the schema by sampling a bounded number of entities per label and
relationship type, so the prompt built from it does not grow with the graph; the
time of a relationship sample does (FalkorDB walks nodes to find relationships),
which is why each type has a time budget (nodes/graphdb/introspect.py). It starts the embedded FalkorDB in a temporary
directory, loads the movies graph, and generates a second graph of `--nodes` nodes
over five labels (properties of several types) and `--rels` relationships over five
types, plus one rare type among the last nodes created: the worst case for a sample
that starts from a node scan. For each graph it times `db.schema()` and measures the
kg_prompt that KGQueryReflexionAgent gives the model (`build_kg_prompt`) and the
schema text of the text-to-Cypher flows (`schema_text(prune_schema(...))`).
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.harness import TimedDatabase, machine, movies_database, proc_status_kb
from nodes.common.schema_text import schema_text
from nodes.graphdb import FalkorDBGraph
from nodes.graphdb.introspect import sample_schema
from nodes.prompts.kg_query import build_kg_prompt
from nodes.text2cypher.schema_pruning import DEFAULT_SCHEMA_CHARS, prune_schema
from schemas.errors import QueryTimeoutError

BATCH = 250_000
# label: (share of the nodes, property map over the label's counter i); Order comes last on purpose
LABELS = {
    "Person": (
        0.40,
        (
            "{id: i, name: 'Person ' + toString(i), age: 18 + i % 60, score: toFloat(i % 1000) / 10.0, "
            "active: i % 2 = 0, tags: ['t' + toString(i % 7), 't' + toString(i % 11)]}"
        ),
    ),
    "Company": (0.05, "{id: i, name: 'Company ' + toString(i), founded: 1900 + i % 120, revenue: toFloat(i) * 1.5}"),
    "City": (0.01, "{id: i, name: 'City ' + toString(i), population: 1000 + i * 37, country: 'C' + toString(i % 40)}"),
    "Product": (
        0.14,
        "{id: i, name: 'Product ' + toString(i), price: toFloat(i % 10000) / 100.0, in_stock: i % 3 <> 0}",
    ),
    "Order": (
        0.40,
        (
            "{id: i, total: toFloat(i % 50000) / 100.0, placed_on: '2024-' + toString(1 + i % 12) + '-01', "
            "status: ['new', 'paid', 'shipped'][i % 3]}"
        ),
    ),
}
# type: (start label, end label, share of the relationships, property map over the counter k)
RELATIONSHIPS = {
    "PLACED": ("Person", "Order", 0.35, "{channel: ['web', 'app', 'shop'][k % 3]}"),
    "CONTAINS": ("Order", "Product", 0.35, "{quantity: 1 + k % 5}"),
    "WORKS_AT": ("Person", "Company", 0.15, "{since: 1990 + k % 35}"),
    "LIVES_IN": ("Person", "City", 0.10, "{}"),
    "LOCATED_IN": ("Company", "City", 0.05, "{}"),
}
RARE = "REPLACES"  # 10 of them, (:Order)-[:REPLACES]->(:Order) between the last nodes of the graph


def generate(db: FalkorDBGraph, nodes: int, rels: int) -> None:
    """Bulk-create the graph server-side in UNWIND range() batches. Each label's nodes get
    consecutive internal ids, so relationship ends are found by id (NodeByIdSeek), never scanned."""
    spans = {}
    for label, (share, props) in LABELS.items():
        count = max(1, int(nodes * share))
        for s in range(0, count, BATCH):
            db.write(f"UNWIND range($s, $e - 1) AS i CREATE (:{label} {props})", {"s": s, "e": min(count, s + BATCH)})
        low, high, seen = db.query(f"MATCH (n:{label}) RETURN min(id(n)), max(id(n)), count(n)", row_cap=None).rows[0]
        assert high - low + 1 == seen == count, f"{label} ids are not contiguous"
        spans[label] = (low, count)
    for rel_type, (start_label, end_label, share, props) in RELATIONSHIPS.items():
        (a0, an), (b0, bn) = spans[start_label], spans[end_label]
        count = int(rels * share)
        for s in range(0, count, BATCH):
            db.write(
                "UNWIND range($s, $e - 1) AS k WITH k, $a0 + k % $an AS x, $b0 + (k * 7919) % $bn AS y "
                f"MATCH (a), (b) WHERE id(a) = x AND id(b) = y CREATE (a)-[:{rel_type} {props}]->(b)",
                {"s": s, "e": min(count, s + BATCH), "a0": a0, "an": an, "b0": b0, "bn": bn},
            )
    db.write(
        f"UNWIND range(0, 9) AS k WITH $last - k AS x MATCH (a), (b) WHERE id(a) = x AND id(b) = x - 1 "
        f"CREATE (a)-[:{RARE}]->(b)",
        {"last": sum(spans["Order"]) - 1},
    )


def measure(db: FalkorDBGraph, repeats: int) -> dict:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        try:
            schema = db.schema()
        except QueryTimeoutError as e:  # one sample query ran past the adapter's default timeout
            raise SystemExit(
                f"db.schema() on {db.graph_name!r} failed after {time.perf_counter() - started:.1f} s: {e}"
            ) from e
        times.append((time.perf_counter() - started) * 1000)
    prompt = build_kg_prompt(schema, dialect=db.dialect)  # what KGQueryReflexionAgent.schema_prompt() returns
    flows = schema_text(prune_schema(schema, "", DEFAULT_SCHEMA_CHARS))  # the flows' schema text
    return {
        "nodes": db.query("MATCH (n) RETURN count(n)", row_cap=None).rows[0][0],
        "rels": db.query("MATCH ()-[r]->() RETURN count(r)", row_cap=None).rows[0][0],
        "cold": times[0],
        "warm": statistics.median(times[1:] or times),
        "prompt": len(prompt),
        "flows": len(flows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--rels", type=int, default=None, help="relationships (default: as many as nodes)")
    parser.add_argument("--repeats", type=int, default=5, help="schema() calls per graph; the first is shown apart")
    args = parser.parse_args()
    rows = {}
    with movies_database() as movies:
        pid = movies.server.pid
        rows["movies"] = measure(movies, args.repeats)
        rss_before = proc_status_kb(pid, "VmRSS")
        generated = movies.sibling("generated")
        started = time.perf_counter()
        generate(generated, args.nodes, args.nodes if args.rels is None else args.rels)
        generation_s = time.perf_counter() - started
        rss_after = proc_status_kb(pid, "VmRSS")
        rows["generated"] = measure(generated, args.repeats)
        timed = TimedDatabase(generated)
        sample_schema(timed)
        peak = proc_status_kb(pid, "VmHWM")
    g = rows["generated"]
    print(
        f"Generated {g['nodes']:,} nodes and {g['rels']:,} relationships in {generation_s:.1f} s ({len(LABELS)} "
        f"labels, {len(RELATIONSHIPS)} relationship types and 10 {RARE}, batches of {BATCH:,})."
    )
    print(
        f"redis-server RSS: {rss_before / 1024:.0f} MB before generation, {rss_after / 1024:.0f} MB after; "
        f"peak (VmHWM) {peak / 1024:.0f} MB."
    )
    print(
        f"schema(): {args.repeats} calls per graph; 'cold' is the first, 'median' the median of the others. "
        "Tokens are approximated as characters / 4.\n"
    )
    print(
        "| graph | nodes | relationships | schema() cold (ms) | schema() median (ms) | kg_prompt chars "
        f"| kg_prompt tokens (≈chars/4) | text2cypher schema chars (pruned at {DEFAULT_SCHEMA_CHARS}) |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name, r in rows.items():
        print(
            f"| {name} | {r['nodes']:,} | {r['rels']:,} | {r['cold']:.1f} | {r['warm']:.1f} | {r['prompt']:,} "
            f"| {r['prompt'] // 4:,} | {r['flows']:,} |"
        )
    print(
        "\nThe slowest of sample_schema's queries on the generated graph (one more call):\n\n"
        "| query (up to WITH) | time (ms) |\n|---|---:|"
    )
    for cypher, ms in sorted(timed.times.items(), key=lambda kv: -kv[1])[:4]:
        print(f"| {cypher.split(' WITH')[0].replace('`', '')} | {ms:.1f} |")
    print(f"\nMachine: {machine()}")


if __name__ == "__main__":
    main()
