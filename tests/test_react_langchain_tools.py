"""ReActAgent takes LangChain tools as LangChain users write them (`@tool`, `StructuredTool`, a
`BaseTool` subclass) beside plain functions; the model sees each tool's own name, description and
schema, through the real `langchain-openai` client, and a tool's error is an observation."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import BaseTool, StructuredTool, Tool, ToolException, tool
from pydantic import BaseModel, Field

from reflexion_agents import ReActAgent
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.schemas.errors import ConfigurationError
from tests.openai_stub import OpenAIStub, multiply_then_finish


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


class AddArgs(BaseModel):
    a: int = Field(description="the first number")
    b: int = Field(description="the second number")


class Add(BaseTool):
    """A tool written as a class, as LangChain's docs show."""

    name: str = "add"
    description: str = "Add two integers."
    args_schema: type[BaseModel] = AddArgs

    def _run(self, a: int, b: int, **kwargs: Any) -> int:
        return a + b


def _divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolException("cannot divide by zero; divide by something else")
    return a / b


divide = StructuredTool.from_function(_divide, name="divide", description="Divide a by b.")


def test_the_model_sees_a_langchain_tools_own_schema_through_the_openai_client():
    from langchain_openai import ChatOpenAI

    with OpenAIStub(multiply_then_finish(6, 7)) as stub:
        model = ChatOpenAI(model="local", base_url=stub.base_url, api_key="not-needed", max_retries=0)
        result = ReActAgent([multiply, Add(), divide], lambda: model, checkpointer=None).execute("6*7?")
    assert result.answer == "42" and result.stop_reason == "finished"
    offered = {t["function"]["name"]: t["function"] for t in stub.requests[0]["tools"]}
    assert set(offered) == {"multiply", "add", "divide", "finish"}
    assert offered["add"]["description"] == "Add two integers."
    assert offered["add"]["parameters"]["properties"]["a"]["description"] == "the first number"


def test_a_tool_error_is_an_observation_and_the_loop_goes_on():
    model = ScriptedChatModel(
        replies=[
            tool_reply("divide", {"a": 1, "b": 0}),
            tool_reply("add", {"a": 2, "b": 3}),
            tool_reply("finish", {"answer": "5"}),
        ]
    )
    result = ReActAgent([divide, Add()], lambda: model, checkpointer=None).execute("1/0, then 2+3?")
    assert result.answer == "5" and result.stop_reason == "finished"
    told = str(model.calls[1][-1].content)
    assert "cannot divide by zero" in told  # the model read the tool's own error


def test_a_model_without_tool_calling_is_shown_the_tools_signature_from_its_schema():
    agent = ReActAgent([Add(), multiply], ScriptedChatModel, native_tool_calls=False, checkpointer=None)
    assert "add(a: int, b: int)\nAdd two integers." in agent.system_prompt
    assert "multiply(a: int, b: int)" in agent.system_prompt


def test_a_tool_with_only_an_async_body_is_refused_by_name():
    async def slow(x: int) -> int:
        return x

    only_async = StructuredTool.from_function(coroutine=slow, name="slow", description="Wait.")
    with pytest.raises(ConfigurationError, match="'slow' has only an async body"):
        ReActAgent([only_async], ScriptedChatModel)


def test_a_tool_with_no_argument_schema_is_called_as_the_model_is_offered_it():
    """`Tool(name, func, description)`, LangChain's wrapper of a one-string function: the model is
    offered one parameter, `__arg1`, and a call by that name runs it."""
    search = Tool(name="search", func=lambda query: f"found {query}", description="Search the web.")
    model = ScriptedChatModel(
        replies=[tool_reply("search", {"__arg1": "cats"}), tool_reply("finish", {"answer": "done"})]
    )
    result = ReActAgent([search], lambda: model, checkpointer=None).execute("Find cats")
    assert result.answer == "done" and "found cats" in str(model.calls[1][-1].content)


def test_a_description_given_with_a_langchain_tool_is_the_one_the_model_is_offered():
    from reflexion_agents.nodes.tools.functions import FunctionTool

    wrapped = FunctionTool(Add(), description="Add two whole numbers, exactly.")
    model = ScriptedChatModel(replies=[tool_reply("finish", {"answer": "ok"})])
    ReActAgent([wrapped], lambda: model, checkpointer=None).execute("1+1?")
    offered = {t["function"]["name"]: t["function"]["description"] for t in model.bound_tools[0]}
    assert offered["add"] == "Add two whole numbers, exactly."
