"""pygraph's built plans: what they are (engine, workspace, memory space, kernels, notes;
by plan index, or the one ``execute()`` runs) and running them on a variant pack
({tensor or uid: array}), whose arrays the plan's compiled pack checks."""
from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, Any, List, Mapping, Optional, Tuple

import numpy as np

from .. import _C
from .. import device as _device
from ..arrays import as_buffer, numpy_dtype, to_bfloat16
from ..enums import behavior_note, data_type, log_level, memory_space
from .args import _type_name
from ..errors import GraphNotSupportedError
from .base import _HEURISTICS, _PLANS, _Plan, _not_ready
from .build import BuildSteps
from .frontend_options import refuse_overrides
from .host_staging import staged_for
from .tensor_memory import RawPointer, reinterpreted

if TYPE_CHECKING:
    from ..pygraph import KernelGroup


def _workspace_of(plan: "_Plan", workspace: Any) -> Any:
    """The workspace as the pack takes it: an address (cuDNN frontend's
    workspace.data_ptr()) wrapped as the plan's workspace_size bytes; a plan that needs none
    does not read it (an empty tensor's address may be 0)."""
    if not RawPointer.is_address(workspace):
        return workspace
    size = plan.pack.workspace_size
    return RawPointer.of(workspace, int(data_type.UINT8), [size], [1]) if size else None


class Plans(BuildSteps):
    """pygraph's plan queries and execute."""

    def get_execution_plan_count(self) -> int:
        """How many engine configs the graph holds (plan indices run below it); 0 before
        create_execution_plans()."""
        return len(self._configs) if self._state >= _HEURISTICS else 0

    def _plan(self, index: Optional[int], what: str) -> "_Plan":
        self._need(_PLANS, what)
        if index is None:
            index = self._candidate
        self._check_config_index(index, what)
        plan = self._plans[int(index)]
        if plan is None:
            why = self._failures.get(int(index)) or self._barred(int(index))
            raise _not_ready(f"graph '{self.name}': {what}: plan {int(index)} "
                             f"({self._ranked[int(index)].tag()}) is not built"
                             + (f": {why}" if why else "; call build_plan_at_index()"))
        return plan

    def get_workspace_size(self) -> int:
        """Bytes of workspace enough for every built plan."""
        self._need(_PLANS, "get_workspace_size()")
        return max(p.workspace for p in self._plans if p is not None)

    def get_workspace_size_plan_at_index(self, index: int) -> int:
        """Bytes of workspace plan ``index`` needs."""
        return self._plan(index, "get_workspace_size_plan_at_index()").workspace

    def get_engine_name(self, index: Optional[int] = None) -> str:
        """The engine of plan ``index`` (default: the one execute() runs), e.g.
        "reference_cpu"."""
        return self._plan(index, "get_engine_name()").engine

    def get_memory_space(self, index: Optional[int] = None) -> memory_space:
        """Where plan ``index`` (default: the one execute() runs) expects its arrays."""
        return self._plan(index, "get_memory_space()").space

    def get_plan_name_at_index(self, index: int) -> str:
        """The name of engine config ``index``: the engine's name, then "_k<knob>=<value>"
        for each knob it sets."""
        self._need(_HEURISTICS, "get_plan_name_at_index()")
        self._check_config_index(index, "get_plan_name_at_index()")
        return self._ranked[int(index)].tag()

    def get_kernel_groups(self, index: Optional[int] = None) -> List[KernelGroup]:
        """Which nodes plan ``index`` (default: the one execute() runs) runs in which
        kernel, in launch order: the engine's own account of what it fused.  Every node is
        in at least one group; one in several is run in passes (a long reduction).  Raises
        NotSupportedError when the engine does not describe its kernels (an optional part
        of the plugin ABI)."""
        from ..pygraph import KernelGroup  # pygraph.py imports this module: import at call time

        plan = self._plan(index, "get_kernel_groups()")
        out = []
        for kernel, detail, nodes in _C.plan_kernels(plan.desc):
            out.append(KernelGroup(kernel, detail, [self._ops[i].name for i in nodes],
                                   list(nodes)))
        return out

    def get_behavior_notes_for_plan_at_index(self, index: int) -> List[behavior_note]:
        """The behaviour notes of engine config ``index``, from its engine's flags:
        ``[RUNTIME_COMPILATION]`` for an engine whose plans compile kernels when built (the
        ``hip`` engine), else ``[]``."""
        self._need(_HEURISTICS, "get_behavior_notes_for_plan_at_index()")
        self._check_config_index(index, "get_behavior_notes_for_plan_at_index()")
        return self._ranked[int(index)].behavior_notes()

    def get_behavior_notes(self) -> List[behavior_note]:
        """The behaviour notes of the plan execute() runs (see
        get_behavior_notes_for_plan_at_index)."""
        self._need(_PLANS, "get_behavior_notes()")
        return self.get_behavior_notes_for_plan_at_index(self._candidate)

    # -- execute --
    def _arrays_for(self, plan: "_Plan", variant_pack: Mapping[Any, Any]) -> List[Any]:
        """The user's {tensor or uid: array} as a list in the order of the plan's pack; the
        pack itself checks every array.  None keys and None values are skipped (cuDNN
        frontend's optional outputs), and so are tensors of the graph no node uses; a
        runtime scalar takes a number or a one-element array; any other tensor may be an
        int, a device address (tensor_memory.RawPointer)."""
        from ..pygraph import Tensor  # pygraph.py imports this module: import at call time

        if not isinstance(variant_pack, Mapping):
            raise TypeError("variant pack: expected a dict {tensor or uid: array}, got "
                            f"{_type_name(variant_pack)}")
        pack, slots = plan.pack, plan.slots
        arrays: List[Any] = [None] * len(slots)
        for key, arr in variant_pack.items():
            if key is None or arr is None:
                continue
            if isinstance(key, Tensor):
                if key._graph is not self:
                    raise ValueError(f"variant pack: {key._label()} belongs to graph "
                                     f"'{key._graph.name}', not to graph '{self.name}'")
                uid = key._uid
            elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
                uid = int(key)
            else:
                raise TypeError("variant pack: keys must be tensors or uids (int), got "
                                f"{_type_name(key)}")
            idx = slots.get(uid)
            if idx is None:
                t = self._tensor_by_uid(uid)
                if t is None:
                    raise ValueError(f"variant pack: uid {uid} is not a tensor of graph "
                                     f"'{self.name}'")
                if all(u is not t for u in self._used_tensors()):
                    # made but used by no node (cuDNN frontend's test_instancenorm gives
                    # its backward graph an unused epsilon): nothing reads it, as in cuDNN
                    continue
                kind = "pass-by-value (its value is in the graph)" if t.get_is_pass_by_value() \
                    else "virtual (it has no memory; mark it with set_output(True))"
                raise ValueError(f"variant pack: {t._label()} is {kind}")
            if arrays[idx] is not None:
                raise ValueError(f"variant pack: {self._pack_label(pack, idx)} is given twice")
            t = self._tensor_by_uid(uid)
            if t is not None and t.get_is_pass_by_value():
                arr = self._scalar_array(pack, idx, arr)
            else:
                _uid, _name, dt, dims, strides, _out = pack.tensors[idx]
                arr = RawPointer.of(arr, dt, dims, strides) or arr
            arrays[idx] = as_buffer(arr)
        missing = [self._pack_label(pack, i) for i, a in enumerate(arrays) if a is None]
        if missing:
            raise ValueError("variant pack: no array for " + ", ".join(missing))
        return arrays

    @classmethod
    def _scalar_array(cls, pack: _C.VariantPack, idx: int, value: Any) -> Any:
        """A runtime scalar's value as the one-element array its tensor describes."""
        _uid, _name, dt, dims, _strides, _out = pack.tensors[idx]
        label = cls._pack_label(pack, idx)
        if isinstance(value, (bool, np.bool_)) and dt != data_type.BOOLEAN:
            raise TypeError(f"variant pack: {label} is a {_C.dtype_name(dt)} scalar, got a bool")
        if isinstance(value, numbers.Number) or isinstance(value, np.generic):
            a = np.asarray(value)
        elif isinstance(value, np.ndarray) or hasattr(value, "__array_interface__") or \
                _device.is_host_tensor(value):  # a torch CPU tensor, as cuDNN frontend takes
            a = _device.host_view(value)
            if a.size != 1:
                raise ValueError(f"variant pack: {label} is a scalar; got an array of shape "
                                 f"{list(a.shape)}")
        else:
            return value  # let the pack report what it is
        want = numpy_dtype(data_type(dt))
        if data_type(dt) == data_type.BFLOAT16:
            bits = a.view(np.uint16) if a.dtype == np.uint16 else to_bfloat16(a)
            return np.ascontiguousarray(bits).reshape(dims)
        return np.ascontiguousarray(a, dtype=want).reshape(dims)

    @staticmethod
    def _pack_label(pack: _C.VariantPack, idx: int) -> str:
        uid, name = pack.tensors[idx][:2]
        return f"tensor '{name}' (uid {uid})" if name else f"tensor with uid {uid}"

    def execute_plan_at_index(self, variant_pack: Mapping[Any, Any], workspace: Any,
                              index: int, handle: Optional[_C.Handle] = None,
                              override_uids: Any = None, override_shapes: Any = None,
                              override_strides: Any = None) -> None:
        """Runs plan ``index`` on the arrays of the variant pack ({tensor or uid: array}).
        Arrays are checked against the plan's graph (dtype, shape, strides in elements,
        writable outputs) and used in place; as in cuDNN, an output's array of the right type
        but another shape may stand for it if it is one dense block larger than all the
        tensor reaches (with a RuntimeWarning).  workspace: at least
        get_workspace_size_plan_at_index(index) bytes; None allocates one for the call
        (slow on a device: pass one).  ``handle``: any handle of the plan's device
        (default: the graph's).  override_*: cuDNN frontend's dynamic shapes, not in
        hipdnn (NotImplementedError where given)."""
        self._run_at(variant_pack, workspace, index, handle, override_uids, override_shapes,
                     override_strides)

    def _run_at(self, variant_pack: Mapping[Any, Any], workspace: Any, index: int,
                handle: Optional[_C.Handle], override_uids: Any = None,
                override_shapes: Any = None, override_strides: Any = None) -> bool:
        """execute_plan_at_index; True when the arrays went to the pack as given (no host
        staging, no reinterpreted views), as run_keyed would take them."""
        refuse_overrides("execute", override_uids, override_shapes, override_strides)
        plan = self._plan(index, "execute()")
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"execute: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        arrays = self._arrays_for(plan, variant_pack)
        handle = handle if handle is not None else self._get_handle()
        workspace = _workspace_of(plan, workspace)
        staging = staged_for(plan.engine, plan.space, self._preferred, self.name, plan.pack,
                             arrays, self._staging_said)
        if staging is not None:
            arrays = staging.arrays
            workspace = None if _device.is_device_array(workspace) else workspace
        as_given = staging is None
        try:
            plan.pack.execute(handle, arrays, workspace)
        except ValueError:  # only then: the success path checks nothing twice
            views = reinterpreted(plan.pack, arrays, self._pack_label)
            if views is None:
                raise
            plan.pack.execute(handle, views, workspace)
            as_given = False
        if staging is not None:  # after a reinterpreted run too: its outputs are staged
            staging.copy_back()
        return as_given

    def execute(self, variant_pack: Mapping[Any, Any], workspace: Any = None,
                handle: Optional[_C.Handle] = None, override_uids: Any = None,
                override_shapes: Any = None, override_strides: Any = None) -> None:
        """Runs the plan build_plans() chose; see execute_plan_at_index.  Where the graph
        did not say where its tensors live (no tensor_like of a device array, no preferred
        engine) and the arrays are all in the other memory than that plan's, the first
        engine config in the heuristics' order that runs in theirs is built and run instead
        (said once in the log); with none, GraphNotSupportedError gives each engine's
        reason."""
        fast = self._fast_run
        if fast is not None and override_uids is None and override_shapes is None and \
                override_strides is None and self._plans[self._candidate] is fast[0] and \
                fast[1].run_keyed(self._handle if handle is None else handle, variant_pack,
                                  fast[2], workspace):
            return
        refuse_overrides("execute", override_uids, override_shapes, override_strides)
        self._need(_PLANS, "execute()")
        index = self._candidate
        plan = self._plans[index]
        where = self._arrays_memory(variant_pack)
        if where is not None and plan is not None and where != plan.space and \
                plan.engine != self._preferred:
            index = self._plan_in(where, plan)
        if self._run_at(variant_pack, workspace, index, handle):
            ran = self._plan(index, "execute()")
            keys = self._keys_in_order(ran, variant_pack, workspace)
            self._fast_run = (ran if plan is None else plan, ran.pack, keys) \
                if keys is not None else None

    def _keys_in_order(self, plan: "_Plan", variant_pack: Mapping[Any, Any],
                       workspace: Any) -> Optional[Tuple[Any, ...]]:
        """The variant pack's keys in pack order, for execute's fast path (run_keyed, which
        takes a later call with exactly these keys, checking its arrays as execute does):
        a dict of this graph's tensors, one per tensor of the pack, none a runtime scalar,
        no array None or an address (an int), nor the workspace; else None."""
        from ..pygraph import Tensor  # pygraph.py imports this module: import at call time

        if type(variant_pack) is not dict or len(variant_pack) != len(plan.slots) or \
                RawPointer.is_address(workspace):
            return None
        keys: List[Any] = [None] * len(plan.slots)
        for key, arr in variant_pack.items():
            if not isinstance(key, Tensor) or key._graph is not self or arr is None or \
                    RawPointer.is_address(arr) or key.get_is_pass_by_value():
                return None
            idx = plan.slots.get(key._uid)
            if idx is None or keys[idx] is not None:
                return None
            keys[idx] = key
        return tuple(keys)

    def populate_cuda_graph(self, handle: Optional[_C.Handle], variant_pack: Mapping[Any, Any],
                            workspace: Any, cuda_graph: int) -> None:
        """cuDNN frontend's populate_cuda_graph: records the built plan's run on the variant
        pack ({tensor or uid: device array}; pointers, workspace and runtime scalars as they
        are now) into ``cuda_graph``, the address of an empty cudaGraph_t (hipGraph_t on
        AMD) the caller made and owns, as one child-graph node; nothing runs now.  Add the
        graph to your own as a child, or instantiate it.  ``workspace``: at least
        get_workspace_size() bytes of device memory that outlives the graph (required when
        the plan needs one).  ``handle``: any handle of the plan's device (None: the
        graph's).  A plan on a host engine cannot be recorded (NotSupportedError naming
        it); docs/engine_selection.md#graph-capture."""
        self._record_graph(handle, variant_pack, workspace, cuda_graph, False)

    def update_cuda_graph(self, handle: Optional[_C.Handle], variant_pack: Mapping[Any, Any],
                          workspace: Any, cuda_graph: int) -> None:
        """cuDNN frontend's update_cuda_graph: ``cuda_graph`` is a graph populate_cuda_graph
        filled for this plan, or the copy cudaGraphChildGraphNodeGetGraph gives of it from
        your graph; its recording is replaced by one on the new variant pack's pointers,
        with the same shape, so that cudaGraphExecChildGraphNodeSetParams (or
        cudaGraphExecUpdate) carries them into your instantiated graph without
        re-instantiating.  Raises when the plan takes another path on the new buffers (say
        their alignment differs): populate a new graph then."""
        self._record_graph(handle, variant_pack, workspace, cuda_graph, True)

    def _record_graph(self, handle: Optional[_C.Handle], variant_pack: Mapping[Any, Any],
                      workspace: Any, cuda_graph: int, update: bool) -> None:
        what = "update_cuda_graph()" if update else "populate_cuda_graph()"
        self._need(_PLANS, what)
        plan = self._plan(self._candidate, what)
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"{what}: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        if not isinstance(cuda_graph, (int, np.integer)) or isinstance(cuda_graph, bool):
            raise TypeError(f"{what}: cuda_graph must be a graph's address (an int), got "
                            f"{_type_name(cuda_graph)}")
        arrays = self._arrays_for(plan, variant_pack)
        handle = handle if handle is not None else self._get_handle()
        workspace = _workspace_of(plan, workspace)
        plan.pack.record_graph(handle, arrays, workspace, int(cuda_graph), update)

    def _arrays_memory(self, variant_pack: Any) -> Optional[memory_space]:
        """The memory the arrays of the variant pack's tensors are in (runtime scalars
        aside) when they all agree, else None (the pack then says what is wrong)."""
        from ..pygraph import Tensor  # pygraph.py imports this module: import at call time

        if not isinstance(variant_pack, Mapping):
            return None
        spaces = set()
        for key, arr in variant_pack.items():
            if key is None or arr is None:
                continue
            if isinstance(key, Tensor):
                t: Optional[Tensor] = key if key._graph is self else None
            elif isinstance(key, (int, np.integer)) and not isinstance(key, bool):
                t = self._tensor_by_uid(int(key))
            else:
                t = None
            if t is None or t.get_is_pass_by_value():
                continue
            spaces.add(memory_space.DEVICE if RawPointer.is_address(arr) or
                       _device.is_device_array(arr)
                       else memory_space.HOST)
        return spaces.pop() if len(spaces) == 1 else None

    def _plan_in(self, where: memory_space, chosen: "_Plan") -> int:
        """The first engine config, in the heuristics' order, whose engine runs in
        ``where`` and whose plan builds; raises GraphNotSupportedError if none."""
        for i, c in enumerate(self._configs):
            if self._engine_space(c.engine) != where or self._build_one(i) is not None:
                continue
            engine = self._plans[i].engine  # type: ignore[union-attr]
            if f"memory:{engine}" not in self._staging_said:
                self._staging_said.add(f"memory:{engine}")
                _C.log_message(int(log_level.INFO), f"graph '{self.name}': its arrays are in "
                               f"{where.name.lower()} memory, so {engine} runs it instead of "
                               f"{chosen.engine}")
            return i
        reasons = self._declines()
        reasons[chosen.engine] = (f"runs in {chosen.space.name.lower()} memory, and the "
                                  f"variant pack's tensors are in {where.name.lower()} memory")
        hint = None
        if chosen.space == memory_space.HOST:
            hint = (f"set_preferred_engine('{chosen.engine}') runs it all the same, staged "
                    "through host copies (slow)")
        raise GraphNotSupportedError(self.name, reasons, hint)
