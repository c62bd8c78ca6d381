"""Load Neo4j Cypher scripts (such as the movies example) into any backend.

Scripts written for Neo4j 5 start with constraint and index statements in a
syntax FalkorDB does not speak; those are translated where FalkorDB has an
equivalent and skipped with a note where it has none, never fatal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodes.graphdb.cypher_text import split_statements
from schemas.errors import QueryError

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


def translate_schema_statement(statement: str) -> tuple[str | None, str]:
    """FalkorDB's equivalent of a Neo4j 5 constraint/index statement, or None and why not."""
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
    why = "uniqueness constraint loaded as an index (FalkorDB checks uniqueness only through GRAPH.CONSTRAINT)" if kind_word == "CONSTRAINT" else "index syntax translated"
    return translated, why


def load_cypher_script(db: Any, script: str | Path) -> LoadReport:
    """Run every statement of `script` (text or a file path) through `db.write`."""
    text = Path(script).read_text(encoding="utf-8") if isinstance(script, Path) else script
    report = LoadReport()
    for statement in split_statements(text):
        if _SCHEMA_STATEMENT.match(statement) and db.dialect == "falkordb":
            translated, why = translate_schema_statement(statement)
            if translated is None:
                report.skipped.append((statement, why))
                continue
            try:
                db.write(translated)
            except QueryError as e:  # an index that already exists is not a failure
                report.skipped.append((statement, e.message))
                continue
            report.translated.append((statement, translated))
        else:
            db.write(statement)
        report.executed += 1
    return report
