"""The iterative planner: split the question into independent sub-questions, fetch them in
parallel (LangGraph `Send`), check whether the information is enough, up to three rounds.

Each sub-question's query is validated (compiled, not run) before it runs; an
invalid one gets one correction. The plan prompt asks for a single sub-question
whenever one Cypher statement can fetch everything, which is most of the time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reflexion_agents.nodes.common.schema_text import schema_text
from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.nodes.prompts.text2cypher import (
    CHECK_PROMPT,
    CORRECT_INSTRUCTION,
    PLAN_PROMPT,
    PLAN_SUMMARY_PROMPT,
    generate_prompt,
    rows_text,
)
from reflexion_agents.nodes.text2cypher.context import FlowContext, ask, calls_left, emit, main_usage
from reflexion_agents.nodes.text2cypher.schema_pruning import prune_schema
from reflexion_agents.nodes.text2cypher.steps import (
    checked_query,
    failed_call,
    fallback_answer,
    prompt_parts,
    run_query,
)
from reflexion_agents.schemas.errors import DatabaseUnavailableError, QueryError
from reflexion_agents.schemas.reflexion import TokenUsage
from reflexion_agents.schemas.text2cypher import (
    Attempt,
    CypherQuery,
    InformationCheck,
    SubAnswer,
    SubQuestions,
    Summary,
)

MAX_ROUNDS = 3
MAX_SUBQUESTIONS = 4
CALLS_PER_SUBQUESTION = 2  # a generation and at most one correction
RESERVED_CALLS = 2  # the check and the summary


def _fitting(questions: list[str], ctx: FlowContext, state: Mapping[str, Any]) -> list[str]:
    """As many sub-questions as the budget can fetch, keeping the check and the summary."""
    room = max(0, (calls_left(ctx, state) - RESERVED_CALLS) // CALLS_PER_SUBQUESTION)
    return [q.strip() for q in questions if q.strip()][: min(MAX_SUBQUESTIONS, room)]


APPROVAL_UNSUPPORTED = (
    "the planner runs its sub-queries in parallel and cannot pause for approval of each; "
    "use the retry_evaluate flow or the Reflexion agent with require_approval"
)


def plan(state: Mapping[str, Any], ctx: FlowContext) -> dict[str, Any]:
    if ctx.require_approval:  # refused rather than ignored: no query may run unapproved
        return {"stop_reason": "invalid_input", "error": APPROVAL_UNSUPPORTED}
    schema = schema_text(prune_schema(ctx.schema(), state["question"], ctx.schema_chars))
    planned, usage, error = ask(
        ctx,
        SubQuestions,
        PLAN_PROMPT.format(schema=schema),
        state["question"],
        spent=main_usage(state),
        left=calls_left(ctx, state),
    )
    if planned is None:
        return failed_call(error, usage)
    after = {**state, "usage": usage.model_dump()}
    pending = _fitting(planned.questions or [state["question"]], ctx, after)
    emit("Plan", questions=pending)
    update: dict[str, Any] = {"usage": usage.model_dump(), "pending": pending, "round": 1}
    if not pending:
        update["stop_reason"] = "budget"
    return update


def subquery(branch: Mapping[str, Any], ctx: FlowContext) -> dict[str, Any]:
    """Fetch one sub-question: generate, check against the graph, validate (one correction if invalid), run."""
    question = branch["sub"]
    spent, left = TokenUsage(), CALLS_PER_SUBQUESTION
    schema, examples = prompt_parts(branch, ctx, question)
    system = generate_prompt(schema, ctx.db.dialect, examples, on_graph=ctx.examples_on_graph)
    query, spent, error = ask(ctx, CypherQuery, system, question, spent=spent, left=left)
    attempt = Attempt(cypher="", error=f"no query: {error}")
    if query is not None:
        checked = checked_query(ctx, query.cypher)
        cypher = checked.query if checked else query.cypher
        try:
            ctx.db.validate(cypher)
        except QueryError as e:
            fix = CORRECT_INSTRUCTION.format(question=question, cypher=cypher, feedback=e.message, mappings="")
            fixed, spent, _ = ask(ctx, CypherQuery, system, fix, spent=spent, left=left - spent.llm_calls)
            if fixed is not None:
                checked = checked_query(ctx, fixed.cypher)
                cypher = checked.query if checked else fixed.cypher
        except DatabaseUnavailableError as e:
            attempt = Attempt(cypher=cypher, error=str(e))
            cypher = ""
        if cypher:
            mappings = [m.model_dump() for m in checked.mappings] if checked else []
            try:
                attempt = run_query(ctx, cypher, mappings, checked.model_dump() if checked else None)
            except DatabaseUnavailableError as e:
                attempt = Attempt(cypher=cypher, error=str(e))
    emit("Sub-question", question=question, cypher=attempt.cypher, rows=len(attempt.rows), error=attempt.error)
    answer = SubAnswer(question=question, attempt=attempt).model_dump()
    return {"subanswers": [{**answer, "round": branch["round"], "usage": spent.model_dump()}]}


def gathered_text(state: Mapping[str, Any]) -> str:
    parts = []
    for sub in state.get("subanswers") or []:
        attempt = Attempt.model_validate(sub["attempt"])
        if attempt.error:
            parts.append(f"- {sub['question']}\n  Query: {attempt.cypher}\n  Failed: {attempt.error}")
        else:
            summary, rows = rows_text(attempt.columns, attempt.rows, attempt.truncated)
            parts.append(f"- {sub['question']}\n  Query: {attempt.cypher}\n  Result ({summary}):\n{rows}")
    return "\n".join(parts) or "(nothing)"


def check(state: Mapping[str, Any], ctx: FlowContext) -> dict[str, Any]:
    """Enough information? If not, and rounds and budget remain, plan the next round."""
    if calls_left(ctx, state) < RESERVED_CALLS:  # keep the summary's call
        return {"pending": []}
    verdict, usage, error = ask(
        ctx,
        InformationCheck,
        CHECK_PROMPT.format(question=state["question"], gathered=gathered_text(state)),
        "Check the information.",
        spent=main_usage(state),
        left=calls_left(ctx, state) - 1,
    )
    if verdict is None:
        return {**failed_call(error, usage), "pending": []}
    after = {**state, "usage": usage.model_dump()}
    more_rounds = state.get("round", 0) < MAX_ROUNDS
    pending = [] if verdict.enough or not more_rounds else _fitting(verdict.missing, ctx, after)
    emit("Information check", enough=verdict.enough, missing=pending)
    return {
        "usage": usage.model_dump(),
        "pending": pending,
        "evaluated_ok": verdict.enough,
        "round": state.get("round", 0) + (1 if pending else 0),
    }


def summarize_plan(state: Mapping[str, Any], ctx: FlowContext) -> dict[str, Any]:
    if state.get("stop_reason") in ("refused", "tool_unavailable", "invalid_input"):
        return {}
    subs = state.get("subanswers") or []
    if state.get("stop_reason"):
        reason = state["stop_reason"]
    elif state.get("evaluated_ok"):
        reason = "answered"
    else:
        reason = "retries_exhausted" if state.get("round", 0) >= MAX_ROUNDS else "budget"
    if not subs:
        return {"stop_reason": reason, "answer": None}
    failed = [a for a in (Attempt.model_validate(s["attempt"]) for s in subs) if a.error]
    if len(failed) == len(subs):  # no query ran: say so, with the database's own words; no summary is asked
        text = fallback_answer(failed[-1], reason)
        emit("Answer", answer=text, stop_reason=reason)
        return {"answer": text, "stop_reason": reason, "error": failed[-1].error}
    answer, usage, error = ask(
        ctx,
        Summary,
        PLAN_SUMMARY_PROMPT.format(question=state["question"], gathered=gathered_text(state)),
        "Answer the question.",
        spent=main_usage(state),
        left=calls_left(ctx, state),
    )
    if answer is None:
        last = Attempt.model_validate(subs[-1]["attempt"])
        text = fallback_answer(last, "budget" if error == "budget" else "model_error")
        reason = "budget" if error == "budget" else reason
    else:
        text = without_surrogates(answer.answer)  # text for people: a model's lone surrogate shows as U+FFFD
    emit("Answer", answer=text, stop_reason=reason)
    return {"usage": usage.model_dump(), "answer": text, "stop_reason": reason}
