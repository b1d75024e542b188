"""Host overhead of a built plan's execute, and the time to build a plan (issue 29, items 5
and 6): what a call costs on the host when the kernel is tiny, from Python and from C, and
how long a fused graph takes to build with and without the caches.

    python3 benchmarks/host_overhead_bench.py [--calls 2000] [--engine NAME] [--knob K=V]
                                              [--no-build] [--markdown FILE] [--commit C]
                                              [--date D]

Rows (the "tiny relu, host time" case of RESULTS.md: relu over 16 float32, the device idle
between batches of 100 calls; the median of the batches' per-call time):
  torch.relu                           torch.relu(x) on the same CUDA tensor (the anchor;
                                       only with PyTorch and a GPU)
  hipdnn (E), DeviceArray              pygraph.execute on DeviceArrays, the same dict each
                                       call (its fast path: docs/python.md#execute-host-cost)
  hipdnn (E), torch tensors            the same on torch CUDA tensors
  hipdnn (E), NumPy                    on NumPy arrays, where the plan runs in host memory
  ..., checked path                    execute_plan_at_index: every key looked up in Python
  C hipdnnBackendExecute (E)           one variant pack made once (host_overhead_exec.c)
  C pack + hipdnnBackendExecute (E)    a variant pack made, run and destroyed each call
Build rows (not standing rows of RESULTS.md; in the entry's whole table): the wall time of
g.build() of a fused matmul + bias + relu graph in a fresh process with an empty cache
folder (cold: kernels compiled), in a second fresh process on that folder (warm cache:
plan and kernels from disk), and a second build in the first process (warm in-process);
each note splits it into validate, heuristics (every engine asked, ranked) and plan.
Before building, each fresh process first touches the device (a one-element DeviceArray:
the device runtime and its context, which an application using PyTorch has already paid;
"first device use") and loads hipdnn's plugins ("plugins loaded"), each its own row (the
second process's), so that the build rows hold the build alone.

Without a GPU it runs on what is loaded: NumPy arrays on the host engine, or the emulated
GPU engine over the fake driver, whose launch itself runs the kernel on the host (a
16-element relu: well under a microsecond):

    env LD_LIBRARY_PATH=$PWD/build/tests/fake_cuda HIPDNN_DEVICE_RUNTIME=cuda \\
        HIPDNN_EMULATED_MEMORY=device HIPDNN_PLUGIN_DIR=<folder with libhip_emulated.so and
        libhipdnn_reference_cpu.so> python3 benchmarks/host_overhead_bench.py \\
        --engine hip_emulated

The C rows need a C compiler (cc) and hipdnn's headers and library (from the checkout's
build or the installed package).  --markdown FILE writes the run as a history entry
(benchmarks/results.py) as gpu_bench.py's: `python3 benchmarks/results.py add FILE`.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import numpy as np

try:
    import torch
except ImportError:  # the torch rows need it; the others do not
    torch = None

import hipdnn
import results as bench_results  # benchmarks/results.py: the table's text, the history entry

HERE = Path(__file__).resolve().parent
CASE = bench_results.HOST_CASE
N = 16
dt = hipdnn.data_type

Row = Tuple[str, str, Optional[float], str]  # case, implementation, value, note


def torch_gpu() -> bool:
    return torch is not None and torch.cuda.is_available()


def device_present() -> bool:
    return hipdnn.device.device_runtime().device_count > 0


def synchronize() -> None:
    if torch_gpu():
        torch.cuda.synchronize()
    elif device_present():
        hipdnn.device.synchronize()


def host_time_us(fn: Callable[[], None], calls: int) -> float:
    """Median host time of one call (us), over batches of 100, the device idle between
    batches (gpu_bench_core.host_time_us's way, without needing PyTorch)."""
    for _ in range(50):
        fn()
    synchronize()
    per_call = []
    for _ in range(max(calls // 100, 1)):
        t0 = time.perf_counter()
        for _ in range(100):
            fn()
        per_call.append((time.perf_counter() - t0) / 100 * 1e6)
        synchronize()
    return statistics.median(per_call)


def relu_graph(engine: Optional[str]):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="tiny_relu")
    x = g.tensor(name="x", dim=[N], data_type=dt.FLOAT)
    y = g.relu(input=x, name="y")
    y.set_output(True)
    if engine:
        g.set_preferred_engine(engine)
    g.build([hipdnn.heur_mode.A])
    return g, x, y


def _timed_pair(g, pack, handle, label, calls, rows, read) -> None:
    """The fast path's and the checked path's rows of one kind of array; read(): the
    output as NumPy, checked against relu before any time is kept."""
    want = np.maximum(np.arange(N, dtype=np.float32) - 8, 0)
    index = g._candidate
    runs = [(label, lambda: g.execute(pack, None, handle=handle)),
            (label + ", checked path",
             lambda: g.execute_plan_at_index(pack, None, index, handle=handle))]
    for impl, fn in runs:
        fn()
        synchronize()
        if not np.array_equal(read(), want):
            rows.append((CASE, impl, None, "WRONG"))
            continue
        rows.append((CASE, impl, host_time_us(fn, calls), ""))


def python_rows(engine: Optional[str], calls: int) -> Tuple[List[Row], str, bool]:
    """The Python rows; the engine that ran and whether its plan is in device memory."""
    g, x, y = relu_graph(engine)
    name = g.get_engine_name()
    on_device = g.get_memory_space() == hipdnn.memory_space.DEVICE
    host_x = np.arange(N, dtype=np.float32) - 8
    handle = hipdnn.Handle()
    rows: List[Row] = []
    if torch_gpu():
        handle.set_stream(torch.cuda.current_stream())
        tx = torch.from_numpy(host_x).cuda()
        rows.append((CASE, "torch.relu", host_time_us(lambda: torch.relu(tx), calls), ""))
    if not on_device:
        out = np.empty(N, np.float32)
        _timed_pair(g, {x: host_x, y: out}, handle, f"hipdnn ({name}), NumPy", calls, rows,
                    lambda: out)
        return rows, name, on_device
    dx = hipdnn.DeviceArray.from_numpy(host_x)
    dy = hipdnn.DeviceArray.empty([N], np.float32)
    _timed_pair(g, {x: dx, y: dy}, handle, f"hipdnn ({name}), DeviceArray", calls, rows,
                dy.numpy)
    if torch_gpu():
        ty = torch.empty_like(tx)
        _timed_pair(g, {x: tx, y: ty}, handle, f"hipdnn ({name}), torch tensors", calls, rows,
                    lambda: ty.cpu().numpy())
    return rows, name, on_device


# ---- C --------------------------------------------------------------------------------

def _hipdnn_paths() -> Tuple[Optional[Path], Optional[Path]]:
    """hipdnn's include folder and the folder of libhipdnn_backend.so."""
    package = Path(hipdnn.__file__).resolve().parent
    lib = package / "lib"
    for inc in (HERE.parent / "csrc" / "include", package / "include"):
        if (inc / "hipdnn" / "hipdnn.h").is_file():
            return inc, lib if (lib / "libhipdnn_backend.so").is_file() else None
    return None, None


def c_rows(engine: str, on_device: bool, knob: Optional[str]) -> List[Row]:
    """hipdnnBackendExecute timed by host_overhead_exec.c, compiled here."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    inc, lib = _hipdnn_paths()
    if not cc or not inc or not lib:
        why = "no C compiler" if not cc else "no hipdnn headers or library"
        return [(CASE, f"C hipdnnBackendExecute ({engine})", None, f"skipped: {why}")]
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "host_overhead_exec"
        build = subprocess.run([cc, "-O2", "-std=c11", "-D_POSIX_C_SOURCE=200809L",
                                f"-I{inc}", str(HERE / "host_overhead_exec.c"), f"-L{lib}",
                                "-lhipdnn_backend", f"-Wl,-rpath,{lib}", "-o", str(exe)],
                               capture_output=True, text=True)
        if build.returncode != 0:
            return [(CASE, f"C hipdnnBackendExecute ({engine})", None,
                     "failed: " + build.stderr.strip().splitlines()[-1])]
        args = [str(exe), engine, "1" if on_device else "0", str(N)] + ([knob] if knob else [])
        run = subprocess.run(args, capture_output=True, text=True, timeout=600)
    if run.returncode != 0:
        return [(CASE, f"C hipdnnBackendExecute ({engine})", None,
                 "failed: " + (run.stderr.strip() or "no output"))]
    got = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    return [(CASE, f"C hipdnnBackendExecute ({engine})", float(got["execute_us"]), ""),
            (CASE, f"C pack + hipdnnBackendExecute ({engine})", float(got["pack_execute_us"]),
             "")]


# ---- building -------------------------------------------------------------------------

BUILD_CHILD = r"""
import json, sys, time
import numpy as np
import hipdnn
dt = hipdnn.data_type
engine, m, n, k, times = sys.argv[1] or None, *map(int, sys.argv[2:6])
t0 = time.perf_counter()
first_use = None
if hipdnn.device.device_runtime().device_count > 0:
    hipdnn.DeviceArray.empty([1], np.float32)  # the device runtime and its context
    hipdnn.device.synchronize()
    first_use = (time.perf_counter() - t0) * 1e3
t0 = time.perf_counter()
hipdnn.default_handle()  # loads the plugins (and the vendor libraries they open)
plugins = (time.perf_counter() - t0) * 1e3
out = []
for _ in range(times):
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="fused_mm_bias_relu")
    a = g.tensor(name="a", dim=[1, m, k])
    b = g.tensor(name="b", dim=[1, k, n])
    bias = g.tensor(name="bias", dim=[1, 1, n])
    y = g.relu(input=g.add(a=g.matmul(A=a, B=b, name="mm"), b=bias, name="bias"), name="act")
    y.set_output(True)
    if engine:
        g.set_preferred_engine(engine)
    # g.build()'s steps, each timed: the graph checked, every engine asked and ranked, the
    # first config's plan built (its kernel compiled, loaded from disk or the process's)
    steps = [("validate", g.validate), ("heuristics", lambda: g.create_execution_plans(
        [hipdnn.heur_mode.A])), ("plan", lambda: (g.check_support(), g.build_plans()))]
    ms = {}
    for name, step in steps:
        t0 = time.perf_counter()
        step()
        ms[name] = (time.perf_counter() - t0) * 1e3
    out.append({"ms": sum(ms.values()), "steps": ms, "engine": g.get_engine_name()})
print(json.dumps({"first_use": first_use, "plugins": plugins, "builds": out}))
"""

BUILD_CASE = "build, mm+bias+relu fp16"


def _steps_note(r: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in r["steps"].items()) + " ms"


def build_rows(engine: Optional[str], shape: Tuple[int, int, int]) -> List[Row]:
    """The second fresh process's first device use and plugin loading, then cold,
    warm-cache and warm in-process build times (g.build()'s steps in the note), each in a
    fresh process but the in-process one: the first process's second build."""
    rows: List[Row] = []
    env = dict(os.environ)
    env.pop("HIPDNN_CACHE", None)
    with tempfile.TemporaryDirectory() as cache:
        env["HIPDNN_CACHE_DIR"] = cache
        runs = []
        for times in (2, 1):
            p = subprocess.run([sys.executable, "-c", BUILD_CHILD, engine or "",
                                *map(str, shape), str(times)],
                               capture_output=True, text=True, env=env, timeout=600)
            if p.returncode != 0:
                tail = (p.stderr.strip().splitlines() or ["no output"])[-1]
                return [(BUILD_CASE, "g.build()", None, f"failed: {tail}")]
            runs.append(json.loads(p.stdout.strip().splitlines()[-1]))
    (cold, in_process), (warm,) = runs[0]["builds"], runs[1]["builds"]
    name = cold["engine"]
    if runs[1]["first_use"] is not None:
        rows.append((BUILD_CASE, "first device use (runtime, context)", runs[1]["first_use"],
                     "before any build; torch has paid it"))
    rows.append((BUILD_CASE, "hipdnn plugins loaded", runs[1]["plugins"], ""))
    for label, r in (("cold (empty cache folder)", cold), ("warm cache, new process", warm),
                     ("warm, same process", in_process)):
        rows.append((BUILD_CASE, f"hipdnn ({name}), {label}", r["ms"], _steps_note(r)))
    return rows


# ---- the table --------------------------------------------------------------------------

def format_rows(rows: List[Row]) -> List[str]:
    """gpu_bench.py's host-time lines ("<case>  <impl>  X.X us per call"), which
    results.py reads, then the build lines ("... X.X ms per build", "... X.X ms" for what a
    process pays once before building), which it leaves to the whole table."""
    lines = []
    for case, impl, value, note in rows:
        head = f"{bench_results._pad(case, 30)}{bench_results._pad(impl, 46)}"
        if value is None:
            lines.append(f"{head}{note}")
        elif case == CASE:
            lines.append(f"{head}{value:.1f} us per call {note}".rstrip())
        else:
            once = not impl.startswith("hipdnn (")  # first device use, plugins loaded
            unit = "ms" if once else "ms per build"
            lines.append(f"{head}{value:.1f} {unit} {note}".rstrip())
    return lines


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000, help="calls timed per row")
    p.add_argument("--engine", help="the engine to run (default: heuristics A's first)")
    p.add_argument("--knob", help="a knob choice K=V for the C rows' plan (e.g. 1000=1 for "
                                  "tests/tune_engine, which then does not sleep)")
    p.add_argument("--no-build", action="store_true", help="leave out the build rows")
    p.add_argument("--build-shape", default="1024,1024,1024", help="M,N,K of the fused graph")
    p.add_argument("--markdown", metavar="FILE", help="also write the run as a history entry")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse --short HEAD)")
    p.add_argument("--date", help="the run's date (default: today, UTC)")
    return p.parse_args(argv)


def device_name() -> str:
    if torch_gpu():
        return torch.cuda.get_device_name()
    rt = hipdnn.device.device_runtime()
    return f"no GPU ({rt.name} runtime, {rt.device_count} device(s))"


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    rows, engine, on_device = python_rows(args.engine, args.calls)
    rows += c_rows(engine, on_device, args.knob)
    if not args.no_build:
        m, n, k = (int(v) for v in args.build_shape.split(","))
        rows += build_rows(args.engine, (m, n, k))
    device = device_name()
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    table = format_rows(rows)
    print(f"{device}, {date}, hipdnn {hipdnn.version()}"
          + (f", torch {torch.__version__}" if torch is not None else "") + "\n")
    print("\n".join(table))
    if args.markdown:
        command = " ".join(argv if argv is not None else sys.argv[1:])
        entry = bench_results.run_entry(
            table, device, date, args.commit or bench_results.git_commit(),
            preamble=f"`host_overhead_bench.py {command}`: hipdnn {hipdnn.version()}; median "
                     f"over batches of 100 calls, {args.calls} calls a row.")
        Path(args.markdown).write_text(entry, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
