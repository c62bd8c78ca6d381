"""Chat models that know the gold query: they check the evaluation harness and drive the whole
loop over real questions on the real database without an API key.

- The **oracle** answers every step with the gold query, so it must score 100% on the gold
  queries the backend runs: anything less is a bug in the harness or the agent's plumbing.
- The **corrupting** model writes the gold query with one deterministic fault (see `faults`) in
  its first draft, and the gold query on every revision or correction: it measures whether the
  loop notices the fault and recovers, and at what cost.

One model serves concurrent runs: the harness sets the question being answered in a context
variable around each run (asyncio tasks and LangGraph's worker threads carry it along), and the
model keeps that run's progress there.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.utils.function_calling import convert_to_openai_tool

from reflexion_agents.nodes.evaluation.faults import FAULTS


@dataclass
class GoldRun:
    """The question a run answers, its gold query, and the first draft the model will write."""

    question: str
    gold: str
    draft: str
    queries_written: int = 0


GOLD_RUN_KEY = "reflexion_gold_run"
#: The runs an evaluation is scoring, by the key each one's LangChain metadata carries: the gold model
#: learns which question it answers from the run it is called in (its `run_manager`), as a tracer does.
GOLD_RUNS: dict[str, GoldRun] = {}


@contextmanager
def scoring(run: GoldRun) -> Iterator[RunnableConfig]:
    """While the question of `run` is scored: the config to run the agent with (its metadata names the
    run, for the gold model to find)."""
    key = uuid.uuid4().hex
    GOLD_RUNS[key] = run
    try:
        yield {"metadata": {GOLD_RUN_KEY: key}}
    finally:
        GOLD_RUNS.pop(key, None)


def gold_run_of(run_manager: Any) -> GoldRun | None:
    """The run a model call belongs to, read from its callback metadata; None outside `scoring`."""
    metadata = getattr(run_manager, "metadata", None) or {}
    return GOLD_RUNS.get(str(metadata.get(GOLD_RUN_KEY)))


def gold_run(question: str, gold: str, fault: str | None = None) -> GoldRun | None:
    """The run for one question, or None when `fault` does not apply to its gold query."""
    draft = FAULTS[fault](gold) if fault else gold
    return None if draft is None else GoldRun(question, gold, draft)


def plain_reply(tool: str, run: GoldRun) -> dict[str, Any] | None:
    """The reply every gold-knowing model gives to a step that does not depend on the query: the
    question is answerable, is one sub-question, needs no rewriting; None for the other steps."""
    replies: dict[str, dict[str, Any]] = {
        "GuardrailDecision": {"answerable": True, "reason": "the graph holds this"},
        "StandaloneQuestion": {"question": run.question},
        "SubQuestions": {"questions": [run.question]},
        "InformationCheck": {"enough": True, "missing": []},
        "Summary": {"answer": "See the rows."},
    }
    return replies.get(tool)


class GoldChatModel(BaseChatModel):
    """Replies to whichever structured step it is asked for (the tool bound to the call)."""

    @property
    def _llm_type(self) -> str:
        return "gold"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    @staticmethod
    def _query(run: GoldRun) -> str:
        """The first query written is the draft; every later one is the gold query."""
        run.queries_written += 1
        return run.draft if run.queries_written == 1 else run.gold

    @staticmethod
    def _gold_ran(run: GoldRun) -> bool:
        """The last query written, and so the one whose rows are being judged, was the gold one."""
        return run.queries_written > 1 or run.draft == run.gold

    def _reply(self, tool: str, run: GoldRun) -> dict[str, Any]:
        if tool == "GenerateQuery":
            return {"answer": self._query(run), "reflection": "first draft", "search_queries": []}
        if tool == "ReviseQuery":
            score = 9 if self._gold_ran(run) else 2
            return {
                "answer": "",
                "reflection": "checked against the question",
                "revised_query": self._query(run),
                "score": score,
            }
        if tool == "CypherQuery":
            return {"cypher": self._query(run)}
        if tool == "Evaluation":
            right = self._gold_ran(run)
            return {"ok": right, "critique": "" if right else "These rows do not answer the question."}
        plain = plain_reply(tool, run)
        if plain is None:
            raise ValueError(f"the gold model cannot answer the step {tool!r}")
        return plain

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        run = gold_run_of(run_manager)
        if run is None:
            raise RuntimeError("the gold model was called outside an evaluation run (see `scoring`)")
        tools = kwargs.get("tools") or []
        if not tools:
            raise ValueError("the gold model answers structured steps only (a tool must be bound)")
        name = tools[0]["function"]["name"]
        prompt = sum(len(str(m.content)) for m in messages) // 4
        message = AIMessage(
            content="",
            tool_calls=[
                {
                    "name": name,
                    "args": self._reply(name, run),
                    "id": f"call_{uuid.uuid4().hex[:12]}",
                    "type": "tool_call",
                }
            ],
            usage_metadata={"input_tokens": prompt, "output_tokens": 20, "total_tokens": prompt + 20},
        )
        return ChatResult(generations=[ChatGeneration(message=message, text=json.dumps(message.tool_calls[0]["args"]))])
