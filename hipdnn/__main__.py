"""``python -m hipdnn info | demo``.

info: version, the plugin folders searched, the plugins loaded and skipped (with the
      reason), and every engine with its id and memory space.
demo: conv(8x16x32x32, 32x16x3x3, pad 1) -> bias add -> relu on random float32 data,
      then gelu(x * scale + shift) over [8, 64, 28, 28], each checked against a float64
      NumPy reference (tolerances: docs/architecture.md, "Tolerances"); prints the GPU
      runtime, and per graph the engine that ran it (the GPU engine where there is one:
      hipdnn.Graph copies the NumPy arrays to the device and back), the max error and the
      median time; exit status 1 on a mismatch.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from numpy.typing import NDArray

import hipdnn

CONV_TOL_FP32 = 1e-5  # conv fprop fp32, atol = rtol (docs/architecture.md, "Tolerances")
POINTWISE_TOL_FP32 = 1e-5  # pointwise fp32, atol = rtol


def cmd_info(_args: argparse.Namespace) -> int:
    print(f"hipdnn {hipdnn.version()}")
    print("plugin paths searched:")
    for p in hipdnn.plugin_search_paths():
        print(f"  {p}")
    loaded = hipdnn.loaded_engine_plugin_paths()
    print(f"plugins loaded ({len(loaded)}):")
    for p in loaded:
        print(f"  {p}")
    skipped = hipdnn.skipped_engine_plugins()
    print(f"plugins skipped ({len(skipped)}):")
    for path, reason in skipped:
        print(f"  {path}: {reason}")
    engines = hipdnn.engines()
    print(f"engines ({len(engines)}):")
    for e in engines:
        flags = ", fallback" if e.is_fallback else ""
        print(f"  {e.name}  id 0x{e.id:016x}  memory {e.memory_space.name.lower()}  "
              f"priority {e.priority}{flags}")
    return 0


def conv2d_reference(x: NDArray[Any], w: NDArray[Any], pad: int) -> NDArray[np.float64]:
    """Cross-correlation, stride 1, dilation 1, in float64: one product per filter tap."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    w64 = w.astype(np.float64)
    kh, kw = w.shape[2], w.shape[3]
    oh, ow = xp.shape[2] - kh + 1, xp.shape[3] - kw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow], w64[:, :, i, j])
    return out


def _timed(fn: Callable[[], Any], runs: int) -> Tuple[NDArray[Any], float]:
    """The last result of `runs` calls and their median time in ms."""
    times: List[float] = []
    out = None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    assert isinstance(out, np.ndarray)  # one output, as NumPy
    return out, statistics.median(times)


def _report(title: str, engine: str, out: NDArray[Any], ref: NDArray[Any], tol: float,
            ms: float, runs: int) -> bool:
    """Prints one graph's result; whether it is within tolerance."""
    err = np.abs(out.astype(np.float64) - ref)
    ok = bool(np.all(err <= tol + tol * np.abs(ref)))
    print(f"demo: {title}")
    print(f"  engine: {engine}")
    print(f"  max abs error vs float64 NumPy: {float(err.max()):.3e} (tolerance atol = rtol = "
          f"{tol:g})")
    staged = " with the copies of NumPy arrays to and from the device" \
        if engine != "reference_cpu" else ""
    print(f"  time: {ms:.3f} ms (median of {runs} runs){staged}")
    print("  result: " + ("OK" if ok else "MISMATCH"))
    return ok


def _pointwise_demo(args: argparse.Namespace, rng: np.random.Generator) -> bool:
    """A fused pointwise graph: on the GPU engine where there is one."""
    from math import erf, sqrt
    x = rng.standard_normal((8, 64, 28, 28), dtype=np.float32)
    s = rng.standard_normal((1, 64, 1, 1), dtype=np.float32)
    b = rng.standard_normal((1, 64, 1, 1), dtype=np.float32)
    with hipdnn.Graph(compute_data_type=hipdnn.data_type.FLOAT, name="pointwise_demo") as g:
        g.gelu(g.add(g.mul(x, s, name="scale"), b, name="shift"), name="gelu")
    t = x.astype(np.float64) * s + b
    ref = 0.5 * t * (1.0 + np.vectorize(erf)(t / sqrt(2.0)))
    out, ms = _timed(lambda: g(x, s, b), args.runs)
    return _report("gelu(x * scale + shift), [8, 64, 28, 28] float32, one fused graph",
                   g.engine_name, out, ref, POINTWISE_TOL_FP32, ms, args.runs)


def cmd_demo(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    rt = hipdnn.device_runtime()
    if rt.name == "none":
        print("GPU: none (the device runtime found no GPU; everything runs on the CPU)")
    else:
        gpu_engines = [e.name for e in hipdnn.engines()
                       if e.memory_space != hipdnn.memory_space.HOST]
        print(f"GPU: {rt.name} runtime, {rt.device_count} device(s); device engines: "
              f"{', '.join(gpu_engines) or 'none loaded (see python -m hipdnn info)'}")
    x = rng.standard_normal((8, 16, 32, 32), dtype=np.float32)
    w = rng.standard_normal((32, 16, 3, 3), dtype=np.float32) * np.float32(0.1)
    b = rng.standard_normal((1, 32, 1, 1), dtype=np.float32)

    with hipdnn.Graph(compute_data_type=hipdnn.data_type.FLOAT, name="demo") as g:
        y = g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1], name="conv"), b, name="bias"),
                   name="relu")
        g.output(y)

    ref = np.maximum(conv2d_reference(x, w, 1) + b.astype(np.float64), 0.0)
    out, ms = _timed(lambda: g(x, w, b), args.runs)
    ok = _report("conv_fprop [8, 16, 32, 32] * [32, 16, 3, 3] pad 1 -> add bias -> relu, "
                 "float32", g.engine_name, out, ref, CONV_TOL_FP32, ms, args.runs)
    ok = _pointwise_demo(args, rng) and ok
    return 0 if ok else 1


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hipdnn",
                                     description="hipdnn: plugin information and a demo")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, plugins and engines").set_defaults(func=cmd_info)
    demo = sub.add_parser("demo", help="run conv -> bias -> relu and check it against NumPy")
    demo.add_argument("--runs", type=int, default=5, help="timed runs (default 5)")
    demo.add_argument("--seed", type=int, default=None, help="random seed")
    demo.set_defaults(func=cmd_demo)
    args = parser.parse_args(argv)
    if getattr(args, "runs", 1) < 1:
        parser.error("--runs must be at least 1")
    try:
        return int(args.func(args))
    except hipdnn.HipdnnError as e:
        print(f"hipdnn: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
