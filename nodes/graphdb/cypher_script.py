"""Load Neo4j Cypher scripts (such as the movies example) into any backend.

Scripts written for Neo4j 5 start with constraint and index statements in a
syntax FalkorDB does not speak; those are translated where FalkorDB has an
equivalent and skipped with a note where it has none, never fatal. `LOAD CSV`
statements are run by reading the CSV here (`nodes.graphdb.load_csv`). A
statement that fails is named by its number and line.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reflexion_agents.nodes.graphdb.csv_sources import opened_csv
from reflexion_agents.nodes.graphdb.cypher_text import statements_with_lines
from reflexion_agents.nodes.graphdb.load_csv import LoadCsvStatement, iter_csv_rows, parse_load_csv
from reflexion_agents.nodes.graphdb.neo4j_dialect import datetimes_as_local
from reflexion_agents.nodes.graphdb.row_functions import RowValue, computed_in_rows, null_safe_points, with_computed
from reflexion_agents.nodes.graphdb.script_faults import apoc_advice, apoc_called, fault_of
from reflexion_agents.schemas.errors import (
    ConfigurationError,
    DatabaseUnavailableError,
    GraphDatabaseError,
    QueryError,
    ScriptError,
)

_SCHEMA_STATEMENT = re.compile(
    r"^\s*CREATE\s+(?P<kind>CONSTRAINT|INDEX|RANGE\s+INDEX|TEXT\s+INDEX|POINT\s+INDEX|FULLTEXT\s+INDEX|VECTOR\s+INDEX)\b",
    re.IGNORECASE,
)
_FOR_ON = re.compile(
    r"FOR\s*\(\s*(?P<var>\w+)\s*:\s*(?P<label>`[^`]+`|\w+)\s*\)\s*"
    r"(?:ON|REQUIRE)\s*\(?\s*(?P<props>[^)]*?)\s*\)?\s*(?P<tail>IS\s+.*|OPTIONS.*)?$",
    re.IGNORECASE | re.DOTALL,
)


@dataclass
class LoadReport:
    """What a script load did: statements run, translated and skipped (with why)."""

    executed: int = 0
    translated: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    csv_rows: int = 0  # rows read by LOAD CSV statements


_LEGACY_INDEX = re.compile(r"\bON\s*:\s*(?P<label>`[^`]+`|\w+)\s*\((?P<props>[^)]*)\)", re.IGNORECASE)
_LEGACY_CONSTRAINT = re.compile(r"\bON(?=\s*\(\s*\w+\s*:)", re.IGNORECASE)


def _neo4j5_syntax(statement: str) -> str:
    """Neo4j 3/4 schema statements (`CREATE INDEX ON :L(p)`, `CREATE CONSTRAINT ON (n:L) ASSERT
    n.p IS UNIQUE`), which many example scripts still use, in Neo4j 5's form."""
    legacy = _LEGACY_INDEX.search(statement)
    if legacy:
        props = ", ".join(f"n.{p.strip()}" for p in legacy.group("props").split(",") if p.strip())
        return statement[: legacy.start()] + f"FOR (n:{legacy.group('label')}) ON ({props})" + statement[legacy.end() :]
    return re.sub(r"\bASSERT\b", "REQUIRE", _LEGACY_CONSTRAINT.sub("FOR", statement), flags=re.IGNORECASE)


def translate_schema_statement(statement: str) -> tuple[str | None, str]:
    """FalkorDB's equivalent of a Neo4j constraint/index statement, or None and why not."""
    statement = _neo4j5_syntax(statement)
    match = _FOR_ON.search(statement)
    kind = _SCHEMA_STATEMENT.match(statement)
    if not match or not kind:
        return None, "unrecognised schema statement"
    kind_word = kind.group("kind").upper()
    var, label, tail = match.group("var"), match.group("label"), (match.group("tail") or "").upper()
    props = [p.strip() for p in match.group("props").split(",") if p.strip()]
    if kind_word.startswith(("FULLTEXT", "VECTOR", "POINT", "TEXT")):
        return None, f"{kind_word.title()} statements have another syntax on FalkorDB"
    if kind_word == "CONSTRAINT" and "UNIQUE" not in tail and "KEY" not in tail:
        return None, "only uniqueness constraints are translated"
    if not all(p.startswith(var + ".") for p in props):
        return None, "unrecognised property list"
    translated = f"CREATE INDEX FOR ({var}:{label}) ON ({', '.join(props)})"
    why = (
        "uniqueness constraint loaded as an index (FalkorDB checks uniqueness only through GRAPH.CONSTRAINT)"
        if kind_word == "CONSTRAINT"
        else "index syntax translated"
    )
    return translated, why


def _script_text(script: str | Path) -> tuple[str, Path | None]:
    if not isinstance(script, Path):
        return script, None
    try:
        return script.read_text(encoding="utf-8-sig"), script.parent
    except UnicodeDecodeError as e:
        raise ConfigurationError(f"{script} is not UTF-8 text ({e}); convert it, e.g. with iconv -t UTF-8") from e


@dataclass(frozen=True)
class CsvAccess:
    """Where a script's LOAD CSV may read (`nodes.graphdb.csv_sources`)."""

    csv_dir: Path | None
    script_dir: Path | None
    allow_http: bool


def _run_load_csv(db: Any, load: LoadCsvStatement, report: LoadReport, access: CsvAccess) -> None:
    """Stream the file's rows into the statement, a batch at a time: memory holds one batch. On
    FalkorDB, what Neo4j computes and FalkorDB cannot is computed here for each row first
    (`nodes.graphdb.row_functions`)."""
    body, computed = _on_falkordb(load) if db.dialect == "falkordb" else (load.body, [])
    cypher = load.cypher(body)
    with opened_csv(load.url, access.csv_dir, access.script_dir, allow_http=access.allow_http) as handle:
        rows = iter_csv_rows(handle, load.headers, load.terminator)
        while batch := list(itertools.islice(rows, load.batch)):
            db.write(cypher, {"rows": [with_computed(row, computed) for row in batch]})
            report.csv_rows += len(batch)


def _on_falkordb(load: LoadCsvStatement) -> tuple[str, list[RowValue]]:
    """The LOAD CSV body as FalkorDB runs it: points null-safe, row functions computed, datetimes of
    literals as FalkorDB's (`nodes.graphdb.neo4j_dialect`)."""
    body, computed = computed_in_rows(null_safe_points(load.body), load.variable)
    return datetimes_as_local(body), computed


def apoc_left(statement: str, dialect: str) -> list[str]:
    """The APOC calls of `statement` that would reach the database: on FalkorDB, those the loader
    does not compute for each LOAD CSV row (elsewhere, none: Neo4j may have the plugin)."""
    if dialect != "falkordb":
        return []
    try:
        load = parse_load_csv(statement)
    except ConfigurationError:  # said when the statement runs
        load = None
    return apoc_called(statement if load is None else _on_falkordb(load)[0])


def _run_statement(db: Any, statement: str, report: LoadReport, access: CsvAccess) -> None:
    load = parse_load_csv(statement)
    if load is not None:
        _run_load_csv(db, load, report, access)
    elif _SCHEMA_STATEMENT.match(statement) and db.dialect == "falkordb":
        translated, why = translate_schema_statement(statement)
        if translated is None:
            report.skipped.append((statement, why))
            return
        try:
            db.write(translated)
        except QueryError as e:  # an index that already exists is not a failure
            report.skipped.append((statement, e.message))
            return
        report.translated.append((statement, translated))
    else:
        db.write(datetimes_as_local(null_safe_points(statement)) if db.dialect == "falkordb" else statement)
    report.executed += 1


def load_cypher_script(
    db: Any, script: str | Path, *, csv_dir: str | Path | None = None, allow_http: bool = False
) -> LoadReport:
    """Run every statement of `script` (text or a file path) through `db.write`. `LOAD CSV` files
    are read from `csv_dir`, then beside the script, and nowhere else; an http(s) URL found in
    neither is fetched only with `allow_http`. A failing statement raises `ScriptError`
    naming its number and line (an unreachable database stays `DatabaseUnavailableError`); what
    ran before it stays written: load into a scratch graph for all or nothing (`reflexion load`
    does)."""
    text, script_dir = _script_text(script)
    access = CsvAccess(Path(csv_dir) if csv_dir is not None else None, script_dir, allow_http)
    report = LoadReport()
    for number, (line, statement) in enumerate(statements_with_lines(text), start=1):
        first_line = statement.splitlines()[0][:100]
        apoc = apoc_left(statement, db.dialect)
        if apoc:  # refused before it runs: nothing of it is written
            advice = "; ".join(f"for {name}, {apoc_advice(name)}" for name in apoc)
            raise ScriptError(
                f"statement {number} (line {line}: {first_line}) calls {', '.join(apoc)}: APOC is a Neo4j "
                f"plugin FalkorDB does not have. Rewrite it: {advice}",
                number,
                line,
                fault="dialect",
            )
        try:
            _run_statement(db, statement, report, access)
        except DatabaseUnavailableError:
            raise
        except GraphDatabaseError as e:
            fault = fault_of(str(e))
            raise ScriptError(
                f"statement {number} (line {line}: {first_line}) failed: {e}", number, line, fault=fault
            ) from e
        except ConfigurationError as e:
            raise ScriptError(f"statement {number} (line {line}: {first_line}) failed: {e}", number, line) from e
    return report
