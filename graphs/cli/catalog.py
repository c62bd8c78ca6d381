"""`reflexion load`, `graphs`, `schema` and `examples`: bring your own graph to the embedded database.

    reflexion load shop.cypher [--graph shop] [--csv-dir DIR]   # a Neo4j import script, LOAD CSV included
    reflexion load people.csv --graph g --label Person --key name
    reflexion graphs                                            # every graph, with node and relationship counts
    reflexion graphs drop shop [--yes]
    reflexion schema shop                                       # the schema text the prompts are built from
    reflexion examples load shop examples.csv                   # question,cypher pairs, each run read-only first

Every load is all or nothing: it writes into a scratch copy and swaps it in on success.
The commands' arguments are declared in `graphs.cli`, which imports this module when one of them runs.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.prompt import Confirm

from reflexion_agents.graphs.cli.exit_codes import EXIT_ANSWERED, EXIT_NO_ANSWER
from reflexion_agents.nodes.graphdb import connect, load_cypher_script
from reflexion_agents.nodes.graphdb.atomic_load import (
    EXAMPLES_SUFFIX,
    SCRATCH_MARK,
    kept_by_the_project,
    load_atomically,
)
from reflexion_agents.nodes.graphdb.connect import checked_name
from reflexion_agents.nodes.graphdb.csv_loader import (
    load_nodes_csv,
    load_relationships_csv,
    parse_endpoint,
    parse_types,
)
from reflexion_agents.nodes.graphdb.locations import DEFAULT_GRAPH
from reflexion_agents.schemas.errors import ConfigurationError, QueryError

EXAMPLE_TIMEOUT_S = 10.0


def checked_graph_name(name: str) -> str:
    """A graph name a user may create: letters, digits, `_`, `.`, `-`, and none of the names the
    project keeps for itself (`<graph>__examples`, scratch copies)."""
    checked_name(name)
    if kept_by_the_project(name):
        raise ConfigurationError(
            f"{name!r} is a name the project keeps for itself (…{EXAMPLES_SUFFIX}, …{SCRATCH_MARK}…)"
        )
    return name


def _embedded(args: argparse.Namespace, graph: str) -> Any:
    return connect({"backend": "falkordb", "graph": graph, "data_dir": args.data_dir})


def require_graph(db: Any) -> Any:
    """`db` if its graph exists on the embedded database; else a configuration error naming those that do."""
    graphs = db.graphs()
    if db.graph_name not in graphs:
        known = ", ".join(g for g in graphs if not kept_by_the_project(g)) or "none"
        raise ConfigurationError(
            f"there is no graph {db.graph_name!r} in the embedded database (its graphs: {known}); "
            "load one with reflexion load"
        )
    return db


def _existing(args: argparse.Namespace, graph: str) -> Any:
    return require_graph(_embedded(args, checked_graph_name(graph)))


def _target_graph(args: argparse.Namespace, path: Path) -> str:
    """`--graph`, else the file's name; never the movies demo graph unless named."""
    if args.graph is not None:
        return checked_graph_name(args.graph)
    name = re.sub(r"[^A-Za-z0-9_]+", "_", path.stem).strip("_")
    if not name or name == DEFAULT_GRAPH:
        raise ConfigurationError(f"name the graph to load {path.name} into with --graph")
    return checked_graph_name(name)


def cmd_load(args: argparse.Namespace, out: Console) -> int:
    path = Path(args.file)
    if not path.is_file():
        raise ConfigurationError(f"no such file: {path}")
    csv_file = path.suffix.lower() == ".csv"
    if csv_file and not (args.label or args.relationship):
        raise ConfigurationError(
            "a CSV file loads as nodes (--label L [--key column]) "
            "or relationships (--relationship T --start ... --end ...)"
        )
    if csv_file and args.allow_http:
        raise ConfigurationError("--allow-http is for a script's LOAD CSV; a .csv file is read from where it is")
    if not csv_file and (args.label or args.relationship):
        raise ConfigurationError("--label and --relationship are for .csv files; a Cypher script needs neither")
    if args.relationship and not (args.start and args.end):
        raise ConfigurationError("--relationship needs --start Label.property=column and --end Label.property=column")
    if not csv_file and (args.types or args.all_strings or args.lenient or args.properties is not None):
        raise ConfigurationError(
            "--types, --all-strings, --lenient and --properties are for .csv files; a script converts its own values"
        )
    if args.properties is not None and not args.relationship:
        raise ConfigurationError("--properties is for relationship files (--relationship)")
    if args.csv_dir is not None and not Path(args.csv_dir).is_dir():
        raise ConfigurationError(f"--csv-dir {args.csv_dir} is not a folder")
    graph = _target_graph(args, path)
    db = _embedded(args, graph)

    reading = {"types": parse_types(args.types), "all_strings": args.all_strings, "lenient": args.lenient}

    def load(scratch: Any) -> str:
        if args.label:
            loaded = load_nodes_csv(scratch, path, args.label, args.key, **reading)
        elif args.relationship:
            keep = None if args.properties is None else [c.strip() for c in args.properties.split(",") if c.strip()]
            loaded = load_relationships_csv(
                scratch,
                path,
                args.relationship,
                parse_endpoint(args.start),
                parse_endpoint(args.end),
                properties=keep,
                **reading,
            )
        else:
            return _load_script(scratch)
        for example in loaded.examples:
            out.print(f"  skipped {example}", highlight=False, markup=False)
        kinds = ", ".join(f"{c}: {t}" for c, t in loaded.column_types.items())
        return loaded.summary(f":{args.label or args.relationship}") + f"; columns {kinds}"

    def _load_script(scratch: Any) -> str:
        report = load_cypher_script(scratch, path, csv_dir=args.csv_dir, allow_http=args.allow_http)
        for statement, why in report.skipped:
            out.print(f"  skipped: {statement[:80]} ({why})", highlight=False, markup=False)
        return (
            f"{report.executed} statements ({report.csv_rows} CSV rows), "
            f"{len(report.translated)} translated, {len(report.skipped)} skipped"
        )

    summary = load_atomically(db, load)
    nodes, relationships = db.counts()
    out.print(
        f"Loaded {path} into {graph!r}: {summary}; the graph has {nodes} nodes, {relationships} relationships",
        highlight=False,
    )
    return EXIT_ANSWERED


def cmd_graphs(args: argparse.Namespace, out: Console) -> int:
    from reflexion_agents.graphs import registry

    if args.action == "drop":
        return _drop(args, out)
    listing: dict[str, Any] = {"registered": sorted(registry.names())}
    if not args.registered_only:
        db = _embedded(args, DEFAULT_GRAPH)
        listing["database"] = [
            {"graph": name, "nodes": counts[0], "relationships": counts[1]}
            for name in db.graphs()
            if SCRATCH_MARK not in name
            for counts in [db.sibling(name).counts()]
        ]
    if args.json:
        print(json.dumps(listing))
        return EXIT_ANSWERED
    out.print(f"[bold]registered:[/bold] {', '.join(listing['registered'])}")
    if "database" in listing:
        out.print("[bold]database:[/bold]" + ("" if listing["database"] else " (none)"))
        for row in listing["database"]:
            owner = row["graph"].removesuffix(EXAMPLES_SUFFIX)
            kind = f" (few-shot examples of {owner})" if owner != row["graph"] else ""
            out.print(
                f"  {row['graph']}: {row['nodes']} nodes, {row['relationships']} relationships{kind}", highlight=False
            )
    return EXIT_ANSWERED


def _drop(args: argparse.Namespace, out: Console) -> int:
    if not args.name:
        raise ConfigurationError("say which graph: reflexion graphs drop NAME")
    db = _existing(args, args.name)
    if not args.yes:
        if not sys.stdin.isatty():
            raise ConfigurationError(f"dropping {args.name!r} deletes it for good: pass --yes to confirm")
        if not Confirm.ask(f"Drop the graph {args.name!r} and its examples for good?", default=False, console=out):
            out.print("Nothing dropped.")
            return EXIT_NO_ANSWER
    db.clear()
    db.sibling(args.name + EXAMPLES_SUFFIX).clear()
    out.print(f"Dropped {args.name!r}.", highlight=False)
    return EXIT_ANSWERED


def cmd_schema(args: argparse.Namespace, out: Console) -> int:
    from reflexion_agents.nodes.prompts.kg_query import build_kg_prompt

    db = _existing(args, args.graph)
    schema = db.schema()
    if args.json:
        print(json.dumps(schema.model_dump(mode="json"), ensure_ascii=False))
    else:
        out.print(build_kg_prompt(schema, dialect=db.dialect), highlight=False, markup=False)
    return EXIT_ANSWERED


def cmd_examples(args: argparse.Namespace, out: Console) -> int:
    """Store a file's (question, cypher) examples for a graph, each run read-only first."""
    from reflexion_agents.nodes.evaluation.dataset import load_dataset
    from reflexion_agents.nodes.text2cypher.fewshots import FewShotStore

    db = _existing(args, args.graph)
    store = FewShotStore(db)
    added = duplicates = 0
    refused: list[tuple[str, str]] = []
    for item in load_dataset(args.file):
        try:
            db.query(item.cypher, row_cap=1, timeout=EXAMPLE_TIMEOUT_S)
        except QueryError as e:
            refused.append((item.question, f"{type(e).__name__}: {e.message}"))
            continue
        if store.add(item.question, item.cypher, source="user"):
            added += 1
        else:
            duplicates += 1
    out.print(
        f"{added} example(s) stored for {args.graph!r}, {duplicates} already there, {len(refused)} refused",
        highlight=False,
    )
    for question, why in refused[:10]:
        out.print(f"  refused: {question[:80]} ({why[:200]})", highlight=False, markup=False)
    return EXIT_ANSWERED if not refused else EXIT_NO_ANSWER
