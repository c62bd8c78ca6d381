"""Why a statement of an import script failed, said as what it is: FalkorDB's dialect, or the data.

Public import scripts are written for Neo4j and often call APOC, a Neo4j plugin FalkorDB does not
have; FalkorDB then says only "Unknown function". A statement that calls one is refused before it
runs, naming the function, its line, and the rewrite to make. When FalkorDB itself refuses a
statement, its words tell a gap in the dialect ("Unknown function", "Invalid input", "does not
currently support") from the data (a value a function could not take, a date it could not read).
"""

from __future__ import annotations

import re

from reflexion_agents.nodes.graphdb.cypher_text import code_only

_APOC = re.compile(r"\bapoc(?:\.\w+)+", re.IGNORECASE)

#: What to write instead of the APOC calls public import scripts use most.
APOC_REWRITES: dict[str, str] = {
    "apoc.date.parse": "keep the text, or build the value with date(), localdatetime() or datetime() "
    "from an ISO string (split a dd/MM/yyyy one with split() first)",
    "apoc.date.format": "use toString() on a temporal value, or keep the text",
    "apoc.convert.tointeger": "use toInteger(x)",
    "apoc.convert.tofloat": "use toFloat(x)",
    "apoc.convert.toboolean": "use toBoolean(x)",
    "apoc.convert.tostring": "use toString(x)",
    "apoc.convert.tolist": "use [x], or split(x, ';') for a delimited text",
    "apoc.text.join": "use reduce(s = '', x IN list | s + x) or keep the list",
    "apoc.text.replace": "use replace(text, from, to) for plain text",
    "apoc.text.split": "use split(text, delimiter)",
    "apoc.text.clean": "use toLower(trim(text))",
    "apoc.coll.toset": "collect(DISTINCT x) where the list is built",
    "apoc.coll.sum": "use reduce(s = 0, x IN list | s + x)",
    "apoc.map.merge": "use a map projection, or {a: m.a, b: n.b}",
    "apoc.create.uuid": "use randomUUID()",
    "apoc.periodic.iterate": "run the inner statement itself: LOAD CSV statements are already sent in batches",
}
_DIALECT_WORDS = (
    "unknown function",
    "invalid input",
    "does not currently support",
    "not supported",
    "unknown procedure",
)


def apoc_called(statement: str) -> list[str]:
    """The APOC functions and procedures `statement` calls (its strings and comments aside)."""
    return list(dict.fromkeys(m.group().lower() for m in _APOC.finditer(code_only(statement))))


def apoc_advice(name: str) -> str:
    """What to write instead of the APOC call `name`."""
    return APOC_REWRITES.get(name.lower(), "rewrite it in plain Cypher, or run the script on Neo4j")


def fault_of(message: str) -> str:
    """`"dialect"` when the database's words say it lacks what the statement uses, else `"data"`."""
    said = message.lower()
    return "dialect" if any(words in said for words in _DIALECT_WORDS) else "data"
