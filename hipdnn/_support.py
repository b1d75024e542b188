"""The operation-support matrix (``python -m hipdnn support``): op x engine x data type x
layout, computed from the engines' own support checks.

For each op, data type and layout a small representative graph is built and validated by
the backend; every loaded engine is then asked whether it runs it (one heuristics query
collects each engine's own answer, with its reason when it declines), and for each engine
that says yes its plan is built, so that a cell says "yes" only where a plan exists.  A
graph the backend itself refuses in some data type (its op rules) is "n/a" for every
engine.  Nothing is executed.
"""
from __future__ import annotations

import os
import sys
from typing import Callable, Dict, Iterable, List, NamedTuple, Optional, Sequence, TextIO, Tuple

from .enums import data_type, heur_mode, norm_forward_phase, reduction_mode, resample_mode
from .errors import HipdnnError
from .pygraph import Tensor, pygraph

__all__ = ["Case", "Cell", "CASES", "DTYPES", "matrix", "engine_columns", "format_text",
           "format_markdown", "EMULATED_HIP"]

# The data types asked about, by the names the table shows.
DTYPES: Dict[str, data_type] = {
    "fp32": data_type.FLOAT, "fp16": data_type.HALF, "bf16": data_type.BFLOAT16,
    "fp64": data_type.DOUBLE, "int8": data_type.INT8,
}
_FLOATS = ("fp32", "fp16", "bf16", "fp64")
_ALL = _FLOATS + ("int8",)
_NCHW = ("NCHW", "NHWC")

# The HIP engine's host code built as a test plugin (build/tests/emulated): the same
# plan-time support checks as the GPU builds, so its column is the HIP engine's.
EMULATED_HIP = "hip_emulated"

Builder = Callable[[pygraph, data_type, str], None]


class Case(NamedTuple):
    """One row family of the matrix: an op, the data types and layouts it is asked in, a
    one-line description of its graph, and the function that builds that graph."""

    op: str
    dtypes: Tuple[str, ...]
    layouts: Tuple[str, ...]
    graph: str
    build: Builder


class Cell(NamedTuple):
    """One engine's answer for one op, data type and layout: "yes", "no" or "n/a" (the
    backend refuses the graph itself), and why not."""

    status: str
    reason: str


# ---- layouts ---------------------------------------------------------------------------


def _strides(dims: Sequence[int], order: Sequence[int]) -> List[int]:
    """Packed strides for `dims` laid out in memory in `order` (outermost first)."""
    out, acc = [0] * len(dims), 1
    for i in reversed(order):
        out[i] = acc
        acc *= dims[i]
    return out


def _layout(dims: Sequence[int], layout: str) -> List[int]:
    """Strides of a tensor in a named layout: NCHW (packed), NHWC (channels last), for
    attention BHSD (packed) and BSHD (heads inside sequence), for 3-D and matrices
    "packed" and "transposed" (the last two dims swapped in memory)."""
    n = len(dims)
    if layout in ("NCHW", "BHSD", "packed"):
        return _strides(dims, range(n))
    if layout == "NHWC":
        return _strides(dims, [0] + list(range(2, n)) + [1])
    if layout == "BSHD":
        return _strides(dims, [0, 2, 1, 3])
    if layout == "transposed":
        return _strides(dims, list(range(n - 2)) + [n - 1, n - 2])
    raise ValueError(f"unknown layout {layout!r}")


def _t(g: pygraph, name: str, dims: Sequence[int], layout: str,
       dtype: Optional[data_type] = None) -> Tensor:
    return g.tensor(name=name, dim=list(dims), stride=_layout(dims, layout),
                    data_type=dtype)


def _out(*tensors: Optional[Tensor]) -> None:
    for t in tensors:
        if t is not None:
            t.set_output(True)


def _per_channel(g: pygraph, name: str, c: int, rank: int = 4) -> Tensor:
    """A [1, C, 1, ...] float32 tensor (scales, statistics)."""
    dims = [1, c] + [1] * (rank - 2)
    return g.tensor(name=name, dim=dims, stride=_layout(dims, "NCHW"),
                    data_type=data_type.FLOAT)


# ---- the representative graphs -----------------------------------------------------------

_X4 = [2, 8, 6, 6]


def _conv_fprop(g: pygraph, dt: data_type, layout: str) -> None:
    x, w = _t(g, "x", _X4, layout), _t(g, "w", [4, 8, 3, 3], layout)
    if dt == data_type.INT8:  # cuDNN's int8 convolution: INT32 compute, INT32 output
        y = g.conv_fprop(x, w, padding=[1, 1], compute_data_type=data_type.INT32, name="conv")
        y.set_data_type(data_type.INT32)
    else:
        y = g.conv_fprop(x, w, padding=[1, 1], name="conv")
    _out(y)


def _conv_dgrad(g: pygraph, dt: data_type, layout: str) -> None:
    dy, w = _t(g, "dy", [2, 4, 6, 6], layout), _t(g, "w", [4, 8, 3, 3], layout)
    dx = g.conv_dgrad(dy, w, padding=[1, 1], name="dgrad")
    dx.set_dim(_X4).set_stride(_layout(_X4, layout))
    _out(dx)


def _conv_wgrad(g: pygraph, dt: data_type, layout: str) -> None:
    x, dy = _t(g, "x", _X4, layout), _t(g, "dy", [2, 4, 6, 6], layout)
    dw = g.conv_wgrad(x, dy, padding=[1, 1], name="wgrad")
    dw.set_dim([4, 8, 3, 3]).set_stride(_layout([4, 8, 3, 3], layout))
    _out(dw)


def _matmul(g: pygraph, dt: data_type, layout: str) -> None:
    a, b = _t(g, "a", [2, 8, 16], "packed"), _t(g, "b", [2, 16, 4], layout)
    if dt == data_type.INT8:
        c = g.matmul(a, b, compute_data_type=data_type.INT32, name="mm")
        c.set_data_type(data_type.INT32)
    else:
        c = g.matmul(a, b, name="mm")
    _out(c)


def _add(g: pygraph, dt: data_type, layout: str) -> None:
    x = _t(g, "x", _X4, layout)
    _out(g.add(x, _t(g, "b", [1, 8, 1, 1], "NCHW"), name="add"))


def _relu(g: pygraph, dt: data_type, layout: str) -> None:
    _out(g.relu(_t(g, "x", _X4, layout), name="relu"))


def _chain(g: pygraph, dt: data_type, layout: str) -> None:
    x, s = _t(g, "x", _X4, layout), _t(g, "s", [1, 8, 1, 1], "NCHW")
    _out(g.gelu(g.add(g.mul(x, s, name="scale"), x, name="residual"), name="gelu"))


def _batchnorm_inference(g: pygraph, dt: data_type, layout: str) -> None:
    x = _t(g, "x", _X4, layout)
    mean, inv_var, scale, bias = (_per_channel(g, n, 8)
                                  for n in ("mean", "inv_var", "scale", "bias"))
    _out(g.batchnorm_inference(x, mean, inv_var, scale, bias, name="bn"))


def _batchnorm(g: pygraph, dt: data_type, layout: str) -> None:
    x = _t(g, "x", _X4, layout)
    y, mean, inv, _rm, _rv = g.batchnorm(x, _per_channel(g, "scale", 8),
                                         _per_channel(g, "bias", 8), epsilon=1e-5,
                                         name="bn")
    _out(y, mean, inv)


def _batchnorm_backward(g: pygraph, dt: data_type, layout: str) -> None:
    x, dy = _t(g, "x", _X4, layout), _t(g, "dy", _X4, layout)
    _out(*g.batchnorm_backward(dy, x, _per_channel(g, "scale", 8), _per_channel(g, "mean", 8),
                               _per_channel(g, "inv_var", 8), name="bn_bwd"))


def _norm_3d(kind: str) -> Builder:
    def build(g: pygraph, dt: data_type, layout: str) -> None:
        x = _t(g, "x", [2, 6, 16], layout)
        scale = g.tensor(name="scale", dim=[1, 1, 16], stride=[16, 16, 1],
                         data_type=data_type.FLOAT)
        bias = g.tensor(name="bias", dim=[1, 1, 16], stride=[16, 16, 1],
                        data_type=data_type.FLOAT)
        phase = norm_forward_phase.TRAINING
        if kind == "layernorm":
            outs = g.layernorm(phase, x, scale, bias, epsilon=1e-5, name="ln")
        else:
            outs = g.rmsnorm(phase, x, scale, epsilon=1e-5, name="rms")
        _out(*outs)
    return build


def _layernorm_backward(g: pygraph, dt: data_type, layout: str) -> None:
    x, dy = _t(g, "x", [2, 6, 16], layout), _t(g, "dy", [2, 6, 16], layout)
    scale = g.tensor(name="scale", dim=[1, 1, 16], stride=[16, 16, 1], data_type=data_type.FLOAT)
    stats = [g.tensor(name=n, dim=[2, 6, 1], stride=[6, 1, 1], data_type=data_type.FLOAT)
             for n in ("mean", "inv_var")]
    _out(*g.layernorm_backward(dy, x, scale, stats[0], stats[1], name="ln_bwd"))


def _instancenorm(g: pygraph, dt: data_type, layout: str) -> None:
    x = _t(g, "x", _X4, layout)
    _out(*g.instancenorm(norm_forward_phase.TRAINING, x, _per_channel(g, "scale", 8),
                         _per_channel(g, "bias", 8), epsilon=1e-5, name="in"))


def _genstats(g: pygraph, dt: data_type, layout: str) -> None:
    _out(*g.genstats(_t(g, "x", _X4, layout), name="stats"))


def _reduction(mode: reduction_mode) -> Builder:
    def build(g: pygraph, dt: data_type, layout: str) -> None:
        y = g.reduction(_t(g, "x", [2, 6, 16], layout), mode=mode, name="red")
        y.set_dim([2, 6, 1])
        _out(y)
    return build


def _pool(mode: resample_mode) -> Builder:
    def build(g: pygraph, dt: data_type, layout: str) -> None:
        y, _idx = g.resample(_t(g, "x", _X4, layout), mode, window=[2, 2], stride=[2, 2],
                             name="pool")
        _out(y)
    return build


def _maxpool_backward(g: pygraph, dt: data_type, layout: str) -> None:
    x, dy = _t(g, "x", _X4, layout), _t(g, "dy", [2, 8, 3, 3], layout)
    _out(g.resample_backward(dy, resample_mode.MAXPOOL, window=[2, 2], stride=[2, 2],
                             input=x, name="pool_bwd"))


def _reshape(g: pygraph, dt: data_type, layout: str) -> None:
    from .enums import reshape_mode
    y = g.reshape(_t(g, "x", _X4, layout), name="reshape", reshape_mode=reshape_mode.LOGICAL)
    y.set_dim([2, 8, 36])
    _out(y)


def _slice(g: pygraph, dt: data_type, layout: str) -> None:
    _out(g.slice(_t(g, "x", _X4, layout),
                 [slice(None), slice(2, 6), slice(None), slice(1, 5)], name="slice"))


def _concatenate(g: pygraph, dt: data_type, layout: str) -> None:
    a, b = _t(g, "a", _X4, layout), _t(g, "b", [2, 4, 6, 6], layout)
    _out(g.concatenate([a, b], axis=1, name="concat"))


_Q = [2, 4, 8, 16]


def _sdpa(g: pygraph, dt: data_type, layout: str) -> None:
    q, k, v = (_t(g, n, _Q, layout) for n in "qkv")
    _out(*g.sdpa(q, k, v, generate_stats=True, attn_scale=0.25, use_causal_mask=True,
                 name="attn"))


def _sdpa_backward(g: pygraph, dt: data_type, layout: str) -> None:
    q, k, v, o, do = (_t(g, n, _Q, layout) for n in ("q", "k", "v", "o", "dO"))
    stats = g.tensor(name="stats", dim=[2, 4, 8, 1], stride=[32, 8, 1, 1],
                     data_type=data_type.FLOAT)
    _out(*g.sdpa_backward(q, k, v, o, do, stats, attn_scale=0.25, use_causal_mask=True,
                          name="attn_bwd"))


CASES: List[Case] = [
    Case("conv_fprop", _ALL, _NCHW, "x [2, 8, 6, 6] * w [4, 8, 3, 3], padding 1 (int8: "
         "int32 compute and output)", _conv_fprop),
    Case("conv_dgrad", _FLOATS, _NCHW, "dy [2, 4, 6, 6], w [4, 8, 3, 3] -> dx [2, 8, 6, 6]",
         _conv_dgrad),
    Case("conv_wgrad", _FLOATS, _NCHW, "x [2, 8, 6, 6], dy [2, 4, 6, 6] -> dw [4, 8, 3, 3]",
         _conv_wgrad),
    Case("matmul", _ALL, ("packed", "transposed"), "a [2, 8, 16] @ b [2, 16, 4]; the layout "
         "is b's (int8: int32 compute and output)", _matmul),
    Case("pointwise ADD", _ALL, _NCHW, "x [2, 8, 6, 6] + b [1, 8, 1, 1] (broadcast)", _add),
    Case("pointwise RELU_FWD", _ALL, _NCHW, "relu(x [2, 8, 6, 6])", _relu),
    Case("pointwise chain", _FLOATS, _NCHW, "gelu(x * s + x): MUL, ADD, GELU_FWD in one graph",
         _chain),
    Case("batchnorm_inference", _FLOATS, _NCHW, "x [2, 8, 6, 6], float32 [1, 8, 1, 1] "
         "statistics, scale and bias", _batchnorm_inference),
    Case("batchnorm (training)", _FLOATS, _NCHW, "norm_forward BATCH_NORM training on x "
         "[2, 8, 6, 6]: y, mean, inv_variance", _batchnorm),
    Case("batchnorm_backward", _FLOATS, _NCHW, "dx, dscale, dbias of x [2, 8, 6, 6]",
         _batchnorm_backward),
    Case("layernorm (training)", _FLOATS, ("packed", "transposed"), "x [2, 6, 16] over its "
         "last dim: y, mean, inv_variance", _norm_3d("layernorm")),
    Case("rmsnorm (training)", _FLOATS, ("packed", "transposed"), "x [2, 6, 16] over its "
         "last dim: y, inv_variance", _norm_3d("rmsnorm")),
    Case("layernorm_backward", _FLOATS, ("packed", "transposed"), "dx, dscale, dbias of x "
         "[2, 6, 16]", _layernorm_backward),
    Case("instancenorm (training)", _FLOATS, _NCHW, "x [2, 8, 6, 6] over H, W",
         _instancenorm),
    Case("genstats", _FLOATS, _NCHW, "per-channel sum and sum of squares of x [2, 8, 6, 6]",
         _genstats),
    Case("reduction ADD", _FLOATS, ("packed", "transposed"), "x [2, 6, 16] -> [2, 6, 1]",
         _reduction(reduction_mode.ADD)),
    Case("reduction MAX", _FLOATS, ("packed", "transposed"), "x [2, 6, 16] -> [2, 6, 1]",
         _reduction(reduction_mode.MAX)),
    Case("resample MAXPOOL", _ALL, _NCHW, "x [2, 8, 6, 6], window 2, stride 2",
         _pool(resample_mode.MAXPOOL)),
    Case("resample AVGPOOL", _FLOATS, _NCHW, "x [2, 8, 6, 6], window 2, stride 2 (padding "
         "included)", _pool(resample_mode.AVGPOOL_INCLUDE_PADDING)),
    Case("resample_backward MAXPOOL", _FLOATS, _NCHW, "dx of MAXPOOL from dy [2, 8, 3, 3] "
         "and x", _maxpool_backward),
    Case("reshape (logical)", _ALL, _NCHW, "x [2, 8, 6, 6] -> [2, 8, 36]", _reshape),
    Case("slice", _ALL, _NCHW, "x [2, 8, 6, 6][:, 2:6, :, 1:5]", _slice),
    Case("concatenate", _ALL, _NCHW, "[2, 8, 6, 6] and [2, 4, 6, 6] along C", _concatenate),
    Case("sdpa", _FLOATS, ("BHSD", "BSHD"), "q, k, v [2, 4, 8, 16], causal, with stats",
         _sdpa),
    Case("sdpa_backward", _FLOATS, ("BHSD", "BSHD"), "dq, dk, dv of the same", _sdpa_backward),
]


# ---- asking the engines ---------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def ask(case: Case, dtype: str, layout: str, engines: Sequence[str]) -> Dict[str, Cell]:
    """Each engine's answer for one op, data type and layout."""
    dt = DTYPES[dtype]
    compute = data_type.DOUBLE if dt == data_type.DOUBLE else data_type.FLOAT
    g = pygraph(io_data_type=dt, intermediate_data_type=compute, compute_data_type=compute,
                name=f"{case.op} {dtype} {layout}")
    try:
        case.build(g, dt, layout)
        g.validate()
    except (HipdnnError, ValueError, TypeError) as e:
        refused = _one_line(f"the backend refuses the graph: {e}")
        return {name: Cell("n/a", refused) for name in engines}
    g.create_execution_plans([heur_mode.A, heur_mode.FALLBACK])
    verdict: Dict[str, Optional[str]] = dict(g.support_report())
    out: Dict[str, Cell] = {}
    for name in engines:
        why: Optional[str] = verdict.get(name, "the engine was not asked (not in the support "
                                                "report)")
        if why is not None:
            out[name] = Cell("no", _one_line(why))
            continue
        # It says yes: its plan must build too.
        index = next(i for i in range(g.get_execution_plan_count())
                     if g.get_plan_name_at_index(i) == name)
        try:
            g.build_plan_at_index(index)
            out[name] = Cell("yes", "")
        except HipdnnError as e:
            out[name] = Cell("no", _one_line(f"accepted, but its plan did not build: {e}"))
    return out


def matrix(engines: Sequence[str], cases: Iterable[Case] = CASES,
           progress: Optional[TextIO] = None
           ) -> List[Tuple[Case, str, Dict[str, Dict[str, Cell]]]]:
    """[(case, layout, {dtype: {engine: cell}})] for every case and layout."""
    rows = []
    for case in cases:
        for layout in case.layouts:
            if progress is not None:
                print(f"support: {case.op} ({layout})", file=progress, flush=True)
            rows.append((case, layout, {dt: ask(case, dt, layout, engines)
                                        for dt in case.dtypes}))
    return rows


def engine_columns(engines: Sequence[str]) -> Dict[str, str]:
    """{engine: column title}: the emulated HIP engine is the HIP engine's column where
    the real one is not loaded."""
    return {e: "hip" if e == EMULATED_HIP and "hip" not in engines else e for e in engines}


# ---- tables ------------------------------------------------------------------------------


def _accepted(cells: Dict[str, Dict[str, Cell]], engine: str, dtypes: Sequence[str]) -> str:
    yes = [dt for dt in dtypes if cells[dt][engine].status == "yes"]
    return " ".join(yes) if yes else "none"


def format_text(rows: Sequence[Tuple[Case, str, Dict[str, Dict[str, Cell]]]],
                engines: Sequence[str], why: bool = False) -> str:
    """A plain table: per op and layout, each engine's accepted data types; with `why`,
    then every declined combination and its reason."""
    titles = engine_columns(engines)
    head = ["op", "layout", "asked"] + [titles[e] for e in engines]
    table = [[c.op, layout, " ".join(c.dtypes)] + [_accepted(cells, e, c.dtypes)
                                                   for e in engines]
             for c, layout, cells in rows]
    widths = [max(len(r[i]) for r in [head] + table) for i in range(len(head))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in [head] + table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if why:
        lines.append("")
        lines.append("declined (op, layout, data type, engine: reason):")
        for c, layout, cells in rows:
            for dt in c.dtypes:
                for e in engines:
                    cell = cells[dt][e]
                    if cell.status != "yes":
                        lines.append(f"  {c.op}, {layout}, {dt}, {titles[e]}: [{cell.status}] "
                                     f"{cell.reason}")
    return "\n".join(lines) + "\n"


MARKDOWN_COMMAND = ("python3 -m hipdnn support --markdown "
                    "--plugin hipdnn/lib/hipdnn_plugins/engines/libhipdnn_reference_cpu.so "
                    "--plugin build/tests/emulated/libhip_emulated.so -o docs/support_matrix.md")


def format_markdown(rows: Sequence[Tuple[Case, str, Dict[str, Dict[str, Cell]]]],
                    engines: Sequence[str]) -> str:
    """docs/support_matrix.md: what the matrix is, how it is made, the table and each
    op's graph."""
    titles = engine_columns(engines)
    emulated = EMULATED_HIP in engines and titles[EMULATED_HIP] == "hip"
    out = [
        "# Operation support matrix",
        "",
        "Which engine runs which operation, in which data type and layout. Generated by "
        "`python -m hipdnn support --markdown` from the engines' own support checks; do not "
        "edit it by hand. `tests/test_support_matrix.py` regenerates it and fails, with the "
        "difference, when this file is stale; refresh it from the checkout's root, after "
        "`make build`, with",
        "",
        f"`{MARKDOWN_COMMAND}`",
        "",
        "For each operation, data type and layout below, a small graph of that operation "
        "(its shapes are listed under the table) is built and validated by the backend; "
        "each engine is then asked, through its plugin's own support check, whether it runs "
        "the graph, and the plan of each engine that says yes is built. A cell lists the "
        "data types for which the engine accepted the graph and built its plan; `none` "
        "means it declined every data type asked (the \"asked\" column). "
        "`python -m hipdnn support --why` prints the engines' reasons for each refusal. "
        "fp64 graphs compute in fp64, the others in fp32; the int8 convolution and matmul "
        "accumulate in int32 as cuDNN's do.",
        "",
    ]
    if emulated:
        out += [
            "The `hip` column is the HIP engine (`plugins/hip`) as its plan-time host code "
            "answers: it was computed with the test plugin `hip_emulated` "
            "(`build/tests/emulated/libhip_emulated.so`), which is that host code compiled "
            "for the CPU, so the file can be made on a machine without a GPU. The GPU "
            "builds (`libhipdnn_hip_cuda.so`, `libhipdnn_hip_rocm.so`) run the same support "
            "checks.",
            "",
        ]
    out.append("| operation | layout | asked | " + " | ".join(titles[e] for e in engines) + " |")
    out.append("| --- | --- | --- | " + " | ".join("---" for _ in engines) + " |")
    for c, layout, cells in rows:
        out.append(f"| {c.op} | {layout} | {' '.join(c.dtypes)} | " +
                   " | ".join(_accepted(cells, e, c.dtypes) for e in engines) + " |")
    out += [
        "",
        "Layouts: NCHW is packed, NHWC channels-last strides; BHSD is packed attention "
        "tensors, BSHD the heads inside the sequence; for the 3-D operations and matmul's "
        "b, `transposed` swaps the last two dims in memory.",
        "",
        "Where several engines run a graph on a GPU, the default ranking puts first the one "
        "measured fastest on the graph's class (on an H200: `cudnn` for convolutions and "
        "attention, `blaslt` for 16-bit and fp32 matmuls, `hip` for decode-sized matmuls, "
        "exact fp32 convolutions and the memory-bound operations): the measured shares "
        "are in [engine_selection.md](engine_selection.md#the-measured-shares).",
        "",
        "## The graphs",
        "",
        "| operation | graph |",
        "| --- | --- |",
    ]
    out += [f"| {c.op} | {c.graph} |" for c in CASES if any(c is r[0] for r in rows)]
    return "\n".join(out) + "\n"


def loaded_engines() -> List[str]:
    """The names of the loaded engines, in the registry's order (sorted by name)."""
    from .runtime import engines
    return [e.name for e in engines()]


def absolute_plugin_paths(paths: Sequence[str]) -> List[str]:
    """Plugin paths given on the command line, made absolute against the current folder
    (the backend would resolve relative ones against its own); each must exist."""
    out = []
    for p in paths:
        full = os.path.abspath(p)
        if not os.path.exists(full):
            raise FileNotFoundError(f"plugin path '{p}' does not exist ({full})")
        out.append(full)
    return out


def main(args: "object", out: TextIO = sys.stdout) -> int:
    """``python -m hipdnn support``: see hipdnn/__main__.py for the options."""
    engines = loaded_engines()
    if not engines:
        from .runtime import skipped_engine_plugins
        print("hipdnn support: no engine loaded" + "".join(
            f"\n  {p}: {r}" for p, r in skipped_engine_plugins()), file=sys.stderr)
        return 1
    rows = matrix(engines, progress=sys.stderr if getattr(args, "progress", False) else None)
    text = format_markdown(rows, engines) if getattr(args, "markdown", False) else \
        format_text(rows, engines, why=bool(getattr(args, "why", False)))
    path: Optional[str] = getattr(args, "output", None)
    if path:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        out.write(text)
    return 0
