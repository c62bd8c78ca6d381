"""The tool-calling ReAct agent: native and JSON-in-text calls, tool errors, stop rules, customisation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from reflexion_agents.graphs.react_agent import ReActAgent
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.tools.arithmetic import ARITHMETIC_TOOLS, multiply
from reflexion_agents.nodes.tools.call_expression import FunctionExpression
from reflexion_agents.schemas.errors import ConfigurationError
from tests.openai_stub import OpenAIStub, tool_names

QUESTION = "What is 465 times 321 then add 95297 and then divide by 13.2?"


class TextOnlyModel(ScriptedChatModel):
    """A chat model with no native tool calling, as many local models are."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def as_json(thought: str, action: str) -> str:
    return f"```\n{json.dumps({'thought': thought, 'action': action})}\n```"


def make_agent(replies, model_class=ScriptedChatModel, **kwargs) -> tuple[ReActAgent, ScriptedChatModel]:
    model = model_class(replies=replies)
    return ReActAgent(ARITHMETIC_TOOLS, lambda: model, **kwargs), model


def test_the_arithmetic_question_is_solved_by_native_tool_calls():
    agent, model = make_agent(
        [
            tool_reply("multiply", {"a": 465, "b": 321}, "First multiply."),
            tool_reply("add", {"a": 149265, "b": 95297}),
            tool_reply("divide", {"a": 244562, "b": 13.2}),
            tool_reply("finish", {"answer": "18527.424242424244"}),
        ]
    )
    result = agent.execute(QUESTION)
    assert [s.observation for s in result.steps[:3]] == ["149265", "244562", "18527.424242424244"]
    assert float(result.steps[2].observation) == pytest.approx(18527.42, abs=0.005)
    assert (result.answer, result.finished, result.stop_reason) == ("18527.424242424244", True, "finished")
    assert result.steps[0].thought == "First multiply." and result.steps[0].args == {"a": 465, "b": 321}
    assert [t["function"]["name"] for t in model.bound_tools[0]] == ["multiply", "add", "divide", "finish"]
    # each observation answered its call, so the memory is a valid tool conversation
    last_prompt = model.calls[-1]
    calls = [m.tool_calls[0]["id"] for m in last_prompt if isinstance(m, AIMessage)]
    answers = [m.tool_call_id for m in last_prompt if isinstance(m, ToolMessage)]
    assert calls == answers


def test_a_model_without_tool_calling_writes_json_actions_parsed_without_eval():
    agent, model = make_agent(
        [
            as_json("multiply", "multiply(465, 321)"),
            "Let me add now: " + as_json("add", "add(a=149265, b=95297)") + " and then divide.",
            as_json("divide", "divide(a=244562, b=13.2)"),
            as_json("done", 'finish(answer="18527.42")'),
        ],
        model_class=TextOnlyModel,
    )
    result = agent.execute(QUESTION)
    assert result.answer == "18527.42" and result.stop_reason == "finished"
    assert result.steps[0].args == {"a": 465, "b": 321}  # positional arguments named by the signature
    assert (
        '"action": "FuncName(<kwargs>)' in agent.system_prompt
        and "multiply(a: int, b: int) -> int" in agent.system_prompt
    )
    assert model.calls[1][-1].content == "Observation: 149265"


@pytest.mark.parametrize(
    ("action", "error"),
    [
        ("__import__('os').system('touch /tmp/pwned')", "is not a call of a tool by name"),
        ("multiply(a=len('abc'), b=2)", "is not a literal value"),
        ("multiply(a=1, b=", "is not a valid call expression"),
        ("power(a=2, b=3)", "there is no tool named `power`; the tools are multiply, add, divide, finish"),
        ("multiply(a=1, b=2, c=3)", "multiply has no parameter 'c'; its parameters are a, b"),
        (
            "multiply(a='six', b=2)",
            "the arguments do not fit multiply(a: int, b: int) -> int: a: Input should be a valid integer",
        ),
        ("multiply(1, 2, 3)", "multiply takes 2 arguments (a, b), got 3 positional"),
    ],
)
def test_a_malformed_call_is_an_observation_and_the_loop_goes_on(action, error):
    agent, model = make_agent(
        [as_json("try", action), as_json("done", "finish(answer='gave up')")], model_class=TextOnlyModel
    )
    result = agent.execute("Compute something.")
    assert error in result.steps[0].error and result.steps[0].observation.startswith("Error: ")
    assert result.answer == "gave up" and result.stop_reason == "finished"
    assert error in model.calls[1][-1].content  # the model read the error


def test_a_reply_with_no_action_gets_a_corrective_observation():
    agent, model = make_agent(
        ["I think the answer is 42.", tool_reply("finish", {"answer": "42"})], model_class=ScriptedChatModel
    )
    result = agent.execute("What is six times seven?")
    assert result.steps[0].error.startswith("the reply has no action") and result.answer == "42"
    assert "tool_name(arg=value)" in model.calls[1][-1].content


def test_a_tool_that_raises_becomes_an_observation_with_the_error_text():
    def fetch_rate(currency: str) -> float:
        """Look up an exchange rate."""
        raise ConnectionError("rates.example is unreachable")

    model = ScriptedChatModel(
        replies=[
            tool_reply("divide", {"a": 1, "b": 0}),
            tool_reply("fetch_rate", {"currency": "EUR"}),
            tool_reply("finish", {"answer": "cannot tell"}),
        ]
    )
    result = ReActAgent([*ARITHMETIC_TOOLS, fetch_rate], lambda: model).execute("Convert 1/0 EUR.")
    assert result.steps[0].observation == "Error: ZeroDivisionError: float division by zero"
    assert result.steps[1].observation == "Error: ConnectionError: rates.example is unreachable"
    assert result.stop_reason == "finished"


def test_the_step_limit_ends_with_the_best_answer_so_far():
    agent, model = make_agent(
        [
            tool_reply("multiply", {"a": 465, "b": 321}),
            tool_reply("add", {"a": 149265, "b": 95297}),
            tool_reply("divide", {"a": 1, "b": 0}),
        ],
        max_steps=3,
    )
    result = agent.execute(QUESTION)
    assert (result.stop_reason, result.finished, result.answer) == ("max_steps", False, "244562")
    assert len(model.calls) == 3 and len(result.steps) == 3


def test_only_the_first_of_several_calls_runs_and_the_model_is_told():
    def two_calls(first: str, args: dict) -> AIMessage:
        reply = tool_reply(first, args)
        reply.tool_calls.append(tool_reply("add", {"a": 1, "b": 1}).tool_calls[0])
        return reply

    agent, model = make_agent([two_calls("multiply", {"a": 2, "b": 3}), two_calls("finish", {"answer": "6"})])
    result = agent.execute("2*3?")
    assert result.steps[0].observation == "6" and result.answer == "6"  # the note is not part of any result
    assert model.calls[1][-1].content == "6\n(Only the first tool call ran; call one tool at a time.)"
    assert [len(m.tool_calls) for m in model.calls[1] if isinstance(m, AIMessage)] == [1]


def test_the_llm_fallback_answers_from_the_model_and_counts_its_calls():
    agent, model = make_agent(
        [
            tool_reply("llm_tool", {"input": "What is the capital of France?"}),
            "The capital of France is Paris.",  # the fallback's own call
            tool_reply("finish", {"answer": "Paris"}),
        ],
        add_llm_as_fallback=True,
    )
    result = agent.execute("What is the capital of France?")
    assert result.steps[0].observation == "The capital of France is Paris." and result.answer == "Paris"
    assert result.usage.llm_calls == 3
    assert model.bound_tools[1] == []  # the fallback call had no tools bound


def test_template_examples_and_names_are_checked():
    example = FunctionExpression.from_function(multiply, "Now, let's multiply two numbers.", a=3, b=4)
    assert example.action == "multiply(a=3, b=4)"
    agent, _ = make_agent([], template="Tools:\n{tools}\n{examples}\n{output_format}", examples=[example])
    assert agent.system_prompt.startswith("Tools:\n<TOOLS>") and "Call: multiply(a=3, b=4)" in agent.system_prompt
    with pytest.raises(ConfigurationError, match="unknown fields"):
        make_agent([], template="{tools} {step_history}")
    with pytest.raises(Exception, match="does not fit multiply"):
        FunctionExpression.from_function(multiply, "bad", a=3, c=4)
    with pytest.raises(ConfigurationError, match="two tools are named 'finish'"):
        ReActAgent([_finish_clash], lambda: None)


def _finish_clash(answer: str) -> str:
    """A user tool that clashes with the built-in finish."""
    return answer


_finish_clash.__name__ = "finish"


def test_a_subclass_can_change_a_step():
    class Shouting(ReActAgent):
        def _run_tool(self, state, settings):
            run = super()._run_tool(state, settings)
            run.message.content = f"{run.message.content} (checked twice)"
            return run

    model = ScriptedChatModel(
        replies=[tool_reply("multiply", {"a": 6, "b": 7}), tool_reply("finish", {"answer": "42"})]
    )
    assert Shouting(ARITHMETIC_TOOLS, lambda: model).call("6*7?") == "42"
    assert model.calls[1][-1].content == "42 (checked twice)"


def test_a_thread_keeps_the_conversation_for_a_follow_up():
    agent, model = make_agent(
        [
            tool_reply("multiply", {"a": 6, "b": 7}),
            tool_reply("finish", {"answer": "42"}),
            tool_reply("add", {"a": 42, "b": 1}),
            tool_reply("finish", {"answer": "43"}),
        ],
        checkpointer=InMemorySaver(),
    )
    assert agent.call("What is 6 times 7?", thread_id="t") == "42"
    assert agent.call("Add one to that.", thread_id="t") == "43"
    contents = [m.content for m in model.calls[2][1:] if not isinstance(m, AIMessage)]
    assert contents == ["What is 6 times 7?", "42", "42", "Add one to that."]


def test_through_chat_openai_the_tools_are_bound_and_the_loop_solves_the_question(monkeypatch):
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        last = request["messages"][-1]
        if last["role"] == "user":
            return {"tool": "multiply", "args": {"a": 465, "b": 321}}
        value = float(last["content"])
        if value == 149265:
            return {"tool": "add", "args": {"a": 149265, "b": 95297}}
        if value == 244562:
            return {"tool": "divide", "args": {"a": 244562, "b": 13.2}}
        return {"tool": "finish", "args": {"answer": f"{value:.2f}"}}

    with OpenAIStub(reply) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        result = ReActAgent(ARITHMETIC_TOOLS, max_steps=6).execute(QUESTION)
    assert (result.answer, result.stop_reason, len(result.steps)) == ("18527.42", "finished", 4)
    assert tool_names(stub.requests[0]) == ["multiply", "add", "divide", "finish"]
    assert stub.requests[0]["tool_choice"] == "required"
    assert stub.requests[0]["tools"][0]["function"]["parameters"]["properties"]["a"]["type"] == "integer"


async def test_async_runs_match_sync_runs_and_report_each_step():
    script = [tool_reply("multiply", {"a": 6, "b": 7}), tool_reply("finish", {"answer": "42"})]
    agent, _ = make_agent(list(script))
    seen: list[tuple[int, str]] = []
    result = await agent.aexecute(
        "What is 6 times 7?", on_step=lambda step, node, message, update: seen.append((step, node))
    )
    sync = make_agent(list(script))[0].execute("What is 6 times 7?")
    assert result.thread_id and sync.thread_id and result.thread_id != sync.thread_id  # each run has its thread
    assert result.model_copy(update={"thread_id": None}) == sync.model_copy(update={"thread_id": None})
    assert seen == [(0, "draft"), (1, "execute_tool"), (1, "revise"), (2, "execute_tool")]


def test_a_deeply_nested_or_huge_action_is_refused_without_crashing_the_run():
    nested = "multiply(a=" + "(" * 1500 + "1" + ")" * 1500 + ", b=2)"
    agent, _ = make_agent(
        [
            as_json("x", nested),
            as_json("y", "add(a=" + "-" * 500 + "1, b=2)"),
            as_json("z", "x" * 5000),
            as_json("done", "finish(answer='ok')"),
        ],
        model_class=TextOnlyModel,
    )
    result = agent.execute("Nest.")
    assert result.answer == "ok" and all(step.error for step in result.steps[:3])
    assert "a call is at most 4000" in result.steps[2].error
