"""pygraph's autotuning: every engine config the graph has, and each engine's knob values
(bounded), built and timed on the user's own arrays by the backend (``hipdnnAutotune_ext``:
outputs put back afterwards, inputs only read); the fastest becomes the plan execute()
runs and, unless ``store=False``, the plan cache's entry for the graph on this device, which
later processes' heuristics rank first (docs/engine_selection.md)."""
from __future__ import annotations

import itertools
import numbers
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from .. import _C
from ..enums import memory_space
from ..runtime import engines
from .args import _type_name
from .base import _DESC, _HEURISTICS, _Config
from .plans import Plans

# Values tried per knob at most (spread over its range), and configs per engine before the
# sweep goes one knob at a time (the others at the engine's default) instead of every
# combination.
_MAX_VALUES_PER_KNOB = 16
_MAX_COMBINATIONS = 32


class AutotuneResult(NamedTuple):
    """One row of autotune()'s table: a candidate engine config and how it did."""

    plan_index: int  # the config's index (get_plan_name_at_index, execute_plan_at_index)
    name: str  # the config's name: engine, then "_k<knob>=<value>" per knob
    engine: str
    knobs: Dict[int, int]
    status: str  # "ok", "failed" (it ran and failed), "not built", "skipped"
    reason: str  # why not "ok" ("" when it is)
    median_ms: Optional[float]
    min_ms: Optional[float]
    runs: int  # timed runs
    timer: str  # "device events", "host clock" or ""
    chosen: bool  # the fastest: execute() runs it from now on


def _knob_values(lo: int, hi: int) -> List[int]:
    if hi - lo < _MAX_VALUES_PER_KNOB:
        return list(range(lo, hi + 1))
    step = (hi - lo) / (_MAX_VALUES_PER_KNOB - 1)
    return sorted({lo + round(i * step) for i in range(_MAX_VALUES_PER_KNOB)})


def _sweep(ranges: Sequence[Tuple[int, int, int]]) -> List[Tuple[Tuple[int, int], ...]]:
    """Knob choices to try for knobs (id, min, max): every combination while they are few,
    else each knob's values alone."""
    values = [[(kid, v) for v in _knob_values(lo, hi)] for kid, lo, hi in ranges]
    count = 1
    for v in values:
        count *= len(v)
    if count <= _MAX_COMBINATIONS:
        return [tuple(c) for c in itertools.product(*values)]
    return [(choice,) for v in values for choice in v]


def _at_least(value: Any, what: str, integer: bool, minimum: float) -> Any:
    """value, checked: an int (integer) or a real number, at least minimum."""
    kinds: Tuple[type, ...] = (int,) if integer else (numbers.Real,)
    kind = "an int" if integer else "a number"
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise TypeError(f"autotune: {what} must be {kind} >= {minimum}, got "
                        f"{_type_name(value)}")
    if float(value) < minimum:
        raise ValueError(f"autotune: {what} must be {kind} >= {minimum}, got {value!r}")
    return value


class Autotune(Plans):
    """pygraph.autotune."""

    def _add_knob_sweep(self, max_configs: int) -> None:
        """Adds each engine's knob configs to the graph's list (up to max_configs in all)."""
        names = [e.name for e in engines()]
        seen: List[str] = []
        for c in list(self._configs):
            if c.engine in seen or c.engine not in names:
                continue
            seen.append(c.engine)
            knobs = self.get_knobs_for_engine(names.index(c.engine))
            ranges = [(int(k.type), int(k.min_value), int(k.max_value)) for k in knobs]
            engine = c.desc.get(_C.ATTR_ENGINECFG_ENGINE, _DESC)[0]
            for choice in _sweep(ranges) if ranges else []:
                if len(self._configs) >= max_configs:
                    return
                self._add_config(self._make_config(engine, tuple(sorted(choice))))

    def autotune(self, variant_pack: Mapping[Any, Any], workspace: Any = None, *,
                 budget_ms: float = 1000.0, repeat: int = 10, warmup: int = 1,
                 max_configs: int = 64, store: bool = True,
                 handle: Optional[_C.Handle] = None) -> List[AutotuneResult]:
        """Times every engine config of the graph (those create_execution_plans() ranked,
        plus each engine's knob values: every combination while there are at most 32, else
        one knob at a time; at most ``max_configs`` configs in all) on the arrays of the
        variant pack, and keeps the fastest (by median) as the plan execute() runs.  Each
        config is built (build_plans(ALL)), run ``warmup`` times, then timed until
        ``repeat`` runs, until the last three agree within 2 %, or until its even share of
        ``budget_ms`` is spent.  Device plans are timed with the device runtime's events,
        host plans with the host clock.  The outputs' arrays hold afterwards what they held
        before; inputs are only read.  workspace: at least the largest candidate's
        get_workspace_size_plan_at_index() bytes (None: allocated for the call).  With
        ``store`` the winner is written to the plan cache (HIPDNN_CACHE_DIR), so later
        processes building this graph on this device get it first.  Returns one
        AutotuneResult per config, in plan-index order."""
        self._need(_HEURISTICS, "autotune()")
        budget_ms = float(_at_least(budget_ms, "budget_ms", False, 0.001))
        repeat = _at_least(repeat, "repeat", True, 1)
        warmup = _at_least(warmup, "warmup", True, 0)
        max_configs = _at_least(max_configs, "max_configs", True, 1)
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"autotune: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        self._add_knob_sweep(max_configs)
        for i in range(len(self._configs)):
            self._build_one(i)
        where = self._arrays_memory(variant_pack)
        timed = [i for i, p in enumerate(self._plans)
                 if p is not None and (where is None or p.space == where)]
        rows = self._untimed_rows(where)
        if not timed:
            from ..errors import GraphNotSupportedError
            raise GraphNotSupportedError(self.name, {r.name: r.reason for r in rows.values()})
        plans = [self._plans[i] for i in timed]
        widest = max(plans, key=lambda p: p.workspace)  # type: ignore[union-attr]
        assert widest is not None
        arrays = self._arrays_for(widest, variant_pack)
        best, results = widest.pack.autotune(
            handle if handle is not None else self._get_handle(), arrays, workspace,
            [p.desc for p in plans if p is not None], warmup, repeat, budget_ms, bool(store))
        for k, i in enumerate(timed):
            rows[i] = self._timed_row(i, results[k], k == best)
        self._candidate = timed[best]
        return [rows[i] for i in sorted(rows)]

    def _row(self, i: int, **kw: Any) -> AutotuneResult:
        c: _Config = self._configs[i]
        base: Dict[str, Any] = dict(plan_index=i, name=c.tag(), engine=c.engine,
                                    knobs=dict(c.knobs), status="ok", reason="", median_ms=None,
                                    min_ms=None, runs=0, timer="", chosen=False)
        base.update(kw)
        return AutotuneResult(**base)

    def _untimed_rows(self, where: Optional[memory_space]) -> Dict[int, AutotuneResult]:
        """A row for every config that is not timed: not built (and why), or in the other
        memory than the arrays."""
        rows = {}
        for i, p in enumerate(self._plans):
            if p is None:
                why = self._failures.get(i) or self._barred(i) or "not built"
                rows[i] = self._row(i, status="not built", reason=why)
            elif where is not None and p.space != where:
                rows[i] = self._row(i, status="skipped", reason=(
                    f"runs in {p.space.name.lower()} memory; the arrays are in "
                    f"{where.name.lower()} memory"))
        return rows

    def _timed_row(self, i: int, result: Tuple[int, int, float, float, int, str],
                   chosen: bool) -> AutotuneResult:
        status, runs, median, low, timer, message = result
        if status != _C.STATUS_SUCCESS:
            return self._row(i, status="failed", reason=f"{_C.status_name(status)}: {message}")
        return self._row(i, median_ms=median, min_ms=low, runs=runs, chosen=chosen,
                         timer="device events" if timer == _C.AUTOTUNE_TIMER_EVENTS_EXT
                         else "host clock")
