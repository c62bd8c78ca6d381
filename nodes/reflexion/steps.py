"""State updates made by the engine's three nodes, independent of any particular tool.

The agent class supplies the hooks (responders, the tool, how to read a score);
these functions turn their results into typed state updates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from pydantic import BaseModel

from reflexion_agents.nodes.common.responder import ResponderReply
from reflexion_agents.nodes.reflexion.stop_rules import already_ran, judged_index
from reflexion_agents.schemas.reflexion import StopReason, TokenUsage, ToolOutcome, ToolRun

# Fields an action can be read from, most specific first (revisions also repeat `answer`).
ACTION_FIELDS = ("revised_query", "revised_answer", "answer")


def action_from_args(args: Mapping[str, Any]) -> str:
    """The action a draft or revision proposes: its revised action, else its answer."""
    for name in ACTION_FIELDS:
        if args.get(name):
            return str(args[name])
    return ""


def latest_action(messages: Sequence[BaseMessage]) -> str:
    """The action of the newest assistant tool call in the memory."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            return action_from_args(message.tool_calls[-1]["args"])
    return ""


def last_tool_call_id(messages: Sequence[BaseMessage]) -> str:
    """The id of the newest assistant tool call, which the next ToolMessage answers."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.tool_calls:
            return message.tool_calls[-1]["id"] or "call_none"
    return "call_none"


def outcomes_of(state: Mapping[str, Any]) -> list[ToolOutcome]:
    return [ToolOutcome.model_validate(o) for o in state.get("outcomes") or []]


def usage_of_state(state: Mapping[str, Any]) -> TokenUsage:
    return TokenUsage.model_validate(state.get("usage") or {})


def _usage_after(state: Mapping[str, Any], reply: ResponderReply) -> dict[str, int]:
    return (usage_of_state(state) + reply.usage).model_dump()


def default_action_of(parsed: BaseModel) -> str:
    return action_from_args(parsed.model_dump())


def fresh_run(usage: TokenUsage | None = None) -> dict[str, Any]:
    """Every per-run field at its start value, so a thread can take a new question."""
    return {
        "steps": 0,
        "outcomes": [],
        "last_score": None,
        "repeats": 0,
        "stop_reason": None,
        "error": None,
        "usage": (usage or TokenUsage()).model_dump(),
        "action": None,
        "parsed_action": None,
        "notice": None,
        # the answer of the thread's last run, until this one's `reply` writes its own
        "answer": None,
        "query": None,
        "columns": None,
        "rows": None,
    }


def draft_update(reply: ResponderReply, action_of: Callable[[BaseModel], str] = default_action_of) -> dict[str, Any]:
    """Start a run with the draft's reply (or the reason there is none)."""
    update = fresh_run(reply.usage)
    if reply.parsed is None or reply.message is None:
        return {**update, "stop_reason": "model_error", "error": f"draft: {reply.error}"}
    return {
        **update,
        "messages": [reply.message],
        "action": action_of(reply.parsed),
        "parsed_action": reply.parsed.model_dump(),
    }


def skipped_tool_run(state: Mapping[str, Any], key: Callable[[str], str], noun: str) -> ToolRun | None:
    """A tool step telling the model its action (a `noun`) already ran, or None if it is new; `key`
    says what makes two actions the same."""
    earlier_step = already_ran(state.get("action"), state.get("outcomes") or [], key)
    if earlier_step is None:
        return None
    content = (
        f"Not executed: this is the same {noun} that already ran at step {earlier_step}, "
        f"and it gave the result shown then. Write a different {noun}.\n{noun.capitalize()}: {state.get('action')}"
    )
    outcome = ToolOutcome(step=0, action=state.get("action") or "", executed=False, content=content)
    message = ToolMessage(
        content=content, tool_call_id=last_tool_call_id(state.get("messages") or []), artifact=outcome.model_dump()
    )
    return ToolRun(message=message, outcome=outcome)


def unavailable_tool_run(state: Mapping[str, Any], error: Exception) -> ToolRun:
    """The tool step for a tool that could not be reached at all."""
    outcome = ToolOutcome(
        step=0,
        action=state.get("action") or "",
        executed=False,
        content=f"Error: {error}",
        error=str(error),
        error_type=type(error).__name__,
    )
    message = ToolMessage(
        content=outcome.content,
        tool_call_id=last_tool_call_id(state.get("messages") or []),
        artifact=outcome.model_dump(),
    )
    return ToolRun(message=message, outcome=outcome)


def run_from_message(state: Mapping[str, Any], message: ToolMessage) -> ToolRun:
    """A tool step from a hook's ToolMessage; the outcome is read from its artifact, not its text."""
    if isinstance(message.artifact, (dict, ToolOutcome)):
        return ToolRun(message=message, outcome=ToolOutcome.model_validate(message.artifact))
    # a custom tool that returned plain text: non-empty text is a result
    text = str(message.content)
    outcome = ToolOutcome(
        step=0, action=state.get("action") or "", executed=True, non_empty=bool(text.strip()), content=text
    )
    return ToolRun(message=message, outcome=outcome)


def with_notice(run: ToolRun, notice: str | None) -> ToolRun:
    """The tool step with `notice` (why the engine did not take the last revision at its word) put
    before what the model reads; the notice is then spent."""
    if not notice:
        return run
    run.update = {**run.update, "notice": None}
    if not isinstance(run.message, ToolMessage):
        return run
    if run.outcome.executed:
        notice += " Your revised query was run instead; the score you give next must judge the result below."
    content = f"{notice}\n{run.message.content}"
    run.message = run.message.model_copy(update={"content": content})
    run.outcome = run.outcome.model_copy(update={"content": content})
    if isinstance(run.message.artifact, dict):
        run.message.artifact = {**run.message.artifact, "content": content}
    return run


def message_artifact(outcome: ToolOutcome) -> dict[str, Any]:
    """What a tool result's message keeps of its outcome: which step it is (the whole outcome is
    `outcomes[step - 1]`), and what the prompt view reads (did it run, fail, give rows). The message
    carries its text already; a second copy of the rows, the text and the check in every message
    would be stored again in every checkpoint of the thread."""
    return {
        "step": outcome.step,
        "executed": outcome.executed,
        "non_empty": outcome.non_empty,
        "error": outcome.error,
        "rows": len(outcome.rows),
    }


def tool_update(state: Mapping[str, Any], run: ToolRun, stop_reason: StopReason | None = None) -> dict[str, Any]:
    """Record a tool step: its message (with `message_artifact`), its numbered outcome, and what it cost."""
    step = state.get("steps", 0) + 1
    outcome = run.outcome.model_copy(update={"step": step})
    message = run.message
    if isinstance(message, ToolMessage):
        message = message.model_copy(update={"artifact": message_artifact(outcome)})
    update: dict[str, Any] = {
        **run.update,
        "messages": [message] if message is not None else [],
        "steps": step,
        "outcomes": [outcome.model_dump()],  # appended (schemas/state_channels.py)
        "repeats": 0 if outcome.executed else state.get("repeats", 0) + 1,
    }
    if run.usage is not None:
        update["usage"] = (usage_of_state(state) + run.usage).model_dump()
    if stop_reason:
        update.update(stop_reason=stop_reason, error=outcome.error)
    return update


def revise_update(
    state: Mapping[str, Any],
    reply: ResponderReply,
    score_of: Callable[[BaseModel], float | None],
    action_of: Callable[[BaseModel], str] = default_action_of,
    key: Callable[[str], str] = str.strip,
) -> dict[str, Any]:
    """Record a revision: its score goes onto the outcome it judged (the step that ran its query, when
    the newest step refused to run it again: `judged_index`); its action runs next."""
    if reply.parsed is None or reply.message is None:
        return {"usage": _usage_after(state, reply), "stop_reason": "model_error", "error": f"revise: {reply.error}"}
    score = score_of(reply.parsed)
    outcomes = state.get("outcomes") or []
    judged = judged_index(outcomes, key)
    update: dict[str, Any] = {
        "messages": [reply.message],
        "usage": _usage_after(state, reply),
        "action": action_of(reply.parsed),
        "parsed_action": reply.parsed.model_dump(),
        "last_score": score,
    }
    if judged is not None:  # the scored outcome, whole, in place of its step's (schemas/state_channels.py):
        update["outcomes"] = [{**outcomes[judged], "score": score}]  # a stream's reader gets whole outcomes
    return update


def stopped_tool_message(messages: Sequence[BaseMessage], why: str) -> ToolMessage | None:
    """Answers the last reply's tool call when nothing will run it (the loop stopped, or a new
    question came while a run waited for approval), so the memory stays a valid tool conversation
    that a thread can continue, and says why; None when the last reply called no tool (text
    protocols, or a call already answered), as there is nothing to answer."""
    last = messages[-1] if messages else None
    if not (isinstance(last, AIMessage) and last.tool_calls):
        return None
    return ToolMessage(
        content=f"Not executed: {why}.", tool_call_id=last_tool_call_id(messages), artifact={"stopped": why}
    )
