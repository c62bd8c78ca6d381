"""Does a dataset fit the graph it is scored on? A dataset written for another graph scores 100%
by accident: every gold result is empty, and so is every answer."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from reflexion_agents.nodes.evaluation.dataset import EvalItem
from reflexion_agents.nodes.evaluation.gold import GoldResult
from reflexion_agents.nodes.graphdb.cypher_text import code_only
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase

_NODE_LABEL = re.compile(r"\(\s*\w*\s*((?::\s*`?\w+`?\s*)+)")
_REL_TYPE = re.compile(r"\[\s*\w*\s*:\s*((?:`?\w+`?\s*\|?\s*)+)")
_NAME = re.compile(r"\w+")
MIN_RESULTS_JUDGED = 10


@dataclass(frozen=True)
class Fit:
    """How well the gold queries fit the graph."""

    queries: int
    foreign: int  # gold queries naming a label or relationship type the graph does not have
    unknown_names: list[str]
    runnable: int
    empty: int  # runnable gold queries whose result is empty

    @property
    def fits(self) -> bool:
        """Most gold queries use the graph's own names, and most gold results hold rows (judged
        from `MIN_RESULTS_JUDGED` results on: a handful of empty ones says too little)."""
        mostly_empty = self.runnable >= MIN_RESULTS_JUDGED and self.empty * 2 > self.runnable
        return self.foreign * 2 <= self.queries and not mostly_empty

    def explain(self, graph: str) -> str:
        names = ", ".join(self.unknown_names[:8]) or "none"
        return (
            f"the dataset does not fit the graph {graph!r}: {self.foreign} of {self.queries} gold queries name "
            f"labels or relationship types it does not have ({names}), and {self.empty} of {self.runnable} gold "
            "results that ran are empty, so empty answers would score as correct. "
            "Evaluate on the graph the dataset was written for (--graph), or pass --force to score anyway"
        )


def names_in(cypher: str) -> set[str]:
    """The labels and relationship types a query's patterns name (not those in strings or comments)."""
    code = code_only(re.sub(r"`([^`]*)`", lambda m: re.sub(r"\W", "_", m.group(1)), cypher))  # keep `Quoted` names
    names = {n for m in _NODE_LABEL.finditer(code) for n in _NAME.findall(m.group(1))}
    return names | {n for m in _REL_TYPE.finditer(code) for n in _NAME.findall(m.group(1))}


def dataset_fit(db: GraphDatabase, items: list[EvalItem], gold: Mapping[int, GoldResult]) -> Fit:
    known = set(db.labels()) | set(db.relationship_types())
    unknown: set[str] = set()
    foreign = 0
    for item in items:
        missing = names_in(item.cypher) - known
        foreign += bool(missing)
        unknown |= missing
    runnable = empty = 0
    for item in items:  # one result at a time: `gold` may be on disk
        result = gold[item.index]
        if not result.error:
            runnable += 1
            empty += not result.rows
    return Fit(queries=len(items), foreign=foreign, unknown_names=sorted(unknown), runnable=runnable, empty=empty)
