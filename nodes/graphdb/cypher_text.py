"""Just enough Cypher lexing for the adapters: one scanner, three uses.

- the final RETURN clause's column names, so the FalkorDB adapter can cap rows
  inside the database as `CALL { query } RETURN <columns> LIMIT n` (naming the
  columns keeps their order; `RETURN *` would sort them);
- splitting scripts into statements on `;`;
- spotting clauses in code (not in strings or comments), such as LOAD CSV.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Sequence

from reflexion_agents.nodes.graphdb.nesting import expression_depth
from reflexion_agents.schemas.errors import CypherSyntaxError

_CLAUSE_END = re.compile(r"\b(ORDER\s+BY|SKIP|LIMIT|UNION)\b", re.IGNORECASE)
_ALIAS = re.compile(r"\s+AS\s+(`(?:[^`]|``)+`|\w+)\s*$", re.IGNORECASE)
_LOAD_CSV = re.compile(r"\bLOAD\s+CSV\b", re.IGNORECASE)
_CALL = re.compile(r"\bCALL\b", re.IGNORECASE)
_NAME_PART = r"(?:`(?:[^`]|``)*`|\w+)"
_PROCEDURE_NAME = re.compile(rf"\s*({_NAME_PART}(?:\s*\.\s*{_NAME_PART})*)")
_WRITE_CLAUSE = re.compile(r"\b(CREATE|MERGE|DELETE|DETACH|SET|REMOVE|DROP|FOREACH|INSERT|LOAD\s+CSV)\b", re.IGNORECASE)
_FIRST_WORD = re.compile(r"\s*([A-Za-z]+)")
WRITE_PROCEDURE = re.compile(r"(^|\.)(create|drop|delete|remove|set|add|update|merge|load)", re.IGNORECASE)
#: Clauses a read query may start with; anything else (GRANT, STOP DATABASE, ...) is refused from text.
READ_STARTS = frozenset({"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL", "USE"})
#: Procedures known to only read, for databases whose plans cannot be asked for.
READ_PROCEDURES = frozenset(
    {
        "db.labels",
        "db.relationshiptypes",
        "db.propertykeys",
        "db.indexes",
        "db.constraints",
        "db.schema.visualization",
        "db.schema.nodetypeproperties",
        "db.schema.reltypeproperties",
        "db.idx.fulltext.querynodes",
        "db.idx.fulltext.queryrelationships",
        "db.idx.vector.querynodes",
        "db.index.fulltext.querynodes",
        "db.index.fulltext.queryrelationships",
        "db.index.vector.querynodes",
    }
)

COMMENT = -1  # the "depth" of a character inside a comment
LITERAL = -2  # the "depth" of a character inside a string or a backtick name, quotes included


#: Texts up to this length have their scan cached: a query is scanned by several checks before it
#: runs (the write refusals, the row cap's wrapper, the repeat check), and scripts are too big to keep.
CACHED_SCAN_CHARS = 4_000  # 256 entries of at most 4,000 characters: a few MB


def code_depths(text: str) -> tuple[int, ...]:
    """Bracket depth of each character of code; COMMENT or LITERAL for the rest."""
    return _cached_depths(text) if len(text) <= CACHED_SCAN_CHARS else _scan_depths(text)


@functools.lru_cache(maxsize=256)
def _cached_depths(text: str) -> tuple[int, ...]:
    return _scan_depths(text)


#: Where the scan must look: a quote, a comment's start, a bracket. Code between them is one depth.
_SCAN_STOP = re.compile(r"""['"`]|//|/\*|[()\[\]{}]""")
#: The rest of a string or backtick name after its opening quote (a backslash escapes in strings).
_QUOTED_REST = {
    "'": re.compile(r"(?:[^'\\]|\\.)*'", re.DOTALL),
    '"': re.compile(r'(?:[^"\\]|\\.)*"', re.DOTALL),
    "`": re.compile(r"[^`]*`"),
}


def _scan_depths(text: str) -> tuple[int, ...]:
    """Jumps from one quote, comment or bracket to the next: every query a model writes is scanned
    before it runs, so the scan does not look at each character in Python."""
    size = len(text)
    depths, depth, i = [COMMENT] * size, 0, 0
    while i < size:
        stop = _SCAN_STOP.search(text, i)
        at = stop.start() if stop else size
        depths[i:at] = [depth] * (at - i)
        if stop is None:
            break
        token = stop.group()
        if token in ("'", '"', "`"):
            rest = _QUOTED_REST[token].match(text, at + 1)
            i = rest.end() if rest else size  # an unclosed string runs to the end
            depths[at:i] = [LITERAL] * (i - at)
        elif token == "//":
            end = text.find("\n", at)
            i = size if end == -1 else end
        elif token == "/*":
            end = text.find("*/", at + 2)
            i = size if end == -1 else end + 2
        else:
            if token in ")]}":
                depth -= 1
            depths[at] = depth
            if token in "([{":
                depth += 1
            i = at + 1
    return tuple(depths)


def closing_bracket(code: str, depths: tuple[int, ...], opening: int) -> int | None:
    """Where the bracket at `opening` in `code` (strings and comments blanked, `depths` its
    `code_depths`) closes: the first closer of its kind back at its depth; None if it never does."""
    closer, level = {"(": ")", "[": "]", "{": "}"}[code[opening]], depths[opening]
    return next((i for i in range(opening + 1, len(code)) if code[i] == closer and depths[i] == level), None)


def code_only(text: str) -> str:
    """`text` with strings, backtick names and comments blanked out, same length."""
    return _blanked(text, strings_too=True)


def comments_blanked(text: str) -> str:
    """`text` with its comments blanked out, strings kept, same length."""
    return _blanked(text, strings_too=False)


def _blanked(text: str, *, strings_too: bool) -> str:
    return _cached_blanked(text, strings_too) if len(text) <= CACHED_SCAN_CHARS else _blank(text, strings_too)


@functools.lru_cache(maxsize=512)
def _cached_blanked(text: str, strings_too: bool) -> str:
    return _blank(text, strings_too)


def _blank(text: str, strings_too: bool) -> str:
    """Comments (and strings and backtick names, when `strings_too`) as spaces."""
    depths = code_depths(text)
    if strings_too:
        return "".join([ch if depth >= 0 else " " for ch, depth in zip(text, depths, strict=True)])
    return "".join([ch if depth != COMMENT else " " for ch, depth in zip(text, depths, strict=True)])


def strip_comments(text: str) -> str:
    """`text` without its comments (line breaks kept)."""
    depths = code_depths(text)
    return "".join(ch for i, ch in enumerate(text) if depths[i] != COMMENT or ch == "\n")


def split_statements(text: str) -> list[str]:
    """Split a script on `;` outside strings and comments (comments are dropped)."""
    depths, statements, start = code_depths(text), [], 0
    for i, ch in enumerate(text):
        if ch == ";" and depths[i] >= 0:
            statements.append(text[start:i])
            start = i + 1
    statements.append(text[start:])
    return [s for s in (strip_comments(s).strip() for s in statements) if s]


def statements_with_lines(text: str) -> list[tuple[int, str]]:
    """`split_statements`, each with the line (1-based) where its code starts, for error messages."""
    depths, found, start = code_depths(text), [], 0
    for end in [i for i, ch in enumerate(text) if ch == ";" and depths[i] >= 0] + [len(text)]:
        statement = strip_comments(text[start:end]).strip()
        if statement:
            first = next(i for i in range(start, end) if depths[i] >= 0 and not text[i].isspace())
            found.append((text.count("\n", 0, first) + 1, statement))
        start = end + 1
    return found


def _split_top_level(text: str, depths: Sequence[int], sep: str = ",") -> list[str]:
    parts, start = [], 0
    for i, ch in enumerate(text):
        if ch == sep and depths[i] == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def return_columns(cypher: str) -> list[str] | None:
    """Column names of the last top-level RETURN, or None when they cannot be known (`RETURN *`)."""
    depths, code = code_depths(cypher), code_only(cypher)
    starts = [m.start() for m in re.finditer(r"\bRETURN\b", code, re.IGNORECASE) if depths[m.start()] == 0]
    if not starts:
        return None
    begin = starts[-1] + len("RETURN")
    body_code = code[begin:]
    end = next((m.start() for m in _CLAUSE_END.finditer(body_code) if depths[begin + m.start()] == 0), len(body_code))
    body, body_depths = cypher[begin : begin + end], depths[begin : begin + end]
    columns: list[str] = []
    for item in _split_top_level(body, body_depths):
        item = strip_comments(item).strip()
        item = re.sub(r"^DISTINCT\b\s*", "", item, flags=re.IGNORECASE) if not columns else item
        if not item or item == "*":
            return None
        alias = _ALIAS.search(item)
        name = alias.group(1) if alias else item
        if name.startswith("`") and name.endswith("`"):
            name = name[1:-1].replace("``", "`")
        columns.append(name)
    return columns


def quote_name(name: str) -> str:
    """Backtick-quote a label, type, property or column name for Cypher."""
    return "`" + name.replace("`", "``") + "`"


def reads_server_files(cypher: str) -> bool:
    """True for LOAD CSV, which reads files or URLs from the database server's side."""
    return bool(_LOAD_CSV.search(code_only(cypher)))


def _is_keyword_at(code: str, start: int, end: int) -> bool:
    """A word in code is a clause, not a name: not a property (`n.set`), a label (`:Set`) or a map key
    (`{remove: 1}`)."""
    before = code[:start].rstrip()[-1:]
    after = code[end:].lstrip()[:1]
    return before not in (".", ":") and after != ":"


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # valid in JSON ("\\ud800") and Python strings; UTF-8 cannot encode it
_PLAN_PREFIX = re.compile(r"^\s*(EXPLAIN|PROFILE)\b", re.IGNORECASE)
_LITERAL_RANGE = re.compile(r"\brange\s*\(\s*(-?\d+)\s*,\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?\)", re.IGNORECASE)
MAX_QUERY_CHARS = 20_000  # model-written queries are a few hundred characters
MAX_NESTING = 12  # nested expressions (nodes.graphdb.nesting): compile time grows ~1.8-fold a level (25: 2 minutes)
MAX_RANGE = 10_000_000  # range() builds its whole list at once; 10^9 elements is 16 GB, before any limit applies


def refuse_unsendable(cypher: str) -> None:
    """Refuse, before the server sees it, what a database would misread or could not survive:
    lone surrogates (a model's `"\\ud800"` is valid JSON, but no UTF-8 client can send it: redis-py
    raised UnicodeEncodeError mid-command), control characters (FalkorDB silently cuts a query at a
    NUL), EXPLAIN/PROFILE prefixes (on FalkorDB an EXPLAIN sent as a query runs the query), and
    queries whose size, bracket nesting or literal range() would cost the server more memory or
    compile time than any query should."""
    odd = _LONE_SURROGATE.search(cypher)
    if odd:
        raise CypherSyntaxError(
            f"the query holds a lone surrogate (U+{ord(odd.group()):04X}, character {odd.start() + 1}), "
            "which is not text and cannot be sent to the database; write the character meant, or leave it out",
            cypher,
        )
    bad = _CONTROL.search(cypher)
    if bad:
        raise CypherSyntaxError(f"the query holds a control character ({bad.group()!r}); send plain text", cypher)
    if len(cypher) > MAX_QUERY_CHARS:
        raise CypherSyntaxError(
            f"the query is {len(cypher):,} characters long; the limit is {MAX_QUERY_CHARS:,}", cypher
        )
    code = code_only(cypher)
    if _PLAN_PREFIX.match(code):
        raise CypherSyntaxError("send the query itself, without EXPLAIN or PROFILE", cypher)
    depth = expression_depth(code)
    if depth > MAX_NESTING:
        raise CypherSyntaxError(
            f"the query nests expressions {depth} levels deep (each bracket, CASE and prefix NOT, - or + "
            f"is a level); the limit is {MAX_NESTING}: write it flatter, with WITH steps",
            cypher,
        )
    for match in _LITERAL_RANGE.finditer(code):
        start, end, step = int(match.group(1)), int(match.group(2)), int(match.group(3) or 1)
        size = (end - start) // step + 1 if step else MAX_RANGE + 1
        if size > MAX_RANGE:
            raise CypherSyntaxError(
                f"range({start}, {end}) would build a list of {size:,} values; the limit is {MAX_RANGE:,}: "
                "count or aggregate over the graph's data instead",
                cypher,
            )


def lexical_write(cypher: str) -> str | None:
    """Why a query may change the database, judged from its text alone, or None. For databases
    whose query plans cannot be asked for (a user's own query hook), so it errs on the side of
    refusing: every statement must start with a read clause, no write clause may appear in its
    code (strings and comments aside), and every procedure it CALLs must be a known read-only one."""
    code = code_only(cypher)
    for statement in split_statements(code):
        first = _FIRST_WORD.match(statement)
        if first and first.group(1).upper() not in READ_STARTS:
            return f"a statement starting with {first.group(1).upper()}"
    for match in _WRITE_CLAUSE.finditer(code):
        if _is_keyword_at(code, match.start(), match.end()):
            return " ".join(match.group(1).upper().split())
    unknown = unlisted_procedures(cypher)
    return f"CALL {unknown[0]} (not a procedure known to only read)" if unknown else None


def called_procedures(cypher: str) -> list[str]:
    """Names of the procedures a query CALLs as the database resolves them: backticks, spaces and
    comments around dots removed (``CALL `db`.`idx` . x()`` and `CALL/**/db.idx.x()` are `db.idx.x`).
    Subqueries (`CALL {`, `CALL (x) {`) are not procedures."""
    depths = code_depths(cypher)
    code = "".join(" " if depths[i] == COMMENT else ch for i, ch in enumerate(cypher))  # names kept
    names = []
    for match in _CALL.finditer(code_only(cypher)):
        following = code[match.end() :].lstrip()[:1]
        if following in ("{", "(", ""):
            continue
        name = _PROCEDURE_NAME.match(code, match.end())
        if name:
            parts = re.findall(_NAME_PART, name.group(1))
            names.append(".".join(p[1:-1].replace("``", "`") if p.startswith("`") else p for p in parts))
    return names


def unlisted_procedures(cypher: str, allowed: Collection[str] = ()) -> list[str]:
    """The procedures a query calls that are neither known to only read (`READ_PROCEDURES`) nor in
    `allowed`: a database whose plans call everything a read (Neo4j's EXPLAIN says `r` for
    `apoc.load.json`, which reads the server's files) must not run them."""
    listed = READ_PROCEDURES | {p.lower() for p in allowed}
    return [p for p in called_procedures(cypher) if p.lower() not in listed]


@functools.lru_cache(maxsize=4096)  # the loop compares each new action with every earlier one
def normalise_query(cypher: str) -> str:
    """Collapse whitespace outside strings and drop comments and a trailing `;`, for comparing queries."""
    text = strip_comments(cypher).strip().rstrip(";").strip()
    depths = code_depths(text)
    out: list[str] = []
    for i, ch in enumerate(text):
        if ch.isspace() and depths[i] != LITERAL:
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
    return "".join(out).strip()
