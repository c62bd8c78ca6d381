"""A stop rule is data: a `StopRule` in a tuple, reading the run's settings by name. An agent of the
user's adds one without touching the engine, and the answer, the drawing and the result all say it."""

from __future__ import annotations

import pytest

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.nodes.reflexion.stop_rules import STOP_RULES, StopRule
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import TOM_HANKS_QUERY, draft, labelled_edges, revise

WIDE = "MATCH (m:Movie) RETURN m.title AS title"  # 38 movies, more than the row cap below


def _capped(state, settings, key):
    """Stop as soon as a result filled the run's row cap: the rows are cut, and more revisions of a
    query that already fetches too much rarely help."""
    outcomes = state.get("outcomes") or []
    return "row_cap_reached" if outcomes and outcomes[-1].get("truncated") else None


ROW_CAP_RULE = StopRule(
    "row cap reached",
    _capped,
    {"row_cap_reached": "a result filled the row cap: ask for less, or raise the cap"},
    lambda settings: f"{settings['row_cap']} rows",
)


class CappedAgent(KGQueryReflexionAgent):
    stop_rules = (*STOP_RULES, ROW_CAP_RULE)


@pytest.mark.integration
def test_an_agent_of_ones_own_adds_a_stop_rule_that_reads_the_runs_settings(movies_db):
    # the model rejects the wide result (score 2): the built-in rules go on, the new one stops the run
    model = ScriptedChatModel(replies=[draft(WIDE), revise(WIDE, score=2), revise(TOM_HANKS_QUERY, score=9)])
    agent = CappedAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None, row_cap=5)
    result = agent.execute("List every movie")
    assert result.stop_reason == "row_cap_reached" and result.steps == 1 and result.truncated
    assert "Stopped: a result filled the row cap: ask for less, or raise the cap" in result.reply_text()
    assert "5 rows" in labelled_edges(agent.graph)["revise", "reply"]  # the drawing says the rule too

    # a run's context lowers the cap the rule reads: the run's settings, not the agent's
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, score=2), revise(WIDE)])
    lowered = CappedAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None, row_cap=50)
    assert lowered.execute("Tom Hanks?", context={"row_cap": 3}).stop_reason == "row_cap_reached"


@pytest.mark.integration
def test_the_built_in_rules_run_unchanged_without_the_new_one(movies_db):
    model = ScriptedChatModel(replies=[draft(WIDE), revise(WIDE, score=2), revise(TOM_HANKS_QUERY, score=9)])
    plain = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, checkpointer=None, row_cap=5)
    assert plain.execute("List every movie").stop_reason != "row_cap_reached"


def test_a_setting_no_rule_reads_is_refused_by_name():
    with pytest.raises(ConfigurationError, match="max_rows_wanted"):
        KGQueryReflexionAgent(lambda: None, connection_args={}, checkpointer=None, max_rows_wanted=3)
