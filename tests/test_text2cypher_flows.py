"""The naive, retry and retry + evaluate flows on the real embedded movies graph, with a scripted model."""

from __future__ import annotations

import uuid

import pytest

from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.text2cypher.fewshots import SEED_EXAMPLES, FewShotStore
from reflexion_agents.schemas.errors import ConfigurationError
from tests.flow_script import asked, flow_model
from tests.helpers import PortableGraph, graph_fingerprint

HANKS = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title"
OK = {"answerable": True, "reason": "The graph has people and the movies they acted in."}


@pytest.fixture
def store(movies_db: FalkorDBGraph):
    """A few-shot store of its own per test, so learned examples do not leak between tests."""
    examples = FewShotStore(movies_db, name=f"examples_{uuid.uuid4().hex[:8]}")
    yield examples
    examples.db.clear()  # type: ignore[attr-defined]


def make_flow(flow, movies_db, store, **queues_and_options):
    options = {k: queues_and_options.pop(k) for k in list(queues_and_options) if k[0].islower()}
    model = flow_model(**queues_and_options)
    return Text2CypherFlow(
        flow, conversation_factory=lambda: model, database=movies_db, fewshots=store, **options
    ), model


def test_naive_flow_generates_runs_and_summarises_from_the_rows(movies_db, store):
    store.add(
        "Which movies did Keanu Reeves act in?",
        "MATCH (p:Person {name: 'Keanu Reeves'})-[:ACTED_IN]->(m:Movie) RETURN m.title",
        "seed",
    )
    flow, model = make_flow(
        "naive",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": HANKS}],
        Summary=[{"answer": "He acted in 12 movies."}],
    )
    events = []
    result = flow.ask("Which movies did Tom Hanks act in?", on_event=events.append)
    assert (result.stop_reason, result.answer, len(result.rows), result.cypher) == (
        "answered",
        "He acted in 12 movies.",
        12,
        HANKS,
    )
    assert [e["label"] for e in events] == ["Guardrail", "Cypher generation", "Cypher execution", "Answer"]
    # the generator saw the retrieved example; the summariser saw the question, the query and the rows
    generate_system = next(c[0].content for c in model.calls if "Call the `CypherQuery` tool" in c[0].content)
    assert "Question: Which movies did Keanu Reeves act in?" in generate_system and "IS NOT NULL" in generate_system
    summary_system = next(c[0].content for c in model.calls if "Call the `Summary` tool" in c[0].content)
    assert "Question: Which movies did Tom Hanks act in?" in summary_system and HANKS in summary_system
    assert '\n["Cast Away"]\n' in summary_system and '12 rows, columns: ["title"]' in summary_system


def test_retry_flow_corrects_a_database_error_with_its_text(movies_db, store):
    flow, model = make_flow(
        "retry",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[
            {"cypher": "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.name AS name ORDER BY"},
            {"cypher": HANKS},
        ],
        Summary=[{"answer": "12 movies."}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "answered" and len(result.attempts) == 2 and len(result.rows) == 12
    assert result.attempts[0].error.startswith("CypherSyntaxError")
    correction = asked(model, "CypherQuery")[1]
    assert "did not work" in correction and result.attempts[0].error.split(": ", 1)[1][:30] in correction


def test_retry_flow_stops_after_max_retries_with_the_best_result(movies_db, store):
    broken = {"cypher": "MATCH (n) RETURN n.name AS name ORDER BY"}
    flow, _ = make_flow(
        "retry",
        movies_db,
        store,
        max_retries=2,
        GuardrailDecision=[OK],
        CypherQuery=[broken, broken, broken],
        Summary=[{"answer": "I could not query that."}],
    )
    result = flow.ask("Name everything.")
    assert result.stop_reason == "retries_exhausted" and len(result.attempts) == 3 and result.answer


def test_a_write_query_is_refused_and_corrected_and_the_graph_is_unchanged(movies_db, store):
    before = graph_fingerprint(movies_db)
    flow, _ = make_flow(
        "retry",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": "MATCH (p:Person) DETACH DELETE p"}, {"cypher": HANKS}],
        Summary=[{"answer": "ok"}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert result.attempts[0].error.startswith("WriteQueryRefusedError") and result.stop_reason == "answered"
    assert graph_fingerprint(movies_db) == before


def test_retry_evaluate_corrects_poor_rows_then_learns_the_accepted_query(movies_db, store):
    wrong = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title AS title"
    flow, model = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        GuardrailDecision=[OK, OK],
        CypherQuery=[{"cypher": wrong}, {"cypher": HANKS}, {"cypher": HANKS}],
        Evaluation=[
            {"ok": False, "critique": "These are movies he directed, not acted in."},
            {"ok": True},
            {"ok": True},
        ],
        Summary=[{"answer": "12 movies."}, {"answer": "12 films."}],
    )
    first = flow.ask("Which movies did Tom Hanks act in?")
    assert first.stop_reason == "answered" and first.learned and len(first.attempts) == 2
    assert first.attempts[0].critique == "These are movies he directed, not acted in."
    assert "These are movies he directed" in asked(model, "CypherQuery")[1]
    assert [e.source for e in store.search("Which movies did Tom Hanks act in?", 1)] == ["learned"]
    # a later, similar question is generated with the learned example in its prompt
    second = flow.ask("Which films did Tom Hanks act in?")
    assert not second.learned  # accepted at once: nothing corrected, nothing learned
    last_generate = [c[0].content for c in model.calls if "Call the `CypherQuery` tool" in c[0].content][-1]
    assert f"Question: Which movies did Tom Hanks act in?\nCypher: {HANKS}" in last_generate


def test_empty_or_all_null_rows_are_sent_back_without_a_model_call(movies_db, store):
    nulls = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.rating AS rating"
    flow, model = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": nulls}, {"cypher": HANKS}],
        Evaluation=[{"ok": True}],
        Summary=[{"answer": "ok"}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert "Every value in the rows is null" in result.attempts[0].critique
    assert len(asked(model, "Evaluation")) == 1  # only the second result needed the model's judgement


def test_rejected_or_failed_queries_are_never_learned(movies_db, store):
    flow, _ = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        max_retries=1,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": HANKS}, {"cypher": HANKS + " LIMIT 1"}],
        Evaluation=[{"ok": False, "critique": "wrong"}, {"ok": False, "critique": "still wrong"}],
        Summary=[{"answer": "best effort"}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "retries_exhausted" and not result.learned and store.count() == 0


def test_the_budget_ends_the_flow_with_the_best_answer_so_far(movies_db, store):
    flow, model = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        max_llm_calls=3,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": HANKS}],
        Evaluation=[{"ok": False, "critique": "more"}],
        Summary=[{"answer": "never asked"}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "budget" and result.usage.llm_calls == 3 and len(model.calls) == 3
    assert result.answer.startswith("The LLM-call budget ran out before a summary") and "Cast Away" in result.answer
    assert asked(model, "CypherQuery") == ["Which movies did Tom Hanks act in?"]  # no call was left for a correction


def test_a_correction_keeps_calls_for_its_evaluation_and_the_summary(movies_db, store):
    wrong = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title AS title"
    flow, model = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        max_llm_calls=6,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": wrong}, {"cypher": HANKS}],
        Evaluation=[{"ok": False, "critique": "directed, not acted"}, {"ok": True}],
        Summary=[{"answer": "12 movies."}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert (result.stop_reason, result.answer, result.usage.llm_calls) == ("answered", "12 movies.", 6)
    flow, model = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        max_llm_calls=5,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": wrong}],
        Evaluation=[{"ok": False, "critique": "no"}],
        Summary=[{"answer": "He directed none of them."}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")  # 5 calls cannot fit a correction, its check and a summary
    assert (result.stop_reason, result.answer) == ("budget", "He directed none of them.") and len(
        asked(model, "CypherQuery")
    ) == 1


def test_the_naive_flow_reports_a_failed_query_as_such(movies_db, store):
    flow, _ = make_flow(
        "naive",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": "MATCH (n) RETURN n ORDER BY"}],
        Summary=[{"answer": "The query failed."}],
    )
    result = flow.ask("Everything?")
    assert result.stop_reason == "query_failed" and result.answer.startswith(
        "No answer: the last query failed (CypherSyntaxError"
    )


def test_a_store_that_fails_to_learn_does_not_lose_the_answer(movies_db, store):
    def broken_add(*args, **kwargs):
        raise RuntimeError("the examples graph is read-only")

    store.add = broken_add
    wrong = "MATCH (p:Person {name: 'Tom Hanks'})-[:DIRECTED]->(m:Movie) RETURN m.title AS title"
    flow, _ = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": wrong}, {"cypher": HANKS}],
        Evaluation=[{"ok": False, "critique": "no"}, {"ok": True}],
        Summary=[{"answer": "12 movies."}],
    )
    result = flow.ask("Which movies did Tom Hanks act in?")
    assert result.answer == "12 movies." and not result.learned and "read-only" in result.error


def test_the_guardrail_refuses_helpfully(movies_db, store):
    flow, model = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        GuardrailDecision=[
            {
                "answerable": False,
                "reason": "The graph has no weather data.",
                "suggestions": ["Which movies did Tom Hanks act in?", "Who directed The Matrix?"],
            }
        ],
    )
    result = flow.ask("What will the weather be in Paris tomorrow?")
    assert result.stop_reason == "refused" and result.attempts == []
    assert (
        "The graph has no weather data." in result.answer
        and "Movie" in result.answer
        and "Who directed The Matrix?" in result.answer
    )
    guard = model.calls[0][0].content
    assert "(:Movie) with" in guard and "(:Person)-[:ACTED_IN]->(:Movie)" in guard  # judged against the schema


def test_value_mapping_replaces_literals_with_stored_values_and_tells_the_model(movies_db, store):
    flow, model = make_flow(
        "naive",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[
            {
                "cypher": "MATCH (p:Person)-[:ACTED_IN]->(m:Movie) WHERE m.title = 'the matrix' "
                "AND p.name IN ['keanu reeves', 'Carrie Anne Moss'] RETURN p.name AS name"
            }
        ],
        Summary=[{"answer": "Both."}],
    )
    result = flow.ask("Did Keanu Reeves and Carrie-Anne Moss act in the matrix?")
    assert {(m.given, m.mapped) for m in result.mappings} == {
        ("the matrix", "The Matrix"),
        ("keanu reeves", "Keanu Reeves"),
        ("Carrie Anne Moss", "Carrie-Anne Moss"),
    }
    assert sorted(r[0] for r in result.rows) == ["Carrie-Anne Moss", "Keanu Reeves"]
    summary_prompt = next(c[0].content for c in model.calls if "Summary" in c[0].content)
    assert 'Movie.title: "the matrix" -> "The Matrix"' in summary_prompt  # the model is told the mapping


def test_the_row_cap_applies_in_the_database_and_the_summariser_is_told(movies_db, store):
    flow, model = make_flow(
        "naive",
        movies_db,
        store,
        row_cap=5,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": "MATCH (m:Movie) RETURN m.title AS title"}],
        Summary=[{"answer": "many"}],
    )
    result = flow.ask("List the movies.")
    assert len(result.rows) == 5 and result.truncated
    assert "cut at the row cap: more rows exist" in next(c[0].content for c in model.calls if "Summary" in c[0].content)


def test_an_empty_question_a_database_that_is_down_and_bad_settings_are_clear(movies_db, store):
    flow, model = make_flow("naive", movies_db, store)
    assert flow.ask("   ").stop_reason == "invalid_input" and model.calls == []
    down = Text2CypherFlow(
        "naive", {"backend": "falkordb", "host": "127.0.0.1", "port": 1}, lambda: model, fewshots=False
    )
    result = down.ask("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "tool_unavailable" and "127.0.0.1:1" in result.error
    with pytest.raises(ConfigurationError, match="unknown flow"):
        Text2CypherFlow("fancy")
    with pytest.raises(ConfigurationError, match="max_llm_calls"):
        Text2CypherFlow("naive", max_llm_calls=0)


def test_streaming_emits_every_step_in_order(movies_db, store):
    flow, _ = make_flow(
        "retry_evaluate",
        movies_db,
        store,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": "MATCH (p:Person {name: 'tom hanks'}) RETURN p.born AS born"}],
        Evaluation=[{"ok": True}],
        Summary=[{"answer": "1956"}],
    )
    items = list(flow.stream("When was Tom Hanks born?"))
    labels = [i["label"] for i in items[:-1]]
    assert labels == ["Guardrail", "Cypher generation", "Query check", "Cypher execution", "Evaluation", "Answer"]
    assert items[-1].rows == [[1956]] and items[1]["payload"]["cypher"].endswith("RETURN p.born AS born")


def test_on_other_backends_examples_stay_in_memory_and_the_data_is_untouched(movies_db):
    scratch = movies_db.sibling(f"data_{uuid.uuid4().hex[:8]}")
    scratch.write("CREATE (:Person {name: 'Ada'})")
    try:
        model = flow_model(
            GuardrailDecision=[OK],
            CypherQuery=[{"cypher": "MATCH (p:Person) RETURN p.name AS name"}],
            Summary=[{"answer": "Ada"}],
        )
        flow = Text2CypherFlow(
            "naive", conversation_factory=lambda: model, database=PortableGraph(scratch), seed_examples=SEED_EXAMPLES
        )
        assert flow.ask("Who is there?").answer == "Ada"
        assert own_dependencies(flow).store.count() > 40  # seeded as asked, in memory
        assert scratch.query("MATCH (n) RETURN count(n)").rows == [[1]]  # nothing written into the data
        unseeded = Text2CypherFlow("naive", conversation_factory=lambda: model, database=PortableGraph(scratch))
        assert own_dependencies(unseeded).store.count() == 0  # the movies examples belong to the movies graph only
    finally:
        scratch.clear()


@pytest.mark.parametrize(
    ("flow", "budget", "query", "calls", "answer_start"),
    [
        ("naive", 2, HANKS, 2, "The LLM-call budget ran out before a summary"),  # no call left for the summary
        (
            "retry",
            3,
            "MATCH (n) RETURN n ORDER BY",
            2,
            "No answer: the last query failed (CypherSyntaxError",
        ),  # none for a correction
    ],
)
def test_every_flow_ends_on_its_budget_with_the_best_answer_so_far(
    movies_db, store, flow, budget, query, calls, answer_start
):
    flow_object, model = make_flow(
        flow,
        movies_db,
        store,
        max_llm_calls=budget,
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": query}],
        Summary=[{"answer": "not asked: no query ran"}],
    )
    result = flow_object.ask("Which movies did Tom Hanks act in?")
    assert result.stop_reason == "budget" and result.answer.startswith(answer_start) and len(model.calls) == calls


def test_each_flow_is_built_from_the_registry_and_its_flags_match_its_wiring():
    from typing import get_args

    from reflexion_agents.graphs.text2cypher_builders import FLOW_BUILDERS, FLOWS, Wiring
    from reflexion_agents.schemas.text2cypher import Flow

    assert tuple(FLOW_BUILDERS) == FLOWS and set(FLOWS) == set(get_args(Flow))

    def never_run(state):
        raise AssertionError("built, not run")

    wiring = Wiring(start=never_run, node=lambda step: never_run, reply=never_run)  # a builder needs only these
    shared = {"__start__", "start", "guardrail", "summarize", "reply", "__end__"}  # `opening`, and the end
    for name, builder in FLOW_BUILDERS.items():
        nodes = set(builder.build(wiring).compile().get_graph().nodes)
        assert shared <= nodes, name
        assert (builder.corrects, builder.evaluates) == ("correct" in nodes, "evaluate" in nodes), name


def own_dependencies(flow):
    """What a run that names nothing gets: the flow's own model, database and example store."""
    from reflexion_agents.nodes.run_settings import own_settings
    from reflexion_agents.schemas.run_context import Text2CypherContext

    return flow.dependencies(own_settings(Text2CypherContext, flow._limits))
