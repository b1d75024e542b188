"""pygraph's build steps, in cuDNN frontend's order and with its names: ``validate`` /
``build_operation_graph`` (lower the graph to backend descriptors; the backend checks it
and infers what was left unset), ``create_execution_plans`` / ``create_execution_plan``
(engine configs, from heuristics or chosen by hand), ``check_support``, and
``build_plan_at_index`` / ``build_plans``; ``build`` runs them all.  The user's engine
choices (deselected engines, a preferred one, notes, a workspace limit) apply here."""
from __future__ import annotations

import os
from typing import (TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple, Union)

import numpy as np

from .. import _C
from ..arrays import numpy_dtype, to_bfloat16
from ..enums import (behavior_note, build_plan_policy, data_type, heur_mode, knob_type,
                     memory_space, numerical_note)
from ..errors import FeatureNotSupportedError, GraphNotSupportedError, HipdnnError
from ..runtime import engine_id, engines
from .args import _name_arg, _notes, _type_name
from .base import (_BOOL, _CHAR, _DESC, _DTYPE, _HEURISTICS, _INT64, _PLANS, _UINT8, _VALIDATED,
                   GraphBase, _Config, _Plan)
from .nodes import _Op
from .sdpa import sdpa_cudnn_limits

if TYPE_CHECKING:
    from ..pygraph import Tensor, knob


def _encode_scalar(value: float, dtype: data_type) -> bytes:
    if dtype == data_type.BFLOAT16:
        return to_bfloat16(np.array([value], np.float32)).tobytes()
    return np.array([value], dtype=numpy_dtype(dtype)).tobytes()


class BuildSteps(GraphBase):
    """pygraph's build steps and engine choices."""

    # -- engine selection --
    def deselect_engines(self, engine_names: Iterable[str]) -> None:
        """Leaves out every engine whose name contains one of these strings (cuDNN
        frontend matches its engine tags the same way); a string that matches no loaded
        engine leaves nothing out."""
        if isinstance(engine_names, str):
            raise TypeError("deselect_engines: expected a list of engine names, got a str")
        names = list(engine_names)
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"deselect_engines: expected engine names (str), got "
                                f"{_type_name(n)}")
        self._deselected = names
        self._drop_configs()

    def set_preferred_engine(self, name: Optional[str]) -> None:
        """Ranks this engine first when it applies (hipdnn's addition)."""
        self._preferred = _name_arg(name, "set_preferred_engine")
        self._drop_configs()

    def _drop_configs(self) -> None:
        if self._state >= _HEURISTICS:
            self._reset_plans()
            self._state = _VALIDATED

    def select_behavior_notes(self, notes: Iterable[int]) -> None:
        """Keeps only engine configs that have every one of these behaviour notes."""
        self._filters["select_behavior"] = _notes(notes, behavior_note, "select_behavior_notes")

    def deselect_behavior_notes(self, notes: Iterable[int]) -> None:
        """Leaves out engine configs that have any of these behaviour notes."""
        self._filters["deselect_behavior"] = _notes(notes, behavior_note,
                                                    "deselect_behavior_notes")

    def select_numeric_notes(self, notes: Iterable[int]) -> None:
        """Keeps only engine configs that have every one of these numerical notes."""
        self._filters["select_numeric"] = _notes(notes, numerical_note, "select_numeric_notes")

    def deselect_numeric_notes(self, notes: Iterable[int]) -> None:
        """Leaves out engine configs that have any of these numerical notes."""
        self._filters["deselect_numeric"] = _notes(notes, numerical_note,
                                                   "deselect_numeric_notes")

    def deselect_workspace_greater_than(self, workspace: int) -> None:
        """Leaves out plans that need more than this many bytes of workspace."""
        if isinstance(workspace, bool) or not isinstance(workspace, (int, np.integer)):
            raise TypeError(f"deselect_workspace_greater_than: expected an int, got "
                            f"{_type_name(workspace)}")
        self._max_workspace = int(workspace)

    # -- build steps --
    def _assign_uids(self, used: List[Tensor]) -> None:
        explicit = {t._uid for t in used if t._uid_explicit}
        taken = set(explicit)
        for t in used:
            if t._uid_explicit:
                continue
            if t._uid in taken:
                t._uid = self._new_uid()
                while t._uid in taken:
                    t._uid = self._new_uid()
            taken.add(t._uid)

    def _used_tensors(self) -> List[Tensor]:
        seen: Dict[int, Tensor] = {}
        for op in self._ops:
            for _p, _a, t in op.inputs + op.outputs:
                seen.setdefault(id(t), t)
        for t in list(seen.values()):  # sdpa's ragged offsets: graph inputs too
            r = t.get_ragged_offset()
            if r is not None:
                seen.setdefault(id(r), r)
        return list(seen.values())

    def _lower_tensor(self, t: Tensor, descs: Dict[int, _C.Descriptor]) -> _C.Descriptor:
        d = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
        d.set(_C.ATTR_TENSOR_UNIQUE_ID, _INT64, t._uid)
        if t.get_name():
            d.set(_C.ATTR_TENSOR_NAME_EXT, _CHAR, t.get_name())
        dt = self._default_dtype(t)
        if dt != data_type.NOT_SET:
            d.set(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE, int(dt))
        if "dim" in t._a:
            d.set(_C.ATTR_TENSOR_DIMENSIONS, _INT64, t._a["dim"])
        if "stride" in t._a:
            d.set(_C.ATTR_TENSOR_STRIDES, _INT64, t._a["stride"])
        d.set(_C.ATTR_TENSOR_IS_VIRTUAL, _BOOL, t.get_is_virtual())
        ragged = t.get_ragged_offset()
        if ragged is not None:  # lowered first (validate)
            d.set(_C.ATTR_TENSOR_RAGGED_OFFSET_DESC, _DESC, descs[id(ragged)])
        if t.get_is_pass_by_value():
            if dt == data_type.NOT_SET:
                dt = data_type.FLOAT
                d.set(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE, int(dt))
            d.set(_C.ATTR_TENSOR_IS_BY_VALUE, _BOOL, True)
            value = t.get_value()
            if value is not None:  # else a runtime scalar, given at each execute
                d.set(_C.ATTR_TENSOR_VALUE_EXT, _UINT8, _encode_scalar(value, dt))
        d.finalize()
        return d

    def _lower_op(self, op: _Op, descs: Dict[int, _C.Descriptor]) -> _C.Descriptor:
        d = _C.Descriptor(op.info.descriptor_type)
        d.set(_C.ATTR_OPERATION_NAME_EXT, _CHAR, op.name)
        compute = op.compute if op.compute is not None else self.compute_data_type
        if compute != data_type.NOT_SET:
            d.set(_C.ATTR_OPERATION_COMPUTE_TYPE_EXT, _DTYPE, int(compute))
        for attr, typ, values in op.params:
            d.set(attr, typ, values)
        for _port, attr, t in op.inputs + op.outputs:
            d.set(attr, _DESC, descs[id(t)])
        d.finalize()
        return d

    def validate(self) -> None:
        """Lowers the graph to backend descriptors and finalizes it: the backend checks
        it (a DAG, unique uids, every input produced or supplied, per-op dtype and rank
        rules) and infers every unset dim, stride and data type.  Raises
        InvalidGraphError naming the node or tensor."""
        if self._state >= _VALIDATED:
            return
        if not self._ops:
            raise _C.InvalidGraphError(f"graph '{self.name}' has no operations")
        used = self._used_tensors()
        lacks = {op.label(): "; ".join(op.lacks) for op in self._ops if op.lacks}
        refused = {op.label(): limit for op in self._ops
                   if op.op.startswith("sdpa") and (limit := sdpa_cudnn_limits(op))}
        if refused:  # what cuDNN frontend's own validate() refuses
            raise FeatureNotSupportedError(self.name, {
                k: "; ".join(filter(None, [lacks.get(k), refused.get(k)]))
                for k in {**lacks, **refused}})
        if lacks:
            # A feature cuDNN has and hipdnn lacks: cuDNN frontend validates such a graph
            # and says at create_execution_plans() / check_support() that no engine runs it;
            # so does hipdnn, where code written for cuDNN catches it.
            self._unsupported = lacks
            self._state = _VALIDATED
            return
        self._assign_uids(used)
        descs: Dict[int, _C.Descriptor] = {}
        for t in sorted(used, key=lambda t: t.get_ragged_offset() is not None):
            descs[id(t)] = self._lower_tensor(t, descs)
        ops = [self._lower_op(op, descs) for op in self._ops]
        g = _C.Descriptor(_C.BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, self._get_handle())
        g.set(_C.ATTR_OPERATIONGRAPH_OPS, _DESC, ops)
        if self.name:
            g.set(_C.ATTR_OPERATIONGRAPH_NAME_EXT, _CHAR, self.name)
        g.finalize()
        # What the backend inferred lives in the graph: read it from TENSORS_EXT.
        by_uid = {t._uid: t for t in used}
        for d in g.get(_C.ATTR_OPERATIONGRAPH_TENSORS_EXT, _DESC):
            t = by_uid[d.get(_C.ATTR_TENSOR_UNIQUE_ID, _INT64)[0]]
            t._inferred = {
                "dim": d.get(_C.ATTR_TENSOR_DIMENSIONS, _INT64),
                "stride": d.get(_C.ATTR_TENSOR_STRIDES, _INT64),
                "data_type": data_type(d.get(_C.ATTR_TENSOR_DATA_TYPE, _DTYPE)[0]),
            }
        self._opgraph = g
        self._tensor_descs = {t._uid: descs[id(t)] for t in used}
        self._state = _VALIDATED

    def build_operation_graph(self) -> None:
        """validate() plus nothing more: the finalized graph is what later steps use."""
        self.validate()

    @property
    def _graph(self) -> _C.Descriptor:
        """The finalized OPERATIONGRAPH (validate() made it)."""
        self._raise_unsupported()
        assert self._opgraph is not None, "validate() first"
        return self._opgraph

    def _heuristics(self, mode: heur_mode, deselected: Sequence[int], lazy: bool = False
                    ) -> Tuple[List[Tuple[str, str]], List[_C.Descriptor]]:
        """One ENGINEHEUR query: [(engine, "applicable" or why not)] and the ranked
        configs.  ``lazy``: when the backend ranked only the first config (the plan cache,
        HIPDNN_ENGINE or the preferred engine decided it, and only their engines were
        asked), that config alone and no report; the query is kept in _pending, and
        _rank_rest asks the other engines when a step needs their configs."""
        h = _C.Descriptor(_C.BACKEND_ENGINEHEUR_DESCRIPTOR)
        backend_mode = heur_mode.A if mode == heur_mode.OPENSOURCE else mode
        h.set(_C.ATTR_ENGINEHEUR_MODE, _C.TYPE_HEUR_MODE, int(backend_mode))
        h.set(_C.ATTR_ENGINEHEUR_OPERATION_GRAPH, _DESC, self._opgraph)
        if self._preferred:
            h.set(_C.ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT, _CHAR, self._preferred)
        if deselected:
            h.set(_C.ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT, _INT64,
                  [i - (1 << 64) if i >= (1 << 63) else i for i in deselected])
        h.finalize()
        ranked = h.get(_C.ATTR_ENGINEHEUR_PARTIAL_COUNT_EXT, _INT64)[0]
        if lazy and ranked:
            self._pending = h
            return [], list(h.get(_C.ATTR_ENGINEHEUR_RESULTS, _DESC, ranked))
        return self._read_heuristics(h, mode)

    def _read_heuristics(self, h: _C.Descriptor, mode: heur_mode
                         ) -> Tuple[List[Tuple[str, str]], List[_C.Descriptor]]:
        """A finalized ENGINEHEUR's support report and configs, every engine ranked; its
        explanations into _explained."""
        report = []
        for line in h.get(_C.ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT, _CHAR).splitlines():
            fields = line.split("\t", 2)
            if len(fields) == 3:
                report.append((fields[0], fields[2]))
        if mode != heur_mode.FALLBACK:
            lines = h.get(_C.ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT, _CHAR).splitlines()
            self._explained = [(f[1], f[0], float(f[2]), f[3]) for f in
                               (line.split("\t", 3) for line in lines) if len(f) == 4]
        return report, list(h.get(_C.ATTR_ENGINEHEUR_RESULTS, _DESC))

    def _rank_rest(self) -> None:
        """After a short cut (_heuristics): the other engines asked, their configs added
        after the first (whose index stays 0), the support report and explanations read."""
        h, self._pending = self._pending, None
        if h is None:
            return
        mode = heur_mode(h.get(_C.ATTR_ENGINEHEUR_MODE, _C.TYPE_HEUR_MODE)[0])
        report, results = self._read_heuristics(h, mode)
        self._add_results(report, results)

    def _add_results(self, report: Sequence[Tuple[str, str]],
                     results: Sequence[_C.Descriptor]) -> None:
        self._note_support(report)
        for cfg in results:
            eng = cfg.get(_C.ATTR_ENGINECFG_ENGINE, _DESC)[0]
            self._add_config(_Config.of(cfg, eng, self._knobs_of(cfg)))

    def _deselected_ids(self) -> List[int]:
        return [e.id for e in engines() if any(n in e.name for n in self._deselected)]

    def _note_support(self, report: Sequence[Tuple[str, str]]) -> None:
        known = dict(self._support_seen)
        for ename, status in report:
            if ename not in known or status == "applicable":
                known[ename] = None if status == "applicable" else status
        self._support_seen = list(known.items())

    def create_execution_plans(self, heur_modes: Union[Sequence[int], int] = (heur_mode.A,)
                               ) -> None:
        """Asks every engine whether it runs the graph and ranks the ones that do, for each
        heuristics mode; their engine configs are added, in mode order, to the graph's
        list (plan indices count in it).  With one mode, when the plan cache,
        HIPDNN_ENGINE or the preferred engine decides the first config, only their
        engines are asked now; the others when a later step needs their configs
        (docs/engine_selection.md#heuristics)."""
        self._need(_VALIDATED, "create_execution_plans()")
        if isinstance(heur_modes, bool):
            raise TypeError("create_execution_plans: expected hipdnn.heur_mode values, got bool")
        if isinstance(heur_modes, (int, np.integer)):
            heur_modes = [heur_modes]
        modes = []
        for m in heur_modes:
            if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
                raise TypeError(f"create_execution_plans: expected hipdnn.heur_mode values, "
                                f"got {_type_name(m)}")
            try:
                modes.append(heur_mode(int(m)))
            except ValueError:
                raise ValueError(f"create_execution_plans: {int(m)} is not a hipdnn.heur_mode") \
                    from None
        if not modes:
            raise ValueError("create_execution_plans: give at least one hipdnn.heur_mode")
        if self._preferred:
            engine_id(self._preferred)  # a clear error for an unknown name
        deselected = self._deselected_ids()
        self._rank_rest()  # an earlier call's configs come first
        for mode in modes:
            self._add_results(*self._heuristics(mode, deselected, lazy=len(modes) == 1))
        self._state = max(self._state, _HEURISTICS)

    @staticmethod
    def _knobs_of(cfg: _C.Descriptor) -> Tuple[Tuple[int, int], ...]:
        """The (knob id, value) choices of an ENGINECFG: none from plain heuristics, the
        tuned ones for the config the plan cache put first."""
        choices = []
        for k in cfg.get(_C.ATTR_ENGINECFG_KNOB_CHOICES, _DESC):
            choices.append((k.get(_C.ATTR_KNOB_CHOICE_KNOB_TYPE, _INT64)[0],
                            k.get(_C.ATTR_KNOB_CHOICE_KNOB_VALUE, _INT64)[0]))
        return tuple(sorted(choices))

    def _add_config(self, cfg: "_Config") -> int:
        for i, c in enumerate(self._ranked):
            if c.engine == cfg.engine and c.knobs == cfg.knobs:
                return i
        self._ranked.append(cfg)
        self._plans.append(None)
        return len(self._ranked) - 1

    def get_engine_count(self) -> int:
        """How many engines are loaded: engine ids for create_execution_plan and
        get_knobs_for_engine run from 0 to this count (hipdnn.engines() order)."""
        self._need(_VALIDATED, "get_engine_count()")
        return int(self._graph.get(_C.ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, _INT64)[0])

    def _engine_index(self, engine: Any, what: str) -> int:
        if isinstance(engine, bool) or not isinstance(engine, (int, np.integer)):
            raise TypeError(f"{what}: engine must be an int, got {_type_name(engine)}")
        count = self.get_engine_count()
        if not 0 <= int(engine) < count:
            raise IndexError(f"{what}: engine {int(engine)} out of range; {count} engine(s) are "
                             "loaded")
        return int(engine)

    def get_knobs_for_engine(self, engine: int) -> List["knob"]:
        """The knobs of engine ``engine`` (an index below get_engine_count()): each a
        ``knob(type, max_value, min_value, stride, values)``, its type a hipdnn.knob_type
        where the engine's knob id is one (else the id); the values it takes are min_value
        to max_value in steps of stride, and when ``values`` is not empty only those.  The
        reference engine has none; the ``hip`` engine has SPLIT_K_SLC, KERNEL_CFG, TILE_M
        and TILE_N (0: the engine's choice; TILE_M takes 64 or 128, TILE_N 64, 128 or 256),
        and 20000, its tf32
        knob (0: fp32 exact; 1: read as TF32 on an sm_90 GPU)."""
        from ..pygraph import knob  # pygraph.py imports this module: import at call time

        self._need(_VALIDATED, "get_knobs_for_engine()")
        out = []
        for kid, lo, hi, _default, stride, values in self._knob_space(
                self._engine_index(engine, "get_knobs_for_engine")):
            kind: Any = knob_type(kid) if kid in knob_type._value2member_map_ else kid
            out.append(knob(kind, hi, lo, stride, values))
        return out

    def _knob_space(self, index: int) -> List[Tuple[int, int, int, int, int, Tuple[int, ...]]]:
        """Engine ``index``'s knobs: (id, min, max, default, stride, only values) each."""
        e = _C.Descriptor(_C.BACKEND_ENGINE_DESCRIPTOR)
        e.set(_C.ATTR_ENGINE_OPERATION_GRAPH, _DESC, self._opgraph)
        e.set(_C.ATTR_ENGINE_GLOBAL_INDEX, _INT64, index)
        e.finalize()
        info = [int(v) for v in e.get(_C.ATTR_ENGINE_KNOB_INFO_EXT, _INT64)]
        values = [int(v) for v in e.get(_C.ATTR_ENGINE_KNOB_VALUES_EXT, _INT64)]
        out, at = [], 0
        for i in range(0, len(info), 4):
            stride, n = values[at], values[at + 1]
            out.append((info[i], info[i + 1], info[i + 2], info[i + 3], stride,
                        tuple(values[at + 2:at + 2 + n])))
            at += 2 + n
        return out

    def create_execution_plan(self, engine: int, knobs: Optional[Mapping[Any, int]] = None
                              ) -> None:
        """Adds the engine config {engine ``engine``, knob values} to the graph's list,
        bypassing heuristics.  Knob keys are hipdnn.knob_type values (or engine knob ids);
        an engine that does not run the graph raises GraphNotSupportedError with its
        reason, a knob it does not have fails when the plan is built."""
        self._need(_VALIDATED, "create_execution_plan()")
        index = self._engine_index(engine, "create_execution_plan")
        if knobs is None:
            knobs = {}
        if not isinstance(knobs, Mapping):
            raise TypeError(f"create_execution_plan: knobs must be a dict {{knob_type: value}}, "
                            f"got {_type_name(knobs)}")
        choices = []
        for k, v in knobs.items():
            for x, what in ((k, "knob type"), (v, "knob value")):
                if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
                    raise TypeError(f"create_execution_plan: {what} must be an int, got "
                                    f"{_type_name(x)}")
            choices.append((int(k), int(v)))
        choices.sort()
        e = _C.Descriptor(_C.BACKEND_ENGINE_DESCRIPTOR)
        e.set(_C.ATTR_ENGINE_OPERATION_GRAPH, _DESC, self._opgraph)
        e.set(_C.ATTR_ENGINE_GLOBAL_INDEX, _INT64, index)
        e.finalize()
        ename = e.get(_C.ATTR_ENGINE_NAME_EXT, _CHAR)
        if not any(n == ename for n, _ in self._support):
            report, _ = self._heuristics(heur_mode.A, [])
            self._note_support(report)
        why = dict(self._support).get(ename)
        if why is not None:
            raise GraphNotSupportedError(self.name, {ename: why})
        self._rank_rest()  # the heuristics' configs keep their indices
        self._add_config(self._make_config(e, tuple(choices)))
        self._state = max(self._state, _HEURISTICS)

    @staticmethod
    def _make_config(engine: _C.Descriptor, knobs: Tuple[Tuple[int, int], ...]) -> "_Config":
        """An ENGINECFG of a finalized ENGINE with these (knob id, value) choices."""
        descs = []
        for k, v in knobs:
            kc = _C.Descriptor(_C.BACKEND_KNOB_CHOICE_DESCRIPTOR)
            kc.set(_C.ATTR_KNOB_CHOICE_KNOB_TYPE, _INT64, k)
            kc.set(_C.ATTR_KNOB_CHOICE_KNOB_VALUE, _INT64, v)
            kc.finalize()
            descs.append(kc)
        cfg = _C.Descriptor(_C.BACKEND_ENGINECFG_DESCRIPTOR)
        cfg.set(_C.ATTR_ENGINECFG_ENGINE, _DESC, engine)
        if descs:
            cfg.set(_C.ATTR_ENGINECFG_KNOB_CHOICES, _DESC, descs)
        cfg.finalize()
        return _Config.of(cfg, engine, tuple(knobs))

    def support_report(self) -> List[Tuple[str, Optional[str]]]:
        """``[(engine_name, None or the reason it declined)]`` for every loaded engine, from
        the last create_execution_plans()."""
        self._need(_HEURISTICS, "support_report()")
        return list(self._support)

    def get_heuristic_explanations(self) -> List[Tuple[str, str, float, str]]:
        """``[(engine_name, plugin, score, explanation)]``, best first, from the heuristic
        plugin that ranked the engines in the last create_execution_plans() under mode A
        or B (docs/engine_selection.md); ``[]`` when the built-in ranking did (no plugin
        loaded, ``HIPDNN_HEURISTIC=builtin``, or its answer was refused).  The plugin's
        estimate, not a measurement: autotune() measures."""
        self._need(_HEURISTICS, "get_heuristic_explanations()")
        return list(self._explanations)

    def _barred(self, i: int) -> Optional[str]:
        """Why engine config i is left out by the user's choices, or None.  A graph made
        from device arrays leaves out host engines unless one is the preferred engine."""
        c = self._ranked[i]
        if any(n in c.engine for n in self._deselected):
            return "deselected by the user"
        if self._from_device is not None and c.engine != self._preferred and \
                self._engine_space(c.engine) == memory_space.HOST:
            return (f"runs in host memory, and {self._from_device} was made from a device "
                    f"array (set_preferred_engine('{c.engine}') to choose it all the same)")
        notes: Dict[str, Sequence[int]] = {"behavior": c.behavior_notes(),
                                           "numeric": c.numerical_notes()}
        for key, wanted in self._filters.items():
            kind = key.split("_")[1]
            if key.startswith("select") and any(n not in notes[kind] for n in wanted):
                return f"lacks a selected {kind} note ({', '.join(n.name for n in wanted)})"
            if key.startswith("deselect") and any(n in notes[kind] for n in wanted):
                return f"has a deselected {kind} note"
        return None

    @staticmethod
    def _engine_space(name: str) -> Optional[memory_space]:
        """The memory a loaded engine runs in, by name (None for no such engine)."""
        return next((e.memory_space for e in engines() if e.name == name), None)

    def _declines(self) -> Dict[str, str]:
        reasons = {n: why for n, why in self._support if why is not None}
        for i, c in enumerate(self._configs):
            why = self._failures.get(i) or self._barred(i)  # a built plan may be barred since
            if why is not None:
                reasons[c.tag()] = why
        return reasons

    def check_support(self) -> None:
        """Raises GraphNotSupportedError, listing every engine and why it declined, when
        no engine config can run the graph."""
        self._need(_HEURISTICS, "check_support()")
        if all(self._barred(i) is not None for i in range(len(self._ranked))) and \
                all(self._barred(i) is not None for i in range(len(self._configs))):
            raise GraphNotSupportedError(self.name, self._declines())

    def _build_one(self, i: int) -> Optional[str]:
        """Builds plan i unless built; the reason it cannot be, or None."""
        if self._plans[i] is not None:
            return None
        why = self._barred(i)
        if why is not None:
            return why
        c = self._ranked[i]
        p = _C.Descriptor(_C.BACKEND_EXECUTION_PLAN_DESCRIPTOR)
        p.set(_C.ATTR_EXECUTION_PLAN_HANDLE, _C.TYPE_HANDLE, self._get_handle())
        p.set(_C.ATTR_EXECUTION_PLAN_ENGINE_CONFIG, _DESC, c.desc)
        try:
            p.finalize()
        except HipdnnError as e:
            self._failures[i] = f"plan build failed: {e}"
            return self._failures[i]
        # Compiled once from the plan itself: what execute() checks arrays against.
        pack = _C.VariantPack(p)
        if self._max_workspace is not None and pack.workspace_size > self._max_workspace:
            self._failures[i] = (f"needs {pack.workspace_size} B of workspace, more than the "
                                 f"{self._max_workspace} B allowed")
            return self._failures[i]
        too_big = self._beyond_memory(pack)
        if too_big:
            self._failures[i] = too_big
            return too_big
        self._plans[i] = _Plan(p, p.get(_C.ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT, _CHAR),
                               pack.workspace_size, memory_space(pack.memory_space), pack,
                               {uid: k for k, uid in enumerate(pack.uids)})
        self._failures.pop(i, None)
        self._state = _PLANS
        return None

    def _beyond_memory(self, pack: _C.VariantPack) -> Optional[str]:
        """Why a host plan's workspace cannot be had: more than the machine's memory (the
        virtual tensor that spans most named), or None."""
        if memory_space(pack.memory_space) != memory_space.HOST:
            return None
        try:
            have = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            return None
        if pack.workspace_size <= have:
            return None
        spans = [(1 + sum((d - 1) * s for d, s in zip(t.get_dim(), t.get_stride())), t)
                 for t in self._tensors if t.get_is_virtual() and t.get_dim()]
        where = ""
        if spans:
            n, t = max(spans, key=lambda e: e[0])
            where = f"; virtual {t._label()} spans {n} elements (strides {t.get_stride()})"
        return (f"needs {pack.workspace_size} B of workspace, more than this machine's {have} B "
                f"of memory{where}")

    def build_plan_at_index(self, index: int) -> None:
        """Builds the plan of engine config ``index``; execute() runs it from now on."""
        self._need(_HEURISTICS, "build_plan_at_index()")
        self._check_config_index(index, "build_plan_at_index()")
        why = self._build_one(int(index))
        if why is not None:
            raise GraphNotSupportedError(self.name, {self._ranked[int(index)].tag(): why})
        self._candidate = int(index)

    def build_plans(self, policy: int = build_plan_policy.HEURISTICS_CHOICE) -> None:
        """Builds execution plans from the engine configs in order: HEURISTICS_CHOICE
        stops at the first that builds, ALL builds every one.  execute() runs the first
        that built."""
        self._need(_HEURISTICS, "build_plans()")
        if isinstance(policy, bool) or not isinstance(policy, (int, np.integer)):
            raise TypeError(f"build_plans: expected a hipdnn.build_plan_policy, got "
                            f"{_type_name(policy)}")
        try:
            policy = build_plan_policy(int(policy))
        except ValueError:
            raise ValueError(f"build_plans: {int(policy)} is not a hipdnn.build_plan_policy") \
                from None
        if policy == build_plan_policy.HEURISTICS_CHOICE and self._candidate >= 0:
            return
        if policy == build_plan_policy.ALL:
            self._rank_rest()
        i = 0
        while i < len(self._ranked) or self._pending is not None:
            if i == len(self._ranked):  # the configs ranked so far did not build
                self._rank_rest()
                continue
            if self._build_one(i) is None:
                if self._candidate < 0:
                    self._candidate = i
                if policy == build_plan_policy.HEURISTICS_CHOICE:
                    break
            i += 1
        if self._candidate < 0:
            raise GraphNotSupportedError(self.name, self._declines())

    def build(self, heur_modes: Union[Sequence[int], int] = (heur_mode.A,)) -> None:
        """validate, build_operation_graph, create_execution_plans, check_support and
        build_plans(HEURISTICS_CHOICE) in one call."""
        self.validate()
        self.build_operation_graph()
        self.create_execution_plans(heur_modes)
        self.check_support()
        self.build_plans(build_plan_policy.HEURISTICS_CHOICE)

    def _check_config_index(self, index: Any, what: str) -> None:
        """_check_index over the engine configs, ranking the rest first only when the index
        is beyond those ranked so far."""
        ranked = len(self._ranked)
        fits = isinstance(index, (int, np.integer)) and not isinstance(index, bool) and \
            0 <= index < ranked
        self._check_index(index, ranked if fits else len(self._configs), what)

    @staticmethod
    def _check_index(index: Any, count: int, what: str) -> None:
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"{what}: index must be an int, got {_type_name(index)}")
        if not 0 <= index < count:
            raise IndexError(f"{what}: plan index {int(index)} out of range; the graph has "
                             f"{count} engine config(s)")
