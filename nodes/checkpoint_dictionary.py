"""Checkpoints compressed with zstd and a dictionary trained on the library's own checkpoints.

A checkpoint or a step's writes is one to two kilobytes of LangGraph bookkeeping (channel names,
versions, message fields) around a little text: too small for a compressor to learn much from the
value alone (zlib took a five-iteration question's checkpoints from 17 to 10 KB). A dictionary holds
what such values have in common, so each is compressed as if the compressor had seen the others:
zstd's own answer for small records (`zstandard.train_dictionary`, the `zstd --train` of its
command line).

`checkpoint_dictionary_1.zdict` was trained by `benchmarks/build_checkpoint_dictionary.py` from
the checkpoints of the registered graphs answering the shop graph's questions with the simulated
model (never from the movies graph that `benchmarks/checkpoint_size` measures). Rows name the
dictionary they were compressed with (zstd writes its id in every frame), so the file is never
changed: a better dictionary is a new file with a new number, and the old one stays to read old
rows. Its SHA-256 is checked when it is first read.

Compressors are kept one per thread (a zstd compressor may not be shared by threads at once).
"""

from __future__ import annotations

import functools
import hashlib
import threading
from importlib import resources

import zstandard

DICTIONARY_FILE = "checkpoint_dictionary_1.zdict"
DICTIONARY_SHA256 = "816409c8dd1854b7d806a23b446c32d82e6144e852d240985f2887b5f30cecec"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # the first four bytes of every zstd frame
LEVEL = 3  # zstd's default: a checkpoint of ~1.5 KB takes a few microseconds

_local = threading.local()


@functools.cache
def dictionary() -> zstandard.ZstdCompressionDict:
    """The shipped dictionary, checked against its recorded hash, prepared for `LEVEL` once."""
    data = resources.files(__package__).joinpath(DICTIONARY_FILE).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != DICTIONARY_SHA256:
        raise RuntimeError(
            f"{DICTIONARY_FILE} was changed (sha256 {digest}, expected {DICTIONARY_SHA256}): "
            "checkpoints compressed with it could not be read; reinstall the package"
        )
    prepared = zstandard.ZstdCompressionDict(data)
    prepared.precompute_compress(level=LEVEL)
    return prepared


def compress(data: bytes) -> bytes:
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(
            level=LEVEL, dict_data=dictionary(), write_checksum=False, write_content_size=True
        )
    return bytes(compressor.compress(data))


def is_frame(data: bytes) -> bool:
    """Whether `data` is a zstd frame (JSON, say, never starts with its magic number)."""
    return bytes(data[:4]) == ZSTD_MAGIC


def decompress(data: bytes) -> bytes:
    decompressor = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = _local.decompressor = zstandard.ZstdDecompressor(dict_data=dictionary())
    return bytes(decompressor.decompress(data))
