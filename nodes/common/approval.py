"""Human approval of a generated query before it runs (LangGraph `interrupt`).

The run pauses with a request naming the query; the person resumes it with one
of:

    "approve"  or {"action": "approve"}                 run the query as written
    {"action": "edit", "query": "MATCH ... RETURN ..."} run this query instead (still read-only)
    "reject"   or {"action": "reject", "reason": "..."} do not run it; the run stops ("rejected")

Anything else is read as a rejection that says what was expected: an unclear
answer never runs a query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

DECISION_HELP = (
    "resume with 'approve', 'reject', {'action': 'approve'}, {'action': 'edit', 'query': '...'} "
    "or {'action': 'reject', 'reason': '...'}"
)


@dataclass(frozen=True)
class Decision:
    action: Literal["approve", "edit", "reject"]
    query: str | None = None
    reason: str | None = None


def approval_request(question: str, query: str, step: int) -> dict[str, Any]:
    """What the paused run shows: the question, the query about to run, and how to answer."""
    return {"kind": "approve_query", "question": question, "query": query, "step": step, "how": DECISION_HELP}


def read_decision(value: Any) -> Decision:
    """The person's answer, read strictly (see the module docstring)."""
    if isinstance(value, str):
        value = {"action": value}
    if not isinstance(value, dict):
        return Decision("reject", reason=f"unrecognised approval {value!r}: {DECISION_HELP}")
    action = str(value.get("action", "")).strip().lower()
    if action == "approve":
        return Decision("approve")
    if action == "edit":
        query = value.get("query")
        if isinstance(query, str) and query.strip():
            return Decision("edit", query=query.strip())
        return Decision("reject", reason=f"an edit must carry a non-empty 'query': {DECISION_HELP}")
    if action == "reject":
        return Decision("reject", reason=str(value.get("reason") or "rejected by the reviewer"))
    return Decision("reject", reason=f"unrecognised approval {value!r}: {DECISION_HELP}")
