"""What every text-to-Cypher step needs: the model, the database, the example store, the limits,
and a budget-aware way to ask the model for one structured reply."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langgraph.config import get_stream_writer
from pydantic import BaseModel

from reflexion_agents.nodes.common.responder import Responder
from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.query_check import QueryChecker
from reflexion_agents.nodes.text2cypher.fewshots import FewShotStore, MemoryFewShotStore
from reflexion_agents.schemas.graphdb import GraphSchema
from reflexion_agents.schemas.reflexion import TokenUsage

T = TypeVar("T", bound=BaseModel)


@dataclass
class FlowContext:
    """A flow's dependencies and limits, for the runs that name the same model, database and limits.

    Every field is given by `Text2CypherFlow._make_context` (no defaults here to drift from the
    flow's). `corrects` and `evaluates` are set by the flow's wiring (`graphs.text2cypher_builders`):
    the steps several flows share read them, never the flow's name."""

    model: BaseChatModel
    db: GraphDatabase
    store: FewShotStore | MemoryFewShotStore | None
    examples_on_graph: bool  # the store holds this graph's own examples (the prompt says so)
    corrects: bool  # the flow has a `correct` step: a failed or poor query may be rewritten
    evaluates: bool  # the flow has an `evaluate` step: rows are judged, accepted corrections learned
    max_retries: int
    max_llm_calls: int
    row_cap: int
    query_timeout: float | None
    few_shot_k: int
    schema_chars: int
    learn: bool
    require_approval: bool
    map_values: bool  # False: literals are run as the model wrote them
    repair_queries: bool  # False: the schema check reports what it would repair, and repairs nothing
    cache_seconds: float
    _schema: GraphSchema | None = field(default=None, init=False)
    _schema_read_at: float = field(default=0.0, init=False)
    _facts: GraphFacts | None = field(default=None, init=False)

    @property
    def corrections_allowed(self) -> int:
        """A flow without a `correct` step never corrects; the others up to `max_retries` times."""
        return self.max_retries if self.corrects else 0

    def can_correct(self, state: Mapping[str, Any]) -> bool:
        """Another correction is allowed, and the budget keeps a call for it, for the evaluation
        that follows it (in a flow that evaluates), and for the summary."""
        needed = 3 if self.evaluates else 2
        return state.get("corrections", 0) < self.corrections_allowed and calls_left(self, state) >= needed

    def schema(self) -> GraphSchema:
        """The live schema, sampled (never scanned) and read again after `cache_seconds`, when what the
        schema check looked up is forgotten too, so changed data is seen."""
        if self._schema is None or time.monotonic() - self._schema_read_at > self.cache_seconds:
            self._schema = self.db.schema()
            self._schema_read_at = time.monotonic()
            self._facts = GraphFacts(self.db, self._schema)
        return self._schema

    def checker(self) -> QueryChecker:
        """The schema check of this flow's graph (`nodes.graphdb.query_check`)."""
        self.schema()
        assert self._facts is not None  # made with the schema
        return QueryChecker(self._facts, repair=self.repair_queries, map_values=self.map_values)


def usage_total(state: Mapping[str, Any]) -> TokenUsage:
    """Calls made on the main line plus those of every planner sub-question."""
    total = TokenUsage.model_validate(state.get("usage") or {})
    for sub in state.get("subanswers") or []:
        total = total + TokenUsage.model_validate(sub.get("usage") or {})
    return total


def calls_left(ctx: FlowContext, state: Mapping[str, Any]) -> int:
    return ctx.max_llm_calls - usage_total(state).llm_calls


def emit(label: str, **payload: Any) -> None:
    """A progress event on LangGraph's custom stream (`stream_mode="custom"`), for UIs."""
    try:
        writer = get_stream_writer()
    except RuntimeError:  # called outside a graph run (a unit test of a step)
        return
    writer({"label": label, "payload": payload})


def main_usage(state: Mapping[str, Any]) -> TokenUsage:
    return TokenUsage.model_validate(state.get("usage") or {})


def ask(
    ctx: FlowContext, schema: type[T], system: str, user: str, *, spent: TokenUsage, left: int
) -> tuple[T | None, TokenUsage, str | None]:
    """(parsed reply, `spent` plus this call, error). No call when `left` is 0 ("budget");
    a malformed reply is retried once, only if the budget allows it."""
    if left <= 0:
        return None, spent, "budget"
    reply = Responder(ctx.model, schema, system, max_retries=1 if left > 1 else 0).respond([HumanMessage(content=user)])
    return reply.parsed, spent + reply.usage, reply.error  # type: ignore[return-value]
