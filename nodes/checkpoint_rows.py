"""How the compact checkpointer's rows hold what LangGraph hands it (`nodes/compact_saver.py`).

A task's writes at one step are one row: each write as (its index, its channel, its value as the
serializer gave it), packed with msgpack and compressed with the checkpoint dictionary when that is
smaller; the first byte says which. A checkpoint's metadata is JSON, as `SqliteSaver` keeps it,
compressed the same way when smaller (a zstd frame is told from JSON by its magic number). `list`'s
conditions are SQL on the keys and, on the metadata, Python that reads it as `SqliteSaver`'s SQL does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import ormsgpack
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import get_checkpoint_id

from reflexion_agents.nodes import checkpoint_dictionary

_PLAIN, _DICTIONARY = b"p", b"d"  # the first byte of a pack: stored as it is, or zstd with the dictionary

#: One stored write: its index in the task's writes (or its special channel's fixed index), its
#: channel, and its value as the serializer gave it.
PackedWrite = tuple[int, str, str, bytes]


def pack_writes(writes: Sequence[PackedWrite], compressed: bool = True) -> bytes:
    """A task's writes as one blob: msgpack, compressed (`nodes/checkpoint_dictionary.py`) when that
    makes it smaller."""
    data = ormsgpack.packb([list(w) for w in writes])
    packed = checkpoint_dictionary.compress(data) if compressed else data
    return _DICTIONARY + packed if len(packed) < len(data) else _PLAIN + data


def unpack_writes(blob: bytes) -> list[PackedWrite]:
    data = checkpoint_dictionary.decompress(blob[1:]) if blob[:1] == _DICTIONARY else blob[1:]
    return [(int(i), str(c), str(t), bytes(v)) for i, c, t, v in ormsgpack.unpackb(data)]


def stored_json(metadata: Any, compressed: bool = True) -> bytes:
    """A checkpoint's metadata as stored: JSON (as `SqliteSaver` keeps it), compressed when that is smaller."""
    data = json.dumps(metadata, ensure_ascii=False).encode("utf-8", "ignore")
    packed = checkpoint_dictionary.compress(data) if compressed else data
    return packed if len(packed) < len(data) else data


def loaded_json(stored: bytes | None) -> Any:
    """Stored metadata read back: JSON, or a zstd frame of JSON (told apart by the frame's magic number)."""
    if stored is None:
        return {}
    return json.loads(checkpoint_dictionary.decompress(stored) if checkpoint_dictionary.is_frame(stored) else stored)


def merged_writes(stored: list[PackedWrite], new: list[PackedWrite], replace: bool) -> list[PackedWrite]:
    """`new` added to a task's `stored` writes as `SqliteSaver` adds rows: a write whose index is taken
    replaces the stored one when every new write is to a special channel, else it is dropped."""
    by_index = {w[0]: w for w in stored}
    for write in new:
        if replace or write[0] not in by_index:
            by_index[write[0]] = write
    return sorted(by_index.values(), key=lambda w: w[0])


def list_where(config: RunnableConfig | None, before: RunnableConfig | None) -> tuple[list[str] | None, list[Any]]:
    """`list`'s SQL conditions on the namespace, the checkpoint and `before` (the thread apart); None
    when `before` names no checkpoint."""
    wheres: list[str] = []
    values: list[Any] = []
    if config is not None:
        if (checkpoint_ns := config["configurable"].get("checkpoint_ns")) is not None:
            wheres.append("c.checkpoint_ns = ?")
            values.append(checkpoint_ns)
        if checkpoint_id := get_checkpoint_id(config):
            wheres.append("c.checkpoint_id = ?")
            values.append(checkpoint_id)
    if before is not None:
        if not (before_id := get_checkpoint_id(before)):
            return None, []
        wheres.append("c.checkpoint_id < ?")
        values.append(before_id)
    return wheres, values


def metadata_matches(stored_metadata: bytes | None, filter: dict[str, Any]) -> bool:
    """Whether a checkpoint's stored metadata matches `filter` as `SqliteSaver`'s SQL does: a dotted key
    reads a nested value, and None matches a value that is null or missing."""
    metadata = loaded_json(stored_metadata)

    def value_at(path: str) -> Any:
        found: Any = metadata
        for part in path.split("."):
            if not isinstance(found, dict) or part not in found:
                return None
            found = found[part]
        return found

    return all(value_at(key) == value for key, value in filter.items())
