"""Reading a run's context, and the shared, keyed resources runs pick from it.

A run may name its own model or database in its context. Opening a client per
run would be slow, and keeping "the current model" on the agent would let one
run change another's. So clients live in a cache keyed by what names them:
two runs asking for the same model share one client, a run asking for another
gets its own, and nothing a run does changes what a different key returns.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ValidationError

from schemas.errors import ConfigurationError

C = TypeVar("C", bound=BaseModel)
V = TypeVar("V")

DATABASE_URL_ENV = "REFLEXION_DATABASE_URL"
GRAPH_ENV = "REFLEXION_GRAPH"
APPROVAL_ENV = "REFLEXION_REQUIRE_APPROVAL"
DEFAULT_GRAPH = "movies"
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def current_context(schema: type[C]) -> C:
    """This run's context as `schema`; all defaults outside a run or when the run sent none."""
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a graph run (a unit test of a step, say)
        return schema()
    context = getattr(runtime, "context", None)
    if context is None:
        return schema()
    if isinstance(context, schema):
        return context
    data = context.model_dump(exclude_none=True) if isinstance(context, BaseModel) else context
    try:
        return schema.model_validate({k: v for k, v in dict(data).items() if k in schema.model_fields})
    except (ValidationError, TypeError, ValueError) as e:
        raise ConfigurationError(f"invalid run context: {e}") from e


class KeyedCache:
    """Thread-safe `key -> value`, each value made once; `values()` lets an owner close them."""

    def __init__(self) -> None:
        self._items: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        with self._lock:
            if key not in self._items:
                self._items[key] = make()
            return self._items[key]

    def values(self) -> list[Any]:
        with self._lock:
            return list(self._items.values())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def default_database_url() -> str:
    return os.environ.get(DATABASE_URL_ENV) or "embedded"


def default_graph() -> str:
    return os.environ.get(GRAPH_ENV) or DEFAULT_GRAPH


def connection_args_from_url(url: str | None, graph: str | None = None) -> dict[str, Any]:
    """The `connect()` arguments a database URL names (see `DatabaseContext.database_url`)."""
    url = (url or "embedded").strip()
    graph = graph or default_graph()
    if url == "embedded":
        return {"backend": "falkordb", "graph": graph}
    parts = urlsplit(url)
    if parts.scheme in ("falkordb", "redis"):
        if not parts.hostname:
            raise ConfigurationError(f"the database URL {url!r} names no host: write falkordb://host:port")
        return {
            "backend": "falkordb", "graph": graph, "host": parts.hostname, "port": parts.port or 6379,
            "username": unquote(parts.username) if parts.username else None,
            "password": unquote(parts.password) if parts.password else None,
        }
    if parts.scheme in NEO4J_SCHEMES:
        netloc = parts.netloc.rpartition("@")[2]
        return {
            "backend": "neo4j", "uri": f"{parts.scheme}://{netloc}",
            "user": unquote(parts.username) if parts.username else os.environ.get("NEO4J_USERNAME", "neo4j"),
            "password": unquote(parts.password) if parts.password else os.environ.get("NEO4J_PASSWORD"),
            "database": parts.path.strip("/") or (graph if graph != DEFAULT_GRAPH else None),
        }
    raise ConfigurationError(
        f"unsupported database URL {url!r}: use 'embedded', 'falkordb://host:port' or a Neo4j URI "
        f"({', '.join(s + '://' for s in NEO4J_SCHEMES)})"
    )


def default_connection_args() -> dict[str, Any]:
    """The database the environment names: `$REFLEXION_DATABASE_URL` and `$REFLEXION_GRAPH`."""
    return connection_args_from_url(default_database_url(), default_graph())


def open_database(connection_args: dict[str, Any] | None = None) -> Any:
    """Open the database `connection_args` name (default: the environment's). The embedded
    movies graph is loaded on first use, so a fresh install answers questions about it."""
    from nodes.graphdb import connect, ensure_movies_graph

    args = dict(connection_args) if connection_args else default_connection_args()
    db = connect(args)
    if backend_is_embedded(args) and (args.get("graph") or DEFAULT_GRAPH) == DEFAULT_GRAPH:
        ensure_movies_graph(db)
    return db


def backend_is_embedded(args: dict[str, Any]) -> bool:
    from nodes.graphdb.connect import backend_of

    return backend_of(args) == "falkordb" and not args.get("host")
