"""The gold queries' own results on the chosen database: the reference each answer is scored
against, and the list of gold queries the backend cannot run (reported, never scored)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nodes.evaluation.dataset import EvalItem
from nodes.graphdb.protocol import GraphDatabase
from schemas.errors import QueryError


@dataclass
class GoldResult:
    columns: list[str] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)
    error: str | None = None  # why the backend could not run it; such items are excluded
    truncated: bool = False


def run_gold(db: GraphDatabase, items: list[EvalItem], *, timeout: float, row_cap: int) -> dict[int, GoldResult]:
    """Each item's gold result, read-only; a gold result larger than `row_cap` is excluded too,
    since a capped answer could not be compared with it."""
    results: dict[int, GoldResult] = {}
    for item in items:
        try:
            result = db.query(item.cypher, timeout=timeout, row_cap=row_cap)
        except QueryError as e:
            results[item.index] = GoldResult(error=f"{type(e).__name__}: {e.message}"[:300])
            continue
        gold = GoldResult(result.columns, [list(r) for r in result.rows], truncated=result.truncated)
        if result.truncated:
            gold.error = f"the gold result has more than {row_cap} rows"
        results[item.index] = gold
    return results
