"""Older tool results are shortened in the prompt only: the model judges the newest result in
full, and the memory keeps every row. No result repeats the query its call shows just before it."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from reflexion_agents.nodes.reflexion.prompt_view import judges_error, prompt_messages
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import draft, make_agent, revise

QUERIES = [f"MATCH (m:Movie) RETURN m.title AS title ORDER BY title LIMIT {n}" for n in (21, 22, 23, 24)]


def run(movies_db, **options):
    script = [draft(QUERIES[0]), *(revise(q, score=2) for q in QUERIES[1:]), revise(QUERIES[-1], score=9)]
    agent, model = make_agent(movies_db, script, trust_non_empty_result=False, **options)
    result = agent.execute("List some movies.")
    assert result.steps == 4 and result.stop_reason == "score_threshold"
    memory = agent.graph.get_state({"configurable": {"thread_id": result.thread_id}}).values["messages"]
    return result, model, memory


def tool_texts(prompt) -> list[str]:
    return [str(m.content) for m in prompt if isinstance(m, ToolMessage)]


def test_by_default_the_last_result_is_whole_and_older_ones_keep_their_count_and_columns(movies_db):
    # The default keeps one result whole: a revision judges the newest rows only.
    result, model, memory = run(movies_db)
    last_prompt = tool_texts(model.calls[-1])
    assert len(last_prompt) == 4
    for text, n in zip(last_prompt[:3], (21, 22, 23), strict=True):
        # the query is in the tool call right before, so its line is not repeated either
        assert text.splitlines() == [
            f'Result: {n} row(s), columns: ["title"]. Showing the first 20.',
            "[20 rows not repeated]",
        ]
    whole = last_prompt[3]  # whole, but for the query its call shows just before it
    assert whole.splitlines()[0].startswith("Result: 24 row(s)") and len(whole.splitlines()) == 21
    stored = tool_texts(memory)
    assert len(stored) >= 4 and all("not repeated" not in t for t in stored)  # the memory keeps every row
    assert all(len(o.content.splitlines()) == 22 for o in result.outcomes)


def test_two_whole_results_keep_the_previous_rows(movies_db):
    _, model, _ = run(movies_db, tool_results_in_prompt=2)
    texts = tool_texts(model.calls[-1])
    assert ["not repeated" in t for t in texts] == [True, True, False, False]


def test_none_shows_every_result_whole_and_costs_more(movies_db):
    _, whole, _ = run(movies_db, tool_results_in_prompt=None)
    _, trimmed, _ = run(movies_db)
    assert all("not repeated" not in t for t in tool_texts(whole.calls[-1]))
    assert (
        sum(len(str(m.content)) for m in whole.calls[-1]) > sum(len(str(m.content)) for m in trimmed.calls[-1]) + 1000
    )


def test_a_bad_setting_is_refused(movies_db):
    for bad in (0, -1, True, "2"):
        with pytest.raises(ConfigurationError, match="tool_results_in_prompt"):
            make_agent(movies_db, [], tool_results_in_prompt=bad)


def test_a_query_over_several_lines_keeps_its_result_line_and_errors_are_never_shortened(movies_db):
    multi = ["MATCH (m:Movie)\nRETURN m.title AS title\nORDER BY title LIMIT " + str(n) for n in (21, 22, 23)]
    broken = "MATCH (m:Movie)\nRETURN toIntegr(m.released) AS year"
    script = [draft(broken), *(revise(q, score=2) for q in multi), revise(multi[-1], score=9)]
    agent, model = make_agent(movies_db, script, trust_non_empty_result=False)
    assert agent.execute("List some movies.").steps == 4
    error, oldest, *_ = tool_texts(model.calls[-1])
    assert "toIntegr" in error and "not repeated" not in error and error.startswith("The database rejected")
    # the Result line is found below a query of three lines; the query itself is in the call before it
    assert oldest.splitlines() == [
        'Result: 21 row(s), columns: ["title"]. Showing the first 20.',
        "[20 rows not repeated]",
    ]


def outcome_message(content: str, call_id: str) -> ToolMessage:
    rows = [["a"], ["b"]]
    return ToolMessage(
        content=content, tool_call_id=call_id, artifact={"executed": True, "non_empty": True, "rows": rows}
    )


def test_a_query_the_call_does_not_show_keeps_its_line():
    ran = "MATCH (n) RETURN n.name AS name"
    result = 'Result: 2 row(s), columns: name.\n{"name": "a"}\n{"name": "b"}'
    memory = [
        HumanMessage(content="q"),
        AIMessage(content="", tool_calls=[{"name": "ReviseQuery", "args": {"revised_query": "MATCH (x)"}, "id": "1"}]),
        outcome_message(f"The reviewer replaced the query with: {ran}\nQuery: {ran}\n{result}", "1"),
        AIMessage(content="", tool_calls=[{"name": "ReviseQuery", "args": {"revised_query": ran}, "id": "2"}]),
        outcome_message(f"Query: {ran}\n{result}", "2"),
    ]
    edited, latest = tool_texts(prompt_messages(memory, 1))
    assert edited.splitlines() == [
        f"The reviewer replaced the query with: {ran}",
        f"Query: {ran}",
        "Result: 2 row(s), columns: name.",
        "[2 rows not repeated]",
    ]
    assert latest == result  # the newest whole; the query its call shows is not repeated
    failed = ToolMessage(content="x", tool_call_id="2", artifact={"executed": True, "error": "Unknown function"})
    rejected = ToolMessage(content="x", tool_call_id="2", artifact={"executed": False, "error": "rejected"})
    assert not judges_error(memory) and judges_error([*memory[:-1], failed])
    assert not judges_error([*memory[:-1], rejected]) and not judges_error(memory[:1])


def test_a_follow_up_question_sees_the_previous_answer_whole(movies_db):
    script = [
        draft(QUERIES[0]),
        revise(QUERIES[0], score=9),
        draft(QUERIES[1]),
        revise(QUERIES[2], score=2),
        revise(QUERIES[3], score=2),
        revise(QUERIES[3], score=9),
    ]
    agent, model = make_agent(movies_db, script, trust_non_empty_result=False)
    first = agent.execute("List some movies.")
    agent.execute("And a few more?", thread_id=first.thread_id)
    texts = tool_texts(model.calls[-1])
    assert texts[0].startswith("Result: 21 row(s)") and "not repeated" not in texts[0]  # the earlier answer, whole
    assert any("not repeated" in t for t in texts[1:])  # this question's oldest result
