"""pygraph's autotuning: every engine config the graph has, and each engine's knob values
(bounded), built and timed on the user's own arrays by the backend (``hipdnnAutotune_ext``:
outputs put back afterwards, inputs only read); the fastest becomes the plan execute()
runs and, unless ``store=False``, the plan cache's entry for the graph on this device, which
later processes' heuristics rank first (docs/engine_selection.md)."""
from __future__ import annotations

import itertools
import numbers
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Sequence, Set, Tuple

from .. import _C
from ..enums import log_level, memory_space
from ..runtime import engines
from .args import _type_name
from .base import _DESC, _HEURISTICS, _KNOB_TF32, _Config
from .plans import Plans

# Values tried per knob at most, and variants per engine before the sweep goes one knob at
# a time (the others at their defaults) instead of every combination.
_MAX_VALUES_PER_KNOB = 8
_MAX_COMBINATIONS = 32

_Knob = Tuple[int, int, int, int, int, Tuple[int, ...]]  # id, min, max, default, stride, only


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


def _knob_values(lo: int, hi: int, default: int, stride: int, only: Sequence[int]) -> List[int]:
    """The values of one knob worth timing, its default first: the values the engine lists
    when it lists them, else those on its stride; when they are many, the ends and the
    powers of two among them (tile sizes, split counts), thinned evenly to at most
    _MAX_VALUES_PER_KNOB."""
    step = max(stride, 1)
    if only:
        valid = sorted(set(only))
    elif (hi - lo) // step < _MAX_VALUES_PER_KNOB:
        valid = list(range(lo, hi + 1, step))
    else:
        top = lo + (hi - lo) // step * step
        twos = [1 << b for b in range(63) if lo <= 1 << b <= top and ((1 << b) - lo) % step == 0]
        valid = sorted({lo, top, *twos})
        if len(valid) < 4:  # no powers of two on this stride: points spread over the range
            n = (top - lo) // step
            valid = sorted({lo + (n * i // (_MAX_VALUES_PER_KNOB - 1)) * step
                            for i in range(_MAX_VALUES_PER_KNOB)})
    others = [v for v in valid if v != default]
    if len(others) >= _MAX_VALUES_PER_KNOB:
        keep = _MAX_VALUES_PER_KNOB - 1
        others = [others[(len(others) - 1) * i // (keep - 1)] for i in range(keep)]
    return [default] + others


def _variants(knobs: Sequence[_Knob]) -> List[Tuple[Tuple[int, int], ...]]:
    """An engine's knob choices to time beside its default config: every combination while
    they are few, else one knob at a time (each knob's first other value, then each one's
    second, ...: a cut-off list still varies every knob)."""
    values = [[(k[0], v) for v in _knob_values(*k[1:])] for k in knobs]
    count = 1
    for v in values:
        count *= len(v)
    if count <= _MAX_COMBINATIONS:  # each without its knobs at their defaults (first)
        combos = [tuple(c for c, d in zip(combo, values) if c != d[0])
                  for combo in itertools.product(*values)]
        return combos[1:]  # the first is every default: the engine's own config
    return [(v[j],) for j in range(1, max(map(len, values))) for v in values if j < len(v)]


def _round_robin(lists: Sequence[Sequence[Any]]) -> List[Any]:
    """Each list's first item, then each one's second, ...: no list starves another."""
    return [x[j] for j in range(max(map(len, lists), default=0)) for x in lists if j < len(x)]


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

    def _add_knob_sweep(self, max_configs: int) -> List[int]:
        """Adds each ranked engine's knob variants to the graph's list, taking the engines in
        turn, until it holds max_configs configs; returns the indices of those added."""
        names = [e.name for e in engines()]
        seen: List[str] = []
        per_engine = []
        for i, c in enumerate(list(self._configs)):
            if c.engine in seen or c.engine not in names or self._barred(i) is not None:
                continue
            seen.append(c.engine)
            # TF32 only where the user's config asks for it: never swept
            space = [k for k in self._knob_space(names.index(c.engine)) if k[0] != _KNOB_TF32]
            engine = c.desc.get(_C.ATTR_ENGINECFG_ENGINE, _DESC)[0]
            per_engine.append([(engine, tuple(sorted(choice)))
                               for choice in (_variants(space) if space else [])])
        added: List[int] = []
        for engine, choice in _round_robin(per_engine):
            if len(self._configs) >= max_configs:
                break
            before = len(self._configs)
            i = self._add_config(self._make_config(engine, choice))
            if len(self._configs) > before:
                added.append(i)
        return added

    def _drop_unbuilt(self, swept: Sequence[int]) -> Set[int]:
        """The swept configs whose plans did not build (an engine that cannot run some knob
        value here, such as a tile for another GPU's kernel): left out of the table, with
        one log line per engine."""
        failed = [i for i in swept if self._plans[i] is None]
        by_engine: Dict[str, List[int]] = {}
        for i in failed:
            by_engine.setdefault(self._configs[i].engine, []).append(i)
        for engine, idx in by_engine.items():
            first = self._configs[idx[0]].tag()
            _C.log_message(int(log_level.INFO), f"autotune: graph '{self.name}': {len(idx)} knob config(s) of "
                f"engine '{engine}' did not build and are left out of the table (first: "
                f"{first}: {self._failures.get(idx[0], 'not built')})")
        return set(failed)

    def autotune(self, variant_pack: Mapping[Any, Any], workspace: Any = None, *,
                 budget_ms: float = 1000.0, repeat: int = 10, warmup: int = 1,
                 max_configs: int = 64, store: bool = True,
                 handle: Optional[_C.Handle] = None) -> List[AutotuneResult]:
        """Times every engine config of the graph (those create_execution_plans() ranked,
        plus each engine's knob variants: the values a knob lists, else those on its
        stride, few of them where the range is wide, its ends and powers of two; every
        combination while there are at most 32, else one knob at a time), on the arrays of
        the variant pack, and keeps the fastest (by median) as the plan execute() runs.  The
        engines take turns adding variants until the graph has ``max_configs`` configs, so
        each engine's default and a few variants are timed.  Each config is built
        (build_plans(ALL)), run ``warmup`` times, then timed until ``repeat`` runs, until
        the last three agree within 2 %, or until its even share of ``budget_ms`` is spent.
        Device plans are timed with the device runtime's events, host plans with the host
        clock.  The outputs' arrays hold afterwards what they held before; inputs are only
        read.  workspace: at least the largest candidate's
        get_workspace_size_plan_at_index() bytes (None: allocated for the call).  With
        ``store`` the winner is written to the plan cache (HIPDNN_CACHE_DIR), so later
        processes building this graph on this device get it first.  Returns one
        AutotuneResult per config, in plan-index order; a knob variant whose plan does not
        build is left out (one log line per engine says how many and why)."""
        self._need(_HEURISTICS, "autotune()")
        budget_ms = float(_at_least(budget_ms, "budget_ms", False, 0.001))
        repeat = _at_least(repeat, "repeat", True, 1)
        warmup = _at_least(warmup, "warmup", True, 0)
        max_configs = _at_least(max_configs, "max_configs", True, 1)
        if handle is not None and not isinstance(handle, _C.Handle):
            raise TypeError(f"autotune: handle must be a hipdnn.Handle, got {_type_name(handle)}")
        swept = self._add_knob_sweep(max_configs)
        for i in range(len(self._configs)):
            self._build_one(i)
        left_out = self._drop_unbuilt(swept)
        where = self._arrays_memory(variant_pack)
        timed = [i for i, p in enumerate(self._plans)
                 if p is not None and (where is None or p.space == where)]
        rows = {i: r for i, r in self._untimed_rows(where).items() if i not in left_out}
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
