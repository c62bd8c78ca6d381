"""A biochatter 0.14.2 KG-agent subclass, written as biochatter's own test writes it, runs unchanged.

The scripted `invoke` runnables, the validators, the overridden database hooks, the positional
`super().__init__` call and the `.chat is None` conversation are biochatter's, and so is the answer
it expects (NARROWER). The difference is how it gets there: biochatter stops on WIDER's rows and
returns NARROWER, a revision that never ran; here rows end the run only once the revision keeps its
query, so NARROWER runs, the model keeps it, and the answer is a query that ran, with its rows.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import PydanticToolsParser

from reflexion_agents.graphs.engine import ResponderWithRetries
from reflexion_agents.graphs.kg_query_agent import GenerateQuery, KGQueryReflexionAgent, ReviseQuery

DRAFT = "MATCH (g:gene {name: 'EOMES'})-[:regulate]->(c:gene) RETURN DISTINCT c.name LIMIT 5"
WIDER = "MATCH (g:gene {name: 'EOMES'})-[]->(c) RETURN DISTINCT c.name, labels(c) LIMIT 5"
NARROWER = "MATCH (g:gene {name: 'EOMES'})-->(c:gene) RETURN DISTINCT c.name LIMIT 5;"


def _tool_message(name: str, args: dict[str, Any]) -> AIMessage:
    """As an OpenAI reply arrives: the raw `additional_kwargs` tool call and the parsed one."""
    call_id = "call_" + uuid.uuid4().hex[:20]
    raw = {"id": call_id, "function": {"arguments": json.dumps(args), "name": name}, "type": "function"}
    return AIMessage(
        content="",
        additional_kwargs={"tool_calls": [raw]},
        response_metadata={"token_usage": {"completion_tokens": 146, "prompt_tokens": 419, "total_tokens": 565}},
        tool_calls=[{"name": name, "args": args, "id": call_id}],
    )


class InitialResponder:
    def invoke(self, msg_obj: dict[str, list[BaseMessage]]) -> BaseMessage:
        return _tool_message(
            "GenerateQuery", {"answer": DRAFT, "reflection": "finds the regulated genes", "search_queries": [DRAFT]}
        )


class ReviseResponder:
    _enter_count = 0

    def invoke(self, msg_obj: dict[str, list[BaseMessage]]) -> BaseMessage:
        ReviseResponder._enter_count += 1
        if ReviseResponder._enter_count == 1:
            return _tool_message(
                "ReviseQuery",
                {
                    "answer": DRAFT,
                    "reflection": "no results; remove the relationship constraint",
                    "search_queries": [DRAFT],
                    "revised_query": WIDER,
                },
            )
        return _tool_message(
            "ReviseQuery",
            {
                "answer": NARROWER,
                "reflection": "flexible and gives the information",
                "search_queries": [NARROWER],
                "revised_query": NARROWER,
            },
        )


class KGQueryReflexionAgentMock(KGQueryReflexionAgent):
    _query_graph_db_count = 0

    def __init__(
        self,
        conversation_factory: Callable[..., Any],
        connection_args: dict[str, str],
        query_lang: str | None = "Cypher",
        recursion_limit: int | None = 20,
    ):
        super().__init__(
            conversation_factory,
            connection_args,
            query_lang,
            recursion_limit,
        )

    def _create_initial_responder(self, prompt: str | None = None) -> ResponderWithRetries:
        return ResponderWithRetries(runnable=InitialResponder(), validator=PydanticToolsParser(tools=[GenerateQuery]))

    def _create_revise_responder(self, prompt: str | None = None) -> ResponderWithRetries:
        return ResponderWithRetries(runnable=ReviseResponder(), validator=PydanticToolsParser(tools=[ReviseQuery]))

    def _connect_db(self):
        pass

    def _query_graph_database(self, query: str):
        KGQueryReflexionAgentMock._query_graph_db_count += 1
        if KGQueryReflexionAgentMock._query_graph_db_count == 1:
            return [[{"c.name": None}]]
        return [
            [
                {"c.name": None, "labels(c)": ["chr_chain"]},
                {"c.name": "EOMES-201", "labels(c)": ["coding_elements", "transcript"]},
                {"c.name": "EOMES-203", "labels(c)": ["coding_elements", "transcript"]},
                {"c.name": "EOMES-202", "labels(c)": ["coding_elements", "transcript"]},
                {"c.name": None, "labels(c)": ["ontology", "cell_line_or_tissue"]},
            ],
        ]


class ChatOpenAIMock:
    def __init__(self) -> None:
        self.chat = None


@pytest.fixture
def kgQueryAgent():  # biochatter's fixture name
    ReviseResponder._enter_count = 0
    KGQueryReflexionAgentMock._query_graph_db_count = 0
    return KGQueryReflexionAgentMock(
        connection_args={"host": "localhost", "port": "7687"},
        conversation_factory=lambda: ChatOpenAIMock(),
    )


def test_execute(kgQueryAgent):
    question = "What genes does EOMES primarily regulate?"
    agent_result = kgQueryAgent.execute(question=question)
    assert agent_result.answer == NARROWER  # biochatter's own assertion; here NARROWER also ran
    assert agent_result.stop_reason == "non_empty_result"
    assert agent_result.columns == ["c.name", "labels(c)"]
    assert ["EOMES-201", ["coding_elements", "transcript"]] in agent_result.tool_result
    # DRAFT, WIDER, then NARROWER ran; no database of the agent's own was touched
    assert KGQueryReflexionAgentMock._query_graph_db_count == 3
    assert agent_result.usage.llm_calls == 4 and agent_result.usage.total_tokens == 4 * 565


async def test_execute_async(kgQueryAgent):
    result = await kgQueryAgent.aexecute("What genes does EOMES primarily regulate?")
    assert result.answer == NARROWER and result.stop_reason == "non_empty_result"


def test_positional_arguments_in_the_old_order_are_refused_with_a_clear_error():
    from reflexion_agents.schemas.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="conversation_factory first"):
        KGQueryReflexionAgent({"backend": "falkordb"}, lambda: ChatOpenAIMock())


class WritingModelAgent(KGQueryReflexionAgentMock):
    """The same subclass, with a model whose revision tries to write."""

    def _create_revise_responder(self, prompt: str | None = None) -> ResponderWithRetries:
        class Writer:
            def invoke(self, msg_obj: dict[str, list[BaseMessage]]) -> BaseMessage:
                return _tool_message(
                    "ReviseQuery",
                    {
                        "answer": DRAFT,
                        "reflection": "",
                        "search_queries": [],
                        "revised_query": "MATCH (g:gene) DETACH DELETE g",
                    },
                )

        return ResponderWithRetries(runnable=Writer(), validator=PydanticToolsParser(tools=[ReviseQuery]))


def test_a_subclass_database_never_sees_a_write_query():
    KGQueryReflexionAgentMock._query_graph_db_count = 0
    agent = WritingModelAgent(lambda: ChatOpenAIMock(), {"host": "localhost", "port": "7687"}, "Cypher", 3)
    result = agent.execute("What genes does EOMES primarily regulate?")
    assert KGQueryReflexionAgentMock._query_graph_db_count == 1  # only the read draft reached the hook
    refused = [o for o in result.outcomes if o.error_type == "WriteQueryRefusedError"]
    assert refused and "DETACH" in refused[0].error


class InvalidThenValid:
    """A model whose first reply misses a required field: the validator's error goes back to it."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def invoke(self, msg_obj: dict[str, list[BaseMessage]]) -> BaseMessage:
        self.prompts.append(msg_obj["messages"])
        if len(self.prompts) == 1:
            return _tool_message("GenerateQuery", {"reflection": "forgot the query"})
        return _tool_message("GenerateQuery", {"answer": DRAFT, "reflection": "", "search_queries": []})


def test_responder_with_retries_feeds_the_validation_error_back_and_returns_the_ai_message():
    runnable = InvalidThenValid()
    responder = ResponderWithRetries(runnable=runnable, validator=PydanticToolsParser(tools=[GenerateQuery]))
    reply = responder.respond([])
    assert isinstance(reply, AIMessage) and reply.tool_calls[0]["args"]["answer"] == DRAFT
    assert "answer" in runnable.prompts[1][-1].content and "Field required" in runnable.prompts[1][-1].content
    assert responder.usage.llm_calls == 2


class RecordingLogger:
    """biochatter's `ReflexionAgentLogger` interface."""

    def __init__(self) -> None:
        self.logs = ""

    def log_step_message(self, step: int, node_name: str, output: BaseMessage) -> None:
        self.logs += f"{step} {node_name}\n"

    def log_final_result(self, final_result: Any) -> None:
        self.logs += f"final {final_result.answer}\n"


def test_an_agent_logger_hears_every_step_and_the_result_as_in_biochatter():
    ReviseResponder._enter_count = 0
    KGQueryReflexionAgentMock._query_graph_db_count = 0
    agent = KGQueryReflexionAgentMock(lambda: ChatOpenAIMock(), {"host": "localhost", "port": "7687"})
    agent.agent_logger = RecordingLogger()
    agent.execute("What genes does EOMES primarily regulate?")
    assert agent.get_logs().splitlines() == [
        "0 draft",
        "1 execute_tool",
        "1 revise",
        "2 execute_tool",
        "2 revise",
        "3 execute_tool",
        "3 revise",
        f"final {NARROWER}",
    ]


class UnreachableOwnDatabase(KGQueryReflexionAgentMock):
    """A subclass whose own database client cannot connect (biochatter's `_connect_db` raising)."""

    def _connect_db(self):
        raise ConnectionRefusedError("[Errno 111] Connection refused")


def test_a_subclass_database_that_cannot_connect_ends_the_run_before_any_model_call():
    ReviseResponder._enter_count = 0
    calls: list[Any] = []

    class Counting(UnreachableOwnDatabase):
        def _create_initial_responder(self, prompt: str | None = None) -> ResponderWithRetries:
            calls.append(prompt)
            return super()._create_initial_responder(prompt)

    result = Counting(lambda: ChatOpenAIMock(), {"host": "localhost", "port": "7687"}).execute("EOMES?")
    assert result.stop_reason == "tool_unavailable" and "Connection refused" in result.error and calls == []


class DiesMidRun(KGQueryReflexionAgentMock):
    """The subclass's database goes away after the first query, as a driver reports it."""

    def _query_graph_database(self, query: str):
        from neo4j.exceptions import ServiceUnavailable

        if KGQueryReflexionAgentMock._query_graph_db_count >= 1:
            raise ServiceUnavailable("Couldn't connect to localhost:7687")
        return super()._query_graph_database(query)


def test_a_subclass_database_that_goes_away_is_tool_unavailable_not_a_query_to_fix():
    ReviseResponder._enter_count = 0
    KGQueryReflexionAgentMock._query_graph_db_count = 0
    result = DiesMidRun(lambda: ChatOpenAIMock(), {"host": "localhost", "port": "7687"}).execute("EOMES?")
    assert result.stop_reason == "tool_unavailable" and result.steps == 2 and "unreachable" in result.error


class OwnToolFunction(KGQueryReflexionAgent):
    """A subclass that overrides the tool itself (biochatter's `_tool_function` hook), not the query
    hooks, and so never uses the agent's database, which here does not exist (port 1)."""

    _create_initial_responder = KGQueryReflexionAgentMock._create_initial_responder
    _create_revise_responder = KGQueryReflexionAgentMock._create_revise_responder

    def _tool_function(self, state: list[BaseMessage]):
        from langchain_core.messages import ToolMessage

        return ToolMessage(content="rows: EOMES-201", tool_call_id=state[-1].tool_calls[-1]["id"])


def test_a_subclass_with_its_own_tool_function_is_not_stopped_by_the_agents_database():
    ReviseResponder._enter_count = 0
    result = OwnToolFunction(lambda: ChatOpenAIMock(), {"host": "127.0.0.1", "port": "1"}, checkpointer=None).execute(
        "EOMES?"
    )
    assert result.stop_reason == "non_empty_result" and result.answer == NARROWER


class ReadsEveryField(OwnToolFunction):
    """biochatter's own `_tool_function` reads the draft's `search_queries`, which a model may leave
    empty (and our tool no longer asks for): the memory still holds every field of the reply."""

    def _create_initial_responder(self, prompt=None):
        class Empty:
            def invoke(self, _):
                return _tool_message("GenerateQuery", {"answer": DRAFT, "reflection": "", "search_queries": []})

        return ResponderWithRetries(runnable=Empty(), validator=PydanticToolsParser(tools=[GenerateQuery]))

    def _tool_function(self, state: list[BaseMessage]):
        call = state[-1].tool_calls[-1]
        args = call["args"]
        queries = args["search_queries"] if "search_queries" in args else args["query for graph database"]
        assert isinstance(queries, list) and isinstance(args["reflection"], str)
        if call["name"] == "GenerateQuery":
            assert queries == [] and args["answer"] == DRAFT
        return super()._tool_function(state)


def test_a_hook_reads_every_field_of_a_reply_that_left_some_empty():
    ReviseResponder._enter_count = 0
    result = ReadsEveryField(lambda: ChatOpenAIMock(), {"host": "127.0.0.1", "port": "1"}, checkpointer=None).execute(
        "EOMES?"
    )
    assert result.stop_reason == "non_empty_result" and result.error is None
