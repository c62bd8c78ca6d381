"""Every graph the project serves, by name: one registration line each, built on first use.

    from reflexion_agents.graphs import registry
    registry.names()                      # the registered names, as LangGraph server lists them
    registry.graph("kg_reflexion")        # the compiled graph (the agent or flow is built on first use)
    registry.agent("text2cypher_retry")   # the agent or flow object behind it
    registry.build("kg_reflexion", model=chat, database=db)  # a new one, with your model and database

A new agent or flow is its own files plus one line in `BUILDERS`, a function that builds it
(with `checkpointer=None`: LangGraph server checkpoints the threads); the text-to-Cypher flows
register themselves from `FLOWS`. Importing this module builds nothing: the model and the
database come from each run's context, else the environment, and are opened on the first run.

LangGraph's loader reads `module.__dict__[name]` (so a module `__getattr__` is not enough): each
name is bound here to a graph factory, which the server calls to get the graph and which builds it
once. The server hands it the run's runtime, whose context is the one the client sent: a field the
graph does not have is refused there, with the list of fields (the server itself would drop it
silently). Called with no argument, a factory just returns the graph. `langgraph.json` lists the
names as `reflexion_agents.graphs.registry:<name>`; it is derived from `BUILDERS`
(`python -m reflexion_agents.graphs.registry` rewrites its `graphs`), and a test checks the two match.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from langgraph.graph.state import CompiledStateGraph

from reflexion_agents.graphs.builders import conversation, refuse_unknown_settings
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.react_agent import ReActAgent
from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent
from reflexion_agents.graphs.text2cypher_flow import FLOWS, Text2CypherFlow
from reflexion_agents.graphs.wikipedia_react_agent import WikipediaReActAgent
from reflexion_agents.nodes.run_context import checked_context
from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS
from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
from reflexion_agents.nodes.tools.wikipedia_backends import LocalCorpus
from reflexion_agents.schemas.errors import ConfigurationError
from reflexion_agents.schemas.extraction import CarCollection

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime

MODULE = "reflexion_agents.graphs.registry"  # also when run as `python -m reflexion_agents.graphs.registry`
LANGGRAPH_JSON = Path(__file__).resolve().parents[1] / "langgraph.json"
WIKIPEDIA_ENV = "REFLEXION_WIKIPEDIA"


class Servable(Protocol):
    """An agent or flow: what a builder returns."""

    @property
    def graph(self) -> CompiledStateGraph[Any, Any, Any, Any]: ...

    @property
    def context_schema(self) -> type[Any]: ...


def wikipedia_from_env() -> WikipediaTools:
    """The pages `$REFLEXION_WIKIPEDIA` names: `live` (the MediaWiki API, the default), `sample`
    (the corpus shipped with the package, offline) or the path of a corpus JSON file."""
    source = (os.environ.get(WIKIPEDIA_ENV) or "live").strip()
    if source == "live":
        return WikipediaTools()
    return WikipediaTools.sample() if source == "sample" else WikipediaTools(LocalCorpus.from_file(source))


def _wikipedia_agent(**settings: Any) -> WikipediaReActAgent:
    """The Wikipedia agent, on the pages `$REFLEXION_WIKIPEDIA` names unless `wikipedia=` is given."""
    settings.setdefault("wikipedia", wikipedia_from_env())
    return WikipediaReActAgent(**settings)


_wikipedia_agent.__signature__ = inspect.signature(WikipediaReActAgent)  # type: ignore[attr-defined]


#: Each name's builder; its keyword arguments are the agent's or flow's own settings (what `build` passes).
BUILDERS: dict[str, Callable[..., Servable]] = {
    "kg_reflexion": KGQueryReflexionAgent,
    "react_wikipedia": _wikipedia_agent,
    "react_tools": partial(ReActAgent, ARITHMETIC_TOOLS, add_llm_as_fallback=True),
    "structured_output": partial(StructuredOutputReflectionAgent, CarCollection),
    **{f"text2cypher_{flow}": partial(Text2CypherFlow, flow) for flow in FLOWS},
}
#: The graphs that query a graph database: those whose builder takes one (the others refuse `database=`).
WITH_DATABASE = frozenset(
    name for name, builder in BUILDERS.items() if "database" in inspect.signature(builder).parameters
)

_built: dict[str, Servable] = {}
_lock = threading.Lock()


def names() -> list[str]:
    """The registered names, in registration order."""
    return list(BUILDERS)


def _known(name: str) -> None:
    if name not in BUILDERS:
        raise ConfigurationError(f"unknown graph {name!r}; the graphs are {', '.join(sorted(BUILDERS))}")


def build(name: str, *, model: Any = None, database: Any = None, checkpointer: Any = None, **settings: Any) -> Servable:
    """A new agent or flow of the kind registered as `name`, as the server runs it but with what you
    give: `model` (a LangChain chat model or a `provider:model` name; else the run's context or the
    environment names one), `database` (a `GraphDatabase`, for the graphs that query one),
    `checkpointer` (none by default: the server keeps threads itself) and the agent's own settings
    (`max_steps=2`, ...).

    For tests and for programs that serve the registered graphs with their own model and database;
    `agent(name)` stays the one the server uses."""
    _known(name)
    settings = conversation(model, settings)
    if database is not None:
        if name not in WITH_DATABASE:
            raise ConfigurationError(
                f"the graph {name!r} queries no database; database= is for {', '.join(sorted(WITH_DATABASE))}"
            )
        settings["database"] = database
    builder = BUILDERS[name]
    refuse_unknown_settings(builder, f"the graph {name!r}", {"checkpointer": checkpointer, **settings})
    return builder(checkpointer=checkpointer, **settings)


def agent(name: str) -> Servable:
    """The agent or flow registered as `name`, built on the first call and the same object after."""
    _known(name)
    with _lock:
        if name not in _built:
            _built[name] = build(name)
        return _built[name]


def graph(name: str) -> CompiledStateGraph[Any, Any, Any, Any]:
    """The compiled graph registered as `name`."""
    return agent(name).graph


#: LangGraph's own keys, which a client that still sends `config.configurable` may keep there: the server
#: copies that mapping into the run's context, so these are not settings the client got wrong.
SERVER_KEYS = {"thread_id", "run_id", "assistant_id", "graph_id", "user_id", "cron_id"}
SERVER_PREFIXES = ("__", "langgraph_", "checkpoint_")


def refuse_unknown_context(name: str, context: Any) -> None:
    """Refuse a run context with a field graph `name` does not have (or a value that does not fit),
    naming the fields it has, before the run starts: LangGraph's server drops unknown fields silently."""
    if isinstance(context, dict):
        sent = {k: v for k, v in context.items() if k not in SERVER_KEYS and not str(k).startswith(SERVER_PREFIXES)}
        checked_context(agent(name).context_schema, sent)


def _factory(name: str) -> Callable[..., CompiledStateGraph[Any, Any, Any, Any]]:
    def factory(runtime: ServerRuntime[Any] | None = None) -> CompiledStateGraph[Any, Any, Any, Any]:
        built = graph(name)
        refuse_unknown_context(name, getattr(runtime, "context", None))  # set for a run only
        return built

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"The {name} graph, for LangGraph server (`{MODULE}:{name}` in langgraph.json)."
    return factory


# What LangGraph's loader finds as `graphs.registry:<name>`; a name must not hide this module's own.
if clashes := sorted(set(BUILDERS) & set(globals())):
    raise TypeError(f"graph names {clashes} are taken by {MODULE} itself; register them under other names")
globals().update({name: _factory(name) for name in BUILDERS})


def langgraph_graphs() -> dict[str, str]:
    """The `graphs` table of `langgraph.json`: every registered name, as this module exports it."""
    return {name: f"{MODULE}:{name}" for name in BUILDERS}


#: The web page's app, which `langgraph.json`'s `http.app` mounts beside the graphs (graphs/web/app.py).
WEB_APP = "reflexion_agents.graphs.web.app:app"


def write_langgraph_json(path: Path = LANGGRAPH_JSON) -> None:
    """Rewrite the `graphs` of `langgraph.json` from the registry, with the web page's app; its other
    settings stay."""
    # a new one reads `.env` where the server starts, as the project's own does
    config: dict[str, Any] = (
        json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"dependencies": ["."], "env": ".env"}
    )
    config["graphs"] = langgraph_graphs()
    config["http"] = {**config.get("http", {}), "app": WEB_APP}
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":  # python -m reflexion_agents.graphs.registry [path/to/langgraph.json]
    write_langgraph_json(Path(sys.argv[1]) if len(sys.argv) > 1 else LANGGRAPH_JSON)
