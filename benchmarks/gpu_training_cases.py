"""The training-side GPU benchmark cases (benchmarks/gpu_bench.py runs them): backward
norms, batchnorm training and inference, instance and adaptive layer norms, pooling."""
from __future__ import annotations

from typing import Callable, Dict

import numpy as np

import hipdnn
from gpu_bench_core import EPS, ROW, Case, _extra, build_plan, dt, torch

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
