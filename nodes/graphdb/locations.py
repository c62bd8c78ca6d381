"""Where the database is: database URLs, the environment's defaults and the allow-list, read
without opening anything (so the command line and the run-context schemas need no driver)."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

from reflexion_agents.schemas.errors import ConfigurationError

DATABASE_URL_ENV = "REFLEXION_DATABASE_URL"
NEO4J_URI_ENV = "NEO4J_URI"
GRAPH_ENV = "REFLEXION_GRAPH"
DEFAULT_GRAPH = "movies"
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


FALKORDB_SCHEMES = ("falkordb", "redis")
_PASSWORD = re.compile(r"(//[^/@:\s]*):[^/@\s]*@")


def shown_url(url: str) -> str:
    """`url` as a message may show it: a password written in it is replaced by `***` (messages reach
    the server's clients, and logs)."""
    return _PASSWORD.sub(r"\1:***@", url)


def with_url_read(connection_args: dict[str, Any] | None) -> dict[str, Any]:
    """`connection_args` whose `url` or `uri` is a FalkorDB URL (`falkordb://host:port/graph`, the form
    a run's `database_url` takes) as the backend, host, port, credentials and graph it names; other
    arguments as given (biochatter's `url`/`uri` otherwise name a Neo4j server). Beside a URL only the
    graph may be given: a host, port, user, password or backend it does not match is refused, rather
    than one of the two silently winning."""
    args = dict(connection_args or {})
    urls = {str(args[k]).strip() for k in ("url", "uri") if args.get(k)}
    if len(urls) > 1:
        raise ConfigurationError(
            f"connection_args give both url and uri, and they differ ({', '.join(sorted(map(shown_url, urls)))})"
        )
    url = urls.pop() if urls else ""
    if urlsplit(url).scheme.lower() not in FALKORDB_SCHEMES:
        return args
    rest = {k: v for k, v in args.items() if k not in ("url", "uri") and v is not None}
    named = connection_args_from_url(url, rest.get("graph") or rest.get("db_name"))
    given = {
        "backend": rest.get("backend"),
        "host": rest.get("host"),
        "port": rest.get("port"),
        "user": rest.get("username", rest.get("user")),
        "password": rest.get("password"),
    }
    named_as = {**named, "user": named.get("username")}
    for key, value in given.items():
        if value is not None and str(value).strip().lower() != str(named_as.get(key)).strip().lower():
            shown = "***" if key == "password" else repr(value)
            raise ConfigurationError(
                f"connection_args name a FalkorDB URL ({shown_url(url)!r}) and {key}={shown}, which it does not "
                "match: give the server once (the URL, or backend/host/port), and only `graph` beside a URL"
            )
    return {**named, **{k: v for k, v in rest.items() if k in ("graph", "db_name", "data_dir")}}


def backend_of(connection_args: dict[str, Any] | None) -> str:
    """The backend `connect(connection_args)` would open, without connecting."""
    args = with_url_read(connection_args)
    return str(args.get("backend") or ("neo4j" if args.keys() & {"host", "port", "uri", "url"} else "falkordb")).lower()


def default_database_url() -> str:
    return os.environ.get(DATABASE_URL_ENV, "").strip() or "embedded"


def default_graph() -> str:
    return os.environ.get(GRAPH_ENV) or DEFAULT_GRAPH


def _port(parts: SplitResult, url: str) -> int | None:
    try:
        return parts.port
    except ValueError as e:
        raise ConfigurationError(f"the database URL {shown_url(url)!r} has an invalid port: {e}") from e


def connection_args_from_url(url: str | None, graph: str | None = None) -> dict[str, Any]:
    """The `connect()` arguments a database URL names (see `DatabaseContext.database_url`);
    a path names the graph (FalkorDB) or the database (Neo4j), unless `graph` is given."""
    url = (url or "embedded").strip()
    if url == "embedded":
        return {"backend": "falkordb", "graph": graph or default_graph()}
    parts = urlsplit(url)
    if parts.query or parts.fragment:
        raise ConfigurationError(
            f"the database URL {shown_url(url)!r} has a query or fragment; write the database as its path"
        )
    port = _port(parts, url)
    path = parts.path.strip("/") or None
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    if parts.scheme in FALKORDB_SCHEMES:
        if not parts.hostname:
            raise ConfigurationError(f"the database URL {shown_url(url)!r} names no host: write falkordb://host:port")
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
            raise ConfigurationError(f"the database URL {shown_url(url)!r} names no host: write neo4j://host:7687")
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
        f"unsupported database URL {shown_url(url)!r}: use 'embedded', 'falkordb://host:port' or a Neo4j URI "
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
        source = with_url_read(source)
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
    listed = ", ".join(shown_url(u) for u in allowed) or "none"
    raise ConfigurationError(
        f"this run may not use the database {shown_url(url)!r}: runs may use the agent's own database and "
        f"those the operator lists in {ALLOWED_DATABASES_ENV} (now: {listed}; a comma-separated list of URLs, "
        "or * for any)"
    )


def with_graph(args: dict[str, Any], graph: str) -> dict[str, Any]:
    """The same database with another graph (FalkorDB) or database (Neo4j) selected."""
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


def default_connection_args(graph: str | None = None) -> dict[str, Any]:
    """The database the environment names, first set wins: `$REFLEXION_DATABASE_URL`, then
    `$NEO4J_URI` (with langchain-neo4j's other variables), then the embedded FalkorDB; `graph`,
    else `$REFLEXION_GRAPH`, selects the graph (FalkorDB) or database (Neo4j) on any of them."""
    graph = graph or os.environ.get(GRAPH_ENV) or None
    if os.environ.get(DATABASE_URL_ENV, "").strip():
        return connection_args_from_url(default_database_url(), graph)
    return neo4j_env_args(graph) or connection_args_from_url("embedded", graph)


def backend_is_embedded(args: dict[str, Any]) -> bool:
    args = with_url_read(args)
    return backend_of(args) == "falkordb" and not args.get("host")
