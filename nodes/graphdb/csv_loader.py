"""Load CSV files into a graph: one file of nodes, or one file of relationships between nodes.

    nodes:         load_nodes_csv(db, "people.csv", label="Person", key="name")
    relationships: load_relationships_csv(db, "acted_in.csv", "ACTED_IN",
                                          start=("Person", "name", "person"), end=("Movie", "title", "movie"))

Every other column becomes a property (for relationships, `properties=` names
which). Values are typed by column, the way a person reading the file would:
a column whose every value is an integer is INTEGER, else FLOAT if every value
is a number, BOOLEAN if every value is true/false, and otherwise STRING, every
value as written. So identifiers and postal codes ('02134', '10248') keep one
type. `types=` sets a column's type, `all_strings=True` reads every column as
text. An empty cell is no property at all (not an empty string).

The report says what happened: rows written, and rows skipped with the reason
(a relationship's missing endpoint, a malformed row in `lenient` mode) and the
first few examples. Labels, types and property names are checked as identifiers
and values are sent as parameters, so a file cannot inject Cypher. Rows go in
batches with `UNWIND`; nodes with a key are merged, so loading the same file
twice does not duplicate them.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from reflexion_agents.nodes.graphdb.load_csv import long_fields
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.schemas.errors import ConfigurationError, GraphNotFoundError, QueryError

BATCH = 500
T = TypeVar("T")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")  # no leading zeros: '007' and '02134' are codes, kept as text
DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]+([eE][-+]?[0-9]+)?")
INT64 = 2**63


COLUMN_TYPES = ("string", "integer", "float", "boolean")
EXAMPLES_KEPT = 5


@dataclass
class CsvLoadReport:
    """What a CSV load did: rows written, and rows skipped with why (`reasons`, a count per reason)
    and the first few examples (`examples`: the file's row number and the reason)."""

    rows: int = 0  # rows written: for relationships, only those whose two nodes were found
    batches: int = 0
    skipped: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    column_types: dict[str, str] = field(default_factory=dict)

    def skip(self, line: int, reason: str, detail: str = "") -> None:
        self.skipped += 1
        self.reasons[reason] += 1
        if len(self.examples) < EXAMPLES_KEPT:
            self.examples.append(f"row {line}: {reason}" + (f" ({detail})" if detail else ""))

    def summary(self, what: str) -> str:
        """One line: what was written, and what was skipped and why."""
        text = f"{self.rows} {what} row(s) written"
        if self.skipped:
            why = ", ".join(f"{reason}: {n}" for reason, n in self.reasons.most_common())
            text += f", {self.skipped} skipped ({why})"
        return text


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


def _kind_of(seen: set[type]) -> str:
    """A column's type from the Python types of its non-empty values (see the module docstring)."""
    if seen == {int}:
        return "integer"
    if seen and seen <= {int, float}:
        return "float"
    if seen == {bool}:
        return "boolean"
    return "string"


def _column_type(values: list[str]) -> str:
    """The type every non-empty value of a column has (see the module docstring)."""
    return _kind_of({type(typed(v)) for v in values if v != ""})


def _convert(value: str, kind: str) -> Any:
    """`value` as a `kind`; ValueError if it is not one."""
    if value == "":
        return None
    if kind == "string":
        return value
    plain = typed(value)
    if kind == "boolean" and isinstance(plain, bool):
        return plain
    if kind == "integer" and isinstance(plain, int) and not isinstance(plain, bool):
        return plain
    if kind == "float" and isinstance(plain, (int, float)) and not isinstance(plain, bool):
        return float(plain)
    raise ValueError(f"{value!r} is not {'an' if kind == 'integer' else 'a'} {kind}")


def parse_types(spec: str | None) -> dict[str, str]:
    """'id=string,price=float' -> {"id": "string", "price": "float"}."""
    types: dict[str, str] = {}
    for part in (spec or "").split(","):
        if not part.strip():
            continue
        column, _, kind = part.partition("=")
        if kind.strip().lower() not in COLUMN_TYPES:
            raise ConfigurationError(
                f"write a column type as column=type with type one of {', '.join(COLUMN_TYPES)}, got {part.strip()!r}"
            )
        types[column.strip()] = kind.strip().lower()
    return types


def _records(path: str | Path) -> Iterator[tuple[int, list[str]]]:
    """(row, cells) of each non-empty record of the file, read as a stream: the header is row 1, and
    a record whose quoted field spans lines is still one row, as a spreadsheet counts them."""
    reader: Any = None
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as handle, long_fields():
            reader = csv.reader(handle, strict=True)
            for row, cells in enumerate(reader, start=1):
                if cells:
                    yield row, cells
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigurationError(
            f"cannot read the CSV file {path} (near line {reader.line_num if reader else 1}): {e}"
        ) from e


@dataclass(frozen=True)
class CsvLayout:
    """What a first pass over a CSV file found: its header and each column's type, and the file's
    size and time of change then (the second pass reads the same file, or refuses to)."""

    header: list[str]
    kinds: dict[str, str]
    version: tuple[int, int]


def _version(path: str | Path) -> tuple[int, int]:
    info = Path(path).stat()
    return info.st_size, info.st_mtime_ns


def _unchanged(path: str | Path, layout: CsvLayout) -> None:
    """Refuse a file that changed since `survey` read it: its types, its refusals and its row count
    are those of the file as it was."""
    try:
        changed = _version(path) != layout.version
    except OSError as e:
        raise ConfigurationError(f"cannot read the CSV file {path}: {e}") from e
    if changed:
        raise ConfigurationError(f"{path} changed while it was being loaded; load it again once it is written")


@contextlib.contextmanager
def rereadable(path: str | Path) -> Iterator[Path]:
    """`path` itself when it is a regular file; otherwise (a pipe, /dev/stdin) a temporary copy of
    what it gives, read once: the loader reads a file twice (its column types, then its rows)."""
    source = Path(path)
    if source.is_file():
        yield source
        return
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="reflexion-csv-") as folder:
        copy = Path(folder) / (source.name or "input.csv")
        try:
            with source.open("rb") as given, copy.open("wb") as kept:
                shutil.copyfileobj(given, kept, 1 << 20)
        except OSError as e:
            raise ConfigurationError(f"cannot read the CSV file {path}: {e}") from e
        yield copy


def survey(
    path: str | Path,
    *,
    types: dict[str, str] | None = None,
    all_strings: bool = False,
    lenient: bool = False,
    report: CsvLoadReport | None = None,
    required: str | None = None,
) -> CsvLayout:
    """Read the file once, holding only what each column's values have been so far: the header, and
    the type of every column. A row that does not fit the header is refused naming it, or with
    `lenient` counted in `report` (and left out when the rows are read, `typed_rows`).

    Without `lenient`, every refusal happens here, before anything is written: a value that does not
    fit the type `types` gives its column, and a row without the `required` column (a merge key).
    So a load that is refused writes nothing, as when the whole file was read first."""
    report = report if report is not None else CsvLoadReport()
    try:
        version = _version(path)
    except OSError as e:
        raise ConfigurationError(f"cannot read the CSV file {path}: {e}") from e
    records = _records(path)
    first = next(records, None)
    if first is None:
        raise ConfigurationError(f"{path} is empty: a CSV file starts with a header row")
    header = first[1]
    duplicates = sorted({c for c in header if header.count(c) > 1})
    if duplicates:
        raise ConfigurationError(f"{path} names the column(s) {', '.join(duplicates)} more than once")
    unknown = sorted(set(types or {}) - set(header))
    if unknown:
        raise ConfigurationError(
            f"--types names column(s) {', '.join(unknown)} that {path} does not have (columns: {', '.join(header)})"
        )
    if required is not None and required not in header:
        raise ConfigurationError(f"the key column {required!r} is not in {path} (columns: {', '.join(header)})")
    given = [] if all_strings else [(i, c, kind) for i, c in enumerate(header) if (kind := (types or {}).get(c))]
    seen: list[set[type]] = [set() for _ in header]
    for line, cells in records:
        if len(cells) != len(header):
            if not lenient:
                raise ConfigurationError(
                    f"{path}, row {line}: {len(cells)} cells for {len(header)} columns (--lenient skips such rows)"
                )
            report.skip(line, "malformed row", f"{len(cells)} cells for {len(header)} columns")
            continue
        if not lenient:
            _refuse_unfit(
                path, line, cells, given, (header.index(required), required) if required is not None else None
            )
        if not all_strings:
            for i, cell in enumerate(cells):
                if cell != "" and len(seen[i]) < 3:
                    seen[i].add(type(typed(cell)))
    kinds = {
        column: "string" if all_strings else (types or {}).get(column) or _kind_of(seen[i])
        for i, column in enumerate(header)
    }
    report.column_types = kinds
    return CsvLayout(header, kinds, version)


def _refuse_unfit(
    path: str | Path, line: int, cells: list[str], given: list[tuple[int, str, str]], key: tuple[int, str] | None
) -> None:
    """Refuse a row whose value does not fit its column's given type, or that has no merge key."""
    for i, _, kind in given:
        try:
            _convert(cells[i], kind)
        except ValueError as e:
            raise ConfigurationError(f"{path}, row {line}: {e} (--lenient skips such rows)") from e
    if key is not None and cells[key[0]] == "":
        raise ConfigurationError(
            f"{path}, row {line} has no {key[1]!r}: a merge key must be set on every row (--lenient skips such rows)"
        )


F = TypeVar("F", bound=Callable[..., Any])


def _reading_twice(load: F) -> F:
    """`load(db, path, ...)` on a file it can read twice (`rereadable`)."""

    @functools.wraps(load)
    def on_a_file(db: Any, path: str | Path, *args: Any, **kwargs: Any) -> Any:
        with rereadable(path) as readable:
            return load(db, readable, *args, **kwargs)

    return cast(F, on_a_file)


def typed_rows(
    path: str | Path, layout: CsvLayout, *, lenient: bool = False, report: CsvLoadReport | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, row) of each row that fits the header, its values of its columns' types, read as a
    stream. A value that does not fit its column's type (given with `types`) is refused naming the
    row, or with `lenient` skipped and counted in `report`."""
    report = report if report is not None else CsvLoadReport()
    header, kinds = layout.header, layout.kinds
    _unchanged(path, layout)
    records = _records(path)
    next(records, None)  # the header
    for line, cells in records:
        if len(cells) != len(header):
            continue  # counted by the survey
        try:
            yield line, {column: _convert(cell, kinds[column]) for column, cell in zip(header, cells, strict=True)}
        except ValueError as e:
            if not lenient:
                raise ConfigurationError(f"{path}, row {line}: {e} (--lenient skips such rows)") from e
            report.skip(line, "bad value", str(e))
    _unchanged(path, layout)  # nor while the rows were read


def read_rows(
    path: str | Path,
    *,
    types: dict[str, str] | None = None,
    all_strings: bool = False,
    lenient: bool = False,
    report: CsvLoadReport | None = None,
) -> tuple[list[str], list[tuple[int, dict[str, Any]]]]:
    """The header and every typed row with its line number, in memory (`survey` and `typed_rows`
    read a file of any size as a stream)."""
    report = report if report is not None else CsvLoadReport()
    with rereadable(path) as readable:
        layout = survey(readable, types=types, all_strings=all_strings, lenient=lenient, report=report)
        return layout.header, list(typed_rows(readable, layout, lenient=lenient, report=report))


def _properties(row: dict[str, Any], keep: list[str]) -> dict[str, Any]:
    return {k: row[k] for k in keep if row.get(k) is not None}


def _ensure_index(db: GraphDatabase, label: str, prop: str) -> None:
    """An index on the property rows are matched or merged on, so each row finds its node at once
    instead of scanning every node of the label (a 10,000-row file would scan 10^8 nodes)."""
    with contextlib.suppress(QueryError):  # already indexed
        db.write(f"CREATE INDEX FOR (n:{label}) ON (n.{prop})")


def _batches(items: Iterable[T], size: int = BATCH) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def _write(db: GraphDatabase, cypher: str, items: Iterable[dict[str, Any]], report: CsvLoadReport) -> CsvLoadReport:
    for batch in _batches(items):
        db.write(cypher, {"rows": batch})
        report.batches += 1
        report.rows += len(batch)
    return report


@_reading_twice
def load_nodes_csv(
    db: GraphDatabase,
    path: str | Path,
    label: str,
    key: str | None = None,
    *,
    types: dict[str, str] | None = None,
    all_strings: bool = False,
    lenient: bool = False,
) -> CsvLoadReport:
    """One node labelled `label` per row; with `key`, rows merge on that column's value."""
    report = CsvLoadReport()
    layout = survey(path, types=types, all_strings=all_strings, lenient=lenient, report=report, required=key)
    _unchanged(path, layout)  # before anything is written
    columns = layout.header
    for column in columns:
        identifier(column, "the column")
    label = identifier(label, "the label")

    def items() -> Iterator[dict[str, Any]]:
        for line, row in typed_rows(path, layout, lenient=lenient, report=report):
            if key is not None and row.get(key) is None:
                if not lenient:
                    raise ConfigurationError(
                        f"{path}, row {line} has no {key!r}: "
                        "a merge key must be set on every row (--lenient skips such rows)"
                    )
                report.skip(line, f"no {key}")
                continue
            merge_key = row.get(key) if key is not None else None
            yield {"key": merge_key, "props": _properties(row, [c for c in columns if c != key])}

    if key is not None:
        _ensure_index(db, label, key)
        cypher = f"UNWIND $rows AS row MERGE (n:{label} {{{key}: row.key}}) SET n += row.props"
    else:
        cypher = f"UNWIND $rows AS row CREATE (n:{label}) SET n += row.props"
    return _write(db, cypher, items(), report)


def parse_endpoint(spec: str) -> tuple[str, str, str]:
    """'Person.name=person' -> (label, property, column): match the node whose property equals the column."""
    match = re.match(r"^(\w+)\.(\w+)=(\w+)$", spec.strip())
    if not match:
        raise ConfigurationError(f"write an endpoint as Label.property=column (e.g. Person.name=person), got {spec!r}")
    return match.group(1), match.group(2), match.group(3)


def _stored_kind(db: GraphDatabase, label: str, prop: str) -> str | None:
    """The type (`String`, `Integer`, ...) the `label` nodes store `prop` as, or None."""
    try:
        found = db.query(
            f"MATCH (n:{label}) WHERE n.{prop} IS NOT NULL RETURN typeof(n.{prop}) LIMIT 1", row_cap=1
        ).rows
    except GraphNotFoundError:
        return None
    return found[0][0] if found else None


def _as_stored(value: Any, kind: str | None) -> Any:
    """An endpoint value typed as the nodes store it: a relationship file's `1` finds the node whose
    id is the text '1' (each file is typed on its own, so the two may differ)."""
    if kind == "String" and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if kind == "Integer" and isinstance(value, str) and INTEGER.fullmatch(value):
        return int(value)
    return value


def _found(db: GraphDatabase, label: str, prop: str, values: set[Any]) -> set[Any]:
    """Which of `values` some `label` node has as `prop`."""
    if not values:
        return set()
    cypher = f"UNWIND $values AS v MATCH (n:{label} {{{prop}: v}}) RETURN DISTINCT v"
    try:
        return {
            row[0] for row in db.query(cypher, {"values": sorted(values, key=repr)}, row_cap=None, timeout=None).rows
        }
    except GraphNotFoundError:  # nothing loaded yet: no node is there
        return set()


@_reading_twice
def load_relationships_csv(
    db: GraphDatabase,
    path: str | Path,
    rel_type: str,
    start: tuple[str, str, str],
    end: tuple[str, str, str],
    *,
    properties: list[str] | None = None,
    types: dict[str, str] | None = None,
    all_strings: bool = False,
    lenient: bool = False,
) -> CsvLoadReport:
    """One `rel_type` relationship per row, from the node `start` names to the node `end` names,
    with the `properties` columns as its properties (default: every other column). A row whose
    node is missing creates nothing and is reported, with the value not found; loading twice
    does not duplicate."""
    report = CsvLoadReport()
    layout = survey(path, types=types, all_strings=all_strings, lenient=lenient, report=report)
    _unchanged(path, layout)  # before anything is written
    columns = layout.header
    rel_type = identifier(rel_type, "the relationship type")
    (start_label, start_prop, start_col), (end_label, end_prop, end_col) = start, end
    for name, what in ((start_label, "label"), (start_prop, "property"), (end_label, "label"), (end_prop, "property")):
        identifier(name, f"the {what}")
    keep = [c for c in columns if c not in (start_col, end_col)] if properties is None else properties
    for column in (start_col, end_col, *keep):
        if column not in columns:
            raise ConfigurationError(f"the column {column!r} is not in {path} (columns: {', '.join(columns)})")
    for column in columns:
        identifier(column, "the column")
    _ensure_index(db, start_label, start_prop)
    _ensure_index(db, end_label, end_prop)
    start_kind, end_kind = _stored_kind(db, start_label, start_prop), _stored_kind(db, end_label, end_prop)
    cypher = (
        f"UNWIND $rows AS row MATCH (a:{start_label} {{{start_prop}: row.a}}) "
        f"MATCH (b:{end_label} {{{end_prop}: row.b}}) "
        f"MERGE (a)-[r:{rel_type}]->(b) SET r += row.props"
    )
    rows = typed_rows(path, layout, lenient=lenient, report=report)
    for batch in _batches(rows):  # a batch at a time: its endpoints looked up, its relationships written
        ends_of = [
            (_as_stored(row.get(start_col), start_kind), _as_stored(row.get(end_col), end_kind)) for _, row in batch
        ]
        starts = _found(db, start_label, start_prop, {a for a, _ in ends_of if a is not None})
        ends = _found(db, end_label, end_prop, {b for _, b in ends_of if b is not None})
        items = []
        for (line, row), (a, b) in zip(batch, ends_of, strict=True):
            if a is None or a not in starts:
                report.skip(line, f"start node :{start_label} not found", f"{start_prop} = {a!r}")
            elif b is None or b not in ends:
                report.skip(line, f"end node :{end_label} not found", f"{end_prop} = {b!r}")
            else:
                items.append({"a": a, "b": b, "props": _properties(row, keep)})
        _write(db, cypher, items, report)
    return report
