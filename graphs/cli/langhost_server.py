"""One server process of `reflexion scale`: langgraph-runtime-pg's `langhost` command, with the project's
web app (langgraph.json's `http.app`) able to start.

With an `http.app`, langgraph-api 0.11.1 wraps the whole application in its store middleware, which
also receives the server's startup event and asks for the store before the PostgreSQL runtime has
made its pool ("Store requires setup_store()/start_pool() first"): uvicorn then skips the startup,
and every request fails. Here that middleware lets the startup event through unchanged; every
request still goes through it. The change is made as uvicorn starts (langgraph-api reads its
settings from the environment when it is imported, which `langhost` arranges first), and holds for
one uvicorn worker, which is how `reflexion scale` runs each process.

    python -m reflexion_agents.graphs.cli.langhost_server serve --port 2024 --config langgraph.json
"""

from __future__ import annotations

import importlib
from typing import Any

import uvicorn

_start = uvicorn.run


def _start_with_lifespan_through(*args: Any, **kwargs: Any) -> Any:
    # langgraph-api 0.11.1, installed beside langhost (the `scale` extra), not beside `serve`
    middleware = importlib.import_module("langgraph_api.middleware.ensure_store").EnsureStoreAccessible
    guarded = middleware.__call__

    async def call(self: Any, scope: Any, receive: Any, send: Any) -> Any:
        if scope["type"] == "lifespan":
            return await self.app(scope, receive, send)
        return await guarded(self, scope, receive, send)

    middleware.__call__ = call
    return _start(*args, **kwargs)


def main() -> None:
    uvicorn.run = _start_with_lifespan_through
    importlib.import_module("langhost.cli").cli()


if __name__ == "__main__":
    main()
