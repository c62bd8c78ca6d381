"""Every agent and flow on a second graph with other labels (the shop example), so nothing can
quietly lean on the movies demo: the oracle scores its 80 gold questions, and no movies example
reaches a prompt."""

from __future__ import annotations

import csv

import pytest
from langchain_core.messages import BaseMessage

from reflexion_agents.graphs.evaluation import evaluate
from reflexion_agents.graphs.text2cypher_flow import FLOWS, Text2CypherFlow
from reflexion_agents.nodes.evaluation.dataset import load_dataset
from reflexion_agents.nodes.graphdb.demo_data import SHOP_QUESTIONS_CSV
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.text2cypher.fewshots import SEED_EXAMPLES
from tests.helpers import graph_fingerprint

MOVIES_EXAMPLE_QUESTIONS = [row["question"] for row in csv.DictReader(SEED_EXAMPLES.open(encoding="utf-8"))]
SEAFOOD = "MATCH (p:Product)-[:PART_OF]->(:Category {categoryName: 'Seafood'}) RETURN p.productName AS product"


@pytest.mark.parametrize("agent", ["reflexion", *FLOWS])
async def test_the_oracle_answers_every_shop_question(shop_db, agent):
    before = graph_fingerprint(shop_db)
    report = await evaluate(
        agent=agent, model="oracle", items=load_dataset(SHOP_QUESTIONS_CSV), db=shop_db, concurrency=4
    )
    assert report.excluded == 0 and report.overall.scored == 80
    assert report.overall.correct == 80
    assert graph_fingerprint(shop_db) == before


def shop_model(messages: list[BaseMessage]) -> object:
    """Whatever step a flow asks for, a plausible reply on the shop graph."""
    system = str(messages[0].content)
    tool = next(
        t
        for t in ("GuardrailDecision", "SubQuestions", "CypherQuery", "Evaluation", "InformationCheck", "Summary")
        if f"`{t}`" in system
    )
    return tool_reply(
        tool,
        {
            "GuardrailDecision": {"answerable": True},
            "SubQuestions": {"questions": ["Which products are seafood?"]},
            "CypherQuery": {"cypher": SEAFOOD},
            "Evaluation": {"ok": True},
            "InformationCheck": {"enough": True},
            "Summary": {"answer": "Ten seafood products, among them Smoked Salmon."},
        }[tool],
    )


@pytest.mark.parametrize("flow", FLOWS)
def test_no_movies_example_reaches_a_prompt_on_another_graph(shop_db, flow):
    model = ScriptedChatModel(default=shop_model)
    result = Text2CypherFlow(flow, conversation_factory=lambda: model, database=shop_db, checkpointer=None).ask(
        "Which products are seafood?"
    )
    assert result.stop_reason == "answered" and len(result.rows) == 10
    prompts = "\n".join(str(m.content) for call in model.calls for m in call)
    assert "Movie" not in prompts and "Tom Hanks" not in prompts
    assert not [q for q in MOVIES_EXAMPLE_QUESTIONS if q in prompts]
    assert "on this graph" not in prompts  # the shop graph has no examples of its own yet
    assert "shop__examples" not in shop_db.graphs()  # nothing was learned, so nothing was written
