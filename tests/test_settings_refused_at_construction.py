"""Settings are checked where they are given: a bad one is a ConfigurationError naming it at
construction, never a TypeError or a silently wrong limit in the middle of a run."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.schemas.errors import ConfigurationError


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
        ("max_steps", 0),
        ("max_steps", True),
        ("max_steps", 1001),
        ("score_threshold", float("nan")),
        ("score_threshold", 11),
        ("score_threshold", True),
        ("max_repeats", 0),
        ("rows_in_message", True),
        ("rows_in_message", 100_001),
        ("row_cap", 100_001),
        ("query_timeout", 86_401),
        ("query_timeout", True),
        ("tool_results_in_prompt", 0),
        ("tool_results_in_prompt", True),
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
        ("max_retries", True),
        ("max_retries", 21),
        ("max_llm_calls", 0),
        ("max_llm_calls", "12"),
        ("row_cap", True),
        ("row_cap", None),
        ("row_cap", 100_001),
        ("query_timeout", 0),
        ("query_timeout", 86_401),
        ("query_timeout", True),
        ("few_shot_k", 51),
        ("few_shot_k", False),
        ("schema_chars", 1_000_001),
        ("cache_seconds", 0),
        ("cache_seconds", 7 * 86_400 + 1),
        ("cache_seconds", None),
        ("learn", "yes"),
        ("map_values", 1),
        ("require_approval", "no"),
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


def test_a_flow_keeps_its_limits_as_given_and_its_defaults(monkeypatch):
    monkeypatch.delenv("REFLEXION_REQUIRE_APPROVAL", raising=False)
    flow = Text2CypherFlow("naive", conversation_factory=lambda: None, checkpointer=None)
    assert flow.limits == {
        "max_retries": 3,
        "max_llm_calls": 12,
        "row_cap": 100,
        "query_timeout": 10.0,
        "few_shot_k": 5,
        "schema_chars": 6000,
        "learn": True,
        "cache_seconds": 300.0,
        "require_approval": False,
        "map_values": True,
        "repair_queries": True,
    }
    given = Text2CypherFlow(
        "naive",
        conversation_factory=lambda: None,
        checkpointer=None,
        max_retries=0,
        max_llm_calls=200,
        row_cap=100_000,
        query_timeout=None,
        few_shot_k=0,
        schema_chars=200,
        learn=False,
        cache_seconds=60,
        require_approval=True,
        map_values=False,
        repair_queries=False,
    )
    assert given.limits == {
        "max_retries": 0,
        "max_llm_calls": 200,
        "row_cap": 100_000,
        "query_timeout": None,
        "few_shot_k": 0,
        "schema_chars": 200,
        "learn": False,
        "cache_seconds": 60.0,
        "require_approval": True,
        "map_values": False,
        "repair_queries": False,
    }
    timed = Text2CypherFlow("naive", conversation_factory=lambda: None, checkpointer=None, query_timeout=2)
    assert timed.limits["query_timeout"] == 2.0 and isinstance(timed.limits["query_timeout"], float)
