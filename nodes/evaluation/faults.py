"""Deterministic faults for the corrupting and simulated models: the gold query with one mistake a model makes.

Each function returns the faulty query, or None when the fault cannot apply to this query (no
directed relationship to turn round, no text value to recase); such questions are reported as
not applicable for that fault, never scored. Every fault edits code only: strings, comments and
backtick names are left as they are (except `value_casing`, whose whole point is a string).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from reflexion_agents.nodes.graphdb.cypher_text import code_only

DIRECTED = re.compile(r"(<-)(\[[^\]]*\])?(-)(?!>)|(-)(\[[^\]]*\])?(->)")
STRING = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")
RETURN = re.compile(r"\bRETURN\b", re.I)
NODE_LABEL = re.compile(r"\(\s*\w*\s*:\s*([A-Za-z]\w*)")
PROPERTY = re.compile(r"\b([A-Za-z_]\w*)\.([A-Za-z_]\w*)\b(?!\s*\()")
BOUND = re.compile(r"[(\[]\s*([A-Za-z_]\w*)\s*[:){\]]")

#: What a model writes for a property it does not know the name of: a plausible name the graph lacks.
INVENTED = {
    "title": "name",
    "name": "fullName",
    "released": "releaseYear",
    "born": "birthYear",
    "tagline": "description",
    "rating": "stars",
    "roles": "role",
    "summary": "reviewText",
}


def _code_match(pattern: re.Pattern[str], cypher: str) -> re.Match[str] | None:
    """The first match of `pattern` in the query's code (strings, comments and backtick names blanked)."""
    return pattern.search(code_only(cypher))


def relationship_direction(cypher: str) -> str | None:
    """The first directed relationship pattern turned round: (a)-[:R]->(b) becomes (a)<-[:R]-(b)."""
    match = _code_match(DIRECTED, cypher)
    if match is None:
        return None
    # <-[...]-  becomes  -[...]->,  and  -[...]->  becomes  <-[...]-
    inner = cypher[match.start(2) : match.end(2)] if match.group(1) else cypher[match.start(5) : match.end(5)]
    flipped = f"-{inner}->" if match.group(1) else f"<-{inner}-"
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


def label_case(cypher: str) -> str | None:
    """The first node label recased: (m:Movie) becomes (m:movie)."""
    match = _code_match(NODE_LABEL, cypher)
    if match is None:
        return None
    label = match.group(1)
    changed = label.lower() if label != label.lower() else label.capitalize()
    if changed == label:
        return None
    return cypher[: match.start(1)] + changed + cypher[match.end(1) :]


def property_case(cypher: str) -> str | None:
    """The first property read recased at its first letter: m.title becomes m.Title."""
    match = _code_match(PROPERTY, cypher)
    if match is None:
        return None
    name = match.group(2)
    changed = name[0].swapcase() + name[1:]
    return cypher[: match.start(2)] + changed + cypher[match.end(2) :]


def invented_property(cypher: str) -> str | None:
    """The first property read replaced by a plausible one the graph lacks: m.title becomes m.name."""
    match = _code_match(PROPERTY, cypher)
    if match is None:
        return None
    name = match.group(2)
    if name in INVENTED:
        invented = INVENTED[name]
    elif name.endswith("Name"):
        invented = "name"
    else:
        invented = f"{name}Value"
    return cypher[: match.start(2)] + invented + cypher[match.end(2) :]


def unbound_variable(cypher: str) -> str | None:
    """A variable of the last RETURN renamed to one the query never binds: RETURN m.title becomes
    RETURN m_node.title."""
    code = code_only(cypher)
    returns = list(RETURN.finditer(code))
    if not returns:
        return None
    bound = {m.group(1) for m in BOUND.finditer(code[: returns[-1].start()])}
    for var in re.finditer(r"\b([A-Za-z_]\w*)\b", code[returns[-1].end() :]):
        if var.group(1) in bound:
            at = returns[-1].end() + var.start(1)
            return cypher[:at] + f"{var.group(1)}_node" + cypher[at + len(var.group(1)) :]
    return None


def syntax_error(cypher: str) -> str | None:
    """A misspelt keyword: RETURN becomes RETRUN (or a stray token when there is no RETURN)."""
    match = _code_match(RETURN, cypher)
    if match is not None:
        return cypher[: match.start()] + "RETRUN" + cypher[match.end() :]
    return cypher + " RETRUN"


def missing_function(cypher: str) -> str | None:
    """A call of a function the backend lacks (an APOC function) added to the first RETURN."""
    match = _code_match(RETURN, cypher)
    if match is None:
        return None
    return cypher[: match.start()] + "RETURN apoc.text.clean('x') AS cleaned," + cypher[match.end() :]


def write_clause(cypher: str) -> str | None:
    """A write slipped in front: the query would change the graph if it ran unchecked."""
    return f"CREATE (:EvalFault {{note: 'must never be written'}})\nWITH count(*) AS _written\n{cypher}"


FAULTS: dict[str, Callable[[str], str | None]] = {
    "relationship_direction": relationship_direction,
    "value_casing": value_casing,
    "label_case": label_case,
    "property_case": property_case,
    "invented_property": invented_property,
    "unbound_variable": unbound_variable,
    "syntax_error": syntax_error,
    "missing_function": missing_function,
    "write_clause": write_clause,
}

#: The mistakes a model's own drafts carry (the simulated model): the corrupting model's list, without the
#: two that test the database's guards rather than the loop (an APOC call, a write).
MODEL_FAULTS: tuple[str, ...] = (
    "relationship_direction",
    "label_case",
    "property_case",
    "value_casing",
    "unbound_variable",
    "syntax_error",
    "invented_property",
)
