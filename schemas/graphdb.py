"""What the graph-database adapters return: query results and schema descriptions."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Dialect = Literal["falkordb", "neo4j"]


#: What a graph (FalkorDB) or database (Neo4j) name may be: an empty or odd name is never read as the default.
GRAPH_NAME_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"


def is_empty_value(value: Any) -> bool:
    """A value that carries no answer: null, or an empty list or map."""
    return value is None or (isinstance(value, (list, dict, tuple)) and len(value) == 0)


class QueryResult(BaseModel):
    """Rows of one executed query, already converted to JSON-friendly values."""

    query: str
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="True when the row cap cut the result short.")
    elapsed_ms: float = 0.0

    @property
    def is_empty(self) -> bool:
        """No rows, or only rows whose every value is null (or an empty collection)."""
        return all(all(is_empty_value(v) for v in row) for row in self.rows)

    def records(self) -> list[dict[str, Any]]:
        """Rows as dictionaries keyed by column name."""
        return [dict(zip(self.columns, row, strict=False)) for row in self.rows]


class PropertyInfo(BaseModel):
    name: str
    types: list[str] = Field(default_factory=list)
    examples: list[Any] = Field(default_factory=list)


class NodeLabelInfo(BaseModel):
    label: str
    properties: list[PropertyInfo] = Field(default_factory=list)


class RelationshipInfo(BaseModel):
    type: str
    patterns: list[tuple[str, str]] = Field(
        default_factory=list, description="(start label, end label) pairs seen in the graph."
    )
    properties: list[PropertyInfo] = Field(default_factory=list)


class GraphSchema(BaseModel):
    """Labels, relationship patterns and typed properties with a few example values."""

    nodes: list[NodeLabelInfo] = Field(default_factory=list)
    relationships: list[RelationshipInfo] = Field(default_factory=list)
    dialect: Dialect | None = None

    def node(self, label: str) -> NodeLabelInfo | None:
        return next((n for n in self.nodes if n.label == label), None)
