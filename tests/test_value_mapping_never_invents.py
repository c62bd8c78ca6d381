"""Value mapping fixes spelling, never identity: IDs and codes are never rewritten, distinct names
are never mapped onto each other, and a record that does not exist stays missing."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.graphdb.value_matching import closest_value
from tests.flow_script import flow_model
from tests.helpers import mapped_values

OK = {"answerable": True}


@pytest.mark.parametrize(
    ("graph", "label", "prop"),
    [
        ("movies", "Person", "name"),
        ("movies", "Movie", "title"),
        ("shop", "Product", "productName"),
        ("shop", "Customer", "companyName"),
        ("shop", "Customer", "contactName"),
    ],
)
def test_no_stored_name_is_mapped_onto_another(movies_db, shop_db, graph, label, prop):
    db = movies_db if graph == "movies" else shop_db
    names = [row[0] for row in db.query(f"MATCH (n:{label}) RETURN DISTINCT n.{prop}", row_cap=None).rows]
    assert len(names) > 5
    wrongly = {name: closest_value(name, [other for other in names if other != name]) for name in names}
    assert {name: other for name, other in wrongly.items() if other is not None} == {}


def test_spelling_is_still_fixed(movies_db, shop_db):
    cypher, mappings = mapped_values(
        movies_db, "MATCH (p:Person {name: 'Keanu Reves'})-[:ACTED_IN]->(m:Movie) WHERE m.title = 'the matrix' RETURN m"
    )
    assert "'Keanu Reeves'" in cypher and "'The Matrix'" in cypher and len(mappings) == 2
    cypher, _ = mapped_values(shop_db, "MATCH (p:Product) WHERE p.productName = 'Smoked Salmn' RETURN p")
    assert "'Smoked Salmon'" in cypher


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (o:Order {orderID: '10240'})-[:ORDERS]->(p:Product) RETURN p.productName",  # 10248 exists
        "MATCH (p:Product) WHERE p.productID = '100' RETURN p.productName",  # 10 exists
        "MATCH (c:Customer) WHERE c.customerID IN ['LARSB'] RETURN c",  # LARSA exists
        "MATCH (p:Person {name: 'Tim Hanks'}) RETURN p",  # another person, perhaps: not Tom Hanks
    ],
)
def test_identifiers_and_other_names_are_never_rewritten(movies_db, shop_db, query):
    db = movies_db if "Person" in query else shop_db
    assert mapped_values(db, query) == (query, [])


def test_a_missing_order_stays_missing_through_the_flow(shop_db):
    asked = (
        "MATCH (o:Order {orderID: '10240'})-[d:ORDERS]->(p:Product) "
        "RETURN p.productName AS product, d.quantity AS quantity"
    )
    assert shop_db.query(asked.replace("10240", "10248")).rows  # the neighbouring order has lines
    model = flow_model(
        GuardrailDecision=[OK], CypherQuery=[{"cypher": asked}], Summary=[{"answer": "No order 10240 was found."}]
    )
    events: list[dict] = []
    flow = Text2CypherFlow("naive", conversation_factory=lambda: model, database=shop_db, checkpointer=None)
    result = flow.ask("What was in order 10240?", on_event=events.append)
    assert result.cypher == asked and result.rows == [] and result.mappings == []
    checked = [e["payload"] for e in events if e["label"] == "Query check"]
    assert all(not c["mappings"] and not c["repairs"] for c in checked)  # nothing rewritten
    assert any("10240" in f for c in checked for f in c["findings"])  # the missing order is said to be missing


def test_every_mapping_is_reported_and_a_run_can_turn_mapping_off(movies_db):
    typo = "MATCH (p:Person {name: 'Keanu Reves'}) RETURN p.born AS born"

    def run(context=None, **options):
        model = flow_model(GuardrailDecision=[OK], CypherQuery=[{"cypher": typo}], Summary=[{"answer": "..."}])
        events: list[dict] = []
        flow = Text2CypherFlow(
            "naive",
            conversation_factory=lambda: model,
            database=movies_db,
            checkpointer=None,
            fewshots=False,
            **options,
        )
        return flow.ask("When was Keanu Reeves born?", on_event=events.append, context=context), events

    mapped, events = run()
    assert mapped.rows == [[1964]] and [(m.given, m.mapped) for m in mapped.mappings] == [
        ("Keanu Reves", "Keanu Reeves")
    ]
    assert [e["payload"]["mappings"][0]["mapped"] for e in events if e["label"] == "Query check"] == ["Keanu Reeves"]
    for off in (run(map_values=False)[0], run(context={"map_values": False})[0]):
        assert off.cypher == typo and off.rows == [] and off.mappings == []


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("Joan Cusack", "John Cusack"),  # a letter replaced: another name
        ("Carl Jensen", "Carla Jensen"),  # a letter added at the end
        ("Paula Smith", "Paul Smith"),  # a letter dropped at the end
        ("hardq", "HARDD"),  # a customer code, lower-cased
        ("bob.smith@acme.com", "bob.smyth@acme.com"),  # an address
        ("Mäller", "Müller"),  # letters of other scripts count as letters
        ("Tim Hanks", "Tom Hanks"),
    ],
)
def test_near_misses_that_are_other_records_are_left_alone(given, stored):
    assert closest_value(given, [stored, "Someone Else"]) is None


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("Keanu Reves", "Keanu Reeves"),
        ("the matrx", "The Matrix"),
        ("Tom Hnaks", "Tom Hanks"),
        ("sci fi", "Sci-Fi"),
        ("larsa", "LARSA"),
        ("zoë", "Zoë"),
    ],
)
def test_typos_and_spelling_still_find_the_stored_value(given, stored):
    assert closest_value(given, [stored, "Someone Else"]) == stored
