"""The simulated model: seeded, misbehaving at the rates asked, and reading a request as a model reads it.

The judge reads results written in wordings this project never uses; the agents are scored on the
real movies graph with each misbehaviour turned all the way up.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from reflexion_agents.graphs.cli import SIMULATED_RATES
from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.evaluation.faults import MODEL_FAULTS
from reflexion_agents.nodes.evaluation.oracle import scoring
from reflexion_agents.nodes.evaluation.simulated import (
    RATES,
    Misbehaviour,
    SimulatedChatModel,
    looks_right,
    read_result,
    simulated_run,
)

GOLD = "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title"
GOLD_ROWS = [["Cast Away"], ["Big"]]


@pytest.mark.parametrize(
    ("text", "right"),
    [
        ('Two rows came back.\n{"movie": "Big"}\n{"movie": "Cast Away"}', True),  # another wording, other column
        ('Result: 2 row(s)\n  {"m.title": "Big"}\n  {"m.title": "Splash"}', False),  # a wrong row
        ('3 rows, the first 1 shown\n{"m.title": "Big"}', False),  # the count says more than the gold has
        ("The query matched nothing: no rows.", False),
        ("Error: Unknown function 'apoc.x'", False),
    ],
)
def test_the_judge_reads_rows_and_counts_in_any_wording(text, right):
    assert looks_right(read_result(text), GOLD_ROWS) is right
    assert looks_right(read_result("It found no rows at all."), []) is True


def test_the_same_seed_gives_the_same_first_draft_to_every_agent_and_other_seeds_other_ones():
    items = load_dataset(limit=200)
    drafts = lambda seed: [simulated_run(i.question, i.cypher, [], Misbehaviour(seed=seed)).draft for i in items]  # noqa: E731
    assert drafts(0) == drafts(0) and drafts(0) != drafts(1)
    faulty = [simulated_run(i.question, i.cypher, [], Misbehaviour()).fault for i in items]
    share = sum(f is not None for f in faulty) / len(faulty)
    assert 0.4 < share < 0.6  # half the drafts, as asked
    assert len(Counter(f for f in faulty if f)) == 7  # every kind of mistake occurs


def test_the_rate_defaults_the_command_line_shows_are_the_models():
    assert [flag.removeprefix("--").replace("-", "_") for flag, _, _ in SIMULATED_RATES] == list(RATES)
    assert [default for _, default, _ in SIMULATED_RATES] == [getattr(Misbehaviour(), r) for r in RATES]
    with pytest.raises(ValueError, match="self_scoring must be a probability"):
        Misbehaviour(self_scoring=1.5)


def revise_request(shown: str) -> list:
    call = {"name": "GenerateQuery", "args": {"answer": GOLD}, "id": "c1", "type": "tool_call"}
    return [
        SystemMessage("s"),
        HumanMessage("Which movies?"),
        AIMessage("", tool_calls=[call]),
        ToolMessage(shown, tool_call_id="c1"),
    ]


def reply_to(model, messages, config=None):
    from reflexion_agents.schemas.kg_query import ReviseQuery

    bound = model.bind_tools([ReviseQuery])
    return bound.invoke(messages, config)


def test_it_keeps_a_right_result_and_rewrites_a_wrong_one_and_writes_scores_oddly():
    behaviour = Misbehaviour(draft_faults=0, revision_faults=0, repeats=0, self_scoring=0, odd_scores=1, prose_json=0)
    model = SimulatedChatModel()
    run = simulated_run("Which movies?", GOLD, GOLD_ROWS, behaviour)
    run.written.append("MATCH (m:Movie) RETURN m.title")
    with scoring(run) as config:  # as the evaluation runs each question
        wrong = reply_to(model, revise_request('{"title": "Splash"}'), config)
        right = reply_to(model, revise_request('{"t": "Big"}\n{"t": "Cast Away"}'), config)
    wrong_args, right_args = wrong.tool_calls[0]["args"], right.tool_calls[0]["args"]
    assert wrong_args["revised_query"] == GOLD and right_args["revised_query"] == GOLD  # the fix, then kept
    assert all(isinstance(a["score"], str) for a in (wrong_args, right_args))  # "8/10", "eight", ...


def test_json_in_prose_comes_as_text_with_no_tool_call():
    run = simulated_run("Which movies?", GOLD, GOLD_ROWS, Misbehaviour(prose_json=1))
    with scoring(run) as config:
        reply = reply_to(SimulatedChatModel(), revise_request('{"t": "Big"}\n{"t": "Cast Away"}'), config)
    assert not reply.tool_calls and "```json" in reply.content
    assert json.loads(reply.content.split("```json")[1].split("```")[0])["revised_query"]


async def test_a_model_that_always_praises_its_own_revision_never_ends_a_run_on_no_rows(movies_db):
    """The failure the evidence rules are for: under the old rules such a model ended runs with no rows."""
    behaviour = Misbehaviour(draft_faults=1, self_scoring=1, revision_faults=0, repeats=0, seed=5)
    items = load_dataset(limit=120)
    report = await evaluate(agent="reflexion", model="simulated", items=items, db=movies_db, misbehaviour=behaviour)
    scored = [t for t in report.traces if t.correct is not None]
    assert scored and all(t.correct for t in scored)
    wrongly_empty = [t for t in scored if t.gold_rows and not t.answer.rows]
    assert wrongly_empty == []
    assert report.overall.mean_llm_calls <= 3.5


async def test_every_misbehaviour_at_once_still_leaves_the_reflexion_agent_ahead(movies_db):
    behaviour = Misbehaviour(
        draft_faults=1, revision_faults=0.5, repeats=0.3, self_scoring=1, odd_scores=1, prose_json=0.3
    )
    items = load_dataset(limit=100)
    reports = {
        agent: await evaluate(agent=agent, model="simulated", items=items, db=movies_db, misbehaviour=behaviour)
        for agent in ("reflexion", "retry")
    }
    accuracy = {a: r.overall.correct / r.overall.scored for a, r in reports.items()}
    assert accuracy["reflexion"] > accuracy["retry"] and accuracy["reflexion"] >= 0.9
    assert {g.name for g in reports["reflexion"].by_fault} <= {"none", *MODEL_FAULTS}
