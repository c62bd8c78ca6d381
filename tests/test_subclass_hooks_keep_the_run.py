"""A biochatter subclass that wraps a hook and calls the package's own through `super()` (to log
around it, say) still runs under the run's settings: the row cap its context asked for, the model it
named, and a run that started read-only stays read-only when an agent allowed to write resumes it."""

from __future__ import annotations

from typing import ClassVar

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from tests.helpers import TOM_HANKS_QUERY, draft, graph_fingerprint, keep

pytestmark = pytest.mark.integration


class Logging(KGQueryReflexionAgent):
    """Wraps biochatter's hooks, as a subclass adding logging would."""

    seen: ClassVar[list[str]] = []

    def _tool_function(self, state):
        self.seen.append("tool")
        return super()._tool_function(state)

    def _create_initial_responder(self, prompt=None):
        self.seen.append("draft")
        return super()._create_initial_responder(prompt)


def test_a_wrapped_tool_function_keeps_the_runs_row_cap(movies_db):
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)])
    agent = Logging(conversation_factory=lambda: model, database=movies_db, checkpointer=None)
    result = agent.execute("Tom Hanks movies?", context={"row_cap": 2})
    assert "tool" in agent.seen and "draft" in agent.seen
    assert len(result.tool_result) == 2 and result.truncated  # the run's cap, not the agent's 100


def test_a_wrapped_responder_uses_the_model_the_run_names(movies_db, monkeypatch):
    named = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY, 9)])
    own = ScriptedChatModel()  # must not be called
    monkeypatch.setattr("reflexion_agents.nodes.models.run_models.chat_model_from_env", lambda name: named)
    agent = Logging(conversation_factory=lambda: own, database=movies_db, checkpointer=None)
    assert agent.execute("Tom Hanks movies?", context={"model": "openai:named"}).tool_result
    assert own.calls == [] and len(named.calls) == 2


def test_a_run_started_read_only_stays_so_under_a_wrapping_agent_allowed_to_write(movies_db):
    before, saver = graph_fingerprint(movies_db), InMemorySaver()
    write = "CREATE (:Person {name: 'Intruder'}) RETURN 1 AS done"
    model = ScriptedChatModel(replies=[draft(write), keep(write, 9)])
    paused = Logging(
        conversation_factory=lambda: model, database=movies_db, checkpointer=saver, require_approval=True
    ).execute("Add a person")  # read-only, paused before its query
    writer = Logging(conversation_factory=lambda: model, database=movies_db, checkpointer=saver, allow_writes=True)
    done = writer.resume(paused.thread_id, "approve")
    assert done.error and "writes are not enabled" in str(done.outcomes[0].error)
    assert graph_fingerprint(movies_db) == before
