"""The steps of the naive, retry and retry + evaluate flows, as functions of (state, context).

Each step emits a progress event and returns a state update. Model calls go
through `ask`, which respects the budget; database errors meant for the model
become feedback for the correction step, and a database that is down ends the run.
A step shared by several flows reads what its flow may do from the context's flags
(`corrects`, `evaluates`), never the flow's name; `execute` and `evaluate` record
whether a correction may follow (`can_correct`) for the routers that read only the state.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.types import interrupt

from reflexion_agents.nodes.common.approval import approval_request, read_decision
from reflexion_agents.nodes.common.schema_text import schema_text
from reflexion_agents.nodes.common.turns import new_user_message
from reflexion_agents.nodes.graphdb.value_matching import describe_mappings
from reflexion_agents.nodes.models.wire import without_surrogates
from reflexion_agents.nodes.prompts.text2cypher import (
    CORRECT_INSTRUCTION,
    EVALUATE_PROMPT,
    GUARDRAIL_PROMPT,
    REWRITE_PROMPT,
    SUMMARIZE_PROMPT,
    domain_text,
    generate_prompt,
    rows_text,
)
from reflexion_agents.nodes.text2cypher.context import FlowContext, ask, calls_left, emit, main_usage
from reflexion_agents.nodes.text2cypher.schema_pruning import prune_schema
from reflexion_agents.schemas.errors import DatabaseUnavailableError, GraphDatabaseError, QueryError
from reflexion_agents.schemas.graphdb import is_empty_value
from reflexion_agents.schemas.query_check import QueryCheck
from reflexion_agents.schemas.text2cypher import (
    Attempt,
    CypherQuery,
    Evaluation,
    GuardrailDecision,
    StandaloneQuestion,
    Summary,
    ValueMapping,
)

Update = dict[str, Any]


def failed_call(error: str | None, usage: Any) -> Update:
    """The update for a model call that gave nothing usable: a spent budget or an unusable reply."""
    reason = "budget" if error == "budget" else "model_error"
    return {"usage": usage.model_dump(), "stop_reason": reason, "error": None if reason == "budget" else error}


def attempts_of(state: Mapping[str, Any]) -> list[Attempt]:
    return [Attempt.model_validate(a) for a in state.get("attempts") or []]


def asked_question(state: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(this run's question, the update that records it). A chat client (Studio, the SDK) sends a user
    message; a caller of `ask` sends `question`, which enters the memory as a user message. A user
    message is this run's only if no run took it before (`asked_id`): a run that paused or was cut
    off leaves its own question last, and must not answer it again."""
    asked = new_user_message(state)
    if asked is not None:
        return asked.text.strip(), {"asked_id": asked.id, "messages": []}
    question = (state.get("question") or "").strip()
    if not question:
        return "", {"messages": []}
    message = HumanMessage(content=question, id=str(uuid.uuid4()))
    return question, {"asked_id": message.id, "messages": [message]}


def start(state: Mapping[str, Any], ctx: FlowContext | None = None) -> Update:
    """Reset the per-question fields, so a checkpointed thread can take a new question."""
    question, asked = asked_question(state)
    update: Update = {
        **asked,
        "question": question,
        "query": None,
        "columns": None,
        "rows": None,
        "attempts": [],
        "corrections": 0,
        "evaluated_ok": False,
        "can_correct": False,
        "usage": {},
        "answer": None,
        "stop_reason": None,
        "error": None,
        "suggestions": [],
        "learned": False,
        "feedback": None,
        "cypher": "",
        "mappings": [],
        "check": None,
        "examples": [],
        "round": 0,
        "pending": [],
        "subanswers": None,
    }
    if not question:
        update.update(stop_reason="invalid_input", error="the question is empty")
    return update


HISTORY_TURNS = 3  # earlier questions (with their answers) a follow-up is rewritten against
HISTORY_CHARS = 600  # of each earlier message


def earlier_turns(state: Mapping[str, Any]) -> str:
    """The thread's earlier questions and answers, the newest last, before this run's question ("" when
    the question is the thread's first)."""
    messages = list(state.get("messages") or [])
    asked = next((i for i, m in enumerate(messages) if m.id is not None and m.id == state.get("asked_id")), None)
    earlier = [m for m in messages[: asked if asked is not None else len(messages) - 1] if m.type in ("human", "ai")]
    starts = [i for i, m in enumerate(earlier) if m.type == "human"][-HISTORY_TURNS:]
    if not starts:
        return ""
    shown = []
    for message in earlier[starts[0] :]:
        text = message.text.strip()
        if text:
            who = "User" if message.type == "human" else "Answer"
            shown.append(f"{who}: {text[:HISTORY_CHARS]}" + (" ..." if len(text) > HISTORY_CHARS else ""))
    return "\n".join(shown)


def standalone_question(state: Mapping[str, Any], ctx: FlowContext) -> tuple[str, Update]:
    """The question, rewritten against the thread's earlier turns when it has some (a follow-up such as
    "When was it released?" names what "it" is), with the update that records the call; the question
    as asked when it is the thread's first, or when the rewrite fails."""
    history = earlier_turns(state)
    if not history:
        return state["question"], {}
    rewritten, usage, _ = ask(
        ctx,
        StandaloneQuestion,
        REWRITE_PROMPT.format(history=history),
        state["question"],
        spent=main_usage(state),
        left=calls_left(ctx, state) - 1,  # the guardrail's call stays
    )
    question = without_surrogates(rewritten.question).strip() if rewritten is not None else ""
    if not question:
        return state["question"], {"usage": usage.model_dump()}
    if question != state["question"]:
        emit("Question rewritten", asked=state["question"], question=question)
    return question, {"usage": usage.model_dump(), "question": question}


def guardrail(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """Rewrite a follow-up question against the thread's earlier turns, then refuse, helpfully, a
    question the graph's schema cannot answer."""
    try:
        schema = ctx.schema()
    except GraphDatabaseError as e:  # down, or too slow to describe itself
        return {"stop_reason": "tool_unavailable", "error": f"the schema could not be read: {e}"}
    question, rewritten = standalone_question(state, ctx)
    state = {**state, **rewritten}
    decision, usage, error = ask(
        ctx,
        GuardrailDecision,
        GUARDRAIL_PROMPT.format(domain=domain_text(schema)),
        question,
        spent=main_usage(state),
        left=calls_left(ctx, state),
    )
    if decision is None:
        return {**rewritten, **failed_call(error, usage)}
    emit("Guardrail", answerable=decision.answerable, reason=decision.reason)
    if decision.answerable:
        return {**rewritten, "usage": usage.model_dump()}
    labels = ", ".join(n.label for n in schema.nodes) or "no data yet"
    # Text for people: a model's lone surrogate shows as U+FFFD, so the answer can be printed.
    suggestions = [without_surrogates(s) for s in decision.suggestions if s.strip()][:3]
    reason = without_surrogates(decision.reason)
    answer = f"I can't answer that from this graph. {reason}".strip() + f" The graph holds: {labels}."
    if suggestions:
        answer += " You could ask, for example: " + " / ".join(suggestions)
    return {
        **rewritten,
        "usage": usage.model_dump(),
        "stop_reason": "refused",
        "answer": answer,
        "suggestions": suggestions,
    }


def prompt_parts(state: Mapping[str, Any], ctx: FlowContext, question: str) -> tuple[str, list[dict[str, str]]]:
    """(pruned schema text, few-shot examples) for generating a query for `question`."""
    schema = prune_schema(ctx.schema(), question, ctx.schema_chars)
    examples = (
        [e.model_dump(include={"question", "cypher"}) for e in ctx.store.search(question, ctx.few_shot_k)]
        if ctx.store
        else []
    )
    return schema_text(schema), examples


def generate(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """Draft the query, with the examples most similar to the question."""
    schema, examples = prompt_parts(state, ctx, state["question"])
    query, usage, error = ask(
        ctx,
        CypherQuery,
        generate_prompt(schema, ctx.db.dialect, examples, on_graph=ctx.examples_on_graph),
        state["question"],
        spent=main_usage(state),
        left=calls_left(ctx, state),
    )
    if query is None:
        return failed_call(error, usage)
    emit("Cypher generation", cypher=query.cypher, examples=len(examples))
    return {"cypher": query.cypher, "schema_text": schema, "examples": examples, "usage": usage.model_dump()}


def correct(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """Rewrite the query with the database's error or the evaluator's critique."""
    mappings = [ValueMapping.model_validate(m) for m in state.get("mappings") or []]
    told = f"Values were mapped to the stored ones: {describe_mappings(mappings)}." if mappings else ""
    user = CORRECT_INSTRUCTION.format(
        question=state["question"], cypher=state["cypher"], feedback=state.get("feedback"), mappings=told
    )
    system = generate_prompt(
        state.get("schema_text", ""), ctx.db.dialect, state.get("examples") or [], on_graph=ctx.examples_on_graph
    )
    query, usage, error = ask(ctx, CypherQuery, system, user, spent=main_usage(state), left=calls_left(ctx, state))
    if query is None:
        return failed_call(error, usage)
    emit("Cypher correction", cypher=query.cypher, feedback=state.get("feedback"))
    return {"cypher": query.cypher, "corrections": state.get("corrections", 0) + 1, "usage": usage.model_dump()}


def checked_query(ctx: FlowContext, cypher: str) -> QueryCheck | None:
    """`cypher` checked against the graph, repairs made and reported to the stream; None when the
    check cannot be made (the schema or a look-up failed): the query then runs as written, and its own
    run reports."""
    try:
        check = ctx.checker().check(cypher)
    except GraphDatabaseError:
        return None
    report_check(check)
    return check


def check_query(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """Check the query against the graph before it runs (`nodes.graphdb.query_check`): the certain
    repairs are made (labels, relationship directions, properties, stored values), and what the check
    found goes with the query's result to the evaluation and the correction."""
    check = checked_query(ctx, state["cypher"])
    if check is None:
        return {"mappings": [], "check": None}
    return {"cypher": check.query, "mappings": [m.model_dump() for m in check.mappings], "check": check.model_dump()}


def report_check(check: QueryCheck) -> None:
    """What the check repaired or found goes to the stream, with the query as it now runs."""
    if check.repairs or check.findings:
        emit(
            "Query check",
            cypher=check.query,
            repairs=check.repairs,
            findings=check.findings,
            mappings=[m.model_dump() for m in check.mappings],
        )


def run_query(
    ctx: FlowContext, cypher: str, mappings: list[dict[str, str]], check: dict[str, Any] | None = None
) -> Attempt:
    """Run one query read-only with the flow's timeout and row cap; a query error is kept, not raised."""
    mapped = [ValueMapping.model_validate(m) for m in mappings]
    checked = QueryCheck.model_validate(check) if check else None
    try:
        result = ctx.db.query(cypher, timeout=ctx.query_timeout, row_cap=ctx.row_cap)
    except QueryError as e:
        return Attempt(cypher=cypher, error=f"{type(e).__name__}: {e.message}", mappings=mapped, check=checked)
    return Attempt(
        cypher=cypher,
        columns=result.columns,
        rows=result.rows,
        truncated=result.truncated,
        mappings=mapped,
        check=checked,
    )


def with_findings(feedback: str | None, attempt: Attempt) -> str | None:
    """`feedback` (an error or a critique) with what the schema check found in the query, if anything."""
    found = attempt.check.notes() if attempt.check is not None and attempt.check.findings else ""
    return "\n".join(part for part in (feedback, found) if part) if feedback else feedback


def with_correction_check(update: Update, state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """`update`, with whether a correction may follow it: the router after this step reads the
    state only, and the check needs the flow's limits and flags."""
    return {**update, "can_correct": ctx.can_correct({**state, **update})}


def execute(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    cypher, check = state["cypher"], state.get("check")
    if ctx.require_approval:  # pause for a person (LangGraph interrupt); an edit is still read-only
        decision = read_decision(
            interrupt(approval_request(state["question"], cypher, len(state.get("attempts") or []) + 1))
        )
        if decision.action == "reject":
            return {"stop_reason": "rejected", "error": decision.reason}
        if decision.query and decision.query != cypher:  # a person's query runs as written, unchecked
            cypher, check = decision.query, None
    try:
        attempt = run_query(ctx, cypher, state.get("mappings") or [], check)
    except DatabaseUnavailableError as e:
        return {"stop_reason": "tool_unavailable", "error": str(e)}
    emit(
        "Cypher execution",
        cypher=attempt.cypher,
        rows=len(attempt.rows),
        truncated=attempt.truncated,
        error=attempt.error,
    )
    update = {
        "attempts": [*(state.get("attempts") or []), attempt.model_dump()],
        "feedback": with_findings(attempt.error, attempt),
    }
    return with_correction_check(update, state, ctx)


def all_null(attempt: Attempt) -> bool:
    return bool(attempt.rows) and all(all(is_empty_value(v) for v in row) for row in attempt.rows)


def rests_on_what_exists(attempt: Attempt) -> bool:
    """No rows, from a query the schema check verified: the graph holds every label, relationship and
    property it names (values it filters on may be stored in no form at all). No rows is the answer."""
    return not attempt.rows and attempt.check is not None and attempt.check.verified


def evaluate(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """Judge whether the rows answer the question. No rows, or only nulls, are judged without a model
    call: no rows from a query the schema check verified are the answer; otherwise the critique says
    what the check found, or what to look at."""
    attempts = attempts_of(state)
    last = attempts[-1]
    if rests_on_what_exists(last):
        emit("Evaluation", ok=True, critique=None, reason="no rows, and the graph holds all the query names")
        return with_correction_check({"evaluated_ok": True, "feedback": None}, state, ctx)
    if not last.rows:
        critique: str | None = with_findings(
            "The query returned no rows. Check the labels, the relationship direction and the values' spelling.", last
        )
    elif all_null(last):
        critique = with_findings(
            "Every value in the rows is null: the query reads properties that are missing; "
            "filter nulls or use other properties.",
            last,
        )
    else:
        summary, rows = rows_text(last.columns, last.rows, last.truncated)
        verdict, usage, error = ask(
            ctx,
            Evaluation,
            EVALUATE_PROMPT.format(question=state["question"], cypher=last.cypher, summary=summary, rows=rows),
            "Judge the result.",
            spent=main_usage(state),
            left=calls_left(ctx, state),
        )
        if verdict is None:
            return failed_call(error, usage)
        critique = (
            None if verdict.ok else with_findings(verdict.critique or "The rows do not answer the question.", last)
        )
        emit("Evaluation", ok=verdict.ok, critique=critique)
        attempts[-1] = last.model_copy(update={"critique": critique})
        judged = {
            "usage": usage.model_dump(),
            "evaluated_ok": verdict.ok,
            "feedback": critique,
            "attempts": [a.model_dump() for a in attempts],
        }
        return with_correction_check(judged, state, ctx)
    emit("Evaluation", ok=False, critique=critique)
    attempts[-1] = last.model_copy(update={"critique": critique})
    update = {"evaluated_ok": False, "feedback": critique, "attempts": [a.model_dump() for a in attempts]}
    return with_correction_check(update, state, ctx)


def best_attempt(attempts: list[Attempt]) -> Attempt | None:
    """The latest attempt that ran with rows and no critique (or no rows resting on what exists); else the
    latest that ran and named nothing the check found wrong; else the latest that ran; else the last."""
    choices: tuple[Callable[[Attempt], bool], ...] = (
        lambda a: a.error is None and not a.critique and (bool(a.rows and not all_null(a)) or rests_on_what_exists(a)),
        lambda a: a.error is None and not (a.check is not None and a.check.blocking),
        lambda a: a.error is None,
    )
    for wanted in choices:
        chosen = next((a for a in reversed(attempts) if wanted(a)), None)
        if chosen is not None:
            return chosen
    return attempts[-1] if attempts else None


def _why_it_ended(state: Mapping[str, Any], ctx: FlowContext) -> str:
    last = attempts_of(state)[-1] if state.get("attempts") else None
    unresolved = last is None or last.error is not None or (ctx.evaluates and not state.get("evaluated_ok"))
    if not unresolved:
        return "answered"
    if ctx.corrections_allowed == 0:
        return "query_failed"
    return "retries_exhausted" if state.get("corrections", 0) >= ctx.corrections_allowed else "budget"


def fallback_answer(chosen: Attempt | None, reason: str) -> str:
    """An answer written without the model, when no summary can be had: the budget leaves no call for
    one (`budget`), or the model's summary was unusable (`model_error`)."""
    if chosen is None:
        return f"No answer: the flow stopped ({reason}) before any query ran."
    if chosen.error:
        return f"No answer: the last query failed ({chosen.error})."
    summary, rows = rows_text(chosen.columns, chosen.rows, chosen.truncated)
    why = "The LLM-call budget ran out before a summary" if reason == "budget" else "The summary could not be written"
    return f"{why}; the query returned {summary}:\n{rows}"


def summarize(state: Mapping[str, Any], ctx: FlowContext) -> Update:
    """Answer from the question, the query and its rows; store a corrected query the evaluator accepted."""
    if state.get("stop_reason") in ("refused", "tool_unavailable", "invalid_input"):
        return {}
    chosen = best_attempt(attempts_of(state))
    reason = state.get("stop_reason") or _why_it_ended(state, ctx)
    update: Update = {"stop_reason": reason}
    if chosen is None:
        return {**update, "answer": None}
    if chosen.error is not None:  # no query ran: say so, rather than let a summary read "no rows" as "no data"
        update["answer"] = fallback_answer(chosen, reason)
        update["error"] = chosen.error  # the database's own words, in the result and every trace
        emit("Answer", answer=update["answer"], stop_reason=reason)
        return update
    mappings = [ValueMapping.model_validate(m) for m in chosen.mappings]
    told = f"Values in the question were mapped to stored values: {describe_mappings(mappings)}.\n" if mappings else ""
    summary, rows = rows_text(chosen.columns, chosen.rows, chosen.truncated)
    prompt = SUMMARIZE_PROMPT.format(
        question=state["question"], cypher=chosen.cypher, summary=summary, rows=rows, mappings=told
    )
    answer, usage, error = ask(
        ctx, Summary, prompt, "Answer the question.", spent=main_usage(state), left=calls_left(ctx, state)
    )
    update["usage"] = usage.model_dump()
    if answer is None:
        update.update(answer=fallback_answer(chosen, "budget" if error == "budget" else "model_error"))
        if error == "budget":
            update["stop_reason"] = "budget"
    else:
        update["answer"] = without_surrogates(answer.answer)  # for people: a lone surrogate shows as U+FFFD
    if _learnable(state, ctx, chosen):
        try:
            update["learned"] = ctx.store.add(state["question"], chosen.cypher, source="learned")  # type: ignore[union-attr]
        except Exception as e:
            update["learned"], update["error"] = False, f"the example could not be stored: {type(e).__name__}: {e}"
        emit("Learned example", learned=update["learned"], cypher=chosen.cypher)
    emit("Answer", answer=update["answer"], stop_reason=update["stop_reason"])
    return update


def _learnable(state: Mapping[str, Any], ctx: FlowContext, chosen: Attempt) -> bool:
    """A correction that ran and that the evaluator accepted; never a failed or rejected query."""
    attempts = attempts_of(state)
    return bool(
        ctx.learn
        and ctx.store is not None
        and ctx.evaluates
        and state.get("corrections", 0) > 0
        and state.get("evaluated_ok")
        and attempts
        and attempts[-1].cypher == chosen.cypher
        and chosen.error is None
    )
