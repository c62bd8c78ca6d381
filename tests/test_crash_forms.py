"""No read query kills the embedded FalkorDB, and none is sent again after it did.

The family is generated, not listed: every way of writing a procedure call inside a `CALL { }`
subquery that a grammar of outer contexts, procedures, body shapes, spellings (case, spacing,
comments, backticks) and endings produces, seeded. Each form goes to a server of its own through
`query()` and `validate()`; the server must be the same process, answering, after all of them.
Forms that end their subquery with RETURN must still run. A form nobody knew of is stood for by
the known family with its refusal switched off: the server dies once, the query is quarantined for
the data directory's life (this process, a new graph object, another process), and never sent again.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb import falkordb_graph as falkordb_module
from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB, answers_ping
from reflexion_agents.nodes.graphdb.quarantine import QUARANTINE_FILE
from reflexion_agents.schemas.errors import CypherSyntaxError, QueryError
from tests.helpers import TOM_HANKS_QUERY, draft, make_agent, revise

pytestmark = pytest.mark.integration  # a server of its own, crashed on purpose

# (procedure call, what it yields)
PROCEDURES = [
    ("db.labels()", "label"),
    ("db.relationshipTypes()", "relationshipType"),
    ("db.propertyKeys()", "propertyKey"),
    ("db.indexes()", "label"),
    ("db.idx.fulltext.queryNodes('Movie', 'Matrix')", "node"),
    ("dbms.procedures()", "name"),
    ("db.meta.stats()", "labels"),
]
OUTER = [
    "CALL {{ {body} }} RETURN 1 AS one",
    "MATCH (m:Movie) CALL {{ {body} }} RETURN m.title AS title LIMIT 3",
    "UNWIND [1, 2] AS i CALL {{ {body} }} RETURN i",
    "OPTIONAL MATCH (q:Nothing) CALL {{ {body} }} RETURN 1 AS one",
    "CALL {{ CALL {{ {body} }} RETURN 1 AS z }} RETURN z",
    "WITH 1 AS a CALL {{ WITH a {body} }} RETURN a",
]
PREFIXES = ["", "MATCH (n:Person) ", "WITH 1 AS k ", "UNWIND [1] AS u "]


def spelled(rng: random.Random, text: str) -> str:
    """`text` as someone else might type it: case of keywords, spacing, a comment after CALL."""
    if rng.random() < 0.3:
        text = text.replace("CALL ", rng.choice(["call ", "Call ", "CALL/* c */", "CALL\n  ", "CALL // why\n"]))
    if rng.random() < 0.3:
        text = text.replace("{ ", "{\n    ").replace(" }", "\n}")
    if rng.random() < 0.2:
        text = text.replace("db.labels()", "`db`.`labels`()")
    if rng.random() < 0.2:
        text = text.replace("YIELD", "yield")
    return text


def generated_forms(count: int, seed: int) -> list[tuple[str, bool]]:
    """(query, whether its subquery ends with RETURN): random draws from the grammar above."""
    rng = random.Random(seed)
    forms = []
    for _ in range(count):
        procedure, column = rng.choice(PROCEDURES)
        call = rng.choice([f"CALL {procedure}", f"CALL {procedure} YIELD {column}"])
        returns = rng.random() < 0.3
        body = rng.choice(PREFIXES) + call
        if returns:
            body = f"CALL {procedure} YIELD {column} RETURN {column} AS got"
        forms.append((spelled(rng, rng.choice(OUTER).format(body=body)), returns))
    return forms


@pytest.fixture
def own_server(tmp_path):
    server = EmbeddedFalkorDB.start(tmp_path / "crash")
    db = FalkorDBGraph("movies", host=server.host, port=server.port, server=server)
    db.write("CREATE (:Movie {title: 'The Matrix'})<-[:ACTED_IN]-(:Person {name: 'Keanu Reeves'})")
    db.write("CALL db.idx.fulltext.createNodeIndex('Movie', 'title')")
    try:
        yield server, db
    finally:
        db.server.stop()


def test_no_generated_form_of_a_procedure_call_in_a_subquery_kills_the_server(own_server):
    server, db = own_server
    pid = server.pid
    refused, answered = 0, 0
    for query, returns in generated_forms(120, seed=2511):
        for send in (db.query, db.validate):
            try:
                send(query)
                answered += 1
            except CypherSyntaxError as e:
                assert "must end with RETURN" in str(e), (query, e)
                assert not returns, f"a subquery that ends with RETURN was refused: {query}"
                refused += 1
            except QueryError as e:  # the database's own error is fine; its death is not
                assert "crashed" not in str(e), query
        assert db.server.pid == pid and answers_ping(db.server.port), f"the server died on: {query}"
    assert refused and answered  # both kinds were drawn
    assert db.query("MATCH (m:Movie) RETURN m.title AS title").rows == [["The Matrix"]]


def test_a_query_that_crashed_the_server_is_never_sent_again(own_server, monkeypatch):
    _, db = own_server
    monkeypatch.setattr(falkordb_module, "refuse_crashing_forms", lambda cypher: None)  # a form nobody knew of
    crashing = "CALL { CALL db.labels() } RETURN 1 AS one"
    first_pid = db.server.pid
    with pytest.raises(QueryError, match="crashed on this query"):
        db.query(crashing)
    restarted_pid = db.server.pid
    assert restarted_pid != first_pid and answers_ping(db.server.port)
    assert crashing in (Path(db.server.data_dir) / QUARANTINE_FILE).read_text()
    # again, under another row cap, through validate(), and from a new graph object: refused, not sent
    again = FalkorDBGraph("movies", host=db.host, port=db.port, server=db.server)
    for send in (lambda: db.query(crashing), lambda: db.query(crashing, row_cap=5), lambda: again.validate(crashing)):
        with pytest.raises(QueryError, match="crashed on this query"):
            send()
    assert db.server.pid == restarted_pid
    # another process on the same data directory refuses it too
    script = (
        "import sys\n"
        "from reflexion_agents.nodes.graphdb import FalkorDBGraph, falkordb_graph\n"
        "from reflexion_agents.nodes.graphdb.embedded import EmbeddedFalkorDB\n"
        "falkordb_graph.refuse_crashing_forms = lambda cypher: None\n"
        "server = EmbeddedFalkorDB.start(sys.argv[1])\n"
        "db = FalkorDBGraph('movies', host=server.host, port=server.port, server=server)\n"
        "try:\n"
        "    db.query(sys.argv[2])\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", script, str(db.server.data_dir), crashing],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )
    assert "QueryError" in out.stdout and "crashed on this query" in out.stdout, out.stdout + out.stderr
    assert db.server.pid == restarted_pid and answers_ping(db.server.port)


def test_the_agent_is_told_to_end_the_subquery_with_return_and_goes_on(movies_db):
    crashing = "CALL { CALL db.labels() YIELD label } MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.name AS name"
    agent, _ = make_agent(movies_db, [draft(crashing), revise(TOM_HANKS_QUERY, score=9)])
    pid = movies_db.server.pid
    result = agent.execute("Which movies did Tom Hanks act in?")
    assert "must end with RETURN" in result.outcomes[0].error
    assert ["Cast Away"] in result.tool_result
    assert movies_db.server.pid == pid
