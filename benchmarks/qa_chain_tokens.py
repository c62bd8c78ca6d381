"""Prompt tokens of a one-iteration question: `KGQueryReflexionAgent` against LangChain's `FalkorDBQAChain`.

    python -m benchmarks.qa_chain_tokens

The question most text-to-Cypher tools start from: one query, its rows, done. LangChain's
`FalkorDBQAChain` (langchain-community) asks its model twice, once for the Cypher (its prompt: the
schema and the question) and once for the answer (the question and the query's first `top_k` = 10
rows). The agent, with its defaults, asks twice too: the draft (the schema with example values and
the dialect notes, the `GenerateQuery` tool) and the revision that scores the rows (the schema's
names, the rows, the `ReviseQuery` tool). Both run the same query on the same movies graph, each
model scripted to write it; every message and tool definition sent is counted the same way
(`benchmarks.prompt_growth.prompt_tokens`). Questions of three sizes: 10, 3 and 25 rows.

Target: the agent's tokens at most 1.2 times the chain's on each question.
"""

from __future__ import annotations

import argparse
from typing import Any

from langchain_community.chains.graph_qa.falkordb import FalkorDBQAChain
from langchain_community.graphs import FalkorDBGraph as LangChainFalkorDBGraph
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import BaseMessage
from pydantic import Field

from benchmarks.harness import machine, movies_database, result_line
from benchmarks.prompt_growth import COUNTER_NAME, prompt_tokens
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.nodes.models.scripted import tool_reply

TARGET = 1.2
QUESTIONS = {
    "List ten movies with their tagline.": (
        "MATCH (m:Movie) RETURN m.title AS title, m.tagline AS tagline ORDER BY m.title LIMIT 10"
    ),
    "Who directed The Matrix?": (
        "MATCH (p:Person)-[:DIRECTED]->(:Movie {title: 'The Matrix'}) RETURN p.name AS director"
    ),
    "Which movies did Tom Hanks act in?": (
        "MATCH (:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title, m.released AS released"
    ),
}


class RecordingModel(FakeListChatModel):
    """LangChain's fake chat model, keeping every prompt it is sent."""

    sent: list[list[BaseMessage]] = Field(default_factory=list)

    def _call(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> str:
        self.sent.append(list(messages))
        return super()._call(messages, *args, **kwargs)


def chain_tokens(db: Any, question: str, query: str) -> tuple[int, int]:
    """(the chain's prompt tokens, its model calls) for `question`, its model writing `query`."""
    graph = LangChainFalkorDBGraph(database=db.graph_name, host=db.host, port=db.port)
    model = RecordingModel(responses=[query, "The answer."], sent=[])
    chain = FalkorDBQAChain.from_llm(model, graph=graph, allow_dangerous_requests=True)
    chain.invoke({"query": question})
    return sum(prompt_tokens(messages) for messages in model.sent), len(model.sent)


def agent_tokens(db: Any, question: str, query: str) -> tuple[int, int, str]:
    """(the agent's prompt tokens, its model calls, its stop reason), its model writing `query` and
    scoring its rows 9."""
    model = ScriptedChatModel(
        replies=[
            tool_reply("GenerateQuery", {"answer": query, "reflection": "", "search_queries": []}),
            tool_reply("ReviseQuery", {"revised_query": query, "score": 9}),
        ]
    )
    agent = KGQueryReflexionAgent(conversation_factory=lambda: model, database=db, checkpointer=None)
    result = agent.execute(question)
    assert result.query_ran and result.steps == 1, (result.stop_reason, result.error)
    calls = list(zip(model.calls, model.bound_tools, strict=True))
    return sum(prompt_tokens(messages, tools) for messages, tools in calls), len(calls), str(result.stop_reason)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    rows = []
    with movies_database() as db:
        for question, query in QUESTIONS.items():
            rows.append((question, *agent_tokens(db, question, query), *chain_tokens(db, question, query)))
    print("| question | agent: tokens | calls | stop | FalkorDBQAChain: tokens | calls | agent / chain |")
    print("|---|---:|---:|---|---:|---:|---:|")
    for question, ours, calls, stop, theirs, their_calls in rows:
        print(f"| {question} | {ours:,} | {calls} | {stop} | {theirs:,} | {their_calls} | {ours / theirs:.2f}x |")
    print(f"\nTokens: {COUNTER_NAME}, message text + tool-call arguments + tool definitions.")
    print(f"Machine: {machine()}\n")
    print(result_line("qa_chain_tokens_highest", max(r[1] / r[4] for r in rows), TARGET, unit="x"))


if __name__ == "__main__":
    main()
