"""The cudnn engine (plugins/cudnn): hipdnn graphs translated into cuDNN's backend graph
API (convolution fprop / dgrad / wgrad, any groups, 1D to 3D, with the pointwise epilogue
cuDNN fuses; plain matmul; sdpa forward as cuDNN frontend builds it from backend operations:
causal masks at both alignments, bands, bias, GQA / MQA, stats) against float64 NumPy, what
it declines and why (its own reasons, and cuDNN's messages), how it loads or declines to
load, and its knob.

The tests marked `gpu` run on the engine: on cuDNN with an NVIDIA GPU, and in CI over the
fake CUDA driver (build/tests/fake_cuda) and the fake cuDNN (build/tests/fake_cudnn), which
test_the_gpu_tests_pass_over_the_fake_libraries runs this file on in a subprocess.  The
fake implements the backend API's descriptors, heuristic, plans and variant pack over the
fake driver's memory and computes the graph in float64: it checks the plugin's
translation (uids, dims, strides, types, modes, geometry, virtual and by-value tensors,
workspace, alignment), not cuDNN's kernels.  Every run copies each operand's whole
allocation, NaN poison included, to the device and back (conftest.DeviceNumerics):
outputs are checked to be fully written and nothing else, inputs unchanged.

On a GPU: HIPDNN_TEST_REQUIRE_GPU=1 python -m pytest -m gpu tests/test_cudnn_plugin.py
"""
import ctypes
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn
import references as ref
import test_sdpa as sdpa_tests
from conftest import (STORAGES, DeviceNumerics, Numerics, Operand, assert_close, engine_log,
                      skip_or_fail_without_gpu)
from tolerances import graph_tolerance, tolerance

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
FAKE_CUDNN = BUILD_DIR / "tests" / "fake_cudnn"
ENGINES = Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" / "engines"
PLUGIN = ENGINES / "libhipdnn_cudnn.so"
ENGINE = "cudnn"
KNOB_CONFIG = hipdnn.knob_type.KERNEL_CFG  # which of the heuristic's engine configs
FP32_UNIT = 2.0 ** -24
CM = hipdnn.convolution_mode

# In the child over the fakes: the reference engine and this one only.
FAKE = os.environ.get("HIPDNN_TEST_FAKE_CUDNN") == "1"
if FAKE:
    hipdnn.set_engine_plugin_paths([str(ENGINES / "libhipdnn_reference_cpu.so"), str(PLUGIN)],
                                   hipdnn.plugin_loading_mode.ABSOLUTE)


def fake_env(library=True, **extra):
    """The environment of a child over the fake driver (and the fake cuDNN)."""
    env = dict(os.environ)
    env.pop("HIPDNN_PLUGIN_DIR", None)
    env.update({"LD_LIBRARY_PATH": os.pathsep.join([str(FAKE_DRIVER), env.get("LD_LIBRARY_PATH", "")]),
                "HIPDNN_DEVICE_RUNTIME": "cuda", "HIPDNN_BUILD_DIR": str(BUILD_DIR)})
    if library:  # the fake, even where a real cuDNN is on the loader's path
        env["HIPDNN_CUDNN_LIBRARY"] = str(FAKE_CUDNN / "libcudnn.so.9")
    env.update(extra)
    return env


# ---- the engine under test ---------------------------------------------------------------

def unavailable():
    """None when the cudnn engine is loaded with a device, else why not."""
    if ENGINE in [e.name for e in hipdnn.engines()] and hipdnn.device_runtime().name != "none":
        return None
    why = [f"no '{ENGINE}' engine"]
    why += [r for path, r in hipdnn.skipped_engine_plugins() if path.endswith(PLUGIN.name)]
    return "; ".join(why)


@pytest.fixture
def cd(rng):
    """DeviceNumerics on the cudnn engine: skips without a GPU, fails in the run over the
    fakes, where the engine must load."""
    reason = unavailable()
    if reason:
        if FAKE:
            pytest.fail(f"over the fake libraries: {reason}")
        skip_or_fail_without_gpu(reason)
    d = DeviceNumerics(rng)
    d.engine = ENGINE
    return d


def cudnn_log(run):
    return engine_log(run, ENGINE)


def assert_product_close(out, want, tol, k, magnitude):
    """The DESIGN tolerance plus what fp32 accumulation of k terms may lose,
    k * u * magnitude (the same sum over absolute values), doubled for an epilogue."""
    got = np.asarray(out.decoded(), np.float64)
    bound = tol + tol * np.abs(want) + 2.0 * k * FP32_UNIT * magnitude
    err = np.abs(got - want)
    if not (err <= bound).all():
        assert_close(got, want, tol, out.tensor.get_name())  # non-finite: reported there
        bad = np.unravel_index(int(np.argmax(err - bound)), err.shape)
        pytest.fail(f"{out.tensor.get_name()}: |diff| {err[bad]:.3g} > {bound[bad]:.3g} at {bad}")


def geometry(x_shape, pad=None, stride=None, dil=None, post=None):
    nsp = len(x_shape) - 2
    pad = pad or [0] * nsp
    return pad, post if post is not None else pad, stride or [1] * nsp, dil or [1] * nsp


# ---- epilogues: (cd, graph, tensor, reference, dtype) -> (tensor, reference, inputs) -----

def bias_add(cd, g, y, want, dtype):
    b = cd.input([1, want.shape[1]] + [1] * (want.ndim - 2), dtype)
    return g.bias(y, b.bind(g, "bias"), name="bias"), want + b.values, [b]


def relu(cd, g, y, want, dtype):
    return g.relu(y, name="act"), ref.relu(want), []


def bias_relu(cd, g, y, want, dtype):
    y, want, extra = bias_add(cd, g, y, want, dtype)
    return g.relu(y, name="act"), ref.relu(want), extra


def scaled_sigmoid(cd, g, y, want, dtype):  # a by-value constant, then sigmoid
    y = g.mul(y, 0.5, name="half")
    return g.sigmoid(y, name="act"), ref.sigmoid(0.5 * want), []


def gelu_tanh(cd, g, y, want, dtype):
    return g.gelu_approx_tanh(y, name="act"), ref.gelu_approx_tanh(want), []


def swish(cd, g, y, want, dtype):
    return g.swish(y, name="act"), ref.swish(want), []


def residual(cd, g, y, want, dtype):  # y + a second input of y's shape, then relu
    r = cd.input(list(want.shape), dtype, "channels_last")  # as the epilogue tests' output
    y = g.add(y, r.bind(g, "residual"), name="residual")
    return g.relu(y, name="act"), ref.relu(want + r.values), [r]


EPILOGUES = {"bias": bias_add, "relu": relu, "bias+relu": bias_relu,
             "scale+sigmoid": scaled_sigmoid, "gelu_tanh": gelu_tanh, "swish": swish,
             "residual+relu": residual}


def fp32_fusion_built(g, dtype):
    """False where there is nothing to ask (the fakes, fp16, bf16); otherwise g is built
    with cudnn preferred: True if cudnn took it, None if it declined, which must be for this
    reason: cuDNN 9.14 on an H200 fuses fp32 epilogues beyond bias and relu only in TF32
    engines, which cudnn leaves out (cudnn_plan.c)."""
    if dtype != "fp32" or FAKE:
        return False
    g.set_preferred_engine(ENGINE)
    g.build([hipdnn.heur_mode.A])
    why = dict(g.support_report())[ENGINE]
    if why is None:
        return True
    assert why.endswith("offer no engine config for it that computes fp32 without TF32"), why
    return None


def run_conv(cd, dtype, op, a, b, out_shape, want, magnitude, k, epilogue=None,
             layout="packed", knobs=None, build=True):
    """Builds (g, out) where out = op(a, b) then the epilogue; runs and checks it."""
    g = cd.graph(dtype)
    y = op(g)
    extra, ops = [], [op.kind]
    if epilogue:
        y, want, extra = epilogue(cd, g, y, want, dtype)
        ops.append("pointwise")
    out = cd.output(y, out_shape, dtype, layout)
    built = []
    def run():  # the plan is made inside, so that its log line is caught
        if knobs is not None:
            build_config(g, knobs)
        built.append(bool(epilogue) and knobs is None and fp32_fusion_built(g, dtype))
        if built[0] is not None:
            cd.execute(g, [a, b] + extra + [out], build=knobs is None and not built[0])
    log = cudnn_log(run)
    if built[0] is None:
        return None
    assert_product_close(out, want, graph_tolerance(ops, dtype), k, magnitude)
    return log


def fprop(cd, dtype, x_shape, w_shape, pad=None, stride=None, dil=None, post=None,
          flip=False, layout="packed", epilogue=None, knobs=None):
    pad, post, stride, dil = geometry(x_shape, pad, stride, dil, post)
    x, w = cd.input(x_shape, dtype, layout), cd.input(w_shape, dtype, layout)
    mode = CM.CONVOLUTION if flip else CM.CROSS_CORRELATION
    def op(g):
        return g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), pre_padding=pad, post_padding=post,
                            stride=stride, dilation=dil, name="conv", convolution_mode=mode)
    op.kind = "conv_fprop"
    want = ref.conv_fprop(x.values, w.values, pad, post, stride, dil, flip=flip)
    mag = ref.conv_fprop(np.abs(x.values), np.abs(w.values), pad, post, stride, dil, flip=flip)
    return run_conv(cd, dtype, op, x, w, want.shape, want, mag, int(np.prod(w_shape[1:])),
                    epilogue, layout, knobs)


def dgrad(cd, dtype, x_shape, w_shape, pad=None, stride=None, dil=None, post=None, flip=False,
          layout="packed", epilogue=None):
    pad, post, stride, dil = geometry(x_shape, pad, stride, dil, post)
    y_shape = list(ref.conv_fprop(np.zeros(x_shape), np.zeros(w_shape), pad, post, stride,
                                  dil).shape)
    dy, w = cd.input(y_shape, dtype, layout), cd.input(w_shape, dtype, layout)
    mode = CM.CONVOLUTION if flip else CM.CROSS_CORRELATION
    def op(g):
        dx = g.conv_dgrad(loss=dy.bind(g, "dy"), filter=w.bind(g, "w"), pre_padding=pad,
                          post_padding=post, stride=stride, dilation=dil, name="dgrad",
                          convolution_mode=mode)
        return dx.set_dim(list(x_shape))
    op.kind = "conv_dgrad"
    want = ref.conv_dgrad(dy.values, w.values, x_shape, pad, post, stride, dil, flip=flip)
    mag = ref.conv_dgrad(np.abs(dy.values), np.abs(w.values), x_shape, pad, post, stride, dil,
                         flip=flip)
    groups = x_shape[1] // w_shape[1]
    return run_conv(cd, dtype, op, dy, w, tuple(x_shape), want, mag,
                    w_shape[0] // groups * int(np.prod(w_shape[2:])), epilogue, layout)


def wgrad(cd, dtype, x_shape, w_shape, pad=None, stride=None, dil=None, post=None, flip=False,
          layout="packed", epilogue=None):
    pad, post, stride, dil = geometry(x_shape, pad, stride, dil, post)
    y_shape = list(ref.conv_fprop(np.zeros(x_shape), np.zeros(w_shape), pad, post, stride,
                                  dil).shape)
    x, dy = cd.input(x_shape, dtype, layout), cd.input(y_shape, dtype, layout)
    mode = CM.CONVOLUTION if flip else CM.CROSS_CORRELATION
    def op(g):
        dw = g.conv_wgrad(image=x.bind(g, "x"), loss=dy.bind(g, "dy"), pre_padding=pad,
                          post_padding=post, stride=stride, dilation=dil, name="wgrad",
                          convolution_mode=mode)
        return dw.set_dim(list(w_shape))
    op.kind = "conv_wgrad"
    want = ref.conv_wgrad(x.values, dy.values, w_shape, pad, post, stride, dil, flip=flip)
    mag = ref.conv_wgrad(np.abs(x.values), np.abs(dy.values), w_shape, pad, post, stride, dil,
                         flip=flip)
    return run_conv(cd, dtype, op, x, dy, tuple(w_shape), want, mag,
                    y_shape[0] * int(np.prod(y_shape[2:])), epilogue, layout)


def build_config(g, knobs):
    """g's plan on cudnn with these knob values (cuDNN frontend's create_execution_plan)."""
    g.validate()
    g.build_operation_graph()
    g.create_execution_plan([e.name for e in hipdnn.engines()].index(ENGINE), knobs)
    g.build_plans()
    assert g.get_engine_name() == ENGINE


# ---- convolutions ------------------------------------------------------------------------

GEOMETRIES = {
    "3x3_pad1": dict(x_shape=[2, 8, 7, 6], w_shape=[12, 8, 3, 3], pad=[1, 1]),
    "3x3_stride2": dict(x_shape=[2, 8, 9, 7], w_shape=[8, 8, 3, 3], pad=[1, 1], stride=[2, 2]),
    "1x1": dict(x_shape=[3, 16, 5, 4], w_shape=[8, 16, 1, 1]),
    "dilation2": dict(x_shape=[1, 8, 9, 8], w_shape=[8, 8, 3, 3], pad=[2, 2], dil=[2, 2]),
    "asymmetric_padding": dict(x_shape=[2, 8, 6, 7], w_shape=[8, 8, 3, 2], pad=[2, 0],
                               post=[0, 1]),
    "true_convolution": dict(x_shape=[1, 8, 6, 6], w_shape=[8, 8, 3, 3], pad=[1, 1], flip=True),
    "1d": dict(x_shape=[2, 8, 17], w_shape=[8, 8, 5], pad=[2]),
    "3d": dict(x_shape=[1, 8, 4, 5, 6], w_shape=[8, 8, 3, 3, 3], pad=[1, 1, 1]),
    "2_groups": dict(x_shape=[2, 16, 6, 5], w_shape=[8, 8, 3, 3], pad=[1, 1]),
    "depthwise": dict(x_shape=[2, 8, 6, 6], w_shape=[8, 1, 3, 3], pad=[1, 1]),
    "4_groups_3d": dict(x_shape=[1, 16, 4, 4, 5], w_shape=[8, 4, 3, 3, 3], pad=[1, 1, 1]),
}


@pytest.mark.gpu
@pytest.mark.parametrize("geo", list(GEOMETRIES))
def test_conv_fprop(cd, dtype, geo):
    log = fprop(cd, dtype, **GEOMETRIES[geo])
    assert any("engine config 0 " in m for m in log), log


@pytest.mark.gpu
@pytest.mark.parametrize("geo", list(GEOMETRIES))
def test_conv_dgrad(cd, dtype, geo):
    dgrad(cd, dtype, **GEOMETRIES[geo])


@pytest.mark.gpu
@pytest.mark.parametrize("geo", list(GEOMETRIES))
def test_conv_wgrad(cd, dtype, geo):
    wgrad(cd, dtype, **GEOMETRIES[geo])


@pytest.mark.gpu
def test_conv_fprop_channels_last(cd, dtype):
    fprop(cd, dtype, [2, 16, 6, 5], [8, 16, 3, 3], pad=[1, 1], layout="channels_last")


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(EPILOGUES))
def test_conv_fprop_with_epilogue(cd, dtype, name):
    # channels-last: cuDNN's runtime-fusion engines take no other layout (on an H200, cuDNN
    # 9.14 offered no engine config for a packed NCHW convolution + relu)
    log = fprop(cd, dtype, [2, 8, 6, 6], [16, 8, 3, 3], pad=[1, 1], epilogue=EPILOGUES[name],
                layout="channels_last")
    assert log is None or any("conv_fprop 'conv' + " in m for m in log), log


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["bias+relu", "relu"])
def test_conv_dgrad_and_wgrad_with_epilogue(cd, dtype, name):
    dgrad(cd, dtype, [2, 8, 6, 5], [8, 8, 3, 3], pad=[1, 1], epilogue=EPILOGUES[name],
          layout="channels_last")
    wgrad(cd, dtype, [2, 8, 6, 5], [8, 8, 3, 3], pad=[1, 1], epilogue=EPILOGUES["relu"],
          layout="channels_last")


@pytest.mark.gpu
def test_a_runtime_scalar_is_passed_by_value(cd, dtype):
    x = cd.input([2, 8, 5, 5], dtype, "channels_last")  # as the fused epilogues above
    w = cd.input([8, 8, 3, 3], dtype, "channels_last")
    g = cd.graph(dtype)
    y = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], name="conv")
    s = g.tensor(name="s", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=hipdnn.data_type.FLOAT,
                 is_pass_by_value=True)
    scale = Numerics.input(cd, [1, 1, 1, 1], "fp32", values=np.full([1, 1, 1, 1], 0.25))
    scale.tensor = s
    out = cd.output(g.mul(y, s, name="scale"), [2, 8, 5, 5], dtype, "channels_last")
    built = fp32_fusion_built(g, dtype)
    if built is None:
        return
    cd.execute(g, [x, w, scale, out], build=not built)
    want = 0.25 * ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1])
    mag = ref.conv_fprop(np.abs(x.values), np.abs(w.values), [1, 1], [1, 1], [1, 1], [1, 1])
    assert_product_close(out, want, graph_tolerance(["conv_fprop", "pointwise"], dtype), 72, mag)


@pytest.mark.gpu
def test_an_int8_convolution_computes_exactly_in_int32(cd):
    # cuDNN frontend's test_conv_int8: int8 x and w, int32 compute, an identity to int32
    rng = np.random.default_rng(8)
    x = cd.input([2, 8, 6, 6], "i8", "channels_last", values=rng.integers(-127, 128, [2, 8, 6, 6]))
    w = cd.input([4, 8, 3, 3], "i8", "channels_last", values=rng.integers(-127, 128, [4, 8, 3, 3]))
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.INT8,
                       intermediate_data_type=hipdnn.data_type.INT32,
                       compute_data_type=hipdnn.data_type.INT32)
    y = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], name="conv")
    y = g.identity(y, name="identity")
    y.set_data_type(hipdnn.data_type.INT32)
    out = cd.output(y, [2, 4, 6, 6], "i32", "channels_last")
    log = cudnn_log(lambda: cd.execute(g, [x, w, out]))
    assert any("conv_fprop 'conv' + identity 'identity'" in m for m in log), log
    want = ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1])
    np.testing.assert_array_equal(out.decoded(), want)


# ---- matmul --------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("a_shape,b_shape,epilogue", [
    ([24, 40], [40, 16], None), ([3, 17, 24], [3, 24, 9], None), ([1, 17, 24], [24, 9], None),
    ([16, 32], [32, 24], "bias+relu")])
def test_matmul(cd, dtype, a_shape, b_shape, epilogue):
    a, b = cd.input(a_shape, dtype), cd.input(b_shape, dtype)
    g = cd.graph(dtype)
    y = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    want = np.matmul(a.values, b.values)
    mag = np.abs(a.values) @ np.abs(b.values)
    extra, ops = [], ["matmul"]
    if epilogue:
        bias = cd.input([1, want.shape[-1]], dtype)
        y = g.relu(g.bias(y, bias.bind(g, "bias"), name="bias"), name="act")
        want, extra = ref.relu(want + bias.values), [bias]
        ops.append("pointwise")
    out = cd.output(y, want.shape, dtype)
    if dtype == "fp32":  # cuDNN's matmul engines compute fp32 as TF32 (cudnn_graph.c)
        y.set_output(True)
        assert reason(g) == (f"{ENGINE}: matmul 'mm': fp32 operands; cuDNN's matmul engines "
                             "compute them as TF32, and hipdnn's fp32 is IEEE fp32 (the blaslt "
                             "and hip engines run it)"), reason(g)
        return
    cd.execute(g, [a, b] + extra + [out])
    assert_product_close(out, want, graph_tolerance(ops, dtype), a_shape[-1], mag)


@pytest.mark.gpu
def test_a_plan_runs_on_a_handle_other_than_the_one_that_built_it(cd):
    """Built on the graph's handle, executed on a new one (as a caller running on its own
    stream does): that handle's cuDNN handle is made at execute, not assumed."""
    cd.handle = hipdnn.Handle()
    test_matmul(cd, "fp16", [2, 9, 16], [2, 16, 8], True)


# ---- attention ----------------------------------------------------------------------------
# cuDNN's attention engines take fp16 and bf16; the fake's computes the operation graph the
# plugin makes (matmuls, GEN_INDEX / compare / select masks, reductions) in float64.

HALVES = ["fp16", "bf16"]
ALIGN = hipdnn.diagonal_alignment


class Attention(sdpa_tests.Case):
    """test_sdpa's attention problem at sizes for cuDNN's engines: head dim 64, odd
    sequence lengths, scale 1 / sqrt(d) unless one is given."""

    def __init__(self, b=2, hq=2, sq=17, skv=33, d=64, scale=None, **kw):
        super().__init__(b=b, hq=hq, sq=sq, skv=skv, d=d,
                         scale=d ** -0.5 if scale is None else scale, **kw)


def sdpa_inputs(nx, dtype, c):
    """q, k, v and the bias (or None) of c."""
    return (nx.input([c.b, c.hq, c.sq, c.d], dtype, c.layout),
            nx.input([c.b, c.hk, c.skv, c.d], dtype, c.layout),
            nx.input([c.b, c.hv, c.skv, c.dv], dtype, c.layout),
            nx.input(c.bias, dtype) if c.bias is not None else None)


def sdpa_graph(nx, dtype, c, stats=True, scale_as="float", inputs=None):
    """(g, inputs, outputs, (o, stats) of the float64 reference) of sdpa on c, on `inputs`
    (sdpa_inputs) or new ones; scale_as "float" (a graph constant) or "by_value" (a host
    scalar given at execute)."""
    q, k, v, bias = inputs or sdpa_inputs(nx, dtype, c)
    g = nx.graph(dtype)
    ins, kw = [q, k, v], c.kwargs()
    if bias is not None:
        ins.append(bias)
        kw["bias"] = bias.bind(g, "bias")
    scale = float(np.float32(c.scale))
    kw["attn_scale"] = c.scale
    if scale_as == "by_value":
        arr = np.array([scale], np.float32).reshape(1, 1, 1, 1)
        op = Operand(arr, arr, np.ones(arr.shape, bool), STORAGES["fp32"], arr.astype(np.float64))
        op.tensor = g.tensor(name="scale", dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                             is_pass_by_value=True, data_type=hipdnn.data_type.FLOAT)
        ins.append(op)
        kw["attn_scale"] = op.tensor
    o, st = g.sdpa(q.bind(g, "q"), k.bind(g, "k"), v.bind(g, "v"), generate_stats=stats,
                   name="attn", **kw)
    want = ref.sdpa(q.values, k.values, v.values, scale, bias.values if bias else None,
                    c.allowed())
    outs = [nx.output(o, want[0].shape, dtype, c.layout)]
    if stats:
        outs.append(nx.output(st, want[1].shape, "fp32"))
    return g, ins, outs, want


def run_sdpa(cd, dtype, c, stats=True, scale_as="float"):
    """sdpa on cudnn against the float64 reference at DESIGN tolerances; cudnn's log."""
    g, ins, outs, (want_o, want_stats) = sdpa_graph(cd, dtype, c, stats, scale_as)
    log = cudnn_log(lambda: cd.execute(g, ins + outs))
    assert g.get_engine_name() == ENGINE
    cd.assert_close(outs[0], want_o, tolerance("sdpa", dtype))
    if stats:
        sdpa_tests.check_stats(outs[1], want_stats)
    return log


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
def test_sdpa(cd, dtype):
    log = run_sdpa(cd, dtype, Attention())
    assert any("sdpa 'attn', engine config 0 " in m for m in log), log


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
def test_sdpa_without_stats(cd, dtype):
    run_sdpa(cd, dtype, Attention(causal=True), stats=False)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
@pytest.mark.parametrize("sizes", [(17, 33), (40, 40), (1, 70)], ids=["sq<skv", "square", "decode"])
def test_sdpa_causal(cd, dtype, causal, sizes):
    sq, skv = sizes
    run_sdpa(cd, dtype, Attention(sq=sq, skv=skv, causal=causal == "top_left",
                                  causal_br=causal == "bottom_right"))


@pytest.mark.gpu
@pytest.mark.parametrize("align", [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], ids=["tl", "br"])
@pytest.mark.parametrize("left,right", [(7, 0), (9, 4), (None, 5), (6, None)])
def test_sdpa_band(cd, align, left, right):
    # a sliding window (left) with the causal bound (right 0), a band, and each bound alone
    run_sdpa(cd, "bf16", Attention(sq=30, skv=45, left=left, right=right, align=align))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("bias", [[2, 2, 17, 33], [1, 2, 17, 33], [1, 1, 17, 33]],
                         ids=["full", "per_head", "shared"])
def test_sdpa_bias(cd, dtype, bias):
    run_sdpa(cd, dtype, Attention(bias=bias))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("heads", [(8, 2, 2), (4, 1, 1)], ids=["gqa", "mqa"])
def test_sdpa_grouped_heads(cd, dtype, heads):
    hq, hk, hv = heads
    run_sdpa(cd, dtype, Attention(b=1, hq=hq, hk=hk, hv=hv, causal=True))


@pytest.mark.gpu
def test_sdpa_bshd_layout_and_a_scale_given_at_execute(cd):
    run_sdpa(cd, "fp16", Attention(hq=3, sq=24, skv=24, layout="bshd", scale=0.3),
             scale_as="by_value")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
def test_sdpa_on_cudnn_and_on_another_engine_agree(cd, dtype):
    """The same graph on cudnn and on hip (reference_cpu where no hip engine is loaded:
    over the fakes), each within its tolerance of the reference and so of each other."""
    names = [e.name for e in hipdnn.engines()]
    other = ("hip", DeviceNumerics(cd.rng)) if "hip" in names else ("reference_cpu",
                                                                      Numerics(cd.rng))
    c = Attention(causal=True, bias=[1, 2, 17, 33])
    inputs = sdpa_inputs(cd, dtype, c)
    got = {}
    for engine, numerics in ((ENGINE, cd), other):
        numerics.engine = engine
        g, ins, outs, _ = sdpa_graph(numerics, dtype, c, inputs=inputs)
        numerics.execute(g, ins + outs)
        assert g.get_engine_name() == engine
        got[engine] = outs[0].decoded()
    assert_close(got[ENGINE], got[other[0]], 2 * tolerance("sdpa", dtype),
                 f"cudnn vs {other[0]}")


def attention_graph(io=hipdnn.data_type.HALF, o_type=None, backward=False, bias=False, **kw):
    g = hipdnn.pygraph(io_data_type=io, compute_data_type=hipdnn.data_type.FLOAT)
    if bias:
        kw["bias"] = g.tensor(name="bias", dim=[1, 2, 8, 9])
    q = g.tensor(name="q", dim=[1, 2, 8, 64])
    k = g.tensor(name="k", dim=[1, 2, 9, 64])
    v = g.tensor(name="v", dim=[1, 2, 9, kw.pop("dv", 64)])
    if backward:
        o = g.tensor(name="o", dim=[1, 2, 8, 64])
        do = g.tensor(name="do", dim=[1, 2, 8, 64])
        st = g.tensor(name="st", dim=[1, 2, 8, 1], data_type=hipdnn.data_type.FLOAT)
        for t in g.sdpa_backward(q, k, v, o, do, st, attn_scale=0.5, name="attn_bwd", **kw):
            t.set_output(True)
        return g
    o, _ = g.sdpa(q, k, v, attn_scale=0.5, generate_stats=False, name="attn", **kw)
    o.set_output(True)
    if o_type is not None:
        o.set_data_type(o_type)
    return g


def padded_attention_graph():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       compute_data_type=hipdnn.data_type.FLOAT)
    lens = [g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                     data_type=hipdnn.data_type.INT32) for n in ("seq_len_q", "seq_len_kv")]
    q, k, v = (g.tensor(name=n, dim=[1, 2, 8, 64]) for n in "qkv")
    o, _ = g.sdpa(q, k, v, attn_scale=0.5, generate_stats=False, name="attn",
                  use_padding_mask=True, seq_len_q=lens[0], seq_len_kv=lens[1])
    o.set_output(True)
    return g


def paged_attention_graph():
    # k and v in 4 blocks of 4 keys each (2 a sample), read through [B, 1, blocks, 1] tables
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       compute_data_type=hipdnn.data_type.FLOAT)
    lens = [g.tensor(name=n, dim=[2, 1, 1, 1], stride=[1, 1, 1, 1],
                     data_type=hipdnn.data_type.INT32) for n in ("seq_len_q", "seq_len_kv")]
    tables = [g.tensor(name=n, dim=[2, 1, 2, 1], stride=[2, 2, 1, 1],
                       data_type=hipdnn.data_type.INT32) for n in ("table_k", "table_v")]
    q = g.tensor(name="q", dim=[2, 2, 8, 64])
    k, v = (g.tensor(name=n, dim=[4, 2, 4, 64]) for n in "kv")
    o, _ = g.sdpa(q, k, v, attn_scale=0.5, generate_stats=False, name="attn",
                  use_padding_mask=True, seq_len_q=lens[0], seq_len_kv=lens[1],
                  paged_attention_k_table=tables[0], paged_attention_v_table=tables[1],
                  paged_attention_max_seq_len_kv=8)
    o.set_output(True)
    return g


def dropout_attention_graph():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       compute_data_type=hipdnn.data_type.FLOAT)
    seed, offset = (g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                             data_type=hipdnn.data_type.INT64) for n in ("seed", "offset"))
    q = g.tensor(name="q", dim=[1, 2, 8, 64])
    o, _ = g.sdpa(q, q, q, attn_scale=0.5, generate_stats=False, name="attn",
                  dropout=(0.1, seed, offset))
    o.set_output(True)
    return g


def ragged_attention_graph(backward=False):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       compute_data_type=hipdnn.data_type.FLOAT)
    off = g.tensor(name="offsets", dim=[3, 1, 1, 1], data_type=hipdnn.data_type.INT64)
    lens = [g.tensor(name=n, dim=[2, 1, 1, 1], data_type=hipdnn.data_type.INT32)
            for n in ("seq_len_q", "seq_len_kv")]
    q = g.tensor(name="q", dim=[2, 2, 8, 64], stride=[1024, 64, 128, 1]).set_ragged_offset(off)
    kw = dict(attn_scale=0.5, use_padding_mask=True, seq_len_q=lens[0], seq_len_kv=lens[1])
    if backward:
        st = g.tensor(name="stats", dim=[2, 2, 8, 1], data_type=hipdnn.data_type.FLOAT)
        for t in g.sdpa_backward(q, q, q, q, q, st, name="attn_bwd", **kw):
            t.set_output(True)
        return g
    o, _ = g.sdpa(q, q, q, generate_stats=False, name="attn", **kw)
    o.set_output(True)
    return g


@pytest.mark.gpu
@pytest.mark.parametrize("make,said", [
    (lambda: attention_graph(io=hipdnn.data_type.FLOAT),
     "sdpa 'attn': 'q' is float32; cuDNN's attention engines take fp16 or bf16 q, k and v of one "
     "type"),
    (lambda: attention_graph(o_type=hipdnn.data_type.FLOAT),
     "sdpa 'attn': o 'attn::O' is float32; cuDNN's attention engines write o to memory in q's "
     "data type (float16)"),
    (padded_attention_graph,
     "sdpa 'attn': a padding mask; cuDNN leaves o and stats of the query rows past seq_len_q "
     "unspecified"),
    (lambda: attention_graph(backward=True, use_alibi_mask=True),  # test_cudnn_sdpa_backward
     "sdpa_backward 'attn_bwd': an ALiBi mask; cudnn does not translate it yet"),
    (lambda: attention_graph(use_causal_mask_bottom_right=True, bias=True),
     "sdpa 'attn': a bottom-right causal mask with a bias; cuDNN frontend refuses it"),
    (lambda: attention_graph(use_causal_mask=True, dv=60),
     "sdpa 'attn': head dims that are not multiples of 8; cuDNN frontend refuses it"),
    (lambda: attention_graph(use_alibi_mask=True),
     "sdpa 'attn': an ALiBi mask; cudnn does not translate it yet"),
    (paged_attention_graph, "sdpa 'attn': paged K/V caches; cudnn does not translate them yet"),
    (dropout_attention_graph, "sdpa 'attn': dropout; cudnn does not translate it yet"),
    (ragged_attention_graph, "sdpa 'attn': 'q' is ragged (a ragged offset); cudnn does not "
                             "translate ragged tensors yet"),
    (lambda: ragged_attention_graph(backward=True),
     "sdpa_backward 'attn_bwd': 'q' is ragged (a ragged offset); cudnn does not translate"),
], ids=["fp32", "o_type", "padding", "backward", "bottom_right_and_bias", "head_dim_60", "alibi",
        "paged", "dropout", "ragged", "ragged_backward"])
def test_attention_it_does_not_translate_is_declined_naming_the_node(cd, make, said):
    why = reason(make())
    assert why and why.startswith(f"{ENGINE}: ") and said in why, why


# ---- the same graph on cudnn and on reference_cpu ------------------------------------------

@pytest.mark.gpu
def test_cudnn_and_reference_cpu_agree_on_conv_bias_relu(cd, dtype):
    x, w = cd.input([2, 8, 6, 6], dtype), cd.input([16, 8, 3, 3], dtype)
    b = cd.input([1, 16, 1, 1], dtype)
    outs = {}
    for engine, numerics in ((ENGINE, cd), ("reference_cpu", Numerics(cd.rng))):
        numerics.engine = engine
        g = numerics.graph(dtype)
        y = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], name="conv")
        y = g.relu(g.bias(y, b.bind(g, "bias"), name="bias"), name="act")
        out = numerics.output(y, [2, 16, 6, 6], dtype)
        numerics.execute(g, [x, w, b, out])
        assert g.get_engine_name() == engine
        outs[engine] = out.decoded()
    tol = graph_tolerance(["conv_fprop", "pointwise"], dtype)
    assert_close(outs[ENGINE], outs["reference_cpu"], 2 * tol, "cudnn vs reference_cpu")


# ---- knobs, workspace, alignment -------------------------------------------------------------

def conv_graph(dtype="fp16", data_type=None):
    g = hipdnn.pygraph(io_data_type=data_type or STORAGES[dtype].data_type,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    y = g.conv_fprop(g.tensor(name="x", dim=[2, 8, 6, 6]), g.tensor(name="w", dim=[8, 8, 3, 3]),
                     padding=[1, 1], name="conv")
    return g, y


@pytest.mark.gpu
def test_the_engine_lists_its_knob(cd):
    g, y = conv_graph()
    y.set_output(True)
    g.validate()
    g.build_operation_graph()
    knobs = g.get_knobs_for_engine([e.name for e in hipdnn.engines()].index(ENGINE))
    assert [(k.type, k.min_value, k.max_value) for k in knobs] == [(KNOB_CONFIG, 0, 15)]


@pytest.mark.gpu
def test_the_knob_chooses_among_the_configs_that_build_a_plan(cd):
    log = fprop(cd, "fp16", [2, 8, 6, 6], [8, 8, 3, 3], pad=[1, 1], knobs={KNOB_CONFIG: 1})
    assert any("engine config 1 " in m for m in log), log
    if FAKE:  # the fake's engines 7, 3, 11 (never builds), 42: index 2 skips engine 11
        log = fprop(cd, "fp16", [2, 8, 6, 6], [8, 8, 3, 3], pad=[1, 1], knobs={KNOB_CONFIG: 2})
        assert any("engine config 2 (heuristic's #3 of 4, engine 42)" in m for m in log), log


@pytest.mark.gpu
def test_a_config_past_those_that_build_is_refused(cd):
    try:
        fprop(cd, "fp16", [2, 8, 6, 6], [8, 8, 3, 3], pad=[1, 1], knobs={KNOB_CONFIG: 15})
    except hipdnn.HipdnnError as e:
        assert "knob 12 (engine config) = 15, but " in str(e), e
        if FAKE:
            assert "3 of the 4 engine configs cuDNN's heuristic offers" in str(e), e
    else:
        assert not FAKE, "the fake builds 3 plans: index 15 must be refused"


@pytest.mark.gpu
def test_the_plan_asks_for_its_configs_workspace(cd):
    g, y = conv_graph()
    y.set_output(True)
    g.set_preferred_engine(ENGINE)
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == ENGINE
    if FAKE:  # its best engine takes 1 MiB
        assert g.get_workspace_size() == 1 << 20


@pytest.mark.gpu
def test_a_tensor_not_16_byte_aligned_is_refused_naming_it(cd):
    dtype = "fp16"
    storage = STORAGES[dtype]
    shape = [1, 8, 4, 4]
    base = storage.full((int(np.prod(shape)) + 1,))
    view = base[1:].reshape(shape)
    view[...] = storage.encode(cd.random(shape))
    mask = np.zeros(base.shape, bool)
    mask[1:] = True
    x = Operand(view, base, mask, storage, storage.decode(view))
    w = cd.input([8, 8, 3, 3], dtype)
    g = cd.graph(dtype)
    y = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], name="conv")
    out = cd.output(y, shape, dtype)
    with pytest.raises(hipdnn.HipdnnError, match="tensor 'x' .* is not 16-byte aligned"):
        cd.execute(g, [x, w, out])


# ---- ranking and choosing ----------------------------------------------------------------------

@pytest.mark.gpu
def test_the_engine_ranks_below_hip_and_blaslt_and_is_chosen_by_name_or_left_out(cd):
    by_name = {e.name: e for e in hipdnn.engines()}
    assert by_name[ENGINE].memory_space == hipdnn.memory_space.DEVICE
    assert 0 < by_name[ENGINE].priority < 50
    for other in ("hip", "blaslt"):
        if other in by_name:
            assert by_name[other].priority > by_name[ENGINE].priority
    g, y = conv_graph()
    y.set_output(True)
    g.set_preferred_engine(ENGINE)
    g.deselect_engines([ENGINE])
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() != ENGINE
    assert dict(g.support_report())[ENGINE] == "deselected by the user"


# ---- what it declines, and why ---------------------------------------------------------------

def reason(g):
    """cudnn's reason for declining g (None if it runs it)."""
    g.build([hipdnn.heur_mode.A])
    return dict(g.support_report())[ENGINE]


@pytest.mark.gpu
def test_a_node_it_does_not_translate_is_declined_naming_it(cd):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[4, 8, 3, 3])
    y = g.reduction(x, mode=hipdnn.reduction_mode.ADD, name="sum")
    y.set_dim([4, 1, 1, 1]).set_output(True)
    why = reason(g)
    assert why and why.startswith(f"{ENGINE}: reduction 'sum': not translated to cuDNN yet"), why


@pytest.mark.gpu
def test_building_a_graph_again_does_not_ask_cudnns_heuristic_again_whether_it_runs(cd):
    # every build asks every engine whether it runs the graph; the engine remembers
    # cuDNN's answer for the graph's bytes, so a second build queries the heuristic only
    # for its plan (the fake counts the queries)
    if not FAKE:
        pytest.skip("counts the fake cuDNN's heuristic queries")
    queries = ctypes.CDLL(os.environ["HIPDNN_CUDNN_LIBRARY"]).fakeCudnnHeuristicQueries
    counts = []
    for _ in range(3):  # a graph no other test builds: its first build asks cuDNN
        g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                           compute_data_type=hipdnn.data_type.FLOAT)
        g.matmul(g.tensor(name="a", dim=[1, 40, 24]), g.tensor(name="b", dim=[1, 24, 56]),
                 name="mm_asked_once").set_output(True)
        g.set_preferred_engine(ENGINE)
        before = queries()
        g.build([hipdnn.heur_mode.A])
        assert g.get_engine_name() == ENGINE
        counts.append(queries() - before)
    assert counts[0] == counts[1] + 1 and counts[1] == counts[2] >= 1, counts
    whys = []
    for _ in range(2):  # declined: the same reason, remembered
        g, y = conv_graph(data_type=hipdnn.data_type.DOUBLE)
        y.set_output(True)
        whys.append(reason(g))
    assert whys[0] == whys[1] and "fp32, fp16 and bf16" in whys[0], whys


@pytest.mark.gpu
def test_a_double_convolution_is_declined_with_the_reason(cd):
    g, y = conv_graph(data_type=hipdnn.data_type.DOUBLE)
    y.set_output(True)
    why = reason(g)
    assert why and "cudnn translates fp32, fp16 and bf16 convolutions and matmuls" in why, why


@pytest.mark.gpu
def test_an_epilogue_cudnn_rejects_is_declined_with_cudnns_message(cd):
    g, y = conv_graph()
    y = g.sin(y, name="wave")
    y.set_output(True)
    why = reason(g)
    if why is None:
        assert not FAKE, "the fake fuses no sin"
        return
    assert why.startswith(f"{ENGINE}: "), why
    assert "conv_fprop 'conv' + sin 'wave'" in why, why
    if FAKE:
        assert ("CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN (3001): fake cuDNN: no engine fuses "
                "pointwise mode 18") in why, why


@pytest.mark.gpu
def test_a_matmul_broadcasting_batch_dims_is_declined(cd):
    # cuDNN's matmul computed batch 0 alone of [2, 17, 24] @ [24, 9] on an H200 (the rest of
    # C unwritten): cudnn declines it, and hipdnn's own engines run it.
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       compute_data_type=hipdnn.data_type.FLOAT)
    y = g.matmul(g.tensor(name="a", dim=[2, 17, 24]), g.tensor(name="b", dim=[24, 9]), name="mm")
    y.set_output(True)
    why = reason(g)
    assert why == (f"{ENGINE}: matmul 'mm': 'b' has 1 batch, the product 2; cuDNN's matmul "
                   "does not broadcast batch dims"), why


@pytest.mark.gpu
def test_two_convolutions_in_one_graph_are_declined_with_cudnns_message(cd):
    g, y = conv_graph()
    z = g.conv_fprop(y, g.tensor(name="w2", dim=[8, 8, 3, 3]), padding=[1, 1], name="conv2")
    z.set_output(True)
    why = reason(g)
    if why is None:
        assert not FAKE
        return
    assert why.startswith(f"{ENGINE}: ") and "conv2" in why, why
    if FAKE:
        assert "no engine runs a graph of 2 convolutions" in why, why


# ---- over the fakes, in CI ---------------------------------------------------------------------

def gpu_tests_pass_over_the_fake_libraries(test_file):
    """Runs test_file's `-m gpu` tests in a child over the fake driver and fake cuDNN."""
    for lib in (FAKE_DRIVER / "libcuda.so.1", FAKE_CUDNN / "libcudnn.so.9", PLUGIN):
        assert lib.is_file(), f"build the targets ({lib})"
    if FAKE:
        pytest.skip("already inside the run over the fakes")
    env = fake_env(HIPDNN_TEST_FAKE_CUDNN="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p",
                           "no:cacheprovider", test_file], cwd=str(REPO), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out[-6000:]
    summary = out.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, summary


def test_the_gpu_tests_pass_over_the_fake_libraries():
    gpu_tests_pass_over_the_fake_libraries(__file__)


# ---- loading ---------------------------------------------------------------------------------

LOAD = """
import json, hipdnn, numpy as np
hipdnn.set_engine_plugin_paths([ENGINES + "/libhipdnn_reference_cpu.so", PLUGIN],
                               hipdnn.plugin_loading_mode.ABSOLUTE)
skipped = {p.rsplit("/", 1)[-1]: r for p, r in hipdnn.skipped_engine_plugins()}
x = np.array([[-1.0, 0.5, 2.0]], np.float32)
with hipdnn.Graph() as g:
    g.relu(x)
print(json.dumps({"skipped": skipped, "engines": [e.name for e in hipdnn.engines()],
                  "relu": g(x).tolist(), "ran_on": g.engine_name}))
"""


def load(env):
    """What a child with env loads: {"skipped": {file: reason}, "engines": [...], "relu":
    a relu run on what remains, "ran_on": its engine}; and its stderr."""
    code = f"ENGINES = {str(ENGINES)!r}\nPLUGIN = {str(PLUGIN)!r}\n" + textwrap.dedent(LOAD)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def assert_declined(out, said):
    why = out["skipped"].get(PLUGIN.name)
    assert why and why.startswith(f"declined to load: {ENGINE}: ") and said in why, out
    assert out["engines"] == ["reference_cpu"] and out["relu"] == [[0.0, 0.5, 2.0]], out


def test_the_plugin_loads_over_the_fakes():
    out, _ = load(fake_env())
    assert out["engines"] == [ENGINE, "reference_cpu"] and PLUGIN.name not in out["skipped"], out
    assert out["ran_on"] == "reference_cpu"  # host arrays: the host engine


def test_a_missing_library_declines_loading_naming_it(tmp_path):
    missing = tmp_path / "libcudnn.so.9"
    out, _ = load(fake_env(library=False, HIPDNN_CUDNN_LIBRARY=str(missing)))
    assert_declined(out, f"no cuDNN: $HIPDNN_CUDNN_LIBRARY: {missing}")


def test_a_garbage_library_declines_loading_naming_it(tmp_path):
    garbage = tmp_path / "libcudnn.so.9"
    garbage.write_bytes(b"not a shared library\n" * 64)
    out, _ = load(fake_env(library=False, HIPDNN_CUDNN_LIBRARY=str(garbage)))
    assert_declined(out, f"no cuDNN: $HIPDNN_CUDNN_LIBRARY: {garbage}")


def test_another_library_declines_loading_naming_the_missing_symbol():
    other = FAKE_DRIVER / "libcuda.so.1"
    out, _ = load(fake_env(library=False, HIPDNN_CUDNN_LIBRARY=str(other)))
    assert_declined(out, f"{other} has no cudnnGetVersion")


def test_without_any_cudnn_the_reason_lists_where_it_looked():
    found = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True).stdout
    if "libcudnn.so.9" in found or any(Path(p).exists() for p in (
            "/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib/libcudnn.so.9")):
        pytest.skip("this machine has a cuDNN on the loader's path or in /usr/local/cuda")
    env = fake_env(library=False)
    env.pop("HIPDNN_CUDNN_LIBRARY", None)
    out, _ = load(env)
    assert_declined(out, "no cuDNN found (looked for libcudnn.so.9 on the loader path, in "
                         "NVIDIA's wheels under ")


def test_a_library_too_old_declines_loading_naming_its_version():
    out, _ = load(fake_env(FAKE_CUDNN_OLD="1"))
    assert_declined(out, "libcudnn.so.9 is cuDNN 8.9.7 (cudnnGetVersion 8907); cudnn needs 9.0 "
                         "or newer")


def test_without_a_device_it_declines_loading():
    out, _ = load(fake_env(FAKE_CUDA_NO_DEVICE="1"))
    assert_declined(out, "no CUDA device: cuInit returned 100 (CUDA_ERROR_NO_DEVICE)")


def test_on_this_machine_it_loads_or_declines_quietly():
    env = {k: v for k, v in os.environ.items() if k not in ("HIPDNN_PLUGIN_DIR",
                                                           "HIPDNN_LOG_LEVEL")}
    code = ("import hipdnn, json\n"
            "print(json.dumps({'engines': [e.name for e in hipdnn.engines()], 'skipped': "
            "{p.rsplit('/', 1)[-1]: r for p, r in hipdnn.skipped_engine_plugins()}}))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=120, cwd=str(REPO))
    assert proc.returncode == 0 and ENGINE not in proc.stderr, proc.stderr
    out = json.loads(proc.stdout)
    assert "reference_cpu" in out["engines"]
    if ENGINE not in out["engines"]:
        assert out["skipped"][PLUGIN.name].startswith(f"declined to load: {ENGINE}: "), out


def test_the_plugin_links_neither_the_driver_nor_cudnn():
    readelf = subprocess.run(["readelf", "-d", str(PLUGIN)], capture_output=True, text=True)
    if readelf.returncode != 0:
        pytest.skip("no readelf")
    needed = [line for line in readelf.stdout.splitlines() if "(NEEDED)" in line]
    assert needed and not any("cudnn" in n or "libcuda" in n for n in needed), needed
    nm = subprocess.run(["nm", "-D", "--defined-only", str(PLUGIN)], capture_output=True,
                        text=True, check=True).stdout
    names = [line.split()[-1] for line in nm.splitlines() if line.strip()]
    assert names and all(n.startswith("hipdnn") for n in names), names
