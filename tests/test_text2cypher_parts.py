"""The flows' parts on their own: value mapping, schema pruning, the few-shot store."""

from __future__ import annotations

import hashlib
import uuid

import pytest

from reflexion_agents.nodes.common.schema_text import schema_text
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.graphdb.cypher_patterns import read_query
from reflexion_agents.nodes.graphdb.value_matching import closest_value
from reflexion_agents.nodes.text2cypher.fewshots import SEED_EXAMPLES, FewShotStore, question_key
from reflexion_agents.nodes.text2cypher.schema_pruning import prune_schema
from reflexion_agents.schemas.graphdb import GraphSchema, NodeLabelInfo, PropertyInfo, RelationshipInfo
from tests.helpers import PortableGraph, mapped_values


def test_literals_compared_with_node_properties_are_found():
    cypher = (
        "MATCH (p:Person {name: 'tom hanks'})-[:ACTED_IN]->(m:Movie) "
        "WHERE m.title = \"cast away\" OR 'x' = p.name OR m.title IN ['big', 'Big'] RETURN m"
    )
    query = read_query(cypher)
    labels = query.node_labels()
    found = [
        (next(iter(f.labels or labels[f.var or ""])), f.prop.text, cypher[f.literal.span[0] : f.literal.span[1]])
        for f in sorted(query.filters, key=lambda f: f.literal.span)
    ]
    assert found == [
        ("Person", "name", "'tom hanks'"),
        ("Movie", "title", '"cast away"'),
        ("Person", "name", "'x'"),
        ("Movie", "title", "'big'"),
        ("Movie", "title", "'Big'"),
    ]


@pytest.mark.parametrize(
    ("given", "expected"),
    [("sci-fi", "Sci-Fi"), ("SCI FI", "Sci-Fi"), ("Keanu Reves", "Keanu Reeves"), ("Documentary", None)],
)
def test_the_closest_stored_value_is_found_by_case_punctuation_or_spelling(given, expected):
    assert closest_value(given, ["Sci-Fi", "Keanu Reeves", "Drama"]) == expected


def test_the_mapper_leaves_stored_values_and_unknown_properties_alone(movies_db):
    same = "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p"
    assert mapped_values(movies_db, same) == (same, [])
    unknown = "MATCH (p:Person {nickname: 'hanksy'}) RETURN p"
    assert mapped_values(movies_db, unknown) == (unknown, [])
    cypher, mappings = mapped_values(
        movies_db, "MATCH (p:Person {name: 'Keanu Reves'}) RETURN p.born, 'Keanu Reves' AS asked"
    )
    assert (
        cypher == "MATCH (p:Person {name: 'Keanu Reeves'}) RETURN p.born, 'Keanu Reves' AS asked"
    )  # only where compared
    assert [(m.given, m.mapped) for m in mappings] == [("Keanu Reves", "Keanu Reeves")]


def big_schema(labels: int) -> GraphSchema:
    nodes = [
        NodeLabelInfo(
            label=f"Entity{i}", properties=[PropertyInfo(name=f"field{i}", types=["STRING"], examples=[f"value {i}"])]
        )
        for i in range(labels)
    ]
    nodes.append(
        NodeLabelInfo(label="Movie", properties=[PropertyInfo(name="title", types=["STRING"], examples=["The Matrix"])])
    )
    nodes.append(
        NodeLabelInfo(label="Person", properties=[PropertyInfo(name="name", types=["STRING"], examples=["Tom Hanks"])])
    )
    rels = [RelationshipInfo(type="ACTED_IN", patterns=[("Person", "Movie")])]
    rels += [
        RelationshipInfo(type=f"LINKS_{i}", patterns=[(f"Entity{i}", f"Entity{(i + 1) % labels}")])
        for i in range(labels)
    ]
    return GraphSchema(nodes=nodes, relationships=rels)


def test_a_schema_too_big_for_the_prompt_is_pruned_to_what_the_question_needs():
    schema = big_schema(400)
    assert len(schema_text(schema)) > 30_000
    pruned = prune_schema(schema, "Which movies did Tom Hanks act in?", max_chars=2000)
    assert {n.label for n in pruned.nodes} == {"Movie", "Person"}
    assert [(r.type, r.patterns) for r in pruned.relationships] == [("ACTED_IN", [("Person", "Movie")])]
    small = big_schema(2)
    assert prune_schema(small, "anything", max_chars=6000) == small  # a small schema is kept whole


def test_a_relationship_without_sampled_endpoints_survives_pruning_and_reaches_the_guardrail():
    from reflexion_agents.nodes.prompts.text2cypher import domain_text

    schema = big_schema(400)
    schema = schema.model_copy(
        update={"relationships": [*schema.relationships, RelationshipInfo(type="RARE_LINK", patterns=[])]}
    )
    pruned = prune_schema(schema, "Which movies did Tom Hanks act in?", max_chars=2000)
    assert "RARE_LINK" in schema_text(pruned) and "(:?)-[:RARE_LINK]->(:?)" in domain_text(pruned)


@pytest.fixture
def store(movies_db: FalkorDBGraph):
    examples = FewShotStore(movies_db, name=f"examples_{uuid.uuid4().hex[:8]}")
    yield examples
    examples.db.clear()


def test_examples_are_seeded_from_a_file_found_by_full_text_and_never_stored_twice(store):
    added = store.seed_from_csv(SEED_EXAMPLES)
    assert added == store.count() > 40
    assert store.seed_from_csv(SEED_EXAMPLES) == 0  # the same questions again add nothing
    assert not store.add("which movies were released in 2003", "MATCH (m) RETURN m")  # same question, other spelling
    found = store.search("Movies released in the year 2003?", 3)
    assert found[0].question == "Which movies were released in 2003?" and found[0].source == "seed"
    assert store.search("the of and", 3) == []  # stop words alone match nothing
    assert question_key("Who  directed 'The Matrix'?") == "who directed the matrix"


def toy_embedding(text: str) -> list[float]:
    """A deterministic bag-of-words vector: enough to exercise the vector index without a model."""
    vector = [0.0] * 32
    for word in text.lower().replace("?", "").split():
        vector[int(hashlib.md5(word.encode()).hexdigest(), 16) % 32] += 1.0
    return vector


def test_with_embeddings_examples_are_found_through_the_vector_index(movies_db):
    store = FewShotStore(movies_db, embed=toy_embedding, name=f"vectors_{uuid.uuid4().hex[:8]}")
    try:
        store.add("Who directed The Matrix?", "MATCH (p)-[:DIRECTED]->(m {title: 'The Matrix'}) RETURN p.name")
        store.add("Which movies did Tom Hanks act in?", "MATCH ... RETURN m.title")
        indexes = store.db.query("CALL db.indexes() YIELD label, types RETURN label, types").rows
        assert indexes[0][1]["embedding"] == ["VECTOR"]
        assert [e.question for e in store.search("who directed the matrix reloaded", 1)] == ["Who directed The Matrix?"]
    finally:
        store.db.clear()


def test_on_other_backends_examples_are_ranked_by_shared_words(movies_db):
    scratch = movies_db.sibling(f"portable_{uuid.uuid4().hex[:8]}")
    store = FewShotStore(PortableGraph(scratch))
    try:
        assert not store.native
        store.add("Who directed The Matrix?", "MATCH 1")
        store.add("Which movies did Tom Hanks act in?", "MATCH 2")
        assert [e.cypher for e in store.search("Tom Hanks movies", 2)] == ["MATCH 2"]
    finally:
        scratch.clear()


def test_the_check_looks_each_literal_up_once(movies_db):
    class Counting:
        dialect = "falkordb"

        def __init__(self):
            self.queries = 0

        def query(self, *args, **kwargs):
            self.queries += 1
            return movies_db.query(*args, **kwargs)

    from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
    from reflexion_agents.nodes.graphdb.query_check import QueryChecker

    db = Counting()
    checker = QueryChecker(GraphFacts(db, movies_db.schema()))
    first = checker.check("MATCH (p:Person {name: 'keanu reeves'}) RETURN p.born")
    queries = db.queries
    assert checker.check("MATCH (p:Person {name: 'keanu reeves'}) RETURN p.name").mappings == first.mappings
    assert first.mappings and queries == 2 and db.queries == queries  # the correction's literals cost nothing more


def flow_context(db, *, corrects: bool, evaluates: bool, model=None, store=None, max_llm_calls: int = 12):
    """A FlowContext by hand, with every field given, as `Text2CypherFlow._make_context` gives them."""
    from reflexion_agents.nodes.text2cypher.context import FlowContext
    from tests.flow_script import flow_model

    return FlowContext(
        model=model or flow_model(),
        db=db,
        store=store,
        examples_on_graph=True,
        corrects=corrects,
        evaluates=evaluates,
        max_retries=3,
        max_llm_calls=max_llm_calls,
        row_cap=100,
        query_timeout=10.0,
        few_shot_k=5,
        schema_chars=6000,
        learn=True,
        require_approval=False,
        map_values=True,
        repair_queries=True,
        cache_seconds=300.0,
    )


@pytest.mark.parametrize(
    ("corrects", "evaluates", "calls_spent", "can_correct"),
    [
        (False, False, 0, False),  # naive: a failed query is never corrected
        (True, False, 0, True),  # retry
        (True, True, 0, True),  # retry + evaluate
        (True, False, 10, True),  # 2 calls left: the correction and the summary
        (True, True, 10, False),  # 2 calls left, but the correction's evaluation needs a third
    ],
)
def test_execute_records_whether_a_correction_may_follow_by_its_flags_and_budget(
    movies_db, corrects, evaluates, calls_spent, can_correct
):
    from reflexion_agents.nodes.text2cypher import steps

    ctx = flow_context(movies_db, corrects=corrects, evaluates=evaluates)
    state = {"question": "Everything?", "cypher": "MATCH (n) RETURN n ORDER BY", "usage": {"llm_calls": calls_spent}}
    update = steps.execute(state, ctx)
    assert update["feedback"].startswith("CypherSyntaxError") and update["can_correct"] is can_correct


def test_summarize_judges_and_learns_by_the_flags_of_the_flow_it_is_wired_in(movies_db):
    from reflexion_agents.nodes.text2cypher import steps
    from reflexion_agents.nodes.text2cypher.fewshots import MemoryFewShotStore
    from reflexion_agents.schemas.text2cypher import Attempt
    from tests.flow_script import flow_model

    corrected = Attempt(cypher="MATCH (m:Movie) RETURN m.title AS title", columns=["title"], rows=[["Big"]])
    state = {"question": "Which movies?", "attempts": [corrected.model_dump()], "corrections": 1, "usage": {}}

    def summarize(evaluates: bool, **more):
        store = MemoryFewShotStore()
        ctx = flow_context(
            movies_db, corrects=True, evaluates=evaluates, store=store, model=flow_model(Summary=[{"answer": "Big."}])
        )
        return steps.summarize({**state, **more}, ctx), store.count()

    # retry: rows that ran answer the question; nothing is judged, so nothing is learned
    retry, stored = summarize(False)
    assert (retry["stop_reason"], retry["answer"], "learned" in retry, stored) == ("answered", "Big.", False, 0)
    # retry + evaluate: unjudged rows leave it unresolved; rows the evaluator accepted are learned
    assert summarize(True)[0]["stop_reason"] == "budget"  # corrections remain: it stopped for want of calls
    accepted, stored = summarize(True, evaluated_ok=True)
    assert (accepted["stop_reason"], accepted["learned"], stored) == ("answered", True, 1)


@pytest.mark.parametrize(
    ("state", "after_execute", "after_evaluate"),
    [
        ({"stop_reason": "rejected", "feedback": "x", "can_correct": True}, "summarize", "summarize"),
        ({"feedback": "CypherSyntaxError", "can_correct": True}, "correct", "correct"),
        ({"feedback": "CypherSyntaxError", "can_correct": False}, "summarize", "summarize"),
        ({"feedback": None, "evaluated_ok": True, "can_correct": True}, "evaluate", "summarize"),
    ],
)
def test_the_routers_read_only_the_state(state, after_execute, after_evaluate):
    from reflexion_agents.nodes.text2cypher import routes

    assert routes.after_execute_evaluating(state) == after_execute
    assert routes.after_execute(state) == ("summarize" if after_execute == "evaluate" else after_execute)
    assert routes.after_evaluate(state) == after_evaluate
    assert routes.to_summary(state) == "summarize"
