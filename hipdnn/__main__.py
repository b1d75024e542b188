"""``python -m hipdnn info | demo``.

info: version, the plugin folders searched, the plugins loaded and skipped (with the
      reason), and every engine with its id and memory space.
demo: conv(8x16x32x32, 32x16x3x3, pad 1) -> bias add -> relu on random float32 data,
      checked against a float64 NumPy reference (conv fprop fp32 tolerance, see
      docs/architecture.md, "Tolerances"); prints the engine, the max error and the median
      time; exit status 1 on mismatch.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, List, Optional

import numpy as np
from numpy.typing import NDArray

import hipdnn

CONV_TOL_FP32 = 1e-5  # conv fprop fp32, atol = rtol (docs/architecture.md, "Tolerances")


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


def cmd_demo(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    x = rng.standard_normal((8, 16, 32, 32), dtype=np.float32)
    w = rng.standard_normal((32, 16, 3, 3), dtype=np.float32) * np.float32(0.1)
    b = rng.standard_normal((1, 32, 1, 1), dtype=np.float32)

    with hipdnn.Graph(compute_data_type=hipdnn.data_type.FLOAT, name="demo") as g:
        y = g.relu(g.add(g.conv_fprop(x, w, padding=[1, 1], name="conv"), b, name="bias"),
                   name="relu")
        g.output(y)

    ref = np.maximum(conv2d_reference(x, w, 1) + b.astype(np.float64), 0.0)
    times: List[float] = []
    out = None
    for _ in range(args.runs):
        t0 = time.perf_counter()
        out = g(x, w, b)
        times.append((time.perf_counter() - t0) * 1e3)
    assert isinstance(out, np.ndarray)  # one output
    err = np.abs(out.astype(np.float64) - ref)
    max_err = float(err.max())
    ok = bool(np.all(err <= CONV_TOL_FP32 + CONV_TOL_FP32 * np.abs(ref)))
    print("demo: conv_fprop [8, 16, 32, 32] * [32, 16, 3, 3] pad 1 -> add bias -> relu, float32")
    print(f"engine: {g.engine_name}")
    print(f"max abs error vs float64 NumPy: {max_err:.3e} (tolerance atol = rtol = "
          f"{CONV_TOL_FP32:g})")
    print(f"time: {statistics.median(times):.3f} ms (median of {len(times)} runs)")
    print("result: " + ("OK" if ok else "MISMATCH"))
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
