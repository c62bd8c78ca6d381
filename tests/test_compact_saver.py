"""The default SQLite checkpointer (nodes/compact_saver.py): LangGraph's checkpoint contract, checked by
LangGraph's own conformance suite; files written by LangGraph's `SqliteSaver` converted and resumed;
the compression dictionary guarded."""

from __future__ import annotations

import sqlite3
import uuid
from typing import Annotated, NotRequired

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from typing_extensions import TypedDict

from reflexion_agents.graphs.kg_query_agent import KGQueryReflexionAgent
from reflexion_agents.nodes import checkpoint_dictionary
from reflexion_agents.nodes.checkpoints import ThreadedSqliteSaver, wal_connection
from reflexion_agents.nodes.models import ScriptedChatModel
from reflexion_agents.schemas.errors import ConfigurationError
from tests.helpers import EMPTY_QUERY, TOM_HANKS_QUERY, draft, keep, revise


def table_names(path) -> set[str]:
    with sqlite3.connect(path) as connection:
        return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


@pytest.mark.unit
async def test_the_saver_passes_langgraphs_conformance_suite(tmp_path):
    @checkpointer_test(name="ThreadedSqliteSaver")
    async def fresh_saver():
        saver = ThreadedSqliteSaver(wal_connection(str(tmp_path / f"{uuid.uuid4().hex}.sqlite")))
        saver.setup()
        yield saver

    report = await validate(fresh_saver)
    report.print_report()
    assert report.passed_all_base()


@pytest.mark.unit
def test_a_tasks_writes_keep_the_first_regular_write_and_the_last_special_one(tmp_path):
    """As LangGraph's `SqliteSaver` keeps them: a task's write sent again (a retried step) does not
    replace the first, while an interrupt or an error sent again does."""
    saver = ThreadedSqliteSaver(wal_connection(str(tmp_path / "t.sqlite")))
    config = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, empty_checkpoint(), {"source": "loop", "step": 0}, {}
    )
    saver.put_writes(config, [("messages", "first"), ("steps", 1)], "task-1", "~a")
    saver.put_writes(config, [("messages", "again"), ("error", "later")], "task-1", "~a")
    saver.put_writes(config, [("__interrupt__", "asked once")], "task-1", "~a")
    saver.put_writes(config, [("__interrupt__", "asked twice")], "task-1", "~a")
    saver.put_writes(config, [("messages", "other task")], "task-0", "~a")
    writes = saver.get_tuple(config).pending_writes
    assert writes == [
        ("task-0", "messages", "other task"),  # LangGraph's replay order: by path, task, index
        ("task-1", "__interrupt__", "asked twice"),
        ("task-1", "messages", "first"),
        ("task-1", "steps", 1),
    ]


def test_a_paused_run_in_a_file_langgraphs_saver_wrote_resumes_after_the_file_is_converted(movies_db, tmp_path):
    path = tmp_path / "threads.sqlite"
    # the finished run's three replies, then the paused run's draft
    first = ScriptedChatModel(
        replies=[draft(EMPTY_QUERY), revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY, 9), draft(EMPTY_QUERY)]
    )
    langgraphs = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    before = KGQueryReflexionAgent(
        conversation_factory=lambda: first,
        database=movies_db,
        checkpointer=langgraphs,
    )
    finished = before.execute("Which movies did Tom Hanks act in?", thread_id="finished")
    paused = before.execute("Tom Hanks movies?", thread_id="paused", context={"require_approval": True})
    assert paused.stop_reason == "awaiting_approval" and {"checkpoints", "writes"} <= table_names(path)
    as_written = before.graph.get_state({"configurable": {"thread_id": "finished"}}).values
    langgraphs.conn.close()

    model = ScriptedChatModel(replies=[revise(TOM_HANKS_QUERY, 2), keep(TOM_HANKS_QUERY, 9)])
    after = KGQueryReflexionAgent(
        conversation_factory=lambda: model,
        database=movies_db,
        checkpointer=ThreadedSqliteSaver(wal_connection(str(path))),
    )
    stored = after.graph.get_state({"configurable": {"thread_id": "finished"}}).values
    assert stored["query"] == finished.answer and stored["rows"] == finished.tool_result
    assert [(m.id, m.content) for m in stored["messages"]] == [(m.id, m.content) for m in as_written["messages"]]
    assert stored["outcomes"] == as_written["outcomes"] and len(stored["outcomes"]) == 2
    second = after.resume("paused", "approve")  # the empty query runs; the revision waits for approval too
    assert second.stop_reason == "awaiting_approval" and second.pending_approval["query"] == TOM_HANKS_QUERY
    done = after.resume("paused", "approve")
    assert done.stop_reason == "score_threshold" and ["Cast Away"] in done.tool_result
    assert table_names(path) & {"checkpoints", "writes"} == set()  # converted: LangGraph's tables are gone


@pytest.mark.unit
def test_a_changed_dictionary_is_refused_with_what_to_do(monkeypatch):
    checkpoint_dictionary.dictionary.cache_clear()
    monkeypatch.setattr(checkpoint_dictionary, "DICTIONARY_SHA256", "0" * 64)
    try:
        with pytest.raises(RuntimeError, match=r"was changed .* reinstall the package"):
            checkpoint_dictionary.dictionary()
    finally:
        checkpoint_dictionary.dictionary.cache_clear()
    assert (
        checkpoint_dictionary.decompress(checkpoint_dictionary.compress(b"channel_values" * 9)) == b"channel_values" * 9
    )


@pytest.mark.unit
def test_a_thread_deleted_by_one_process_and_started_again_by_another_is_one_thread(tmp_path):
    """Two savers on one file, as the server and `reflexion ask` share the default file."""
    path = str(tmp_path / "shared.sqlite")
    server, command = ThreadedSqliteSaver(wal_connection(path)), ThreadedSqliteSaver(wal_connection(path))
    start = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    first = server.put(start, empty_checkpoint(), {"source": "input", "step": -1}, {})
    assert command.get_tuple(start).config == first
    command.delete_thread("t")
    again = server.put(start, empty_checkpoint(), {"source": "input", "step": -1}, {})
    server.put_writes(again, [("messages", "after the delete")], "task", "~a")
    seen = command.get_tuple(start)
    assert seen.config == again and seen.pending_writes == [("task", "messages", "after the delete")]
    assert [t.config for t in command.list(start)] == [again]


@pytest.mark.unit
def test_listing_filters_and_limits_as_langgraphs_saver_does(tmp_path):
    """The same checkpoints put into LangGraph's `SqliteSaver` and into ours list the same way."""
    ours = ThreadedSqliteSaver(wal_connection(str(tmp_path / "ours.sqlite")))
    theirs = SqliteSaver(sqlite3.connect(tmp_path / "theirs.sqlite", check_same_thread=False))
    listings = []
    for saver in (ours, theirs):
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        for step, run in enumerate([{"user": "ann"}, {"user": "bob"}, None, {"user": "ann", "n": 2}]):
            metadata = {"source": "loop", "step": step, **({"run": run} if run else {}), "error": None}
            checkpoint = {**empty_checkpoint(), "id": f"1f000000-0000-6000-8000-00000000000{step}"}
            config = saver.put(config, checkpoint, metadata, {})
        listed = []
        for kwargs in [
            {"filter": {"run.user": "ann"}},
            {"filter": {"run": None}},
            {"filter": {"error": None, "step": 1}},
            {"filter": {"run": {"user": "bob"}}},
            {"limit": 2},
            {"filter": {"source": "loop"}, "limit": 3},
            {"before": config, "limit": 2},
            {"before": {"configurable": {}}},
        ]:
            found = saver.list({"configurable": {"thread_id": "t"}}, **kwargs)
            listed.append([t.config["configurable"]["checkpoint_id"][-1] for t in found])
        listings.append(listed)
    assert listings[0] == listings[1]
    assert listings[0][0] == ["3", "0"] and listings[0][4] == ["3", "2"]


@pytest.mark.unit
def test_a_parent_chain_that_loops_ends_the_history_walk(tmp_path):
    """A checkpoint put again under a descendant's config makes its parents a loop; a resumed thread's
    growing lists are rebuilt by walking them (`get_delta_channel_history`), which must end."""
    saver = ThreadedSqliteSaver(wal_connection(str(tmp_path / "t.sqlite")))
    start = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    first = {**empty_checkpoint(), "id": "1f000000-0000-6000-8000-000000000001"}
    one = saver.put(start, first, {"step": 0}, {})
    saver.put_writes(one, [("messages", "w1")], "task", "~a")
    two = saver.put(one, {**empty_checkpoint(), "id": "1f000000-0000-6000-8000-000000000002"}, {"step": 1}, {})
    saver.put(two, first, {"step": 2}, {})  # the first again, now under the second: a loop
    history = saver.get_delta_channel_history(config=two, channels=["messages"])
    assert history == {"messages": {"writes": [("task", "messages", "w1")]}}


@pytest.mark.unit
def test_a_read_only_file_in_langgraphs_layout_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "old.sqlite"
    theirs = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    theirs.put({"configurable": {"thread_id": "t", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
    theirs.conn.close()
    read_only = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    with pytest.raises(ConfigurationError, match="open it once with write access to convert it"):
        ThreadedSqliteSaver(read_only).get_tuple({"configurable": {"thread_id": "t"}})


@pytest.mark.unit
def test_threads_are_listed_from_their_keys_as_the_generic_listing_finds_them(tmp_path):
    """`reflexion threads` asks the saver for its threads (newest first) instead of reading every
    checkpoint; what it lists is what walking every checkpoint finds."""
    from reflexion_agents.graphs.cli.threads import newest

    saver = ThreadedSqliteSaver(wal_connection(str(tmp_path / "t.sqlite")))
    configs = {name: {"configurable": {"thread_id": name, "checkpoint_ns": ""}} for name in ("a", "b", "c")}
    for step, name in enumerate(["a", "b", "a", "c", "b", "a"]):  # b ends before a, c in between
        checkpoint = {**empty_checkpoint(), "id": f"1f000000-0000-6000-8000-00000000000{step}"}
        checkpoint["channel_values"] = {"question": f"{name}?", "stop_reason": "score_threshold"}
        configs[name] = saver.put(configs[name], checkpoint, {"step": step}, {})
    saver.put({"configurable": {"thread_id": "d", "checkpoint_ns": "sub:1"}}, empty_checkpoint(), {}, {})

    class EveryCheckpoint:  # the saver API alone, as PostgreSQL's and memory's savers offer it
        list = saver.list

    assert [t["thread_id"] for t in newest(saver)] == ["a", "b", "c"]
    assert newest(saver) == newest(EveryCheckpoint()) and newest(saver, 1)[0]["question"] == "a?"


class _Forked(TypedDict):
    x: int
    m: NotRequired[Annotated[list, DeltaChannel(lambda held, writes: [*(held or []), *(i for w in writes for i in w)])]]


def _forked_graph(saver):
    """Two nodes at once, one pausing: its sibling's write to a growing list waits with no version yet."""
    graph = StateGraph(_Forked)
    graph.add_node("a", lambda state: {"m": ["from a"]})
    graph.add_node("b", lambda state: {"x": interrupt("ask")})
    graph.add_edge(START, "a")
    graph.add_edge(START, "b")
    graph.add_edge("a", END)
    graph.add_edge("b", END)
    return graph.compile(checkpointer=saver)


@pytest.mark.unit
def test_a_converted_thread_counts_versions_one_way_and_can_be_edited(tmp_path):
    """LangGraph compares a channel's versions; a converted thread's are integers like its new ones, so
    editing its state (which versions a growing list for the first time) works as on LangGraph's saver."""
    path, config = tmp_path / "old.sqlite", {"configurable": {"thread_id": "t"}}
    theirs = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    _forked_graph(theirs).invoke({"x": 0}, config)
    assert all(isinstance(v, str) for v in theirs.get_tuple(config).checkpoint["channel_versions"].values())
    theirs.conn.close()
    ours = ThreadedSqliteSaver(wal_connection(str(path)))
    assert all(isinstance(v, int) for v in ours.get_tuple(config).checkpoint["channel_versions"].values())
    graph = _forked_graph(ours)
    graph.update_state(config, {"x": 5}, as_node="b")
    # the same on LangGraph's saver throughout
    reference = _forked_graph(SqliteSaver(sqlite3.connect(tmp_path / "ref.sqlite", check_same_thread=False)))
    reference.invoke({"x": 0}, config)
    reference.update_state(config, {"x": 5}, as_node="b")
    assert graph.get_state(config).values == reference.get_state(config).values
    assert graph.get_state(config).values["x"] == 5
