"""CPU benchmark: hipdnn's reference_cpu engine against NumPy doing the same computation.

Run after `make build`, with Debian's interpreter (it has NumPy):

    PYTHONPATH=/work/wt-perf /usr/bin/python3 benchmarks/cpu_bench.py [--repeats 7]

Each case builds its graph once through hipdnn.pygraph, checks one run against a float64
NumPy reference (so a wrong kernel is never timed), then reports the median (and best)
of `--repeats` timed runs after `--warmup` untimed ones; rates and the speed ratio use
the medians.  Output is one Markdown table.
The engine's thread count follows HIPDNN_CPU_THREADS when set (the machine's cores
otherwise); NumPy's BLAS uses its own threads.
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import hipdnn

FP32_TOL = 1e-4
dt = hipdnn.data_type


def random_nonzero(rng, shape, dtype=np.float32):
    """Values in +-[0.1, 1): never zero, so a kernel that skips work cannot look right."""
    mag = rng.uniform(0.1, 1.0, size=shape)
    sign = np.where(rng.random(size=shape) < 0.5, -1.0, 1.0)
    return (mag * sign).astype(dtype)


def time_runs(fn, warmup, repeats):
    """(median, best) seconds of `repeats` calls after `warmup` untimed ones.  The best
    shows what the code can do when another process shares the cores."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def new_graph(name):
    return hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                          compute_data_type=dt.FLOAT, name=name)


def hipdnn_runner(g, pack):
    """Builds g and returns a no-argument function that executes it on `pack`."""
    g.build([hipdnn.heur_mode.A])
    ws = np.empty(max(g.get_workspace_size(), 1), np.uint8)
    return g.get_engine_name(0), (lambda: g.execute(pack, ws))


# ---- NumPy references -------------------------------------------------------------------

def conv_im2col(x, w, pad):
    """Cross-correlation, stride 1, via im2col + one matmul (the usual NumPy way)."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
    win = np.lib.stride_tricks.sliding_window_view(xp, (r, s), axis=(2, 3))
    oh, ow = win.shape[2], win.shape[3]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * oh * ow, c * r * s)
    y = cols @ w.reshape(k, c * r * s).T
    return y.reshape(n, oh, ow, k).transpose(0, 3, 1, 2)


def pointwise_chain(x, scale, bias):
    return np.tanh(np.maximum(x * scale + bias, 0))


# ---- cases ------------------------------------------------------------------------------
# Each returns (name, shape text, work, unit, hipdnn result fn, numpy fn, float64 reference).

def case_conv(rng, n, c, hw, k, ks, pad):
    xa = random_nonzero(rng, (n, c, hw, hw))
    wa = random_nonzero(rng, (k, c, ks, ks))
    g = new_graph(f"conv{ks}x{ks}")
    x = g.tensor_like(xa, name="x")
    w = g.tensor_like(wa, name="w")
    y = g.conv_fprop(image=x, weight=w, padding=[pad, pad], stride=[1, 1], dilation=[1, 1])
    y.set_output(True)
    out_hw = hw + 2 * pad - ks + 1
    ya = np.empty((n, k, out_hw, out_hw), np.float32)
    engine, run = hipdnn_runner(g, {x: xa, w: wa, y: ya})
    ref = conv_im2col(xa.astype(np.float64), wa.astype(np.float64), pad)
    flops = 2.0 * n * k * out_hw * out_hw * c * ks * ks
    shape = f"N{n} C{c} {hw}x{hw} K{k} {ks}x{ks} pad{pad}"
    return (f"conv_fprop {ks}x{ks}", shape, flops, "GFLOP/s", engine, run, lambda: ya,
            lambda: conv_im2col(xa, wa, pad), ref)


def case_matmul(rng, batch, m, k, n):
    shape_a = (batch, m, k) if batch else (m, k)
    shape_b = (batch, k, n) if batch else (k, n)
    aa, ba = random_nonzero(rng, shape_a), random_nonzero(rng, shape_b)
    g = new_graph("matmul")
    a = g.tensor_like(aa, name="A")
    b = g.tensor_like(ba, name="B")
    c = g.matmul(A=a, B=b)
    c.set_output(True)
    ca = np.empty(shape_a[:-1] + (n,), np.float32)
    engine, run = hipdnn_runner(g, {a: aa, b: ba, c: ca})
    ref = aa.astype(np.float64) @ ba.astype(np.float64)
    flops = 2.0 * max(batch, 1) * m * k * n
    shape = (f"{batch}x" if batch else "") + f"{m}x{k}x{n} (MxKxN)"
    return ("matmul", shape, flops, "GFLOP/s", engine, run, lambda: ca,
            lambda: np.matmul(aa, ba), ref)


def case_pointwise(rng, shape):
    xa = random_nonzero(rng, shape)
    sa = random_nonzero(rng, (1, shape[1], 1, 1))
    ba = random_nonzero(rng, (1, shape[1], 1, 1))
    g = new_graph("pointwise")
    x = g.tensor_like(xa, name="x")
    s = g.tensor_like(sa, name="scale")
    b = g.tensor_like(ba, name="bias")
    y = g.tanh(input=g.relu(input=g.add(a=g.mul(a=x, b=s), b=b)))
    y.set_output(True)
    ya = np.empty(shape, np.float32)
    engine, run = hipdnn_runner(g, {x: xa, s: sa, b: ba, y: ya})
    ref = pointwise_chain(xa.astype(np.float64), sa.astype(np.float64), ba.astype(np.float64))
    moved = 2.0 * xa.nbytes  # read x once, write y once: the least any engine must move
    dims = "x".join(str(d) for d in shape)
    return ("pointwise x*s+b>relu>tanh", f"{dims} ({xa.size / 2**20:.0f}M el.)", moved,
            "GB/s", engine, run, lambda: ya, lambda: pointwise_chain(xa, sa, ba), ref)


def case_reduction(rng, shape, axis):
    xa = random_nonzero(rng, shape)
    g = new_graph("reduction")
    x = g.tensor_like(xa, name="x")
    y = g.reduction(x, hipdnn.reduction_mode.ADD)
    out_shape = tuple(1 if i == axis else d for i, d in enumerate(shape))
    y.set_output(True).set_dim(list(out_shape))
    ya = np.empty(out_shape, np.float32)
    engine, run = hipdnn_runner(g, {x: xa, y: ya})
    ref = xa.astype(np.float64).sum(axis=axis, keepdims=True)
    dims = "x".join(str(d) for d in shape)
    return (f"reduction add, axis {axis}", f"{dims} ({xa.size / 2**20:.0f}M el.)", xa.nbytes,
            "GB/s", engine, run, lambda: ya, lambda: xa.sum(axis=axis, keepdims=True), ref)


def norm_numpy(x, scale, bias, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def case_norm(rng, kind, shape):
    """Training-phase layernorm (over the last dim) or batchnorm (per channel): y, mean
    and inv_variance; the rate counts x read once and y written once."""
    param = (1, 1, shape[-1]) if kind == "layernorm" else (1, shape[1], 1, 1)
    axes = (len(shape) - 1,) if kind == "layernorm" else (0, 2, 3)
    xa = random_nonzero(rng, shape)
    sa, ba = random_nonzero(rng, param), random_nonzero(rng, param)
    g = new_graph(kind)
    x, s, b = g.tensor_like(xa, name="x"), g.tensor_like(sa, name="s"), g.tensor_like(ba, name="b")
    if kind == "layernorm":
        y, mean, inv = g.layernorm(hipdnn.norm_forward_phase.TRAINING, x, s, b, 1e-5)
    else:
        y, mean, inv = g.batchnorm(x, s, b, epsilon=1e-5)[:3]
    for t in (y, mean, inv):
        t.set_output(True)
    stats = tuple(1 if i in axes else d for i, d in enumerate(shape))
    ya = np.empty(shape, np.float32)
    pack = {x: xa, s: sa, b: ba, y: ya, mean: np.empty(stats, np.float32),
            inv: np.empty(stats, np.float32)}
    engine, run = hipdnn_runner(g, pack)
    ref = norm_numpy(xa.astype(np.float64), sa.astype(np.float64), ba.astype(np.float64), axes)
    dims = "x".join(str(d) for d in shape)
    return (f"{kind} training", f"{dims} ({xa.size / 2**20:.0f}M el.)", 2.0 * xa.nbytes,
            "GB/s", engine, run, lambda: ya, lambda: norm_numpy(xa, sa, ba, axes), ref)


def cases(rng, quick):
    if quick:
        return [lambda: case_conv(rng, 2, 16, 16, 32, 3, 1), lambda: case_matmul(rng, 0, 128, 128, 128),
                lambda: case_reduction(rng, (64, 96), 0),
                lambda: case_norm(rng, "layernorm", (4, 8, 64))]
    return [
        lambda: case_conv(rng, 8, 32, 32, 64, 3, 1),
        lambda: case_conv(rng, 8, 64, 32, 64, 1, 0),
        lambda: case_matmul(rng, 0, 512, 512, 512),
        lambda: case_matmul(rng, 16, 128, 256, 128),
        lambda: case_pointwise(rng, (16, 64, 64, 64)),
        lambda: case_reduction(rng, (2048, 2048), 1),
        lambda: case_reduction(rng, (2048, 2048), 0),
        lambda: case_norm(rng, "layernorm", (16, 256, 1024)),
        lambda: case_norm(rng, "batchnorm", (16, 64, 64, 64)),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="tiny shapes, for a smoke test")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)

    rows, failed = [], False
    for make in cases(rng, args.quick):
        name, shape, work, unit, engine, run, result, numpy_fn, ref = make()
        run()
        got = result().astype(np.float64)
        err = float(np.max(np.abs(got - ref)))
        ok = np.allclose(got, ref, rtol=FP32_TOL, atol=FP32_TOL)
        if not ok:
            failed = True
            print(f"WRONG RESULT: {name} {shape}: max abs error {err:.3g}", file=sys.stderr)
            continue
        t_h, best_h = time_runs(run, args.warmup, args.repeats)
        t_n, _ = time_runs(numpy_fn, args.warmup, args.repeats)
        rows.append((name, shape, engine, t_h * 1e3, best_h * 1e3, t_n * 1e3,
                     work * 1e-9 / t_h, work * 1e-9 / t_n, unit, t_n / t_h, err))

    threads = os.environ.get("HIPDNN_CPU_THREADS", f"all ({os.cpu_count()})")
    print(f"hipdnn {getattr(hipdnn, '__version__', '?')}, NumPy {np.__version__}, "
          f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"HIPDNN_CPU_THREADS={threads}; median of {args.repeats} after {args.warmup} "
          "warm-up runs; fp32 in/out, checked vs float64 NumPy (rtol=atol=1e-4)\n")
    print("| case | shape | engine | hipdnn ms | (best) | NumPy ms | hipdnn rate | NumPy rate "
          "| speed hipdnn/NumPy | max abs err |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, shape, engine, mh, bh, mn, rh, rn, unit, ratio, err in rows:
        print(f"| {name} | {shape} | {engine} | {mh:.2f} | {bh:.2f} | {mn:.2f} | {rh:.2f} {unit} "
              f"| {rn:.2f} {unit} | {ratio:.3f} | {err:.1e} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
