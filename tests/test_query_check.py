"""The schema check of a query before it runs: what it repairs, what it finds, and what it cannot claim.

Each repair is judged by what the repaired query returns on the real graph: the rows the right query
returns. The queries are the mistakes models make (`nodes.evaluation.faults`), on two graphs with
different labels (movies, shop).
"""

from __future__ import annotations

import pytest

from reflexion_agents.nodes.evaluation.faults import FAULTS, MODEL_FAULTS
from reflexion_agents.nodes.graphdb.cypher_patterns import read_query
from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
from reflexion_agents.nodes.graphdb.query_check import QueryChecker
from reflexion_agents.schemas.errors import QueryTimeoutError

KEANU = "MATCH (p:Person {name: 'Keanu Reeves'})-[r:ACTED_IN]->(m:Movie) RETURN m.title AS title, r.roles AS roles"
SHOP_SUPPLIERS = (
    "MATCH (s:Supplier)-[:SUPPLIES]->(p:Product)-[:PART_OF]->(c:Category {categoryName: 'Seafood'}) "
    "RETURN s.companyName AS supplier, p.productName AS product"
)


@pytest.fixture(scope="module")
def movies_check(movies_db):
    return QueryChecker(GraphFacts(movies_db, movies_db.schema()))


@pytest.fixture(scope="module")
def shop_check(shop_db):
    return QueryChecker(GraphFacts(shop_db, shop_db.schema()))


def rows(db, query):
    return sorted(map(str, db.query(query, row_cap=None).rows))


@pytest.mark.parametrize("fault", ["relationship_direction", "label_case", "property_case", "value_casing"])
@pytest.mark.parametrize("graph", ["movies", "shop"])
def test_a_certain_mistake_is_repaired_into_the_right_query(graph, fault, movies_db, shop_db, movies_check, shop_check):
    db, check, right = (movies_db, movies_check, KEANU) if graph == "movies" else (shop_db, shop_check, SHOP_SUPPLIERS)
    wrong = FAULTS[fault](right)
    assert wrong and wrong != right and rows(db, wrong) != rows(db, right)  # the mistake changes the answer
    checked = check.check(wrong)
    assert checked.repairs and not checked.blocking and checked.verified
    assert rows(db, checked.query) == rows(db, right) and checked.written == wrong


def test_every_repair_is_said_in_words_with_what_the_graph_has(movies_check):
    checked = movies_check.check(
        "MATCH (p:person {name: 'keanu reeves'})<-[:acted_in]-(m:Movie) WHERE m.Released > 1990 RETURN m.title"
    )
    said = " ".join(checked.repairs)
    assert "person is Person" in said and "acted_in is ACTED_IN" in said and "Released" in said
    assert "(:Person)-[:ACTED_IN]->(:Movie)" in said and '"keanu reeves" is stored as "Keanu Reeves"' in said
    assert checked.query == (
        "MATCH (p:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m:Movie) WHERE m.released > 1990 RETURN m.title"
    )
    assert checked.mappings[0].mapped == "Keanu Reeves"


def test_an_invented_property_is_found_with_the_properties_the_label_has(movies_check):
    checked = movies_check.check(FAULTS["invented_property"](KEANU) or "")
    assert checked.blocking and not checked.verified and not checked.repairs
    (finding,) = checked.findings
    assert "Movie has no property name" in finding and "released, tagline, title" in finding


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("MATCH (f:Film) RETURN f.title", "no label Film; its labels are: Movie, Person"),
        ("MATCH (p:Person)-[:REVIEWED]->(q:Person) RETURN p", "no :REVIEWED relationship joins :Person and :Person"),
        ("MATCH (p:Person)-[:LIKES]->(m:Movie) RETURN p", "no relationship type LIKES"),
    ],
)
def test_what_the_graph_lacks_is_found_and_blocks(movies_check, query, said):
    checked = movies_check.check(query)
    assert checked.blocking and any(said in f for f in checked.findings), checked.findings
    assert checked.query == query  # nothing certain to repair


def test_a_value_stored_in_no_form_is_a_fact_not_a_mistake(movies_check):
    checked = movies_check.check("MATCH (m:Movie {title: 'Inception'})<-[:DIRECTED]-(p:Person) RETURN p.name")
    assert not checked.blocking and checked.verified and checked.query == checked.written
    assert checked.findings == ['no Movie has title "Inception" (nor a close value)']


def test_text_tests_are_looked_up_in_any_case_and_the_other_case_is_told(movies_check):
    checked = movies_check.check("MATCH (m:Movie) WHERE m.tagline CONTAINS 'real world' RETURN m.title")
    assert checked.query == checked.written and checked.blocking  # whether case matters is the question's
    assert checked.findings == ['Movie.tagline holds "Real World" in another case than the query\'s "real world"']
    absent = movies_check.check("MATCH (m:Movie) WHERE m.title STARTS WITH 'Zzz' RETURN m.title")
    assert absent.verified and not absent.blocking and "in any case" in absent.findings[0]


def test_a_number_written_as_text_and_text_written_as_a_number_are_repaired(movies_db, shop_db, shop_check):
    movies = QueryChecker(GraphFacts(movies_db, movies_db.schema()))
    assert movies.check("MATCH (m:Movie) WHERE m.released = '1999' RETURN m.title").query.endswith(
        "= 1999 RETURN m.title"
    )
    # the shop stores its identifiers as text, as Neo4j's import scripts leave them
    checked = shop_check.check("MATCH (p:Product {productID: 42}) RETURN p.productName")
    assert "productID: '42'" in checked.query and shop_db.query(checked.query).rows == [["Tofu"]]


def test_a_relationship_that_joins_a_label_to_itself_is_never_turned_round(movies_check, shop_check):
    for check, query in (
        (movies_check, "MATCH (p:Person)<-[:FOLLOWS]-(k:Person {name: 'Keanu Reeves'}) RETURN p.name"),
        (shop_check, "MATCH (:Customer {companyName: 'Hardy Deli'})<-[:REFERRED]-(c:Customer) RETURN c.companyName"),
    ):
        checked = check.check(query)
        assert checked.query == query and not checked.findings and checked.verified  # either way exists


def test_with_repairs_off_the_same_mistakes_are_only_found(movies_db):
    facts = GraphFacts(movies_db, movies_db.schema())
    wrong = "MATCH (p:person {name: 'keanu reeves'})<-[:ACTED_IN]-(m:Movie) RETURN m.Title"
    checked = QueryChecker(facts, repair=False, map_values=False).check(wrong)
    assert checked.query == wrong and checked.blocking and not checked.repairs and len(checked.findings) == 4
    values_only = QueryChecker(facts, repair=False).check(wrong)
    assert values_only.query == wrong.replace("keanu reeves", "Keanu Reeves")


def test_names_in_strings_and_comments_are_not_read():
    query = read_query("MATCH (m:Movie) WHERE m.title = '(:Fake)-[:NOPE]->(x)' // (:Other {a: 1})\nRETURN m.title")
    assert [n.labels[0].text for n in query.nodes] == ["Movie"] and not query.relationships
    assert [(f.prop.text, f.literal.value) for f in query.filters] == [("title", "(:Fake)-[:NOPE]->(x)")]


def test_what_cannot_be_read_or_looked_up_is_never_claimed(movies_db):
    class SlowLookups:
        dialect = "falkordb"

        def query(self, cypher, *args, **kwargs):
            if "LIMIT 1" in cypher or "DISTINCT" in cypher:
                raise QueryTimeoutError("Query timed out", cypher)
            return movies_db.query(cypher, *args, **kwargs)

    check = QueryChecker(GraphFacts(SlowLookups(), movies_db.schema()))
    checked = check.check("MATCH (m:Movie {title: 'Zzz'}) RETURN m.title")
    assert not checked.verified and not checked.findings and checked.query == checked.written
    unread = QueryChecker(GraphFacts(movies_db, movies_db.schema())).check("MATCH (m:`Movie`) RETURN m.title")
    assert not unread.verified and not unread.blocking


@pytest.mark.parametrize("fault", MODEL_FAULTS)
def test_the_check_of_a_long_hostile_query_stays_quick_and_never_raises(movies_check, fault):
    long = " UNION ALL ".join(f"MATCH (p:Person {{name: 'Keanu Reeves {i}'}}) RETURN p.name AS n" for i in range(60))
    checked = movies_check.check(FAULTS[fault](long) or long)
    assert checked.findings or checked.repairs  # no such people: each is found absent (or repaired)


def test_the_check_asks_neo4j_through_its_adapter_and_repairs_the_same():
    """Neo4j's adapter (EXPLAIN gate, READ sessions) answers the check's look-ups; a stand-in driver
    returns the neo4j package's own records, as a server with the movies graph would."""
    from reflexion_agents.nodes.graphdb import Neo4jGraph
    from reflexion_agents.schemas.graphdb import GraphSchema, NodeLabelInfo, PropertyInfo, RelationshipInfo
    from tests.neo4j_fakes import FakeDriver, FakeResult

    class MoviesServer(FakeDriver):
        def run(self, query, params=None):
            text = query.text if hasattr(query, "text") else query
            if text.startswith("EXPLAIN"):
                return super().run(query, params)
            self.queries.append(query)
            if "db.propertyKeys" in text:
                return FakeResult(["propertyKey"], [["name"], ["title"], ["released"]], "r")
            if "RETURN DISTINCT" in text:
                return FakeResult(["x.`name`"], [["Tom Hanks"], ["Meg Ryan"]], "r")
            return FakeResult(["1"], [], "r")  # nothing else is there: no Movie acts in a Person

    schema = GraphSchema(
        nodes=[
            NodeLabelInfo(label="Person", properties=[PropertyInfo(name="name", types=["STRING"])]),
            NodeLabelInfo(label="Movie", properties=[PropertyInfo(name="title", types=["STRING"])]),
        ],
        relationships=[RelationshipInfo(type="ACTED_IN", patterns=[("Person", "Movie")])],
        dialect="neo4j",
    )
    driver = MoviesServer()
    checker = QueryChecker(GraphFacts(Neo4jGraph(driver=driver, db_name="movies"), schema))
    checked = checker.check("MATCH (m:movie)-[:ACTED_IN]->(p:Person {name: 'tom hanks'}) RETURN m.Title")
    assert checked.query == "MATCH (m:Movie)<-[:ACTED_IN]-(p:Person {name: 'Tom Hanks'}) RETURN m.title"
    assert len(checked.repairs) == 4 and checked.verified
    looked_up = [q.text for q in driver.queries if not q.text.startswith("EXPLAIN")]
    assert any("(:`Movie`)-[:`ACTED_IN`]->(:`Person`)" in q for q in looked_up)  # the way written: not there
    assert all(s["default_access_mode"] == "READ" for s in driver.sessions)


@pytest.mark.parametrize(
    "query",
    [
        # a variable bound again, or in another UNION branch, keeps none of its old labels
        "MATCH (m:Movie {title: 'That Thing You Do'})<-[:DIRECTED]-(d) WITH d AS m MATCH (m)-[:ACTED_IN]->(o) "
        "RETURN o.title",
        "MATCH (p:Movie) RETURN p.title AS x UNION MATCH (p)-[:ACTED_IN]->(m) WHERE m.title = 'The Matrix' "
        "RETURN p.name AS x",
        # a negated label test says what the variable is not
        "MATCH (n)-[:ACTED_IN]->(m) WHERE NOT n:Movie AND m.title = 'The Matrix' RETURN n.name",
    ],
)
def test_a_right_query_whose_variables_change_meaning_is_left_as_written(movies_db, movies_check, query):
    right = rows(movies_db, query)
    checked = movies_check.check(query)
    assert right and checked.query == query and not checked.blocking  # nothing "repaired" into no rows


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (p:Person)<-[:ACTED_IN|DIRECTED]-(m:Movie) RETURN p.name",  # several types
        "MATCH (p:Person)<-[:ACTED_IN*1..1]-(m:Movie) RETURN p.name",  # a path
        "MATCH (p:Person)<--(m:Movie) RETURN p.name",  # no type
        "MATCH (n) WHERE n.titel = 'The Matrix' RETURN n",  # a property of a node whose label is not known
        "MATCH (m:Movie) WHERE toLower(m.title) = 'The Matrix' RETURN m",  # a value compared in another form
        "MATCH (m:Movie) WITH m.title AS t WHERE t = 'the matrix' RETURN t",
        "MATCH (p:Person)-[r]->(m:Movie) WHERE r.summary = 'x' RETURN m",  # a relationship of no known type
        "MATCH (m:Movie {title: 'The Matrix'}) RETURN m {.Released}",  # a map projection
        "MATCH (m:movie WHERE m.released > 1990) RETURN m",  # Neo4j 5 patterns
    ],
)
def test_no_rows_from_what_the_check_did_not_look_up_are_never_claimed_to_rest_on_the_graph(movies_check, query):
    assert not movies_check.check(query).verified


def test_a_relationships_values_are_looked_up_like_a_nodes(movies_db, movies_check):
    checked = movies_check.check(
        "MATCH (:Person)-[r:REVIEWED]->(m:Movie) WHERE r.summary = 'you had me at jerry' RETURN m"
    )
    assert "'You had me at Jerry'" in checked.query and checked.verified and movies_db.query(checked.query).rows
    inline = movies_check.check("MATCH (:Person)-[:REVIEWED {rating: '92'}]->(m:Movie) RETURN m.title")
    assert "{rating: 92}" in inline.query and movies_db.query(inline.query).rows == [["Jerry Maguire"]]


def test_literals_are_read_as_cypher_reads_them_and_lists_are_not_taken_for_values(movies_db):
    scratch = movies_db.sibling("scratch_literals")
    scratch.write("CREATE (:Item {note: 'x\\ny', tags: ['red', 'blue'], flag: true})")
    try:
        check = QueryChecker(GraphFacts(scratch, scratch.schema()))
        stored = check.check("MATCH (i:Item {note: 'x\\ny'}) RETURN i.note")
        assert stored.verified and not stored.findings  # a new line, as the database reads it
        listed = check.check("MATCH (i:Item) WHERE i.tags = 'red' RETURN i")
        assert not listed.findings and not listed.verified  # a list property is not looked up as a value
        flag = check.check("MATCH (i:Item) WHERE i.flag = 'true' RETURN i.note")
        assert flag.query.endswith("i.flag = true RETURN i.note") and scratch.query(flag.query).rows
    finally:
        scratch.clear()


def test_values_in_several_cases_block_but_never_say_the_graph_lacks_them(movies_db):
    scratch = movies_db.sibling("scratch_cases")
    scratch.write("CREATE (:Film {title: 'The Matrix'}), (:Film {title: 'THE MATRIX'})")
    try:
        checked = QueryChecker(GraphFacts(scratch, scratch.schema())).check(
            "MATCH (f:Film {title: 'the matrix'}) RETURN f"
        )
        assert checked.blocking and not checked.missing and checked.query == checked.written
        assert '"THE MATRIX", "The Matrix"' in checked.findings[0]
    finally:
        scratch.clear()


def test_text_compared_by_order_with_numbers_is_written_as_a_number(movies_db, movies_check):
    checked = movies_check.check("MATCH (m:Movie) WHERE m.released > '2005' RETURN m.title")
    assert checked.query.endswith("m.released > 2005 RETURN m.title") and movies_db.query(checked.query).rows


def test_a_query_comparing_many_values_is_looked_up_within_a_bound(movies_db):
    class Counting:
        dialect = "falkordb"
        queries = 0

        def query(self, *args, **kwargs):
            Counting.queries += 1
            return movies_db.query(*args, **kwargs)

    names = ", ".join(f"'Nobody {i}'" for i in range(300))
    checked = QueryChecker(GraphFacts(Counting(), movies_db.schema())).check(
        f"MATCH (p:Person) WHERE p.name IN [{names}] RETURN p"
    )
    assert not checked.verified and Counting.queries <= 2 * 25 + 2  # each value: is it stored; distinct values once
