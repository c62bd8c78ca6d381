"""The standing attack: write and escape forms through every path a model-written or client-edited
query takes, with the whole server fingerprinted before and after (every key, every graph's nodes,
relationships and indexes). Not one form may change anything.

The paths: the adapter's `query` and `validate`, the knowledge-graph agent's draft and its approval
edit, a flow's model output and its approval edit, and a biochatter subclass's own query hook.
"""

from __future__ import annotations

import json

import pytest
import redis
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.schemas.errors import GraphDatabaseError
from tests.flow_script import flow_model
from tests.helpers import TOM_HANKS_QUERY, draft, make_agent, revise

FULLTEXT = "db.idx.fulltext.createNodeIndex"
WRITE_FORMS = [
    "CREATE (:Intruder)",
    "create (:Intruder)",
    "MATCH (m:Movie) WITH m LIMIT 1 CREATE (m)-[:OWNED_BY]->(:Intruder)",
    "MERGE (:Intruder {name: 'x'})",
    "MATCH (a:Person), (b:Movie) WITH a, b LIMIT 1 MERGE (a)-[:HACKED]->(b)",
    "MATCH (p:Person) SET p.name = 'pwned'",
    "MATCH (p:Person) SET p += {pwned: true}",
    "MATCH (p:Person) SET p:Intruder",
    "MATCH (p:Person) REMOVE p.name",
    "MATCH (p:Person) REMOVE p:Person",
    "MATCH (m:Movie) DELETE m",
    "MATCH (n) DETACH DELETE n",
    "MATCH ()-[r]->() DELETE r",
    "MATCH (m:Movie) FOREACH (x IN [1] | CREATE (:Intruder))",
    "UNWIND range(1, 3) AS i CREATE (:Intruder {i: i})",
    "CALL { CREATE (:Intruder) } RETURN 1",
    "MATCH (m:Movie) CALL (m) { SET m.title = 'x' } RETURN m",
    "OPTIONAL MATCH (n:Nothing) CREATE (:Intruder)",
    "WITH 1 AS x WHERE false CREATE (:Intruder)",
    "MATCH (n) RETURN n LIMIT 1; CREATE (:Intruder)",
    "RETURN 1 // comment\nCREATE (:Intruder)",
    "MATCH (n) /* hidden */ DETACH DELETE n",
    "EXPLAIN CREATE (:Intruder)",
    "PROFILE CREATE (:Intruder)",
    "explain MATCH (n) DETACH DELETE n",
    "RETURN 1\x00CREATE (:Intruder)",
    "RETURN 1\x1bCREATE (:Intruder)",
    "RETURN '\ud800' AS x",
    "CREATE INDEX FOR (p:Person) ON (p.pwned)",
    "CREATE INDEX ON :Person(pwned)",
    "DROP INDEX ON :Person(name)",
    "CREATE CONSTRAINT ON (p:Person) ASSERT p.name IS UNIQUE",
    f"CALL {FULLTEXT}('Movie', 'title')",
    f"CALL `{FULLTEXT}`('Movie', 'title')",
    "CALL `db`.`idx`.`fulltext`.`createNodeIndex`('Movie', 'title')",
    f"CALL/**/{FULLTEXT}('Person', 'name')",  # a comment where a space would be
    "CALL// c\ndb.idx.fulltext.drop('Movie')",
    "CALL /* a */ db . /* b */ idx.fulltext.drop('Movie')",
    "CALL db . idx . fulltext . createNodeIndex('Movie', 'title')",
    "CALL db.idx.fulltext.drop('Movie')",
    "CALL db.idx.vector.createNodeIndex('Movie', 'title', 3, 'euclidean')",
    "CALL db.idx.fulltext.createNodeIndex({label: 'Movie', stopwords: []}, 'title')",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "LOAD CSV WITH HEADERS FROM 'http://127.0.0.1:9/x.csv' AS row CREATE (:Intruder {r: row})",
    "CALL apoc.create.node(['Intruder'], {}) YIELD node RETURN node",
    "CALL dbms.security.createUser('eve', 'pw', false)",
    "MATCH (m:Movie) WITH m MERGE (m)<-[:ACTED_IN]-(:Person {name: 'Intruder'}) RETURN m",
]


def server_state(db: FalkorDBGraph) -> dict:
    """Every key on the server, and for every graph its nodes, relationships and indexes."""
    client = redis.Redis(host=db.host, port=db.port, decode_responses=True)
    # FalkorDB records query statistics of its own in `telemetry{graph}` streams (capped by
    # MAX_INFO_QUERIES); any read makes one. Every other key is a graph or something a query made.
    state: dict = {"keys": sorted(k for k in client.keys("*") if not k.startswith("telemetry{"))}
    for name in db.graphs():
        graph = db.sibling(name)
        state[name] = {
            "nodes": sorted(
                map(json.dumps, graph.query("MATCH (n) RETURN labels(n), properties(n)", row_cap=None).rows)
            ),
            "rels": sorted(
                map(
                    json.dumps,
                    graph.query("MATCH (a)-[r]->(b) RETURN id(a), type(r), properties(r), id(b)", row_cap=None).rows,
                )
            ),
            "indexes": sorted(
                map(
                    json.dumps,
                    graph.query(
                        "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types", row_cap=None
                    ).rows,
                )
            ),
        }
    return state


@pytest.fixture(autouse=True)
def unchanged(movies_db, shop_db):
    """The whole server is the same after each path's sweep over every form."""
    before = server_state(movies_db)
    yield
    after = server_state(movies_db)
    changed = {key: after.get(key) for key in set(after) | set(before) if after.get(key) != before.get(key)}
    assert not changed


def sweep(check) -> None:
    """Run `check(form)` for every form; report every form that got through, not just the first."""
    through = []
    for form in WRITE_FORMS:
        try:
            check(form)
        except AssertionError as e:
            through.append(f"{form!r}: {e}")
    assert not through, "\n".join(through)


def test_there_are_at_least_forty_forms():
    assert len(set(WRITE_FORMS)) >= 40


def test_the_adapter_refuses_every_form(movies_db):
    def check(form: str) -> None:
        for path in (movies_db.query, movies_db.validate):
            try:
                path(form)
            except GraphDatabaseError:
                continue
            raise AssertionError(f"{path.__name__} accepted it")

    sweep(check)


def test_the_agent_never_runs_a_drafted_or_approved_form(movies_db):
    def check(form: str) -> None:
        agent, _ = make_agent(movies_db, [draft(form), revise(TOM_HANKS_QUERY, 9)], checkpointer=None)
        assert agent.execute("Tom Hanks movies?").outcomes[0].error, "the draft ran"
        approving, _ = make_agent(
            movies_db,
            [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)],
            require_approval=True,
            checkpointer=InMemorySaver(),
        )
        paused = approving.execute("Tom Hanks movies?")
        edited = approving.resume(paused.thread_id, {"action": "edit", "query": form})
        assert edited.outcomes[0].error, "the approval edit ran"

    sweep(check)


def test_a_flow_never_runs_a_generated_or_approved_form(movies_db):
    ok = {"answerable": True, "reason": "people and movies"}

    def check(form: str) -> None:
        model = flow_model(
            GuardrailDecision=[ok],
            CypherQuery=[{"cypher": form}, {"cypher": TOM_HANKS_QUERY}],
            Summary=[{"answer": "ok"}],
        )
        flow = Text2CypherFlow(
            "retry", conversation_factory=lambda: model, database=movies_db, fewshots=False, checkpointer=None
        )
        assert flow.ask("Tom Hanks movies?").attempts[0].error, "the generated query ran"
        model = flow_model(
            GuardrailDecision=[ok], CypherQuery=[{"cypher": TOM_HANKS_QUERY}], Summary=[{"answer": "ok"}]
        )
        approving = Text2CypherFlow(
            "naive",
            conversation_factory=lambda: model,
            database=movies_db,
            fewshots=False,
            require_approval=True,
            checkpointer=InMemorySaver(),
        )
        paused = approving.ask("Tom Hanks movies?")
        edited = approving.resume(paused.thread_id, {"action": "edit", "query": form})
        assert edited.attempts and edited.attempts[0].error, "the approval edit ran"

    sweep(check)


class HookAgent(KGQueryReflexionAgent):
    """A biochatter-style subclass running queries through its own hook, on the same server."""

    def _query_graph_database(self, query: str) -> list:
        return [self.db.query(query).records()]


def test_a_subclass_hook_never_sees_a_form(movies_db):
    from reflexion_agents.nodes.models import ScriptedChatModel

    def check(form: str) -> None:
        model = ScriptedChatModel(replies=[draft(form), revise(TOM_HANKS_QUERY, 9)])
        agent = HookAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
        assert agent.execute("Tom Hanks movies?").outcomes[0].error, "the hook ran it"

    sweep(check)
