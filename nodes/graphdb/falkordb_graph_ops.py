"""The graph-wide operations of a FalkorDB graph beyond the database protocol: what loaders, the
command line and the schema cache ask of it (copy, rename over another, rebuild range indexes,
count, delete, and this project's own reads sent together). A part of `FalkorDBGraph`, kept apart
so the query path (`falkordb_graph`) reads on its own."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import redis
import redis.exceptions

from reflexion_agents.nodes.graphdb.cypher_text import quote_name
from reflexion_agents.nodes.graphdb.schema_cache import COUNT_QUERIES, NAMES_QUERY, forget_schemas

if TYPE_CHECKING:
    from reflexion_agents.nodes.graphdb.falkordb_link import FalkorDBLink
    from reflexion_agents.nodes.graphdb.falkordb_session import FalkorDBSession
    from reflexion_agents.schemas.graphdb import QueryResult


def _decoded(value: Any) -> Any:
    """A scalar of a verbose `GRAPH.RO_QUERY` reply: text comes as bytes."""
    return value.decode("utf-8") if isinstance(value, bytes) else value


#: What `read_together` may send: constant reads of this project's (none a model wrote), unplanned.
OWN_READS = frozenset((NAMES_QUERY, *COUNT_QUERIES))


class GraphOperations:
    """`FalkorDBGraph`'s graph-wide operations (see the module)."""

    if TYPE_CHECKING:  # what they use of `FalkorDBGraph`
        graph_name: str
        _link: FalkorDBLink
        _session: FalkorDBSession

        @property
        def schema_key(self) -> str: ...
        def sibling_key(self, graph: str) -> str: ...
        def graphs(self) -> list[str]: ...
        def query(self, cypher: str, params: Any = None, *, row_cap: int | None = ...) -> QueryResult: ...
        def write(self, cypher: str, params: Any = None) -> None: ...

    def copy_to(self, graph: str) -> None:
        """Copy this graph, indexes included, to a new graph `graph` on the same server."""
        try:
            self._session.graph.copy(graph)
        except Exception as e:
            raise self._session.translate(e, "") from e
        finally:
            forget_schemas(self.sibling_key(graph))

    def replace(self, graph: str) -> None:
        """Become the graph `graph` on the same server, replacing it if it exists, in one step
        (Redis RENAME: readers see the old graph or the new one, never none)."""
        try:
            self._link.client.connection.rename(self.graph_name, graph)
        except Exception as e:
            raise self._session.translate(e, "") from e
        finally:  # both names now hold another graph, or none
            forget_schemas(self.schema_key)
            forget_schemas(self.sibling_key(graph))

    def rebuild_range_indexes(self) -> None:
        """Drop and recreate every node range index. FalkorDB's GRAPH.COPY leaves the copy's range
        indexes without their entries for 0, 0.0 and false (equality lookups then miss those nodes)."""
        rows = self.query(
            "CALL db.indexes() YIELD label, types, entitytype RETURN label, types, entitytype", row_cap=None
        ).rows
        for label, types, entity in rows:
            for prop, kinds in (types or {}).items():
                if entity == "NODE" and "RANGE" in kinds:
                    self.write(f"DROP INDEX ON :{quote_name(label)}({quote_name(prop)})")
                    self.write(f"CREATE INDEX FOR (n:{quote_name(label)}) ON (n.{quote_name(prop)})")

    def counts(self) -> tuple[int, int]:
        """(nodes, relationships) of this graph; (0, 0) for a graph that does not exist."""
        if self.graph_name not in self.graphs():
            return 0, 0
        nodes = self.query("MATCH (n) RETURN count(n)", row_cap=None).rows[0][0]
        relationships = self.query("MATCH ()-[r]->() RETURN count(r)", row_cap=None).rows[0][0]
        return int(nodes), int(relationships)

    def read_together(self, queries: Sequence[str]) -> list[list[list[Any]]] | None:
        """The rows of each of `queries` (this project's own constant reads, such as the schema's
        fingerprint, never a model's query), sent to `GRAPH.RO_QUERY` together in one round trip:
        unplanned, since GRAPH.RO_QUERY refuses a write itself. None when any of them failed or the
        server is unreachable: ask them one by one (`query`) to learn why."""
        unknown = [cypher for cypher in queries if cypher not in OWN_READS]
        if unknown:
            raise ValueError(f"read_together sends only the schema cache's own reads, not {unknown[0]!r}")
        graph = self._session.graph
        try:
            pipe = graph.client.connection.pipeline(transaction=False)
            for cypher in queries:
                pipe.execute_command("GRAPH.RO_QUERY", self.graph_name, cypher)
            answers = pipe.execute(raise_on_error=False)
        except redis.exceptions.RedisError:
            return None
        if any(isinstance(answer, Exception) or not isinstance(answer, list) for answer in answers):
            return None
        return [
            [[_decoded(value) for value in row] for row in answer[1]] if len(answer) > 2 else [] for answer in answers
        ]

    def clear(self) -> None:
        """Delete this graph entirely (an explicit write, for loaders and tests)."""
        try:
            with contextlib.suppress(redis.exceptions.ResponseError):  # the graph did not exist
                self._session.graph.delete()
        finally:
            forget_schemas(self.schema_key)
