"""The registered graphs behind the real LangGraph server (`reflexion serve`, as `make serve` starts it),
driven with the official `langgraph_sdk` client; the model is a local OpenAI-compatible stub and the
database the session's embedded FalkorDB."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_sync_client

from reflexion_agents.graphs import registry
from tests.helpers import (
    TOM_HANKS_QUERY,
    free_port,
    graph_fingerprint,
    last_query_shown,
    served_env,
    wait_until_serving,
)
from tests.openai_stub import OpenAIStub, tool_names

pytestmark = pytest.mark.server  # LangGraph's server and its SDK clients

OTHER_QUERY = "MATCH (m:Movie {title: 'The Matrix'})<-[:DIRECTED]-(p:Person) RETURN p.name AS director"
FLOW_REPLIES = {
    "GuardrailDecision": {"answerable": True, "reason": "movies"},
    "CypherQuery": {"cypher": TOM_HANKS_QUERY},
    "Evaluation": {"ok": True},
    "Summary": {"answer": "Tom Hanks acted in 12 movies, among them Cast Away."},
}


def model_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A knowledge-graph model for the KG agent and the flows, and a calculator for the ReAct agent."""
    tools = tool_names(request)
    last = request["messages"][-1]
    choice = request.get("tool_choice")
    forced = choice["function"]["name"] if isinstance(choice, dict) else None
    if forced in FLOW_REPLIES:  # a flow's structured step
        return {"tool": forced, "args": FLOW_REPLIES[forced]}
    if "GenerateQuery" in tools:
        asked = [m["content"] for m in request["messages"] if m["role"] == "user"][-1]
        query = OTHER_QUERY if "Matrix" in asked else TOM_HANKS_QUERY
        return {"tool": "GenerateQuery", "args": {"answer": query, "reflection": "draft", "search_queries": []}}
    if "ReviseQuery" in tools:  # satisfied: it keeps the query whose result it was shown
        kept = last_query_shown(request) or TOM_HANKS_QUERY
        return {
            "tool": "ReviseQuery",
            "args": {"answer": kept, "reflection": "fine", "revised_query": kept, "score": 9},
        }
    if last["role"] == "user":
        return {"tool": "multiply", "args": {"a": 6, "b": 7}}
    return {"tool": "finish", "args": {"answer": last["content"]}}


@pytest.fixture(scope="module")
def server(falkordb_server, movies_db, tmp_path_factory) -> Iterator[tuple[str, OpenAIStub]]:
    port = free_port()
    with OpenAIStub(model_reply) as stub:
        env = served_env(
            stub,
            falkordb_server,
            REFLEXION_DATA_DIR=str(tmp_path_factory.mktemp("server-data")),
            # the queue's own look once an hour: every run here starts because the queue is told of it
            REFLEXION_SERVER_POLL_S="3600",
        )
        log = (tmp_path_factory.mktemp("server-log") / "server.log").open("w")
        cwd = tmp_path_factory.mktemp("server-cwd")
        # a user's .env where the server starts: langgraph.json has the server read it
        (cwd / ".env").write_text("REFLEXION_MODEL=openai:named-in-dotenv\n")
        process = subprocess.Popen(
            [sys.executable, "-m", "reflexion_agents.graphs.cli", "serve", "--port", str(port)],
            cwd=cwd,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(process, f"{url}/ok", log.name)
            yield url, stub
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)  # a guard against a hang, not a bound
            log.close()


def assistant(client: Any, graph_id: str) -> str:
    return client.assistants.search(graph_id=graph_id)[0]["assistant_id"]


def test_every_registered_graph_is_served_with_input_output_and_context_schemas(server):
    url, _ = server
    client = get_sync_client(url=url)
    graphs = {a["graph_id"] for a in client.assistants.search(limit=50)}
    assert graphs == set(registry.names())
    kg = client.assistants.get_schemas(assistant(client, "kg_reflexion"))
    assert set(kg["input_schema"]["properties"]) == {"messages", "question", "prompt"}
    assert {"answer", "query", "columns", "rows", "stop_reason", "outcomes", "usage"} <= set(
        kg["output_schema"]["properties"]
    )
    assert {"model", "database_url", "graph", "max_steps", "require_approval"} <= set(
        kg["context_schema"]["properties"]
    )
    flow = client.assistants.get_schemas(assistant(client, "text2cypher_retry_evaluate"))
    assert set(flow["input_schema"]["properties"]) == {"question", "messages"}  # a chat client sends messages
    assert {"answer", "query", "rows", "messages", "stop_reason", "attempts"} <= set(
        flow["output_schema"]["properties"]
    )
    assert {"max_llm_calls", "database_url"} <= set(flow["context_schema"]["properties"])


def test_a_run_queued_behind_another_on_its_thread_starts_when_that_one_ends(server):
    """Runs start when they are created or when the run ahead of them ends, not at the queue's next
    look (an hour away here)."""
    url, _ = server
    client = get_sync_client(url=url)
    thread, kg = client.threads.create()["thread_id"], assistant(client, "kg_reflexion")
    question = {"messages": [{"role": "user", "content": "Which movies did Tom Hanks act in?"}]}
    first = client.runs.create(thread, kg, input=question)
    second = client.runs.create(thread, kg, input=question, multitask_strategy="enqueue")
    client.runs.join(thread, second["run_id"])
    ended = {run["run_id"]: run["status"] for run in client.runs.list(thread)}
    assert ended == {first["run_id"]: "success", second["run_id"]: "success"}


def test_the_server_reads_the_env_file_where_it_starts(server):
    url, stub = server
    client = get_sync_client(url=url)
    thread, before = client.threads.create()["thread_id"], len(stub.requests)
    client.runs.wait(thread, assistant(client, "kg_reflexion"), input={"messages": [{"role": "user", "content": "Hi"}]})
    asked = stub.requests[before:]
    assert asked and {r["model"] for r in asked} == {"named-in-dotenv"}  # REFLEXION_MODEL from .env


def test_the_kg_agent_runs_streams_keeps_state_and_continues_a_thread(server, movies_db):
    url, _ = server
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    kg = assistant(client, "kg_reflexion")
    nodes = [
        node
        for part in client.runs.stream(
            thread,
            kg,
            input={"messages": [{"role": "user", "content": "Which movies did Tom Hanks act in?"}]},
            stream_mode="updates",
        )
        if part.event == "updates"
        for node in part.data
    ]
    assert nodes[:3] == ["draft", "execute_tool", "revise"]
    state = client.threads.get_state(thread)["values"]
    assert state["stop_reason"] in ("score_threshold", "non_empty_result")
    assert ["Cast Away"] in state["outcomes"][0]["rows"], state["outcomes"]
    # the same thread takes a second question: the memory keeps the first exchange
    client.runs.wait(thread, kg, input={"messages": [{"role": "user", "content": "Who directed The Matrix?"}]})
    state = client.threads.get_state(thread)["values"]
    assert state["question"] == "Who directed The Matrix?"
    assert state["outcomes"][0]["action"] == OTHER_QUERY and ["Lana Wachowski"] in state["outcomes"][0]["rows"]
    questions = [m["content"] for m in state["messages"] if m["type"] == "human"]
    assert questions == ["Which movies did Tom Hanks act in?", "Who directed The Matrix?"]


def test_a_run_context_limits_the_run_and_approval_pauses_before_the_query(server, movies_db):
    url, _ = server
    client = get_sync_client(url=url)
    kg = assistant(client, "kg_reflexion")
    before = graph_fingerprint(movies_db)
    thread = client.threads.create()["thread_id"]
    client.runs.wait(
        thread,
        kg,
        input={"messages": [{"role": "user", "content": "Tom Hanks movies?"}]},
        context={"require_approval": True},
    )
    paused = client.threads.get_state(thread)
    assert paused["next"] == ["execute_tool"]
    request = paused["tasks"][0]["interrupts"][0]["value"]
    assert request["kind"] == "approve_query" and request["query"] == TOM_HANKS_QUERY
    assert request["action_requests"][0]["args"] == {"query": TOM_HANKS_QUERY}  # LangGraph's HITL request
    # the reviewer writes another query, as a chat client's edit button sends it; it runs (read-only)
    edit = {"type": "edit", "edited_action": {"name": "run_cypher", "args": {"query": OTHER_QUERY}}}
    client.runs.wait(thread, kg, command={"resume": {"decisions": [edit]}})  # the run keeps its context
    state = client.threads.get_state(thread)["values"]
    assert state["outcomes"][0]["action"] == OTHER_QUERY and ["Lana Wachowski"] in state["outcomes"][0]["rows"]
    # a write the reviewer "approves" is still refused: approval never turns writes on
    thread = client.threads.create()["thread_id"]
    client.runs.wait(
        thread,
        kg,
        input={"messages": [{"role": "user", "content": "Tom Hanks movies?"}]},
        context={"require_approval": True},
    )
    client.runs.wait(
        thread,
        kg,
        command={"resume": {"action": "edit", "query": "CREATE (:Person {name: 'X'})"}},
        context={"require_approval": True},
    )
    outcome = client.threads.get_state(thread)["values"]["outcomes"][0]
    assert outcome["error"] and not outcome["rows"], outcome
    assert graph_fingerprint(movies_db) == before


def test_the_react_agent_answers_through_the_server_with_a_per_run_step_limit(server):
    url, _ = server
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    react = "react_tools"  # a graph's name serves as its default assistant, as the README shows
    output = client.runs.wait(thread, react, input={"messages": [{"role": "user", "content": "What is 6 times 7?"}]})
    assert output["stop_reason"] == "finished" and output["outcomes"][-1]["content"] == "42"
    assert output["answer"] == "42" and output["messages"][-1] == {**output["messages"][-1], "type": "ai"}
    assert output["thread_id"] == thread  # the answer's contract: which thread to continue
    assert set(output) <= {
        *("messages", "question", "stop_reason", "steps", "outcomes", "last_score", "usage", "error"),
        *("answer", "query", "columns", "rows", "thread_id"),
    }
    # a run limited to one model turn by its context stops there, with the best answer so far
    client.runs.wait(
        thread,
        react,
        input={"messages": [{"role": "user", "content": "And 6 times 7 again?"}]},
        context={"max_steps": 1},
    )
    state = client.threads.get_state(thread)["values"]
    assert state["stop_reason"] == "max_steps" and state["steps"] == 1


def test_a_model_whose_provider_package_is_missing_reaches_the_client_by_name(server):
    url, stub = server
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    asked = len(stub.requests)
    with pytest.raises(Exception) as failed:
        client.runs.wait(
            thread,
            "kg_reflexion",
            input={"messages": [{"role": "user", "content": "Tom Hanks movies?"}]},
            context={"model": "anthropic:claude-sonnet-4-5"},
            raise_error=True,
        )
    assert "langchain-anthropic" in str(failed.value) and "An internal error occurred" not in str(failed.value)
    assert len(stub.requests) == asked  # no model was called


def test_the_api_description_is_served_offline(server):
    url, _ = server
    described = httpx.get(f"{url}/openapi.json", timeout=10).json()
    assert described["openapi"] and "/threads/{thread_id}/runs/wait" in described["paths"]


def test_a_bad_run_context_reaches_a_plain_http_client_with_its_message(server):
    """What curl or any HTTP client sees, without an SDK: the reason, not "An internal error occurred"."""
    url, stub = server
    asked = len(stub.requests)
    thread = httpx.post(f"{url}/threads", json={}, timeout=10).json()["thread_id"]
    answer = httpx.post(
        f"{url}/threads/{thread}/runs/wait",
        json={
            "assistant_id": "kg_reflexion",
            "input": {"messages": [{"role": "user", "content": "Tom Hanks movies?"}]},
            "context": {"database_url": "nosuchscheme://somewhere"},
        },
        timeout=60,
    )
    assert "nosuchscheme" in answer.text and "An internal error occurred" not in answer.text, answer.text
    assert len(stub.requests) == asked  # no model was called


def streamed_answer(client: Any, graph_id: str, question: str) -> tuple[str, dict[str, Any]]:
    """What a chat client shows: the AI message chunks of the `messages-tuple` stream, joined, as
    agent-chat-ui and Studio read them; and the run's output."""
    thread = client.threads.create()["thread_id"]
    said: dict[str, str] = {}
    for part in client.runs.stream(
        thread, graph_id, input={"messages": [{"role": "user", "content": question}]}, stream_mode="messages-tuple"
    ):
        if part.event == "messages":
            message, _ = part.data
            if message["type"] in ("ai", "AIMessageChunk") and isinstance(message["content"], str):
                said[message["id"]] = said.get(message["id"], "") + message["content"]
    shown = [text for text in said.values() if text]
    return shown[-1] if shown else "", client.threads.get_state(thread)["values"]


def test_a_chat_client_is_shown_each_graphs_answer_as_its_last_ai_message(server, movies_db):
    url, _ = server
    client = get_sync_client(url=url)
    shown, state = streamed_answer(client, "kg_reflexion", "Which movies did Tom Hanks act in?")
    assert f"```cypher\n{TOM_HANKS_QUERY}\n```" in shown and "| Cast Away |" in shown and "Stopped:" in shown
    assert state["messages"][-1]["type"] == "ai" and state["messages"][-1]["content"] == shown == state["answer"]
    assert ["Cast Away"] in state["rows"] and state["columns"] == ["title"] and state["query"] == TOM_HANKS_QUERY
    shown, state = streamed_answer(client, "text2cypher_retry_evaluate", "Which movies did Tom Hanks act in?")
    assert shown == FLOW_REPLIES["Summary"]["answer"] == state["answer"] and state["stop_reason"] == "answered"
    assert [m["type"] for m in state["messages"]] == ["human", "ai"] and len(state["rows"]) == 12
    shown, state = streamed_answer(client, "react_tools", "What is 6 times 7?")
    assert shown == "42" == state["answer"]


def test_an_unknown_context_field_is_refused_with_the_list_of_fields(server):
    """Through the Python SDK and through plain HTTP, as curl sends it: the run is refused, by name."""
    url, stub = server
    client = get_sync_client(url=url)
    asked = len(stub.requests)
    thread = client.threads.create()["thread_id"]
    with pytest.raises(Exception) as failed:
        client.runs.wait(
            thread,
            "kg_reflexion",
            input={"messages": [{"role": "user", "content": "Tom Hanks movies?"}]},
            context={"foo": 1, "max_steps": 2},
            raise_error=True,
        )
    said = str(failed.value)
    assert "unknown run context field 'foo'" in said and "max_steps" in said and "database_url" in said, said
    answer = httpx.post(
        f"{url}/runs/wait",
        json={"assistant_id": "text2cypher_naive", "input": {"question": "Tom Hanks?"}, "context": {"modle": "x"}},
        timeout=60,
    )
    assert "unknown run context field 'modle'" in answer.text and "model" in answer.text, answer.text
    assert len(stub.requests) == asked  # no model was called
    # a known field still passes, and a legacy client's config.configurable (copied into the context by
    # the server, with its own keys) is not refused
    output = client.runs.wait(
        None,
        "react_tools",
        input={"messages": [{"role": "user", "content": "What is 6 times 7?"}]},
        config={"configurable": {"max_steps": 3}},
    )
    assert output["answer"] == "42"


JS_CLIENT = Path(__file__).resolve().parent / "js"


def test_the_javascript_sdk_sees_each_error_by_its_message_and_the_answer_message(server):
    """The official JavaScript SDK (`make test` installs it where npm is), run under node: `runs.wait`
    and a `messages-tuple` stream, as a web chat client uses them."""
    if shutil.which("node") is None or not (JS_CLIENT / "node_modules" / "@langchain" / "langgraph-sdk").is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI must run the JavaScript SDK test: node, and `make test` installing tests/js")
        pytest.skip("node or the JavaScript SDK is not installed (make test installs it where npm is)")
    url, _ = server
    done = subprocess.run(
        ["node", "client_views.mjs", url], cwd=JS_CLIENT, capture_output=True, text=True, timeout=180, check=False
    )
    assert done.returncode == 0, done.stderr
    views = json.loads(done.stdout.strip().splitlines()[-1])
    assert "nosuchscheme" in views["waitBadDatabaseUrl"] and "ConfigurationError" in views["waitBadDatabaseUrl"]
    assert "unknown run context field 'foo'" in views["waitUnknownField"] and "max_steps" in views["waitUnknownField"]
    assert any("langchain-anthropic" in error for error in views["streamMissingProvider"]), views
    every_error = [views["waitBadDatabaseUrl"], views["waitUnknownField"], *views["streamMissingProvider"]]
    assert not any("An internal error occurred" in error for error in every_error), views
    assert f"```cypher\n{TOM_HANKS_QUERY}\n```" in views["chat"] and "| Cast Away |" in views["chat"]
    approval = views["approval"]  # approved as agent-chat-ui approves: {"decisions": [{"type": "approve"}]}
    assert approval["drawnWithButtons"] and approval["allowed"] == ["approve", "edit", "reject"], approval
    assert approval["query"] == TOM_HANKS_QUERY and approval["stopReason"] in ("score_threshold", "non_empty_result")
    assert ["Cast Away"] in approval["rows"], approval


def test_a_question_sent_over_a_run_left_paused_is_answered_as_itself(server, movies_db):
    """A client leaves a run paused for approval and sends the thread a new question: the new one is
    answered, and every request the model's server gets is a conversation OpenAI accepts (each tool
    call answered before the next turn), though the paused run's call was never decided."""
    url, stub = server
    client = get_sync_client(url=url)
    thread = client.threads.create()["thread_id"]
    client.runs.wait(
        thread,
        "kg_reflexion",
        input={"messages": [{"role": "user", "content": "Tom Hanks movies?"}]},
        context={"require_approval": True},
    )
    assert client.threads.get_state(thread)["next"] == ["execute_tool"]  # paused, and left so
    asked = len(stub.requests)
    output = client.runs.wait(
        thread, "kg_reflexion", input={"messages": [{"role": "user", "content": "Who directed The Matrix?"}]}
    )
    assert output["question"] == "Who directed The Matrix?" and output["query"] == OTHER_QUERY
    assert ["Lana Wachowski"] in output["rows"]
    for request in stub.requests[asked:]:
        sent = request["messages"]
        for i, message in enumerate(sent):
            for call in message.get("tool_calls") or []:
                answers = [m for m in sent[i + 1 :] if m["role"] == "tool" and m["tool_call_id"] == call["id"]]
                assert answers, f"tool call {call['id']} is never answered in {sent}"
