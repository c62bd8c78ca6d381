"""The channels of the state's two growing lists, the messages and the tool steps' outcomes: each
checkpoint stores what a step added, not the whole list.

On a plain channel LangGraph writes a list's whole value into every checkpoint that changed it: a
thread's storage grows with the square of its steps (a 10-step question wrote ~500 KB to SQLite for
~30 KB of state). LangGraph's `DeltaChannel` keeps only the steps' writes (which every checkpointer
stores anyway) and rebuilds the list by replaying them through a reducer, with a full copy every
`SNAPSHOT_EVERY` updates to bound the replay.

A reducer must give the same list however the writes are batched, so both fold the writes one by
one. `merged_messages` is `add_messages`, with an id derived from where a message lands and what it
says for a message without one (`add_messages` would draw a random one, different at each replay):
a run's question keeps the id its run recorded (`asked_id`) across a resume. `merged_outcomes`
appends an outcome, updates the one of the same step (a revision writes the outcome it scored), and
starts over on an empty write (a new question).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, BaseMessage, BaseMessageChunk, RemoveMessage, convert_to_messages
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import add_messages

#: A full copy of the list every this many updates of the channel (LangGraph's default is 100).
SNAPSHOT_EVERY = 50
_IDS = uuid.UUID("6f1d0c52-2b7e-4c0e-9a55-5d2f1b7f3a10")  # the namespace of derived message ids


def _with_ids(write: Any, before: Sequence[BaseMessage]) -> list[BaseMessage] | Any:
    """`write` as messages, each without an id given one from the message before it, its position and
    its content. (LangGraph gives message objects and dicts an id before it stores a write; text and
    `(role, text)` pairs reach the reducer without one.)"""
    if isinstance(write, tuple):
        # stored, a tuple comes back a list: `("user", "hi")` would replay as two messages
        raise TypeError(f"write messages as a list, as in [{write!r}]: a bare tuple is read two ways")
    if not isinstance(write, list):
        write = [write]
    try:
        messages = convert_to_messages(write)
    except (ValueError, NotImplementedError, TypeError):
        return write  # add_messages says what is wrong with it
    named, previous = [], before[-1].id if before else ""
    for offset, message in enumerate(messages):
        if message.id is None:
            seed = f"{previous}:{len(before) + offset}:{message.type}:{message.content!r}"
            message = message.model_copy(update={"id": str(uuid.uuid5(_IDS, seed))})
        named.append(message)
        previous = message.id
    return named


def merged_messages(state: Sequence[BaseMessage] | None, writes: Sequence[Any]) -> list[BaseMessage]:
    """`add_messages` over each write in turn, ids given where missing (`_with_ids`). A write of new
    whole messages (a node's usual write) is appended as it is, as `add_messages` would: this reducer
    runs at every step of every run and at each replay, and `add_messages` converts the whole list."""
    merged: list[BaseMessage] = list(state or [])
    for write in writes:
        if _only_new_messages(write, merged):
            merged.extend(write)
        else:
            merged = add_messages(merged, _with_ids(write, merged))  # type: ignore[arg-type,assignment]
    return merged


def _only_new_messages(write: Any, merged: Sequence[BaseMessage]) -> bool:
    """Whether `write` is a list of whole messages (no chunks, no removals), each with an id that
    `merged` does not hold: what `add_messages` appends unchanged."""
    if not isinstance(write, list) or not write:
        return False
    for message in write:
        kind = type(message)
        if not issubclass(kind, BaseMessage) or issubclass(kind, (BaseMessageChunk, RemoveMessage)) or not message.id:
            return False
    held = {m.id for m in merged}
    return len({m.id for m in write} - held) == len(write)


def merged_outcomes(state: Sequence[dict[str, Any]] | None, writes: Sequence[Any]) -> list[dict[str, Any]]:
    """Each write is a list of outcome dumps (`ToolOutcome`), or one: one whose `step` is already there
    updates it (a revision writes the outcome it scored, with its score), another is appended; an
    empty list empties the channel, None leaves it. (To set the whole list, write LangGraph's
    `Overwrite([...])`.)"""
    merged: list[dict[str, Any]] = list(state or [])
    for write in writes:
        if write is None:
            continue  # no change (an edit of the state that leaves the outcomes as they are)
        if isinstance(write, dict):
            write = [write]
        if not write:
            merged = []
        for outcome in write:
            at = next((i for i, o in enumerate(merged) if o.get("step") == outcome.get("step")), None)
            if at is None:
                merged.append(outcome)
            else:
                merged[at] = {**merged[at], **outcome}
    return merged


def state_after(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """The state as the graph will hold it once a node's `update` is applied: what a node reads when
    it decides on its own update (a stop rule after a tool step). `{**state, **update}` would take a
    step's one new outcome or message for the whole list."""
    after = {**state, **update}
    if "messages" in update:
        after["messages"] = _previewed_messages(state.get("messages"), update["messages"])
    if "outcomes" in update:
        after["outcomes"] = merged_outcomes(state.get("outcomes"), [update["outcomes"]])
    return after


def _previewed_messages(held: Sequence[BaseMessage] | None, write: Any) -> list[BaseMessage]:
    """The messages after `write`, for a node to read before LangGraph applies it. Whole messages
    without an id are given a random one in place, as LangGraph gives them theirs a moment later (it
    keeps an id a message has): the ids a node's route or a user's hook sees are the ids stored. The
    reducer would derive ids from their text (and copy them), to be thrown away."""
    written = [write] if isinstance(write, BaseMessage) else write
    if not isinstance(written, list):
        return merged_messages(held, [write])
    fresh = True  # every message whole and without an id: new by construction, appended as they are
    for message in written:
        whole = isinstance(message, BaseMessage) and not isinstance(message, (BaseMessageChunk, RemoveMessage))
        fresh = fresh and whole and not message.id
        if whole and not message.id:
            message.id = str(uuid.uuid4())
    return [*(held or []), *written] if fresh and written else merged_messages(held, [write])


GROWING = ("messages", "outcomes")


def changes_only(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """`update` without the fields it would set to the value they hold already: each field a node
    writes is a row in the checkpointer's writes, at every step (a revision that stops nothing still
    said `stop_reason: None`). The growing lists are additions, always kept."""
    return {k: v for k, v in update.items() if k in GROWING or k not in state or state[k] != v}


#: The `messages` field of every graph's state, input and output.
MessageMemory = Annotated[list[AnyMessage], DeltaChannel(merged_messages, snapshot_frequency=SNAPSHOT_EVERY)]
#: The `outcomes` field of the Reflexion engine's state and output: a tool step writes its outcome,
#: a revision the outcome it scored, a new question `[]`.
OutcomeMemory = Annotated[list[dict[str, Any]], DeltaChannel(merged_outcomes, snapshot_frequency=SNAPSHOT_EVERY)]
