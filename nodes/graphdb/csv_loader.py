"""Load CSV files into a graph: one file of nodes, or one file of relationships between nodes.

    nodes:         load_nodes_csv(db, "people.csv", label="Person", key="name")
    relationships: load_relationships_csv(db, "acted_in.csv", "ACTED_IN",
                                          start=("Person", "name", "person"), end=("Movie", "title", "movie"))

Every other column becomes a property. Values are typed the way a person
reading the file would: integers, floats, true/false, and an empty cell is no
property at all (not an empty string). Labels, types and property names are
checked as identifiers and values are sent as parameters, so a file cannot
inject Cypher. Rows go in batches with `UNWIND`; nodes with a key are merged,
so loading the same file twice does not duplicate them.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nodes.graphdb.protocol import GraphDatabase
from schemas.errors import ConfigurationError

BATCH = 500
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")  # no leading zeros: '007' and '02134' are codes, kept as text
DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+([eE][-+]?[0-9]+)?")
INT64 = 2**63


@dataclass(frozen=True)
class CsvLoadReport:
    rows: int  # rows written: for relationships, only those whose two nodes were found
    batches: int


def identifier(name: str, what: str) -> str:
    if not IDENTIFIER.fullmatch(name or ""):
        raise ConfigurationError(f"{what} {name!r} is not a plain identifier (letters, digits, _)")
    return name


def typed(value: str) -> Any:
    """A CSV cell as the value it plainly spells: an integer (within 64 bits, no leading zeros), a
    decimal number, true/false, or else the text as written; an empty cell is None. NaN, inf,
    '1_000', ' 42 ' and '007' stay text: reading them as numbers would change the data."""
    if value == "":
        return None
    if value in ("true", "false", "TRUE", "FALSE", "True", "False"):
        return value.lower() == "true"
    if INTEGER.fullmatch(value) and -INT64 <= int(value) < INT64:
        return int(value)
    if DECIMAL.fullmatch(value):
        return float(value)
    return value


def read_rows(path: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and the typed rows; a file whose rows do not fit its header is refused, naming the row."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if not header:
                raise ConfigurationError(f"{path} is empty: a CSV file starts with a header row")
            duplicates = sorted({c for c in header if header.count(c) > 1})
            if duplicates:
                raise ConfigurationError(f"{path} names the column(s) {', '.join(duplicates)} more than once")
            rows = []
            for line, cells in enumerate(reader, start=2):
                if not cells:
                    continue
                if len(cells) != len(header):
                    raise ConfigurationError(f"{path}, row {line}: {len(cells)} cells for {len(header)} columns")
                rows.append({column: typed(cell) for column, cell in zip(header, cells)})
            return header, rows
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigurationError(f"cannot read the CSV file {path}: {e}") from e


def _properties(row: dict[str, Any], skip: set[str]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in skip and v is not None}


def _write_batches(db: GraphDatabase, cypher: str, items: list[dict[str, Any]]) -> CsvLoadReport:
    """Write in batches; `cypher` returns one count, of the rows that found their nodes."""
    batches = written = 0
    for start in range(0, len(items), BATCH):
        result = db.query(cypher, {"rows": items[start : start + BATCH]}, allow_writes=True, row_cap=None, timeout=None)
        written += int(result.rows[0][0]) if result.rows else 0
        batches += 1
    return CsvLoadReport(rows=written, batches=batches)


def load_nodes_csv(db: GraphDatabase, path: str | Path, label: str, key: str | None = None) -> CsvLoadReport:
    """One node labelled `label` per row; with `key`, rows merge on that column's value."""
    columns, rows = read_rows(path)
    for column in columns:
        identifier(column, "the column")
    label = identifier(label, "the label")
    if key is not None:
        if key not in columns:
            raise ConfigurationError(f"the key column {key!r} is not in {path} (columns: {', '.join(columns)})")
        missing = sum(1 for row in rows if row.get(key) is None)
        if missing:
            raise ConfigurationError(f"{missing} row(s) of {path} have no {key!r}: a merge key must be set on every row")
        items = [{"key": row[key], "props": _properties(row, {key})} for row in rows]
        cypher = f"UNWIND $rows AS row MERGE (n:{label} {{{key}: row.key}}) SET n += row.props RETURN count(n)"
    else:
        items = [{"props": _properties(row, set())} for row in rows]
        cypher = f"UNWIND $rows AS row CREATE (n:{label}) SET n += row.props RETURN count(n)"
    return _write_batches(db, cypher, items)


def parse_endpoint(spec: str) -> tuple[str, str, str]:
    """'Person.name=person' -> (label, property, column): match the node whose property equals the column."""
    match = re.match(r"^(\w+)\.(\w+)=(\w+)$", spec.strip())
    if not match:
        raise ConfigurationError(f"write an endpoint as Label.property=column (e.g. Person.name=person), got {spec!r}")
    return match.group(1), match.group(2), match.group(3)


def load_relationships_csv(
    db: GraphDatabase, path: str | Path, rel_type: str, start: tuple[str, str, str], end: tuple[str, str, str]
) -> CsvLoadReport:
    """One `rel_type` relationship per row, from the node `start` names to the node `end` names;
    the remaining columns are its properties. Rows whose nodes are not found create nothing; loading twice does not duplicate."""
    columns, rows = read_rows(path)
    rel_type = identifier(rel_type, "the relationship type")
    (start_label, start_prop, start_col), (end_label, end_prop, end_col) = start, end
    for name, what in ((start_label, "label"), (start_prop, "property"), (end_label, "label"), (end_prop, "property")):
        identifier(name, f"the {what}")
    for column in (start_col, end_col):
        if column not in columns:
            raise ConfigurationError(f"the column {column!r} is not in {path} (columns: {', '.join(columns)})")
    for column in columns:
        identifier(column, "the column")
    items = [
        {"a": row[start_col], "b": row[end_col], "props": _properties(row, {start_col, end_col})}
        for row in rows
        if row.get(start_col) is not None and row.get(end_col) is not None
    ]
    cypher = (
        f"UNWIND $rows AS row MATCH (a:{start_label} {{{start_prop}: row.a}}) MATCH (b:{end_label} {{{end_prop}: row.b}}) "
        f"MERGE (a)-[r:{rel_type}]->(b) SET r += row.props RETURN count(r)"
    )
    return _write_batches(db, cypher, items)
