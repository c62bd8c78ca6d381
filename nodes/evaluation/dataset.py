"""(question, gold Cypher) datasets: the 767 movies questions shipped with the package, or any CSV
with a `question` and a `cypher` column (a `type` column groups the report)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from nodes.graphdb.demo_data import MOVIES_QUESTIONS_CSV
from nodes.text2cypher.fewshots import SEED_EXAMPLES
from schemas.errors import ConfigurationError


@dataclass(frozen=True)
class EvalItem:
    index: int  # the row's position in the file, from 0
    question: str
    cypher: str
    type: str = "all"


def _normalised(question: str) -> str:
    return " ".join(question.lower().split())


def seed_questions(path: str | Path = SEED_EXAMPLES) -> set[str]:
    """The questions whose gold queries seed the few-shot store: a flow would be shown the answer."""
    with Path(path).open(newline="", encoding="utf-8") as handle:
        return {_normalised(row["question"]) for row in csv.DictReader(handle)}


def load_dataset(
    path: str | Path = MOVIES_QUESTIONS_CSV, *, exclude: set[str] | None = None, limit: int | None = None
) -> list[EvalItem]:
    """The file's pairs in order, without the questions in `exclude`, at most `limit` of them."""
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            missing = {"question", "cypher"} - set(reader.fieldnames or [])
            if missing:
                raise ConfigurationError(f"{path} lacks the column(s) {', '.join(sorted(missing))} (it needs question and cypher)")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise ConfigurationError(f"cannot read the dataset {path}: {e}") from e
    skip = exclude or set()
    items = [
        EvalItem(index, row["question"].strip(), row["cypher"].strip(), (row.get("type") or "all").strip() or "all")
        for index, row in enumerate(rows)
        if row.get("question", "").strip() and row.get("cypher", "").strip() and _normalised(row["question"]) not in skip
    ]
    return items[:limit] if limit is not None else items
