"""Neo4j's `EXISTS {}` and `COUNT {}` subqueries (and Neo4j 4's pattern expressions) run on FalkorDB
as what they mean (nodes/graphdb/exists_patterns.py): the rewrites themselves, and gold queries of
the public movies question set answered as an independent formulation answers them."""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.graphdb.exists_patterns import exists_as_patterns, neo4j_subqueries
from reflexion_agents.nodes.graphdb.neo4j_dialect import falkordb_dialect


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


@pytest.mark.unit
@pytest.mark.parametrize(
    "written, sent",
    [
        (  # a subquery with its own WHERE, computed before the WHERE it stands in
            "MATCH (m:Movie) WHERE m.released > 2000 AND EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating > 80 } "
            "RETURN m.title",
            "MATCH (m:Movie) WITH *, size([(m)<-[r:REVIEWED]-() WHERE r.rating > 80 | 1]) > 0 AS __subquery_0 "
            "WHERE m.released > 2000 AND __subquery_0 RETURN m.title",
        ),
        (  # COUNT {} in a projection, written in place; a leading MATCH is the same subquery
            "MATCH (m:Movie) RETURN m.title, COUNT { MATCH (m)<-[:ACTED_IN]-() } AS actors",
            "MATCH (m:Movie) RETURN m.title, (size([(m)<-[:ACTED_IN]-() | 1])) AS actors",
        ),
        (  # a pattern with no bracket at all
            "MATCH (p:Person) RETURN p.name, size((p)-->()) AS degree",
            "MATCH (p:Person) RETURN p.name, size([(p)-->() | 1]) AS degree",
        ),
        (  # Neo4j 4's size(pattern), its variables bound, then moved out of the WHERE
            "MATCH (p:Person) WHERE size((p)-[:FOLLOWS]->()) > 5 RETURN p.name",
            "MATCH (p:Person) WITH *, [(p)-[:FOLLOWS]->() | 1] AS __subquery_0 WHERE size(__subquery_0) > 5 "
            "RETURN p.name",
        ),
    ],
)
def test_subqueries_are_sent_as_the_pattern_comprehensions_they_count(written, sent):
    assert neo4j_subqueries(written) == sent


@pytest.mark.unit
@pytest.mark.parametrize(
    "kept",
    [
        "OPTIONAL MATCH (m:Movie) WHERE COUNT { (m)<--() } > 1 RETURN m",  # its WHERE decides what matches
        "MATCH (m:Movie) WHERE EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating > 1 } RETURN *",  # * would show it
        "MATCH (m) WHERE EXISTS { (p)-[:ACTED_IN]->(m) (p)-[:DIRECTED]->(m) } RETURN m",  # two patterns
        "MATCH (m:Movie) WHERE size((p)-[:ACTED_IN]->(m)) > 5 RETURN m",  # p unbound: Neo4j refuses it too
        "MATCH (m) WHERE [x IN m.tags WHERE EXISTS { (m)-->() WHERE x > 1 }] RETURN m",  # a comprehension's own
        "MATCH (m:Movie) WITH m ORDER BY m.title LIMIT 3 WHERE COUNT { (m)--() } > 1 RETURN m",
    ],
)
def test_subqueries_without_an_exact_rewrite_are_sent_as_written(kept):
    assert neo4j_subqueries(kept) == kept


#: Gold queries of the movies question set (`EXISTS` with its own WHERE, Neo4j 4's `size(pattern)`,
#: a pattern comprehension in a WHERE) and a `COUNT {}` in the same style, each beside the question
#: asked with a CALL subquery counting the pattern's matches.
COUNTED = [
    (
        "MATCH (m:Movie) WHERE m.released > 2000 AND exists { (m)<-[r:REVIEWED]-() WHERE r.rating > 70 } "
        "RETURN m.title",
        "MATCH (m:Movie) WHERE m.released > 2000 CALL { WITH m MATCH (m)<-[r:REVIEWED]-() WHERE r.rating > 70 "
        "RETURN count(*) AS n } WITH m, n WHERE n > 0 RETURN m.title",
    ),
    (
        "MATCH (m:Movie)<-[ai:ACTED_IN]-(p:Person) WHERE EXISTS { (m)<-[ai2:ACTED_IN]-(p2:Person) "
        "WHERE size(ai2.roles) > 1 } RETURN m.title AS movie, count(p) AS actors",
        "MATCH (m:Movie)<-[ai:ACTED_IN]-(p:Person) CALL { WITH m MATCH (m)<-[ai2:ACTED_IN]-(p2:Person) "
        "WHERE size(ai2.roles) > 1 RETURN count(*) AS n } WITH m, p, n WHERE n > 0 "
        "RETURN m.title AS movie, count(p) AS actors",
    ),
    (
        "MATCH (p:Person) WHERE size((p)-[:ACTED_IN]->()) > 5 RETURN p.name",
        "MATCH (p:Person) CALL { WITH p MATCH (p)-[:ACTED_IN]->() RETURN count(*) AS n } WITH p, n WHERE n > 5 "
        "RETURN p.name",
    ),
    (
        "MATCH (m:Movie) WHERE size([(p)-[:REVIEWED]->(m) | p]) > 1 RETURN m.title",
        "MATCH (m:Movie) CALL { WITH m MATCH (p)-[:REVIEWED]->(m) RETURN count(*) AS n } WITH m, n WHERE n > 1 "
        "RETURN m.title",
    ),
    (
        "MATCH (p:Person)-[:DIRECTED]->(m:Movie) RETURN p.name, m.title, COUNT { (m)<-[:ACTED_IN]-() } AS cast",
        "MATCH (p:Person)-[:DIRECTED]->(m:Movie) CALL { WITH m MATCH (m)<-[:ACTED_IN]-() RETURN count(*) AS n } "
        "RETURN p.name, m.title, n AS cast",
    ),
]


@pytest.mark.parametrize("gold, counted", COUNTED)
def test_subqueries_answer_as_a_counting_subquery_does(movies_db, gold, counted):
    answered = sorted(movies_db.query(gold).rows)
    assert answered and answered == sorted(movies_db.query(counted).rows)
    movies_db.validate(gold)


@pytest.mark.unit
@pytest.mark.parametrize(
    "written, sent",
    [
        ("RETURN datetime() AS now", "RETURN localdatetime() AS now"),
        (
            "MATCH (s) WHERE s.at > datetime('2019-03-07T09:30') RETURN s",
            "MATCH (s) WHERE s.at > localdatetime('2019-03-07T09:30') RETURN s",
        ),
        ("RETURN datetime({year: 2019, month: 3}) AS d", "RETURN localdatetime({year: 2019, month: 3}) AS d"),
        ("RETURN datetime('2019-03-07') AS d", "RETURN localdatetime('2019-03-07') AS d"),  # "-07" is the day
        ("RETURN datetime('2019-03-07T09:30+02:00') AS d", None),  # an offset: another instant in FalkorDB's words
        ("RETURN datetime({year: 2019, timezone: 'Europe/Paris'}) AS d", None),
        ("RETURN datetime.truncate('day', x), n.datetime, 'datetime()' AS d", None),
    ],
)
def test_datetimes_in_utc_are_sent_as_falkordbs_localdatetime(written, sent):
    assert falkordb_dialect(written) == (written if sent is None else sent)


@pytest.mark.unit
def test_a_subquery_over_a_variable_bound_inside_the_where_is_never_moved_out_of_its_scope():
    """Moved before the WHERE, `m` of the reduce or the comprehension would name nothing, and the count
    would run over the whole graph: such a subquery is left for FalkorDB to refuse."""
    for written in (
        "MATCH (p:Person) WHERE reduce(s = 0, m IN [(p)-[:ACTED_IN]->(x) | x] | s + COUNT { (m)<-[:DIRECTED]-() }) > 3 "
        "RETURN count(p) AS n",
        "MATCH (p:Person) WHERE any(m IN [1] WHERE COUNT { (p)-[:ACTED_IN]->() } > m) RETURN p",
    ):
        assert "COUNT {" in neo4j_subqueries(written)
    returns_all = "MATCH (m:Movie) WHERE EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating > 75 } RETURN *, m.title AS t"
    assert neo4j_subqueries(returns_all) == returns_all  # `*` would return the computed column too


def test_moved_subqueries_keep_the_users_names_and_read_past_properties_named_like_clauses(movies_db):
    own_name = (
        "MATCH (m:Movie) WITH m, 1 AS __subquery_0 WHERE EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating > 75 } "
        "RETURN collect(DISTINCT __subquery_0) AS c"
    )
    assert movies_db.query(own_name).rows == [[[1]]]
    order = (
        "MATCH (m:Movie) WHERE m.order IS NULL AND EXISTS { (m)<-[r:REVIEWED]-() WHERE r.rating > 75 } RETURN m.title"
    )
    counted = (
        "MATCH (m:Movie) WHERE m.order IS NULL CALL { WITH m MATCH (m)<-[r:REVIEWED]-() WHERE r.rating > 75 "
        "RETURN count(*) AS n } WITH m, n WHERE n > 0 RETURN m.title"
    )
    assert sorted(movies_db.query(order).rows) == sorted(movies_db.query(counted).rows) != []
