"""Checkpoints compressed on their way to the default SQLite file.

A checkpoint is mostly LangGraph's bookkeeping (each channel's version, as a 50-character string,
and what each node has seen), and a step's writes carry a model reply or a query's rows: text
that zlib shrinks to a third. Stored as they come, a five-iteration question took ~110 KB of
file. Values of `COMPRESS_FROM` bytes or more are stored compressed, their type marked `.zlib`
(`msgpack.zlib`); anything stored before (or smaller) is read as it was written, so existing files
keep working. It is LangGraph's own serializer underneath, so a graph's msgpack allowlist
(`LANGGRAPH_STRICT_MSGPACK`) applies as it would, and LangGraph's `EncryptedSerializer` may wrap it
(its `+aes` mark comes after ours).
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

COMPRESS_FROM = 256  # bytes: below this, zlib's own header costs more than it saves
LEVEL = 1  # zlib's fastest: checkpoints are written at every step
MARK = ".zlib"
_EARLIER_MARK = "+zlib"  # how the first compressed rows were marked


class CompressedSerializer(JsonPlusSerializer):
    """LangGraph's serializer, with large values compressed."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = super().dumps_typed(obj)
        if len(data) >= COMPRESS_FROM:
            packed = zlib.compress(data, LEVEL)
            if len(packed) < len(data):
                return kind + MARK, packed
        return kind, data

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        kind, raw = data
        for mark in (MARK, _EARLIER_MARK):
            if kind.endswith(mark):
                return super().loads_typed((kind[: -len(mark)], zlib.decompress(raw)))
        return super().loads_typed(data)
