"""Schema introspection time and schema-prompt size on a generated graph of a million nodes, against the
movies graph, a small generated graph, and the full scan LangChain's FalkorDBGraph runs for its schema.

    python -m benchmarks.schema_scale [--nodes 1000000] [--rels N] [--small-nodes 10000]
                                      [--restarts 3] [--repeats 3] [--baseline-repeats 3]

The agents read the schema from bounded samples (nodes/graphdb/introspect.py), so the prompt built from
it must not grow with the graph, and neither should its time, save for the one search the sampling
cannot avoid: a relationship type seen around no label's first nodes. The generated graph makes that
search as long as it gets: `--nodes` nodes over five labels (properties of five types), `--rels`
relationships over five types, and ten of a rare type between the last nodes created, which a search
reaches only after every other node.

It starts the embedded FalkorDB in a temporary directory, loads the movies graph and generates the two
graphs (a small one of `--small-nodes` nodes, same shape, to show the prompt does not grow). Then:

- "cold": the server process is stopped (it saves the graphs) and started again on the same directory,
  so it has just loaded the graphs from disk and has answered no query about them (empty plan cache);
  a new adapter object connects to it (not timed) and the clock runs around its first `db.schema()`.
  The median over `--restarts` restarts is reported. The schema a process keeps between calls is
  dropped before each timed call, so every call reads the database again; "warm" is the median of
  `--repeats` further calls on the same server.
- "full scan": the three queries LangChain's `FalkorDBGraph.refresh_schema()` runs (imported from
  langchain_community, sent read-only), which read every node and every relationship; the median of
  `--baseline-repeats` runs, after the cold calls. Its "/ cold" column is how many times slower it is.
- The first `db.schema()` on the graph just generated, before any restart, is printed apart: it also
  pays FalkorDB's one-time merge of the writes still pending in its matrices.

Tokens are characters / 4: the kg_prompt that KGQueryReflexionAgent gives the model (`build_kg_prompt`)
and the schema text of the text-to-Cypher flows (`schema_text(prune_schema(...))`). It ends with one
`RESULT` line per target: the cold time on the large graph (under 1 s), and the growth of the kg_prompt
from the small generated graph to the large one (at most 10%).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import warnings
from typing import Any

from benchmarks.harness import TimedDatabase, machine, proc_status_kb, result_line
from reflexion_agents.nodes.common.schema_text import schema_text
from reflexion_agents.nodes.graphdb import FalkorDBGraph, ensure_movies_graph
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB
from reflexion_agents.nodes.graphdb.introspect import sample_schema
from reflexion_agents.nodes.graphdb.schema_cache import forget_schemas
from reflexion_agents.nodes.prompts.kg_query import build_kg_prompt
from reflexion_agents.nodes.text2cypher.schema_pruning import DEFAULT_SCHEMA_CHARS, prune_schema
from reflexion_agents.schemas.errors import QueryTimeoutError

with warnings.catch_warnings():  # langchain-community announces its sunset on import; only its query texts are used
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.graphs.falkordb_graph import node_properties_query, rel_properties_query, rel_query

TARGET_COLD_S = 1.0
TARGET_PROMPT_GROWTH = 0.10
BASELINE_TIMEOUT_S = 300.0  # the full scan's own limit: it reads everything, by design
LOAD_WAIT_S = 600.0  # a restarted server answers once it has loaded the graphs from disk
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


def timed_schema(db: FalkorDBGraph) -> tuple[float, Any]:
    """(milliseconds, schema) of one `db.schema()` call that reads the graph (the schema a process
    keeps is dropped first: nodes/graphdb/schema_cache.py)."""
    forget_schemas()
    started = time.perf_counter()
    try:
        schema = db.schema()
    except QueryTimeoutError as e:  # one sample query ran past the adapter's default timeout
        raise SystemExit(
            f"db.schema() on {db.graph_name!r} failed after {time.perf_counter() - started:.1f} s: {e}"
        ) from e
    return (time.perf_counter() - started) * 1000, schema


FULL_SCAN = {"node keys": node_properties_query, "relationship keys": rel_properties_query, "patterns": rel_query}


def full_scan_ms(db: FalkorDBGraph) -> dict[str, float]:
    """LangChain FalkorDBGraph's schema read, milliseconds per query: every node's keys and labels, every
    relationship's keys, type and endpoint labels (aggregating queries: small results, whole-graph scans)."""
    times = {}
    for name, cypher in FULL_SCAN.items():
        started = time.perf_counter()
        db.query(cypher, row_cap=None, timeout=BASELINE_TIMEOUT_S)
        times[name] = (time.perf_counter() - started) * 1000
    return times


def prompt_sizes(schema: Any, dialect: Any) -> dict[str, int]:
    prompt = build_kg_prompt(schema, dialect=dialect)  # what KGQueryReflexionAgent.schema_prompt() returns
    flows = schema_text(prune_schema(schema, "", DEFAULT_SCHEMA_CHARS))  # the flows' schema text
    return {"prompt": len(prompt), "flows": len(flows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000, help="nodes of the large generated graph")
    parser.add_argument("--rels", type=int, default=None, help="its relationships (default: as many as nodes)")
    parser.add_argument("--small-nodes", type=int, default=10_000, help="nodes of the small generated graph")
    parser.add_argument("--restarts", type=int, default=3, help="server restarts, one cold schema() per graph each")
    parser.add_argument("--repeats", type=int, default=3, help="warm schema() calls per graph after each cold one")
    parser.add_argument("--baseline-repeats", type=int, default=3, help="runs of the full-scan baseline per graph")
    args = parser.parse_args()
    if args.restarts < 1:
        parser.error("--restarts must be at least 1: the cold time is measured after a restart")
    # row of the table: (graph, nodes and relationships to generate, or None for the movies graph)
    graphs = {
        "movies": ("movies", None, None),
        "generated (small)": ("generated_small", args.small_nodes, args.small_nodes),
        "generated": ("generated", args.nodes, args.nodes if args.rels is None else args.rels),
    }
    rows: dict[str, dict[str, Any]] = {name: {"cold": [], "warm": []} for name in graphs}
    with tempfile.TemporaryDirectory() as data_dir:
        server = EmbeddedFalkorDB.start(data_dir)
        try:
            first = FalkorDBGraph("movies", host=server.host, port=server.port, server=server)
            ensure_movies_graph(first)
            started = time.perf_counter()
            for graph, nodes, rels in graphs.values():
                if nodes is not None:
                    generate(first.sibling(graph), nodes, rels)
            generation_s = time.perf_counter() - started
            first_call_ms, _ = timed_schema(first.sibling("generated"))
            for _ in range(args.restarts):
                first.close()
                server.stop()
                server = EmbeddedFalkorDB.start(data_dir, wait_s=LOAD_WAIT_S)
                for name in reversed(graphs):  # the large graph first, on a server that has answered nothing
                    db = FalkorDBGraph(graphs[name][0], host=server.host, port=server.port, server=server)  # connects
                    cold_ms, schema = timed_schema(db)
                    rows[name]["cold"].append(cold_ms)
                    rows[name]["warm"].extend(timed_schema(db)[0] for _ in range(args.repeats))
                    rows[name]["schema"] = schema
                first = db  # the reads below go through the adapter opened last and its siblings
            for name, (graph, _, _) in graphs.items():
                db = first.sibling(graph)
                scans = [full_scan_ms(db) for _ in range(args.baseline_repeats)]
                rows[name]["scan"] = statistics.median(sum(scan.values()) for scan in scans)
                rows[name]["scan parts"] = {part: statistics.median(scan[part] for scan in scans) for part in FULL_SCAN}
                rows[name]["nodes"], rows[name]["rels"] = db.counts()
                rows[name].update(prompt_sizes(rows[name]["schema"], db.dialect))
            timed = TimedDatabase(first.sibling("generated"))
            sample_schema(timed)
            peak = proc_status_kb(server.pid, "VmHWM")
        finally:
            server.stop()
    large, small = rows["generated"], rows["generated (small)"]
    print(
        f"Generated {small['nodes'] + large['nodes']:,} nodes and {small['rels'] + large['rels']:,} relationships "
        f"in {generation_s:.1f} s (two graphs: {len(LABELS)} labels, {len(RELATIONSHIPS)} relationship types "
        f"and 10 {RARE} each, batches of {BATCH:,}); restarted server's peak RSS (VmHWM) {peak / 1024:.0f} MB."
    )
    print(
        f"First schema() on the large graph just generated, before any restart: {first_call_ms:,.1f} ms "
        "(it includes FalkorDB's one-time merge of the pending writes)."
    )
    print(
        f"Cold: median of {args.restarts} server restarts (new process, graphs loaded from disk, new adapter). "
        f"Warm: median of {args.repeats} more calls after each. Full scan: LangChain FalkorDBGraph's three schema "
        f"queries, median of {args.baseline_repeats}. Tokens are approximated as characters / 4.\n"
    )
    print(
        "| graph | nodes | relationships | schema() cold (ms) | schema() warm (ms) | full scan (ms) "
        "| full scan / cold | kg_prompt chars | kg_prompt tokens (≈chars/4) "
        f"| text2cypher schema chars (pruned at {DEFAULT_SCHEMA_CHARS}) |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name, r in rows.items():
        cold, warm = statistics.median(r["cold"]), statistics.median(r["warm"] or r["cold"])
        print(
            f"| {name} | {r['nodes']:,} | {r['rels']:,} | {cold:,.1f} | {warm:,.1f} | {r['scan']:,.1f} "
            f"| {r['scan'] / cold:,.1f}x | {r['prompt']:,} | {r['prompt'] // 4:,} | {r['flows']:,} |"
        )
    parts = ", ".join(f"{part} {ms:,.0f} ms" for part, ms in large["scan parts"].items())
    print(f"\nThe full scan on the large graph, per query (medians): {parts}.")
    print(
        "\nThe slowest of sample_schema's queries on the large graph (one more, warm call):\n\n"
        "| query (up to the first WITH) | time (ms) |\n|---|---:|"
    )
    for cypher, ms in sorted(timed.times.items(), key=lambda kv: -kv[1])[:4]:
        print(f"| {cypher.split(' WITH')[0].replace('`', '')} | {ms:.1f} |")
    print(f"\nMachine: {machine()}\n")
    growth = (large["prompt"] // 4) / (small["prompt"] // 4) - 1
    print(result_line("schema_scale_cold", statistics.median(large["cold"]) / 1000, TARGET_COLD_S, unit="s"))
    verdict = "PASS" if growth <= TARGET_PROMPT_GROWTH else "FAIL"
    print(f"RESULT schema_scale_prompt_growth {growth:+.1%} <=+{TARGET_PROMPT_GROWTH:.0%} {verdict}")


if __name__ == "__main__":
    main()
