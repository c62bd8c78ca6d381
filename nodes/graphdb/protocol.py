"""The one small protocol every graph-database backend implements."""

from __future__ import annotations

from typing import Any, Protocol, cast, runtime_checkable

from reflexion_agents.schemas.graphdb import Dialect, GraphSchema, QueryResult
from reflexion_agents.schemas.settings import DATABASE_DEFAULTS, FLOW_DEFAULTS

# the settings' defaults (`schemas.settings.DatabaseSettings`), under the names other modules import
DEFAULT_QUERY_TIMEOUT_S = cast(float, DATABASE_DEFAULTS.query_timeout)  # a number, never None
DEFAULT_ROW_CAP = FLOW_DEFAULTS.row_cap  # the database settings' default, typed int (a flow always caps)


@runtime_checkable
class GraphDatabase(Protocol):
    """Read-only querying with a timeout and a row cap, validation, and schema description.

    `query` refuses anything that would change the graph unless `allow_writes=True`;
    `write` is the explicit path for loaders. Errors are `schemas.errors` types.
    """

    dialect: Dialect

    def query(
        self,
        cypher: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT_QUERY_TIMEOUT_S,
        row_cap: int | None = DEFAULT_ROW_CAP,
        allow_writes: bool = False,
    ) -> QueryResult: ...

    def validate(self, cypher: str, params: dict[str, Any] | None = None, *, allow_writes: bool = False) -> None:
        """Compile the query without running it; raise if it is invalid or writes."""

    def write(self, cypher: str, params: dict[str, Any] | None = None) -> None:
        """Run a statement that changes the graph (loaders only)."""

    def labels(self) -> list[str]: ...

    def relationship_types(self) -> list[str]: ...

    def schema(self, sample_size: int = 50) -> GraphSchema: ...

    def close(self) -> None: ...


def graph_name(db: Any) -> str | None:
    """The graph (FalkorDB) or database (Neo4j) a database object reads; None when it does not say."""
    return getattr(db, "graph_name", None) or getattr(db, "db_name", None)


def graph_exists(db: Any) -> bool:
    """Whether the graph `db` reads exists. True where the backend cannot list its graphs (a Neo4j
    database is made by its administrator, not by a query)."""
    graphs = getattr(db, "graphs", None)
    return graph_name(db) in graphs() if callable(graphs) else True
