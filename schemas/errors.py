"""One root exception with a few precise subclasses.

Errors meant for the model (a query the database rejected) are turned into
tool messages by the nodes; these types are what a programmer catches.
"""

from __future__ import annotations


class ReflexionError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigurationError(ReflexionError, ValueError):
    """The user's configuration cannot work (missing key, bad connection arguments). A ValueError too,
    so LangGraph server passes its message through to clients instead of a generic internal error."""


class ScriptError(ConfigurationError):
    """A statement of a Cypher script failed; `statement` and `line` say which (1-based), `fault`
    why: `"dialect"` (it uses what the database lacks, APOC say), `"data"` (the database refused a
    value), or `"script"` (anything else: a file it reads, say)."""

    def __init__(self, message: str, statement: int, line: int, fault: str = "script") -> None:
        super().__init__(message)
        self.statement, self.line, self.fault = statement, line, fault


class GraphDatabaseError(ReflexionError):
    """Anything the graph database reported."""


class DatabaseUnavailableError(GraphDatabaseError):
    """The database cannot be reached, or it went away during a query."""


class GraphNotFoundError(DatabaseUnavailableError):
    """The server answers, but the named graph does not exist on it."""


class QueryError(GraphDatabaseError):
    """The database refused or failed one query; `message` is the database's own text."""

    def __init__(self, message: str, query: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.query = query


class CypherSyntaxError(QueryError):
    """The query does not compile on this backend (syntax, unknown function, dialect gap)."""


class WriteQueryRefusedError(QueryError):
    """The query would change the graph (or read server files) and writes are not enabled."""


class QueryTimeoutError(QueryError):
    """The query ran longer than its timeout and was stopped by the database."""
