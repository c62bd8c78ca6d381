"""The read-only check made from a query's text, for databases whose plans cannot be asked for
(a subclass's own `_query_graph_database`): write forms refused, names that look like keywords not."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.graphdb.cypher_text import called_procedures, lexical_write

REFUSED = [
    "MATCH (n) DETACH DELETE n",
    "MATCH (n) SET n.x = 1 RETURN n",
    "MERGE (n:Gene {name: 'X'})",
    "MATCH (a) FOREACH (x IN [1] | CREATE (:B))",
    "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
    "INSERT (n:Person)",
    "CALL apoc.periodic.iterate('MATCH (n) RETURN n', 'DETACH DELETE n', {})",
    "CALL apoc.cypher.runWrite('CREATE (:X)', {})",
    "CALL `db`.`createLabel`('X')",
    "CALL `db.idx.fulltext.createNodeIndex`('L', 'p')",
    "CALL db . idx . fulltext . drop('L')",
    "CALL/**/db.idx.fulltext.createNodeIndex('L', 'p')",
    "CALL// c\ndb.idx.fulltext.drop('L')",
    "STOP DATABASE neo4j",
    "GRANT ROLE reader TO alice",
    "TERMINATE TRANSACTIONS 'neo4j-transaction-1'",
    "MATCH (n) RETURN n; MATCH (m) DELETE m",
]
ALLOWED = [
    "MATCH (n) RETURN n.set, n.remove, n.create",
    "MATCH (s:Set)-[:DELETE]->(m:Merge) RETURN s",
    "RETURN {remove: 1, create: 2} AS m",
    "MATCH (n) WHERE n.name = 'CREATE (x)' RETURN n // DELETE everything",
    "CALL db.labels() YIELD label RETURN label",
    "CALL { MATCH (n) RETURN n } RETURN n",
    "MATCH (n) CALL (n) { RETURN 1 AS x } RETURN x",
    "OPTIONAL MATCH (n) WITH n UNWIND [1] AS x RETURN x",
]


@pytest.mark.parametrize("query", REFUSED)
def test_write_forms_are_refused(query):
    assert lexical_write(query) is not None


@pytest.mark.parametrize("query", ALLOWED)
def test_reads_pass(query):
    assert lexical_write(query) is None


def test_procedure_names_are_read_as_the_database_resolves_them():
    assert called_procedures("CALL `db`.`idx` . x() YIELD a CALL db.labels()") == ["db.idx.x", "db.labels"]
    assert called_procedures("CALL { RETURN 1 AS a } RETURN a") == []
