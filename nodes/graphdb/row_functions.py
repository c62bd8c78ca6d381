"""Neo4j functions FalkorDB lacks, computed for each `LOAD CSV` row before the rows are sent.

The loader reads a script's CSV itself (`nodes.graphdb.load_csv`), so a call whose arguments are the
row's fields and literals can be computed here, exactly as Neo4j would, and handed to FalkorDB as
one more field of the row: `SET s.date = datetime({epochMillis: apoc.date.parse(row.date, 'ms',
'MM/dd/yyyy')})` runs as `SET s.date = localdatetime(row.__neo4j_1)`, each row carrying its
`__neo4j_0` (the epoch milliseconds) and `__neo4j_1` (the instant's UTC fields).

Computed here:

- `apoc.date.parse(text[, unit, pattern, zone])` and `apoc.date.format(time[, unit, pattern,
  zone])`, Java patterns read as Java reads them (`nodes.graphdb.java_dates`);
- `apoc.text.capitalize(text)`, `apoc.text.replace(text, regex, replacement)`;
- `datetime(text)`, `datetime({epochMillis: x})`, `datetime({epochSeconds: x})`: FalkorDB has no
  `datetime`; its `localdatetime` holds the same instant in UTC; `date(datetime(...))` is the date
  the text's offset says, as Neo4j's (FalkorDB's `date()` takes no datetime).

A null argument gives null, as in Neo4j. A call with any other argument (a variable bound later,
an expression) is left as written: the loader then refuses an APOC call by name, and FalkorDB
reports any other. A value that does not fit (a date not in the pattern) fails the statement as
the data's fault, naming the value, unless the call comes after a WHERE or in a CASE: Neo4j never
evaluates it for a row the guard drops, so it is null here and the guard decides.

`point(map)` of a row missing a coordinate is null too (`null_safe_points`, for every statement).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from reflexion_agents.nodes.graphdb.cypher_text import closing_bracket, code_depths, code_only
from reflexion_agents.nodes.graphdb.java_dates import Token, format_date, parse_date, parse_pattern
from reflexion_agents.schemas.errors import QueryError

KEY_PREFIX = "__neo4j_"
_DEFAULT_PATTERN = "yyyy-MM-dd HH:mm:ss"
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_UNIT_NAMES = {"milliseconds": "ms", "millis": "ms", "seconds": "s", "minutes": "m", "hours": "h", "days": "d"}
_STRING = r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "\\": "\\", "'": "'", '"': '"'}


@dataclass(frozen=True)
class RowValue:
    """A value computed for each row, stored in the row under `key`."""

    key: str
    compute: Callable[[Mapping[str, Any]], Any]


#: An argument: read from a row (its field, a value computed before it, or a literal).
Argument = Callable[[Mapping[str, Any]], Any]


def computed_in_rows(body: str, variable: str) -> tuple[str, list[RowValue]]:
    """`body` (a LOAD CSV statement's, run over `variable`) with every call this module computes
    replaced by the row field holding its value, and how to compute those fields, in order."""
    values: list[RowValue] = []
    moments: dict[str, Callable[[Mapping[str, Any]], datetime | None]] = {}  # each computed datetime's instant
    while True:
        found = _next_call(body, variable, len(values), moments)
        if found is None:
            return body, values
        start, end, replacement, value = found
        body = body[:start] + replacement.format(var=variable, key=value.key) + body[end:]
        values.append(value)


def with_computed(row: Any, values: list[RowValue]) -> Any:
    """`row` with the computed fields added (a row read without headers is a list: left as it is)."""
    if not values or not isinstance(row, dict):
        return row
    for value in values:
        row[value.key] = value.compute(row)
    return row


_CALL = re.compile(
    r"\b(apoc\.date\.parse|apoc\.date\.format|apoc\.text\.capitalize|apoc\.text\.replace|datetime|date)\s*\(",
    re.IGNORECASE,
)


def _next_call(
    body: str, variable: str, count: int, moments: dict[str, Callable[[Mapping[str, Any]], datetime | None]]
) -> tuple[int, int, str, RowValue] | None:
    """The last computable call in `body` (the innermost of nested ones comes last): its span, the
    text to put there, and its value; None when none is left. A call after a WHERE or in a CASE may
    be one Neo4j never evaluates for a row the guard drops: a value it cannot compute is then null
    (the guard decides), not the statement's failure."""
    code, depths = code_only(body), code_depths(body)
    for match in reversed(list(_CALL.finditer(code))):
        if match.start() > 0 and code[match.start() - 1] == ".":
            continue  # a method or a namespaced name (`x.datetime(`), not the function
        opened = match.end() - 1
        close = closing_bracket(code, depths, opened)
        if close is None:
            continue
        arguments = _arguments(body, depths, opened, close)
        key = f"{KEY_PREFIX}{count}"
        made = _computation(match.group(1).lower(), arguments, variable, body[match.start() : close + 1], key, moments)
        if made is not None:
            replacement, compute = made
            if _GUARD.search(code, 0, match.start()):
                compute = _or_null(compute)
            return match.start(), close + 1, replacement, RowValue(key, compute)
    return None


_GUARD = re.compile(r"\b(WHERE|CASE)\b", re.IGNORECASE)


def _or_null(compute: Argument) -> Argument:
    def lenient(row: Mapping[str, Any]) -> Any:
        try:
            return compute(row)
        except QueryError:
            return None

    return lenient


def _arguments(body: str, depths: tuple[int, ...], opened: int, close: int) -> list[str]:
    inner, parts, start = depths[opened] + 1, [], opened + 1
    for i in range(opened + 1, close):
        if body[i] == "," and depths[i] == inner:
            parts.append(body[start:i].strip())
            start = i + 1
    last = body[start:close].strip()
    return [*parts, last] if parts or last else parts


def _computation(
    name: str,
    arguments: list[str],
    variable: str,
    call: str,
    key: str,
    moments: dict[str, Callable[[Mapping[str, Any]], datetime | None]],
) -> tuple[str, Argument] | None:
    """(the text replacing the call, the value's computation, stored under `key`), or None when the
    call is not computable."""
    if name == "datetime":
        if len(arguments) != 1:
            return None
        moment = _instant(arguments[0], variable)
        if moment is None:
            return None
        moments[key] = moment
        return "localdatetime({var}.{key})", _utc_fields(moment, call)
    if name == "date":  # of a datetime computed here: FalkorDB's date() takes no datetime
        computed = re.fullmatch(
            rf"localdatetime\(\s*{re.escape(variable)}\.({KEY_PREFIX}\d+)\s*\)", " ".join(arguments)
        )
        instant = moments.get(computed.group(1)) if computed is not None and len(arguments) == 1 else None
        return None if instant is None else ("date({var}.{key})", _day_fields(instant, call))
    read = [_argument(text, variable) for text in arguments]
    if any(r is None for r in read):
        return None
    args: list[Argument] = [r for r in read if r is not None]
    made = _APOC.get(name)
    if made is None or not made[0] <= len(args) <= made[1]:
        return None
    compute = made[2](args, call)
    return None if compute is None else ("{var}.{key}", compute)


def _argument(text: str, variable: str) -> Argument | None:
    """A field of the row (`row.x`, `row['x']`, `` row.`x y` ``), a literal, or None for anything else."""
    field = re.fullmatch(rf"{re.escape(variable)}\s*(?:\.\s*(\w+|`[^`]+`)|\[\s*({_STRING})\s*\])", text)
    if field is not None:
        name = field.group(1).strip("`") if field.group(1) else _literal(field.group(2))
        return lambda row: row.get(name)
    if re.fullmatch(_STRING, text):
        value: Any = _literal(text)
        return lambda row: value
    if _NUMBER.fullmatch(text):
        number = float(text) if "." in text else int(text)
        return lambda row: number
    if text.lower() == "null":
        return lambda row: None
    return None


def _literal(quoted: str) -> str:
    return re.sub(
        r"\\(u[0-9A-Fa-f]{4}|.)",
        lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5 else _ESCAPES.get(m.group(1), m.group(1)),
        quoted[1:-1],
    )


# -- APOC ------------------------------------------------------------------------------------------


def _constant(arg: Argument) -> Any:
    """An argument's value when it is the same for every row (a literal); a field gives None."""
    return arg({})


def _unit(arg: Argument | None) -> int | None:
    unit = "ms" if arg is None else _constant(arg)
    if not isinstance(unit, str):
        return None
    unit = _UNIT_NAMES.get(unit.lower(), unit.lower())
    return _UNITS.get(unit)


def _pattern(arg: Argument | None) -> list[Token] | None:
    pattern = _DEFAULT_PATTERN if arg is None else _constant(arg)
    return parse_pattern(pattern) if isinstance(pattern, str) else None


def _zone(arg: Argument | None) -> Any:
    if arg is None:
        return UTC
    name = _constant(arg)
    if not isinstance(name, str):
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _time_options(args: list[Argument]) -> tuple[int, list[Token], Any, bool] | None:
    """APOC's date functions' `(unit = 'ms', pattern = 'yyyy-MM-dd HH:mm:ss', zone = UTC)` after
    their first argument: (milliseconds a unit, the pattern, the zone, whether a zone was given),
    or None when one is not a literal this module reads."""
    rest = [*args[1:], None, None, None][:3]
    unit, tokens, zone = _unit(rest[0]), _pattern(rest[1]), _zone(rest[2])
    return None if unit is None or tokens is None or zone is None else (unit, tokens, zone, rest[2] is not None)


def _date_parse(args: list[Argument], call: str) -> Argument | None:
    """`apoc.date.parse(text, unit, pattern, zone)`: the time since the epoch, in `unit`."""
    options = _time_options(args)
    if options is None:
        return None
    text, (unit, tokens, zone, zone_given) = args[0], options

    def compute(row: Mapping[str, Any]) -> Any:
        value = text(row)
        if value is None or value == "":
            return None
        try:
            moment = parse_date(str(value), tokens)
        except ValueError as e:
            raise QueryError(f"{e}, in {call}", call) from None
        if zone_given and not any(letter in ("Z", "X") for letter, _ in tokens):
            moment = moment.replace(tzinfo=zone)  # a text without an offset is in the zone given
        return int((moment - _EPOCH) / timedelta(milliseconds=unit))  # toward zero, as Java's TimeUnit

    return compute


def _date_format(args: list[Argument], call: str) -> Argument | None:
    """`apoc.date.format(time, unit, pattern, zone)`: the time written with the pattern."""
    options = _time_options(args)
    if options is None:
        return None
    time, (unit, tokens, zone, _) = args[0], options

    def compute(row: Mapping[str, Any]) -> Any:
        value = time(row)
        if value is None or value == "":
            return None
        try:
            moment = _EPOCH + timedelta(milliseconds=float(value) * unit)
        except (TypeError, ValueError, OverflowError):
            raise QueryError(f"{value!r} is not a time in {call}", call) from None
        return format_date(moment.astimezone(zone), tokens)

    return compute


def _capitalize(args: list[Argument], call: str) -> Argument:
    def compute(row: Mapping[str, Any]) -> Any:
        value = args[0](row)
        if value is None:
            return None
        text = str(value)
        first = text[:1].upper() if len(text[:1].upper()) == 1 else text[:1]  # "ß" stays, as in Java
        return first + text[1:]

    return compute


def _replace(args: list[Argument], call: str) -> Argument | None:
    pattern, replacement = _constant(args[1]), _constant(args[2])
    if not isinstance(pattern, str) or not isinstance(replacement, str) or re.search(r"\(\?<?[=!<]|\\[pPQE]", pattern):
        return None  # Java's regex features Python reads otherwise: left to the refusal
    try:
        compiled = re.compile(pattern)
    except re.error:
        return None
    parts = _java_replacement(replacement)
    if parts is None or any(isinstance(p, int) and p > compiled.groups for p in parts):
        return None  # a group the pattern does not have: Java refuses it too

    def compute(row: Mapping[str, Any]) -> Any:
        value = args[0](row)
        if value is None:
            return None
        return compiled.sub(
            lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in parts), str(value)
        )

    return compute


def _java_replacement(replacement: str) -> list[str | int] | None:
    """Java's replacement string, taken apart: `$1` the group, `\\$` a dollar sign; None for a form
    Python reads otherwise (a named group)."""
    parts: list[str | int] = []
    i = 0
    while i < len(replacement):
        ch = replacement[i]
        if ch == "\\" and i + 1 < len(replacement):
            parts.append(replacement[i + 1])
            i += 2
        elif ch == "$":
            digits = re.match(r"\d+", replacement[i + 1 :])
            if digits is None:
                return None
            parts.append(int(digits.group()))
            i += 1 + len(digits.group())
        else:
            parts.append(ch)
            i += 1
    return parts


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: name: (fewest arguments, most, the computation's maker)
_APOC: dict[str, tuple[int, int, Callable[[list[Argument], str], Argument | None]]] = {
    "apoc.date.parse": (1, 4, _date_parse),
    "apoc.date.format": (1, 4, _date_format),
    "apoc.text.capitalize": (1, 1, _capitalize),
    "apoc.text.replace": (3, 3, _replace),
}

# -- datetime ----------------------------------------------------------------------------------------

_EPOCH_MAP = re.compile(r"\{\s*(epochMillis|epochSeconds)\s*:\s*(?P<arg>.+?)\s*\}", re.DOTALL | re.IGNORECASE)


def _instant(text: str, variable: str) -> Callable[[Mapping[str, Any]], datetime | None] | None:
    """How to read the instant `datetime(text)` means from a row, or None when it is not computable."""
    epoch = _EPOCH_MAP.fullmatch(text)
    if epoch is not None:
        since = _argument(epoch.group("arg"), variable)
        if since is None:
            return None
        scale = 1 if epoch.group(1).lower() == "epochmillis" else 1000  # Neo4j reads the keys in any case

        def from_epoch(row: Mapping[str, Any]) -> datetime | None:
            value = since(row)
            return None if value is None or value == "" else _EPOCH + timedelta(milliseconds=float(value) * scale)

        return from_epoch
    arg = _argument(text, variable)
    if arg is None:
        return None

    def from_text(row: Mapping[str, Any]) -> datetime | None:
        value = arg(row)
        if value is None:
            return None
        moment = datetime.fromisoformat(str(value).strip())
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    return from_text


def _utc_fields(moment: Callable[[Mapping[str, Any]], datetime | None], call: str) -> Argument:
    """The instant's UTC fields, as FalkorDB's `localdatetime({...})` takes them."""

    def compute(row: Mapping[str, Any]) -> Any:
        try:
            instant = moment(row)
        except (TypeError, ValueError, OverflowError) as e:
            raise QueryError(f"{call} cannot be read from this row: {e}", call) from None
        if instant is None:
            return None
        utc = instant.astimezone(UTC)
        fields = ("year", "month", "day", "hour", "minute", "second")
        return {**{f: getattr(utc, f) for f in fields}, "millisecond": utc.microsecond // 1000}

    return compute


# -- point() ------------------------------------------------------------------------------------------

_POINT = re.compile(r"(?<![.\w])point\s*\(", re.IGNORECASE)


def null_safe_points(cypher: str) -> str:
    """Each `point(map)` in `cypher` giving null when a value of the map is null, as in Neo4j (FalkorDB
    refuses the statement: "'latitude' and 'longitude' values in point map were not both valid
    numerics"). A CASE does not guard it (FalkorDB evaluates both branches); a list comprehension's
    filter does: `[p IN [map] WHERE none(k IN keys(p) WHERE p[k] IS NULL) | point(p)][0]`."""
    count = 0
    while True:
        code, depths = code_only(cypher), code_depths(cypher)
        calls = [m for m in _POINT.finditer(code) if not _guarded(code, m.start())]
        if not calls:
            return cypher
        call = calls[-1]
        opened = call.end() - 1
        close = closing_bracket(code, depths, opened)
        if close is None or not cypher[opened + 1 : close].strip():
            return cypher
        name = f"__point_{count}"
        guarded = (
            f"[{name} IN [{cypher[opened + 1 : close].strip()}] WHERE none(__key IN keys({name}) "
            f"WHERE {name}[__key] IS NULL) | point({name})][0]"
        )
        cypher, count = cypher[: call.start()] + guarded + cypher[close + 1 :], count + 1


def _guarded(code: str, at: int) -> bool:
    """Whether the point( at `at` is one this module wrote (its argument is its own variable)."""
    return re.match(r"point\s*\(__point_\d+\)", code[at:]) is not None


def _day_fields(moment: Callable[[Mapping[str, Any]], datetime | None], call: str) -> Argument:
    """The date of a datetime computed here, in its own offset as Neo4j's `date(datetime)` reads it
    (`2019-03-07T23:00-05:00` is the 7th), as FalkorDB's `date({...})` takes it."""

    def compute(row: Mapping[str, Any]) -> Any:
        try:
            instant = moment(row)
        except (TypeError, ValueError, OverflowError) as e:
            raise QueryError(f"{call} cannot be read from this row: {e}", call) from None
        return None if instant is None else {"year": instant.year, "month": instant.month, "day": instant.day}

    return compute
