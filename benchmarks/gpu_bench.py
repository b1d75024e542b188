"""GPU benchmark: hipdnn against PyTorch eager and torch.compile on the same data, in one run.

    python3 benchmarks/gpu_bench.py [--log2 N] [--samples 15] [--cases mul_add_gelu_add,...]
                                    [--markdown [FILE]] [--update-results benchmarks/RESULTS.md]

Each case builds random inputs once (never zeros), checks every implementation's result
against a float64 reference computed by PyTorch from the same inputs, its output
poisoned with NaN first, and only then times it: the median of CUDA-event timings of
`--repeat` back-to-back runs per sample, after warm-up (torch.compile compiles during
warm-up).  Bandwidth is the bytes a fused implementation must move (each input read once,
each output written once) over the time; "of copy" is that against a device-to-device
copy measured in the same run.

hipdnn runs each of its GPU engine's kernels, chosen at plan time through the environment
(HIPDNN_HIP_JIT=0: the interpreting kernels; HIPDNN_HIP_KERNEL=generic: never the fast
way), each row named by the kernel that actually ran (the engine logs its first run):
  compiled fast        the plan's own kernel (NVRTC), contiguous tensors: flat index,
                       several 16-byte loads in flight a thread
  compiled generic     the plan's own kernel, any strides and broadcasts
  interpreting fast / generic   one precompiled kernel for every plan

Cases (CASES below):
  mul_add_gelu_add        y = gelu(a * b + a) + b over 2^28 bf16 elements: 2 inputs, 1
                          output, 4 nodes fused into one kernel by hipdnn
  mul_add_gelu_add_fp32   the same graph over 2^26 fp32 elements
  row_sum                 y[r] = sum of x[r, :] over x [32768, 4096] bf16 (a reduction)
  softmax                 softmax of each row of x [32768, 4096] bf16, written as cuDNN-FE
                          users do (reduction max, sub, exp, reduction add, div): hipdnn
                          runs the five nodes as one row-wise kernel
  layernorm, rmsnorm      norm_forward (inference) over the rows of x [32768, 4096] bf16
                          with a bf16 scale (and bias), epsilon 1e-5
  layernorm_backward      dx, dscale, dbias of a layernorm over x [32768, 4096] bf16 given
                          its saved fp32 mean and inv_variance (PyTorch:
                          aten.native_layer_norm_backward)
  rmsnorm_backward        dx and dscale of an rmsnorm over the same x given its saved fp32
                          inv_variance (PyTorch: the backward of F.rms_norm's autograd graph,
                          made once, without its forward)
  batchnorm_training      y, mean, inv_variance and the next running statistics of a
                          batchnorm over x [64, 128, 64, 64] bf16 (PyTorch: native_batch_norm)
  batchnorm_backward      dx, dscale, dbias of that batchnorm (native_batch_norm_backward)
  instancenorm            y of an instancenorm over the same x (statistics per sample and
                          channel over 64 x 64), bf16 scale and bias (F.instance_norm)
  maxpool                 3x3 max pooling, stride 2, padding 1, of the same x (max_pool2d)
(--log2 sets a pointwise case's elements, a row case's rows times 4096.)  Row cases' "of
copy" counts the bytes read and written once, as for the pointwise ones.
Host time: one execute of a tiny graph (relu over 16 floats) against torch.relu: the
cost of the call on the host, the GPU being idle.

The table comes last.  --markdown FILE also writes the run as a history entry (FILE "-" or
left out: standard output): this run's standing in the format of RESULTS.md's tables (device,
date, commit from `git rev-parse --short HEAD` or --commit, each case's times and ratios),
then the whole table; --update-results RESULTS.md files that entry in benchmarks/history/ and
replaces the device's rows of RESULTS.md case by case (benchmarks/results.py, which also
does it for a FILE written elsewhere: `results.py add FILE`).
"""
from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs PyTorch
    torch = None

import hipdnn
import results as bench_results  # benchmarks/results.py: the table's text, RESULTS.md's standing

dt = hipdnn.data_type


# ---- timing -------------------------------------------------------------------------------

def cuda_time_ms(fn: Callable[[], None], samples: int, repeat: int, warmup: int = 3) -> float:
    """Median over `samples` of the CUDA-event time of `repeat` calls, per call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    stream = torch.cuda.current_stream()
    times = []
    for _ in range(samples):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(stream)
        for _ in range(repeat):
            fn()
        end.record(stream)
        end.synchronize()
        times.append(start.elapsed_time(end) / repeat)
    return statistics.median(times)


def host_time_us(fn: Callable[[], None], calls: int = 2000) -> float:
    """Median host time of one call (µs), over batches, the device idle between batches."""
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    batch = 100
    per_call = []
    for _ in range(calls // batch):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        per_call.append((time.perf_counter() - t0) / batch * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per_call)


def copy_bandwidth_gbs(nbytes: int, samples: int, repeat: int) -> float:
    """Device-to-device copy bandwidth (read + write bytes per second) for nbytes."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_(0, 255)
    dst = torch.empty_like(src)
    ms = cuda_time_ms(lambda: dst.copy_(src), samples, repeat)
    return 2 * nbytes / (ms * 1e-3) / 1e9


# ---- checking -----------------------------------------------------------------------------

def check(name: str, got: "torch.Tensor", ref: "torch.Tensor", tol: float) -> Optional[str]:
    """None, or why `got` is not within |got - ref| <= tol + tol |ref| everywhere (ref is
    float64; a NaN left of the poison is not finite and fails)."""
    got = got.double()
    if not torch.isfinite(got).all():
        return f"{name}: {int((~torch.isfinite(got)).sum())} non-finite elements"
    err = (got - ref).abs() - (tol + tol * ref.abs())
    bad = int((err > 0).sum())
    if bad:
        i = int(err.flatten().argmax())
        return (f"{name}: {bad} elements out of tolerance {tol}; worst at {i}: "
                f"{got.flatten()[i].item()} vs {ref.flatten()[i].item()}")
    return None


# ---- cases ----------------------------------------------------------------------------

@dataclass
class Result:
    case: str
    impl: str
    ms: Optional[float]
    gbs: Optional[float] = None
    of_copy: Optional[float] = None
    note: str = ""


@dataclass
class Case:
    """A workload: inputs, the PyTorch function (eager and compiled), the hipdnn graph, the
    bytes a fused implementation moves, and the tolerance of its check."""
    name: str
    log2: int  # elements per tensor, log2, unless --log2 says otherwise
    make_inputs: Callable[[int, "torch.Generator"], Dict[str, "torch.Tensor"]]
    torch_fn: Callable[..., "torch.Tensor"]
    reference: Callable[..., "torch.Tensor"]  # float64
    build_graph: Callable[..., Callable[[], None]]  # (inputs, out, variant) -> one execute
    bytes_moved: Callable[[Dict[str, "torch.Tensor"]], int]
    tolerance: float  # hipdnn's (DESIGN, tests/tolerances.py)
    torch_tolerance: float  # PyTorch eager rounds intermediates to the storage type
    notes: List[str] = field(default_factory=list)
    # the poisoned output hipdnn writes (default: like input "a"), and the kernels asked for
    make_output: Optional[Callable[[Dict[str, "torch.Tensor"]], "torch.Tensor"]] = None
    variants: Optional[List] = None
    use_compile: bool = True  # also time torch.compile (the training cases: eager only)


def _mul_add_gelu_add_inputs(dtype):
    def make(n: int, gen) -> Dict[str, "torch.Tensor"]:
        a = torch.randn(n, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
        b = torch.randn(n, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
        return {"a": a, "b": b}
    return make


def _mul_add_gelu_add_torch(a, b):
    return torch.nn.functional.gelu(a * b + a) + b


def _mul_add_gelu_add_ref(a, b):
    a, b = a.double(), b.double()
    return torch.nn.functional.gelu(a * b + a) + b


# hipdnn's GPU kernels, as the benchmark asks for them: (label, environment at plan time)
VARIANTS = [
    ("compiled, fast way", {"HIPDNN_HIP_JIT": "1", "HIPDNN_HIP_KERNEL": "fast"}),
    ("compiled, generic way", {"HIPDNN_HIP_JIT": "1", "HIPDNN_HIP_KERNEL": "generic"}),
    ("interpreting, fast way", {"HIPDNN_HIP_JIT": "0", "HIPDNN_HIP_KERNEL": "fast"}),
    ("interpreting, generic way", {"HIPDNN_HIP_JIT": "0", "HIPDNN_HIP_KERNEL": "generic"}),
]


class EngineLog:
    """Collects the library's log lines (info) while active."""

    def __enter__(self):
        self.messages: List[str] = []
        hipdnn.set_log_level(hipdnn.log_level.INFO)
        hipdnn.set_log_callback(lambda level, msg: self.messages.append(msg))
        return self

    def __exit__(self, *exc):
        hipdnn._C.flush_log()
        hipdnn.set_log_callback(None)
        hipdnn.set_log_level(hipdnn.log_level.WARN)
        return False


def build_plan(g: "hipdnn.pygraph", env: Dict[str, str]) -> str:
    """Builds g with `env` set (the GPU engine reads it at plan time); returns what the
    engine said of its kernel, or "" when it did not say."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with EngineLog() as log:
            g.build([hipdnn.heur_mode.A])
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    said = [m for m in log.messages if "own kernel" in m or "interpreting kernel" in m]
    return said[-1] if said else ""


def first_run(run: Callable[[], None]) -> str:
    """Runs once; the kernel the engine says it ran ("compiled fast", "row-wise", ...;
    stages' kernels joined by " + "), or "?"."""
    with EngineLog() as log:
        run()
        torch.cuda.synchronize()
    kernels = [m.split("first run of the ", 1)[1].split(" kernel", 1)[0]
               for m in log.messages if "first run of the " in m]
    return " + ".join(kernels) if kernels else "?"


def _mul_add_gelu_add_graph(dtype):
    def build(inputs, out, env: Dict[str, str]) -> Callable[[], None]:
        """The hipdnn plan for the case, on torch's current stream; returns one execute."""
        io = {torch.bfloat16: dt.BFLOAT16, torch.float32: dt.FLOAT}[dtype]
        g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name="mul_add_gelu_add")
        a = g.tensor_like(inputs["a"], name="a")
        b = g.tensor_like(inputs["b"], name="b")
        y = g.add(a=g.gelu(input=g.add(a=g.mul(a=a, b=b), b=a)), b=b, name="y")
        y.set_output(True)
        said = build_plan(g, env)
        handle = hipdnn.Handle()
        handle.set_stream(torch.cuda.current_stream())
        pack = {a: inputs["a"], b: inputs["b"], y: out}

        def run():
            g.execute(pack, None, handle=handle)

        run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
        run.said = said  # type: ignore[attr-defined]
        return run
    return build


ROW = 4096  # row cases: elements a row
EPS = 1e-5
# The row kernels have one way, its geometry picked per shape; HIPDNN_HIP_ROW_VECTORS sets
# the 16-byte vectors a thread of a softmax or norm holds (the row's threads follow).
ROW_WISE = [("row-wise", {})] + [(f"row-wise, {v} vectors a thread", {"HIPDNN_HIP_ROW_VECTORS": v})
                                 for v in ("1", "2", "4")]


def _rows_inputs(norm: Optional[str]):
    def make(n: int, gen) -> Dict[str, "torch.Tensor"]:
        x = torch.randn(n // ROW, ROW, generator=gen, device="cuda").to(torch.bfloat16)
        t = {"x": x}
        if norm:  # scale near 1 and a bias, random: neither hides an error
            t["w"] = (1 + 0.5 * torch.randn(1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
        if norm == "layernorm":
            t["b"] = (0.5 * torch.randn(1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
        return t
    return make


def _rows_graph(what: str):
    def build(inputs, out, env: Dict[str, str]) -> Callable[[], None]:
        g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name=what)
        x = g.tensor_like(inputs["x"], name="x")
        pack = {x: inputs["x"]}
        rows = inputs["x"].shape[0]
        if what == "row_sum":
            y = g.reduction(input=x, mode=hipdnn.reduction_mode.ADD, name="y")
            y.set_dim([rows, 1])
        elif what == "softmax":
            m = g.reduction(input=x, mode=hipdnn.reduction_mode.MAX, name="max")
            m.set_dim([rows, 1])
            e = g.exp(input=g.sub(a=x, b=m, name="sub"), name="exp")
            s = g.reduction(input=e, mode=hipdnn.reduction_mode.ADD, name="sum")
            s.set_dim([rows, 1])
            y = g.div(a=e, b=s, name="y")
        else:  # a norm; in the training phase its mean and inv_variance are written too
            w = g.tensor_like(inputs["w"], name="w")
            pack[w] = inputs["w"]
            training = what.endswith("_training")
            phase = hipdnn.norm_forward_phase.TRAINING if training else hipdnn.norm_forward_phase.INFERENCE
            if what.startswith("layernorm"):
                b = g.tensor_like(inputs["b"], name="b")
                pack[b] = inputs["b"]
                y, *stats = g.layernorm(phase, x, w, b, EPS, name="y")
            else:
                y, *stats = g.rmsnorm(phase, x, w, epsilon=EPS, name="y")
            if training:
                like = torch.empty(rows, 1, dtype=torch.float32, device="cuda")
                pack.update({t: _extra(t, like) for t in stats})
        y.set_output(True)
        said = build_plan(g, env)
        handle = hipdnn.Handle()
        handle.set_stream(torch.cuda.current_stream())
        pack[y] = out
        size = g.get_workspace_size()  # rows cut into parts: their partial results
        workspace = hipdnn.DeviceArray.empty([size], np.uint8) if size else None

        def run():
            g.execute(pack, workspace, handle=handle)

        run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
        run.said = said  # type: ignore[attr-defined]
        return run
    return build


def _row_torch(what: str):
    # PyTorch's layer_norm computes its statistics in either phase (native_layer_norm)
    what = what.replace("_training", "")
    f = torch.nn.functional
    return {
        "row_sum": lambda x: x.sum(dim=1, keepdim=True),
        "softmax": lambda x: torch.softmax(x, dim=1),
        "layernorm": lambda x, w, b: f.layer_norm(x, (ROW,), w.view(ROW), b.view(ROW), eps=EPS),
        "rmsnorm": lambda x, w: f.rms_norm(x, (ROW,), w.view(ROW), eps=EPS),
    }[what]


def _row_ref(what: str):
    what = what.replace("_training", "")

    def ref(x, w=None, b=None):
        x = x.double()
        if what == "row_sum":
            return x.sum(dim=1, keepdim=True)
        if what == "softmax":
            return torch.softmax(x, dim=1)
        if what == "layernorm":
            mean = x.mean(dim=1, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=1, keepdim=True)
            return (x - mean) / torch.sqrt(var + EPS) * w.double() + b.double()
        return x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + EPS) * w.double()
    return ref


def _row_case(what: str, tolerance: float) -> Case:
    norm = what.replace("_training", "") if "norm" in what else None
    out_cols = 1 if what == "row_sum" else ROW
    return Case(
        name=what,
        log2=27,  # [32768, 4096]
        make_inputs=_rows_inputs(norm),
        torch_fn=_row_torch(what),
        reference=_row_ref(what),
        build_graph=_rows_graph(what),
        bytes_moved=lambda t: (sum(v.numel() * v.element_size() for v in t.values())
                               + t["x"].shape[0] * out_cols * 2),  # inputs read, y written
        tolerance=tolerance,
        torch_tolerance=tolerance,
        make_output=lambda t: torch.full((t["x"].shape[0], out_cols), float("nan"),
                                         dtype=torch.bfloat16, device="cuda"),
        variants=ROW_WISE[:1] if what.endswith("_training") else ROW_WISE,
        use_compile=not what.endswith("_training"),
    )


# ---- training-side cases: backward norms, batchnorm training, pooling --------------------------
# PyTorch eager runs its own fused kernels (aten.native_layer_norm_backward, native_batch_norm,
# native_batch_norm_backward, max_pool2d); hipdnn runs the graph cuDNN frontend would build.
# Each checks the main output (dx, y) against float64; dscale, dbias and the statistics are
# computed and written by both but checked only by the tests (tests/test_gpu_training.py).

NCHW = (64, 128, 64, 64)  # batchnorm and pooling: 2^25 elements


def _graph_runner(g, pack, name: str, env: Dict[str, str]) -> Callable[[], None]:
    said = build_plan(g, env)
    handle = hipdnn.Handle()
    handle.set_stream(torch.cuda.current_stream())
    size = g.get_workspace_size()
    workspace = hipdnn.DeviceArray.empty([size], np.uint8) if size else None

    def run():
        g.execute(pack, workspace, handle=handle)

    run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
    run.said = said  # type: ignore[attr-defined]
    return run


def _extra(g_tensor, like: "torch.Tensor") -> "torch.Tensor":
    """An output the case does not check, written by hipdnn: its own poisoned buffer."""
    g_tensor.set_output(True).set_data_type(dt.FLOAT if like.dtype == torch.float32
                                            else dt.BFLOAT16)
    return torch.full(like.shape, float("nan"), dtype=like.dtype, device="cuda")


_AUTOGRAD: Dict[tuple, tuple] = {}  # one entry: the last case's graph, its memory freed after


def _autograd_dx(key: str, inputs, forward, dy) -> "torch.Tensor":
    """dx (and, computed alongside, the parameters' gradients) of forward(x, *params) by
    eager autograd; the forward graph is made once per input, so only the backward's kernels
    are timed."""
    ident = (key,) + tuple(t.data_ptr() for t in inputs)
    if ident not in _AUTOGRAD:
        _AUTOGRAD.clear()
        leaves = [t.detach().requires_grad_() for t in inputs]
        _AUTOGRAD[ident] = (forward(*leaves), leaves)
    y, leaves = _AUTOGRAD[ident]
    return torch.autograd.grad(y, leaves, dy, retain_graph=True)[0]


def _lnb_inputs(n: int, gen) -> Dict[str, "torch.Tensor"]:
    x = torch.randn(n // ROW, ROW, generator=gen, device="cuda").to(torch.bfloat16)
    dy = torch.randn(n // ROW, ROW, generator=gen, device="cuda").to(torch.bfloat16)
    w = (1 + 0.5 * torch.randn(1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
    xf = x.float()
    mean = xf.mean(dim=1, keepdim=True)
    rstd = torch.rsqrt(((xf - mean) ** 2).mean(dim=1, keepdim=True) + EPS)
    return {"x": x, "dy": dy, "w": w, "mean": mean, "rstd": rstd}


def _lnb_torch(x, dy, w, mean, rstd):
    return torch.ops.aten.native_layer_norm_backward(dy, x, [ROW], mean, rstd, w.view(ROW),
                                                     torch.zeros_like(w.view(ROW)),
                                                     [True, True, True])[0]


def _lnb_ref(x, dy, w, mean, rstd):
    x, dy, w, mean, rstd = (t.double() for t in (x, dy, w, mean, rstd))
    xhat = (x - mean) * rstd
    g = dy * w
    return rstd * (g - g.mean(dim=1, keepdim=True) - xhat * (g * xhat).mean(dim=1, keepdim=True))


def _norm_bwd_graph(what: str):
    """layernorm_backward (dx, dscale, dbias) or rmsnorm_backward (dx, dscale) over the
    inputs as named by _lnb_inputs / _rmsb_inputs; dx is the checked output."""
    def build(inputs, out, env):
        g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name=what)
        t = {k: g.tensor_like(v, name=k) for k, v in inputs.items()}
        if what == "layernorm_backward":
            dx, *params = g.layernorm_backward(t["dy"], t["x"], t["w"], t["mean"], t["rstd"],
                                               name="lnb")
        else:
            dx, ds, _ = g.rmsnorm_backward(t["dy"], t["x"], t["w"], t["rstd"], has_dbias=False,
                                           name="rmsb")
            params = [ds]
        dx.set_output(True)
        pack = {t[k]: v for k, v in inputs.items()}
        pack[dx] = out
        pack.update({p: _extra(p, inputs["w"]) for p in params})
        return _graph_runner(g, pack, what, env)
    return build


def _rmsb_inputs(n: int, gen) -> Dict[str, "torch.Tensor"]:
    t = _lnb_inputs(n, gen)
    xf = t["x"].float()
    t["rstd"] = torch.rsqrt((xf * xf).mean(dim=1, keepdim=True) + EPS)
    del t["mean"]
    return t


def _rmsb_torch(x, dy, w, rstd):
    return _autograd_dx("rmsnorm_backward", (x, w),
                        lambda xr, wr: torch.nn.functional.rms_norm(xr, (ROW,), wr.view(ROW),
                                                                    eps=EPS), dy)


def _rmsb_ref(x, dy, w, rstd):
    x, dy, w, rstd = (t.double() for t in (x, dy, w, rstd))
    xhat = x * rstd
    g = dy * w
    return rstd * (g - xhat * (g * xhat).mean(dim=1, keepdim=True))


def _bn_inputs(backward: bool):
    def make(n: int, gen) -> Dict[str, "torch.Tensor"]:
        x = (2 + torch.randn(*NCHW, generator=gen, device="cuda")).to(torch.bfloat16)
        c = NCHW[1]
        t = {"x": x, "w": 1 + 0.5 * torch.rand(c, generator=gen, device="cuda"),
             "b": torch.randn(c, generator=gen, device="cuda")}
        if backward:
            t["dy"] = torch.randn(*NCHW, generator=gen, device="cuda").to(torch.bfloat16)
            xf = x.float()
            t["mean"] = xf.mean(dim=(0, 2, 3))
            t["invstd"] = torch.rsqrt(xf.var(dim=(0, 2, 3), unbiased=False) + EPS)
            del t["b"]
        else:
            t["rm"] = torch.randn(c, generator=gen, device="cuda")
            t["rv"] = 1 + torch.rand(c, generator=gen, device="cuda")
        return t
    return make


def _bn_torch(x, w, b, rm, rv):
    # running statistics updated in place, as a training step does
    return torch.ops.aten.native_batch_norm(x, w, b, rm, rv, True, 0.1, EPS)[0]


def _bn_ref(x, w, b, rm, rv):
    x = x.double()
    mean = x.mean(dim=(0, 2, 3), keepdim=True)
    var = ((x - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS) * w.double().view(1, -1, 1, 1) + b.double().view(1, -1, 1, 1)


def _bn_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="batchnorm_training")
    c = NCHW[1]
    x = g.tensor_like(inputs["x"], name="x")
    per_c = {k: inputs[k].view(1, c, 1, 1) for k in ("w", "b", "rm", "rv")}
    t = {k: g.tensor_like(v, name=k) for k, v in per_c.items()}
    y, mean, inv, nrm, nrv = g.batchnorm(x, t["w"], t["b"], in_running_mean=t["rm"],
                                         in_running_var=t["rv"], epsilon=EPS, momentum=0.1,
                                         name="bn")
    y.set_output(True)
    pack = {x: inputs["x"], y: out}
    pack.update({t[k]: v for k, v in per_c.items()})
    for o in (mean, inv, nrm, nrv):
        pack[o] = _extra(o, per_c["rm"])
    return _graph_runner(g, pack, "batchnorm_training", env)


def _in_inputs(n: int, gen) -> Dict[str, "torch.Tensor"]:
    c = NCHW[1]
    return {"x": (1 + torch.randn(*NCHW, generator=gen, device="cuda")).to(torch.bfloat16),
            "w": (1 + 0.5 * torch.randn(c, generator=gen, device="cuda")).to(torch.bfloat16),
            "b": (0.5 * torch.randn(c, generator=gen, device="cuda")).to(torch.bfloat16)}


def _in_torch(x, w, b):
    return torch.nn.functional.instance_norm(x, weight=w, bias=b, eps=EPS)


def _in_ref(x, w, b):
    x = x.double()
    mean = x.mean(dim=(2, 3), keepdim=True)
    var = ((x - mean) ** 2).mean(dim=(2, 3), keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS) * w.double().view(1, -1, 1, 1) + b.double().view(1, -1, 1, 1)


def _in_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="instancenorm")
    c = NCHW[1]
    x = g.tensor_like(inputs["x"], name="x")
    per_c = {k: inputs[k].view(1, c, 1, 1) for k in ("w", "b")}
    t = {k: g.tensor_like(v, name=k) for k, v in per_c.items()}
    y = g.instancenorm(hipdnn.norm_forward_phase.INFERENCE, x, t["w"], t["b"], EPS,
                       name="in")[0]
    y.set_output(True)
    pack = {x: inputs["x"], y: out}
    pack.update({t[k]: v for k, v in per_c.items()})
    return _graph_runner(g, pack, "instancenorm", env)


def _bni_inputs(n: int, gen) -> Dict[str, "torch.Tensor"]:
    t = _bn_inputs(False)(n, gen)
    t["x"] = torch.randn(*NCHW, generator=gen, device="cuda").to(torch.bfloat16)
    return t


def _bni_torch(x, w, b, rm, rv):
    return torch.nn.functional.batch_norm(x, rm, rv, w, b, training=False, eps=EPS)


def _bni_ref(x, w, b, rm, rv):
    shape = (1, -1, 1, 1)
    x, w, b, rm, rv = (t.double() for t in (x, w, b, rm, rv))
    return (x - rm.view(shape)) / torch.sqrt(rv.view(shape) + EPS) * w.view(shape) + b.view(shape)


def _bni_graph(inputs, out, env):
    # cuDNN frontend's batchnorm_inference takes inv_variance: 1 / sqrt(running var + eps)
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="batchnorm_inference")
    c = NCHW[1]
    per_c = {k: inputs[k].view(1, c, 1, 1) for k in ("w", "b", "rm")}
    per_c["inv"] = torch.rsqrt(inputs["rv"] + EPS).view(1, c, 1, 1)
    x = g.tensor_like(inputs["x"], name="x")
    t = {k: g.tensor_like(v, name=k) for k, v in per_c.items()}
    y = g.batchnorm_inference(x, t["rm"], t["inv"], t["w"], t["b"], name="bn")
    y.set_output(True)
    pack = {x: inputs["x"], y: out}
    pack.update({t[k]: v for k, v in per_c.items()})
    return _graph_runner(g, pack, "batchnorm_inference", env)


def _bnb_torch(x, w, dy, mean, invstd):
    return torch.ops.aten.native_batch_norm_backward(dy, x, w, None, None, mean, invstd, True,
                                                     EPS, [True, True, True])[0]


def _bnb_ref(x, w, dy, mean, invstd):
    x, w, dy, mean, invstd = (t.double() for t in (x, w, dy, mean, invstd))
    shape = (1, -1, 1, 1)
    xhat = (x - mean.view(shape)) * invstd.view(shape)
    g = dy * w.view(shape)
    axes = (0, 2, 3)
    return invstd.view(shape) * (g - g.mean(dim=axes, keepdim=True)
                                 - xhat * (g * xhat).mean(dim=axes, keepdim=True))


def _bnb_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="batchnorm_backward")
    c = NCHW[1]
    x = g.tensor_like(inputs["x"], name="x")
    dy = g.tensor_like(inputs["dy"], name="dy")
    per_c = {k: inputs[k].view(1, c, 1, 1) for k in ("w", "mean", "invstd")}
    t = {k: g.tensor_like(v, name=k) for k, v in per_c.items()}
    dx, ds, db = g.batchnorm_backward(dy, x, t["w"], t["mean"], t["invstd"], name="bnb")
    dx.set_output(True)
    pack = {x: inputs["x"], dy: inputs["dy"], dx: out}
    pack.update({t[k]: v for k, v in per_c.items()})
    pack.update({ds: _extra(ds, per_c["w"]), db: _extra(db, per_c["w"])})
    return _graph_runner(g, pack, "batchnorm_backward", env)


def _inb_inputs(n: int, gen) -> Dict[str, "torch.Tensor"]:
    t = _in_inputs(n, gen)
    del t["b"]
    t["dy"] = torch.randn(*NCHW, generator=gen, device="cuda").to(torch.bfloat16)
    xf = t["x"].float()
    t["mean"] = xf.mean(dim=(2, 3), keepdim=True)
    t["invstd"] = torch.rsqrt(xf.var(dim=(2, 3), unbiased=False, keepdim=True) + EPS)
    return t


def _inb_torch(x, w, dy, mean, invstd):
    # F.instance_norm's autograd: batch norm backward over [1, N*C, H, W] and dweight's sum
    return _autograd_dx("instancenorm_backward", (x, w),
                        lambda xr, wr: torch.nn.functional.instance_norm(xr, weight=wr, eps=EPS),
                        dy)


def _inb_ref(x, w, dy, mean, invstd):
    x, w, dy, mean, invstd = (t.double() for t in (x, w, dy, mean, invstd))
    xhat = (x - mean) * invstd
    g = dy * w.view(1, -1, 1, 1)
    axes = (2, 3)
    return invstd * (g - g.mean(dim=axes, keepdim=True)
                     - xhat * (g * xhat).mean(dim=axes, keepdim=True))


def _inb_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="instancenorm_backward")
    c = NCHW[1]
    t = {k: g.tensor_like(v, name=k) for k, v in inputs.items() if k != "w"}
    w = g.tensor_like(inputs["w"].view(1, c, 1, 1), name="w")
    dx, ds, db = g.instancenorm_backward(t["dy"], t["x"], w, t["mean"], t["invstd"], name="inb")
    dx.set_output(True)
    pack = {t[k]: v for k, v in inputs.items() if k != "w"}
    pack.update({w: inputs["w"].view(1, c, 1, 1), dx: out})
    pack.update({ds: _extra(ds, inputs["w"].view(1, c, 1, 1)),
                 db: _extra(db, inputs["w"].view(1, c, 1, 1))})
    return _graph_runner(g, pack, "instancenorm_backward", env)


# adaptive layernorm: scale and bias per sample ([B, 1, D] on x [B, S, D]), as a DiT block
# modulates its norms. PyTorch has no such op: its eager composite is layer_norm without
# parameters, then addcmul (one kernel for * scale + bias).
ADA_BATCH = 16


def _ada_inputs(backward: bool):
    def make(n: int, gen) -> Dict[str, "torch.Tensor"]:
        shape = (ADA_BATCH, n // (ADA_BATCH * ROW), ROW)
        x = torch.randn(*shape, generator=gen, device="cuda").to(torch.bfloat16)
        w = (1 + 0.5 * torch.randn(ADA_BATCH, 1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
        t = {"x": x, "w": w}
        if backward:
            t["dy"] = torch.randn(*shape, generator=gen, device="cuda").to(torch.bfloat16)
            xf = x.float()
            t["mean"] = xf.mean(dim=2, keepdim=True)
            t["rstd"] = torch.rsqrt(xf.var(dim=2, unbiased=False, keepdim=True) + EPS)
        else:
            t["b"] = (0.5 * torch.randn(ADA_BATCH, 1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
        return t
    return make


def _ada_forward(x, w, b):
    return torch.addcmul(b, torch.nn.functional.layer_norm(x, (ROW,), eps=EPS), w)


def _ada_torch(x, w, b):
    return _ada_forward(x, w, b)


def _ada_ref(x, w, b):
    x = x.double()
    mean = x.mean(dim=2, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=2, keepdim=True)
    return (x - mean) / torch.sqrt(var + EPS) * w.double() + b.double()


def _ada_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="adalayernorm")
    t = {k: g.tensor_like(v, name=k) for k, v in inputs.items()}
    y = g.adalayernorm(hipdnn.norm_forward_phase.INFERENCE, t["x"], t["w"], t["b"], EPS,
                       name="ada")[0]
    y.set_output(True)
    pack = {t[k]: v for k, v in inputs.items()}
    pack[y] = out
    return _graph_runner(g, pack, "adalayernorm", env)


_ADA_BIAS: Dict[int, "torch.Tensor"] = {}


def _adab_torch(x, w, dy, mean, rstd):
    # the composite's autograd: layer_norm backward, addcmul's and the parameters' sums
    b = _ADA_BIAS.setdefault(w.data_ptr(), torch.zeros_like(w))
    return _autograd_dx("adalayernorm_backward", (x, w, b), _ada_forward, dy)


def _adab_ref(x, w, dy, mean, rstd):
    x, w, dy, mean, rstd = (t.double() for t in (x, w, dy, mean, rstd))
    xhat = (x - mean) * rstd
    g = dy * w
    return rstd * (g - g.mean(dim=2, keepdim=True) - xhat * (g * xhat).mean(dim=2, keepdim=True))


def _adab_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="adalayernorm_backward")
    t = {k: g.tensor_like(v, name=k) for k, v in inputs.items()}
    dx, ds, db = g.adalayernorm_backward(t["dy"], t["x"], t["w"], t["mean"], t["rstd"],
                                         name="adab")
    dx.set_output(True)
    pack = {t[k]: v for k, v in inputs.items()}
    pack.update({dx: out, ds: _extra(ds, inputs["w"]), db: _extra(db, inputs["w"])})
    return _graph_runner(g, pack, "adalayernorm_backward", env)


def _pool_inputs(n: int, gen) -> Dict[str, "torch.Tensor"]:
    return {"x": torch.randn(*NCHW, generator=gen, device="cuda").to(torch.bfloat16)}


def _pool_torch(x):
    return torch.nn.functional.max_pool2d(x, 3, 2, 1)


def _pool_ref(x):
    return torch.nn.functional.max_pool2d(x.double(), 3, 2, 1)


def _pool_graph(inputs, out, env):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="maxpool")
    x = g.tensor_like(inputs["x"], name="x")
    y = g.resample(x, hipdnn.resample_mode.MAXPOOL, window=[3, 3], stride=[2, 2],
                   pre_padding=[1, 1], post_padding=[1, 1], name="pool")[0]
    y.set_output(True)
    return _graph_runner(g, {x: inputs["x"], y: out}, "maxpool", env)


def _nan_like(shape_of):
    return lambda t: torch.full(shape_of(t), float("nan"), dtype=torch.bfloat16, device="cuda")


def _bytes(*names, extra=0.0):
    """The bytes a fused implementation moves: the named tensors read or written once, plus
    `extra` tensors of x's size."""
    return lambda t: int(sum(t[k].numel() * t[k].element_size() for k in names)
                         + extra * t["x"].numel() * t["x"].element_size())


def _training_case(name, log2, make_inputs, torch_fn, reference, build_graph, bytes_moved, way,
                   tolerance=3e-2, variants=None, use_compile=False, make_output=None) -> Case:
    """A training-side case: one tolerance for hipdnn and PyTorch, the output like x (poisoned),
    the kernel `way` named, PyTorch eager only unless use_compile."""
    return Case(name=name, log2=log2, make_inputs=make_inputs, torch_fn=torch_fn,
                reference=reference, build_graph=build_graph, bytes_moved=bytes_moved,
                tolerance=tolerance, torch_tolerance=tolerance,
                make_output=make_output or _nan_like(lambda t: t["x"].shape),
                variants=variants or [(way, {})], use_compile=use_compile)


TRAINING_CASES = {
    # dx's check: bf16 storage of a sum of 4096 terms (tests/tolerances.py, norm_backward bf16)
    "layernorm_backward": _training_case(
        "layernorm_backward", 27, _lnb_inputs, _lnb_torch, _lnb_ref,
        _norm_bwd_graph("layernorm_backward"), _bytes("x", "dy", extra=1), "staged",
        variants=[("staged", {})] + [(f"staged, {v} vectors a thread", {"HIPDNN_HIP_ROW_VECTORS": v})
                                     for v in ("1", "2")]),
    "rmsnorm_backward": _training_case(
        "rmsnorm_backward", 27, _rmsb_inputs, _rmsb_torch, _rmsb_ref,
        _norm_bwd_graph("rmsnorm_backward"), _bytes("x", "dy", extra=1), "staged"),
    "batchnorm_training": _training_case(
        "batchnorm_training", 25, _bn_inputs(False), _bn_torch, _bn_ref, _bn_graph,
        _bytes("x", extra=2), "staged"),
    "batchnorm_backward": _training_case(
        "batchnorm_backward", 25, _bn_inputs(True), _bnb_torch, _bnb_ref, _bnb_graph,
        _bytes("x", "dy", extra=1), "staged"),
    "batchnorm_inference": _training_case(
        "batchnorm_inference", 25, _bni_inputs, _bni_torch, _bni_ref, _bni_graph,
        _bytes("x", extra=1), "pointwise", tolerance=1e-2),
    "instancenorm": _training_case(
        "instancenorm", 25, _in_inputs, _in_torch, _in_ref, _in_graph, _bytes("x", extra=1),
        "row-wise"),
    "instancenorm_backward": _training_case(
        "instancenorm_backward", 25, _inb_inputs, _inb_torch, _inb_ref, _inb_graph,
        _bytes("x", "dy", extra=1), "row-wise"),
    "adalayernorm": _training_case(
        "adalayernorm", 27, _ada_inputs(False), _ada_torch, _ada_ref, _ada_graph,
        _bytes("x", extra=1), "row-wise", tolerance=2e-2, use_compile=True),
    "adalayernorm_backward": _training_case(
        "adalayernorm_backward", 27, _ada_inputs(True), _adab_torch, _adab_ref, _adab_graph,
        _bytes("x", "dy", extra=1), "row-wise"),
    "maxpool": _training_case(
        "maxpool", 25, _pool_inputs, _pool_torch, _pool_ref, _pool_graph,
        _bytes("x", extra=0.25), "resample", tolerance=0.0,
        make_output=_nan_like(lambda t: (NCHW[0], NCHW[1], NCHW[2] // 2, NCHW[3] // 2))),
}


CASES = {
    "mul_add_gelu_add": Case(
        name="mul_add_gelu_add",
        log2=28,
        make_inputs=_mul_add_gelu_add_inputs(torch.bfloat16 if torch else None),
        torch_fn=_mul_add_gelu_add_torch,
        reference=_mul_add_gelu_add_ref,
        build_graph=_mul_add_gelu_add_graph(torch.bfloat16 if torch else None),
        bytes_moved=lambda t: 3 * t["a"].numel() * t["a"].element_size(),
        tolerance=1e-2,  # DESIGN: pointwise bf16
        torch_tolerance=5e-2,
    ),
    "mul_add_gelu_add_fp32": Case(
        name="mul_add_gelu_add_fp32",
        log2=26,
        make_inputs=_mul_add_gelu_add_inputs(torch.float32 if torch else None),
        torch_fn=_mul_add_gelu_add_torch,
        reference=_mul_add_gelu_add_ref,
        build_graph=_mul_add_gelu_add_graph(torch.float32 if torch else None),
        bytes_moved=lambda t: 3 * t["a"].numel() * t["a"].element_size(),
        tolerance=1e-5,  # DESIGN: pointwise fp32
        torch_tolerance=1e-5,
    ),
    # bf16 results: within 2^-7 relative plus as much absolute (a sum of 4096 terms, a
    # normalized value near 0), as tests/tolerances.py's bf16 reductions and norms
    "row_sum": _row_case("row_sum", 1e-2) if torch else None,
    "softmax": _row_case("softmax", 1e-2) if torch else None,
    "layernorm": _row_case("layernorm", 2e-2) if torch else None,
    "rmsnorm": _row_case("rmsnorm", 2e-2) if torch else None,
    "layernorm_training": _row_case("layernorm_training", 2e-2) if torch else None,
    "rmsnorm_training": _row_case("rmsnorm_training", 2e-2) if torch else None,
    **(TRAINING_CASES if torch else {}),
}


class _NotTimed(Exception):
    """A case whose torch.compile row is left out."""


def run_case(case: Case, log2: Optional[int], samples: int, repeat: int,
             copy_gbs: float) -> List[Result]:
    n = 1 << (case.log2 if log2 is None else log2)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    inputs = case.make_inputs(n, gen)
    ref = case.reference(**inputs)
    nbytes = case.bytes_moved(inputs)
    label = f"{case.name} (2^{n.bit_length() - 1})"
    results = []

    def add(impl, fn, out_tensor, tol, note=""):
        why = check(f"{case.name} {impl}", out_tensor(), ref, tol)
        if why:
            results.append(Result(label, impl, None, note=f"WRONG: {why}"))
            return
        ms = cuda_time_ms(fn, samples, repeat)
        gbs = nbytes / (ms * 1e-3) / 1e9
        results.append(Result(label, impl, ms, gbs, gbs / copy_gbs, note))

    holder = {}

    def eager():
        holder["eager"] = case.torch_fn(**inputs)
    eager()
    torch.cuda.synchronize()
    add("torch eager", eager, lambda: holder["eager"], case.torch_tolerance)
    del holder["eager"]

    try:
        if not case.use_compile:
            raise _NotTimed
        compiled_fn = torch.compile(case.torch_fn)

        def compiled():
            holder["compiled"] = compiled_fn(**inputs)
        compiled()
        torch.cuda.synchronize()
        add("torch.compile", compiled, lambda: holder["compiled"], case.torch_tolerance)
        holder.pop("compiled", None)
    except _NotTimed:  # a training case: PyTorch eager is what it is held to
        pass
    except Exception as e:  # no triton, or a compiler failure: say so, go on
        results.append(Result(label, "torch.compile", None, note=f"n/a: {type(e).__name__}: "
                              f"{str(e).splitlines()[0][:80] if str(e) else ''}"))

    ran = set()
    for wanted, env in case.variants or VARIANTS:
        # poison: every element must be written
        out = (case.make_output(inputs) if case.make_output
               else torch.full_like(inputs["a"], float("nan")))
        try:
            run = case.build_graph(inputs, out, env)
            kernel = first_run(run)  # "compiled fast", "interpreting generic", ...
            if case.variants:  # row cases: each geometry asked for, by name
                add(f"hipdnn {run.engine}, {wanted}", run, lambda: out, case.tolerance,
                    "" if kernel == "row-wise" else f"(ran: {kernel})")
                continue
            if kernel in ran:  # without NVRTC the compiled rows are the interpreter's
                continue
            ran.add(kernel)
            note = "" if kernel.replace(" ", ", ", 1) + " way" == wanted else f"(asked: {wanted})"
            add(f"hipdnn {run.engine}, {kernel}", run, lambda: out, case.tolerance, note)
        except hipdnn.HipdnnError as e:
            results.append(Result(label, f"hipdnn ({wanted})", None, note=f"failed: {e}"))
    return results


def host_time_results() -> List[Result]:
    x = torch.randn(16, device="cuda")
    y = torch.empty_like(x)
    results = [Result("tiny relu, host time", "torch.relu", None,
                      note=f"{host_time_us(lambda: torch.relu(x)):.1f} us per call")]
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="tiny_relu")
    X = g.tensor(name="x", dim=[16], data_type=dt.FLOAT)
    Y = g.relu(input=X, name="y")
    Y.set_output(True)
    g.build([hipdnn.heur_mode.A])
    engine = g.get_engine_name(0)
    if g.get_memory_space(0) == hipdnn.memory_space.HOST:
        results.append(Result("tiny relu, host time", f"hipdnn ({engine})", None,
                              note="skipped: no device engine"))
        return results
    handle = hipdnn.Handle()
    handle.set_stream(torch.cuda.current_stream())
    dx = hipdnn.DeviceArray.from_numpy(np.arange(16, dtype=np.float32) - 8)
    dy = hipdnn.DeviceArray.empty([16], np.float32)
    pack = {X: dx, Y: dy}
    us = host_time_us(lambda: g.execute(pack, None, handle=handle))
    if not np.array_equal(dy.numpy(), np.maximum(np.arange(16, dtype=np.float32) - 8, 0)):
        results.append(Result("tiny relu, host time", f"hipdnn ({engine})", None, note="WRONG"))
        return results
    results.append(Result("tiny relu, host time", f"hipdnn ({engine}), DeviceArray", None,
                          note=f"{us:.1f} us per call"))
    pack_t = {X: x, Y: y}
    us_t = host_time_us(lambda: g.execute(pack_t, None, handle=handle))
    torch.cuda.synchronize()
    if not torch.equal(y, torch.relu(x)):
        results.append(Result("tiny relu, host time", f"hipdnn ({engine}), torch tensors", None,
                              note="WRONG"))
        return results
    results.append(Result("tiny relu, host time", f"hipdnn ({engine}), torch tensors", None,
                          note=f"{us_t:.1f} us per call"))
    return results


def git_commit() -> str:
    """The checkout's short commit, "+" after it when tracked files differ from it; "—" where
    there is no git repository (a copied tree)."""
    top = Path(__file__).resolve().parent.parent

    def git(*args):
        return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True,
                              timeout=30)
    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0:
            return "—"
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "—"
    return head.stdout.strip() + ("+" if dirty else "")


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2", type=int, default=None,
                   help="elements per tensor, log2 (default: each case's own, 28 for bf16, 26 for fp32)")
    p.add_argument("--samples", type=int, default=15, help="timed samples (default 15)")
    p.add_argument("--repeat", type=int, default=5, help="runs per sample (default 5)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    p.add_argument("--markdown", nargs="?", const="-", metavar="FILE",
                   help="also write the run as a history entry: its standing in RESULTS.md's "
                        "format, then the whole table (FILE '-' or left out: standard output)")
    p.add_argument("--update-results", type=Path, metavar="RESULTS_MD",
                   help="file the run in the history/ beside RESULTS_MD and replace the device's "
                        "rows of RESULTS_MD case by case")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse --short HEAD)")
    p.add_argument("--date", help="the run's date (default: today, UTC)")
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if torch is None or not torch.cuda.is_available():
        print("gpu_bench: needs PyTorch with a GPU", file=sys.stderr)
        return 2
    names = args.cases.split(",")
    for name in names:
        if name not in CASES:
            print(f"gpu_bench: unknown case {name!r} (known: {', '.join(CASES)})", file=sys.stderr)
            return 2
    rt = hipdnn.device_runtime()
    print(f"hipdnn {hipdnn.version()}, device runtime {rt.name} ({rt.device_count} device(s)); "
          f"engines: {', '.join(e.name for e in hipdnn.engines())}")
    copy_bytes = 2 << (28 if args.log2 is None else args.log2)  # a bf16 tensor of the first case
    copy_gbs = copy_bandwidth_gbs(copy_bytes, args.samples, args.repeat)
    results: List[Result] = []
    for name in names:
        results += run_case(CASES[name], args.log2, args.samples, args.repeat, copy_gbs)
        torch.cuda.empty_cache()
    results += host_time_results()
    device = torch.cuda.get_device_name()
    table = bench_results.format_run_table(results, device, copy_gbs, copy_bytes)
    print()
    print("\n".join(table))
    wrong = [r for r in results if r.note.startswith(("WRONG", "failed"))]
    if args.markdown or args.update_results:
        date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        entry = bench_results.run_entry(
            table, device, date, args.commit or git_commit(),
            preamble=f"`gpu_bench.py {' '.join(argv if argv is not None else sys.argv[1:])}`: "
                     f"hipdnn {hipdnn.version()}, torch {torch.__version__}.")
        if args.markdown == "-":
            print()
            print(entry)
        elif args.markdown:
            Path(args.markdown).write_text(entry, encoding="utf-8")
        if args.update_results and wrong:
            print("gpu_bench: results wrong or failed; RESULTS.md left as it was", file=sys.stderr)
        elif args.update_results:
            path = bench_results.add_entry(entry, args.update_results)
            print(f"gpu_bench: {path} written, {args.update_results} updated")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
