"""Deterministic faults for the corrupting model: the gold query with one mistake a model makes.

Each function returns the faulty query, or None when the fault cannot apply to this query (no
directed relationship to turn round, no text value to recase); such questions are reported as
not applicable for that fault, never scored.
"""

from __future__ import annotations

import re
from collections.abc import Callable

DIRECTED = re.compile(r"(<-)(\[[^\]]*\])?(-)(?!>)|(-)(\[[^\]]*\])?(->)")
STRING = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
RETURN = re.compile(r"\bRETURN\b", re.I)


def relationship_direction(cypher: str) -> str | None:
    """The first directed relationship pattern turned round: (a)-[:R]->(b) becomes (a)<-[:R]-(b)."""
    match = DIRECTED.search(cypher)
    if match is None:
        return None
    # <-[...]-  becomes  -[...]->,  and  -[...]->  becomes  <-[...]-
    flipped = f"-{match.group(2) or ''}->" if match.group(1) else f"<-{match.group(5) or ''}-"
    return cypher[: match.start()] + flipped + cypher[match.end() :]


def value_casing(cypher: str) -> str | None:
    """The first text value with its casing changed ('Tom Hanks' becomes 'tom hanks')."""
    for match in STRING.finditer(cypher):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        changed = text.lower() if text != text.lower() else text.upper()
        if changed != text:
            quote = cypher[match.start()]
            return cypher[: match.start()] + quote + changed + quote + cypher[match.end() :]
    return None


def syntax_error(cypher: str) -> str | None:
    """A misspelt keyword: RETURN becomes RETRUN (or a stray token when there is no RETURN)."""
    if RETURN.search(cypher):
        return RETURN.sub("RETRUN", cypher, count=1)
    return cypher + " RETRUN"


def missing_function(cypher: str) -> str | None:
    """A call of a function the backend lacks (an APOC function) added to the first RETURN."""
    if not RETURN.search(cypher):
        return None
    return RETURN.sub("RETURN apoc.text.clean('x') AS cleaned,", cypher, count=1)


def write_clause(cypher: str) -> str | None:
    """A write slipped in front: the query would change the graph if it ran unchecked."""
    return f"CREATE (:EvalFault {{note: 'must never be written'}})\nWITH count(*) AS _written\n{cypher}"


FAULTS: dict[str, Callable[[str], str | None]] = {
    "relationship_direction": relationship_direction,
    "value_casing": value_casing,
    "syntax_error": syntax_error,
    "missing_function": missing_function,
    "write_clause": write_clause,
}
