"""The state's growing lists (messages, outcomes) are stored as each step's additions
(schemas/state_channels.py): replaying a thread's writes gives back the same lists, however LangGraph
batches them, and a thread's storage grows with its steps, not with their square."""

from __future__ import annotations

import sqlite3
import zlib

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes.checkpoints import ThreadedSqliteSaver, sqlite_checkpointer
from reflexion_agents.nodes.compressed_serde import CompressedSerializer
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.state_channels import merged_messages, merged_outcomes, state_after
from tests.helpers import draft, revise

QUERIES = [
    "MATCH (p:Person {name: 'Tom Hanks'})-[:ACTED_IN]->(m:Movie) RETURN m.title AS title, %d AS attempt",
    "MATCH (m:Movie {title: 'The Matrix'}) RETURN m.released AS released, %d AS attempt",
]


@pytest.mark.unit
def test_messages_replayed_in_any_batches_are_the_same_messages_with_the_same_ids():
    """Text and messages with no id (LangGraph gives message objects an id before it stores a write;
    text reaches the reducer without one) get the same id at every replay, so a run's recorded
    question (`asked_id`) is found again on resume."""
    writes = [
        [{"role": "user", "content": "Which movies?"}],
        [AIMessage(content="", id="run-1", tool_calls=[{"name": "q", "args": {}, "id": "c1"}])],
        [ToolMessage(content="3 rows", tool_call_id="c1")],
        [HumanMessage(content="Which movies?")],  # the same words again, later: another message
    ]
    at_once = merged_messages([], writes)
    one_by_one: list = []
    for write in writes:
        one_by_one = merged_messages(one_by_one, [write])
    split = merged_messages(merged_messages([], writes[:2]), writes[2:])
    assert [m.id for m in at_once] == [m.id for m in one_by_one] == [m.id for m in split]
    assert all(m.id for m in at_once) and len({m.id for m in at_once}) == 4
    assert [m.content for m in at_once] == ["Which movies?", "", "3 rows", "Which movies?"]


@pytest.mark.unit
def test_the_same_words_after_a_removal_are_a_new_message_and_a_bare_tuple_is_refused():
    from langchain_core.messages import RemoveMessage

    memory = merged_messages([], [["a", "b", "yes"]])
    memory = merged_messages(memory, [[RemoveMessage(id=memory[0].id)], ["yes"]])
    assert [m.content for m in memory] == ["b", "yes", "yes"]
    with pytest.raises(TypeError, match="write messages as a list"):
        merged_messages([], [("user", "hi")])
    assert [m.content for m in merged_messages([], [[("user", "hi")]])] == ["hi"]


@pytest.mark.unit
def test_a_revision_scores_the_outcome_of_its_step_and_a_new_question_starts_over():
    first = {"step": 1, "action": "MATCH (m) RETURN m", "executed": True, "score": None}
    second = {"step": 2, "action": "MATCH (p) RETURN p", "executed": True, "score": None}
    outcomes = merged_outcomes([], [[first], [second], [{"step": 1, "score": 8.0}]])
    assert outcomes == [{**first, "score": 8.0}, second]
    assert merged_outcomes(outcomes, [[], [second]]) == [second]  # a new question's draft writes []
    assert merged_outcomes(outcomes, [None, {"step": 2, "score": 1.0}])[1]["score"] == 1.0  # an edit's forms
    # what a node sees of the state its update makes, as the graph will hold it
    after = state_after({"outcomes": outcomes, "steps": 2}, {"outcomes": [{"step": 2, "score": 3.0}], "steps": 2})
    assert [o["score"] for o in after["outcomes"]] == [8.0, 3.0]


def run_thread(movies_db, path, iterations: int, thread: str) -> KGQueryReflexionAgent:
    """A question of `iterations` queries, each revision scoring its own result low but the last."""
    queries = [QUERIES[i % 2] % i for i in range(iterations)]
    replies = [draft(queries[0])] + [revise(q, score=2) for q in queries[1:]] + [revise(queries[-1], score=9)]
    model = ScriptedChatModel(replies=replies)
    agent = KGQueryReflexionAgent(
        conversation_factory=lambda: model,
        database=movies_db,
        max_steps=iterations,
        checkpointer=sqlite_checkpointer(path),
        trust_non_empty_result=False,
    )
    result = agent.execute("Which movies did Tom Hanks act in?", config={"configurable": {"thread_id": thread}})
    assert result.steps == iterations, (result.stop_reason, result.error)
    return agent


def stored(path, thread: str) -> list[int]:
    """The bytes of each of the thread's checkpoints and of its writes, oldest first."""
    with sqlite3.connect(path) as connection:
        (number,) = connection.execute("SELECT id FROM threads WHERE thread_id = ?", (thread,)).fetchone()
        checkpoints = connection.execute(
            "SELECT length(checkpoint) FROM thread_checkpoints WHERE thread = ? ORDER BY checkpoint_id", (number,)
        ).fetchall()
        writes = connection.execute("SELECT sum(length(pack)) FROM thread_writes WHERE thread = ?", (number,))
        return [n for (n,) in checkpoints] + [writes.fetchone()[0]]


def test_a_thread_read_back_by_another_saver_has_every_message_and_scored_outcome(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    agent = run_thread(movies_db, path, 6, "six")
    config = {"configurable": {"thread_id": "six"}}
    live = agent.graph.get_state(config).values
    # another saver, on a connection of its own (as another process opens the file), reading the packed rows
    saver = ThreadedSqliteSaver(sqlite3.connect(path, check_same_thread=False))
    read_back = agent.graph.copy(update={"checkpointer": saver}).get_state(config).values
    assert [(m.id, m.content) for m in read_back["messages"]] == [(m.id, m.content) for m in live["messages"]]
    assert read_back["outcomes"] == live["outcomes"] and len(live["outcomes"]) == 6
    assert [o["score"] for o in read_back["outcomes"]] == [2, 2, 2, 2, 2, 9]
    assert read_back["asked_id"] == live["messages"][0].id  # the question the run recorded, found again


def test_a_threads_storage_grows_with_its_steps_not_their_square(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    run_thread(movies_db, path, 3, "three")
    run_thread(movies_db, path, 9, "nine")
    short, long = stored(path, "three"), stored(path, "nine")
    # no checkpoint holds the lists whole: the loop's stay the size of an early one, and the last (which
    # holds the answer) is no bigger after nine iterations than after three
    assert max(long[2:-2]) < 2 * long[2]
    assert long[-2] < 1.5 * short[-2]
    # three times the steps, about three times the bytes (the square would be nine times)
    assert sum(long) < 3.6 * sum(short)


@pytest.mark.unit
def test_large_values_are_stored_compressed_and_rows_stored_before_still_read():
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde, plain = CompressedSerializer(), JsonPlusSerializer()
    rows = [["Tom Hanks", "Cast Away", 2000]] * 50
    kind, data = serde.dumps_typed(rows)
    assert kind.endswith(".zstd1") and len(data) < len(plain.dumps_typed(rows)[1]) / 3
    assert serde.loads_typed((kind, data)) == rows
    assert serde.loads_typed(plain.dumps_typed(rows)) == rows  # a file written before compression
    plain_kind, plain_data = plain.dumps_typed(rows)  # as the release before the dictionary stored them
    assert serde.loads_typed((plain_kind + ".zlib", zlib.compress(plain_data))) == rows
    assert serde.dumps_typed("short") == plain.dumps_typed("short")  # too small to gain


@pytest.mark.unit
def test_a_graphs_msgpack_allowlist_keeps_the_compression():
    strict = CompressedSerializer(allowed_msgpack_modules=[("datetime", "date")])
    widened = strict.with_msgpack_allowlist([("reflexion_agents.schemas.graphdb", "QueryResult")])
    assert isinstance(widened, CompressedSerializer) and widened is not strict


def test_a_hook_sees_the_ids_its_messages_are_stored_with(movies_db, tmp_path):
    """A biochatter-style `_should_continue` reads the state the revision's update makes; the messages
    the step added (the tool result, the revision) have the ids the thread then stores, not none."""
    seen: list[list[str | None]] = []

    class Watching(KGQueryReflexionAgent):
        def _should_continue(self, state):
            seen.append([m.id for m in state["messages"]])
            return super()._should_continue(state)

    model = ScriptedChatModel(
        replies=[draft(QUERIES[0] % 0), revise(QUERIES[1] % 1, score=2), revise(QUERIES[1] % 1, 9)]
    )
    agent = Watching(
        conversation_factory=lambda: model, database=movies_db, checkpointer=sqlite_checkpointer(tmp_path / "t.sqlite")
    )
    result = agent.execute("Which movies did Tom Hanks act in?", thread_id="hooked")
    stored_ids = [m.id for m in agent.graph.get_state({"configurable": {"thread_id": "hooked"}}).values["messages"]]
    assert result.steps == 2 and len(seen) == 2
    assert all(seen_ids and all(seen_ids) for seen_ids in seen)
    assert seen[-1] == stored_ids[: len(seen[-1])] and len(set(stored_ids)) == len(stored_ids)
