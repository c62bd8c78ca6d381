"""Checkpoints compressed on their way to the default SQLite file.

A checkpoint is mostly LangGraph's bookkeeping (each channel's version and what each node has
seen), and a step's writes carry a model reply or a query's rows. Values of `COMPRESS_FROM` bytes or
more are stored compressed with zstd and the checkpoint dictionary (`nodes/checkpoint_dictionary.py`),
their type marked `.zstd1`. Rows written before it, compressed with zlib (`.zlib`, earlier `+zlib`)
or not at all, are read as they were written, so existing files keep working. It is LangGraph's own
serializer underneath, so a graph's msgpack allowlist (`LANGGRAPH_STRICT_MSGPACK`) applies as it
would, and LangGraph's `EncryptedSerializer` may wrap it (its `+aes` mark comes after ours).
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from reflexion_agents.nodes import checkpoint_dictionary

COMPRESS_FROM = 32  # bytes: with the dictionary, even a short value shrinks
MARK = ".zstd1"  # zstd with checkpoint dictionary 1
_ZLIB_MARKS = (".zlib", "+zlib")  # how rows were compressed before the dictionary


class CompressedSerializer(JsonPlusSerializer):
    """LangGraph's serializer, with values compressed."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        if len(data) >= COMPRESS_FROM:
            packed = checkpoint_dictionary.compress(data)
            if len(packed) < len(data):
                return kind + MARK, packed
        return kind, data

    def dumps_uncompressed(self, obj: Any) -> tuple[str, bytes]:
        """LangGraph's own serialization: for a value stored inside something compressed as a whole."""
        return super().dumps_typed(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, raw = data
        if kind.endswith(MARK):
            return super().loads_typed((kind[: -len(MARK)], checkpoint_dictionary.decompress(raw)))
        for mark in _ZLIB_MARKS:
            if kind.endswith(mark):
                return super().loads_typed((kind[: -len(mark)], zlib.decompress(raw)))
        return super().loads_typed(data)
