"""`LOAD CSV` statements of Neo4j import scripts, run on any backend by reading the CSV here.

Neo4j's example datasets import with `LOAD CSV WITH HEADERS FROM 'https://...' AS row ...`.
FalkorDB reads CSV only from an import folder the embedded server does not have, and a
database should not fetch URLs a script names anyway. So the loader reads each file itself
(from a folder of downloaded files, a local path, or the URL) with Neo4j's CSV rules, and runs
the rest of the statement over the rows in batches: `UNWIND $rows AS row <rest>`.

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
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from nodes.graphdb.cypher_text import code_only
from schemas.errors import ConfigurationError

DEFAULT_BATCH = 1000
FETCH_TIMEOUT_S = 30.0

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

    def cypher(self) -> str:
        """The statement the database runs for each batch of rows."""
        return f"UNWIND $rows AS {self.variable} {self.body.strip()}"


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


@contextmanager
def long_fields() -> Iterator[None]:
    """Read fields of any length, as Neo4j does (Python's reader stops at 128 KB)."""
    before = csv.field_size_limit(2**31 - 1)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def csv_rows(text: str, headers: bool, terminator: str = ",") -> list[Any]:
    """The rows Neo4j's LOAD CSV reads from `text`: maps of strings (null for empty or missing
    fields, extra fields dropped) with headers, lists of strings without."""
    reader = csv.reader(
        io.StringIO(text.lstrip("\ufeff")), delimiter=terminator, quotechar='"', doublequote=True, strict=True
    )
    try:
        with long_fields():
            records = [[value if value != "" else None for value in record] for record in reader if record]
    except csv.Error as e:  # an unterminated quote, say: refuse rather than swallow the rows after it
        raise ConfigurationError(f"the CSV file is malformed near line {reader.line_num}: {e}") from e
    if not headers:
        return records
    if not records:
        return []
    names, rows = [name or f"_{i}" for i, name in enumerate(records[0])], []
    for record in records[1:]:
        rows.append({name: record[i] if i < len(record) else None for i, name in enumerate(names)})
    return rows


def read_csv_source(url: str, csv_dir: Path | None = None, script_dir: Path | None = None) -> str:
    """The text of the CSV file a script names: the URL's path under `csv_dir` (files downloaded
    once, loaded offline), or its file name there, then the same beside the script; else a local
    path as written (`file:///...` or a plain path); else the http(s) URL fetched."""
    try:
        parts = urlsplit(url)
    except ValueError as e:
        raise ConfigurationError(f"the CSV URL {url!r} is malformed: {e}") from e
    path = unquote(parts.path)
    for folder in (csv_dir, script_dir):
        for candidate in (folder / path.lstrip("/"), folder / Path(path).name) if folder is not None and path else ():
            if candidate.is_file():
                return _read_file(candidate)
    if parts.scheme in ("", "file"):
        local = Path(path if parts.scheme == "file" else url)
        if local.is_file():
            return _read_file(local)
        where = f" or in {csv_dir}" if csv_dir else " (pass --csv-dir with the folder that holds it)"
        raise ConfigurationError(f"the CSV file {url!r} was not found as {local}{where}")
    if parts.scheme in ("http", "https"):
        return _fetch(url, Path(path).name, csv_dir)
    raise ConfigurationError(f"cannot read the CSV URL {url!r}: use file:///, http(s):// or a path")


def _read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigurationError(f"cannot read the CSV file {path} as UTF-8 text: {e}") from e


def _fetch(url: str, name: str, csv_dir: Path | None) -> str:
    import httpx

    try:
        response = httpx.get(url, timeout=FETCH_TIMEOUT_S, follow_redirects=True)
        response.raise_for_status()
        return response.content.decode("utf-8-sig")
    except (httpx.HTTPError, httpx.InvalidURL, UnicodeDecodeError) as e:
        hint = f"no {name} in {csv_dir}" if csv_dir else f"download {name} and pass --csv-dir with its folder"
        raise ConfigurationError(f"cannot fetch {url} ({type(e).__name__}: {e}); {hint}") from e
