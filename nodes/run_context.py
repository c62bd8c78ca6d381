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
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ValidationError

from schemas.errors import ConfigurationError

C = TypeVar("C", bound=BaseModel)
V = TypeVar("V")

DATABASE_URL_ENV = "REFLEXION_DATABASE_URL"
NEO4J_URI_ENV = "NEO4J_URI"
GRAPH_ENV = "REFLEXION_GRAPH"
APPROVAL_ENV = "REFLEXION_REQUIRE_APPROVAL"
DEFAULT_GRAPH = "movies"
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


_STORED: ContextVar[dict[str, Any] | None] = ContextVar("stored_run_context", default=None)


@contextmanager
def stored_context(values: dict[str, Any] | None) -> Iterator[None]:
    """Within this block, `current_context` also reads `values`: the context the run started with,
    kept in its state, so a resumed run keeps its settings when the resume sends none."""
    token = _STORED.set(values)
    try:
        yield
    finally:
        _STORED.reset(token)


GRAPH_KEY = "__graph__"  # kept with a run's stored context: which graph the thread belongs to


def check_thread_graph(values: dict[str, Any], graph: str, thread_id: str) -> None:
    """Refuse to resume a thread another graph wrote (it would silently do nothing or the wrong thing)."""
    owner = (values.get("run_context") or {}).get(GRAPH_KEY)
    if owner is not None and owner != graph:
        raise ConfigurationError(
            f"thread {thread_id!r} belongs to {owner}, not {graph}: resume it with that graph (reflexion resume --flow ...)"
        )


def started_context(graph: str) -> dict[str, Any]:
    """What a run's first node keeps in the state: the context the run was started with, and which
    graph the thread belongs to."""
    return {**runtime_context(), GRAPH_KEY: graph}


def runtime_context() -> dict[str, Any]:
    """The context this invocation was given (fields that were set), {} outside a run."""
    from langgraph.runtime import get_runtime

    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a graph run (a unit test of a step, say)
        return {}
    context = getattr(runtime, "context", None)
    if context is None:
        return {}
    if isinstance(context, BaseModel):
        return context.model_dump(exclude_none=True)
    if isinstance(context, dict):
        return {k: v for k, v in context.items() if v is not None}
    raise ConfigurationError(f"a run's context must be a mapping, got {type(context).__name__}")


def current_context(schema: type[C]) -> C:
    """This run's settings as `schema`: what the invocation sent, over what the run started with.
    Approval, once asked for in a run, stays on for the rest of it."""
    stored, given = _STORED.get() or {}, runtime_context()
    merged = {**stored, **given}
    if stored.get("require_approval") or given.get("require_approval"):
        merged["require_approval"] = True
    try:
        return schema.model_validate({k: v for k, v in merged.items() if k in schema.model_fields})
    except (ValidationError, TypeError, ValueError) as e:
        raise ConfigurationError(f"invalid run context: {e}") from e


def checked_context(schema: type[BaseModel], context: Any) -> Any:
    """`context` as given, once it fits `schema`; a value that does not is a `ConfigurationError`
    naming the field (LangGraph would raise pydantic's own error from inside the run)."""
    if isinstance(context, dict):
        try:
            schema.model_validate(context)
        except ValidationError as e:
            fields = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
            raise ConfigurationError(f"invalid run context: {fields}") from e
    return context


def lower(asked: float | None, own: float | None) -> float | None:
    """A run may lower a limit, never raise it: the smaller of the two (None is no limit)."""
    if asked is None:
        return own
    return asked if own is None else min(asked, own)


class KeyedCache:
    """Thread-safe `key -> value`, each value made once, at most `size` kept (the least recently
    used is dropped, not closed: a run may still hold it). A value is made outside the shared lock,
    under a lock of its own key, so a slow one (a database that does not answer) never holds up
    other keys."""

    def __init__(self, size: int = 32) -> None:
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._making: dict[Hashable, threading.Lock] = {}
        self._lock = threading.Lock()
        self.size = size

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            key_lock = self._making.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._items:
                    return self._items[key]
            value = make()
            with self._lock:
                self._items[key] = value
                self._making.pop(key, None)
                if len(self._items) > self.size:
                    self._items.popitem(last=False)
        return value

    def values(self) -> list[Any]:
        with self._lock:
            return list(self._items.values())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def default_database_url() -> str:
    return os.environ.get(DATABASE_URL_ENV, "").strip() or "embedded"


def default_graph() -> str:
    return os.environ.get(GRAPH_ENV) or DEFAULT_GRAPH


def _port(parts: Any, url: str) -> int | None:
    try:
        return parts.port
    except ValueError as e:
        raise ConfigurationError(f"the database URL {url!r} has an invalid port: {e}") from e


def connection_args_from_url(url: str | None, graph: str | None = None) -> dict[str, Any]:
    """The `connect()` arguments a database URL names (see `DatabaseContext.database_url`);
    a path names the graph (FalkorDB) or the database (Neo4j), unless `graph` is given."""
    url = (url or "embedded").strip()
    if url == "embedded":
        return {"backend": "falkordb", "graph": graph or default_graph()}
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise ConfigurationError(f"the database URL {url!r} has a query or fragment; write the database as its path")
    port = _port(parts, url)
    path = parts.path.strip("/") or None
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    if parts.scheme in ("falkordb", "redis"):
        if not parts.hostname:
            raise ConfigurationError(f"the database URL {url!r} names no host: write falkordb://host:port")
        return {
            "backend": "falkordb",
            "graph": graph or path or default_graph(),
            "host": parts.hostname,
            "port": port or 6379,
            "username": user,
            "password": password,
        }
    if parts.scheme in NEO4J_SCHEMES:
        if not parts.hostname:
            raise ConfigurationError(f"the database URL {url!r} names no host: write neo4j://host:7687")
        netloc = parts.netloc.rpartition("@")[2]
        configured = user is None and password is None and _is_configured_neo4j(parts)
        return {
            "backend": "neo4j",
            "uri": f"{parts.scheme}://{netloc}",
            "user": user or (os.environ.get("NEO4J_USERNAME", "neo4j") if configured else "neo4j"),
            "password": password
            if password is not None
            else (os.environ.get("NEO4J_PASSWORD") if configured else None),
            "database": graph or path,
        }
    raise ConfigurationError(
        f"unsupported database URL {url!r}: use 'embedded', 'falkordb://host:port' or a Neo4j URI "
        f"({', '.join(s + '://' for s in NEO4J_SCHEMES)})"
    )


def _host_port(url: str, default_port: int) -> tuple[str, int]:
    parts = urlsplit(url if "://" in url else f"//{url}")
    return (parts.hostname or "").lower(), _port(parts, url) or default_port


def _is_configured_neo4j(parts: Any) -> bool:
    """Whether a Neo4j URL names the server the operator configured (`$NEO4J_URI`, or a Neo4j
    `$REFLEXION_DATABASE_URL`): only there do the configured credentials go, never to a host a run
    or a caller names."""
    for name in (NEO4J_URI_ENV, DATABASE_URL_ENV):
        value = os.environ.get(name, "").strip()
        if urlsplit(value).scheme in NEO4J_SCHEMES and _host_port(value, 7687) == _host_port(parts.geturl(), 7687):
            return True
    return False


ALLOWED_DATABASES_ENV = "REFLEXION_ALLOWED_DATABASES"


def server_of(source: Any) -> tuple[Any, ...]:
    """Which server a database is on, from connection arguments or an adapter object: embedded,
    or a backend with its host and port (scheme, credentials and graph aside: `bolt://h` and
    `neo4j://h:7687` are one server)."""
    if isinstance(source, dict):
        from nodes.graphdb.connect import backend_of

        if backend_of(source) == "neo4j":
            return (
                "neo4j",
                *_host_port(
                    str(source.get("uri") or source.get("url") or source.get("host") or ""),
                    int(source.get("port") or 7687),
                ),
            )
        if not source.get("host"):
            return ("falkordb", "embedded")
        return ("falkordb", str(source["host"]).lower(), int(source.get("port") or 6379))
    if getattr(source, "dialect", None) == "neo4j":
        return ("neo4j", *_host_port(str(getattr(source, "uri", "")), 7687))
    return ("falkordb", str(getattr(source, "host", "")).lower(), int(getattr(source, "port", 0) or 0))


def check_allowed_database(url: str, own: Any) -> None:
    """A run's context may name only the agent's own database server (`own`: its connection
    arguments or database object) or one the operator lists in `$REFLEXION_ALLOWED_DATABASES`
    (comma-separated URLs; `*` for any). Otherwise a client could make the server connect
    anywhere, with the server's identity, and probe the network by the errors it gets back."""
    allowed = [u.strip() for u in os.environ.get(ALLOWED_DATABASES_ENV, "").split(",") if u.strip()]
    if "*" in allowed:
        return
    wanted = server_of(connection_args_from_url(url))
    if wanted == server_of(own) or wanted in {server_of(connection_args_from_url(u)) for u in allowed}:
        return
    listed = ", ".join(allowed) or "none"
    raise ConfigurationError(
        f"this run may not use the database {url!r}: runs may use the agent's own database and those the operator "
        f"lists in {ALLOWED_DATABASES_ENV} (now: {listed}; a comma-separated list of URLs, or * for any)"
    )


def with_graph(args: dict[str, Any], graph: str) -> dict[str, Any]:
    """The same database with another graph (FalkorDB) or database (Neo4j) selected."""
    from nodes.graphdb.connect import backend_of

    key = "database" if backend_of(args) == "neo4j" else "graph"
    return {**{k: v for k, v in args.items() if k not in ("graph", "db_name", "database")}, key: graph}


def run_database_args(
    ctx: Any, own_args: dict[str, Any], given_object: bool, own_db: Any = None
) -> dict[str, Any] | None:
    """The connection arguments of the database a run's context names; None for the agent's own.
    A context naming only a graph keeps the agent's database and selects that graph on it (which
    needs connection arguments: an agent handed a database object cannot reopen it elsewhere).
    A `database_url` must be allowed (`check_allowed_database`)."""
    if ctx.database_url:
        check_allowed_database(ctx.database_url, own_db if given_object else (own_args or default_connection_args()))
        return connection_args_from_url(ctx.database_url, ctx.graph)
    if ctx.graph:
        if given_object:
            raise ConfigurationError(
                "this agent was given a database object: a run may switch graphs only with database_url"
            )
        return with_graph(own_args or default_connection_args(), ctx.graph)
    return None


def neo4j_env_args(graph: str | None = None) -> dict[str, Any] | None:
    """The Neo4j database langchain-neo4j's variables name (`NEO4J_URI`, `NEO4J_USERNAME`,
    `NEO4J_PASSWORD`, `NEO4J_DATABASE`), or None when `NEO4J_URI` is unset. `graph` (from
    `$REFLEXION_GRAPH`) wins over `NEO4J_DATABASE`, which wins over a path in the URI."""
    uri = os.environ.get(NEO4J_URI_ENV, "").strip()
    if not uri:
        return None
    if urlsplit(uri).scheme not in NEO4J_SCHEMES:
        raise ConfigurationError(
            f"{NEO4J_URI_ENV}={uri!r} is not a Neo4j URI: use {', '.join(s + '://' for s in NEO4J_SCHEMES)}"
        )
    return connection_args_from_url(uri, graph or os.environ.get("NEO4J_DATABASE", "").strip() or None)


def default_connection_args() -> dict[str, Any]:
    """The database the environment names, first set wins: `$REFLEXION_DATABASE_URL`, then
    `$NEO4J_URI` (with langchain-neo4j's other variables), then the embedded FalkorDB;
    `$REFLEXION_GRAPH` selects the graph (FalkorDB) or database (Neo4j) on any of them."""
    graph = os.environ.get(GRAPH_ENV) or None
    if os.environ.get(DATABASE_URL_ENV, "").strip():
        return connection_args_from_url(default_database_url(), graph)
    return neo4j_env_args(graph) or connection_args_from_url("embedded", graph)


def open_database(connection_args: dict[str, Any] | None = None) -> Any:
    """Open the database `connection_args` name (default: the environment's). The embedded
    movies graph is loaded on first use, so a fresh install answers questions about it."""
    from nodes.graphdb import connect

    args = dict(connection_args) if connection_args else default_connection_args()
    db = connect(args)
    load_demo_if_new(db, args)
    return db


def load_demo_if_new(db: Any, connection_args: dict[str, Any]) -> Any:
    """Load the movies graph into the embedded database's `movies` graph if it is empty; the
    load report, or None when nothing was loaded (another graph, another server, already there)."""
    from nodes.graphdb import ensure_movies_graph

    if backend_is_embedded(connection_args) and (connection_args.get("graph") or DEFAULT_GRAPH) == DEFAULT_GRAPH:
        return ensure_movies_graph(db)
    return None


def backend_is_embedded(args: dict[str, Any]) -> bool:
    from nodes.graphdb.connect import backend_of

    return backend_of(args) == "falkordb" and not args.get("host")
