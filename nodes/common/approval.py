"""Human approval of a generated query before it runs (LangGraph `interrupt`).

The run pauses with a request naming the query; the person resumes it with one
of:

    "approve"  or {"action": "approve"}                 run the query shown
    {"action": "approve", "query": <the query shown>}   the same, naming what was approved: exactly
                                                        that text runs, whatever happened meanwhile
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
    query: str | None = None  # an edit's query; for an approval, the query approved, when it is named
    reason: str | None = None


def naming_the_query(approval: Any, pending: Any) -> Any:
    """A plain approval, naming the query the paused run showed (`pending`, its request): what was
    approved runs, even if a new look at the graph would now repair the query otherwise."""
    shown = pending.get("query") if isinstance(pending, dict) else None
    plain = approval == "approve" or (isinstance(approval, dict) and approval.get("action") == "approve")
    if plain and isinstance(shown, str) and not (isinstance(approval, dict) and approval.get("query")):
        return {**(approval if isinstance(approval, dict) else {"action": "approve"}), "query": shown}
    return approval


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
        shown = value.get("query")
        return Decision("approve", query=shown.strip() if isinstance(shown, str) and shown.strip() else None)
    if action == "edit":
        query = value.get("query")
        if isinstance(query, str) and query.strip():
            return Decision("edit", query=query.strip())
        return Decision("reject", reason=f"an edit must carry a non-empty 'query': {DECISION_HELP}")
    if action == "reject":
        return Decision("reject", reason=str(value.get("reason") or "rejected by the reviewer"))
    return Decision("reject", reason=f"unrecognised approval {value!r}: {DECISION_HELP}")
