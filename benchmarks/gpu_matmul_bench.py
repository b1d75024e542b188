"""GPU matmul and convolution benchmark: hipdnn's matmul (and matmul + bias + gelu, fused)
and forward convolution + bias + relu (fused) against PyTorch on the same tensors, in one
run.

    python3 benchmarks/gpu_matmul_bench.py [--samples 15] [--repeat 10] [--cases a,b]
                                           [--engines blaslt,...] [--markdown FILE]
                                           [--commit C] [--date D]

Anchors: torch.matmul (cuBLAS), matmul + bias + gelu in eager mode and under torch.compile
(its GEMM with a fused or separate epilogue).  hipdnn's rows for each case: the hip engine's
own kernels first (the row RESULTS.md's standing takes), then the engine the default
ranking chooses, then, with --engines, each named engine preferred in turn (blaslt:
cuBLASLt through hipdnn; cudnn: cuDNN's graph API).  F.conv2d + bias + relu on channels-last fp16
with cudnn.benchmark (cuDNN), ResNet-50's layer shapes at N = 64, and two of those layers'
data and weight gradients against cuDNN's (torch.nn.grad); exact fp32 (BERT-base's
products, two ResNet-50 layers NCHW at N = 16) against cuBLAS's SGEMM and cuDNN with TF32
off (checked to 1e-5, which TF32 would fail), then the same fp32 cases read as TF32:
PyTorch with torch.backends.cuda.matmul.allow_tf32 / cudnn.allow_tf32 = True and hipdnn's
hip engine with its tf32 knob (a matmul's b stored [N, K], k contiguous as nn.Linear's
weight, brought by TMA, and [K, N], copied transposed; a convolution's x gathered, 16
bytes at a time NHWC, an element at a time NCHW; checked to TF32_TOL), each as a case of
its own named <case>_tf32, so that its ratios are against PyTorch's TF32 time.  Each
implementation's output
is poisoned with NaN, checked against a float64 reference computed by PyTorch from the
same (rounded) inputs, and only then timed: the median of CUDA-event timings of --repeat
back-to-back runs per sample, after warm-up.  Inputs are random normal (never zeros),
scaled by 1/sqrt(K) so that products stay near 1.  TFLOP/s counts 2 M N K a product.

The table is markdown.  --markdown FILE also writes the run as a history entry
(benchmarks/results.py: the device, date and commit, from `git rev-parse --short HEAD` or
--commit, this run's standing in RESULTS.md's format, then the whole table), which
`python3 benchmarks/results.py add FILE` files in benchmarks/history/ as the next run M and
merges into RESULTS.md's standing case by case.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import math
import os
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs PyTorch
    torch = None

import hipdnn
import results as bench_results  # benchmarks/results.py: the table's text, the history entry
from gpu_bench_core import EngineLog, cuda_time_ms, engine_rows, first_run

dt = hipdnn.data_type

# name -> (batch, M, N, K, epilogue): the rows (issue 24)
CASES: Dict[str, Tuple[int, int, int, int, str]] = {
    "matmul_bf16_8192x4096x4096": (1, 8192, 4096, 4096, ""),
    "matmul_bf16_4096^3": (1, 4096, 4096, 4096, ""),
    "matmul_bf16_16x4096x4096": (1, 16, 4096, 4096, ""),
    "matmul_bias_gelu_bf16_4096^3": (1, 4096, 4096, 4096, "bias_gelu"),
    "matmul_fp16_batched_8x1024x1024x1024": (8, 1024, 1024, 1024, ""),
    # exact fp32 (BERT-base's products at batch 8 x 128 tokens), against cuBLAS's SGEMM with
    # TF32 off
    "matmul_fp32_1024x768x768": (1, 1024, 768, 768, ""),
    "matmul_fp32_1024x3072x768": (1, 1024, 3072, 768, ""),
    "matmul_fp32_1024x768x3072": (1, 1024, 768, 3072, ""),
    "matmul_bias_gelu_fp32_1024x3072x768": (1, 1024, 3072, 768, "bias_gelu"),
}


# name -> (N, C, H, K, R, stride, pad): ResNet-50 layers, fp16 NHWC, conv + bias + relu;
# "fp32" ones fp32 NCHW (as hipdnn-ep gives ONNX's convolutions), TF32 off
CONV_CASES: Dict[str, Tuple[int, int, int, int, int, int, int]] = {
    "conv_r50_64x56x56_k64_3x3": (64, 64, 56, 64, 3, 1, 1),
    "conv_r50_256x56x56_k64_1x1": (64, 256, 56, 64, 1, 1, 0),
    "conv_r50_128x28x28_k128_3x3": (64, 128, 28, 128, 3, 1, 1),
    "conv_r50_256x14x14_k256_3x3": (64, 256, 14, 256, 3, 1, 1),
    "conv_r50_512x7x7_k512_3x3": (64, 512, 7, 512, 3, 1, 1),
    "conv_fp32_nchw_r50_256x14x14_k256_3x3": (16, 256, 14, 256, 3, 1, 1),
    "conv_fp32_nchw_r50_64x56x56_k64_3x3": (16, 64, 56, 64, 3, 1, 1),
    "conv_fp32_nhwc_r50_256x14x14_k256_3x3": (16, 256, 14, 256, 3, 1, 1),
}


def _workspace(g):
    """The plan's workspace, allocated once as a cuDNN-frontend user does (None: none)."""
    size = g.get_workspace_size()
    return torch.empty((size,), dtype=torch.uint8, device="cuda") if size else None


def _runner(g, pack):
    """Runs g's plan on pack, on PyTorch's stream, with a workspace allocated once."""
    handle = hipdnn.Handle()
    handle.set_stream(torch.cuda.current_stream())
    ws = _workspace(g)

    def run():
        g.execute(pack, ws, handle=handle)
    return run


def _row_adder(name, ref, tol, flops, samples, repeat):
    """A case's rows, and add(impl, fn, get, note="") appending one checked, timed row."""
    rows = []

    def add(impl, fn, get, note=""):
        rows.append(_timed_row(name, impl, fn, get, ref, tol, flops, samples, repeat, note))
    return rows, add


def _timed_row(name, impl, fn, get, ref, tol, flops, samples, repeat, note=""):
    """One table row: fn run once and its output (get()) checked, then timed."""
    fn()
    torch.cuda.synchronize()
    why = _check(get(), ref, tol)
    if why:
        return (name, impl, None, None, f"WRONG: {why}")
    ms = cuda_time_ms(fn, samples, repeat)
    return (name, impl, ms, flops / (ms * 1e-3) / 1e12, note)


def _conv_inputs(n, c, hw, k, r, dtype=None, cl=None):
    """x [n, c, hw, hw] and w [k, c, r, r], fp16 channels-last (or dtype, memory format
    cl), random normal (w scaled by 1 / sqrt(its fan-in)); and the generator, for more."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    dtype, cl = dtype or torch.float16, cl or torch.channels_last
    x = torch.randn((n, c, hw, hw), generator=gen, device="cuda").to(dtype).to(memory_format=cl)
    w = (torch.randn((k, c, r, r), generator=gen, device="cuda") / math.sqrt(c * r * r)).to(dtype)
    return x, w.to(memory_format=cl), gen


def run_conv_case(name, samples, repeat):
    n, c, hw, k, r, stride, pad = CONV_CASES[name]
    fp32 = "fp32" in name
    dtype = torch.float32 if fp32 else torch.float16
    cl = torch.contiguous_format if "nchw" in name else torch.channels_last
    x, w, gen = _conv_inputs(n, c, hw, k, r, dtype, cl)
    bias = torch.randn((k,), generator=gen, device="cuda").to(dtype)
    f = torch.nn.functional
    ref = f.relu(f.conv2d(x.double(), w.double(), bias.double(), stride, pad))
    out_hw = ref.shape[2]
    flops = 2.0 * n * k * out_hw * out_hw * c * r * r
    rows, add = _row_adder(name, ref, FP32_TOL if fp32 else 1e-2, flops, samples, repeat)
    torch.backends.cudnn.benchmark = True

    holder = {}
    add("torch eager (cuDNN)",
        lambda: holder.__setitem__("y", f.relu(f.conv2d(x, w, bias, stride, pad))),
        lambda: holder["y"])
    plan = engine_rows(ENGINES)
    plan[1:1] = [("hip", f"tile 128 x {bn} forced") for bn in FORCED_TILES]
    for engine, note in plan:
        out = torch.full(ref.shape, float("nan"), dtype=dtype, device="cuda").to(memory_format=cl)
        with forced_tile(int(note.split()[3]) if note.startswith("tile") else None):
            _hipdnn_conv_row(name, x, w, bias, out, k, stride, pad, rows, add, note, engine)
    if fp32:  # read as TF32: cuDNN's with cudnn.allow_tf32, hipdnn's by its tf32 knob
        rows_tf32, add = _row_adder(name + TF32_CASE, ref, TF32_TOL, flops, samples, repeat)
        torch.backends.cudnn.allow_tf32 = True
        try:
            add("torch eager (cuDNN, TF32)",
                lambda: holder.__setitem__("t", f.relu(f.conv2d(x, w, bias, stride, pad))),
                lambda: holder["t"], TORCH_TF32["conv"])
        finally:
            torch.backends.cudnn.allow_tf32 = False
        out = torch.full(ref.shape, float("nan"), dtype=dtype, device="cuda").to(memory_format=cl)
        _hipdnn_conv_row(name + TF32_CASE, x, w, bias, out, k, stride, pad, rows_tf32, add,
                         TF32_HIPDNN, "hip", {KNOB_TF32: 1})
        rows += rows_tf32
    return rows


# name -> (kind, conv case): the same layers' data and weight gradients, fp16 NHWC, no
# epilogue; anchors torch.nn.grad.conv2d_input / conv2d_weight (cuDNN's backward kernels)
GRAD_CASES: Dict[str, Tuple[str, str]] = {
    "dgrad_r50_64x56x56_k64_3x3": ("dgrad", "conv_r50_64x56x56_k64_3x3"),
    "dgrad_r50_256x14x14_k256_3x3": ("dgrad", "conv_r50_256x14x14_k256_3x3"),
    "wgrad_r50_64x56x56_k64_3x3": ("wgrad", "conv_r50_64x56x56_k64_3x3"),
    "wgrad_r50_256x14x14_k256_3x3": ("wgrad", "conv_r50_256x14x14_k256_3x3"),
}


def run_grad_case(name, samples, repeat):
    kind, layer = GRAD_CASES[name]
    n, c, hw, k, r, stride, pad = CONV_CASES[layer]
    cl = torch.channels_last
    x, w, gen = _conv_inputs(n, c, hw, k, r)
    out_hw = (hw + 2 * pad - r) // stride + 1
    dy = (torch.randn((n, k, out_hw, out_hw), generator=gen, device="cuda")
          / math.sqrt(n * out_hw * out_hw if kind == "wgrad" else 1)).half().to(memory_format=cl)
    grad = torch.nn.grad
    if kind == "dgrad":
        ref = grad.conv2d_input(x.shape, w.double(), dy.double(), stride, pad)
        torch_fn = lambda: grad.conv2d_input(x.shape, w, dy, stride, pad)  # noqa: E731
    else:
        ref = grad.conv2d_weight(x.double(), w.shape, dy.double(), stride, pad)
        torch_fn = lambda: grad.conv2d_weight(x, w.shape, dy, stride, pad)  # noqa: E731
    flops = 2.0 * n * k * out_hw * out_hw * c * r * r
    rows, add = _row_adder(name, ref, 1e-2, flops, samples, repeat)
    torch.backends.cudnn.benchmark = True

    holder = {}
    add("torch eager (cuDNN)", lambda: holder.__setitem__("y", torch_fn()), lambda: holder["y"])
    for engine, note in engine_rows(ENGINES):
        out = torch.full(ref.shape, float("nan"), dtype=torch.float16,
                         device="cuda").to(memory_format=cl)
        try:
            g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                               compute_data_type=dt.FLOAT, name=kind)
            if engine:
                g.set_preferred_engine(engine)
            tdy = g.tensor_like(dy, name="dy")
            if kind == "dgrad":
                tw = g.tensor_like(w, name="w")
                t = g.conv_dgrad(loss=tdy, filter=tw, padding=[pad, pad],
                                 stride=[stride, stride], name=kind)
                pack = {tdy: dy, tw: w}
            else:
                tx = g.tensor_like(x, name="x")
                t = g.conv_wgrad(image=tx, loss=tdy, padding=[pad, pad],
                                 stride=[stride, stride], name=kind)
                pack = {tdy: dy, tx: x}
            t.set_dim(list(ref.shape)).set_output(True).set_data_type(dt.HALF)
            t.set_stride(list(out.stride()))
            with EngineLog():
                g.build([hipdnn.heur_mode.A])
            pack[t] = out
            run = _runner(g, pack)
            kernel = first_run(run)
            add(f"hipdnn {g.get_engine_name(0)}, {kernel}", run, lambda out=out: out, note)
        except (hipdnn.HipdnnError, ValueError) as e:
            rows.append((name, f"hipdnn {engine or ''}".strip(), None, None, f"failed: {e}"))
    return rows


# fp32 cases' relative Frobenius error: exact fp32 lands near 1e-7; TF32 (near 3e-4) fails
FP32_TOL = 1e-5
# ... read as TF32 (10 mantissa bits): near 3e-4 (truncated inputs somewhat more)
TF32_TOL = 3e-3
KNOB_TF32 = 20000  # the hip engine's tf32 knob (docs/gpu.md)
TF32_HIPDNN = "knob tf32 = 1"
TF32_CASE = "_tf32"  # a case read as TF32 is a case of its own, with its own torch anchor
TORCH_TF32 = {"matmul": "torch.backends.cuda.matmul.allow_tf32 = True",
              "conv": "torch.backends.cudnn.allow_tf32 = True"}

FORCED_TILES: List[int] = []  # --tiles: the sm_90 kernel's tile widths to time besides its choice


@contextlib.contextmanager
def forced_tile(bn):
    """HIPDNN_HIP_WGMMA_BN=bn while a plan is built (the sm_90 kernel's 128 x bn tile)."""
    if bn is None:
        yield
        return
    os.environ["HIPDNN_HIP_WGMMA_BN"] = str(bn)
    try:
        yield
    finally:
        del os.environ["HIPDNN_HIP_WGMMA_BN"]


def _build(g, knobs=None):
    """g's plan: the heuristics', or the hip engine's config with these knobs."""
    with EngineLog():
        if not knobs:
            g.build([hipdnn.heur_mode.A])
            return
        g.validate()
        g.build_operation_graph()
        g.create_execution_plan([e.name for e in hipdnn.engines()].index("hip"), knobs)
        g.build_plans()


def _hipdnn_conv_row(name, x, w, bias, out, k, stride, pad, rows, add, note, engine=None,
                     knobs=None):
    try:
        io = dt.FLOAT if x.dtype == torch.float32 else dt.HALF
        g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name="conv")
        if engine:
            g.set_preferred_engine(engine)
        tx, tw = g.tensor_like(x, name="x"), g.tensor_like(w, name="w")
        b4 = bias.reshape(1, k, 1, 1)
        tb = g.tensor_like(b4, name="bias")
        y = g.relu(g.bias(g.conv_fprop(tx, tw, padding=[pad, pad], stride=[stride, stride],
                                       name="conv"), tb), name="act")
        y.set_output(True).set_data_type(io).set_stride(list(out.stride()))
        _build(g, knobs)
        run = _runner(g, {tx: x, tw: w, tb: b4, y: out})
        kernel = first_run(run)
        add(f"hipdnn {g.get_engine_name(0)}, {kernel.rstrip(',')}", run, lambda: out, note)
    except (hipdnn.HipdnnError, ValueError) as e:
        rows.append((name, f"hipdnn {engine or ''}".strip(), None, None,
                     f"failed{f' ({note})' if note else ''}: {e}"))


def _inputs(batch, m, n, k, dtype, gen):
    shape_a = (batch, m, k) if batch > 1 else (m, k)
    shape_b = (batch, k, n) if batch > 1 else (k, n)
    a = (torch.randn(shape_a, generator=gen, device="cuda") / math.sqrt(math.sqrt(k))).to(dtype)
    b = (torch.randn(shape_b, generator=gen, device="cuda") / math.sqrt(math.sqrt(k))).to(dtype)
    bias = torch.randn((n,), generator=gen, device="cuda").to(dtype)
    return a, b, bias


def _torch_fn(epilogue):
    if epilogue == "bias_gelu":
        return lambda a, b, bias: torch.nn.functional.gelu(torch.matmul(a, b) + bias)
    return lambda a, b, bias: torch.matmul(a, b)


def _hipdnn_run(a, b, bias, out, epilogue, engine=None, knobs=None) -> Callable[[], None]:
    io = {torch.bfloat16: dt.BFLOAT16, torch.float16: dt.HALF, torch.float32: dt.FLOAT}[a.dtype]
    g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="matmul")
    if engine:
        g.set_preferred_engine(engine)
    ta = g.tensor_like(a, name="a")
    tb = g.tensor_like(b, name="b")
    y = g.matmul(ta, tb, name="mm")
    pack = {ta: a, tb: b}
    if epilogue == "bias_gelu":
        bias2 = bias.reshape(1, -1)
        tbias = g.tensor_like(bias2, name="bias")
        y = g.gelu(g.add(y, tbias), name="act")
        pack[tbias] = bias2
    y.set_output(True).set_data_type(io)
    _build(g, knobs)
    pack[y] = out
    run = _runner(g, pack)
    run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
    return run


def _check(got, ref, tol) -> Optional[str]:
    got = got.double()
    if not torch.isfinite(got).all():
        return f"{int((~torch.isfinite(got)).sum())} elements not finite"
    err = ((got - ref).norm() / ref.norm()).item()
    return None if err <= tol else f"relative error {err:.3g} > {tol}"


def run_case(name, samples, repeat) -> List[Tuple[str, str, Optional[float], Optional[float], str]]:
    batch, m, n, k, epilogue = CASES[name]
    dtype = (torch.float16 if "fp16" in name else torch.float32 if "fp32" in name
             else torch.bfloat16)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    a, b, bias = _inputs(batch, m, n, k, dtype, gen)
    ref = _torch_fn(epilogue)(a.double(), b.double(), bias.double())
    flops = 2.0 * batch * m * n * k
    tol = FP32_TOL if dtype == torch.float32 else 1e-2  # relative Frobenius error of bf16 / fp16
    rows, add = _row_adder(name, ref, tol, flops, samples, repeat)

    holder = {}
    fn = _torch_fn(epilogue)
    add("torch eager (cuBLAS)", lambda: holder.__setitem__("y", fn(a, b, bias)), lambda: holder["y"])
    if epilogue:
        try:
            compiled = torch.compile(fn)
            add("torch.compile", lambda: holder.__setitem__("c", compiled(a, b, bias)),
                lambda: holder["c"])
        except Exception as e:  # no triton, a compiler failure: say so
            rows.append((name, "torch.compile", None, None, f"n/a: {type(e).__name__}"))
    # the hip engine's row first (the standing takes it), its forced tiles, then the default
    # ranking's and each --engines one's
    plan = engine_rows(ENGINES)
    plan[1:1] = [("hip", f"tile 128 x {bn} forced") for bn in FORCED_TILES]
    for engine, note in plan:
        out = torch.full(ref.shape, float("nan"), dtype=dtype, device="cuda")
        try:
            with forced_tile(int(note.split()[3]) if note.startswith("tile") else None):
                run = _hipdnn_run(a, b, bias, out, epilogue, engine)
            kernel = first_run(run)
            add(f"hipdnn {run.engine}, {kernel}", run, lambda: out, note)
        except (hipdnn.HipdnnError, ValueError) as e:
            rows.append((name, f"hipdnn {engine or ''}".strip(), None, None, f"failed: {e}"))
    if dtype == torch.float32:
        rows += _tf32_rows(name, a, b, bias, ref, epilogue, flops, samples, repeat)
    return rows


def _tf32_rows(name, a, b, bias, ref, epilogue, flops, samples, repeat):
    """An fp32 case read as TF32: torch with allow_tf32, and the hip engine with its tf32
    knob, b stored [N, K] (k contiguous: the layout the sm_90 kernel reads as TF32)."""
    bt = b.transpose(-1, -2).contiguous().transpose(-1, -2)
    name += TF32_CASE
    rows, add = _row_adder(name, ref, TF32_TOL, flops, samples, repeat)
    holder = {}
    fn = _torch_fn(epilogue)
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        add("torch eager (cuBLAS, TF32)",
            lambda: holder.__setitem__("y", fn(a, bt, bias)), lambda: holder["y"],
            f"{TORCH_TF32['matmul']}, b stored [N, K]")
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
    # b [N, K] (TMA), then b [K, N] as the case has it (copied transposed by the kernel)
    for bb, note in ((bt, "b stored [N, K]"), (b, "b stored [K, N], copied transposed")):
        out = torch.full(ref.shape, float("nan"), dtype=torch.float32, device="cuda")
        try:
            run = _hipdnn_run(a, bb, bias, out, epilogue, knobs={KNOB_TF32: 1})
            kernel = first_run(run)
            add(f"hipdnn {run.engine}, {kernel.rstrip(',')}", run, lambda: out,
                f"{TF32_HIPDNN}, {note}")
        except hipdnn.HipdnnError as e:
            rows.append((name, "hipdnn", None, None, f"failed ({TF32_HIPDNN}, {note}): {e}"))
    return rows


ENGINES: List[str] = []  # --engines: engines to time each matmul case on besides the default


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--cases", default=",".join(list(CASES) + list(CONV_CASES) + list(GRAD_CASES)))
    p.add_argument("--markdown", default=None, metavar="FILE",
                   help="also write the run as a history entry to FILE (for results.py add)")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse --short HEAD)")
    p.add_argument("--date", help="the run's date (default: today, UTC)")
    p.add_argument("--engines", default="", help="also time each case on these engines, "
                   "preferred one at a time (e.g. blaslt,cudnn): a row per engine, after the "
                   "hip engine's and the default ranking's")
    p.add_argument("--tiles", default="", help="also time the sm_90 kernel (and the fp32 "
                   "one) with these tile widths forced (HIPDNN_HIP_WGMMA_BN), e.g. 64,128,256")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if torch is None or not torch.cuda.is_available():
        print("gpu_matmul_bench: needs PyTorch with a CUDA device", file=sys.stderr)
        return 2
    FORCED_TILES[:] = [int(t) for t in args.tiles.split(",") if t]
    # the fp32 cases against exact fp32: PyTorch's SGEMM and cuDNN without TF32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ENGINES[:] = [e for e in args.engines.split(",") if e]
    rows = []
    for name in args.cases.split(","):
        run = (run_conv_case if name in CONV_CASES else
               run_grad_case if name in GRAD_CASES else run_case)
        rows += run(name, args.samples, args.repeat)
    report(rows, args, argv, "gpu_matmul_bench.py")
    return 0


def report(rows, args, argv, script, title="GPU matmul and convolution") -> None:
    """Prints a compute-bound run's table; with --markdown also writes it as the history
    entry `results.py add` files as the next run M (this script's and
    gpu_attention_bench.py's)."""
    device = torch.cuda.get_device_name()
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    table = bench_results.format_matmul_table(rows)
    print(f"{device}, {date}, torch {torch.__version__}\n")
    print("\n".join(table))
    if args.markdown:
        command = " ".join(argv if argv is not None else sys.argv[1:])
        entry = bench_results.matmul_run_entry(
            table, device, date, args.commit or bench_results.git_commit(), torch.__version__,
            preamble=f"`{script} {command}`: hipdnn {hipdnn.version()}; median of "
                     f"{args.samples} samples of {args.repeat} runs.", title=title)
        Path(args.markdown).write_text(entry, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
