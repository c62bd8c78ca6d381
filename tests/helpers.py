"""Helpers the tests share: the movies graph's standard queries, scripted replies, and small
stand-ins. Fixtures live in `conftest.py`; a test imports these from here, never from another test."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from tests.openai_stub import tool_names

TOM_HANKS_QUERY = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
EMPTY_QUERY = "MATCH (p:Person {name: 'Nobody At All'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"


def graph_fingerprint(db: FalkorDBGraph) -> str:
    """A digest of every node and relationship with its properties: equal means unchanged."""
    nodes = db.query("MATCH (n) RETURN labels(n), properties(n)", row_cap=None).rows
    rels = db.query("MATCH (a)-[r]->(b) RETURN properties(a), type(r), properties(r), properties(b)", row_cap=None).rows
    text = json.dumps(sorted(json.dumps(r, sort_keys=True) for r in nodes + rels))
    return hashlib.sha256(text.encode()).hexdigest()


def draft(query: str, reflection: str = "first try") -> object:
    return tool_reply("GenerateQuery", {"answer": query, "reflection": reflection, "search_queries": []})


def revise(query: str, score: object = 5, previous: str = "") -> object:
    return tool_reply(
        "ReviseQuery", {"answer": previous, "reflection": "critique", "revised_query": query, "score": score}
    )


def keep(query: str, score: object = 6) -> object:
    """A revision that keeps `query`: the model takes its result as the answer (a score of 6 neither
    passes the threshold of 7 nor rejects the result)."""
    return revise(query, score=score, previous=query)


def make_agent(movies_db: FalkorDBGraph, replies: list, **kwargs) -> tuple[KGQueryReflexionAgent, ScriptedChatModel]:
    """A knowledge-graph agent on the movies graph whose model replies from `replies`."""
    model = ScriptedChatModel(replies=replies)
    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, **kwargs), model


def last_query_shown(request: dict[str, Any]) -> str | None:
    """The query the newest tool result in an OpenAI request ran, as a model reads it: the result's
    `Query:` line when it has one (a query changed before it ran), else the query of the call it answers."""
    messages = request["messages"]
    results = [m for m in messages if m["role"] == "tool"]
    if not results:
        return None
    lines = str(results[-1].get("content")).splitlines()
    shown = next((line.removeprefix("Query: ") for line in lines if line.startswith("Query: ")), None)
    if shown is not None:
        return shown
    calls = [c for m in messages for c in m.get("tool_calls") or [] if c.get("id") == results[-1].get("tool_call_id")]
    args = json.loads(calls[-1]["function"]["arguments"]) if calls else {}
    return next((args[k] for k in ("revised_query", "answer", "query", "cypher") if args.get(k)), None)


def flow_replies(request: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI stub's replies for every flow and agent: the Tom Hanks query, judged right; a revision
    keeps the query that ran (a reviewer's edit, say), as a model satisfied with its result does."""
    tool = request["tool_choice"]["function"]["name"]
    if tool == "ReviseQuery":
        return {"tool": tool, "args": {"revised_query": last_query_shown(request) or TOM_HANKS_QUERY, "score": 9}}
    return {
        "tool": tool,
        "args": {
            "GuardrailDecision": {"answerable": True},
            "CypherQuery": {"cypher": TOM_HANKS_QUERY},
            "Evaluation": {"ok": True},
            "Summary": {"answer": "Tom Hanks acted in 12 movies."},
            "GenerateQuery": {"answer": TOM_HANKS_QUERY},
            "ReviseQuery": {"revised_query": TOM_HANKS_QUERY, "score": 9},
        }[tool],
    }


def kg_model(request: dict[str, Any]) -> dict[str, Any]:
    """Drafts an empty-result query, then revises to the right one and scores it."""
    tool_results = [m for m in request["messages"] if m["role"] == "tool"]
    if "GenerateQuery" in tool_names(request):
        return {
            "tool": "GenerateQuery",
            "args": {"answer": EMPTY_QUERY, "reflection": "guess", "search_queries": ["Tom Hanks"]},
        }
    if len(tool_results) == 1:
        return {
            "tool": "ReviseQuery",
            "args": {"answer": EMPTY_QUERY, "reflection": "wrong name", "revised_query": TOM_HANKS_QUERY, "score": "2"},
        }
    return {
        "tool": "ReviseQuery",
        "args": {"answer": TOM_HANKS_QUERY, "reflection": "good", "revised_query": TOM_HANKS_QUERY, "score": "9/10"},
    }


# -- time: tests wait for events, not the clock ----------------------------------------------------
# A bound on how long something takes holds on a busy machine too: it is the promised time plus a
# multiple of a trivial call of the same kind timed just before (what the machine can do right now),
# plus a fixed slack. A wait for something to happen polls for it, with a long deadline only against
# a hang.

HANG_GUARD_S = 60.0  # how long a test waits for something that happens in well under a second idle
SLACK_S = 0.25  # the scheduler's share of a bound: a busy machine runs a woken thread this much late


def seconds(call: Callable[[], object]) -> float:
    """How long `call()` takes, by the monotonic clock."""
    started = time.monotonic()
    call()
    return time.monotonic() - started


def latest(promised: float, overhead: float) -> float:
    """The latest a call promised to return within `promised` seconds may return on this machine as it
    is now: the promise, three times `overhead` (a trivial call of the same kind, timed just before),
    and `SLACK_S`. A call that waits out a longer timeout than promised, or never returns, is past it."""
    return promised + 3 * overhead + SLACK_S


def wait_until(condition: Callable[[], bool], what: str, guard_s: float = HANG_GUARD_S) -> float:
    """Poll `condition` until it holds; fail naming `what` if it still does not after `guard_s` seconds.
    Returns the seconds it took."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < guard_s, f"{what}: not after {guard_s:.0f} s"
        time.sleep(0.02)
    return time.monotonic() - started


class ServerCommands:
    """The GRAPH.* commands a FalkorDB server received since this was made, by name (`commands()`):
    what a query sent, read from the server's own counters."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.before = self.counts()

    def counts(self) -> dict[str, int]:
        prefix, stats = "cmdstat_graph.", self.client.info("commandstats")
        return {k.removeprefix(prefix): v["calls"] for k, v in stats.items() if k.startswith(prefix)}

    def __call__(self) -> dict[str, int]:
        return {k: n - self.before.get(k, 0) for k, n in self.counts().items() if n - self.before.get(k, 0)}

    def idle(self) -> bool:
        """No query still running (a graph query holds its client blocked until it ends; only then is
        it counted)."""
        return self.client.info("clients")["blocked_clients"] == 0


def closed_port() -> int:
    """A local port nothing listens on (it was free a moment ago)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port() -> int:
    """A local port to serve on: free a moment ago."""
    return closed_port()


class PortableGraph:
    """A backend without FalkorDB's sibling graphs (as Neo4j is here): the store ranks on the client."""

    dialect = "neo4j"

    def __init__(self, db: FalkorDBGraph) -> None:
        self._db = db

    def query(self, *args, **kwargs):
        return self._db.query(*args, **kwargs)

    def write(self, *args, **kwargs):
        return self._db.write(*args, **kwargs)

    def schema(self, sample_size: int = 50):
        return self._db.schema(sample_size)

    def labels(self):
        return self._db.labels()

    def relationship_types(self):
        return self._db.relationship_types()

    def validate(self, *args, **kwargs):
        return self._db.validate(*args, **kwargs)

    def close(self) -> None:
        pass


def mapped_values(db: Any, cypher: str, schema: Any = None) -> tuple[str, list[Any]]:
    """(the query with its literal values mapped to stored ones, the mappings made): the schema check
    with value mapping alone, as the flows and the agent run it before a query."""
    from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
    from reflexion_agents.nodes.graphdb.query_check import QueryChecker

    check = QueryChecker(GraphFacts(db, schema or db.schema()), repair=False).check(cypher)
    return check.query, check.mappings


def labelled_edges(graph) -> dict[tuple[str, str], str | None]:
    """A compiled graph's conditional edges, with the label each is drawn with."""
    return {(e.source, e.target): e.data for e in graph.get_graph().edges if e.conditional}


SERVER_START_GUARD_S = 120.0  # a server process (LangGraph's, Vite's) starting on a busy machine


def wait_until_serving(process: Any, url: str, log: Any, guard_s: float = SERVER_START_GUARD_S) -> None:
    """Wait until the server `process` just started answers `url` with 200; fail with the end of its
    `log` (a path) if it exits first or still does not answer after `guard_s` seconds."""
    import httpx
    import pytest

    deadline = time.monotonic() + guard_s
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{url} did not start:\n{Path(log).read_text()[-3000:]}")
        time.sleep(0.5)


def served_env(stub: Any, falkordb_server: Any, **more: str) -> dict[str, str]:
    """The environment `reflexion serve` runs in for a test: the stub model, the session's movies graph,
    and `more` (`REFLEXION_REQUIRE_APPROVAL="1"`, ...)."""
    return {
        **os.environ,
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "test",
        "REFLEXION_DATABASE_URL": f"falkordb://{falkordb_server.host}:{falkordb_server.port}",
        "REFLEXION_GRAPH": "movies",
        **more,
    }
