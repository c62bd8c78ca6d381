"""The knowledge-graph agent with the schema check: repairs made before a query runs reach the model,
the stream, the result, the answer message and the reviewer; what the graph lacks keeps a praised
result from ending the run."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs import kg_query_tool
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from tests.helpers import draft, keep, make_agent, revise
from tests.openai_stub import OpenAIStub, tool_names

RIGHT = "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p:Person) RETURN p.name AS director"
TURNED = "MATCH (m:movie {title: 'the matrix'})-[:DIRECTED]->(p:Person) RETURN p.name AS director"


def test_a_repaired_query_answers_and_every_reader_is_told_what_was_repaired(movies_db):
    agent, model = make_agent(movies_db, [draft(TURNED), keep(TURNED, score=9)], checkpointer=None)
    events = []
    for mode, chunk in agent.graph.stream(
        {"messages": [HumanMessage("Who directed The Matrix?")]}, stream_mode=["custom", "values"]
    ):
        if mode == "custom":
            events.append(chunk)
        else:
            state = chunk
    assert state["stop_reason"] == "score_threshold" and state["steps"] == 1  # kept as written: it is the same query
    assert ["Lana Wachowski"] in state["rows"] and state["query"] == RIGHT
    (checked,) = [e for e in events if e["label"] == "Query check"]
    assert checked["payload"]["query"] == RIGHT and len(checked["payload"]["repairs"]) == 3
    told = str(model.calls[1][-1].content)  # the revision read the repairs with the result
    assert told.startswith("Repaired before it ran:") and "(:Person)-[:DIRECTED]->(:Movie)" in told
    assert "Repaired before it ran:" in state["answer"]
    result = agent._parse_final_result(state)
    assert result.check is not None and result.check.written == TURNED and result.check.query == RIGHT


def test_the_reviewer_is_shown_the_query_that_would_run(movies_db):
    agent, _ = make_agent(movies_db, [draft(TURNED), keep(RIGHT, score=9)], require_approval=True)
    paused = agent.execute("Who directed The Matrix?")
    assert paused.pending_approval["query"] == RIGHT
    done = agent.resume(paused.thread_id, "approve")
    assert done.answer == RIGHT and ["Lana Wachowski"] in done.tool_result


def test_a_praised_query_naming_what_the_graph_lacks_never_ends_the_run_as_answered(movies_db):
    invented = "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.rating AS rating"
    agent, model = make_agent(movies_db, [draft(invented)] + [keep(invented, score=10)] * 5, checkpointer=None)
    result = agent.execute("How is The Matrix rated?")
    # kept once, refused; kept again after being told twice: the graph holds no rating of movies
    assert result.stop_reason == "not_in_graph" and [o.executed for o in result.outcomes] == [True, False]
    assert result.usage.llm_calls == 3 and result.answer == invented
    told = str(model.calls[2][-1].content)
    assert "did not end the run because the query names what the graph does not hold" in told
    reply = result.reply_text()
    assert "Movie has no property rating; it has: released, tagline, title" in reply and "The best query" in reply
    assert "the graph cannot answer the question as asked" in reply


def test_a_better_query_after_a_refused_one_still_answers(movies_db):
    invented = "MATCH (m:Movie {title: 'Cloud Atlas'}) RETURN m.rating AS rating"
    rated = "MATCH (:Person)-[r:REVIEWED]->(m:Movie {title: 'Cloud Atlas'}) RETURN avg(r.rating) AS rating"
    agent, _ = make_agent(movies_db, [draft(invented), keep(invented, 9), revise(rated, 9), keep(rated, 9)])
    result = agent.execute("How is Cloud Atlas rated?")
    assert result.stop_reason == "score_threshold" and result.answer == rated and result.tool_result == [[95.0]]


def test_a_rewrite_that_finds_rows_after_no_rows_is_what_answers(movies_db):
    agent, _ = make_agent(
        movies_db, [draft("MATCH (m:Movie {title: 'Matrix'}) RETURN m.released"), revise(RIGHT, 9), keep(RIGHT, 9)]
    )
    result = agent.execute("Who directed The Matrix?")
    assert result.answer == RIGHT and result.steps == 2


def self_praising_model(request):
    """A model on the OpenAI wire that drafts the query with three mistakes and then keeps whatever it
    wrote, scoring it 10 out of 10, whatever it was shown."""
    if "GenerateQuery" in tool_names(request):
        return {"tool": "GenerateQuery", "args": {"answer": TURNED, "reflection": "sure"}}
    return {"tool": "ReviseQuery", "args": {"answer": TURNED, "revised_query": TURNED, "score": "10 out of 10"}}


def test_through_the_openai_client_a_self_praising_model_gets_the_right_rows_in_two_calls(movies_db):
    with OpenAIStub(self_praising_model) as stub:
        model = ChatOpenAI(model="any", api_key="sk-test", base_url=stub.base_url, max_retries=0)
        agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
        result = agent.execute("Who directed The Matrix?")
    assert result.stop_reason == "score_threshold" and result.usage.llm_calls == 2
    assert sorted(result.tool_result) == [["Lana Wachowski"], ["Lilly Wachowski"]]


def test_an_approval_runs_the_query_shown_even_when_the_graph_changed_meanwhile(movies_db, monkeypatch):
    """The reviewer approved a query; before the run resumed, the graph changed so that the check would
    now repair it otherwise. What was approved runs."""
    scratch = movies_db.sibling("scratch_approval")
    scratch.write("CREATE (:Film {title: 'The Matrix', year: 1999})")
    written = "MATCH (f:Film {title: 'the matrix'}) RETURN f.year AS year"
    try:
        model = ScriptedChatModel(replies=[draft(written), keep(written, 9)])
        agent = KGQueryReflexionAgent(
            conversation_factory=lambda: model, database=scratch, require_approval=True, checkpointer=InMemorySaver()
        )
        paused = agent.execute("When did The Matrix come out?")
        shown = paused.pending_approval["query"]
        assert shown == written.replace("the matrix", "The Matrix")
        scratch.write("CREATE (:Film {title: 'THE MATRIX', year: 2003})")  # now 'the matrix' is ambiguous
        monkeypatch.setattr(kg_query_tool, "FACTS_MAX_AGE_S", 0.0)  # as after five minutes, or in another process
        done = agent.resume(paused.thread_id, "approve")
        assert done.outcomes[0].action == shown and done.tool_result == [[1999]]
    finally:
        scratch.clear()


def test_a_revisions_score_goes_on_the_step_it_judged(movies_db):
    agent, _ = make_agent(movies_db, [draft(RIGHT), keep(RIGHT, 2), keep(RIGHT, 9)], checkpointer=None)
    result = agent.execute("Who directed The Matrix?")
    # the 2 and then the 9 both judged step 1's rows; step 2 ran nothing and was judged by nobody
    assert result.stop_reason == "score_threshold" and [o.score for o in result.outcomes] == [9.0, None]
