"""The flows with the schema check: a right empty answer is taken as it is, a wrong one is corrected
with what the graph lacks, a follow-up on a thread is asked as a whole question, and the database's
error text reaches the result and the evaluation's trace."""

from __future__ import annotations

import re

from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.evaluation.dataset import EvalItem
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from tests.flow_script import asked, flow_model

OK = {"answerable": True}
NOBODY = "MATCH (p:Person {name: 'Keanu Reeves'})-[:DIRECTED]->(m:Movie) RETURN m.title AS title"


def flow(kind, db, model, **options):
    return Text2CypherFlow(kind, conversation_factory=lambda: model, database=db, fewshots=False, **options)


def test_a_right_empty_answer_is_taken_without_a_correction_or_a_judge(movies_db):
    model = flow_model(GuardrailDecision=[OK], CypherQuery=[{"cypher": NOBODY}], Summary=[{"answer": "None."}])
    result = flow("retry_evaluate", movies_db, model, checkpointer=None).ask("Which movies did Keanu Reeves direct?")
    assert result.stop_reason == "answered" and result.rows == [] and result.cypher == NOBODY
    assert asked(model, "Evaluation") == [] and len(result.attempts) == 1 and result.usage.llm_calls == 3


def test_an_empty_answer_from_a_property_the_graph_lacks_is_corrected_with_what_it_has(movies_db):
    invented = "MATCH (m:Movie) WHERE m.year = 1999 RETURN m.title AS title"
    fixed = "MATCH (m:Movie) WHERE m.released = 1999 RETURN m.title AS title"
    model = flow_model(
        GuardrailDecision=[OK],
        CypherQuery=[{"cypher": invented}, {"cypher": fixed}],
        Evaluation=[{"ok": True}],
        Summary=[{"answer": "The Matrix and others."}],
    )
    result = flow("retry_evaluate", movies_db, model, checkpointer=None).ask("Which movies came out in 1999?")
    assert result.stop_reason == "answered" and ["The Matrix"] in result.rows
    correction = asked(model, "CypherQuery")[1]
    assert "Movie has no property year; it has: released, tagline, title" in correction


def test_every_flow_repairs_a_relationship_turned_round_before_it_runs(movies_db):
    turned = "MATCH (m:Movie {title: 'The Matrix'})-[:DIRECTED]->(p:Person) RETURN p.name AS director"
    for kind in ("naive", "retry", "retry_evaluate", "planner"):
        model = flow_model(
            GuardrailDecision=[OK],
            SubQuestions=[{"questions": ["Who directed The Matrix?"]}],
            CypherQuery=[{"cypher": turned}],
            Evaluation=[{"ok": True}],
            InformationCheck=[{"enough": True}],
            Summary=[{"answer": "The Wachowskis."}],
        )
        result = flow(kind, movies_db, model, checkpointer=None).ask("Who directed The Matrix?")
        attempt = (result.attempts or [s.attempt for s in result.subanswers])[0]
        assert ["Lana Wachowski"] in attempt.rows, kind
        assert attempt.check is not None and "other way round" in attempt.check.repairs[0], kind


def test_a_follow_up_on_a_flow_thread_is_asked_with_what_it_refers_to(movies_db):
    """The model reads the conversation it is sent and names what "it" stands for, as a model would."""
    matrix_year = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS released"

    def rewrite(messages):
        history = " ".join(str(m.content) for m in messages[:-1])
        movie = re.search(r"The [A-Z]\w+", history)  # a title named in the conversation
        return tool_reply("StandaloneQuestion", {"question": f"When was {movie.group()} released?" if movie else "?"})

    def generate(messages):
        wanted = str(messages[-1].content)
        query = (
            matrix_year
            if "The Matrix" in wanted
            else "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p) RETURN p.name AS name"
        )
        return tool_reply("CypherQuery", {"cypher": query})

    def reply(messages):
        tool = re.findall(r"`(\w+)` tool", str(messages[0].content))[-1]
        if tool == "StandaloneQuestion":
            return rewrite(messages)
        if tool == "CypherQuery":
            return generate(messages)
        return tool_reply(tool, {"GuardrailDecision": OK, "Summary": {"answer": "In 1999."}}[tool])

    model = ScriptedChatModel(default=reply)
    threaded = flow("naive", movies_db, model, checkpointer=InMemorySaver())
    first = threaded.ask("Who directed The Matrix?", thread_id="follow")
    assert first.stop_reason == "answered" and asked(model, "StandaloneQuestion") == []  # a first question as it is
    second = threaded.ask("When was it released?", thread_id="follow")
    assert second.rows == [[1999]] and second.cypher == matrix_year
    assert asked(model, "CypherQuery")[-1] == "When was The Matrix released?"
    assert asked(model, "GuardrailDecision")[-1] == "When was The Matrix released?"


def test_a_failed_query_keeps_the_databases_words_in_the_result_and_the_trace(movies_db):
    broken = "MATCH (m:Movie) RETURN m.title ORDER BY"
    model = flow_model(GuardrailDecision=[OK], CypherQuery=[{"cypher": broken}], Summary=[{"answer": "unused"}])
    result = flow("naive", movies_db, model, checkpointer=None).ask("List the movies.")
    assert result.stop_reason == "query_failed" and result.error and "Cypher" in result.error

    import asyncio

    items = [EvalItem(0, "List the movies.", "MATCH (m:Movie) RETURN m.title")]
    report = asyncio.run(
        evaluate(agent="naive", model="corrupt", faults=["syntax_error"], items=items, db=movies_db, force=True)
    )
    (trace,) = [t for t in report.traces if t.answer]
    assert trace.answer.stop_reason == "query_failed" and trace.answer.error and "RETRUN" in trace.answer.error
