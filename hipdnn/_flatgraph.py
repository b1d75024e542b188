"""Reads the node list out of serialized graph bytes (csrc/schema/graph.fbs).

Only used to print graphs that come from ``pygraph.deserialize``: the backend has
verified the bytes and exposes the graph's tensors and outputs through descriptors, but a
deserialized graph has no operation descriptors, and its listing should read like that of
a graph built in Python.

Field indices follow the schema's declaration order (append-only, so old readers keep
working).  Any malformed input raises ValueError.
"""
from __future__ import annotations

import struct
from typing import List, NamedTuple, Optional

# Node.kind values (hipdnnOpKind_t in hipdnn_sdk.h) and their port names.
OP_NAMES = {1: "conv_fprop", 2: "matmul", 3: "pointwise", 4: "batchnorm_inference"}
NO_TENSOR = -(1 << 63)


class Node(NamedTuple):
    kind: int
    name: str
    compute_type: int  # hipdnnDataType_t
    inputs: List[int]  # uids by port, NO_TENSOR where unset
    outputs: List[int]
    mode: int


class _Table:
    __slots__ = ("buf", "pos", "vtable", "vlen")

    def __init__(self, buf: bytes, pos: int):
        self.buf = buf
        self.pos = pos
        (soff,) = _unpack("<i", buf, pos)
        self.vtable = pos - soff
        (self.vlen,) = _unpack("<H", buf, self.vtable)

    def _field(self, index: int) -> Optional[int]:
        entry = 4 + 2 * index
        if entry + 2 > self.vlen:
            return None
        (off,) = _unpack("<H", self.buf, self.vtable + entry)
        return self.pos + off if off else None

    def scalar(self, index: int, fmt: str, default):
        p = self._field(index)
        return default if p is None else _unpack("<" + fmt, self.buf, p)[0]

    def _target(self, index: int) -> Optional[int]:
        p = self._field(index)
        if p is None:
            return None
        (u,) = _unpack("<I", self.buf, p)
        return p + u

    def string(self, index: int) -> str:
        t = self._target(index)
        if t is None:
            return ""
        (n,) = _unpack("<I", self.buf, t)
        _check(t + 4 + n <= len(self.buf))
        return self.buf[t + 4 : t + 4 + n].decode("utf-8", "replace")

    def longs(self, index: int) -> List[int]:
        t = self._target(index)
        if t is None:
            return []
        (n,) = _unpack("<I", self.buf, t)
        _check(t + 4 + 8 * n <= len(self.buf))
        return list(struct.unpack_from(f"<{n}q", self.buf, t + 4))

    def tables(self, index: int) -> List["_Table"]:
        t = self._target(index)
        if t is None:
            return []
        (n,) = _unpack("<I", self.buf, t)
        out = []
        for i in range(n):
            p = t + 4 + 4 * i
            (u,) = _unpack("<I", self.buf, p)
            out.append(_Table(self.buf, p + u))
        return out


def _check(ok: bool) -> None:
    if not ok:
        raise ValueError("serialized graph: offset out of range")


def _unpack(fmt: str, buf: bytes, pos: int):
    _check(0 <= pos and pos + struct.calcsize(fmt) <= len(buf))
    return struct.unpack_from(fmt, buf, pos)


def read_nodes(data: bytes) -> List[Node]:
    """The graph's nodes in stored (topological) order."""
    buf = bytes(data)
    (root,) = _unpack("<I", buf, 0)
    graph = _Table(buf, root)
    nodes = []
    for t in graph.tables(2):  # Graph.nodes
        nodes.append(Node(kind=t.scalar(0, "i", 0), name=t.string(1),
                          compute_type=t.scalar(2, "i", 0), inputs=t.longs(3),
                          outputs=t.longs(4), mode=t.scalar(5, "i", 0)))
    return nodes
