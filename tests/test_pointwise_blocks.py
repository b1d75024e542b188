"""reference_cpu walks pointwise nodes, fused pointwise runs and batchnorm in blocks of 256
values (REF_BLOCK) in row-major order of the output, a block spanning rows when rows are
short, over up to HIPDNN_CPU_THREADS threads once there are 32768 values per thread.

These cases put sizes at the block edges (1, 255, 256, 257, ...), rows that do not merge
(odd strides, transposed and channels-last layouts, broadcast operands), and enough values
for 2 and 7 threads.  Every case is checked against a float64 NumPy reference, with the
output poisoned first and the inputs checked unchanged.  Each case also runs in child
interpreters with HIPDNN_CPU_THREADS=1, 2 and 7, whose outputs must agree bit for bit.
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import references as ref
import hipdnn

dt = hipdnn.data_type
U64 = 2.0 ** -53
BLOCK = 256
PER_THREAD = 32768  # values a thread must get before another one starts

STORE = {"fp32": (dt.FLOAT, np.float32), "fp16": (dt.HALF, np.float16),
         "bf16": (dt.BFLOAT16, np.uint16)}


def _graph(io="fp32", inter="fp32"):
    return hipdnn.pygraph(io_data_type=STORE[io][0], intermediate_data_type=STORE[inter][0],
                          compute_data_type=dt.FLOAT)


def _encode(values, dtype):
    if dtype == "bf16":
        return ref.bfloat16_bits(values)
    return np.asarray(values).astype(STORE[dtype][1])


def _decode(stored, dtype):
    if dtype == "bf16":
        return ref.bfloat16_values(stored)
    return np.asarray(stored).astype(np.float64)


def _strided(values, dtype, layout):
    """values stored as `dtype` in a buffer of the given layout: "packed", "transposed"
    (last two dims swapped in memory), "channels_last" (C innermost) or "odd" (every
    third element of the last dim, rows padded), NaN in any gap."""
    values = np.asarray(values, np.float64)
    nan = _encode(np.full(1, np.nan), dtype)[0]
    if layout == "packed":
        return np.ascontiguousarray(_encode(values, dtype))
    if layout == "odd":
        shape = values.shape[:-1] + (3 * values.shape[-1] + 1,)
        base = np.full(shape, nan, STORE[dtype][1])
        view = base[..., 1::3]
        view[...] = _encode(values, dtype)
        return view
    order = list(range(values.ndim))
    if layout == "transposed":
        order[-2], order[-1] = order[-1], order[-2]
    else:
        assert layout == "channels_last"
        order = [0] + order[2:] + [1]
    base = np.ascontiguousarray(_encode(values.transpose(order), dtype))
    return base.transpose(np.argsort(order))


def _run(g, inputs, outputs):
    """Builds g on the reference engine and runs it once: inputs {tensor: array}, outputs
    {tensor: poisoned array}.  Checks every input unchanged; gives the outputs."""
    g.set_preferred_engine("reference_cpu")
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name(0) == "reference_cpu"
    before = {t: a.copy() for t, a in inputs.items()}
    workspace = np.full(g.get_workspace_size(), 0xA5, np.uint8)  # garbage, not zeros
    g.execute({**inputs, **outputs}, workspace)
    for t, a in inputs.items():
        assert np.array_equal(a, before[t]), f"input {t.get_name()!r} changed"
    return outputs


def _output(g, tensor, shape, dtype, layout="packed"):
    tensor.set_output(True).set_data_type(STORE[dtype][0])
    arr = _strided(np.full(shape, np.nan), dtype, layout)
    tensor.set_dim(list(shape)).set_stride([s // arr.itemsize for s in arr.strides])
    return arr


def _check(got, want, dtype, name, err64=None):
    """fp32: within half an fp32 ulp of the float64 reference plus err64 (the float64
    error of engine and reference together); fp16 / bf16: exactly its rounding."""
    got = _decode(got, dtype)
    assert np.isfinite(got).all(), f"{name}: unwritten (poisoned) elements"
    if dtype != "fp32":
        want_bits = (ref.float16_bits if dtype == "fp16" else ref.bfloat16_bits)(want)
        got_bits = ref.float16_bits(got) if dtype == "fp16" else ref.bfloat16_bits(got)
        bad = got_bits != want_bits
        assert not bad.any(), (f"{name}: {int(bad.sum())} of {got.size} differ from the "
                               f"rounded reference, first at {np.argwhere(bad)[0]}")
        return
    err64 = np.zeros_like(want) if err64 is None else err64
    half = 0.5 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    bad = np.abs(got - want) > half + err64
    assert not bad.any(), (f"{name}: {int(bad.sum())} of {got.size} off by more than half "
                           f"an ulp, first at {np.argwhere(bad)[0]}")


def _fp32(v):
    return np.asarray(v, np.float32).astype(np.float64)


def _rand(rng, shape, low=0.1, high=2.0):
    mag = rng.uniform(low, high, size=shape)
    return _fp32(mag * rng.choice([-1.0, 1.0], size=shape))


# ---- cases: name -> function(rng) returning the outputs (checked inside) ---------------

def chain_case(n, layout="packed"):
    """y = tanh(relu(x * s + b)), x of n values, s and b broadcast [1]: one fused run."""
    def case(rng):
        shape = (n,)
        xv, sv, bv = _rand(rng, shape), _rand(rng, (1,)), _rand(rng, (1,))
        g = _graph()
        x, s, b = (g.tensor_like(a, name=nm) for a, nm in
                   ((np.zeros(shape, np.float32), "x"), (np.zeros(1, np.float32), "s"),
                    (np.zeros(1, np.float32), "b")))
        y = g.tanh(input=g.relu(input=g.add(a=g.mul(a=x, b=s), b=b)))
        out = _output(g, y, shape, "fp32")
        _run(g, {x: _encode(xv, "fp32"), s: _encode(sv, "fp32"), b: _encode(bv, "fp32")},
             {y: out})
        t = np.maximum(_fp32(_fp32(xv * sv) + bv), 0.0)
        want = np.tanh(t)
        _check(out, want, "fp32", f"chain n={n}", 16 * U64 * np.abs(want))
        return [out]
    return case


def strided_chain_case(shape, x_layout, y_layout, io="fp32", inter="fp32"):
    """y = sigmoid(max(x * s, b) - x) with s per channel [1, C, 1, ...] and b per last
    index [1, ..., W]: rows of different strides in every tensor, so blocks span rows."""
    def case(rng):
        c_shape = [1, shape[1]] + [1] * (len(shape) - 2)
        w_shape = [1] * (len(shape) - 1) + [shape[-1]]
        xv = _decode(_encode(_rand(rng, shape), io), io)
        sv = _decode(_encode(_rand(rng, c_shape), io), io)
        bv = _decode(_encode(_rand(rng, w_shape), io), io)
        xa = _strided(xv, io, x_layout)
        sa, ba = _encode(sv, io), _encode(bv, io)
        g = _graph(io, inter)
        kw = {"data_type": STORE[io][0]}
        x = g.tensor_like(xa, name="x", **kw)
        s = g.tensor_like(sa, name="s", **kw)
        b = g.tensor_like(ba, name="b", **kw)
        y = g.sigmoid(input=g.sub(a=g.max(a=g.mul(a=x, b=s), b=b), b=x))
        out = _output(g, y, shape, io, y_layout)
        _run(g, {x: xa, s: sa, b: ba}, {y: out})
        r = lambda v: ref.round_to(v, inter)
        want = 1.0 / (1.0 + np.exp(-r(r(np.maximum(r(xv * sv), bv)) - xv)))
        _check(out, want, io, f"strided chain {shape} {x_layout}->{y_layout}",
               16 * U64 * np.abs(want))
        return [out]
    return case


def single_op_case(op, shape, io="fp32"):
    """One pointwise node (not fused) with a broadcast second operand."""
    def case(rng):
        xv = _decode(_encode(_rand(rng, shape, 0.1, 4.0), io), io)
        bshape = (1,) * (len(shape) - 1) + (shape[-1],)
        bv = _decode(_encode(_rand(rng, bshape, 0.5, 2.0), io), io)
        xa, ba = _encode(xv, io), _encode(bv, io)
        g = _graph(io)
        kw = {"data_type": STORE[io][0]}
        x = g.tensor_like(xa, name="x", **kw)
        b = g.tensor_like(ba, name="b", **kw)
        build, reference, arity = {
            "tanh": (lambda: g.tanh(input=x), lambda: np.tanh(xv), 1),
            "sigmoid": (lambda: g.sigmoid(input=x), lambda: ref.sigmoid(xv), 1),
            "gelu": (lambda: g.gelu(input=x), lambda: ref.gelu_erfc(xv), 1),
            "div": (lambda: g.div(a=x, b=b), lambda: xv / bv, 2),
            "min": (lambda: g.min(a=x, b=b), lambda: ref.ieee_minimum(xv, bv), 2),
        }[op]
        y = build()
        out = _output(g, y, shape, io)
        _run(g, {x: xa, b: ba} if arity == 2 else {x: xa}, {y: out})
        want = reference()
        _check(out, want, io, f"{op} {shape} {io}", 16 * U64 * np.abs(want))
        return [out]
    return case


def batchnorm_case(shape, x_layout="packed"):
    def case(rng):
        stat = [1, shape[1]] + [1] * (len(shape) - 2)
        xv = _rand(rng, shape)
        mean, scale, bias = (_rand(rng, stat) for _ in range(3))
        inv = _fp32(rng.uniform(0.5, 2.0, size=stat))
        g = _graph()
        xa = _strided(xv, "fp32", x_layout)
        x = g.tensor_like(xa, name="x")
        params = [g.tensor_like(_encode(v, "fp32"), name=n) for v, n in
                  ((mean, "mean"), (inv, "inv_variance"), (scale, "scale"), (bias, "bias"))]
        y = g.batchnorm_inference(input=x, mean=params[0], inv_variance=params[1],
                                  scale=params[2], bias=params[3])
        out = _output(g, y, shape, "fp32")
        _run(g, {x: xa, **{p: _encode(v, "fp32") for p, v in
                            zip(params, (mean, inv, scale, bias))}}, {y: out})
        want = ref.batchnorm_inference(xv, mean, inv, scale, bias)
        _check(out, want, "fp32", f"batchnorm {shape}", 8 * U64 * np.abs(want))
        return [out]
    return case


CASES = {
    **{f"chain_{n}": chain_case(n) for n in
       (1, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 7, 2 * PER_THREAD + 1, 7 * PER_THREAD + 13)},
    "short_odd_rows": strided_chain_case((3, 5, 7, 9), "odd", "packed"),
    "short_rows_to_channels_last": strided_chain_case((2, 3, 5, 7), "packed", "channels_last"),
    "transposed_threads": strided_chain_case((4, 7, 97, 89), "transposed", "packed"),
    "channels_last_threads_fp16": strided_chain_case((2, 19, 61, 67), "channels_last",
                                                     "transposed", "fp16", "fp16"),
    "odd_rows_threads_bf16": strided_chain_case((5, 3, 101, 103), "odd", "packed", "bf16",
                                                "bf16"),
    **{f"{op}_threads": single_op_case(op, (3, 301, 257)) for op in
       ("tanh", "sigmoid", "gelu", "div", "min")},
    "tanh_block_edge_fp16": single_op_case("tanh", (BLOCK + 1,), "fp16"),
    "sigmoid_threads_bf16": single_op_case("sigmoid", (7, 211, 263), "bf16"),
    "batchnorm_small": batchnorm_case((1, 3, 1, 5)),
    "batchnorm_threads_transposed": batchnorm_case((3, 5, 101, 211), "transposed"),
}


def _digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).view(np.uint8).tobytes())
    return h.hexdigest()


def _seed(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def run_all():
    """Every case; {name: {"ok", "msg", "digest"}} (the child interpreters' entry)."""
    results = {}
    for name, case in CASES.items():
        try:
            outs = case(np.random.default_rng(_seed(name)))
            results[name] = {"ok": True, "msg": "", "digest": _digest(outs)}
        except AssertionError as e:
            results[name] = {"ok": False, "msg": str(e), "digest": ""}
    return results


# ---- tests ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_case_in_this_process(name):
    CASES[name](np.random.default_rng(_seed(name)))


@pytest.fixture(scope="module")
def by_threads():
    """run_all() in a child interpreter per HIPDNN_CPU_THREADS value."""
    out = {}
    root = str(Path(hipdnn.__file__).resolve().parents[1])
    here = str(Path(__file__).resolve().parent)
    for threads in (1, 2, 7):
        env = dict(os.environ, HIPDNN_CPU_THREADS=str(threads), HIPDNN_LOG_LEVEL="off")
        env["PYTHONPATH"] = os.pathsep.join([root, here, env.get("PYTHONPATH", "")])
        r = subprocess.run([sys.executable, "-c",
                            "import json, test_pointwise_blocks as t; "
                            "print(json.dumps(t.run_all()))"],
                           env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"child ({threads} threads) exited {r.returncode}\n{r.stderr}"
        out[threads] = json.loads(r.stdout.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_every_case_passes_with_threads(by_threads, threads):
    failed = {n: r["msg"] for n, r in by_threads[threads].items() if not r["ok"]}
    assert not failed, f"HIPDNN_CPU_THREADS={threads}: {failed}"


def test_results_do_not_depend_on_the_thread_count(by_threads):
    for name in CASES:
        digests = {t: by_threads[t][name]["digest"] for t in by_threads}
        assert len(set(digests.values())) == 1, f"{name}: outputs differ by threads {digests}"
