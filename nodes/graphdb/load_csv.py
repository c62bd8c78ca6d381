"""`LOAD CSV` statements of Neo4j import scripts, run on any backend by reading the CSV here.

Neo4j's example datasets import with `LOAD CSV WITH HEADERS FROM 'https://...' AS row ...`.
FalkorDB reads CSV only from an import folder the embedded server does not have, and a
database should not fetch URLs a script names anyway. So the loader reads each file itself,
from its import folders only (`nodes.graphdb.csv_sources`: `--csv-dir` and the script's folder,
or the URL when the caller allows fetching), with Neo4j's CSV rules, as a stream, and runs the
rest of the statement over the rows in batches: `UNWIND $rows AS row <rest>`.

Neo4j's rules, as the loader applies them: every value is a string unless the script converts
it (`toInteger(row.x)`); fields may be quoted (`"a, b"`, with `""` for a quote); an empty field
is null; with `WITH HEADERS` each row is a map of the header names, a short row's missing
fields are null and a long row's extra fields are dropped; without headers each row is a list.
`FIELDTERMINATOR` sets the separator. `USING PERIODIC COMMIT n` and
`CALL { ... } IN TRANSACTIONS OF n ROWS` set the batch size.
"""

from __future__ import annotations

import csv
import io
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflexion_agents.nodes.graphdb.csv_sources import opened_csv
from reflexion_agents.nodes.graphdb.cypher_text import code_only
from reflexion_agents.schemas.errors import ConfigurationError

DEFAULT_BATCH = 1000

_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_LOAD_CSV_WORDS = re.compile(r"\bLOAD\s+CSV\b", re.IGNORECASE)
_LOAD_CSV = re.compile(
    rf"LOAD\s+CSV\s+(?P<headers>WITH\s+HEADERS\s+)?FROM\s+(?P<url>{_STRING})\s+AS\s+(?P<var>\w+)"
    rf"(?:\s+FIELDTERMINATOR\s+(?P<term>{_STRING}))?(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_PERIODIC = re.compile(r"^\s*(?::auto\s+)?USING\s+PERIODIC\s+COMMIT(?:\s+(?P<n>\d+))?\s*$", re.IGNORECASE)
_IN_TRANSACTIONS = re.compile(
    r"\}\s*IN\s+(?:\d+\s+CONCURRENT\s+)?TRANSACTIONS(?:\s+OF\s+(?P<n>\d+)\s+ROWS?)?(?:\s+ON\s+ERROR\s+\w+)?"
    r"(?:\s+REPORT\s+STATUS\s+AS\s+\w+)?(?P<tail>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_WHOLE_CALL = re.compile(r"^\s*CALL\s*\{(?P<inner>\s*WITH\b.*)\}\s*$", re.IGNORECASE | re.DOTALL)
_SCOPED_CALL = re.compile(r"^\s*CALL\s*\((?P<vars>[\w\s,]*)\)\s*\{(?P<inner>.*)\}\s*$", re.IGNORECASE | re.DOTALL)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


def _literal(quoted: str) -> str:
    """A Cypher string literal's value (`'\\t'` and `'\\u0009'` are a tab)."""
    return re.sub(
        r"\\(u[0-9A-Fa-f]{4}|.)",
        lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5 else _ESCAPES.get(m.group(1), m.group(1)),
        quoted[1:-1],
    )


@dataclass(frozen=True)
class LoadCsvStatement:
    """One `LOAD CSV` statement, taken apart: where the rows come from and what runs on them."""

    url: str
    headers: bool
    variable: str
    terminator: str
    body: str  # the statement after `AS row`, with `IN TRANSACTIONS` removed
    batch: int

    def cypher(self, body: str | None = None) -> str:
        """The statement the database runs for each batch of rows (with `body` for the statement's own)."""
        return f"UNWIND $rows AS {self.variable} {(self.body if body is None else body).strip()}"


def parse_load_csv(statement: str) -> LoadCsvStatement | None:
    """The `LOAD CSV` statement in `statement`, or None if its code has none (words in strings and
    comments do not count). A `LOAD CSV` this loader cannot take apart is a `ConfigurationError`:
    handing it to the database would have the server read files or URLs itself."""
    text = re.sub(r"^\s*:auto\s+", "", statement, flags=re.IGNORECASE)
    code = code_only(text)
    found = [m.start() for m in _LOAD_CSV_WORDS.finditer(code)]
    if not found:
        return None
    match = _LOAD_CSV.match(text, found[0])
    if match is None or len(found) > 1:
        why = (
            "more than one LOAD CSV in one statement"
            if len(found) > 1
            else (
                "write it as LOAD CSV [WITH HEADERS] FROM 'url' AS row [FIELDTERMINATOR 'c'] ..., "
                "with the URL as a string literal"
            )
        )
        raise ConfigurationError(f"this LOAD CSV cannot be loaded here: {why}")
    batch = DEFAULT_BATCH
    prefix = text[: found[0]]
    if prefix.strip():
        periodic = _PERIODIC.match(prefix)
        if periodic is None:
            raise ConfigurationError(f"only USING PERIODIC COMMIT may come before LOAD CSV, not {prefix.strip()!r}")
        batch = int(periodic.group("n") or batch)
    body = match.group("rest")
    transactions = _IN_TRANSACTIONS.search(body)
    if transactions is not None:
        batch = int(transactions.group("n") or batch)
        body = body[: transactions.start()] + "}" + transactions.group("tail")
    body = _unwrapped_call(body)
    terminator = _literal(match.group("term")) if match.group("term") else ","
    if len(terminator) != 1:
        raise ConfigurationError(f"FIELDTERMINATOR must be one character, got {terminator!r}")
    return LoadCsvStatement(
        url=_literal(match.group("url")),
        headers=bool(match.group("headers")),
        variable=match.group("var"),
        terminator=terminator,
        body=body,
        batch=max(1, batch),
    )


def _unwrapped_call(body: str) -> str:
    """`CALL { WITH row ... }` or `CALL (row) { ... }` per row is the same pipeline without the
    block, which every backend runs (FalkorDB runs such a block for one row only)."""
    whole = _WHOLE_CALL.match(body)
    if whole is not None:
        return whole.group("inner")
    scoped = _SCOPED_CALL.match(body)
    if scoped is not None:
        names = scoped.group("vars").strip()
        return (f" WITH {names} " if names else " ") + scoped.group("inner").strip()
    return body


_readers = 0  # how many `long_fields` blocks are open now, in any thread or generator
_limit_before = 0
_readers_lock = threading.Lock()


@contextmanager
def long_fields() -> Iterator[None]:
    """Read fields of any length, as Neo4j does (Python's reader stops at 128 KB). The limit is the
    csv module's, for the whole process: it is raised while any file is being read (loads run side
    by side, and their readers are generators held open across database writes) and put back when
    the last one ends."""
    global _readers, _limit_before
    with _readers_lock:
        if _readers == 0:
            _limit_before = csv.field_size_limit(2**31 - 1)
        _readers += 1
    try:
        yield
    finally:
        with _readers_lock:
            _readers -= 1
            if _readers == 0:
                csv.field_size_limit(_limit_before)


def iter_csv_rows(handle: Iterable[str], headers: bool, terminator: str = ",") -> Iterator[Any]:
    """The rows Neo4j's LOAD CSV reads, one at a time as `handle` is read: maps of strings (null for
    empty or missing fields, extra fields dropped) with headers, lists of strings without."""
    reader = csv.reader(handle, delimiter=terminator, quotechar='"', doublequote=True, strict=True)
    names: list[str] | None = None
    try:
        with long_fields():
            for record in reader:
                if not record:
                    continue
                if names is None and record:
                    record[0] = record[0].lstrip("\ufeff")
                values = [value if value != "" else None for value in record]
                if not headers:
                    names = []
                    yield values
                elif names is None:
                    names = [name or f"_{i}" for i, name in enumerate(record)]
                else:
                    yield {name: values[i] if i < len(values) else None for i, name in enumerate(names)}
    except csv.Error as e:  # an unterminated quote, say: refuse rather than swallow the rows after it
        raise ConfigurationError(f"the CSV file is malformed near line {reader.line_num}: {e}") from e
    except UnicodeDecodeError as e:
        raise ConfigurationError(f"the CSV file is not UTF-8 text near line {reader.line_num + 1}: {e}") from e


def csv_rows(text: str, headers: bool, terminator: str = ",") -> list[Any]:
    """All the rows of CSV `text` (see `iter_csv_rows`)."""
    return list(iter_csv_rows(io.StringIO(text), headers, terminator))


def read_csv_source(
    url: str, csv_dir: Path | None = None, script_dir: Path | None = None, *, allow_http: bool = False
) -> str:
    """The whole text of the CSV file a script names, confined as `nodes.graphdb.csv_sources` says."""
    try:
        with opened_csv(url, csv_dir, script_dir, allow_http=allow_http) as handle:
            return handle.read()
    except UnicodeDecodeError as e:
        raise ConfigurationError(f"cannot read the CSV file {url!r} as UTF-8 text: {e}") from e
