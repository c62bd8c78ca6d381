"""Expressions that grow past any memory limit inside one value, bounded or refused before FalkorDB
runs them.

FalkorDB's per-query memory cap (`QUERY_MEM_CAPACITY`) counts what the query's operations hold,
not every value an expression builds on the way, so two families escaped it (measured on a server
held to 6 GB of address space, benchmarks/runaway_queries.py for the figures):

- **A range whose size is known only when the query runs.** `range(1, c * 1000000)` with `c` a
  count is built whole before `any(...)`, `UNWIND` or `size(...)` reads it: 2.6 GB for 170 million
  values, past the timeout. The literal form is refused by `refuse_unsendable`; this one cannot be
  known from the text, so each such `range()` is sent with a guard on its step: when the range
  would hold `MAX_RANGE` values or more, the step becomes 0 and FalkorDB stops the query at once
  with its own error, before allocating anything, which the adapter reports as this limit.
- **A `reduce` whose accumulator goes inside itself.** `reduce(l = [], x IN xs | l + [l])`, or
  `l + l`, doubles what it holds at each step: 5,100 steps killed the server (Out Of Memory), and
  a bystander waited 4.9 s and saw two failures. Such a `reduce` is refused; `collect()` or a list
  comprehension builds a list without it. (`l + [x]` grows by one value a step and is left alone.)
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import MAX_RANGE, code_only
from reflexion_agents.schemas.errors import CypherSyntaxError, QueryError

_RANGE_CALL = re.compile(r"(?<![\w.$`])range\s*\(", re.IGNORECASE)
_REDUCE_CALL = re.compile(r"(?<![\w.$`])reduce\s*\(", re.IGNORECASE)
_INTEGER = re.compile(r"\s*-?\d+\s*")
_SEGMENT_WORDS = re.compile(r"\b(?:CASE|WHEN|THEN|ELSE|END)\b", re.IGNORECASE)
_OPENING, _CLOSING = "([{", ")]}"
ZERO_STEP_ERROR = "step argument to range() can't be 0"
_WRITTEN_ZERO_STEP = re.compile(r"range\s*\([^()]*,[^()]*,\s*0\s*\)", re.IGNORECASE)


def _closing(code: str, opening: int) -> int:
    """The index of the bracket closing the one at `opening` in `code`, or -1."""
    level = 0
    for i in range(opening, len(code)):
        level += code[i] in _OPENING
        level -= code[i] in _CLOSING
        if level == 0:
            return i
    return -1


def _top_level_split(code: str, start: int, end: int, separator: str) -> list[tuple[int, int]]:
    """Spans of `code[start:end]` between `separator`s outside brackets."""
    spans, level, begin = [], 0, start
    for i in range(start, end):
        level += code[i] in _OPENING
        level -= code[i] in _CLOSING
        if code[i] == separator and level == 0:
            spans.append((begin, i))
            begin = i + 1
    spans.append((begin, end))
    return spans


def guard_runtime_ranges(cypher: str) -> str:
    """`cypher` with each `range()` whose bounds are not all integer literals sent with a guard on its
    step (see the module's docstring); ranges of literals, and text in strings and comments, as written."""
    text = cypher
    starts = [m.start() for m in _RANGE_CALL.finditer(code_only(text))]
    for start in reversed(starts):  # innermost and rightmost first: earlier positions stay valid
        code = code_only(text)
        opening = code.index("(", start)
        closing = _closing(code, opening)
        if closing < 0:
            continue  # unbalanced: the server's parser will say so
        spans = _top_level_split(code, opening + 1, closing, ",")
        arguments = [text[a:b].strip() for a, b in spans]
        if len(arguments) not in (2, 3) or all(_INTEGER.fullmatch(code[a:b]) for a, b in spans):
            continue
        if len(arguments) == 3 and _INTEGER.fullmatch(code[slice(*spans[2])]) and int(arguments[2]) == 0:
            continue  # a zero step written in the query: FalkorDB's own error says so
        low, high = arguments[0], arguments[1]
        if len(arguments) == 2:
            step = f"CASE WHEN ({high}) - ({low}) >= {MAX_RANGE} THEN 0 ELSE 1 END"
        else:
            given = arguments[2]
            span, most = f"({high}) - ({low})", f"{MAX_RANGE} * ({given})"  # no division: the step may be 0
            step = (
                f"CASE WHEN ({given}) > 0 AND {span} >= {most} THEN 0 "
                f"WHEN ({given}) < 0 AND {span} <= {most} THEN 0 ELSE {given} END"
            )
        text = f"{text[: opening + 1]}{low}, {high}, {step}{text[closing:]}"
    return text


def runtime_range_error(message: str, cypher: str) -> QueryError | None:
    """The limit's own error for FalkorDB's zero-step error on a query whose range() was guarded
    (not one that wrote a zero step itself); None otherwise."""
    if ZERO_STEP_ERROR not in message or _WRITTEN_ZERO_STEP.search(code_only(cypher)):
        return None
    return QueryError(
        f"a range() in the query would hold {MAX_RANGE:,} values or more once its bounds are computed; "
        "the limit is that: filter or aggregate before building the range, or page through it",
        cypher,
    )


def _accumulator_grows_into_itself(code: str, opening: int, closing: int) -> str | None:
    """The accumulator's name if the `reduce(...)` between the brackets puts it inside itself."""
    first, *rest = _top_level_split(code, opening + 1, closing, ",")
    if not rest or "=" not in code[first[0] : first[1]]:
        return None
    accumulator = code[first[0] : first[1]].split("=", 1)[0].strip().strip("`")
    remainder = (rest[0][0], rest[-1][1])
    pipes = _top_level_split(code, *remainder, "|")
    if len(pipes) < 2 or not re.fullmatch(r"\w+", accumulator):
        return None
    step_start, step_end = pipes[1][0], pipes[-1][1]
    mention = re.compile(rf"(?<![\w.$`]){re.escape(accumulator)}(?![\w`])")
    level, segment_counts = 0, [0]
    for i in range(step_start, step_end):
        ch = code[i]
        if ch in "[{":
            level += 1
        elif ch in "]}":
            level -= 1
        if _SEGMENT_WORDS.match(code, i) and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")):
            segment_counts.append(0)
        found = mention.match(code, i)
        if found and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] in "_.$`")):
            if level > 0:
                return accumulator  # inside a list or map it builds: [l], {a: l}, [y IN l | y]
            segment_counts[-1] += 1
            if segment_counts[-1] > 1:
                return accumulator  # added to itself: l + l
    return None


def refuse_self_growing_reduce(cypher: str) -> None:
    """Raise CypherSyntaxError for a `reduce` whose accumulator goes inside itself (module docstring)."""
    code = code_only(cypher)
    for match in _REDUCE_CALL.finditer(code):
        opening = match.end() - 1
        closing = _closing(code, opening)
        if closing < 0:
            continue
        accumulator = _accumulator_grows_into_itself(code, opening, closing)
        if accumulator is not None:
            raise CypherSyntaxError(
                f"this reduce() puts its accumulator `{accumulator}` inside itself (or adds it to itself), so "
                "what it holds doubles at every step and no memory limit stops it: build lists with collect() "
                f"or a list comprehension, or add one value a step (`{accumulator} + [x]`)",
                cypher,
            )
