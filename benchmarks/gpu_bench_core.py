"""What every GPU benchmark case shares (benchmarks/gpu_bench.py runs them): CUDA-event and
host timing, the result check, the Result and Case records, and building a plan with the
engine's log read back to name the kernel that ran."""
from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs PyTorch
    torch = None

import hipdnn

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
    a vendor engine's "engine config 3 of 8"; stages' kernels joined by " + "), or "?"."""
    with EngineLog() as log:
        run()
        torch.cuda.synchronize()
    kernels = [m.split("first run of ", 1)[1].removeprefix("the ").split(" kernel", 1)[0]
               for m in log.messages if "first run of " in m]
    return " + ".join(kernels) if kernels else "?"


def engine_rows(engines: List[str]) -> List[Tuple[Optional[str], str]]:
    """The hipdnn rows of a compute-bound case, as (preferred engine, note): the hip
    engine's own kernels first (the standing row: what issues 24 and 28 measure), then the
    default ranking's choice (what a user gets without choosing), then each of --engines
    preferred in turn."""
    rows: List[Tuple[Optional[str], str]] = [("hip", ""), (None, "default ranking")]
    return rows + [(e, f"{e} preferred") for e in engines if e != "hip"]


ROW = 4096  # row cases: elements a row
EPS = 1e-5


def _extra(g_tensor, like: "torch.Tensor") -> "torch.Tensor":
    """An output the case does not check, written by hipdnn: its own poisoned buffer."""
    g_tensor.set_output(True).set_data_type(dt.FLOAT if like.dtype == torch.float32
                                            else dt.BFLOAT16)
    return torch.full(like.shape, float("nan"), dtype=like.dtype, device="cuda")
