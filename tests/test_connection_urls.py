"""A FalkorDB server named the way a run's `database_url` names it, `falkordb://host:port/graph`,
given as biochatter's `connection_args` `url` (or `uri`): the agents and flows open that server and
graph, not a Neo4j driver pointed at a FalkorDB port."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.graphdb.connect import connect, where
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from tests.helpers import TOM_HANKS_QUERY, closed_port, draft, revise


@pytest.mark.parametrize("key", ["url", "uri"])
def test_the_agent_and_a_flow_answer_from_a_falkordb_url(falkordb_server, movies_db, key):
    url = f"falkordb://{falkordb_server.host}:{falkordb_server.port}/movies"
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)])
    agent = KGQueryReflexionAgent(lambda: model, {key: url}, checkpointer=None)
    try:
        assert ["Cast Away"] in agent.execute("Tom Hanks movies?").query_rows
    finally:
        agent.close()
    replies = [
        tool_reply("GuardrailDecision", {"answerable": True}),
        tool_reply("CypherQuery", {"cypher": TOM_HANKS_QUERY}),
        tool_reply("Summary", {"answer": "Twelve movies."}),
    ]
    flow_model = ScriptedChatModel(replies=replies)
    flow = Text2CypherFlow("naive", {key: url}, lambda: flow_model, fewshots=False, checkpointer=None)
    try:
        result = flow.ask("Tom Hanks movies?")
    finally:
        flow.close()
    assert result.stop_reason == "answered" and len(result.rows) == 12


def test_the_graph_in_the_url_and_an_explicit_graph(falkordb_server, movies_db):
    base = f"falkordb://{falkordb_server.host}:{falkordb_server.port}"
    assert connect({"url": f"{base}/movies"}).graph_name == "movies"
    assert connect({"url": base, "graph": "movies"}).graph_name == "movies"
    assert connect({"url": f"{base}/other", "graph": "movies"}).graph_name == "movies"  # the explicit key wins


def test_an_unreachable_falkordb_url_is_named_as_falkordb():
    args = {"url": f"falkordb://127.0.0.1:{closed_port()}/movies"}
    assert where(args).startswith("FalkorDB at 127.0.0.1:")
    model = ScriptedChatModel(replies=[])
    result = KGQueryReflexionAgent(lambda: model, args, checkpointer=None).execute("Tom Hanks movies?")
    assert result.stop_reason == "tool_unavailable" and "FalkorDB" in (result.error or "")
    assert model.calls == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"url": "falkordb://h:6379/g", "host": ""}, "host=''"),  # would have opened the embedded server
        ({"url": "falkordb://h/g", "host": "localhost", "port": "7687"}, "host='localhost'"),
        ({"url": "falkordb://u:pw@h/g", "user": "alice"}, "user='alice'"),
        ({"url": "falkordb://h/g", "backend": "neo4j"}, "backend='neo4j'"),
        ({"url": "bolt://n:7687", "uri": "falkordb://h/g"}, "both url and uri"),
    ],
)
def test_a_server_given_twice_in_two_ways_that_differ_is_refused(args, said):
    from reflexion_agents.schemas.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=said):
        connect(args)


def test_a_password_in_a_url_never_reaches_a_message(monkeypatch):
    from reflexion_agents.nodes.graphdb.locations import check_allowed_database
    from reflexion_agents.schemas.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as bad_port:
        connect({"url": "falkordb://admin:s3cret@h:99999/g"})
    monkeypatch.setenv("REFLEXION_ALLOWED_DATABASES", "falkordb://ops:t0psecret@db.internal:6379")
    with pytest.raises(ConfigurationError) as refused:
        check_allowed_database("falkordb://eve:guess@elsewhere:6379/g", {"backend": "falkordb"})
    said = f"{bad_port.value} {refused.value}"
    assert "s3cret" not in said and "t0psecret" not in said and "guess" not in said
    assert "admin:***@h" in said and "ops:***@db.internal" in said
