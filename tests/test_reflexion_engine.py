"""The abstract engine with a tool of its own: the hooks of biochatter's abstract `ReflexionAgent`
(`_tool_function`, `_create_initial_responder`, ...) are called and the loop is generic."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel, Field

from reflexion_agents.graphs.engine import ReflexionAgent
from reflexion_agents.nodes.common.responder import Responder
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.reflexion.steps import last_tool_call_id


class Draft(BaseModel):
    """Propose an arithmetic expression."""

    answer: str


class Revision(BaseModel):
    """Score the result and propose a better expression."""

    answer: str = ""
    revised_answer: str
    score: str = Field(default="0")


class CalculatorAgent(ReflexionAgent):
    """Evaluates `a+b` expressions; plain-text tool messages (no artifact) are enough for the engine."""

    def __init__(self, model, **kwargs):
        super().__init__(lambda: model, **kwargs)
        self.logged: list[tuple[int, str]] = []
        self.finals = []

    def _tool_function(self, state: list[BaseMessage]) -> ToolMessage:
        expression = next(m for m in reversed(state) if isinstance(m, AIMessage)).tool_calls[-1]["args"]
        expression = expression.get("revised_answer") or expression["answer"]
        total = sum(int(x) for x in expression.split("+"))
        return ToolMessage(content=str(total) if total else "", tool_call_id=last_tool_call_id(state))

    def _create_initial_responder(self, prompt=None):
        return Responder(self.chat, Draft, prompt or "Write an expression.")

    def _create_revise_responder(self, prompt=None):
        return Responder(self.chat, Revision, "Revise it.")

    def _log_step_message(self, step, node, output):
        self.logged.append((step, node))

    def _log_final_result(self, output):
        self.finals.append(output)


def test_a_custom_tool_runs_through_the_same_loop_and_hooks():
    model = ScriptedChatModel(
        replies=[
            tool_reply("Draft", {"answer": "0+0"}),
            tool_reply("Revision", {"revised_answer": "2+3", "score": "1"}),
            tool_reply("Revision", {"revised_answer": "2+3", "score": "6"}),
        ]
    )
    agent = CalculatorAgent(model)
    result = agent.execute("make five")
    assert result.stop_reason == "non_empty_result" and result.answer == "2+3" and result.steps == 2
    assert agent.logged == [(0, "draft"), (1, "execute_tool"), (1, "revise"), (2, "execute_tool"), (2, "revise")]
    assert agent.finals == [result]


class OneShot(CalculatorAgent):
    """biochatter's `_should_continue` of a user's own: one revision, then the end."""

    def _should_continue(self, state):
        return "__end__"


def test_an_overridden_should_continue_routes_the_loop():
    model = ScriptedChatModel(
        replies=[tool_reply("Draft", {"answer": "0+0"}), tool_reply("Revision", {"revised_answer": "1+1"})]
    )
    result = OneShot(model).execute("q")
    assert result.steps == 1 and result.answer == "0+0"


def test_runs_are_checkpointed_per_thread():
    model = ScriptedChatModel(
        replies=[
            tool_reply("Draft", {"answer": "1+1"}),
            tool_reply("Revision", {"revised_answer": "1+1", "score": "6"}),
        ]
    )
    agent = CalculatorAgent(model, checkpointer=InMemorySaver())
    agent.execute("q", thread_id="t-1")
    saved = agent.graph.get_state({"configurable": {"thread_id": "t-1"}}).values
    assert saved["stop_reason"] == "non_empty_result"
    kinds = [type(m).__name__ for m in saved["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage", "AIMessage"]
    assert "loop stopped (non_empty_result)" in saved["messages"][-2].content
    # the last message answers, in words a chat shows: the action that ran, its result, why it stopped
    answer = saved["messages"][-1]
    assert not answer.tool_calls and "```\n1+1\n```" in answer.content
    assert "It returned:\n\n```\n2\n```" in answer.content  # a tool without rows: its text
    assert answer.content.endswith(
        "Stopped: the result was not empty, and the model kept what gave it without rejecting it (after 1 step)."
    )
    assert saved["answer"] == answer.content and saved["query"] == "1+1" and saved["rows"] == []
