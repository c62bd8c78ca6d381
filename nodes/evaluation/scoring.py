"""Execution accuracy: do the agent's rows equal the gold query's rows?

The rules, each a choice a person grading by hand would make:

- **Values.** Numbers compare as numbers to 9 significant digits (`2` equals `2.0`, and
  `3.3333333333` equals `3.333333333`); booleans stay booleans (`true` is not `1`); NaN counts as
  null; lists compare element by element; maps (nodes, relationships, properties) compare by
  their items; text compares exactly.
- **Columns.** Names do not matter (`m.title` and `title` are the same answer); the number of
  columns does. Columns are aligned by name when the normalised names match, otherwise by the
  first order of the agent's columns that makes the rows equal.
- **Order.** Rows compare as multisets, unless the gold query sorts (`ORDER BY`): then the order
  matters too, except among rows that tie on the sort columns, and, when the gold query also
  cuts with `LIMIT`, except which of the rows tied at the cut were kept.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from itertools import permutations
from typing import Any

MAX_PERMUTED_COLUMNS = 6
ORDER_BY = re.compile(r"\bORDER\s+BY\b(?P<keys>.*?)(?=\bSKIP\b|\bLIMIT\b|$)", re.I | re.S)
LIMIT = re.compile(r"\bLIMIT\b", re.I)


def normalise_value(value: Any) -> Any:
    """A hashable value that is equal for answers a person would call equal."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ("bool", value)  # tagged: True == 1 in Python, not in an answer
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isnan(number):
            return None
        return float(f"{number:.9g}")
    if isinstance(value, (list, tuple)):
        return ("list", tuple(normalise_value(v) for v in value))
    if isinstance(value, dict):
        return ("map", tuple(sorted((str(k), normalise_value(v)) for k, v in value.items())))
    return str(value) if not isinstance(value, str) else value


def normalise_column(name: str) -> str:
    """`m.title`, `Title` and `title` name the same column."""
    return re.sub(r"[^a-z0-9]", "", name.rsplit(".", 1)[-1].lower())


def _rows(rows: Sequence[Sequence[Any]], order: Sequence[int] | range) -> list[tuple[Any, ...]]:
    return [tuple(normalise_value(row[i]) for i in order) for row in rows]


def _column_orders(gold_columns: Sequence[str], columns: Sequence[str]) -> list[list[int]]:
    """Ways to read the agent's columns in the gold's order: by name first, else every permutation."""
    width = len(gold_columns)
    by_name = [normalise_column(c) for c in columns]
    wanted = [normalise_column(c) for c in gold_columns]
    orders: list[list[int]] = []
    if sorted(by_name) == sorted(wanted) and len(set(wanted)) == width:
        orders.append([by_name.index(w) for w in wanted])
    orders.append(list(range(width)))
    if width <= MAX_PERMUTED_COLUMNS:
        orders.extend(list(p) for p in permutations(range(width)))
    unique: list[list[int]] = []
    for order in orders:
        if order not in unique:
            unique.append(order)
    return unique


def sort_columns(gold_cypher: str, gold_columns: Sequence[str]) -> list[int] | None:
    """Indexes of the gold's columns its final ORDER BY sorts on; None if it does not sort,
    [] if it sorts on something that is not a returned column."""
    matches = list(ORDER_BY.finditer(gold_cypher))
    if not matches:
        return None
    names = {normalise_column(c): i for i, c in enumerate(gold_columns)}
    raw = {c.strip().lower(): i for i, c in enumerate(gold_columns)}
    keys = []
    for part in matches[-1].group("keys").split(","):
        expression = re.sub(r"\s+(ASC|DESC|ASCENDING|DESCENDING)\s*$", "", part.strip(), flags=re.I).strip().lower()
        index = raw.get(expression, names.get(normalise_column(expression)) if "(" not in expression else None)
        if index is None:
            return []
        keys.append(index)
    return keys


def _ordered_equal(gold: list[tuple[Any, ...]], got: list[tuple[Any, ...]], keys: list[int], limited: bool) -> bool:
    """Same order, allowing any order among rows tied on the sort keys, and any choice among the
    rows tied at a LIMIT cut."""
    if gold == got:
        return True
    if not keys or len(gold) != len(got):
        return False

    def key(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(row[i] for i in keys)

    if [key(r) for r in gold] != [key(r) for r in got]:
        return False
    groups: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(gold) + 1):
        if index == len(gold) or key(gold[index]) != key(gold[start]):
            groups.append((start, index))
            start = index
    for number, (begin, end) in enumerate(groups):
        last_at_cut = limited and number == len(groups) - 1
        if not last_at_cut and Counter(gold[begin:end]) != Counter(got[begin:end]):
            return False
    return True


def rows_match(
    gold_cypher: str,
    gold_columns: Sequence[str],
    gold_rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> bool:
    """Execution accuracy of one answer (see the module docstring)."""
    if not gold_rows and not rows:
        return True  # both empty: the same answer, whatever the columns are called
    if len(columns) != len(gold_columns) or len(rows) != len(gold_rows):
        return False
    gold = _rows(gold_rows, range(len(gold_columns)))
    mine = _rows(rows, range(len(columns)))
    keys = sort_columns(gold_cypher, gold_columns)
    limited = bool(LIMIT.search(gold_cypher))
    for order in _column_orders(gold_columns, columns):
        got = [tuple(row[i] for i in order) for row in mine]
        if keys is None:
            if Counter(gold) == Counter(got):
                return True
        elif _ordered_equal(gold, got, keys, limited):
            return True
    return False
