"""(question, Cypher) examples kept in the graph database itself, retrieved by similarity.

On FalkorDB the examples live in a graph of their own next to the data graph
(`<graph>__examples`), so they never show up in the data's schema or in the
model's queries; questions are found through FalkorDB's full-text index, or its
vector index when an embedding function is given. On any other backend the
store ranks examples by shared words on the client. No separate vector database
is needed either way.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.text2cypher.schema_pruning import words
from reflexion_agents.schemas.errors import GraphDatabaseError, GraphNotFoundError

EXAMPLE_LABEL = "Text2CypherExample"
SEED_EXAMPLES = Path(__file__).resolve().parents[1] / "graphdb" / "demo" / "fewshot_examples.csv"
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "list",
        "me",
        "many",
        "much",
        "of",
        "on",
        "or",
        "show",
        "the",
        "their",
        "them",
        "there",
        "these",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "with",
    ]
)
Embedder = Callable[[str], list[float]]
CANDIDATES_PER_RESULT = 5


class FewShotExample(BaseModel):
    question: str
    cypher: str
    source: str = "seed"  # "seed" (from a file) or "learned" (a corrected query the evaluator accepted)


def question_key(question: str) -> str:
    """Two questions with the same key are the same example."""
    return " ".join(re.findall(r"[a-z0-9]+", question.lower()))


def search_terms(question: str) -> list[str]:
    return sorted(w for w in words(question) if w not in STOPWORDS and len(w) > 1)


def ranked(question: str, rows: list[list[Any]], k: int) -> list[list[Any]]:
    """The `k` rows (question first) sharing the most words with `question`, per square root of their length."""
    asked = set(search_terms(question))
    scored = []
    for position, row in enumerate(rows):
        theirs = search_terms(row[0])
        shared = len(asked & set(theirs))
        if shared:
            scored.append((-shared / math.sqrt(len(theirs)), position, row))
    return [row for _, _, row in sorted(scored)[:k]]


def add_seed_rows(add: Callable[..., bool], path: str | Path) -> int:
    """`add` the (question, cypher) rows of a CSV file as seed examples; returns how many were new.
    Shared by both stores, which differ only in where `add` keeps them."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"question", "cypher"} <= set(rows[0]):
        raise ValueError(f"{path} needs the columns 'question' and 'cypher'")
    return sum(add(row["question"], row["cypher"], source="seed") for row in rows)


class FewShotStore:
    """Examples stored in `db` (for FalkorDB: pass the data graph; the graph `name`, by default
    `<graph>__examples`, holds them)."""

    def __init__(self, db: GraphDatabase, *, embed: Embedder | None = None, name: str | None = None) -> None:
        sibling = getattr(db, "sibling", None)
        self.native = db.dialect == "falkordb" and callable(sibling)
        if self.native:
            self.db: GraphDatabase = sibling(name or f"{db.graph_name}__examples")  # type: ignore[misc, attr-defined]
        else:
            self.db = db
        self.embed = embed
        self._indexed = False

    # -- writing --------------------------------------------------------------

    def _ensure_indexes(self, dimension: int | None) -> None:
        if self._indexed or not self.native:
            return
        existing = self._rows("CALL db.indexes() YIELD label, properties RETURN label, properties")
        have = {prop for label, props in existing if label == EXAMPLE_LABEL for prop in props}
        if "question" not in have:
            self.db.write(f"CALL db.idx.fulltext.createNodeIndex('{EXAMPLE_LABEL}', 'question')")
        if dimension and "embedding" not in have:
            self.db.write(
                f"CREATE VECTOR INDEX FOR (e:{EXAMPLE_LABEL}) ON (e.embedding) "
                f"OPTIONS {{dimension: {int(dimension)}, similarityFunction: 'cosine'}}"
            )
        self._indexed = True

    def add(self, question: str, cypher: str, source: str = "learned") -> bool:
        """Store the example; False if an example with the same question is already there."""
        key = question_key(question)
        if not key or not cypher.strip():
            return False
        if self._rows(f"MATCH (e:{EXAMPLE_LABEL} {{key: $key}}) RETURN count(e)", {"key": key})[0][0]:
            return False
        params: dict[str, Any] = {"key": key, "question": question.strip(), "cypher": cypher.strip(), "source": source}
        embedding = ""
        if self.embed is not None and self.native:
            params["embedding"] = [float(x) for x in self.embed(question)]
            embedding = ", embedding: vecf32($embedding)"
        self.db.write(
            f"CREATE (:{EXAMPLE_LABEL} "
            f"{{key: $key, question: $question, cypher: $cypher, source: $source{embedding}}})",
            params,
        )
        self._ensure_indexes(len(params["embedding"]) if "embedding" in params else None)
        return True

    def seed_from_csv(self, path: str | Path = SEED_EXAMPLES) -> int:
        """Add the (question, cypher) rows of a CSV file; returns how many were new."""
        return add_seed_rows(self.add, path)

    # -- reading --------------------------------------------------------------

    def _rows(self, cypher: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        try:
            return self.db.query(cypher, params, row_cap=None).rows
        except GraphNotFoundError:  # nothing stored yet
            return [[0]] if "count(" in cypher else []

    def count(self) -> int:
        return int(self._rows(f"MATCH (e:{EXAMPLE_LABEL}) RETURN count(e)")[0][0])

    def search(self, question: str, k: int = 5) -> list[FewShotExample]:
        """The `k` stored examples most similar to `question`, best first."""
        if k <= 0:
            return []
        try:
            vector = self._vector(question)
            if self.native and vector is not None:
                rows = self._rows(
                    f"CALL db.idx.vector.queryNodes('{EXAMPLE_LABEL}', 'embedding', $k, vecf32($v)) YIELD node, score "
                    "RETURN node.question, node.cypher, node.source ORDER BY score ASC",
                    {"k": k, "v": vector},
                )
            elif self.native:
                terms = search_terms(question)
                if not terms:
                    return []
                # The index narrows the candidates; shared words, weighed by length, rank them.
                candidates = self._rows(
                    f"CALL db.idx.fulltext.queryNodes('{EXAMPLE_LABEL}', $q) YIELD node, score "
                    "RETURN node.question, node.cypher, node.source "
                    f"ORDER BY score DESC LIMIT {int(k) * CANDIDATES_PER_RESULT}",
                    {"q": "|".join(terms)},
                )
                rows = ranked(question, candidates, k)
            else:
                rows = ranked(
                    question,
                    self._rows(f"MATCH (e:{EXAMPLE_LABEL}) RETURN e.question, e.cypher, e.source LIMIT 20000"),
                    k,
                )
        except GraphDatabaseError:
            return []  # no index yet (nothing stored): no examples rather than no answer
        return [FewShotExample(question=q, cypher=c, source=s or "seed") for q, c, s in rows]

    def _vector(self, question: str) -> list[float] | None:
        """The question's embedding, or None (no embedder, or it failed: full-text search still works)."""
        if self.embed is None:
            return None
        try:
            return [float(x) for x in self.embed(question)]
        except Exception:
            return None

    def clear(self) -> None:
        """Remove every stored example."""
        self.db.write(f"MATCH (e:{EXAMPLE_LABEL}) DELETE e")


class MemoryFewShotStore:
    """The same store, kept in this process (lost at exit): for backends with no room for examples."""

    native = False

    def __init__(self) -> None:
        self._examples: dict[str, FewShotExample] = {}

    def add(self, question: str, cypher: str, source: str = "learned") -> bool:
        key = question_key(question)
        if not key or not cypher.strip() or key in self._examples:
            return False
        self._examples[key] = FewShotExample(question=question.strip(), cypher=cypher.strip(), source=source)
        return True

    def seed_from_csv(self, path: str | Path = SEED_EXAMPLES) -> int:
        """Add the (question, cypher) rows of a CSV file; returns how many were new."""
        return add_seed_rows(self.add, path)

    def count(self) -> int:
        return len(self._examples)

    def search(self, question: str, k: int = 5) -> list[FewShotExample]:
        rows = [[e.question, e.cypher, e.source] for e in self._examples.values()]
        return [FewShotExample(question=q, cypher=c, source=s) for q, c, s in ranked(question, rows, k)]

    def clear(self) -> None:
        self._examples.clear()
