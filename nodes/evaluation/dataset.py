"""(question, gold Cypher) datasets: the 767 movies questions shipped with the package, or any CSV
with a `question` and a `cypher` column (a `type` column groups the report)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from reflexion_agents.nodes.graphdb.demo_data import MOVIES_QUESTIONS_CSV
from reflexion_agents.schemas.errors import ConfigurationError


@dataclass(frozen=True)
class EvalItem:
    index: int  # the row's position in the file, from 0
    question: str
    cypher: str
    type: str = "all"


def load_dataset(path: str | Path = MOVIES_QUESTIONS_CSV, *, limit: int | None = None) -> list[EvalItem]:
    """The file's pairs in order, at most `limit` of them. (The harness runs the flows without the
    few-shot store, so the examples that store starts with, taken from this file, cannot show them an answer.)"""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = {"question", "cypher"} - set(reader.fieldnames or [])
            if missing:
                raise ConfigurationError(
                    f"{path} lacks the column(s) {', '.join(sorted(missing))} (it needs question and cypher)"
                )
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigurationError(f"cannot read the dataset {path}: {e}") from e
    items = [
        EvalItem(
            index,
            (row.get("question") or "").strip(),
            (row.get("cypher") or "").strip(),
            (row.get("type") or "all").strip() or "all",
        )
        for index, row in enumerate(rows)  # a short row leaves its missing cells None
        if (row.get("question") or "").strip() and (row.get("cypher") or "").strip()
    ]
    return items[:limit] if limit is not None else items
