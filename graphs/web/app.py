"""The web page, served by LangGraph's server beside the graphs (`langgraph.json`'s `http.app`).

    make serve        # then open http://127.0.0.1:2024/ui

The page (`static/`) talks to the server's own API for everything a run is: it lists the assistants
and threads, streams a run's steps with `fetch` (the event stream is a POST), and resumes a paused
run with the reviewer's decision. This app adds what that API does not hold:

- `GET /ui` and `/ui/static/...`: the page, its script and style, and the vendored drawing library
  (force-graph, MIT, `static/vendor/`): no build step, no internet;
- `GET /ui/api/graphs`: the graphs of the server's database, to choose which one to ask;
- `POST /ui/api/picture` `{"query", "rows", "graph"}`: the nodes and relationships an answer is
  about (`picture.py`), read-only, on the database the graphs use (`$REFLEXION_DATABASE_URL`...).

Errors come back as `{"error": "..."}` with a 4xx or 5xx status, never a traceback.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from reflexion_agents.graphs.web.picture import picture
from reflexion_agents.nodes.graphdb.atomic_load import kept_by_the_project
from reflexion_agents.nodes.graphdb.connect import open_database
from reflexion_agents.nodes.graphdb.locations import default_connection_args, with_graph
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.schemas.errors import ConfigurationError, GraphDatabaseError, GraphNotFoundError, QueryError

STATIC = Path(__file__).parent / "static"
_open: dict[str, GraphDatabase] = {}
_open_lock = threading.Lock()
_KEPT_OPEN = 32  # graphs kept open at once: a page names them, and names are free to invent


MAX_BODY_BYTES = 5_000_000  # a picture request: the page sends at most 1,000 rows


def database(graph: str | None) -> GraphDatabase:
    """The server's database, on `graph` (default: the one the environment names), opened once per graph."""
    args = default_connection_args()
    if graph:
        args = with_graph(args, graph)
    key = repr(sorted(args.items()))
    with _open_lock:
        opened = _open.get(key)
    if opened is not None:
        return opened
    opened = open_database(args)  # outside the lock: a slow database holds up no other request
    with _open_lock:
        if len(_open) >= _KEPT_OPEN:
            for old in _open.values():
                close = getattr(old, "close", None)
                if callable(close):
                    close()
            _open.clear()
        return _open.setdefault(key, opened)


def served_graph() -> str:
    """The graph (FalkorDB) or database (Neo4j) the graphs use when a run names none; "" for a Neo4j
    server's home database."""
    args = default_connection_args()
    return str(args.get("graph") or args.get("database") or "")


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def page(request: Request) -> Response:
    return FileResponse(STATIC / "index.html")


async def to_page(request: Request) -> Response:
    return RedirectResponse("/ui")


def _graphs() -> dict[str, Any]:
    """The graphs to choose from, and the one a run without a choice uses (`default`)."""
    default = served_graph()
    listed = getattr(database(None), "graphs", None)
    names = listed() if callable(listed) else []
    shown = {n for n in names if not kept_by_the_project(n)}
    return {"graphs": sorted(shown | ({default} if default else set())), "default": default}


async def graphs(request: Request) -> Response:
    try:
        return JSONResponse(await run_in_threadpool(_graphs))
    except (ConfigurationError, GraphDatabaseError) as e:
        return _error(503, f"the database cannot be reached: {e}")


async def answer_picture(request: Request) -> Response:
    if int(request.headers.get("content-length") or 0) > MAX_BODY_BYTES:
        return _error(413, f"a picture request is at most {MAX_BODY_BYTES} bytes: send the first rows")
    try:
        body = await request.json()
    except (ValueError, RecursionError):
        return _error(400, 'send JSON: {"query": ..., "rows": [...], "graph": ...}')
    if not isinstance(body, dict) or not isinstance(body.get("rows", []), list):
        return _error(400, 'send JSON: {"query": ..., "rows": [...], "graph": ...}')
    query, rows, graph = body.get("query"), body.get("rows") or [], body.get("graph")
    if not (query is None or isinstance(query, str)) or not (graph is None or isinstance(graph, str)):
        return _error(400, "`query` and `graph` must be text")
    rows = [row if isinstance(row, list) else [row] for row in rows]
    try:
        drawn = await run_in_threadpool(lambda: picture(database(graph or None), query, rows))
    except GraphNotFoundError as e:
        return _error(404, str(e))
    except RecursionError:
        return _error(400, "the rows are nested too deeply to read")
    except ConfigurationError as e:
        return _error(400, str(e))
    except QueryError as e:
        return _error(422, f"the picture's query failed: {e}")
    except GraphDatabaseError as e:
        return _error(503, f"the database cannot be reached: {e}")
    return JSONResponse(drawn)


app = Starlette(
    routes=[
        Route("/ui", page),
        Route("/ui/", to_page),
        Route("/ui/api/graphs", graphs),
        Route("/ui/api/picture", answer_picture, methods=["POST"]),
        Mount("/ui/static", StaticFiles(directory=STATIC), name="static"),
    ]
)
