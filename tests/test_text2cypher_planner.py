"""The iterative planner: sub-questions fetched in parallel, validated before they run, up to three rounds."""

from __future__ import annotations

import threading
import uuid

import pytest

from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.models import tool_reply
from reflexion_agents.nodes.text2cypher.fewshots import FewShotStore
from tests.flow_script import asked, flow_model
from tests.helpers import HANG_GUARD_S

OK = {"answerable": True, "reason": "people and movies"}
HANKS_2000S = (
    "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) "
    "WHERE m.released >= 2000 AND m.released < 2010 RETURN m.title AS title"
)
CRUISE_2000S = (
    "MATCH (p:Person {name: 'Tom Cruise'})-[:ACTED_IN]->(m:Movie) "
    "WHERE m.released >= 2000 AND m.released < 2010 RETURN m.title AS title"
)


@pytest.fixture
def store(movies_db):
    examples = FewShotStore(movies_db, name=f"examples_{uuid.uuid4().hex[:8]}")
    yield examples
    examples.db.clear()


def by_subquestion(answers: dict[str, str], meeting: threading.Barrier, met: list[bool]):
    """A CypherQuery reply chosen by the sub-question asked (branches run in any order). It returns
    only once every branch is generating (`meeting`): branches run one after another never meet, and
    the first waits `HANG_GUARD_S` in vain. `met` records, per call, whether they met."""

    def reply(messages):
        try:
            meeting.wait()
            met.append(True)
        except threading.BrokenBarrierError:
            met.append(False)
        return tool_reply("CypherQuery", {"cypher": answers[str(messages[-1].content)]})

    return reply


def test_independent_subquestions_run_in_parallel_and_the_answer_uses_all_of_them(movies_db, store):
    meeting, met = threading.Barrier(2, timeout=HANG_GUARD_S), []
    subs = {
        "List Tom Hanks's movies of the 2000s.": HANKS_2000S,
        "List Tom Cruise's movies of the 2000s.": CRUISE_2000S,
    }
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": list(subs)}],
        CypherQuery=[by_subquestion(subs, meeting, met), by_subquestion(subs, meeting, met)],
        InformationCheck=[{"enough": True}],
        Summary=[{"answer": "Tom Hanks made more movies in the 2000s."}],
    )
    flow = Text2CypherFlow("planner", conversation_factory=lambda: model, database=movies_db, fewshots=store)
    events = []
    result = flow.ask("Who made more movies in the 2000s, Tom Hanks or Tom Cruise?", on_event=events.append)
    assert result.stop_reason == "answered" and result.answer == "Tom Hanks made more movies in the 2000s."
    assert sorted(s.question for s in result.subanswers) == sorted(subs)
    assert met == [True, True]  # both branches were generating at the same time
    gathered = asked(model, "Summary")
    summary_prompt = next(c[0].content for c in model.calls if "Call the `Summary` tool" in c[0].content)
    assert "The Da Vinci Code" in summary_prompt and "List Tom Cruise's movies of the 2000s." in summary_prompt
    assert gathered and [e["label"] for e in events][:2] == ["Guardrail", "Plan"]
    assert [e["label"] for e in events][-2:] == ["Information check", "Answer"]


def test_an_invalid_subquery_is_validated_and_corrected_before_it_runs(movies_db, store):
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": ["When was Tom Hanks born?"]}],
        CypherQuery=[
            {"cypher": "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born AS born ORDER BY"},
            {"cypher": "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born AS born"},
        ],
        InformationCheck=[{"enough": True}],
        Summary=[{"answer": "1956"}],
    )
    result = Text2CypherFlow("planner", conversation_factory=lambda: model, database=movies_db, fewshots=store).ask(
        "When was Tom Hanks born?"
    )
    assert result.rows == [[1956]] and result.stop_reason == "answered"
    assert "did not work" in asked(model, "CypherQuery")[1]


def test_missing_information_starts_another_round_up_to_three(movies_db, store):
    born = "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born AS born"
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": ["When was Tom Hanks born?"]}],
        CypherQuery=[{"cypher": born}] * 3,
        InformationCheck=[{"enough": False, "missing": ["Again?"]}] * 3,
        Summary=[{"answer": "partial"}],
    )
    flow = Text2CypherFlow(
        "planner", conversation_factory=lambda: model, database=movies_db, fewshots=store, max_llm_calls=30
    )
    result = flow.ask("When was Tom Hanks born, and why?")
    assert result.stop_reason == "retries_exhausted" and len(result.subanswers) == 3 and result.answer == "partial"


def test_the_budget_limits_how_many_subquestions_are_fetched(movies_db, store):
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": ["A?", "B?", "C?", "D?"]}],
        CypherQuery=[{"cypher": "MATCH (m:Movie) RETURN count(m) AS movies"}] * 4,
        InformationCheck=[{"enough": True}],
        Summary=[{"answer": "38 movies"}],
    )
    flow = Text2CypherFlow(
        "planner", conversation_factory=lambda: model, database=movies_db, fewshots=store, max_llm_calls=6
    )
    result = flow.ask("How many movies are there?")
    # 6 calls: guardrail + plan leave 4; the check and the summary keep 2; one sub-question fits
    assert len(result.subanswers) == 1 and result.usage.llm_calls <= 6 and result.stop_reason == "answered"


def test_parallel_branches_share_the_database_safely(movies_db, store):
    subs = {f"Q{i}?": "MATCH (m:Movie) RETURN count(m) AS movies" for i in range(4)}
    pairs, met = threading.Barrier(2, timeout=HANG_GUARD_S), []  # branches go on two at a time, together
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": list(subs)}],
        CypherQuery=[by_subquestion(subs, pairs, met) for _ in subs],
        InformationCheck=[{"enough": True}],
        Summary=[{"answer": "38"}],
    )
    result = Text2CypherFlow(
        "planner", conversation_factory=lambda: model, database=movies_db, fewshots=store, max_llm_calls=20
    ).ask("Count.")
    assert [s.attempt.rows for s in result.subanswers] == [[[38]]] * 4
    assert met == [True] * 4  # the branches did query at the same time


async def test_a_second_question_on_a_thread_starts_clean_and_async_runs_work(movies_db, store):
    from langgraph.checkpoint.memory import InMemorySaver

    born = "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born AS born"
    model = flow_model(
        GuardrailDecision=[OK, OK],
        SubQuestions=[{"questions": ["Born?"]}, {"questions": ["Born again?"]}],
        CypherQuery=[{"cypher": born}, {"cypher": born}],
        InformationCheck=[{"enough": True}] * 2,
        Summary=[{"answer": "1956"}, {"answer": "still 1956"}],
    )
    flow = Text2CypherFlow(
        "planner", conversation_factory=lambda: model, database=movies_db, fewshots=store, checkpointer=InMemorySaver()
    )
    first = await flow.aask("When was Tom Hanks born?", thread_id="t")
    second = await flow.aask("When was Tom Hanks born, again?", thread_id="t")
    assert [s.question for s in first.subanswers] == ["Born?"] and [s.question for s in second.subanswers] == [
        "Born again?"
    ]
    assert second.usage.llm_calls == 5 and second.answer == "still 1956"


def test_bad_replies_in_parallel_branches_never_overrun_the_budget(movies_db, store):
    bad = lambda messages: "no tool call here"  # noqa: E731 - a reply the responder must retry
    invalid = {"cypher": "MATCH (m:Movie) RETURN m ORDER BY"}
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": ["A?", "B?", "C?"]}],
        CypherQuery=[bad, invalid, bad, invalid, bad, invalid, invalid, invalid, invalid],
        InformationCheck=[{"enough": True}],
        Summary=[{"answer": "done"}],
    )
    flow = Text2CypherFlow(
        "planner", conversation_factory=lambda: model, database=movies_db, fewshots=store, max_llm_calls=10
    )
    result = flow.ask("A, B and C?")
    assert result.usage.llm_calls <= 10 and len(model.calls) <= 10


def test_an_unusable_information_check_is_a_model_error_not_a_budget_stop(movies_db, store):
    born = "MATCH (p:Person {name: 'Tom Hanks'}) RETURN p.born AS born"
    model = flow_model(
        GuardrailDecision=[OK],
        SubQuestions=[{"questions": ["Born?"]}],
        CypherQuery=[{"cypher": born}],
        InformationCheck=[lambda m: "I think so", lambda m: "yes"],
        Summary=[{"answer": "1956"}],
    )
    result = Text2CypherFlow("planner", conversation_factory=lambda: model, database=movies_db, fewshots=store).ask(
        "Born?"
    )
    assert result.stop_reason == "model_error" and result.answer == "1956" and "InformationCheck" in result.error
