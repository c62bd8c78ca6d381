"""Open a database: choose the backend from biochatter's `connection_args`, or from the environment."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from reflexion_agents.nodes.graphdb.falkordb_graph import FalkorDBGraph
from reflexion_agents.nodes.graphdb.locations import (
    DEFAULT_GRAPH,
    backend_is_embedded,
    backend_of,
    default_connection_args,
    with_url_read,
)
from reflexion_agents.nodes.graphdb.neo4j_graph import Neo4jGraph, neo4j_uri
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.schemas.errors import ConfigurationError, DatabaseUnavailableError
from reflexion_agents.schemas.graphdb import GRAPH_NAME_PATTERN

if TYPE_CHECKING:
    from reflexion_agents.nodes.graphdb.cypher_script import LoadReport

_FALKORDB_KEYS = {"backend", "graph", "db_name", "host", "port", "user", "username", "password", "data_dir"}
_NEO4J_KEYS = {"backend", "host", "port", "uri", "url", "user", "username", "password", "db_name", "database", "scheme"}


GRAPH_NAME = re.compile(GRAPH_NAME_PATTERN)
T = TypeVar("T")


def checked_name(name: Any, what: str = "graph") -> str:
    """`name` if it can name a graph; an empty or odd name is refused, never read as the default."""
    if not isinstance(name, str) or not GRAPH_NAME.fullmatch(name):
        raise ConfigurationError(f"{name!r} is not a {what} name: use letters, digits, _, . and - (at most 128)")
    return name


def connect(connection_args: dict[str, Any] | None = None) -> GraphDatabase:
    """Open the database `connection_args` names.

    - none, or `backend: "falkordb"` without a host: the embedded FalkorDB
      (`graph` names the graph, default "movies"; `data_dir` its directory);
    - `backend: "falkordb"` with `host`/`port`, or `url: "falkordb://host:port/graph"`: an
      existing FalkorDB server;
    - `host`/`port` or `uri` without a backend, or `backend: "neo4j"`: Neo4j,
      with the keys of biochatter's `connection_args` (`user`, `password`,
      `db_name`; `uri` may be any bolt/neo4j URI, with or without TLS).
    """
    args = with_url_read(connection_args)
    for key in ("graph", "db_name", "database"):
        if args.get(key) is not None:
            checked_name(args[key])
    backend = backend_of(args)
    if backend == "falkordb":
        _check_keys(args, _FALKORDB_KEYS, backend)
        graph = args.get("graph") or args.get("db_name") or "movies"
        if not args.get("host"):
            return FalkorDBGraph.embedded(graph, data_dir=args.get("data_dir"))
        return FalkorDBGraph(
            graph,
            host=args["host"],
            port=int(args.get("port") or 6379),
            username=args.get("username") or args.get("user"),
            password=args.get("password"),
        )
    if backend == "neo4j":
        _check_keys(args, _NEO4J_KEYS, backend)
        uri = (
            args.get("uri")
            or args.get("url")
            or neo4j_uri(args.get("host") or "127.0.0.1", args.get("port"), args.get("scheme", "bolt"))
        )
        return Neo4jGraph(
            uri,
            user=args.get("user") or args.get("username") or "neo4j",
            password=args.get("password"),
            db_name=args.get("db_name") or args.get("database"),
        )
    raise ConfigurationError(f"unknown backend {backend!r}: use 'falkordb' or 'neo4j'")


def _check_keys(args: dict[str, Any], allowed: set[str], backend: str) -> None:
    unknown = set(args) - allowed
    if unknown:
        raise ConfigurationError(
            f"unknown connection_args for {backend}: {', '.join(sorted(unknown))} (known: {', '.join(sorted(allowed))})"
        )


def where(connection_args: dict[str, Any] | None) -> str:
    """The server `connection_args` name, for messages (never the credentials); None: a database object."""
    if connection_args is None:
        return "the database"
    args = with_url_read(connection_args)
    if backend_of(args) == "neo4j":
        uri = str(args.get("uri") or args.get("url") or neo4j_uri(args.get("host") or "127.0.0.1", args.get("port")))
        scheme, _, rest = uri.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}" if rest else uri  # user:password@ left out
    if not args.get("host"):
        return "the embedded FalkorDB"
    return f"FalkorDB at {args['host']}:{args.get('port') or 6379}"


def opened(open_database: Callable[[], T], connection_args: dict[str, Any] | None) -> T:
    """`open_database()`, where any failure but a configuration error means the database cannot be used:
    a `DatabaseUnavailableError`, so a run ends `tool_unavailable` and the CLI exits 3. A peer that is
    not the database named (an HTTP server, another protocol) can make a client fail in ways its adapter
    does not translate (a `QueryError`, or a client library's own exception from the handshake); a run
    must stop on it, typed, not crash or go on querying a database that is not there."""
    try:
        return open_database()
    except (ConfigurationError, DatabaseUnavailableError):
        raise
    except Exception as e:
        raise DatabaseUnavailableError(
            f"{where(connection_args)} could not be opened ({type(e).__name__}: {e}); is it the database named?"
        ) from e


def open_database(connection_args: dict[str, Any] | None = None) -> GraphDatabase:
    """Open the database `connection_args` name (default: the environment's). The embedded
    movies graph is loaded on first use, so a fresh install answers questions about it."""
    args = dict(connection_args) if connection_args else default_connection_args()
    db = connect(args)
    load_demo_if_new(db, args)
    return db


def load_demo_if_new(db: GraphDatabase, connection_args: dict[str, Any]) -> LoadReport | None:
    """Load the movies graph into the embedded database's `movies` graph if it is empty; the
    load report, or None when nothing was loaded (another graph, another server, already there)."""
    from reflexion_agents.nodes.graphdb.demo_data import ensure_movies_graph  # the loader, only when a graph is opened

    if backend_is_embedded(connection_args) and (connection_args.get("graph") or DEFAULT_GRAPH) == DEFAULT_GRAPH:
        return ensure_movies_graph(db)
    return None
