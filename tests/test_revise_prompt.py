"""What a revision is sent, read by a model that sees nothing else.

The model below keeps no state and knows nothing of the graph: at every call it reads the messages
it is sent, finds relationship patterns (`(:A)-[:R]->(:B)`) and a label's name property in them,
reads the question, the newest result's error or rows, and writes its next query from what it
found. It runs on the shop graph, whose labels are not the movies demo's, with and without a
kg_prompt given to `execute`. If a revise call lacked the question, the newest error text or rows,
the dialect notes an error needs, or the labels and properties of the next query, the model could
not write that query and the run would not end with the right rows.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.models import ScriptedChatModel, tool_reply
from reflexion_agents.nodes.prompts import BioCypherPromptEngine

QUESTION = "Which seafood products are there, and which company supplies each?"
ARROW = re.compile(r"\(:(\w+)\)-\[:([\w|]+)[^\]]*\]->\(:(\w+)\)")  # `[:A|B]`: either type


def text_of(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


def pattern(text: str, verb: str) -> tuple[str, str, str]:
    """The relationship pattern whose type reads as `verb` ("part of", "supplies")."""
    wanted = verb.upper().replace(" ", "_")
    found = [(m.group(1), wanted, m.group(3)) for m in ARROW.finditer(text) if wanted in m.group(2).split("|")]
    assert found, f"no (:A)-[:{wanted}]->(:B) pattern in the prompt"
    return found[0]


def name_property(text: str, label: str) -> str:
    """The property that names a `label` node, from the line that describes the label."""
    for line in text.splitlines():
        if f"(:{label}" in line and "]->" not in line:
            found = re.search(r"\b(\w*Name)\b", line.split(f"(:{label}", 1)[1])
            if found:
                return found.group(1)
    raise AssertionError(f"no name property of {label} in the prompt")


def rows_of(result: str) -> list[dict[str, Any]]:
    """The rows a result shows, by column: its `columns: ["a", "b"].` line names them, each row a JSON array."""
    named = re.search(r"columns: (\[.*?\])\.(?: |$)", result, re.MULTILINE)
    columns = json.loads(named.group(1)) if named else []
    rows = [json.loads(line) for line in result.splitlines() if line.startswith("[") and line.endswith("]")]
    return [dict(zip(columns, row, strict=True)) for row in rows if isinstance(row, list)]


class ReadingModel:
    """Answers the draft and every revision from the text it is sent; `seen` keeps what each
    revision found: the question, the newest error or rows."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def __call__(self, messages: list[BaseMessage]) -> Any:
        text = text_of(messages)
        question = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        product, part_of, category = pattern(text, "part of")
        word = next(w for w in ("seafood", "produce", "dairy") if w in question.lower())
        category_name, product_name = name_property(text, category), name_property(text, product)
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:  # the draft: a first try with an operator FalkorDB rejects
            query = (
                f"MATCH (p:{product})-[:{part_of}]->(c:{category}) WHERE c.{category_name} =~ '(?i){word}' "
                f"RETURN p.{product_name} AS product"
            )
            return tool_reply("GenerateQuery", {"answer": query, "reflection": "first try", "search_queries": []})
        latest = str(results[-1].content)
        seen: dict[str, Any] = {"question": question, "error": None, "rows": rows_of(latest)}
        self.seen.append(seen)
        filter_ = f"toLower(c.{category_name}) = '{word}'"
        rejected = re.search(r"does not currently support (\S+)", latest)
        if rejected:  # fix what the error names, with the alternative the dialect notes give
            seen["error"] = rejected.group(0)
            system = str(messages[0].content)
            assert isinstance(messages[0], SystemMessage) and rejected.group(1) in system and "toLower()" in system
            query = (
                f"MATCH (p:{product})-[:{part_of}]->(c:{category}) WHERE {filter_} RETURN p.{product_name} AS product"
            )
            return tool_reply("ReviseQuery", {"reflection": "unsupported operator", "revised_query": query, "score": 0})
        previous = next(m for m in reversed(messages) if getattr(m, "tool_calls", None)).tool_calls[0]["args"]
        previous_query = previous.get("revised_query") or previous["answer"]
        if "supplies" in question and not all(row.get("supplier") for row in seen["rows"]):
            supplier, supplies, _ = pattern(text, "supplies")
            query = (
                f"MATCH (s:{supplier})-[:{supplies}]->(p:{product})-[:{part_of}]->(c:{category}) WHERE {filter_} "
                f"RETURN p.{product_name} AS product, s.{name_property(text, supplier)} AS supplier"
            )
            return tool_reply("ReviseQuery", {"reflection": "no suppliers yet", "revised_query": query, "score": 3})
        return tool_reply("ReviseQuery", {"reflection": "answers it", "revised_query": previous_query, "score": 9})


@pytest.mark.parametrize("given_prompt", [False, True], ids=["live schema", "kg_prompt given"])
def test_every_revision_finds_what_it_needs_in_what_it_is_sent(shop_db, given_prompt):
    model = ReadingModel()
    chat = ScriptedChatModel(default=model)
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: chat, database=shop_db, checkpointer=None, trust_non_empty_result=False
    )
    kg_prompt = BioCypherPromptEngine(database=shop_db).generate_query_prompt(QUESTION) if given_prompt else None
    result = agent.execute(QUESTION, kg_prompt)

    assert result.stop_reason == "score_threshold" and result.steps == 3
    assert "SUPPLIES" in (result.answer or "") and result.columns == ["product", "supplier"]
    assert len(result.tool_result or []) == 10 and all(product and supplier for product, supplier in result.tool_result)
    assert [s["question"] for s in model.seen] == [QUESTION] * 3
    error, products, suppliers = model.seen
    assert error["error"] and error["error"] in (result.outcomes[0].error or "")  # the newest error text
    outcome_rows = [[list(r.values()) for r in s["rows"]] for s in (products, suppliers)]
    assert outcome_rows == [result.outcomes[1].rows, result.outcomes[2].rows]  # the newest rows, every time
    assert not any("Movie" in text_of(call) or "Tom Hanks" in text_of(call) for call in chat.calls)


def run_to_rows(shop_db, kg_prompt: str | None = None) -> tuple[KGQueryReflexionAgent, list[str]]:
    """A run whose results are an error, no rows, then rows: the system message of each model call."""
    empty = "MATCH (c:Category {categoryName: 'Shellfish'}) RETURN c.description AS description"
    found = "MATCH (c:Category {categoryName: 'Seafood'}) RETURN c.description AS description"
    script = [
        tool_reply("GenerateQuery", {"answer": "MATCH (c:Category) WHERE c.categoryName =~ 'S.*' RETURN c"}),
        tool_reply("ReviseQuery", {"revised_query": empty, "score": 0}),
        tool_reply("ReviseQuery", {"revised_query": found, "score": 1}),
        tool_reply("ReviseQuery", {"revised_query": found, "score": 9}),
    ]
    chat = ScriptedChatModel(replies=script)
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: chat, database=shop_db, checkpointer=None, trust_non_empty_result=False
    )
    result = agent.execute("What is the seafood category?", kg_prompt)
    assert result.stop_reason == "score_threshold" and [o.non_empty for o in result.outcomes] == [False, False, True]
    return agent, [str(call[0].content) for call in chat.calls]


def test_revisions_get_the_schemas_names_and_the_dialect_notes_only_after_an_error(shop_db):
    """The whole kg_prompt (types, example values) goes with the draft; every revision is sent the
    schema's names, and one judging a database error the dialect notes too. biochatter's revisions
    carry no schema at all: sending the whole of it again made a question dearer than biochatter's."""
    agent, (draft, after_error, after_no_rows, after_rows) = run_to_rows(shop_db)
    schema = agent.schema_prompt()
    assert schema in draft and "does NOT support" in draft
    for revision in (after_error, after_no_rows, after_rows):
        assert schema not in revision and '"Seafood"' not in revision
        assert "(:Product)-[:PART_OF]->(:Category)" in revision and "categoryName" in revision
    assert "does NOT support" in after_error
    assert "does NOT support" not in after_no_rows and "does NOT support" not in after_rows


def test_a_given_kg_prompt_goes_with_the_draft_and_a_revision_judging_an_error(shop_db):
    """A kg_prompt is the user's: it goes unchanged with the draft (as biochatter sends it) and with a
    revision judging a database error, when its rules matter most; other revisions are sent the
    schema's names, so a revision does not pay for the whole prompt again."""
    kg_prompt = (
        "IMPORTANT: compare category names case-insensitively.\n"
        "(:Category {categoryName, description})\n(:Product)-[:PART_OF]->(:Category)"
    )
    _, (draft, after_error, after_no_rows, after_rows) = run_to_rows(shop_db, kg_prompt)
    assert kg_prompt in draft and kg_prompt in after_error
    for revision in (after_no_rows, after_rows):
        assert kg_prompt not in revision and "(:Product)-[:PART_OF]->(:Category)" in revision
