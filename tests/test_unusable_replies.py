"""Replies the reply fuzzer (`tests/test_reply_fuzzer.py`) found crashing or ending runs too early,
each through the real `ChatOpenAI` client and the loopback stub.

- A lone surrogate (`"\\ud800"`, valid JSON) in a query is refused with the reason before any
  database sees it (redis-py raised UnicodeEncodeError mid-command), the model is shown U+FFFD
  where it wrote one (the client could not send it back), and the run goes on.
- Tool-call arguments that are JSON but not an object (`1`, `"text"`, `[1, 2]`), which the client
  raises on, get the corrective retry malformed JSON gets, in every agent and flow.
- A usage block a proxy garbled (`"prompt_tokens": "many"`, `-5`, `1e300`), which the client
  passes on unchecked, counts as 0 tokens instead of ending the run in the node that copied it.
- Arguments nested thousands of levels deep (past Python's recursion limit) are refused with
  the reason and retried, like malformed JSON.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.output_parsers import PydanticToolsParser
from langchain_core.runnables import RunnableLambda
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.sqlite import SqliteSaver

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.graphs.react_agent import ReActAgent
from reflexion_agents.graphs.structured_output_agent import StructuredOutputReflectionAgent
from reflexion_agents.graphs.text2cypher_flow import Text2CypherFlow
from reflexion_agents.nodes.common.responder_with_retries import ResponderWithRetries, reply_from_output
from reflexion_agents.nodes.graphdb import Neo4jGraph
from reflexion_agents.nodes.models.wire import MAX_ARGUMENT_DEPTH
from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS
from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
from reflexion_agents.nodes.tools.wikipedia_backends import LocalCorpus, MediaWikiAPI
from reflexion_agents.schemas.errors import CypherSyntaxError
from reflexion_agents.schemas.extraction import CarCollection
from reflexion_agents.schemas.kg_query import GenerateQuery
from tests.helpers import TOM_HANKS_QUERY, graph_fingerprint
from tests.neo4j_fakes import FakeDriver
from tests.openai_stub import OpenAIStub, StubReply, tool_names
from tests.wikipedia_stub import MediaWikiStub

HANKS_WITH_SURROGATE = TOM_HANKS_QUERY.replace("Tom Hanks", "Tom\ud800 Hanks")
NOT_OBJECTS = ["1", '"text"', "[1, 2]", "true"]


def chat(stub: OpenAIStub) -> ChatOpenAI:
    return ChatOpenAI(model="stub", api_key="test", base_url=stub.base_url, max_retries=0)


def ask_retry_flow(replies: Any, db: Any) -> tuple[Any, OpenAIStub]:
    """The retry flow's answer to the Tom Hanks question through the real client, with the stub
    that served `replies` (its requests kept)."""
    with OpenAIStub(replies) as stub:
        model = chat(stub)
        flow = Text2CypherFlow(
            "retry", conversation_factory=lambda: model, database=db, fewshots=False, checkpointer=None
        )
        return flow.ask("Which movies did Tom Hanks act in?"), stub


def in_order(*replies: StubReply) -> Callable[[dict[str, Any]], StubReply]:
    """The replies in order, then the last one again."""
    queue = list(replies)
    return lambda request: queue.pop(0) if len(queue) > 1 else queue[0]


def kg_draft(args: Any) -> StubReply:
    return {"tool": "GenerateQuery", "args": args}


def kg_good_draft(query: str = TOM_HANKS_QUERY) -> StubReply:
    return kg_draft({"answer": query, "reflection": "draft", "search_queries": []})


def kg_revise(query: str, score: int = 9) -> StubReply:
    args = {"answer": "", "reflection": "fixed", "revised_query": query, "score": score}
    return {"tool": "ReviseQuery", "args": args}


def kg_agent(stub: OpenAIStub, movies_db: Any, checkpointer: Any = None) -> KGQueryReflexionAgent:
    model = chat(stub)
    return KGQueryReflexionAgent(lambda: model, database=movies_db, checkpointer=checkpointer)


@pytest.mark.parametrize("surrogate", ["\ud800", "\udfff"])
def test_a_lone_surrogate_in_a_query_is_refused_saying_why_before_a_database_sees_it(movies_db, surrogate):
    query = TOM_HANKS_QUERY.replace("Tom Hanks", f"Tom{surrogate} Hanks")
    where = rf"lone surrogate \(U\+{ord(surrogate):04X}, character {query.index(surrogate) + 1}\)"
    before = graph_fingerprint(movies_db)
    for run in (movies_db.query, movies_db.validate):
        with pytest.raises(CypherSyntaxError, match=where):
            run(query)
    driver = FakeDriver()
    with pytest.raises(CypherSyntaxError, match=where):
        Neo4jGraph(driver=driver).query(query)
    assert driver.queries == [] and graph_fingerprint(movies_db) == before


def test_the_kg_agent_tells_the_model_its_query_was_refused_and_the_run_goes_on(movies_db):
    with OpenAIStub(in_order(kg_good_draft(HANKS_WITH_SURROGATE), kg_revise(TOM_HANKS_QUERY))) as stub:
        result = kg_agent(stub, movies_db).execute("Which movies did Tom Hanks act in?")
    first, second = result.outcomes
    assert "lone surrogate (U+D800" in first.error and not first.rows
    assert ["Cast Away"] in second.rows and result.stop_reason in ("score_threshold", "non_empty_result")
    # the refusal reached the model, its own query shown with U+FFFD where it wrote the surrogate
    sent = stub.requests[1]["messages"]
    assert "lone surrogate" in sent[-1]["content"]
    call = next(m for m in sent if m.get("tool_calls"))["tool_calls"][0]
    assert "Tom\ufffd Hanks" in call["function"]["arguments"]


@pytest.mark.parametrize("args", NOT_OBJECTS)
def test_kg_arguments_that_are_not_an_object_are_retried_with_the_reason(movies_db, args):
    with OpenAIStub(in_order(kg_draft(args), kg_good_draft(), kg_revise(TOM_HANKS_QUERY))) as stub:
        result = kg_agent(stub, movies_db).execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason in ("score_threshold", "non_empty_result")
    assert ["Cast Away"] in result.tool_result
    assert result.usage.llm_calls == 3  # the refused reply counts as a call
    feedback = stub.requests[1]["messages"][-1]["content"]
    assert f"the tool call arguments are {args} (" in feedback
    assert "not a JSON object of named arguments" in feedback


def test_a_flow_retries_non_object_arguments_and_a_blank_summary_and_corrects_a_refused_query(movies_db):
    replies = in_order(
        {"tool": "GuardrailDecision", "args": {"answerable": True, "reason": "movies"}},
        {"tool": "CypherQuery", "args": '"MATCH (n) RETURN n"'},  # a bare JSON string: retried
        {"tool": "CypherQuery", "args": {"cypher": HANKS_WITH_SURROGATE}},  # refused when run: corrected
        {"tool": "CypherQuery", "args": {"cypher": TOM_HANKS_QUERY}},
        {"tool": "Summary", "args": {"answer": "  "}},  # blank: retried
        {"tool": "Summary", "args": {"answer": "Cast Away, among 12 movies.\udfff"}},
    )
    result, stub = ask_retry_flow(replies, movies_db)
    assert result.stop_reason == "answered" and len(result.rows) == 12
    assert "lone surrogate (U+D800" in result.attempts[0].error
    assert result.answer == "Cast Away, among 12 movies.\ufffd"  # text for people: printable
    assert "not a JSON object" in stub.requests[2]["messages"][-1]["content"]
    assert "the answer is blank" in stub.requests[5]["messages"][-1]["content"]


def test_biochatter_style_responders_retry_non_object_arguments_too():
    with OpenAIStub(in_order(kg_draft("1"), kg_good_draft())) as stub:
        model = chat(stub).bind_tools([GenerateQuery], tool_choice="GenerateQuery")
        runnable = RunnableLambda(lambda request: request["messages"]) | model
        responder = ResponderWithRetries(runnable, PydanticToolsParser(tools=[GenerateQuery]))
        reply = reply_from_output(responder, responder.respond([HumanMessage("Tom Hanks movies?")]))
    assert reply.parsed.answer == TOM_HANKS_QUERY and reply.usage.llm_calls == 2
    assert "not a JSON object of named arguments" in stub.requests[1]["messages"][-1]["content"]


@pytest.mark.integration
@pytest.mark.parametrize("args", NOT_OBJECTS)
def test_react_and_extraction_turn_non_object_arguments_into_a_step_the_model_corrects(args):
    react = in_order(
        {"tool": "multiply", "args": args},
        {"tool": "finish", "args": {"answer": ""}},
        {"tool": "finish", "args": {"answer": "42"}},
    )
    with OpenAIStub(react) as stub:
        model = chat(stub)
        result = ReActAgent(ARITHMETIC_TOOLS, lambda: model, checkpointer=None).execute("What is 6 times 7?")
    assert (result.stop_reason, result.answer) == ("finished", "42")
    assert "not a JSON object of named arguments" in result.steps[0].error
    assert "the answer is empty" in result.steps[1].error  # an empty finish is no answer
    cars = {"cars": [{"brand": "Fiat", "model": "Panda", "power": 45}]}
    extractions = in_order({"tool": "CarCollection", "args": args}, {"tool": "CarCollection", "args": cars})
    with OpenAIStub(extractions) as stub:
        model = chat(stub)
        agent = StructuredOutputReflectionAgent(CarCollection, lambda: model, checkpointer=None)
        extraction = agent.extract("A Fiat Panda, 45Hp.")
    assert extraction.ok and "not a JSON object" in extraction.attempts[0].error


def test_the_llm_fallback_answers_with_a_lone_surrogate_and_the_run_finishes():
    def reply(request: dict[str, Any]) -> StubReply:
        last = request["messages"][-1]
        if not tool_names(request):  # the fallback's own call
            return {"text": "Paris\ud800"}
        if last["role"] == "user":
            return {"tool": "llm_tool", "args": {"input": "The capital of France?\udfff"}}
        return {"tool": "finish", "args": {"answer": last["content"]}}

    with OpenAIStub(reply) as stub:
        model = chat(stub)
        agent = ReActAgent(ARITHMETIC_TOOLS, lambda: model, add_llm_as_fallback=True, checkpointer=None)
        result = agent.execute("What is the capital of France?")
    assert (result.stop_reason, result.answer) == ("finished", "Paris\ufffd")
    assert stub.requests[1]["messages"][0]["content"] == "The capital of France?\ufffd"


def test_a_surrogate_survives_the_sqlite_checkpointer_and_a_utf8_log_file(movies_db, tmp_path, capfd):
    handler = logging.FileHandler(tmp_path / "agent.log", encoding="utf-8")
    engine_log = logging.getLogger("reflexion_agents.graphs.loop")
    engine_log.addHandler(handler)
    engine_log.setLevel(logging.INFO)
    replies = in_order(
        kg_good_draft(HANKS_WITH_SURROGATE),
        kg_revise(HANKS_WITH_SURROGATE, score=2),
        kg_revise(TOM_HANKS_QUERY),
    )
    try:
        with OpenAIStub(replies) as stub:
            saver = SqliteSaver(sqlite3.connect(tmp_path / "checkpoints.sqlite", check_same_thread=False))
            agent = kg_agent(stub, movies_db, checkpointer=saver)
            result = agent.execute("Which movies did Tom Hanks act in?", thread_id="surrogate-thread")
    finally:
        engine_log.removeHandler(handler)
        handler.close()
    assert ["Cast Away"] in result.tool_result
    assert agent.resume("surrogate-thread").stop_reason == result.stop_reason  # read back from SQLite
    assert "Logging error" not in capfd.readouterr().err
    assert "Tom\ufffd Hanks" in (tmp_path / "agent.log").read_text(encoding="utf-8")


def test_a_search_no_request_can_carry_is_an_observation_not_a_crash():
    with MediaWikiStub(LocalCorpus.from_file()) as stub:
        tools = WikipediaTools(MediaWikiAPI(stub.api_url))
        for query in ("x" * 1_000_000, "Milhouse\ud800"):
            observation = tools.search(query)
            assert observation.error and "cannot be asked of Wikipedia" in observation.error


ABSURD_USAGES = [
    {"prompt_tokens": "many", "completion_tokens": None, "total_tokens": "x"},
    {"prompt_tokens": -5, "completion_tokens": -1, "total_tokens": -6},
    {"prompt_tokens": 1e300, "completion_tokens": 3.7, "total_tokens": 10**40},
]


@pytest.mark.parametrize("usage", ABSURD_USAGES)
def test_a_garbled_usage_block_counts_no_tokens_and_the_run_goes_on(movies_db, usage):
    good = {"tool": "CypherQuery", "args": {"cypher": TOM_HANKS_QUERY}}
    replies = in_order(
        {"tool": "GuardrailDecision", "args": {"answerable": True, "reason": "movies"}, "usage": usage},
        {**good, "usage": usage},
        {"tool": "Summary", "args": {"answer": "Cast Away, among 12 movies."}, "usage": usage},
    )
    result, _ = ask_retry_flow(replies, movies_db)
    assert result.stop_reason == "answered" and len(result.rows) == 12
    assert result.usage.llm_calls == 3
    assert 0 <= result.usage.total_tokens <= 10**9 * 3


@pytest.mark.parametrize("depth", [100, 950, 5000])
def test_arguments_nested_past_the_recursion_limit_are_retried_with_the_reason(movies_db, depth):
    nested = '{"a": ' * depth + "1" + "}" * depth
    with OpenAIStub(in_order(kg_draft(nested), kg_good_draft(), kg_revise(TOM_HANKS_QUERY))) as stub:
        result = kg_agent(stub, movies_db).execute("Which movies did Tom Hanks act in?")
    assert result.stop_reason in ("score_threshold", "non_empty_result")
    assert ["Cast Away"] in result.tool_result and result.usage.llm_calls == 3
    feedback = stub.requests[1]["messages"][-1]["content"]
    assert f"nest deeper than {MAX_ARGUMENT_DEPTH} levels" in feedback
