"""GPU attention benchmark: hipdnn's sdpa forward and backward against PyTorch's
F.scaled_dot_product_attention with its FLASH_ATTENTION and CUDNN_ATTENTION backends
selected explicitly, on the same tensors, in one run.

    python3 benchmarks/gpu_attention_bench.py [--samples 15] [--repeat 10] [--cases a,b]
                                              [--engines cudnn,...] [--markdown FILE]
                                              [--commit C] [--date D]

Cases (issue 28's table): bf16, head dim 128, BHSD; B4 H16 S4096 with and without a causal
mask, B1 H16 S16384 causal, and decode (B64, 32 query heads over 4 key/value heads, one
query against 4096 keys); the backward (dQ, dK, dV from dO, O and the forward's stats) of
B4 H16 S4096 with and without a causal mask, torch's timed as autograd's backward of its
forward under the same backend.  TFLOP/s counts 4 B H S_q S_kv D, halved for a causal
mask, 2.5 times that for the backward.
The "torch eager" row is the FLASH_ATTENTION backend (the ratio column is against it),
next to CUDNN_ATTENTION; where a backend does not take a case (GQA on the flash backend
before torch 2.5, for one) its row says why.  hipdnn's rows: the hip engine's kernels
first (the row RESULTS.md's standing takes), the default ranking's choice, then each
--engines engine preferred in turn.  Each implementation's output is poisoned
with NaN, checked against a float64 reference computed by PyTorch from the same rounded
inputs (the first two query heads of at most two samples, so that the reference fits), and
only then timed: the median of CUDA-event timings of --repeat back-to-back runs per
sample, after warm-up.  Inputs are random normal (never zeros).

--markdown FILE writes the run as a history entry that `python3 benchmarks/results.py add
FILE` files as the next compute-bound run (run M...), as gpu_matmul_bench.py's are.
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import Dict, List, Optional, Tuple

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - the benchmark needs PyTorch
    torch = None

import hipdnn
from gpu_bench_core import EngineLog, engine_rows, first_run
from gpu_matmul_bench import _row_adder, _runner, report

dt = hipdnn.data_type

# name -> (B, H_q, H_kv, S_q, S_kv, D, causal)
CASES: Dict[str, Tuple[int, int, int, int, int, int, bool]] = {
    "sdpa_fwd_b4_h16_s4096_d128": (4, 16, 16, 4096, 4096, 128, False),
    "sdpa_fwd_b4_h16_s4096_d128_causal": (4, 16, 16, 4096, 4096, 128, True),
    "sdpa_fwd_b1_h16_s16384_d128_causal": (1, 16, 16, 16384, 16384, 128, True),
    "sdpa_fwd_decode_b64_h32_kv4_s4096_d128": (64, 32, 4, 1, 4096, 128, False),
    "sdpa_bwd_b4_h16_s4096_d128": (4, 16, 16, 4096, 4096, 128, False),
    "sdpa_bwd_b4_h16_s4096_d128_causal": (4, 16, 16, 4096, 4096, 128, True),
}


def _inputs(b, hq, hkv, sq, skv, d, gen):
    q = torch.randn((b, hq, sq, d), generator=gen, device="cuda").bfloat16()
    k = torch.randn((b, hkv, skv, d), generator=gen, device="cuda").bfloat16()
    v = torch.randn((b, hkv, skv, d), generator=gen, device="cuda").bfloat16()
    return q, k, v


def _torch_sdpa(q, k, v, causal, scale):
    gqa = q.shape[1] != k.shape[1]
    kw = {"enable_gqa": True} if gqa else {}
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale, **kw)


def _reference(q, k, v, causal, scale):
    """float64 attention of the first two query heads of (at most) the first two samples,
    computed on the GPU (the whole of S16384's scores in float64 would take 34 GB)."""
    rep = q.shape[1] // k.shape[1]
    q = q[:2, :2].double()
    k = k[:2, :(2 + rep - 1) // rep].double().repeat_interleave(rep, dim=1)[:, :2]
    v = v[:2, :(2 + rep - 1) // rep].double().repeat_interleave(rep, dim=1)[:, :2]
    return _attention64(q, k, v, causal, scale)


def _attention64(q, k, v, causal, scale):
    s = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:  # top-left diagonal, as is_causal=True and hipdnn's default alignment
        sq, skv = s.shape[-2], s.shape[-1]
        mask = torch.ones((sq, skv), dtype=torch.bool, device="cuda").tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1), v)


def _hipdnn_run(q, k, v, out, causal, scale, engine=None):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="sdpa")
    if engine:
        g.set_preferred_engine(engine)
    tq, tk, tv = (g.tensor_like(t, name=n) for t, n in ((q, "q"), (k, "k"), (v, "v")))
    o, _ = g.sdpa(tq, tk, tv, generate_stats=False, attn_scale=scale,
                  use_causal_mask=causal, name="sdpa")
    o.set_output(True).set_data_type(dt.BFLOAT16).set_dim(list(out.shape)) \
        .set_stride(list(out.stride()))
    with EngineLog():
        g.build([hipdnn.heur_mode.A])
    run = _runner(g, {tq: q, tk: k, tv: v, o: out})
    run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
    return run


def run_case(name, samples, repeat, engines):
    if name.startswith("sdpa_bwd"):
        return run_backward_case(name, samples, repeat, engines)
    b, hq, hkv, sq, skv, d, causal = CASES[name]
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    q, k, v = _inputs(b, hq, hkv, sq, skv, d, gen)
    scale = 1.0 / math.sqrt(d)
    ref = _reference(q, k, v, causal, scale)
    n = ref.shape[0]  # the reference's samples; its heads are the first two
    flops = 4.0 * b * hq * sq * skv * d * (0.5 if causal else 1.0)
    rows, add = _row_adder(name, ref, 1e-2, flops, samples, repeat)
    holder = {}
    backends = torch.nn.attention.SDPBackend
    for label, backend in (("torch eager (SDPA FLASH_ATTENTION)", backends.FLASH_ATTENTION),
                           ("torch SDPA CUDNN_ATTENTION", backends.CUDNN_ATTENTION)):
        def fn(backend=backend, label=label):
            with torch.nn.attention.sdpa_kernel([backend]):
                holder[label] = _torch_sdpa(q, k, v, causal, scale)
        try:
            add(label, fn, lambda label=label: holder[label][:n, :2])
        except RuntimeError as e:  # the backend does not take this case
            rows.append((name, label, None, None, f"n/a: {str(e).splitlines()[0][:120]}"))
    for engine, note in engine_rows(engines):
        out = torch.full(q.shape[:3] + (d,), float("nan"), dtype=torch.bfloat16, device="cuda")
        try:
            run = _hipdnn_run(q, k, v, out, causal, scale, engine)
            kernel = first_run(run)
            add(f"hipdnn {run.engine}, {kernel}", run, lambda out=out: out[:n, :2], note)
        except (hipdnn.HipdnnError, ValueError) as e:
            rows.append((name, f"hipdnn {engine or ''}".strip(), None, None, f"failed: {e}"))
    return rows


# ---- the backward --------------------------------------------------------------------------

def _head_slice(grads):
    """The first two heads of the first two samples of dQ, dK, dV, as one vector."""
    return torch.cat([g[:2, :2].double().flatten() for g in grads])


def _reference_backward(q, k, v, do, causal, scale):
    """float64 dQ, dK, dV of the first two heads of the first two samples (no GQA in the
    backward cases: those heads' dK, dV are theirs alone), by autograd."""
    q, k, v = (t[:2, :2].double().requires_grad_() for t in (q, k, v))
    o = _attention64(q, k, v, causal, scale)
    return _head_slice(torch.autograd.grad(o, (q, k, v), do[:2, :2].double()))


def _hipdnn_forward(q, k, v, causal, scale):
    """O and Stats of hipdnn's sdpa (its preferred engine), as a training step saves them."""
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="sdpa")
    tq, tk, tv = (g.tensor_like(t, name=n) for t, n in ((q, "q"), (k, "k"), (v, "v")))
    o, st = g.sdpa(tq, tk, tv, generate_stats=True, attn_scale=scale, use_causal_mask=causal,
                   name="sdpa")
    out = torch.empty(q.shape[:3] + (v.shape[3],), dtype=torch.bfloat16, device="cuda")
    stats = torch.empty(q.shape[:3] + (1,), dtype=torch.float32, device="cuda")
    o.set_output(True).set_data_type(dt.BFLOAT16).set_dim(list(out.shape)) \
        .set_stride(list(out.stride()))
    st.set_output(True).set_data_type(dt.FLOAT).set_dim(list(stats.shape)) \
        .set_stride(list(stats.stride()))
    g.build([hipdnn.heur_mode.A])
    _runner(g, {tq: q, tk: k, tv: v, o: out, st: stats})()
    return out, stats


def _hipdnn_backward_run(tensors, grads, causal, scale, engine=None):
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="sdpa_bwd")
    if engine:
        g.set_preferred_engine(engine)
    ts = [g.tensor_like(t, name=n) for t, n in zip(tensors, ("q", "k", "v", "o", "dO", "stats"))]
    outs = g.sdpa_backward(*ts, attn_scale=scale, use_causal_mask=causal, name="sdpa_bwd")
    for t, out in zip(outs, grads):
        t.set_output(True).set_data_type(dt.BFLOAT16).set_dim(list(out.shape)) \
            .set_stride(list(out.stride()))
    with EngineLog():
        g.build([hipdnn.heur_mode.A])
    run = _runner(g, dict(zip(ts + list(outs), list(tensors) + list(grads))))
    run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
    return run


def run_backward_case(name, samples, repeat, engines):
    b, hq, hkv, sq, skv, d, causal = CASES[name]
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    q, k, v = _inputs(b, hq, hkv, sq, skv, d, gen)
    do = torch.randn((b, hq, sq, d), generator=gen, device="cuda").bfloat16()
    scale = 1.0 / math.sqrt(d)
    ref = _reference_backward(q, k, v, do, causal, scale)
    flops = 2.5 * 4.0 * b * hq * sq * skv * d * (0.5 if causal else 1.0)
    rows, add = _row_adder(name, ref, 1e-2, flops, samples, repeat)
    holder = {}
    backends = torch.nn.attention.SDPBackend
    for label, backend in (("torch eager (SDPA FLASH_ATTENTION)", backends.FLASH_ATTENTION),
                           ("torch SDPA CUDNN_ATTENTION", backends.CUDNN_ATTENTION)):
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        try:
            with torch.nn.attention.sdpa_kernel([backend]):
                o = _torch_sdpa(*leaves, causal, scale)

            def fn(o=o, leaves=leaves, label=label):
                holder[label] = torch.autograd.grad(o, leaves, do, retain_graph=True)
            add(label, fn, lambda label=label: _head_slice(holder[label]))
        except RuntimeError as e:  # the backend does not take this case
            rows.append((name, label, None, None, f"n/a: {str(e).splitlines()[0][:120]}"))
    o, stats = _hipdnn_forward(q, k, v, causal, scale)
    for engine, note in engine_rows(engines):
        grads = [torch.full(t.shape, float("nan"), dtype=torch.bfloat16, device="cuda")
                 for t in (q, k, v)]
        try:
            run = _hipdnn_backward_run((q, k, v, o, do, stats), grads, causal, scale, engine)
            kernel = first_run(run)
            add(f"hipdnn {run.engine}, {kernel}", run, lambda grads=grads: _head_slice(grads),
                note)
        except (hipdnn.HipdnnError, ValueError) as e:
            rows.append((name, f"hipdnn {engine or ''}".strip(), None, None, f"failed: {e}"))
    return rows


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--engines", default="", help="also time each case on these engines, "
                   "preferred one at a time (e.g. cudnn): a row per engine")
    p.add_argument("--markdown", default=None, metavar="FILE",
                   help="also write the run as a history entry to FILE (for results.py add)")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse --short HEAD)")
    p.add_argument("--date", help="the run's date (default: today, UTC)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if torch is None or not torch.cuda.is_available():
        print("gpu_attention_bench: needs PyTorch with a CUDA device", file=sys.stderr)
        return 2
    engines = [e for e in args.engines.split(",") if e]
    rows: List = []
    for name in args.cases.split(","):
        rows += run_case(name, args.samples, args.repeat, engines)
        torch.cuda.empty_cache()
    report(rows, args, argv, "gpu_attention_bench.py", "GPU attention (sdpa forward and backward)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
