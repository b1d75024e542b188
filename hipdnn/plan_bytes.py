"""The bytes ``pygraph.serialize()`` gives once a plan is built: the graph and the chosen
engine config, so that ``deserialize()`` gives a graph ready to execute (cuDNN frontend's
serialize after build_plans).

Layout, every integer little-endian::

    b"HDNNPLAN"            magic (8 bytes)
    u32 version            1
    u64 engine id          FNV-1a 64 of the engine's name (hipdnn.engines()[i].id)
    u32 knob count, then (i64 knob id, i64 value) per knob
    u64 graph size, then the graph's FlatBuffers bytes (what serialize() gives before a
                           build; the backend verifies them on the way back in)

Nothing else follows.  A graph's own bytes never start with the magic (FlatBuffers
start with a small root offset), so both kinds go through one ``deserialize``.
"""
from __future__ import annotations

import struct
from typing import List, NamedTuple, Tuple

__all__ = ["MAGIC", "PlanBytes", "encode", "decode", "is_plan_bytes"]

MAGIC = b"HDNNPLAN"
VERSION = 1
_HEAD = struct.Struct("<8sIQI")
_KNOB = struct.Struct("<qq")
_SIZE = struct.Struct("<Q")
MAX_KNOBS = 64  # as many as an ENGINECFG takes


class PlanBytes(NamedTuple):
    """A decoded plan: the engine, its knob choices and the graph's bytes."""

    engine_id: int
    knobs: Tuple[Tuple[int, int], ...]
    graph: bytes


def encode(engine_id: int, knobs: Tuple[Tuple[int, int], ...], graph: bytes) -> bytes:
    """The plan bytes for this engine config and graph."""
    parts: List[bytes] = [_HEAD.pack(MAGIC, VERSION, engine_id, len(knobs))]
    parts += [_KNOB.pack(k, v) for k, v in knobs]
    parts += [_SIZE.pack(len(graph)), graph]
    return b"".join(parts)


def is_plan_bytes(data: bytes) -> bool:
    """Whether the bytes start as plan bytes (else they are a graph's own)."""
    return data[:len(MAGIC)] == MAGIC


def decode(data: bytes) -> PlanBytes:
    """Reads plan bytes; ValueError saying what is wrong with them otherwise."""
    if len(data) < _HEAD.size:
        raise ValueError(f"plan bytes: {len(data)} bytes, shorter than the {_HEAD.size}-byte "
                         "header")
    magic, version, engine_id, nknobs = _HEAD.unpack_from(data, 0)
    if magic != MAGIC:
        raise ValueError("plan bytes: wrong magic")
    if version != VERSION:
        raise ValueError(f"plan bytes: format version {version}; this hipdnn reads version "
                         f"{VERSION}")
    if nknobs > MAX_KNOBS:
        raise ValueError(f"plan bytes: {nknobs} knobs; at most {MAX_KNOBS}")
    off = _HEAD.size
    need = off + nknobs * _KNOB.size + _SIZE.size
    if len(data) < need:
        raise ValueError(f"plan bytes: truncated ({len(data)} bytes, the header and knobs "
                         f"need {need})")
    knobs: Tuple[Tuple[int, int], ...] = tuple(
        (k, v) for k, v in (_KNOB.unpack_from(data, off + i * _KNOB.size) for i in range(nknobs)))
    off += nknobs * _KNOB.size
    (size,) = _SIZE.unpack_from(data, off)
    off += _SIZE.size
    if size != len(data) - off:
        raise ValueError(f"plan bytes: the graph is said to be {size} bytes but "
                         f"{len(data) - off} follow")
    return PlanBytes(engine_id, knobs, bytes(data[off:]))
