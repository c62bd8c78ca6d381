"""Read queries that kill FalkorDB, known by their form and refused before they are sent.

A `CALL { ... }` subquery that calls a procedure and ends without RETURN (a unit subquery)
makes FalkorDB 4.x crash with SIGSEGV while it plans the query (`buildCallSubqueryPlan`), on
GRAPH.EXPLAIN as on GRAPH.RO_QUERY: `CALL { CALL db.labels() } RETURN 1`, the same with YIELD,
with a MATCH before the call, inside another subquery, after MATCH, UNWIND or OPTIONAL MATCH,
for every procedure tried (schema, full-text, `algo.*`, `dbms.procedures`). The same subquery
ending in RETURN runs, so the refusal says to add one. (`tests/test_crash_forms.py` generates the
family and runs every form the refusal lets through on a server of its own; a form nobody has
found yet is caught by `nodes.graphdb.quarantine` after its first crash.)
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import code_only
from reflexion_agents.schemas.errors import CypherSyntaxError

_SUBQUERY = re.compile(r"\bCALL\s*(?:\([^(){}]*\)\s*)?\{", re.IGNORECASE)
_RETURN = re.compile(r"\bRETURN\b", re.IGNORECASE)
_PROCEDURE_CALL = re.compile(r"\bCALL\b(?!\s*[({])", re.IGNORECASE)
_OPENING, _CLOSING = "([{", ")]}"


def _top_level(body: str) -> str:
    """`body` with everything inside its brackets blanked: the clauses of the subquery itself."""
    level, out = 0, []
    for ch in body:
        if ch in _CLOSING:
            level = max(0, level - 1)
        out.append(ch if level == 0 else " ")
        if ch in _OPENING:
            level += 1
    return "".join(out)


def _subquery_bodies(code: str) -> list[str]:
    """The text inside each `CALL {` ... `}` of `code` (strings and comments blanked), nested ones too."""
    bodies = []
    for match in _SUBQUERY.finditer(code):
        level = 0
        for end in range(match.end() - 1, len(code)):
            level += code[end] in _OPENING
            level -= code[end] in _CLOSING
            if level == 0:
                bodies.append(code[match.end() : end])
                break
    return bodies


def crashing_subquery(cypher: str) -> str | None:
    """The body of the first subquery in `cypher` that calls a procedure and returns nothing."""
    for body in _subquery_bodies(code_only(cypher)):
        clauses = _top_level(body)
        if _PROCEDURE_CALL.search(clauses) and not _RETURN.search(clauses):
            return " ".join(body.split())
    return None


def refuse_crashing_forms(cypher: str) -> None:
    """Raise CypherSyntaxError, with what to write instead, for a query of a form that kills FalkorDB."""
    body = crashing_subquery(cypher)
    if body is not None:
        raise CypherSyntaxError(
            f"a CALL {{ }} subquery that calls a procedure must end with RETURN (FalkorDB stops on "
            f"`CALL {{ {body} }}`): return what the subquery yields, e.g. "
            "CALL { CALL db.labels() YIELD label RETURN label } RETURN label",
            cypher,
        )
