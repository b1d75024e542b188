"""``python -m hipdnn info | demo | draw | support | bench | cache``.

info:    version, the GPU runtime and its devices (or why there is none), the plugin
         folders searched, the plugins loaded and skipped (with the reason), and every
         engine with its id and memory space.
demo:    conv(8x16x32x32, 32x16x3x3, pad 1) -> bias add -> relu on random float32 data,
         then gelu(x * scale + shift) over [8, 64, 28, 28], each checked against a float64
         NumPy reference (tolerances: docs/architecture.md, "Tolerances"); prints the GPU
         runtime, and per graph the engine that ran it (the GPU engine where there is one:
         hipdnn.Graph copies the NumPy arrays to the device and back), the max error and
         the median time; exit status 1 on a mismatch.
draw:    a serialized graph (pygraph.serialize() bytes, before or after a build) as a
         picture: Graphviz source to stdout, or `-o graph.svg` (png, pdf: any format of
         graphviz's `dot`) / `-o graph.dot` (the source); plan bytes show their engine and
         its kernels where that engine is loaded, `--build` builds graph bytes first.
support: the operation-support matrix (op x engine x data type x layout) from the engines'
         own support checks; `--why` adds each refusal's reason, `--markdown` gives the
         table of docs/support_matrix.md.
bench:   conv -> bias -> relu, matmul -> gelu, layernorm, softmax and sdpa timed on each
         engine against NumPy, each result checked; progress on stderr, the table on
         stdout; `--quick` for tiny shapes, `--reps N` timed runs.
cache:   `cache info` (default) gives the folder, entries and bytes of the plan cache and
         the hip engine's kernel cache; `cache clear` empties both (hipdnn/_cache.py).
`--plugin PATH` (draw, support, bench; repeatable) loads only the plugins named.
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
    rt = hipdnn.device_runtime()
    if rt.name == "none":
        print(f"devices: none ({' '.join(rt.reason.split())})")
    else:
        print(f"devices: {rt.device_count} ({rt.name} runtime)")
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
    heuristics = hipdnn.heuristic_plugins()
    print(f"heuristic plugins ({len(heuristics)}):")
    for h in heuristics:
        print(f"  {h.path}: {h.name + ' ' if h.name else ''}{h.state}"
              f"{': ' + h.reason if h.reason else ''}")
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


def _use_plugins(args: argparse.Namespace) -> None:
    """--plugin PATH...: only these plugins (before anything loads them)."""
    paths = getattr(args, "plugin", None)
    if paths:
        from . import _support
        hipdnn.set_engine_plugin_paths(_support.absolute_plugin_paths(paths),
                                       hipdnn.plugin_loading_mode.ABSOLUTE)


def cmd_draw(args: argparse.Namespace) -> int:
    from . import _draw
    g, note = _draw.load(args.file, build=args.build, engine=args.engine)
    if note:
        print(f"hipdnn draw: {args.file}: {note}", file=sys.stderr)
    source = _draw.to_dot(g, note)
    if not args.output or args.output == "-":
        sys.stdout.write(source)
        return 0
    ext = args.output.rsplit(".", 1)[-1].lower() if "." in args.output else ""
    data = source.encode("utf-8") if ext in ("dot", "gv") else \
        _draw.render(source, ext or "svg", timeout=args.timeout)
    try:
        with open(args.output, "wb") as f:
            f.write(data)
    except OSError as e:
        print(f"hipdnn draw: cannot write '{args.output}': {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


def cmd_support(args: argparse.Namespace) -> int:
    from . import _support
    return _support.main(args)


def cmd_bench(args: argparse.Namespace) -> int:
    from . import _bench
    names = [c.name for c in _bench.CASES]
    unknown = [c for c in args.case or [] if c not in names]
    if unknown:
        print(f"hipdnn bench: unknown case {', '.join(unknown)} (cases: {', '.join(names)})",
              file=sys.stderr)
        return 2
    engines = args.engine or _bench.default_engines()
    if not engines:
        print("hipdnn bench: no engine loaded (see python -m hipdnn info)", file=sys.stderr)
        return 1
    reps = args.reps if args.reps is not None else (1 if args.quick else 10)
    return _bench.main(reps, args.quick, engines, args.case or [], args.seed)


def cmd_cache(args: argparse.Namespace) -> int:
    from . import _cache
    for line in _cache.clear() if args.action == "clear" else _cache.info():
        print(line)
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hipdnn",
                                     description="hipdnn: information, pictures, the "
                                     "support matrix, a demo, a bench and the caches")
    plugins = argparse.ArgumentParser(add_help=False)
    plugins.add_argument("--plugin", action="append", metavar="PATH",
                         help="load only this engine plugin (a file or folder; repeatable)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="version, devices, plugins and engines").set_defaults(
        func=cmd_info)
    demo = sub.add_parser("demo", help="run conv -> bias -> relu and check it against NumPy")
    demo.add_argument("--runs", type=int, default=5, help="timed runs (default 5)")
    demo.add_argument("--seed", type=int, default=None, help="random seed")
    demo.set_defaults(func=cmd_demo)
    draw = sub.add_parser("draw", parents=[plugins],
                          help="draw a serialized graph (Graphviz source, SVG, PNG, ...)")
    draw.add_argument("file", help="bytes of pygraph.serialize(), before or after a build")
    draw.add_argument("-o", "--output", metavar="OUT",
                      help="OUT.svg / .png / .pdf (rendered by graphviz dot) or OUT.dot "
                      "(the source); default: the source on stdout")
    draw.add_argument("--build", action="store_true",
                      help="build graph bytes first, to show the engine and its kernels")
    draw.add_argument("--engine", help="with --build: the engine to prefer")
    draw.add_argument("--timeout", type=float, default=60.0,
                      help="seconds dot may take (default 60)")
    draw.set_defaults(func=cmd_draw)
    support = sub.add_parser("support", parents=[plugins],
                             help="the operation-support matrix of the loaded engines")
    support.add_argument("--why", action="store_true", help="list why each refusal was made")
    support.add_argument("--markdown", action="store_true",
                         help="the Markdown page docs/support_matrix.md holds")
    support.add_argument("-o", "--output", metavar="PATH", help="write to PATH, not stdout")
    support.add_argument("--progress", action="store_true", help="each op on stderr")
    support.set_defaults(func=cmd_support)
    bench = sub.add_parser("bench", parents=[plugins],
                           help="time a few graphs on each engine against NumPy")
    bench.add_argument("--reps", type=int, default=None,
                       help="timed runs per engine and case (default 10; 1 with --quick)")
    bench.add_argument("--quick", action="store_true", help="tiny shapes (seconds, for tests)")
    bench.add_argument("--engine", action="append", metavar="NAME",
                       help="only this engine (repeatable; default: every loaded engine)")
    bench.add_argument("--case", action="append", metavar="NAME",
                       help="only this case (repeatable): conv_bias_relu, matmul_gelu, "
                       "layernorm, softmax, sdpa")
    bench.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    bench.set_defaults(func=cmd_bench)
    cache = sub.add_parser("cache", help="the plan and kernel caches on disk: info or clear")
    cache.add_argument("action", nargs="?", choices=["info", "clear"], default="info")
    cache.set_defaults(func=cmd_cache)
    args = parser.parse_args(argv)
    if getattr(args, "runs", 1) < 1:
        parser.error("--runs must be at least 1")
    if getattr(args, "reps", None) is not None and args.reps < 1:
        parser.error("--reps must be at least 1")
    if getattr(args, "timeout", 1.0) <= 0:
        parser.error("--timeout must be positive")
    try:
        _use_plugins(args)
        return int(args.func(args))
    except hipdnn.HipdnnError as e:
        print(f"hipdnn: {e}", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError, OSError) as e:  # _draw.DrawInputError, DotError, paths
        print(f"hipdnn {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
