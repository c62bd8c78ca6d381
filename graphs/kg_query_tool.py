"""What the knowledge-graph agent's nodes work with, per database: the schema texts its prompts are
built from, the schema check of each query, the query tool's message, and the two responders.

Everything here is handed the run's chat model and database by the caller (the agent's nodes, from
the run's settings): nothing reads which run it is in. The schema and the facts the check looks up
are read once per database and kept (`KeyedCache`, keyed by the database object). An agent lives
as long as its process (a served graph does), and its graph may change meanwhile (a load, another
client's writes): at most once a `SCHEMA_RECHECK_S` it asks the database for the schema again,
which the adapter answers from what it keeps unless the graph's fingerprint moved
(`nodes.graphdb.schema_cache`), and a changed schema gets new prompts and new facts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ToolMessage
from pydantic import BaseModel

from reflexion_agents.nodes.common.responder import Responder, system_message
from reflexion_agents.nodes.common.schema_text import DIALECT_NOTES, DIALECT_SUMMARY
from reflexion_agents.nodes.graphdb.graph_facts import GraphFacts
from reflexion_agents.nodes.graphdb.protocol import GraphDatabase
from reflexion_agents.nodes.graphdb.query_check import QueryChecker
from reflexion_agents.nodes.graphdb.schema_cache import RECHECK_S
from reflexion_agents.nodes.keyed_cache import KeyedCache
from reflexion_agents.nodes.models.wire import sendable
from reflexion_agents.nodes.prompts.kg_query import (
    DRAFT_INSTRUCTION,
    QUERY_SYSTEM_PROMPT,
    REVISE_SYSTEM_PROMPT,
    SchemaPrompts,
    schema_prompts,
)
from reflexion_agents.nodes.reflexion.prompt_view import judges_error
from reflexion_agents.nodes.text2cypher.context import emit
from reflexion_agents.nodes.tools.cypher import run_cypher
from reflexion_agents.schemas.errors import GraphDatabaseError
from reflexion_agents.schemas.graphdb import GraphSchema
from reflexion_agents.schemas.kg_query import GenerateQuery, ReviseQuery
from reflexion_agents.schemas.query_check import QueryCheck

NO_SCHEMA = "(No schema is known for this database: write the query from the question.)"
SCHEMA_RECHECK_S = RECHECK_S  # how long the schema an agent read is used before it asks again
FACTS_MAX_AGE_S = 300.0  # how long values and properties looked up by the schema check are kept


class _SchemaSeen:
    """The prompts of the schema an agent last read from one database, when it looked, and the facts
    the schema check looks up in that graph (made from that very schema, so a changed schema never
    meets facts of the one before)."""

    def __init__(self, prompts: SchemaPrompts) -> None:
        self.prompts, self.looked_at = prompts, time.monotonic()
        self.lock = threading.Lock()
        self._facts: tuple[GraphSchema, GraphFacts] | None = None
        self._facts_lock = threading.Lock()

    def due(self) -> bool:
        return time.monotonic() - self.looked_at >= SCHEMA_RECHECK_S

    def facts(self, db: GraphDatabase, prompts: SchemaPrompts) -> GraphFacts:
        """The facts of `prompts`' schema: made anew for another schema, and `FACTS_MAX_AGE_S` after
        they were made (so changed data is seen)."""
        with self._facts_lock:
            kept = self._facts
            if kept is None or kept[0] is not prompts.schema or time.monotonic() - kept[1].created_at > FACTS_MAX_AGE_S:
                kept = self._facts = (prompts.schema, GraphFacts(db, prompts.schema))
            return kept[1]


class ReviseResponder(Responder):
    """The revise step's responder, whose system message depends on the result it judges.

    biochatter's revise prompt carries no schema, but every result whole; resending the whole
    kg_prompt with every revision instead made a question cost more than biochatter's at one and
    two iterations (benchmarks/prompt_growth.py). A revision is sent `plain` (the instruction and
    the schema's names: labels, relationship patterns, property names), and one judging a database
    error `after_error` (the same and the dialect notes: what the database does not support is
    what such an error most often names). The choice is made per call, from the messages sent."""

    def __init__(
        self, model: BaseChatModel, schema: type[BaseModel], plain: str, after_error: str, max_retries: int = 2
    ) -> None:
        super().__init__(model, schema, plain, max_retries)
        self.plain, self.after_error = plain, after_error

    def system_prompt_for(self, messages: list[BaseMessage]) -> str:
        return self.after_error if judges_error(messages) else self.plain

    def _prompt(self, messages: list[BaseMessage], feedback: list[BaseMessage]) -> list[BaseMessage]:
        return sendable([system_message(self.system_prompt_for(messages)), *messages, *feedback])


def header(query_lang: str, instruction: str) -> str:
    return QUERY_SYSTEM_PROMPT.format(
        query_lang=query_lang, time=time.strftime("%Y-%m-%d %H:%M"), instruction=instruction
    )


def revise_header(query_lang: str) -> str:
    return REVISE_SYSTEM_PROMPT.format(query_lang=query_lang, time=time.strftime("%Y-%m-%d %H:%M"))


def joined(*parts: str) -> str:
    return "\n\n".join(part for part in parts if part)


class KGQueryTool:
    """The agent's per-database knowledge: schema texts, query checks, and what a query run says."""

    def __init__(
        self, *, query_lang: str, rows_in_message: int, repair_queries: bool, map_values: bool, max_retries: int
    ) -> None:
        self.query_lang, self.rows_in_message, self.max_retries = query_lang, rows_in_message, max_retries
        self.repair_queries, self.map_values = repair_queries, map_values
        self.schemas_seen = KeyedCache()  # one `_SchemaSeen` per database

    def schema_texts(self, db: GraphDatabase) -> SchemaPrompts:
        """The kg_prompt and the compact schema of `db`: read once per database, and again when the
        graph changed (looked at most once a `SCHEMA_RECHECK_S`; a database down keeps the last)."""
        return self._seen(db).prompts

    def _seen(self, db: GraphDatabase) -> _SchemaSeen:
        # keyed by the object (adapters hash by identity): an id could be reused by a later database
        key = cast(Hashable, db)
        seen: _SchemaSeen = self.schemas_seen.get(key, lambda: _SchemaSeen(schema_prompts(db.schema(), db.dialect)))
        if not seen.due() or not seen.lock.acquire(blocking=False):  # another thread is looking
            return seen
        try:
            schema = db.schema()
            if schema != seen.prompts.schema:
                seen.prompts = schema_prompts(schema, db.dialect)
        except GraphDatabaseError:  # down: the tool step says so; the schema read before still holds
            pass
        finally:
            seen.looked_at = time.monotonic()
            seen.lock.release()
        return seen

    def schema_known(self, db: GraphDatabase) -> bool:
        """Whether `db`'s schema texts are read and need no look now (building a responder then reads
        nothing)."""
        seen: _SchemaSeen | None = self.schemas_seen.peek(cast(Hashable, db))
        return seen is not None and not seen.due()

    def checked(self, db: GraphDatabase, query: str, *, repair: bool = True, report: bool = True) -> QueryCheck | None:
        """`query` checked against `db`'s graph (repairs applied unless `repair` is false), or None when
        the schema cannot be read: it then runs unchecked. What the check repaired or found goes to the
        stream when `report`. Values looked up are kept `FACTS_MAX_AGE_S`, so changed data is seen."""
        try:
            seen = self._seen(db)
        except GraphDatabaseError:
            return None
        facts = seen.facts(db, seen.prompts)
        checker = QueryChecker(facts, repair=repair and self.repair_queries, map_values=repair and self.map_values)
        check = checker.check(query)
        if report and (check.repairs or check.findings):
            emit("Query check", query=check.query, repairs=check.repairs, findings=check.findings)
        return check

    def query_message(
        self,
        runs_on: GraphDatabase,
        checks_on: GraphDatabase | None,
        query: str,
        tool_call_id: str,
        limits: dict[str, Any],
        *,
        note: str = "",
        repair: bool = True,
    ) -> ToolMessage:
        """Check `query` against `checks_on` (None: no check), run it (repaired) on `runs_on` and
        describe the outcome: what the check repaired or found comes first, so the revision reads it
        with the result."""
        check = self.checked(checks_on, query, repair=repair) if checks_on is not None else None
        to_run = check.query if check is not None else query
        outcome = run_cypher(runs_on, to_run, rows_in_message=self.rows_in_message, **limits)
        notes = "\n".join(part for part in (note, check.notes() if check is not None else "") if part)
        update: dict[str, Any] = {"check": check}
        if notes:
            update["content"] = f"{notes}\n{outcome.content}"
        outcome = outcome.model_copy(update=update)
        return ToolMessage(content=outcome.content, tool_call_id=tool_call_id, artifact=outcome.model_dump())

    def schema_text(self, db: GraphDatabase | None, prompt: str | None) -> str:
        """The schema a draft is sent, and a revision judging no rows: the given kg_prompt, else the
        one built from `db`'s live schema (None: a subclass's own database, whose schema is unknown)."""
        if prompt is not None:
            return prompt
        if db is None:
            return NO_SCHEMA
        try:
            return self.schema_texts(db).full
        except GraphDatabaseError as e:  # down since the draft's check: the tool step reports it
            return f"(The schema could not be read: {e})"

    def responder(
        self, chat: BaseChatModel, draft: bool, prompt: str | None, db: GraphDatabase | None, dialect: str
    ) -> Responder:
        """The draft's responder, or a revision's. A draft is sent the whole schema text (or the kg_prompt
        the user gave, as it is); a revision the schema's names, and, when the result it judges is an
        error (most often a construct the database does not support), the dialect notes and the user's
        kg_prompt too. (biochatter sends a kg_prompt with the draft alone.)"""
        note = DIALECT_NOTES.get(dialect, "")  # type: ignore[call-overload]
        if draft:
            schema = self.schema_text(db, prompt)
            summary = DIALECT_SUMMARY.get(dialect, "")  # type: ignore[call-overload]
            told = summary in schema or note in schema
            system = joined(header(self.query_lang, DRAFT_INSTRUCTION), schema, "" if told else summary)
            return Responder(chat, GenerateQuery, system, self.max_retries)
        names = ""
        if db is not None:
            try:
                names = self.schema_texts(db).compact
            except GraphDatabaseError:  # down since the draft's check: the tool step reports it
                names = ""
        plain = joined(revise_header(self.query_lang), names)
        after_error = joined(plain, prompt or "", "" if prompt and note in prompt else note)
        return ReviseResponder(chat, ReviseQuery, plain, after_error, self.max_retries)

    def clear(self) -> None:
        self.schemas_seen.clear()
