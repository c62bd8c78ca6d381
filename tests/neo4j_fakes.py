"""A stand-in Neo4j driver that returns the neo4j package's own types (real `neo4j.Record` and
`ResultSummary` objects), for tests of the Neo4j adapter where no server can run."""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j._work.summary import ResultSummary

ADDRESS = neo4j.Address(("localhost", 7687))


def summary(query_type: str) -> ResultSummary:
    return ResultSummary(
        ADDRESS,
        had_key=True,
        had_record=False,
        metadata={"type": query_type, "server": neo4j.ServerInfo(ADDRESS, (5, 0))},
    )


class FakeResult:
    def __init__(self, keys: list[str], rows: list[list[Any]], query_type: str) -> None:
        self._keys, self._rows, self._type = keys, rows, query_type
        self.pulled = 0

    def keys(self) -> list[str]:
        return self._keys

    def __iter__(self):
        for row in self._rows:
            self.pulled += 1
            yield neo4j.Record(zip(self._keys, row, strict=True))

    def consume(self) -> ResultSummary:
        return summary(self._type)


class FakeDriver:
    """Answers EXPLAIN with a summary of `query_type`, and queries with `rows` or `error`."""

    def __init__(
        self, keys=(), rows=(), query_type="r", error: Exception | None = None, explain_error: Exception | None = None
    ):
        self.keys, self.rows, self.query_type = list(keys), list(rows), query_type
        self.error, self.explain_error = error, explain_error
        self.sessions: list[dict[str, Any]] = []
        self.queries: list[Any] = []
        self.results: list[FakeResult] = []

    def session(self, **kwargs: Any) -> FakeDriver:
        self.sessions.append(kwargs)
        return self

    def __enter__(self) -> FakeDriver:
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def run(self, query: Any, params: dict[str, Any] | None = None) -> FakeResult:
        self.queries.append(query)
        text = query.text if isinstance(query, neo4j.Query) else query
        if text.startswith("EXPLAIN"):
            if self.explain_error:
                raise self.explain_error
            return FakeResult([], [], self.query_type)
        if self.error:
            raise self.error
        result = FakeResult(self.keys, self.rows, self.query_type)
        self.results.append(result)
        return result

    def close(self) -> None:
        pass
