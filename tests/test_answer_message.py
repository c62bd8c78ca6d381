"""Every run ends with an AI message that answers, as chat clients (Studio, agent-chat-ui, the SDK's
`messages-tuple` stream) show it, and with `answer`/`query`/`columns`/`rows` at the top of its output."""

from __future__ import annotations

import re
from typing import get_args

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.schemas.extraction import ExtractionStopReason
from reflexion_agents.schemas.kg_query import KGQueryStopReason
from reflexion_agents.schemas.react import ReActStopReason
from reflexion_agents.schemas.reply_text import STOP_WORDS, markdown_table
from reflexion_agents.schemas.text2cypher import FlowStopReason
from tests.helpers import TOM_HANKS_QUERY, closed_port, draft, make_agent, revise

ALL_MOVIES = "MATCH (m:Movie) RETURN m.title AS title, m.released AS released ORDER BY title"


def table_rows(text: str) -> list[list[str]]:
    """The cells of each Markdown table line in `text` (header and separator included)."""
    return [re.split(r"(?<!\\)\|", line)[1:-1] for line in text.splitlines() if line.startswith("|")]


def test_the_kg_agent_answers_with_its_query_a_capped_table_and_why_it_stopped(movies_db):
    agent, _ = make_agent(movies_db, [draft(ALL_MOVIES), revise(ALL_MOVIES, 9)], checkpointer=None)
    state = agent.graph.invoke({"messages": [HumanMessage("List every movie and its year.")]})
    last = state["messages"][-1]
    assert isinstance(last, AIMessage) and not last.tool_calls and last.content == state["answer"]
    assert f"```cypher\n{ALL_MOVIES}\n```" in last.content
    cells = table_rows(last.content)
    assert cells[0] == [" title ", " released "] and len(cells) == 2 + 20  # header, separator, 20 rows
    assert "Showing 20 of 38 rows." in last.content and "row cap" not in last.content
    assert last.content.endswith(
        "Stopped: the model scored the result above the threshold and kept what gave it (after 1 step)."
    )
    # the output holds every row, and the query and columns they belong to
    assert state["query"] == ALL_MOVIES and state["columns"] == ["title", "released"] and len(state["rows"]) == 38


def test_rows_cut_by_the_row_cap_are_said_to_be_cut(movies_db):
    agent, _ = make_agent(movies_db, [draft(ALL_MOVIES), revise(ALL_MOVIES, 9)], checkpointer=None, row_cap=5)
    state = agent.graph.invoke({"messages": [HumanMessage("List every movie.")]})
    text = state["messages"][-1].content
    assert len(table_rows(text)) == 2 + 5 and "cut at 5 rows by the row cap: more rows exist" in text
    assert len(state["rows"]) == 5


def test_values_that_would_break_a_markdown_table_stay_in_their_cells(movies_db):
    """A second graph whose text holds pipes, line breaks and backticks: one row stays one line with
    as many cells as columns, and the query's own fence is not closed by its text."""
    db = movies_db.sibling("answer_cells")
    try:
        db.write("CREATE (:Note {text: 'a | b\nc', tag: 'x\\\\|y'})")
        query = "MATCH (n:Note) RETURN n.text AS text, n.tag AS tag, '```' AS fence, [1, 2] AS list"
        agent, _ = make_agent(db, [draft(query), revise(query, 9)], checkpointer=None)
        text = agent.graph.invoke({"messages": [HumanMessage("Show the notes.")]})["messages"][-1].content
    finally:
        db.clear()
    header, _, row = table_rows(text)
    assert len(header) == len(row) == 4, text
    assert row[0].strip() == "a \\| b c" and row[3].strip() == "[1, 2]"
    assert "````cypher\n" + query + "\n````" in text  # a longer fence around a query holding ```


def test_a_run_that_ran_nothing_says_so_and_why(movies_db):
    agent, _ = make_agent(movies_db, [tool_reply("NotATool", {})] * 10, checkpointer=None)
    state = agent.graph.invoke({"messages": [HumanMessage("Tom Hanks movies?")]})
    text = state["messages"][-1].content
    assert state["stop_reason"] == "model_error" and text.startswith("No query ran.")
    assert "Stopped: the model's replies could not be used, even after retries (after 0 steps)." in text
    assert state["rows"] is None and state["query"] is None


def test_a_failed_query_at_the_step_limit_is_shown_with_its_error(movies_db):
    broken = "MATCH (p:Person RETURN p"
    agent, _ = make_agent(movies_db, [draft(broken), revise(broken + " ", 3)], checkpointer=None, max_steps=1)
    text = agent.graph.invoke({"messages": [HumanMessage("Who?")]})["messages"][-1].content
    assert "The last query tried:" in text and "It failed:" in text
    assert "Stopped: the step limit was reached (after 1 step)." in text


def test_a_thread_keeps_each_answer_in_its_memory(movies_db):
    from langgraph.checkpoint.memory import InMemorySaver

    replies = [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)] * 2
    agent, _ = make_agent(movies_db, replies, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "two-answers"}}
    for question in ("Tom Hanks movies?", "And again?"):
        agent.graph.invoke({"messages": [HumanMessage(question)]}, config)
    kinds = [type(m).__name__ for m in agent.graph.get_state(config).values["messages"]]
    # each run: draft, revision, answer; the first answer stays between the two exchanges
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage"] * 2


def test_a_flow_that_cannot_reach_its_database_answers_why(monkeypatch):
    flow = Text2CypherFlow(
        "naive",
        connection_args={"backend": "falkordb", "host": "127.0.0.1", "port": closed_port(), "graph": "movies"},
        conversation_factory=lambda: ScriptedChatModel(replies=[]),
        checkpointer=None,
    )
    state = flow.graph.invoke({"messages": [{"role": "user", "content": "Tom Hanks movies?"}]})
    last = state["messages"][-1]
    assert state["stop_reason"] == "tool_unavailable" and isinstance(last, AIMessage)
    assert last.content.startswith("No answer.") and "Stopped: the database could not be reached." in last.content
    assert state["answer"] is None and state["rows"] is None


def test_a_refused_question_is_answered_with_the_refusal(movies_db):
    model = ScriptedChatModel(
        replies=[tool_reply("GuardrailDecision", {"answerable": False, "reason": "Off topic.", "suggestions": ["Q?"]})]
    )
    flow = Text2CypherFlow("retry", database=movies_db, conversation_factory=lambda: model, checkpointer=None)
    state = flow.graph.invoke({"question": "What is the weather?"})
    text = state["messages"][-1].content
    assert text == state["answer"] and text.startswith("I can't answer that from this graph. Off topic.")
    assert "Stopped:" not in text and "You could ask, for example: Q?" in text


@pytest.mark.parametrize(
    "reasons", [KGQueryStopReason, ReActStopReason, ExtractionStopReason, FlowStopReason], ids=lambda r: str(r)
)
def test_every_declared_stop_reason_has_plain_words(reasons):
    flat = set()
    for arg in get_args(reasons):
        flat |= set(get_args(arg)) or {arg}
    assert flat - set(STOP_WORDS) == set()


def test_an_empty_table_and_ragged_rows_are_said_plainly():
    assert markdown_table(["a"], [], truncated=False) == "It returned no rows."
    header, _, short = table_rows(markdown_table(["a"], [[1, 2]], truncated=False))
    assert [c.strip() for c in header] == ["a", "column 2"] and [c.strip() for c in short] == ["1", "2"]


def test_a_failed_query_is_shown_with_its_own_error_and_the_models_error_with_the_stop(movies_db):
    """A broken draft, then a revision the model cannot write: the query's syntax error is what it
    failed with; the model's error is why the run stopped."""
    broken = "MATCH (p:Person RETURN p"
    agent, _ = make_agent(movies_db, [draft(broken)] + [tool_reply("ReviseQuery", {"score": 1})] * 5, checkpointer=None)
    state = agent.graph.invoke({"messages": [HumanMessage("Who?")]})
    text = state["messages"][-1].content
    assert state["stop_reason"] == "model_error"
    failed = text.split("It failed: ")[1].split("\n")[0]
    assert "revise:" not in failed and state["outcomes"][0]["error"] in failed
    assert "Stopped: the model's replies could not be used, even after retries (revise:" in text


def test_the_best_query_is_not_called_the_answer_when_the_run_was_not_satisfied(movies_db):
    agent, _ = make_agent(movies_db, [draft(ALL_MOVIES), revise(ALL_MOVIES, 2)], checkpointer=None, max_steps=1)
    text = agent.graph.invoke({"messages": [HumanMessage("Movies?")]})["messages"][-1].content
    assert text.startswith("The best query that ran:") and "that answers" not in text


def test_a_paused_agent_run_leaves_no_stale_answer_and_its_question_is_not_asked_again(movies_db):
    """A run pauses for approval (its question stays the thread's last message); the next question
    arrives as `question` alone, as a client may send it: that question is drafted, not the old one,
    and the old run's answer is not shown beside it."""
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.helpers import EMPTY_QUERY

    replies = [draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9), draft(EMPTY_QUERY), draft(EMPTY_QUERY)]
    agent, model = make_agent(movies_db, replies, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "stale"}}
    agent.graph.invoke({"messages": [HumanMessage("Tom Hanks movies?")]}, config)
    agent.graph.invoke({"messages": [HumanMessage("Meg Ryan movies?")]}, config, context={"require_approval": True})
    paused = agent.graph.get_state(config).values
    assert paused["question"] == "Meg Ryan movies?" and paused["answer"] is None and paused["rows"] is None
    agent.graph.invoke({"question": "Keanu Reeves movies?"}, config, context={"require_approval": True})
    asked = [m for m in model.calls[-1] if isinstance(m, HumanMessage)]
    assert asked[-1].content == "Keanu Reeves movies?", [m.content for m in asked]
    assert agent.graph.get_state(config).values["question"] == "Keanu Reeves movies?"
    # the paused run's draft called a tool nobody answered: it is answered before the new question, so
    # the conversation a chat API receives stays valid (every tool call answered before the next turn)
    sent = model.calls[-1]
    for i, message in enumerate(sent):
        for call in getattr(message, "tool_calls", None) or []:
            assert any(getattr(m, "tool_call_id", None) == call["id"] for m in sent[i + 1 :]), sent
    assert "Not executed: a new question came first." in [m.content for m in sent]


def test_a_flow_asked_again_after_a_paused_run_answers_the_new_question(movies_db):
    from langgraph.checkpoint.memory import InMemorySaver

    guard = tool_reply("GuardrailDecision", {"answerable": True})
    query = tool_reply("CypherQuery", {"cypher": TOM_HANKS_QUERY})
    # the second question follows the first on the thread: it is rewritten against it first
    standalone = tool_reply("StandaloneQuestion", {"question": "Keanu Reeves movies?"})
    model = ScriptedChatModel(replies=[guard, query, standalone, guard, query])
    flow = Text2CypherFlow(
        "naive",
        database=movies_db,
        conversation_factory=lambda: model,
        fewshots=False,
        require_approval=True,
        checkpointer=InMemorySaver(),
    )
    first = flow.ask("Tom Hanks movies?", thread_id="flow-stale")
    assert first.stop_reason == "awaiting_approval"
    second = flow.ask("Keanu Reeves movies?", thread_id="flow-stale")
    assert second.stop_reason == "awaiting_approval"
    guarded = [call for call in model.calls if "GuardrailDecision" in str(call)]
    assert [call[-1].content for call in guarded] == ["Tom Hanks movies?", "Keanu Reeves movies?"]
    kept = flow.graph.get_state({"configurable": {"thread_id": "flow-stale"}}).values["messages"]
    assert [m.content for m in kept] == ["Tom Hanks movies?", "Keanu Reeves movies?"]


def test_a_route_of_the_users_own_that_ends_with_no_stop_reason_leaves_a_valid_conversation():
    from tests.test_reflexion_engine import OneShot

    model = ScriptedChatModel(
        replies=[tool_reply("Draft", {"answer": "0+0"}), tool_reply("Revision", {"revised_answer": "2+2"})]
    )
    state = OneShot(model, checkpointer=None).graph.invoke({"messages": [HumanMessage("q")]})
    assert state["stop_reason"] is None  # no rule stopped it (the result was empty); the route did
    revision, answered, reply = state["messages"][-3:]
    assert revision.tool_calls and answered.tool_call_id == revision.tool_calls[0]["id"]
    assert isinstance(reply, AIMessage) and "Stopped" not in reply.content and "0+0" in reply.content
