"""Scores in every shape, and model replies that go wrong in every usual way."""

from __future__ import annotations

import math

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from reflexion_agents.nodes.common.responder import Responder, parse_reply
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.reflexion.scoring import parse_score
from reflexion_agents.schemas.kg_query import GenerateQuery, ReviseQuery


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (8, 8.0),
        (8.5, 8.5),
        ("8", 8.0),
        ("8.5", 8.5),
        ("8/10", 8.0),
        (" 4 / 5 ", 8.0),
        ("80%", 8.0),
        ("7 points", 7.0),
        ("eight", 8.0),
        ("Eight out of ten", 8.0),
        ("8 out of 10", 8.0),
        ("Score: 9", 9.0),
        ("9.", 9.0),
        (0, 0.0),
        (10, 10.0),
    ],
)
def test_scores_are_read_from_numbers_and_strings(raw, expected):
    assert parse_score(raw) == pytest.approx(expected)


@pytest.mark.parametrize("raw", ["eighty", "", None, "8/0", "-1", 11, math.nan, True, "high", [8], {"score": 8}])
def test_unreadable_scores_are_no_score(raw):
    assert parse_score(raw) is None


def test_a_tool_call_reply_is_parsed():
    parsed, call_id, error = parse_reply(tool_reply("GenerateQuery", {"answer": "MATCH (n) RETURN n"}), GenerateQuery)
    assert error is None and parsed.answer == "MATCH (n) RETURN n" and call_id


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"answer": "MATCH (n) RETURN n", "reflection": "r"}\n```',
        'Here is my query: {"answer": "MATCH (n) RETURN n"} hope it helps',
        '{"name": "GenerateQuery", "args": {"answer": "MATCH (n) RETURN n"}}',
    ],
)
def test_json_written_as_text_is_accepted(text):
    parsed, _, error = parse_reply(AIMessage(content=text), GenerateQuery)
    assert error is None and parsed.answer == "MATCH (n) RETURN n"


@pytest.mark.parametrize(
    ("reply", "fragment"),
    [
        (AIMessage(content="I think you should look at the movies."), "no `GenerateQuery` tool call"),
        (
            AIMessage(
                content="",
                invalid_tool_calls=[
                    {
                        "name": "GenerateQuery",
                        "args": "{answer: oops",
                        "id": "c1",
                        "error": "bad json",
                        "type": "invalid_tool_call",
                    }
                ],
            ),
            "not valid JSON",
        ),
        (tool_reply("GenerateQuery", {"reflection": "no answer field"}), "answer: Field required"),
    ],
)
def test_unusable_replies_say_why(reply, fragment):
    parsed, _, error = parse_reply(reply, GenerateQuery)
    assert parsed is None and fragment in error


def test_a_bad_reply_is_retried_with_the_error_fed_back():
    model = ScriptedChatModel(
        replies=[AIMessage(content="no idea"), tool_reply("GenerateQuery", {"answer": "RETURN 1"})]
    )
    reply = Responder(model, GenerateQuery, "system").respond([HumanMessage(content="q")])
    assert reply.parsed.answer == "RETURN 1" and reply.usage.llm_calls == 2
    feedback = model.calls[1][-1]
    assert "could not be used" in feedback.content and "no idea" in feedback.content
    assert reply.message.tool_calls[0]["name"] == "GenerateQuery"


def test_retries_run_out_into_a_clear_error_not_an_exception():
    model = ScriptedChatModel(default=AIMessage(content="still no tool call"))
    reply = Responder(model, GenerateQuery, "system", max_retries=2).respond([HumanMessage(content="q")])
    assert reply.parsed is None and reply.usage.llm_calls == 3 and "no `GenerateQuery` tool call" in reply.error


def test_a_failing_model_call_is_reported():
    model = ScriptedChatModel(replies=[])  # raises on the first call
    reply = Responder(model, GenerateQuery, "system").respond([HumanMessage(content="q")])
    assert reply.parsed is None and "model call failed" in reply.error


def test_a_score_in_words_is_kept_as_written_and_read_as_a_number():
    reply = Responder(
        ScriptedChatModel(replies=[tool_reply("ReviseQuery", {"revised_query": "RETURN 1", "score": "eight"})]),
        ReviseQuery,
        "s",
    ).respond([])
    assert reply.parsed.score == "eight" and parse_score(reply.parsed.score) == 8.0
