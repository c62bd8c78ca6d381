"""Broken model replies end in a retry or a typed stop, never an uncaught exception."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.schemas.errors import WriteQueryRefusedError
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, keep, make_agent, revise


def run(movies_db, replies, **kwargs):
    agent, model = make_agent(movies_db, replies, **kwargs)
    return agent.execute("Which movies did Tom Hanks act in?"), model


def test_a_draft_without_tool_call_is_retried(movies_db):
    result, _ = run(
        movies_db,
        [AIMessage(content="Sure! Tom Hanks was in many films."), draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY)],
    )
    assert result.stop_reason == "non_empty_result" and result.usage.llm_calls == 3


def test_bad_json_arguments_are_retried(movies_db):
    broken = AIMessage(
        content="",
        invalid_tool_calls=[
            {"name": "GenerateQuery", "args": "{'answer':", "id": "c", "error": "bad", "type": "invalid_tool_call"}
        ],
    )
    result, _ = run(movies_db, [broken, draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY)])
    assert result.stop_reason == "non_empty_result"


def test_missing_fields_in_the_revision_are_retried(movies_db):
    result, _ = run(
        movies_db,
        [
            draft(EMPTY_QUERY),
            tool_reply("ReviseQuery", {"score": 3}),
            revise(TOM_HANKS_QUERY, 2),
            keep(TOM_HANKS_QUERY),
        ],
    )
    assert result.stop_reason == "non_empty_result" and result.steps == 2


def test_a_score_in_no_known_form_counts_as_no_score_and_one_in_words_is_read(movies_db):
    result, _ = run(movies_db, [draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, "high"), keep(TOM_HANKS_QUERY, "nine")])
    assert result.outcomes[0].score is None and result.outcomes[1].score == 9.0
    assert result.stop_reason == "score_threshold"


def test_a_model_that_never_complies_ends_with_model_error(movies_db):
    model = ScriptedChatModel(replies=[draft(EMPTY_QUERY)], default=AIMessage(content="no"))
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db, max_model_retries=1)
    result = agent.execute("q")
    assert result.stop_reason == "model_error" and "revise" in result.error
    assert result.answer == EMPTY_QUERY and result.tool_result == []  # the executed query is kept
    assert result.usage.llm_calls == 3


def test_a_draft_that_never_complies_ends_with_model_error_and_no_answer(movies_db):
    model = ScriptedChatModel(default=AIMessage(content="no"))
    result = KGQueryReflexionAgent(conversation_factory=lambda: model, database=movies_db).execute("q")
    assert result.stop_reason == "model_error" and result.answer is None and result.steps == 0


def test_conversation_objects_with_a_chat_attribute_are_accepted(movies_db):
    class Conversation:
        def __init__(self):
            self.chat = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY)])

    agent = KGQueryReflexionAgent(conversation_factory=Conversation, database=movies_db)
    assert agent.execute("q").stop_reason == "non_empty_result"


def test_a_factory_returning_something_else_is_a_clear_error(movies_db):
    agent = KGQueryReflexionAgent(conversation_factory=lambda: "gpt-4", database=movies_db)
    try:
        agent.execute("q")
    except Exception as e:
        assert type(e).__name__ == "ConfigurationError" and "chat model" in str(e)
    else:
        raise AssertionError("expected a ConfigurationError")


def test_a_database_that_is_down_is_a_typed_stop_before_any_model_call(tmp_path):
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), keep(TOM_HANKS_QUERY)])
    agent = KGQueryReflexionAgent(
        connection_args={"backend": "falkordb", "host": "127.0.0.1", "port": 1}, conversation_factory=lambda: model
    )
    result = agent.execute("q")
    assert result.stop_reason == "tool_unavailable" and "unreachable" in result.error
    assert result.answer is None and result.steps == 0
    assert model.calls == [] and result.usage.llm_calls == 0
    # With a kg_prompt given there is no schema to read: the database is still reached first.
    again = agent.execute("q", "The graph has (:Person)-[:ACTED_IN]->(:Movie).")
    assert again.stop_reason == "tool_unavailable" and model.calls == []


class NoCatalogueRights:
    """The movies graph seen by a user who may query it but not read its catalogue or schema
    (a Neo4j role without `db.labels`, say): those calls are refused, queries run."""

    def __init__(self, db) -> None:
        self.db, self.dialect = db, db.dialect

    def __getattr__(self, name):
        return getattr(self.db, name)

    def labels(self):
        raise WriteQueryRefusedError("Executing procedure is not allowed for user 'reader'")

    def schema(self, sample_size: int = 50):
        return self.labels()


@pytest.mark.parametrize("kg_prompt", [None, "The graph has (:Person)-[:ACTED_IN]->(:Movie)."])
def test_a_schema_that_cannot_be_read_does_not_stop_the_run(movies_db, kg_prompt):
    model = ScriptedChatModel(replies=[draft(TOM_HANKS_QUERY), revise(TOM_HANKS_QUERY, 9)])
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model, database=NoCatalogueRights(movies_db), checkpointer=None
    )
    result = agent.execute("Which movies did Tom Hanks act in?", kg_prompt)
    assert result.stop_reason == "score_threshold" and len(result.tool_result) == 12
