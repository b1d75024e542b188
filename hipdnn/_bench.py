"""``python -m hipdnn bench``: a small fixed set of graphs timed on each loaded engine, with
NumPy as the baseline.

Cases: conv -> bias -> relu, matmul -> gelu, layernorm, softmax (reduction max, sub, exp,
reduction add, div) and scaled dot-product attention, all float32.  For each case and
engine a hipdnn.Graph is built with that engine preferred; an engine that declines is
reported with its reason.  Arrays are made once (on the device for a device engine, so
no copies are timed), outputs and workspace are allocated once, and each timed run is one
execute (followed by a device synchronize for device engines).  Every engine's result is
checked against a float64 NumPy reference with the tolerances of docs/architecture.md,
so a fast wrong answer shows as MISMATCH.  Progress goes to stderr, the table to stdout.
"""
from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, TextIO, Tuple

import numpy as np
from numpy.typing import NDArray

from .enums import memory_space, norm_forward_phase, reduction_mode
from .errors import HipdnnError
from .graph import Graph

__all__ = ["BenchCase", "CASES", "Result", "run_case", "main", "default_engines"]

F32 = np.float32
Arrays = List[NDArray[Any]]


def _erf(x: NDArray[Any]) -> NDArray[Any]:
    """erf for the NumPy baseline (NumPy has none): Abramowitz and Stegun 7.1.26, within
    1.5e-7, below float32's tolerance here."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                           + t * 1.061405429))))
    return np.asarray(s * (1.0 - poly * np.exp(-a * a)), dtype=x.dtype)


def _erf_exact(x: NDArray[Any]) -> NDArray[np.float64]:
    return np.asarray(np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)),
                      dtype=np.float64)


# ---- the NumPy side: one function per case, in float32 (timed) or float64 (reference) ----


def _conv_bias_relu(x: NDArray[Any], w: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """Cross-correlation, stride 1, padding 1, then + b and relu, in x's precision."""
    kh, kw = w.shape[2], w.shape[3]
    h, wd = x.shape[2], x.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)))
    y = np.zeros((w.shape[0], x.shape[0], h, wd), x.dtype)  # [k, n, h, w]: a GEMM a tap
    for i in range(kh):
        for j in range(kw):
            y += np.tensordot(w[:, :, i, j], xp[:, :, i:i + h, j:j + wd], axes=([1], [1]))
    return np.asarray(np.maximum(y.transpose(1, 0, 2, 3) + b, 0))


def _matmul_gelu(a: NDArray[Any], b: NDArray[Any], exact: bool = False) -> NDArray[Any]:
    c = a @ b
    t = c * c.dtype.type(1 / math.sqrt(2.0))
    return np.asarray(0.5 * c * (1.0 + (_erf_exact(t) if exact else _erf(t))))


def _layernorm(x: NDArray[Any], s: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(var + 1e-5) * s + b)


def _softmax(x: NDArray[Any]) -> NDArray[Any]:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return np.asarray(e / e.sum(axis=-1, keepdims=True))


def _sdpa(q: NDArray[Any], k: NDArray[Any], v: NDArray[Any]) -> NDArray[Any]:
    scale = 1.0 / math.sqrt(q.shape[-1])
    return np.asarray(_softmax((q @ k.swapaxes(-1, -2)) * q.dtype.type(scale)) @ v)


# ---- the hipdnn side ------------------------------------------------------------------------


def _g_conv_bias_relu(g: Graph, x: Any, w: Any, b: Any) -> None:
    g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1], name="conv"), b, name="bias"), name="relu")


def _g_matmul_gelu(g: Graph, a: Any, b: Any) -> None:
    g.gelu(g.matmul(a, b, name="matmul"), name="gelu")


def _g_layernorm(g: Graph, x: Any, s: Any, b: Any) -> None:
    outs: Any = g.layernorm(norm_forward_phase.INFERENCE, x, s, b, epsilon=1e-5, name="ln")
    g.output(outs[0])  # y (the inference phase gives no statistics)


def _g_softmax(g: Graph, x: Any) -> None:
    rows = list(x.shape[:-1]) + [1]
    m = g.reduction(x, mode=reduction_mode.MAX, name="max")
    m.set_dim(rows)
    e = g.exp(g.sub(x, m, name="shift"), name="exp")
    s = g.reduction(e, mode=reduction_mode.ADD, name="sum")
    s.set_dim(rows)
    g.output(g.div(e, s, name="normalize"))


def _g_sdpa(g: Graph, q: Any, k: Any, v: Any) -> None:
    outs: Any = g.sdpa(q, k, v, generate_stats=False, attn_scale=1.0 / math.sqrt(q.shape[-1]),
                       name="sdpa")
    g.output(outs[0])  # o (no stats asked for)


class BenchCase(NamedTuple):
    """One graph of the set: its name, a shape summary, its inputs (made from a seed and
    whether the run is quick), the NumPy function (run in float32 to time, in float64 for
    the reference), the graph, and atol = rtol for the check."""

    name: str
    shape: Callable[[bool], str]
    inputs: Callable[[np.random.Generator, bool], Arrays]
    numpy: Callable[..., NDArray[Any]]
    reference: Callable[..., NDArray[Any]]
    graph: Callable[..., None]
    tol: float


def _rand(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> NDArray[Any]:
    return (rng.standard_normal(shape) * scale).astype(F32)


CASES: List[BenchCase] = [
    BenchCase(
        "conv_bias_relu",
        lambda q: ("x [2, 8, 8, 8] * w [8, 8, 3, 3]" if q else
                   "x [8, 64, 56, 56] * w [64, 64, 3, 3]"),
        lambda r, q: ([_rand(r, 2, 8, 8, 8), _rand(r, 8, 8, 3, 3, scale=0.1), _rand(r, 1, 8, 1, 1)]
                      if q else [_rand(r, 8, 64, 56, 56), _rand(r, 64, 64, 3, 3, scale=0.05),
                                 _rand(r, 1, 64, 1, 1)]),
        _conv_bias_relu, _conv_bias_relu, _g_conv_bias_relu, 1e-5),
    BenchCase(
        "matmul_gelu",
        lambda q: "[4, 16] @ [16, 8]" if q else "[1024, 1024] @ [1024, 1024]",
        lambda r, q: ([_rand(r, 4, 16), _rand(r, 16, 8, scale=0.25)] if q else
                      [_rand(r, 1024, 1024), _rand(r, 1024, 1024, scale=1 / 32)]),
        _matmul_gelu, lambda a, b: _matmul_gelu(a, b, exact=True), _g_matmul_gelu, 1e-5),
    BenchCase(
        "layernorm",
        lambda q: "x [2, 4, 32]" if q else "x [32, 512, 1024]",
        lambda r, q: ([_rand(r, 2, 4, 32), _rand(r, 1, 1, 32), _rand(r, 1, 1, 32)] if q else
                      [_rand(r, 32, 512, 1024), _rand(r, 1, 1, 1024), _rand(r, 1, 1, 1024)]),
        _layernorm, _layernorm, _g_layernorm, 1e-4),
    BenchCase(
        "softmax",
        lambda q: "x [8, 64]" if q else "x [4096, 4096]",
        lambda r, q: [_rand(r, 8, 64)] if q else [_rand(r, 4096, 4096)],
        _softmax, _softmax, _g_softmax, 1e-5),
    BenchCase(
        "sdpa",
        lambda q: "q, k, v [1, 2, 8, 16]" if q else "q, k, v [4, 16, 512, 64]",
        lambda r, q: ([_rand(r, 1, 2, 8, 16) for _ in range(3)] if q else
                      [_rand(r, 4, 16, 512, 64) for _ in range(3)]),
        _sdpa, _sdpa, _g_sdpa, 1e-4),
]


class Result(NamedTuple):
    """One engine on one case: median ms, or why there is none; the check's verdict."""

    ms: Optional[float]
    note: str
    ok: bool


def _median_ms(fn: Callable[[], Any], reps: int) -> float:
    fn()  # warm-up: first-run work (caches, lazily made handles) is not timed
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def _check(out: NDArray[Any], ref: NDArray[Any], tol: float) -> Tuple[bool, float]:
    err = np.abs(out.astype(np.float64) - ref)
    return bool(np.all(err <= tol + tol * np.abs(ref))), float(err.max()) if err.size else 0.0


def run_case(case: BenchCase, engine: str, arrays: Arrays, ref: NDArray[Any], reps: int
             ) -> Result:
    """Builds the case's graph for `engine` and times it; declines and failures become
    the result's note."""
    from .device import DeviceArray, synchronize

    try:
        with Graph(name=case.name, preferred_engine=engine) as g:
            case.graph(g, *arrays)
    except HipdnnError as e:
        return Result(None, "declined: " + str(e).splitlines()[-1].strip(), True)
    if g.engine_name != engine:
        why = dict(g.pygraph.support_report()).get(engine) or "not chosen"
        return Result(None, f"declined: {why}", True)
    p = g.pygraph
    device = p.get_memory_space() != memory_space.HOST
    pack: Dict[Any, Any] = {}
    for t, a in zip(g.inputs, arrays):
        pack[t] = DeviceArray.from_numpy(a) if device else a
    outs: List[Any] = []
    for t in g.outputs:
        dims, strides = t.get_dim(), t.get_stride()
        out = DeviceArray.empty(dims, t.get_data_type(), strides) if device else t.empty()
        pack[t] = out
        outs.append(out)
    size = p.get_workspace_size()
    ws = (DeviceArray.empty([size], np.uint8) if device else np.empty(size, np.uint8)) \
        if size else None

    def once() -> None:
        p.execute(pack, ws)
        if device:
            synchronize()

    try:
        ms = _median_ms(once, reps)
    except HipdnnError as e:
        return Result(None, f"failed: {e}", False)
    result = outs[0].numpy() if device else outs[0]
    ok, err = _check(np.asarray(result), ref, case.tol)
    return Result(ms, f"max error {err:.1e}" if ok else f"MISMATCH: max error {err:.2e} > "
                  f"tolerance {case.tol:g}", ok)


def _cell(r: Result, base: float) -> str:
    if r.ms is None:
        return r.note.split(":")[0]
    return f"{r.ms:.3f} ({base / r.ms:.2f}x)" + ("" if r.ok else " MISMATCH")


def main(reps: int, quick: bool, engines: Sequence[str], cases: Sequence[str], seed: int,
         out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs the bench; 0 when every result is within tolerance, 1 otherwise."""
    todo = [c for c in CASES if not cases or c.name in cases]
    rng = np.random.default_rng(seed)
    rows: List[Tuple[BenchCase, float, Dict[str, Result]]] = []
    for n, case in enumerate(todo, 1):
        arrays = case.inputs(rng, quick)
        print(f"bench [{n}/{len(todo)}] {case.name} ({case.shape(quick)}):", file=err,
              flush=True)
        ref = case.reference(*[a.astype(np.float64) for a in arrays])
        base = _median_ms(lambda: case.numpy(*arrays), reps)
        print(f"  numpy: {base:.3f} ms", file=err, flush=True)
        results: Dict[str, Result] = {}
        for e in engines:
            r = run_case(case, e, arrays, ref, reps)
            results[e] = r
            timing = f"{r.ms:.3f} ms, {r.note}" if r.ms is not None else r.note
            print(f"  {e}: {timing}", file=err, flush=True)
        rows.append((case, base, results))
    head = ["case", "shape", "numpy ms"] + [f"{e} ms (x numpy)" for e in engines]
    table = [[c.name, c.shape(quick), f"{base:.3f}"] + [_cell(res[e], base) for e in engines]
             for c, base, res in rows]
    widths = [max(len(line[i]) for line in [head] + table) for i in range(len(head))]
    for line in [head, ["-" * w for w in widths]] + table:
        print("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip(), file=out)
    print(f"\nfloat32; median of {reps} run(s) after a warm-up, arrays already in each "
          "engine's memory; (Nx) is NumPy's time divided by the engine's (above 1: faster "
          "than NumPy)", file=out)
    bad = [(c.name, e, r.note) for c, _b, res in rows for e, r in res.items() if not r.ok]
    for name, e, note in bad:
        print(f"hipdnn bench: {name} on {e}: {note}", file=err)
    return 1 if bad else 0


def default_engines() -> List[str]:
    """Every loaded engine, by name."""
    from .runtime import engines
    return [e.name for e in engines()]


