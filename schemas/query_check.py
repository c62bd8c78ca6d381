"""What the schema check found in a query before it ran (`nodes.graphdb.query_check`)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ValueMapping(BaseModel):
    """A literal in a query that matched no stored value, and the stored value used instead."""

    label: str
    property: str
    given: str
    mapped: str


class QueryCheck(BaseModel):
    """A query checked against the graph's schema and stored values, with no model call.

    `query` is what runs: the query as written with the certain repairs applied (a label's or a
    property's case, a relationship's direction where the graph has it only the other way, a value
    stored in another form). `findings` say what is wrong or absent. `blocking` is True when one of
    them makes the query wrong as written: `missing` when it names what the graph does not hold (a
    label, type, property or relationship between those labels), otherwise a value the graph holds
    only in other forms, or compared with the wrong kind of value. A value stored in no form at all
    is said but does not block (no rows may be the answer). `verified` is True when the check read
    the whole query and looked up every label, relationship, property and value it names: a result
    without rows then rests on what exists."""

    written: str = Field(description="The query as the model (or a person) wrote it.")
    query: str = Field(description="The query that runs, repairs applied.")
    repairs: list[str] = Field(default_factory=list, description="Certain repairs applied, in words.")
    findings: list[str] = Field(default_factory=list, description="What the graph does not hold, in words.")
    blocking: bool = False
    missing: bool = Field(
        default=False, description="A finding names a label, type, property or relationship the graph lacks."
    )
    verified: bool = False
    mappings: list[ValueMapping] = Field(default_factory=list, description="Values repaired to stored ones.")

    @property
    def repaired(self) -> bool:
        return self.query != self.written

    def notes(self) -> str:
        """What the model is told with the result: the repairs made and the findings, each in a line."""
        lines = []
        if self.repairs:
            lines.append("Repaired before it ran: " + "; ".join(self.repairs) + ".")
        if self.findings:
            lines.append("Checked against the graph: " + "; ".join(self.findings) + ".")
        return "\n".join(lines)
