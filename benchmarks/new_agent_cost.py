"""A new agent's first question against a reused agent's, on a graph of a million nodes.

    python -m benchmarks.new_agent_cost [--nodes 1000000] [--questions 5]

A service that makes a `KGQueryReflexionAgent` per question (or many agents over one graph) used to
read the graph's schema for each: about half a second here. The schema is now kept per graph in
the process and read again only when the graph's fingerprint (names and counts) changes
(nodes/graphdb/schema_cache.py). The graph is schema_scale's generated one (five labels, five
relationship types, `--nodes` nodes and as many relationships) on a fresh embedded server. The
scripted model drafts a count query and keeps it with a score of 9: one query a question, each
about another city (a question about a value the agent looked up before would be checked from what
it kept). Rows:

- a reused agent, asked `--questions` questions (after one warm-up question), one after the other;
- the same, a second apart (not timed);
- a new agent for each question, in a burst (the schema kept, its fingerprint trusted for a second);
- a new agent for each question, a second apart (not timed): each takes the graph's fingerprint;
- the same with the kept schemas dropped before each agent: what every new agent paid before.

Target: a new agent's question costs at most 2x a reused agent's, both a second apart (medians, same
run): a process idle for a second answers its next question slower whichever agent asks it (caches
gone cold), which is no cost of a new agent. The ratio against the reused agent asked back to back
is printed too.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time

from benchmarks.harness import loop_script, machine, result_line, scratch_database
from benchmarks.schema_scale import generate
from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.graphdb.schema_cache import RECHECK_S, forget_schemas
from reflexion_agents.nodes.models import ScriptedChatModel

TARGET = 2.0
QUERY = "MATCH (c:Company)-[:LOCATED_IN]->(city:City {{name: 'City {n}'}}) RETURN count(c) AS companies"
_asked = itertools.count(1)


def ask(agent: KGQueryReflexionAgent, model: ScriptedChatModel) -> float:
    """Milliseconds for one question about the next city, the agent already made."""
    n = next(_asked)
    model.replies, model.calls = loop_script([QUERY.format(n=n)]), []
    started = time.perf_counter()
    result = agent.execute(f"How many companies are in City {n}?")
    assert result.stop_reason == "score_threshold", (result.stop_reason, result.error)
    return (time.perf_counter() - started) * 1000


def new_agent(db: object, model: ScriptedChatModel) -> KGQueryReflexionAgent:
    return KGQueryReflexionAgent(conversation_factory=lambda: model, database=db, checkpointer=None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--questions", type=int, default=5)
    args = parser.parse_args()
    model = ScriptedChatModel()
    with scratch_database("scale", movies=False) as db:
        generate(db, args.nodes, args.nodes)
        reused = new_agent(db, model)
        ask(reused, model)  # its schema read, the server's plan cache warm
        rows = {"a reused agent": [ask(reused, model) for _ in range(args.questions)]}

        def later(agent: KGQueryReflexionAgent) -> float:
            time.sleep(RECHECK_S)
            return ask(agent, model)

        rows["a reused agent, a second apart"] = [later(reused) for _ in range(args.questions)]

        def fresh(forget: bool, pause: bool = False) -> float:
            if forget:
                forget_schemas()
            if pause:
                time.sleep(RECHECK_S)  # the kept fingerprint is no longer trusted
            started = time.perf_counter()
            agent = new_agent(db, model)
            made = (time.perf_counter() - started) * 1000
            return made + ask(agent, model)

        rows["a new agent per question, in a burst"] = [fresh(False) for _ in range(args.questions)]
        rows["a new agent per question, a second apart"] = [fresh(False, True) for _ in range(args.questions)]
        rows["a new agent, no schema kept (as before)"] = [fresh(True) for _ in range(args.questions)]
    medians = {name: statistics.median(times) for name, times in rows.items()}
    print(f"| agent ({args.nodes:,} nodes) | median ms a question | / reused |")
    print("|---|---:|---:|")
    base = medians["a reused agent"]
    for name, value in medians.items():
        print(f"| {name} | {value:.1f} | {value / base:.1f}x |")
    print(f"\n{args.questions} questions a row, one query each, scripted model. Machine: {machine()}\n")
    apart = medians["a new agent per question, a second apart"]
    print(f"A new agent a second apart against the reused agent back to back: {apart / base:.2f}x.\n")
    print(result_line("new_agent_vs_reused", apart / medians["a reused agent, a second apart"], TARGET, unit="x"))


if __name__ == "__main__":
    main()
