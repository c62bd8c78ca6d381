"""No model reply crashes a registered graph (the issue "no crash from any reply").

Every registered graph (`graphs.registry`) runs, as LangGraph server runs it (`graph.invoke`
on the registry's graph, the model built from the environment: the real
`langchain-openai` client, pointed at `tests/openai_stub.py`), on a copy of the
movies graph in the session's embedded FalkorDB. The model is `FuzzModel`
(`tests/reply_fuzz.py`): seeded replies, about half of them broken; the Wikipedia
agent uses its live MediaWiki client, served from the sample corpus on loopback.
Each run must end with a typed stop reason; a failed run must say why in `error`
(never with a traceback), a successful one must carry an answer, and both must be
printable (no lone surrogate); the data graph must be unchanged after all runs.

The default run is short enough for `make test`. For a longer sweep set
`REFLEXION_FUZZ_RUNS=N` (runs; default 96) and optionally `REFLEXION_FUZZ_SEED=S`
(the first run's seed; default 1040): run `i` uses seed `S + i` on graph
`(S + i) mod 8`, so a failure's seed, given as `REFLEXION_FUZZ_SEED=<seed>
REFLEXION_FUZZ_RUNS=1`, replays exactly that run.
"""

from __future__ import annotations

import os
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from typing import Any, get_args

import pytest
from langchain_core.messages import HumanMessage

from reflexion_agents.graphs import registry
from reflexion_agents.nodes.graphdb import FalkorDBGraph
from reflexion_agents.nodes.react.results import react_result
from reflexion_agents.nodes.tools.wikipedia import WikipediaTools
from reflexion_agents.nodes.tools.wikipedia_backends import LocalCorpus, MediaWikiAPI
from reflexion_agents.schemas.extraction import ExtractionStopReason
from reflexion_agents.schemas.kg_query import KGQueryStopReason
from reflexion_agents.schemas.react import ReActStopReason
from reflexion_agents.schemas.text2cypher import FlowStopReason
from tests.helpers import graph_fingerprint
from tests.openai_stub import OpenAIStub
from tests.reply_fuzz import FuzzModel
from tests.wikipedia_stub import MediaWikiStub

SWEEP = bool(os.environ.get("REFLEXION_FUZZ_RUNS"))  # a sweep prints its report; the default run on failure
RUNS = int(os.environ.get("REFLEXION_FUZZ_RUNS") or 96)
SEED = int(os.environ.get("REFLEXION_FUZZ_SEED") or 1040)
FUZZ_GRAPH = "movies_fuzz"
QUESTIONS = {
    "kg_reflexion": "Which movies did Tom Hanks act in?",
    "react_wikipedia": "Who was Milhouse named after?",
    "react_tools": "What is 6 times 7?",
    "structured_output": "I own a Fiat Panda with 45Hp.",
}
FLOW_QUESTION = "Which movies did Tom Hanks act in?"
FAILED = {"model_error", "tool_unavailable", "invalid_input"}
SUCCEEDED = {"finished", "validated", "answered", "score_threshold", "non_empty_result", "empty_result", "not_in_graph"}


def registered(wikipedia_api: str) -> dict[str, tuple[Any, Any]]:
    """Each registered graph by name, built as the server builds it from this test's environment
    (the Wikipedia agent on the live client, pointed at the sample corpus): (the compiled graph,
    the agent or flow object behind it)."""
    built = {}
    for name in registry.names():
        live = {"wikipedia": WikipediaTools(MediaWikiAPI(wikipedia_api))} if name == "react_wikipedia" else {}
        owner = registry.build(name, **live)
        built[name] = (owner.graph, owner)
    return built


def close(owner: Any) -> None:
    if hasattr(owner, "close"):
        owner.close()


def result_of(name: str, owner: Any, state: dict[str, Any]) -> tuple[str | None, Any, str | None]:
    """(stop reason, answer, error) as the graph's own result type reads them from the final state."""
    if name.startswith("text2cypher"):
        result = owner.result(state)
        return result.stop_reason, result.answer, result.error
    if name.startswith("react"):
        result = react_result(state)
        return result.stop_reason, result.answer, result.error
    result = owner._parse_final_result(state)
    if name == "structured_output":
        return result.stop_reason, result.value, result.error
    return result.stop_reason, result.answer, result.error


#: The stop reasons each agent declares (the engine's, and its own); the flows share `FlowStopReason`.
STOP_REASONS: dict[str, Any] = {
    "kg_reflexion": KGQueryStopReason,
    "react_tools": ReActStopReason,
    "react_wikipedia": ReActStopReason,
    "structured_output": ExtractionStopReason,
}


def problem(name: str, owner: Any, state: dict[str, Any]) -> str | None:
    """What is wrong with how the run ended, or None."""
    stop, answer, error = result_of(name, owner, state)
    typed = get_args(STOP_REASONS.get(name, FlowStopReason))
    if stop not in typed or stop == "awaiting_approval":
        return f"untyped stop reason {stop!r}"
    if stop in FAILED and not (isinstance(error, str) and error.strip()):
        return f"stopped {stop} without saying why"
    if stop in SUCCEEDED and not (str(answer).strip() if answer is not None else ""):
        return f"stopped {stop} with an empty answer"
    if "the model call failed" in str(error):  # the stub always answers: a reply was taken for a failed call
        return f"a reply ended the run without a corrective retry: {error[:200]}"
    if "Traceback (most recent call last)" in str(error):
        return f"a traceback as the error: {error[:300]}"
    for shown in (answer, error):
        try:
            str(shown).encode("utf-8")
        except UnicodeEncodeError:
            return f"what the user reads cannot be printed: {str(shown)[:100]!r}"
    return None


def report(
    runs: int,
    replies: int,
    seconds: float,
    kinds: Counter[str],
    stops: Counter[tuple[str, str]],
    errors: Counter[str],
    findings: dict[str, list[int]],
) -> str:
    """Runs, replies by kind, stop reasons by graph, model_error reasons, what went wrong (and the seeds)."""
    lines = [f"reply fuzzer: {runs} runs from seed {SEED}, {replies} replies in {seconds:.1f} s"]
    lines.append("  reply kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    for name in sorted({g for g, _ in stops}):
        ended = ", ".join(f"{stop} {n}" for (graph, stop), n in sorted(stops.items()) if graph == name)
        lines.append(f"  {name}: {ended}")
    lines += [f"  model_error {count}x: {error}" for error, count in errors.most_common()]
    for finding, seeds in sorted(findings.items(), key=lambda item: -len(item[1])):
        lines.append(f"  FAILED {len(seeds)}x: {finding}; seeds {', '.join(map(str, seeds[:8]))}")
    return "\n".join(lines)


@pytest.fixture
def fuzz_db(movies_db: FalkorDBGraph) -> Iterator[FalkorDBGraph]:
    """A copy of the movies graph, so examples the flows learn stay out of other tests' way."""
    for leftover in (FUZZ_GRAPH, f"{FUZZ_GRAPH}__examples"):
        if leftover in movies_db.graphs():
            movies_db.sibling(leftover).clear()
    movies_db.copy_to(FUZZ_GRAPH)
    db = movies_db.sibling(FUZZ_GRAPH)
    yield db
    db.clear()
    movies_db.sibling(f"{FUZZ_GRAPH}__examples").clear()


@pytest.mark.timeout(max(120, RUNS * 3))
def test_no_fuzzed_reply_crashes_a_registered_graph(fuzz_db, falkordb_server, monkeypatch, capsys):
    before = graph_fingerprint(fuzz_db)
    failures: list[str] = []
    findings: dict[str, list[int]] = {}  # what went wrong (kind, graph, step) -> the seeds it went wrong with
    stops: Counter[tuple[str, str]] = Counter()
    errors: Counter[str] = Counter()
    model = FuzzModel(SEED)
    replies, kinds = 0, Counter[str]()
    started = time.perf_counter()
    # The stub asks whichever model the current run set (the name is looked up at each request).
    with OpenAIStub(lambda request: model(request)) as stub, MediaWikiStub(LocalCorpus.from_file()) as wiki:
        for variable, value in {
            "OPENAI_BASE_URL": stub.base_url,
            "OPENAI_API_KEY": "test",
            "REFLEXION_GRAPH": FUZZ_GRAPH,
            "REFLEXION_DATABASE_URL": f"falkordb://{falkordb_server.host}:{falkordb_server.port}",
        }.items():
            monkeypatch.setenv(variable, value)
        monkeypatch.delenv("REFLEXION_MODEL", raising=False)
        graphs = registered(wiki.api_url)
        names = sorted(graphs)
        try:
            for run in range(RUNS):
                seed = SEED + run
                name = names[seed % len(names)]
                graph, owner = graphs[name]
                model = FuzzModel(seed)
                flow = name.startswith("text2cypher")
                asked = {"messages": [HumanMessage(QUESTIONS.get(name, ""))]}
                inputs = {"question": FLOW_QUESTION} if flow else asked
                try:
                    state = graph.invoke(inputs)
                except Exception as e:
                    trace = traceback.format_exc(limit=-4)
                    failures.append(f"seed {seed} ({name}): uncaught {type(e).__name__}: {e!s:.200}\n{trace}")
                    stops[(name, f"uncaught {type(e).__name__}")] += 1
                    task = " ".join(getattr(e, "__notes__", [])).partition(" and id ")[0]
                    findings.setdefault(f"uncaught {type(e).__name__} in {name} ({task})", []).append(seed)
                else:
                    stops[(name, str(state.get("stop_reason")))] += 1
                    if state.get("stop_reason") == "model_error":
                        errors[" ".join(str(state.get("error")).split()[:7])] += 1
                    wrong = problem(name, owner, state)
                    if wrong:
                        failures.append(f"seed {seed} ({name}): {wrong}")
                        findings.setdefault(f"{name}: {wrong.partition(':')[0]}", []).append(seed)
                replies += model.replies
                kinds.update(model.kinds)
                stub.requests.clear()  # they hold megabyte strings
        finally:
            for _, owner in graphs.values():
                close(owner)
    summary = report(RUNS, replies, time.perf_counter() - started, kinds, stops, errors, findings)
    if SWEEP:
        with capsys.disabled():
            print("\n" + summary)
    assert graph_fingerprint(fuzz_db) == before, "a fuzzed reply changed the graph"
    replay = "replay one with REFLEXION_FUZZ_SEED=<seed> REFLEXION_FUZZ_RUNS=1"
    shown = "\n".join(failures[:5])
    assert not failures, f"{len(failures)} of {RUNS} runs went wrong ({replay}):\n{summary}\n{shown}"
