"""Settings are checked where they are given: a bad one is a ConfigurationError naming it at
construction, never a TypeError or a silently wrong limit in the middle of a run."""

from __future__ import annotations

import pytest

from graphs.kg_query_agent import KGQueryReflexionAgent
from graphs.text2cypher_flow import Text2CypherFlow
from schemas.errors import ConfigurationError


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("query_timeout", float("nan")),
        ("query_timeout", float("inf")),
        ("query_timeout", 0),
        ("query_timeout", -5),
        ("query_timeout", "10"),
        ("row_cap", "100"),
        ("row_cap", 0),
        ("row_cap", -1),
        ("row_cap", True),
        ("rows_in_message", 0),
        ("max_model_retries", -1),
        ("max_model_retries", "2"),
        ("max_model_retries", 10**9),
        ("checkpointer", "bogus"),
    ],
)
def test_the_kg_agent_refuses_bad_settings(option, value):
    with pytest.raises(ConfigurationError, match=option if option != "checkpointer" else "checkpointer"):
        KGQueryReflexionAgent(conversation_factory=lambda: None, **{option: value})


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("query_timeout", float("nan")),
        ("query_timeout", "10"),
        ("max_retries", -1),
        ("max_llm_calls", 10**9),
        ("row_cap", "100"),
        ("few_shot_k", -2),
        ("schema_chars", 0),
        ("cache_seconds", float("inf")),
        ("checkpointer", "bogus"),
    ],
)
def test_the_flows_refuse_bad_settings(option, value):
    with pytest.raises(ConfigurationError, match=option):
        Text2CypherFlow("naive", conversation_factory=lambda: None, **{option: value})


@pytest.mark.parametrize("question", [42, b"Who directed The Matrix?", None])
def test_a_question_that_is_not_text_is_refused(movies_db, question):
    flow = Text2CypherFlow("naive", conversation_factory=lambda: None, database=movies_db, checkpointer=None)
    with pytest.raises(ConfigurationError, match="must be text"):
        flow.ask(question)


def test_sane_settings_are_kept():
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: None, query_timeout=2, row_cap=None, max_model_retries=0, checkpointer=None
    )
    assert (agent.query_timeout, agent.row_cap, agent.max_model_retries) == (2.0, None, 0)
