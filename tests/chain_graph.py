"""A long chain of identity nodes handed to the backend last node first: the shape that
made validation cubic (issue 11, bug 8).  Shared by the tests, the hostile-input cases
(run in child interpreters) and fuzz/make_corpus.py."""
from typing import Callable

import hipdnn
from hipdnn import _C, _ops


def reversed_chain_bytes(n: int, uid_of: Callable[[int], int] = lambda i: i + 1) -> bytes:
    """Serialized graph of n identity nodes over tensors uid_of(0) .. uid_of(n) (the ends
    real, the rest virtual), its nodes listed last first."""
    ts = []
    for i in range(n + 1):
        t = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
        t.set(_C.ATTR_TENSOR_UNIQUE_ID, _C.TYPE_INT64, uid_of(i))
        t.set(_C.ATTR_TENSOR_DATA_TYPE, _C.TYPE_DATA_TYPE, _C.DATA_FLOAT)
        t.set(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, [4])
        t.set(_C.ATTR_TENSOR_IS_VIRTUAL, _C.TYPE_BOOLEAN, 0 < i < n)
        t.finalize()
        ts.append(t)
    pw = _ops.OPS["pointwise"]
    ops = []
    for i in reversed(range(n)):
        d = _C.Descriptor(pw.descriptor_type)
        d.set(pw.param("mode").attr, pw.param("mode").type, _C.POINTWISE_IDENTITY)
        d.set(pw.input("x").attr, _C.TYPE_BACKEND_DESCRIPTOR, ts[i])
        d.set(pw.output("y").attr, _C.TYPE_BACKEND_DESCRIPTOR, ts[i + 1])
        d.finalize()
        ops.append(d)
    g = _C.Descriptor(_C.BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, hipdnn.default_handle())
    g.set(_C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR, ops)
    g.finalize()
    return _C.serialize(g)
