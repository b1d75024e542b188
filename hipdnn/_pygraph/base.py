"""What every part of ``pygraph`` shares: the graph's state, its build stages, and the
steps of adding a node.

``hipdnn.pygraph`` (hipdnn/pygraph.py) is assembled from mixins, one per op family
(conv.py, matmul.py, pointwise.py, norm.py, reduction.py, movement.py, resample.py,
sdpa.py) and one per stage after the graph is written (build.py, plans.py,
serialize.py).  Each derives from GraphBase, so that what one part uses of the whole
type-checks (mypy --strict): the state is declared here, and what pygraph.py defines
beside the tensor type (creating tensors, checking an op's inputs) is declared under
TYPE_CHECKING below.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from .. import _C
from .. import _ops
from ..enums import behavior_note, data_type, memory_space, numerical_note
from ..errors import FeatureNotSupportedError, HipdnnError
from ..runtime import default_handle
from .args import _dtype_arg, _name_arg
from .nodes import _Op, _suffixes, _user_port

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Tensor

_INT64, _DOUBLE, _BOOL, _CHAR = _C.TYPE_INT64, _C.TYPE_DOUBLE, _C.TYPE_BOOLEAN, _C.TYPE_CHAR
_DTYPE, _DESC, _UINT8 = _C.TYPE_DATA_TYPE, _C.TYPE_BACKEND_DESCRIPTOR, _C.TYPE_UINT8_EXT

# The graph's stages (GraphBase._state), in order: being written, validated (lowered to a
# finalized OPERATIONGRAPH), engine configs ranked, a plan built.
_EDITING, _VALIDATED, _HEURISTICS, _PLANS = 0, 1, 2, 3


# The engine flags of hipdnn_plugin.h (HIPDNN_ENGINE_FLAG_*) that cuDNN's notes say.
_FLAG_DETERMINISTIC = 2
_FLAG_RUNTIME_COMPILATION = 4

# The knob that lets an engine read fp32 inputs as TF32 (the hip and blaslt engines' "tf32",
# hipdnn's own id): a config with it at 1 reports cuDNN's TENSOR_CORE note, the note PyTorch
# deselects for fp32 when TF32 is not allowed; autotuning never sweeps it (fp32 stays exact
# unless the user's config says otherwise).
_KNOB_TF32 = 20000


class _Config(NamedTuple):
    """An engine config: its ENGINECFG descriptor, engine, knob choices and the engine's
    flags (ATTR_ENGINE_FLAGS_EXT)."""

    desc: _C.Descriptor
    engine: str
    knobs: Tuple[Tuple[int, int], ...]
    flags: int = 0

    @classmethod
    def of(cls, cfg: _C.Descriptor, engine: _C.Descriptor,
           knobs: Tuple[Tuple[int, int], ...] = ()) -> "_Config":
        """The config ``cfg`` of the finalized ENGINE ``engine``."""
        return cls(cfg, engine.get(_C.ATTR_ENGINE_NAME_EXT, _C.TYPE_CHAR), knobs,
                   engine.get(_C.ATTR_ENGINE_FLAGS_EXT, _C.TYPE_INT64)[0])

    def tag(self) -> str:
        """The config's name: the engine's, then "_k<knob>=<value>" per knob."""
        return self.engine + "".join(f"_k{k}={v}" for k, v in self.knobs)

    def behavior_notes(self) -> List[behavior_note]:
        """cuDNN's behaviour notes that hold for this config."""
        return [behavior_note.RUNTIME_COMPILATION] if self.flags & _FLAG_RUNTIME_COMPILATION \
            else []

    def numerical_notes(self) -> List[numerical_note]:
        """cuDNN's numerical notes that hold for this config."""
        notes = [] if self.flags & _FLAG_DETERMINISTIC else [numerical_note.NONDETERMINISTIC]
        if (_KNOB_TF32, 1) in self.knobs:
            notes.insert(0, numerical_note.TENSOR_CORE)
        return notes


class _Plan(NamedTuple):
    """A built execution plan and its compiled variant pack ({uid: index in pack})."""

    desc: _C.Descriptor
    engine: str
    workspace: int
    space: memory_space
    pack: _C.VariantPack
    slots: Dict[int, int]


def _not_ready(msg: str) -> HipdnnError:
    e = HipdnnError(msg)
    e.status = _C.STATUS_NOT_INITIALIZED
    e.status_name = _C.status_name(_C.STATUS_NOT_INITIALIZED)
    return e


class GraphBase:
    """The state and node-adding steps every part of pygraph uses (see the module's
    docstring).  pygraph.__init__ sets the attributes declared here; _reset_build and
    _reset_plans set the build's."""

    # The graph's data types and name, as given to pygraph() (NOT_SET: not given).
    io_data_type: data_type
    intermediate_data_type: data_type
    compute_data_type: data_type
    name: str
    _handle: Optional[_C.Handle]
    # The graph as written: tensors in creation order, nodes in the order they were added.
    _tensors: List[Tensor]
    _ops: List[_Op]
    _next_uid: int
    _deserialized: bool
    # The user's engine choices (build.py).
    _preferred: Optional[str]
    _deselected: List[str]
    _filters: Dict[str, List[Any]]  # select/deselect_*_notes: {"select_behavior": [notes]}
    _max_workspace: Optional[int]
    # The first tensor tensor_like made from a device array (its label), None if none: the
    # graph is then planned on device engines only (build.py, _barred).
    _from_device: Optional[str]
    # Host engines preferred for device tensors whose staging the log has told (host_staging),
    # and "memory:<engine>" for engines execute() ran because the arrays were in their memory
    _staging_said: Set[str]

    if TYPE_CHECKING:  # defined in pygraph.py, where the tensor type is
        def _new_tensor(self) -> Tensor: ...

        def _rank_rest(self) -> None: ...  # build.py

        def _tensor_from_descriptor(self, d: _C.Descriptor) -> Tensor: ...

        def _check_input(self, value: Any, op: _Op, port: str) -> None: ...

        def _input(self, value: Any, op: _Op, port: str, user: str) -> Tensor: ...

    # -- state --
    def _reset_build(self) -> None:
        self._state = _EDITING
        self._opgraph: Optional[_C.Descriptor] = None
        # {node or tensor: the feature no engine has}: validate() passed, nothing later does
        self._unsupported: Dict[str, str] = {}
        self._tensor_descs: Dict[int, _C.Descriptor] = {}
        self._reset_plans()

    def _reset_plans(self) -> None:
        # Engine configs in order; plan i (None until built) belongs to config i, as in
        # cuDNN frontend, and plan indices count in this list.  _ranked holds those ranked so
        # far: after a heuristics short cut (build.py) only the first, until _configs (and
        # _support, _explanations) rank the rest from the ENGINEHEUR kept in _pending.
        self._ranked: List[_Config] = []
        self._pending: Optional[_C.Descriptor] = None
        self._plans: List[Optional[_Plan]] = []
        self._failures: Dict[int, str] = {}  # config index -> why its plan did not build
        self._support_seen: List[Tuple[str, Optional[str]]] = []
        self._explained: List[Tuple[str, str, float, str]] = []
        self._candidate = -1  # the plan execute() runs
        # execute's fast path: (the plan execute() ran, the pack it ran on, the variant
        # pack's keys in pack order), kept while that plan is the one execute() runs
        self._fast_run: Optional[Tuple[_Plan, _C.VariantPack, Tuple[Any, ...]]] = None

    @property
    def _configs(self) -> List[_Config]:
        """Every engine config, ranking the rest first after a heuristics short cut."""
        self._rank_rest()
        return self._ranked

    @property
    def _support(self) -> List[Tuple[str, Optional[str]]]:
        self._rank_rest()
        return self._support_seen

    @property
    def _explanations(self) -> List[Tuple[str, str, float, str]]:
        self._rank_rest()
        return self._explained

    def _invalidate(self) -> None:
        if self._state != _EDITING:
            self._reset_build()
            for t in self._tensors:
                t._inferred = {}

    def _check_editable(self, what: str) -> None:
        if self._deserialized:
            raise ValueError(f"graph '{self.name}' was deserialized; cannot {what} "
                             "(build a new pygraph instead)")

    def _get_handle(self) -> _C.Handle:
        if self._handle is None:
            self._handle = default_handle()
        return self._handle

    def _default_dtype(self, t: Tensor) -> data_type:
        dt = t._a.get("data_type")
        if dt is not None:
            return data_type(dt)
        if t.get_is_pass_by_value():
            return data_type.FLOAT
        if t._a.get("boolean_result"):  # comparisons and logic (the backend's rule too)
            return data_type.BOOLEAN
        if t._a.get("input_data_type"):  # reshape: the backend gives it its input's type
            return data_type.NOT_SET
        return self.intermediate_data_type if t.get_is_virtual() else self.io_data_type

    def _new_uid(self) -> int:
        taken = {t._uid for t in self._tensors}
        while self._next_uid in taken:
            self._next_uid += 1
        uid = self._next_uid
        self._next_uid += 1
        return uid

    def _tensor_by_uid(self, uid: int) -> Optional[Tensor]:
        for t in self._tensors:
            if t._uid == uid:
                return t
        return None

    def _raise_unsupported(self) -> None:
        if self._unsupported:
            raise FeatureNotSupportedError(self.name, self._unsupported)

    def _need(self, state: int, step: str) -> None:
        self._raise_unsupported()
        if self._state >= state:
            return
        needs = {_VALIDATED: "build_operation_graph()", _HEURISTICS: "create_execution_plans()",
                 _PLANS: "build_plans()"}[state]
        raise _not_ready(f"graph '{self.name}': {step} needs {needs} first "
                         "(or call build([hipdnn.heur_mode.A]))")

    # -- adding a node --
    def _op(self, table_op: str, op: str, name: Optional[str],
            compute_data_type: Optional[DataTypeLike]) -> _Op:
        """A new op of the op table's entry `table_op`, shown to users as `op` ("relu")."""
        self._check_editable("add operations")
        name = _name_arg(name, f"{op}: name")
        compute = _dtype_arg(compute_data_type, f"{op}: compute_data_type")
        if not name:
            name = str(len(self._ops))  # cuDNN frontend numbers unnamed nodes
        return _Op(_ops.OPS[table_op], op, name, compute)

    def _param(self, op: _Op, name: str, values: Any) -> None:
        p = op.info.param(name)
        op.params.append((p.attr, p.type, values))

    def _finish(self, op: _Op, inputs: Sequence[Tuple[str, Any]], out_port: str,
                users: Sequence[str] = ()) -> Tensor:
        """inputs: (table port, value); the output is the table's out_port.  Messages and
        listings use the users' names for ports (`users`, else _user_port)."""
        return self._finish_all(op, inputs, [out_port], users)[0]

    def _finish_all(self, op: _Op, inputs: Sequence[Tuple[str, Any]],
                    out_ports: Sequence[str], users: Sequence[str] = ()) -> List[Tensor]:
        """_finish for ops with several outputs: one new virtual tensor per out_port.  An
        input whose value is None is an optional port left unset."""
        unary = len(inputs) == 1 and op.info.name == "pointwise"
        named = [(port, users[i] if i < len(users) else _user_port(op.info, port, unary), value)
                 for i, (port, value) in enumerate(inputs)]
        # Check every input before creating anything, so a bad one leaves no trace.
        for port, user, value in named:
            if value is None and op.info.input(port).optional:
                continue
            self._check_input(value, op, user)
        for port, user, value in named:
            if value is None and op.info.input(port).optional:
                continue
            op.inputs.append((user, op.info.input(port).attr,
                              self._input(value, op, port, user)))
        outs = []
        for out_port in out_ports:
            out_user = _user_port(op.info, out_port)
            y = self._new_tensor()
            suffix = _suffixes(op).get(out_port, out_user.upper())
            y._a["name"] = f"{op.name}::{suffix}"
            y._a["is_virtual"] = True
            op.outputs.append((out_user, op.info.output(out_port).attr, y))
            outs.append(y)
        self._ops.append(op)
        self._invalidate()
        return outs
