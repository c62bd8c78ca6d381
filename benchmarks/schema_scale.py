"""Schema introspection time and schema-prompt size on a generated graph of one million nodes against the movies graph.

    python -m benchmarks.schema_scale [--nodes 1000000] [--rels N] [--repeats 5]

The agents read the schema by sampling a bounded number of entities per label and
per relationship type, so its cost and the prompt built from it should not grow
with the graph. This checks that: it starts the embedded FalkorDB in a temporary
directory, loads the movies graph, generates a second graph of `--nodes` nodes
over five labels (properties of several types) and `--rels` relationships over
five types, and for each graph times `db.schema()` and measures the kg_prompt the
KGQueryReflexionAgent puts in front of the model (`build_kg_prompt`) and the schema
text of the text-to-Cypher flows (`schema_text` of `prune_schema`, cut at
DEFAULT_SCHEMA_CHARS).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from nodes.graphdb import FalkorDBGraph, ensure_movies_graph
from nodes.graphdb.embedded import EmbeddedFalkorDB
from nodes.prompts.kg_query import build_kg_prompt, schema_text
from nodes.text2cypher.schema_pruning import DEFAULT_SCHEMA_CHARS, prune_schema

BATCH = 250_000
# label: (share of the nodes, property map written in Cypher over the per-label counter i)
LABELS = {
    "Person": (0.40, "{id: i, name: 'Person ' + toString(i), age: 18 + i % 60, score: toFloat(i % 1000) / 10.0, "
                     "active: i % 2 = 0, tags: ['t' + toString(i % 7), 't' + toString(i % 11)]}"),
    "Company": (0.05, "{id: i, name: 'Company ' + toString(i), founded: 1900 + i % 120, revenue: toFloat(i) * 1.5}"),
    "City": (0.01, "{id: i, name: 'City ' + toString(i), population: 1000 + i * 37, country: 'C' + toString(i % 40)}"),
    "Product": (0.14, "{id: i, name: 'Product ' + toString(i), price: toFloat(i % 10000) / 100.0, in_stock: i % 3 <> 0}"),
    "Order": (0.40, "{id: i, total: toFloat(i % 50000) / 100.0, placed_on: '2024-' + toString(1 + i % 12) + '-01', "
                    "status: ['new', 'paid', 'shipped'][i % 3]}"),
}
# type: (start label, end label, share of the relationships, property map over the counter k)
RELATIONSHIPS = {
    "PLACED": ("Person", "Order", 0.35, "{channel: ['web', 'app', 'shop'][k % 3]}"),
    "CONTAINS": ("Order", "Product", 0.35, "{quantity: 1 + k % 5}"),
    "WORKS_AT": ("Person", "Company", 0.15, "{since: 1990 + k % 35}"),
    "LIVES_IN": ("Person", "City", 0.10, "{}"),
    "LOCATED_IN": ("Company", "City", 0.05, "{}"),
}


def generate(db: FalkorDBGraph, nodes: int, rels: int) -> None:
    """Bulk-create the graph server-side with UNWIND range() batches; each label's nodes get
    consecutive internal ids, so relationship ends are found by id (NodeByIdSeek), not scanned."""
    spans = {}
    for label, (share, props) in LABELS.items():
        count = max(1, int(nodes * share))
        for start in range(0, count, BATCH):
            db.write(f"UNWIND range($s, $e - 1) AS i CREATE (:{label} {props})", {"s": start, "e": min(count, start + BATCH)})
        low, high, seen = db.query(f"MATCH (n:{label}) RETURN min(id(n)), max(id(n)), count(n)", row_cap=None).rows[0]
        assert high - low + 1 == seen == count, f"{label} ids are not contiguous"
        spans[label] = (low, count)
    for rel_type, (start_label, end_label, share, props) in RELATIONSHIPS.items():
        (a0, an), (b0, bn) = spans[start_label], spans[end_label]
        count = int(rels * share)
        for start in range(0, count, BATCH):
            db.write(
                "UNWIND range($s, $e - 1) AS k WITH k, $a0 + k % $an AS x, $b0 + (k * 7919) % $bn AS y "
                f"MATCH (a), (b) WHERE id(a) = x AND id(b) = y CREATE (a)-[:{rel_type} {props}]->(b)",
                {"s": start, "e": min(count, start + BATCH), "a0": a0, "an": an, "b0": b0, "bn": bn},
            )


def vm_kb(pid: int, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))
    except (OSError, StopIteration):
        return None


def measure(db: FalkorDBGraph, repeats: int) -> dict:
    counts = db.query("MATCH (n) RETURN count(n)", row_cap=None).rows[0][0], \
        db.query("MATCH ()-[r]->() RETURN count(r)", row_cap=None).rows[0][0]
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        schema = db.schema()
        times.append((time.perf_counter() - started) * 1000)
    prompt = build_kg_prompt(schema, dialect=db.dialect)  # what KGQueryReflexionAgent.schema_prompt() returns
    full = schema_text(schema)
    flows = schema_text(prune_schema(schema, "", DEFAULT_SCHEMA_CHARS))  # a question matching nothing
    return {"nodes": counts[0], "rels": counts[1], "cold": times[0], "warm": statistics.median(times[1:] or times),
            "prompt": len(prompt), "full": len(full), "flows": len(flows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--rels", type=int, default=None, help="relationships (default: as many as nodes)")
    parser.add_argument("--repeats", type=int, default=5, help="schema() calls per graph; the first is reported apart")
    args = parser.parse_args()
    rels = args.nodes if args.rels is None else args.rels
    rows = {}
    with tempfile.TemporaryDirectory() as data_dir:
        server = EmbeddedFalkorDB.start(data_dir)
        try:
            movies = FalkorDBGraph("movies", host=server.host, port=server.port, server=server)
            ensure_movies_graph(movies)
            rows["movies"] = measure(movies, args.repeats)
            rss_before = vm_kb(server.pid, "VmRSS")
            generated = movies.sibling("generated")
            started = time.perf_counter()
            generate(generated, args.nodes, rels)
            generation_s = time.perf_counter() - started
            rss_after = vm_kb(server.pid, "VmRSS")
            rows["generated"] = measure(generated, args.repeats)
            peak = vm_kb(server.pid, "VmHWM")
        finally:
            server.stop()
    g = rows["generated"]
    print(f"Generated {g['nodes']:,} nodes and {g['rels']:,} relationships in {generation_s:.1f} s "
          f"({len(LABELS)} labels, {len(RELATIONSHIPS)} relationship types, batches of {BATCH:,}).")
    if rss_before and rss_after and peak:
        print(f"redis-server RSS: {rss_before / 1024:.0f} MB before generation, {rss_after / 1024:.0f} MB after; "
              f"peak (VmHWM) {peak / 1024:.0f} MB.")
    print(f"schema(): {args.repeats} calls per graph; 'cold' is the first, 'median' the median of the others. "
          "Tokens are approximated as characters / 4.\n")
    print("| graph | nodes | relationships | schema() cold (ms) | schema() median (ms) | kg_prompt chars "
          "| kg_prompt tokens (≈chars/4) | schema_text chars | text2cypher schema chars (pruned at "
          f"{DEFAULT_SCHEMA_CHARS}) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows.items():
        print(f"| {name} | {r['nodes']:,} | {r['rels']:,} | {r['cold']:.1f} | {r['warm']:.1f} | {r['prompt']:,} "
              f"| {r['prompt'] // 4:,} | {r['full']:,} | {r['flows']:,} |")


if __name__ == "__main__":
    main()
