"""Just enough Cypher lexing to find the final RETURN clause's column names.

The FalkorDB adapter caps rows inside the database by wrapping a query as
`CALL { query } RETURN <columns> LIMIT n`; naming the columns keeps their
order (`RETURN *` would sort them).
"""

from __future__ import annotations

import re

_CLAUSE_END = re.compile(r"(ORDER\s+BY|SKIP|LIMIT|UNION)\b", re.IGNORECASE)
_ALIAS = re.compile(r"\s+AS\s+(`(?:[^`]|``)+`|\w+)\s*$", re.IGNORECASE)


def _top_level_mask(text: str) -> list[bool]:
    """True for each character outside strings, comments, backticks and brackets."""
    mask, depth, quote, i = [False] * len(text), 0, None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote != "`":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end == -1 else end
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            mask[i] = True
        i += 1
    return mask


def _split_top_level(text: str, sep: str = ",") -> list[str]:
    mask, parts, start = _top_level_mask(text), [], 0
    for i, ch in enumerate(text):
        if ch == sep and mask[i]:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def return_columns(cypher: str) -> list[str] | None:
    """Column names of the last top-level RETURN, or None when they cannot be known (`RETURN *`)."""
    mask = _top_level_mask(cypher)
    starts = [
        m.start()
        for m in re.finditer(r"\bRETURN\b", cypher, re.IGNORECASE)
        if mask[m.start()] and (m.start() == 0 or not cypher[m.start() - 1].isalnum())
    ]
    if not starts:
        return None
    body = cypher[starts[-1] + len("RETURN"):]
    body_mask = _top_level_mask(body)
    end = next((m.start() for m in _CLAUSE_END.finditer(body) if body_mask[m.start()]), len(body))
    body = re.sub(r"^\s*DISTINCT\b", "", body[:end], flags=re.IGNORECASE)
    columns = []
    for item in _split_top_level(body):
        item = item.strip()
        if not item or item == "*":
            return None
        alias = _ALIAS.search(item)
        name = alias.group(1) if alias else item
        if name.startswith("`") and name.endswith("`"):
            name = name[1:-1].replace("``", "`")
        columns.append(name)
    return columns


def quote_column(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
