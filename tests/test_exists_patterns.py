"""Neo4j 5's `EXISTS { pattern }` runs on FalkorDB as the pattern predicate it means
(nodes/graphdb/exists_patterns.py): the rewrite itself, and gold queries of the public movies
question set answered as an independent formulation answers them."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.graphdb.exists_patterns import exists_as_patterns


@pytest.mark.unit
@pytest.mark.parametrize(
    "written, sent",
    [
        (
            "MATCH (p:Person) WHERE p.born = 1949 AND exists{ (p)-[:DIRECTED]->(:Movie) } RETURN p",
            "MATCH (p:Person) WHERE p.born = 1949 AND ((p)-[:DIRECTED]->(:Movie)) RETURN p",
        ),
        (
            "MATCH (p:Person {name: 'Joel Silver'}) WHERE NOT EXISTS {(p)-[:REVIEWED {summary: 'x'}]->()} RETURN p",
            "MATCH (p:Person {name: 'Joel Silver'}) WHERE NOT ((p)-[:REVIEWED {summary: 'x'}]->()) RETURN p",
        ),
        (  # twice, the second after a WITH's own WHERE
            "MATCH (m) WHERE exists { (m)<--() } WITH m WHERE EXISTS { (m)-->() } RETURN m",
            "MATCH (m) WHERE ((m)<--()) WITH m WHERE ((m)-->()) RETURN m",
        ),
    ],
)
def test_one_pattern_in_a_where_clause_is_sent_as_its_pattern_predicate(written, sent):
    assert exists_as_patterns(written) == sent


@pytest.mark.unit
@pytest.mark.parametrize(
    "kept",
    [
        "MATCH (m:Movie) WHERE EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating > 75 } RETURN m",  # its own WHERE
        "MATCH (m:Movie) WHERE EXISTS { MATCH (m)<-[:REVIEWED]-() } RETURN m",  # its own MATCH
        "MATCH (a), (b) WHERE EXISTS { (a)-->(c), (c)-->(b) } RETURN a",  # two patterns, matched together
        "MATCH (m:Movie) RETURN m.title, EXISTS { (m)<-[:REVIEWED]-() } AS reviewed",  # a value, not a WHERE
        "MATCH (m:Movie) WHERE m.title = 'EXISTS { (m)-->() }' RETURN m",  # words in a string
        "MATCH (m:Movie) WHERE COUNT { (m)<-[:ACTED_IN]-() } > 3 RETURN m",  # COUNT {} is another matter
        "MATCH (m:Movie) WHERE EXISTS { (m)<-[:REVIEWED]-() RETURN m",  # never closed: FalkorDB says so
    ],
)
def test_anything_else_is_sent_as_written(kept):
    assert exists_as_patterns(kept) == kept


#: Gold queries of the movies question set (the first without its ORDER BY and LIMIT, whose ties make
#: the three rows it keeps a matter of order), each beside the same question asked with a CALL
#: subquery that counts the pattern's matches, which FalkorDB runs natively.
AS_SUBQUERIES = [
    (
        "MATCH (p:Person)-[:ACTED_IN]->(:Movie) WHERE exists{ (p)-[:DIRECTED]->(:Movie) } RETURN p.name",
        "MATCH (p:Person)-[:ACTED_IN]->(:Movie) CALL { WITH p MATCH (p)-[:DIRECTED]->(:Movie) RETURN count(*) AS n } "
        "WITH p, n WHERE n > 0 RETURN p.name",
    ),
    (
        "MATCH (p:Person) WHERE p.born = 1949 AND exists{ (p)-[:DIRECTED]->(:Movie) } RETURN p.name",
        "MATCH (p:Person) WHERE p.born = 1949 CALL { WITH p MATCH (p)-[:DIRECTED]->(:Movie) RETURN count(*) AS n } "
        "WITH p, n WHERE n > 0 RETURN p.name",
    ),
    (
        "MATCH (p:Person)-[:ACTED_IN]->(m:Movie)<-[:DIRECTED]-(p) WHERE NOT exists{ (p)-[:PRODUCED]->(m) } "
        "RETURN p.name AS person, m.title AS movie",
        "MATCH (p:Person)-[:ACTED_IN]->(m:Movie)<-[:DIRECTED]-(p) CALL { WITH p, m MATCH (p)-[:PRODUCED]->(m) "
        "RETURN count(*) AS n } WITH p, m, n WHERE n = 0 RETURN p.name AS person, m.title AS movie",
    ),
]


@pytest.mark.parametrize("gold, counted", AS_SUBQUERIES)
def test_gold_queries_with_exists_answer_as_a_counting_subquery_does(movies_db, gold, counted):
    answered = sorted(movies_db.query(gold).rows)
    assert answered and answered == sorted(movies_db.query(counted).rows)
    movies_db.validate(gold)  # the check before a run takes it too
