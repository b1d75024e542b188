"""pygraph's serialization: ``serialize`` (graph bytes, or plan bytes once a plan is
built: hipdnn/plan_bytes.py), ``deserialize`` (a validated graph, or one whose plan is
built and ready to execute) and ``key`` (a stable hash of the graph's bytes)."""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Set, Tuple

from .. import _C
from .. import _ops
from .. import plan_bytes
from ..errors import GraphNotSupportedError, HipdnnError
from ..runtime import engine_id, engines
from .args import _type_name
from .base import _CHAR, _DESC, _HEURISTICS, _INT64, _PLANS, _VALIDATED
from .build import BuildSteps
from .nodes import _Op, _user_port
from .pointwise import user_ports as _pointwise_user_ports

if TYPE_CHECKING:
    from ..pygraph import Tensor


class Serialization(BuildSteps):
    """pygraph's serialization methods."""

    def serialize(self) -> bytes:
        """The graph as bytes; deterministic.  Before a plan is built: the finalized
        graph's FlatBuffers bytes.  Once build_plans() has built one: those bytes with the
        engine config execute() runs (hipdnn/plan_bytes.py), so that deserialize() gives a
        graph that executes without another build, as cuDNN frontend's does."""
        if self._state >= _PLANS:
            c = self._ranked[self._candidate]
            return plan_bytes.encode(engine_id(c.engine), c.knobs, _C.serialize(self._graph))
        self.validate()
        return _C.serialize(self._graph)

    def deserialize(self, handle: Any, data: Any = None) -> None:
        """``deserialize(data)`` or ``deserialize(handle, data)``: replaces this graph by
        one read from bytes made by serialize().  Corrupted or truncated input raises
        InvalidGraphError.  Graph bytes give a validated graph (call build(), then execute
        with uids or tensors()); plan bytes give one whose plan is built on ``handle`` (by
        default the graph's), ready to execute."""
        if data is None:
            handle, data = None, handle
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"deserialize: handle must be a hipdnn.Handle, got "
                            f"{_type_name(handle)}")
        if isinstance(data, str) or not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"deserialize: expected bytes, got {_type_name(data)}")
        data = bytes(data)
        plan = None
        if plan_bytes.is_plan_bytes(data):
            try:
                plan = plan_bytes.decode(data)
            except ValueError as e:
                raise _C.InvalidGraphError(f"deserialize: {e}") from None
            data = plan.graph
        self._adopt_graph(data, handle, bind=True)
        if plan is not None:
            self._adopt_plan(plan)

    def _adopt_graph(self, data: bytes, handle: Optional[_C.Handle], bind: bool) -> None:
        """Becomes the graph of graph bytes; `bind`: on its handle, as deserialize() does
        (without, nothing loads an engine: for pictures of graphs of any machine)."""
        g = _C.deserialize(data)  # verified and validated by the backend
        if handle is not None:
            self._handle = handle
        if bind:
            # Engines check support on the graph's handle; a deserialized graph takes one once.
            g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, self._get_handle())
        try:
            tensors, ops, outputs = self._read_deserialized(g, data)
        except (ValueError, KeyError) as e:
            raise _C.InvalidGraphError(f"deserialize: {e}") from None
        self._tensors, self._ops = tensors, ops
        self._reset_build()
        self.name = g.get(_C.ATTR_OPERATIONGRAPH_NAME_EXT, _CHAR)
        self._tensor_descs = {t._uid: t._desc for t in tensors if t._desc is not None}
        self._next_uid = max((t._uid for t in tensors), default=0) + 1
        self._opgraph = g
        self._state = _VALIDATED
        self._deserialized = True

    def _adopt_plan(self, plan: "plan_bytes.PlanBytes") -> None:
        """Builds the plan that plan bytes name, on this graph's handle."""
        e = _C.Descriptor(_C.BACKEND_ENGINE_DESCRIPTOR)
        e.set(_C.ATTR_ENGINE_OPERATION_GRAPH, _DESC, self._opgraph)
        signed = plan.engine_id - (1 << 64) if plan.engine_id >= (1 << 63) else plan.engine_id
        try:
            e.set(_C.ATTR_ENGINE_ID_EXT, _INT64, signed)
        except HipdnnError:
            known = ", ".join(f"{x.name} ({x.id})" for x in engines()) or "none"
            raise GraphNotSupportedError(
                self.name, {f"engine id {plan.engine_id}": "the serialized plan's engine is "
                            f"not loaded (loaded: {known})"}) from None
        e.finalize()
        self._add_config(self._make_config(e, plan.knobs))
        self._state = _HEURISTICS
        self.build_plan_at_index(0)

    def key(self) -> int:
        """A stable 64-bit hash of the graph's bytes (the same graph gives the same key
        in every process, with or without a plan built)."""
        self.validate()
        data = _C.serialize(self._graph)
        return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")

    def _read_deserialized(self, g: _C.Descriptor, data: bytes
                           ) -> Tuple[List[Tensor], List[_Op], Set[int]]:
        """Tensors and nodes (from the backend's descriptors) and output uids of a
        deserialized graph."""
        tensors: List[Tensor] = []
        by_uid: Dict[int, Tensor] = {}
        descs = g.get(_C.ATTR_OPERATIONGRAPH_TENSORS_EXT, _DESC)
        for d in descs:
            t = self._tensor_from_descriptor(d)
            tensors.append(t)
            by_uid[t._uid] = t
        for t, d in zip(tensors, descs):  # sdpa's ragged offsets, by uid
            for r in d.get(_C.ATTR_TENSOR_RAGGED_OFFSET_DESC, _DESC):
                t._a["ragged_offset"] = by_uid[r.get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0]]
        # The backend gives the nodes as operation descriptors (OPS), read through the op
        # table like any other.
        ops = [_read_node(d, by_uid) for d in g.get(_C.ATTR_OPERATIONGRAPH_OPS, _DESC)]
        # The tensors the graph writes: their arrays must be writable.
        outputs = set(g.get(_C.ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT, _INT64))
        return tensors, ops, outputs


def _read_node(d: _C.Descriptor, by_uid: Dict[int, Tensor]) -> _Op:
    """The node an OPERATION descriptor of a deserialized graph describes, its tensors
    looked up by uid."""
    info = _ops.BY_DESCRIPTOR_TYPE[d.type]
    opname = info.name
    users: Dict[str, str] = {}
    if info.name == "pointwise":
        mode = _ops.param_value(d, info.param("mode"))
        opname = _ops.POINTWISE_NAMES.get(mode, f"pointwise mode {mode}")
        users = _pointwise_user_ports(mode)
    op = _Op(info, opname, d.get(_C.ATTR_OPERATION_NAME_EXT, _CHAR), None)
    for p in info.params:  # its modes, for listings and pictures
        if p.kind == _C.OP_ATTR_ENUM:
            value = _ops.param_value(d, p)
            if value is not None:
                op.params.append((p.attr, p.type, value))
    for ports, dst in ((info.inputs, op.inputs), (info.outputs, op.outputs)):
        for port in ports:
            td = d.get(port.attr, _DESC)
            if td:
                uid = td[0].get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0]
                dst.append((users.get(port.name) or _user_port(info, port.name),
                            port.attr, by_uid[uid]))
    return op
