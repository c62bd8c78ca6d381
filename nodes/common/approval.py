"""Human approval of a generated query before it runs (LangGraph `interrupt`).

The run pauses with LangGraph's human-in-the-loop request, the one LangChain's
`HumanInTheLoopMiddleware` raises and agent-chat-ui and Agent Inbox render with approve, edit and
reject buttons:

    {"action_requests": [{"name": "run_cypher", "args": {"query": ...}, "description": ...}],
     "review_configs": [{"action_name": "run_cypher", "allowed_decisions": ["approve", "edit", "reject"]}],
     "action_request": {"action": "run_cypher", "args": {"query": ...}},
     "config": {"allow_accept": true, "allow_edit": true, "allow_ignore": true, "allow_respond": false},
     "description": ..., "kind": "approve_query", "question": ..., "query": ..., "step": ..., "how": ...}

(`action_request`, `config` and `description` are the earlier `HumanInterrupt`, which
create-agent-chat-app's templates and Agent Inbox read; the last five are what earlier clients of
this project read). A person resumes it with
LangGraph's decisions, as those clients send them:

    {"decisions": [{"type": "approve"}]}                                   run the query shown
    {"decisions": [{"type": "edit", "edited_action": {"name": "run_cypher", "args": {"query": "..."}}}]}
                                                                           run this query instead
    {"decisions": [{"type": "reject", "message": "..."}]}                  do not run it ("rejected")

a single decision (`{"type": "approve"}`), Agent Inbox's earlier responses (`[{"type": "accept"}]`,
`[{"type": "edit", "args": {"action": "run_cypher", "args": {"query": "..."}}}]`, `ignore`, or a
`response` whose text is the reason), or this project's own forms:

    "approve"  or {"action": "approve"}                 run the query shown
    {"action": "approve", "query": <the query shown>}   the same, naming what was approved: exactly
                                                        that text runs, whatever happened meanwhile
    {"action": "edit", "query": "MATCH ... RETURN ..."} run this query instead (still read-only)
    "reject"   or {"action": "reject", "reason": "..."} do not run it; the run stops ("rejected")

Anything else is read as a rejection that says what was expected: an unclear answer never runs a
query, and the answer says why it stopped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

#: The action a reviewer approves: the query tool, as the model calls it.
QUERY_ACTION = "run_cypher"
DECISION_HELP = (
    "resume with {'decisions': [{'type': 'approve'}]}, {'decisions': [{'type': 'edit', 'edited_action': "
    "{'name': 'run_cypher', 'args': {'query': '...'}}}]}, {'decisions': [{'type': 'reject', 'message': '...'}]}, "
    "or 'approve', 'reject', {'action': 'edit', 'query': '...'}, {'action': 'reject', 'reason': '...'}"
)


@dataclass(frozen=True)
class Decision:
    action: Literal["approve", "edit", "reject"]
    query: str | None = None  # an edit's query; for an approval, the query approved, when it is named
    reason: str | None = None


def naming_the_query(approval: Any, pending: Any) -> Any:
    """A plain approval, naming the query the paused run showed (`pending`, its request): what was
    approved runs, even if a new look at the graph would now repair the query otherwise."""
    shown = pending.get("query") if isinstance(pending, dict) else None
    decision = read_decision(approval)
    if decision.action == "approve" and decision.query is None and isinstance(shown, str):
        return {"action": "approve", "query": shown}
    return approval


def approval_request(question: str, query: str, step: int) -> dict[str, Any]:
    """What the paused run shows: LangGraph's human-in-the-loop request for the query about to run,
    described with the question, and the fields earlier clients read."""
    description = (
        f"Question: {question}\n\nThe read-only query about to run (step {step}):\n\n```cypher\n{query}\n```\n\n"
        "Approve it, edit the query, or reject it."
    )
    return {
        "action_requests": [{"name": QUERY_ACTION, "args": {"query": query}, "description": description}],
        "review_configs": [{"action_name": QUERY_ACTION, "allowed_decisions": ["approve", "edit", "reject"]}],
        # the earlier `HumanInterrupt`, which create-agent-chat-app's templates and Agent Inbox still read
        "action_request": {"action": QUERY_ACTION, "args": {"query": query}},
        "config": {"allow_accept": True, "allow_edit": True, "allow_ignore": True, "allow_respond": False},
        "description": description,
        "kind": "approve_query",
        "question": question,
        "query": query,
        "step": step,
        "how": DECISION_HELP,
    }


def read_decision(value: Any) -> Decision:
    """The person's answer, read strictly (see the module docstring)."""
    if isinstance(value, str):
        value = {"action": value}
    if isinstance(value, Mapping) and "decisions" in value:
        value = value["decisions"]
    if isinstance(value, list):  # LangGraph's decisions, or Agent Inbox's responses: one query, one answer
        if len(value) != 1:
            return _unrecognised(value, f"one decision was expected, got {len(value)}")
        value = value[0]
    if not isinstance(value, Mapping):
        return _unrecognised(value)
    if "type" in value:
        return _typed_decision(value)
    action = str(value.get("action", "")).strip().lower()
    if action == "approve":
        shown = value.get("query")
        return Decision("approve", query=shown.strip() if isinstance(shown, str) and shown.strip() else None)
    if action == "edit":
        return _edit(value.get("query"))
    if action == "reject":
        return Decision("reject", reason=str(value.get("reason") or "rejected by the reviewer"))
    return _unrecognised(value)


def _typed_decision(value: Mapping[str, Any]) -> Decision:
    """A LangGraph decision (`approve`, `edit`, `reject`; `respond` is not allowed here) or one of Agent
    Inbox's earlier responses (`accept`, `edit`, `ignore`, `response`)."""
    kind = str(value.get("type", "")).strip().lower()
    if kind in ("approve", "accept"):
        return Decision("approve")
    if kind == "edit":
        edited = value.get("edited_action") or value.get("args")  # LangGraph's, or Agent Inbox's
        args = edited.get("args") if isinstance(edited, Mapping) else None
        return _edit(args.get("query") if isinstance(args, Mapping) else None)
    if kind == "reject":
        return Decision("reject", reason=str(value.get("message") or "rejected by the reviewer"))
    if kind == "ignore":
        return Decision("reject", reason="the reviewer ignored the query")
    if kind in ("response", "respond"):
        text = value.get("args") if kind == "response" else value.get("message")
        return Decision("reject", reason=f"the reviewer answered instead of approving: {text}")
    return _unrecognised(value)


def _edit(query: Any) -> Decision:
    if isinstance(query, str) and query.strip():
        return Decision("edit", query=query.strip())
    return Decision("reject", reason=f"an edit must carry a non-empty 'query': {DECISION_HELP}")


def _unrecognised(value: Any, why: str = "") -> Decision:
    said = f" ({why})" if why else ""
    return Decision("reject", reason=f"unrecognised approval {value!r}{said}: {DECISION_HELP}")
