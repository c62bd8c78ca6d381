"""Older tool results are shortened in the prompt only: the model judges the newest result in
full, and the memory keeps every row."""

from __future__ import annotations

import pytest
from langchain_core.messages import ToolMessage

from schemas.errors import ConfigurationError
from tests.conftest import draft, make_agent, revise

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


def test_by_default_the_last_two_results_are_whole_and_older_ones_keep_their_header(movies_db):
    result, model, memory = run(movies_db)
    last_prompt = tool_texts(model.calls[-1])
    assert len(last_prompt) == 4
    assert all("[" in t.splitlines()[-1] and "not repeated" in t for t in last_prompt[:2])
    assert all(t.splitlines()[0] == f"Query: {q}" and "row(s), columns: title" in t for t, q in zip(last_prompt[:2], QUERIES))
    assert all("not repeated" not in t and len(t.splitlines()) == 22 for t in last_prompt[2:])  # header + 20 rows shown
    stored = tool_texts(memory)
    assert len(stored) >= 4 and all("not repeated" not in t for t in stored)  # the memory keeps every row
    assert all(len(o.content.splitlines()) == 22 for o in result.outcomes)


def test_none_shows_every_result_whole_and_costs_more(movies_db):
    _, whole, _ = run(movies_db, tool_results_in_prompt=None)
    _, trimmed, _ = run(movies_db)
    assert all("not repeated" not in t for t in tool_texts(whole.calls[-1]))
    assert sum(len(str(m.content)) for m in whole.calls[-1]) > sum(len(str(m.content)) for m in trimmed.calls[-1]) + 1000


def test_a_bad_setting_is_refused(movies_db):
    for bad in (0, -1, True, "2"):
        with pytest.raises(ConfigurationError, match="tool_results_in_prompt"):
            make_agent(movies_db, [], tool_results_in_prompt=bad)
