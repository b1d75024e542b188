"""The GPU engine's convolutions (forward, data and weight gradients) and their fused
epilogues against float64 NumPy (DESIGN tolerances): fp32 / fp16 / bf16 storage, 1D / 2D /
3D, padding (asymmetric too), stride, dilation, true convolution, channels-last (the
tensor-core path) and NCHW operands, grouped and depthwise convolutions, split-k, and the
pointwise nodes after them (bias, batchnorm-inference scale and shift, relu, residual add,
a second output before the activation) run in their kernel; a ResNet bottleneck block end
to end.

Every run copies each operand's whole allocation to the device and back
(conftest.DeviceNumerics): outputs are checked to be fully written and nothing else,
inputs unchanged.  Skipped with the reason without a GPU; CI runs this file on the
engine's host emulation (tests/test_gpu_emulated.py).
"""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import GPU_ENGINE
from test_gpu_matmul import (BACKWARD_MODES, assert_product_close, compute_capability, k_split,
                             on_tensor_cores, ran, stages)
from tolerances import graph_tolerance

pytestmark = pytest.mark.gpu
CM = hipdnn.convolution_mode


def conv_geometry(x_shape, pad, stride, dil, post):
    """The forward convolution's pre / post padding, stride and dilation, defaults filled."""
    nsp = len(x_shape) - 2
    pad = pad or [0] * nsp
    return (pad, post if post is not None else pad, stride or [1] * nsp, dil or [1] * nsp)


def run_and_check(gpu, g, dtype, op, operands, outs, layout, k, magnitude):
    """Each (tensor, reference, op, extra inputs) of outs bound to an output in `layout`, the
    graph run, each output checked against its reference (k terms a product); the log."""
    operands, checks = list(operands), []
    for item in outs:
        tensor, want, out_op = item[0], item[1], item[2]
        operands += item[3] if len(item) > 3 else []
        out = gpu.output(tensor, want.shape, dtype, layout)
        operands.append(out)
        checks.append((out, want, out_op))
    log = ran(lambda: gpu.execute(g, operands))
    for out, want, out_op in checks:
        tol = graph_tolerance([op] + ([out_op] if out_op != op else []), dtype)
        assert_product_close(out, want, tol, k, magnitude)
    return log


def conv_check(gpu, dtype, x_shape, w_shape, pad=None, stride=None, dil=None, post=None,
               layout="channels_last", w_layout=None, flip=False, epilogue=None):
    """y = conv_fprop(x, w) (then epilogue(g, y, ref_y) -> [(tensor, ref, op, extra)])."""
    pad, post, stride, dil = conv_geometry(x_shape, pad, stride, dil, post)
    x = gpu.input(x_shape, dtype, layout)
    w = gpu.input(w_shape, dtype, w_layout or layout)
    g = gpu.graph(dtype)
    y = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), pre_padding=pad, post_padding=post,
                     stride=stride, dilation=dil, name="conv",
                     convolution_mode=CM.CONVOLUTION if flip else CM.CROSS_CORRELATION)
    want_y = ref.conv_fprop(x.values, w.values, pad, post, stride, dil, flip=flip)
    magnitude = ref.conv_fprop(np.abs(x.values), np.abs(w.values), pad, post, stride, dil,
                               flip=flip)
    outs = epilogue(g, y, want_y) if epilogue else [(y, want_y, "conv_fprop")]
    return run_and_check(gpu, g, dtype, "conv_fprop", [x, w], outs, layout,
                         int(np.prod(w_shape[1:])), magnitude)


# ---- geometry --------------------------------------------------------------------------------

GEOMETRIES = {
    "3x3_pad1": dict(x=[2, 16, 9, 10], w=[24, 16, 3, 3], pad=[1, 1]),
    "3x3_stride2": dict(x=[2, 16, 11, 9], w=[8, 16, 3, 3], pad=[1, 1], stride=[2, 2]),
    "1x1": dict(x=[3, 32, 7, 5], w=[40, 32, 1, 1]),
    "5x5_dilation2": dict(x=[1, 8, 13, 12], w=[16, 8, 5, 5], pad=[2, 3], dil=[2, 2]),
    "asymmetric_padding": dict(x=[2, 8, 6, 7], w=[8, 8, 3, 2], pad=[2, 0], post=[0, 1]),
    "1d": dict(x=[4, 16, 33], w=[24, 16, 5], pad=[2]),
    "3d": dict(x=[1, 8, 5, 6, 7], w=[16, 8, 3, 3, 3], pad=[1, 1, 1]),
    "odd_channels": dict(x=[2, 5, 8, 8], w=[7, 5, 3, 3], pad=[1, 1]),
}


@pytest.mark.parametrize("name", list(GEOMETRIES))
def test_geometry_channels_last(gpu, dtype, name):
    geo = GEOMETRIES[name]
    log = conv_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                     geo.get("dil"), geo.get("post"))
    tensor_cores = dtype != "fp32" and geo["x"][1] % 8 == 0
    assert on_tensor_cores(log) == tensor_cores, log


def test_a_plan_for_each_kernel_cfg_as_cudnn_frontend_builds_them(gpu):
    # cuDNN frontend's test_conv_relu_execution_plan_creation: a config for every KERNEL_CFG
    # value of every engine with that knob (those that cannot run the graph skipped), then
    # check_support and build_plans (the first that builds runs)
    pad, stride = [0, 1], [2, 3]
    x = gpu.input([4, 16, 11, 14], "fp16", "channels_last")
    w = gpu.input([24, 16, 3, 4], "fp16", "channels_last")
    g = gpu.graph("fp16")
    conv = g.conv_fprop(image=x.bind(g, "X"), weight=w.bind(g, "W"), padding=pad,
                        stride=stride, dilation=[1, 1])
    y = g.relu(name="relu", input=conv, lower_clip=0.5, upper_clip=0.55)
    want = ref.relu(ref.conv_fprop(x.values, w.values, pad, pad, stride, [1, 1]),
                    lower_clip=0.5, upper_clip=0.55)
    out = gpu.output(y, want.shape, "fp16", "channels_last")
    g.validate()
    g.build_operation_graph()
    configs, made = 0, set()  # made: the engines that made configs
    for engine in range(g.get_engine_count()):
        try:
            knobs = g.get_knobs_for_engine(engine)
        except RuntimeError:
            continue
        for knob in knobs:
            if knob.type == hipdnn.knob_type.KERNEL_CFG:
                for cfg in range(knob.min_value, knob.max_value + 1, knob.stride):
                    try:
                        g.create_execution_plan(engine, {hipdnn.knob_type.KERNEL_CFG: cfg})
                        configs += 1
                        made.add(hipdnn.engines()[engine].name)
                    except RuntimeError:
                        continue
    assert configs >= 3  # the GPU engine's choice, its general kernel, mma.sync's
    g.check_support()
    g.build_plans()
    # the first config that builds, in engine order as cuDNN frontend's loop makes them:
    # the cudnn engine's where it is loaded (a GPU machine), else the GPU engine's
    assert GPU_ENGINE in made and g.get_engine_name(0) in made, (made, g.get_engine_name(0))
    gpu.execute(g, [x, w, out], build=False)
    gpu.assert_close(out, want, graph_tolerance(["conv_fprop", "pointwise"], "fp16"))


@pytest.mark.parametrize("name", ["3x3_pad1", "3x3_stride2", "1d"])
def test_nchw_takes_the_general_kernel(gpu, dtype, name):
    geo = GEOMETRIES[name]
    log = conv_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                     geo.get("dil"), layout="packed")
    assert not on_tensor_cores(log), log


TILED = "first run of the fp32 register-tiled"


@pytest.mark.parametrize("name", list(GEOMETRIES))
@pytest.mark.parametrize("layout", ["packed", "channels_last"])
def test_fp32_forward_runs_the_register_tiled_kernel(gpu, name, layout):
    # x gathered element by element, NCHW or NHWC; w dense in the product's k: KRSC (the
    # channel innermost) or KCRS (the taps innermost: gm_program.h's taps_inner); k a
    # multiple of 4 (odd_channels' 45 is not: the general kernel)
    geo = GEOMETRIES[name]
    log = conv_check(gpu, "fp32", geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                     geo.get("dil"), geo.get("post"), layout=layout,
                     epilogue=ep_bias_relu(gpu, "fp32"))
    assert any(TILED in line for line in log) == (int(np.prod(geo["w"][1:])) % 4 == 0), log


@pytest.mark.parametrize("splits", [1, 3])
@pytest.mark.parametrize("flip", [False, True])
def test_fp32_resnet_like_forward_on_the_register_tiled_kernel(gpu, monkeypatch, splits, flip):
    # 392 output positions x 128 filters over k = 64 x 9 (72 stages), NCHW, KCRS: ragged
    # 64 x 64 tiles, a true convolution too (the taps read reversed), split-k
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", str(splits))
    log = conv_check(gpu, "fp32", [2, 64, 14, 14], [128, 64, 3, 3], [1, 1], layout="packed",
                     flip=flip)
    split = f", k split {splits} ways," if splits > 1 else " kernel"
    assert any(TILED + split in line for line in log), log


@pytest.mark.large
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_each_sm90_tile_over_more_tiles_than_multiprocessors(gpu, monkeypatch, bn):
    # HIPDNN_HIP_WGMMA_BN forces the sm_90 kernel's tile: 6 x 40 x 40 = 9600 output positions
    # are 75 row tiles, x 1 to 3 column tiles of K = 136 channels (a ragged last one), so a
    # persistent block (64, 128) walks several; 3x3 over 8 channels, k = 72 (2 k steps, the
    # last ragged) gathered from the padded image
    monkeypatch.setenv("HIPDNN_HIP_WGMMA_BN", str(bn))
    log = conv_check(gpu, "fp16", [6, 8, 40, 40], [136, 8, 3, 3], [1, 1])
    assert on_tensor_cores(log), log


def test_true_convolution(gpu, dtype):
    conv_check(gpu, dtype, [2, 16, 7, 7], [8, 16, 3, 3], [1, 1], flip=True)


def test_nchw_filter_with_channels_last_image(gpu, dtype):
    # w not dense in (r, s, c): the general kernel reads it through its strides
    log = conv_check(gpu, dtype, [2, 16, 6, 6], [8, 16, 3, 3], [1, 1], w_layout="packed")
    assert not on_tensor_cores(log), log


# ---- data gradient (conv_dgrad) ---------------------------------------------------------------

def dgrad_check(gpu, dtype, x_shape, w_shape, pad=None, stride=None, dil=None, post=None,
                layout="channels_last", flip=False, epilogue=None):
    """dx = conv_dgrad(dy, w), the forward convolution's geometry (then epilogue as in
    conv_check, on dx)."""
    pad, post, stride, dil = conv_geometry(x_shape, pad, stride, dil, post)
    y_shape = list(ref.conv_fprop(np.zeros(x_shape), np.zeros(w_shape), pad, post, stride,
                                  dil).shape)
    dy = gpu.input(y_shape, dtype, layout)
    w = gpu.input(w_shape, dtype, layout)
    g = gpu.graph(dtype)
    dx = g.conv_dgrad(loss=dy.bind(g, "dy"), filter=w.bind(g, "w"), pre_padding=pad,
                      post_padding=post, stride=stride, dilation=dil, name="dgrad",
                      convolution_mode=CM.CONVOLUTION if flip else CM.CROSS_CORRELATION)
    dx.set_dim(list(x_shape))
    want = ref.conv_dgrad(dy.values, w.values, x_shape, pad, post, stride, dil, flip=flip)
    magnitude = ref.conv_dgrad(np.abs(dy.values), np.abs(w.values), x_shape, pad, post, stride,
                               dil, flip=flip)
    outs = epilogue(g, dx, want) if epilogue else [(dx, want, "conv_dgrad")]
    groups = x_shape[1] // w_shape[1]
    log = run_and_check(gpu, g, dtype, "conv_dgrad", [dy, w], outs, layout,
                        w_shape[0] // groups * int(np.prod(w_shape[2:])), magnitude)
    plan = stages(log)
    assert len(plan) == 1 and "conv_dgrad" in plan[0], log  # one kernel, on the GPU engine
    return log


# data gradients on tensor cores: dy's channels (w's filters) a multiple of 64, dx's a
# multiple of 8 (ragged against the tile)
DGRAD_TENSOR_CORE_GEOMETRIES = {
    "3x3_pad1": dict(x=[2, 24, 9, 10], w=[64, 24, 3, 3], pad=[1, 1]),
    "3x3_stride2": dict(x=[2, 16, 11, 9], w=[64, 16, 3, 3], pad=[1, 1], stride=[2, 2]),
    "1x1_stride2": dict(x=[2, 8, 9, 8], w=[128, 8, 1, 1], stride=[2, 2]),
    "5x5_dilation2": dict(x=[1, 8, 13, 12], w=[64, 8, 5, 5], pad=[2, 3], dil=[2, 2]),
    "asymmetric_padding": dict(x=[2, 8, 6, 7], w=[64, 8, 3, 2], pad=[2, 0], post=[0, 1]),
    "1d": dict(x=[3, 16, 33], w=[64, 16, 5], pad=[2]),
    "3d": dict(x=[1, 8, 5, 6, 7], w=[64, 8, 3, 3, 3], pad=[1, 1, 1]),
}


def dgrad_on_tensor_cores(dtype, geo):
    return dtype != "fp32" and geo["w"][0] % 64 == 0 and geo["x"][1] % 8 == 0


DGRAD_GEOMETRIES = {**GEOMETRIES, **{f"{name}_on_tensor_cores": geo for name, geo in
                                      DGRAD_TENSOR_CORE_GEOMETRIES.items()}}


@pytest.mark.parametrize("name", list(DGRAD_GEOMETRIES))
def test_data_gradient_geometry(gpu, dtype, name):
    # every forward geometry, its adjoint (stride 2 leaves dx positions no dy reaches), and
    # the tensor cores' own
    geo = DGRAD_GEOMETRIES[name]
    log = dgrad_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                      geo.get("dil"), geo.get("post"))
    assert on_tensor_cores(log) == dgrad_on_tensor_cores(dtype, geo), log


@pytest.mark.large
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_data_gradient_each_sm90_tile_over_more_tiles_than_multiprocessors(gpu, monkeypatch,
                                                                            bn):
    # 6 x 40 x 40 = 9600 dx positions are 75 row tiles, x 1 or 2 column tiles of C = 72
    # channels (a ragged last one); k = 4 taps x 64 channels of dy, a k step a tap,
    # flipped (true convolution)
    monkeypatch.setenv("HIPDNN_HIP_WGMMA_BN", str(bn))
    log = dgrad_check(gpu, "bf16", [6, 72, 40, 40], [64, 72, 2, 2], [1, 1], flip=True)
    assert on_tensor_cores(log), log


def test_data_gradient_nchw_and_true_convolution(gpu, dtype):
    dgrad_check(gpu, dtype, [2, 8, 9, 7], [6, 8, 3, 3], [1, 1], stride=[2, 2],
                layout="packed", flip=True)


def test_data_gradient_with_its_epilogue(gpu, dtype):
    # dx * mask, as a relu's backward would (the mask an input): one kernel
    def epilogue(g, dx, want):
        mask = gpu.input(list(want.shape), dtype, "channels_last", low=0.0, high=1.0)
        out = g.mul(dx, mask.bind(g, "mask"), name="masked")
        return [(out, want * mask.values, "pointwise", [mask])]
    dgrad_check(gpu, dtype, [2, 16, 8, 8], [24, 16, 3, 3], [1, 1], epilogue=epilogue)


def ep_dx_backward(mode, product_is="loss"):
    """The activation's backward after a data gradient (dx the loss, the activation's
    saved input a full-size graph input: a ResNet's relu backward), or with dx as the
    activation's input."""
    def make(gpu, dtype):
        def epilogue(g, dx, want):
            other = gpu.input(list(want.shape), dtype, "channels_last")
            bwd, want_of = getattr(g, mode), getattr(ref, mode)
            if product_is == "loss":
                out, want_out = bwd(dx, other.bind(g, "x"), name="bwd"), want_of(other.values, want)
            else:
                out, want_out = bwd(other.bind(g, "dy"), dx, name="bwd"), want_of(want, other.values)
            return [(out, want_out, "pointwise", [other])]
        return epilogue
    return make


@pytest.mark.parametrize("mode", BACKWARD_MODES)
@pytest.mark.parametrize("geo", ["general", "tensor_cores"])
def test_data_gradient_with_a_backward_pointwise_epilogue(gpu, dtype, mode, geo):
    # dgrad_check asserts one stage: it was two (dgrad, then "1 pointwise node fused")
    x_shape, w_shape = ([2, 16, 8, 8], [24, 16, 3, 3]) if geo == "general" else \
        ([2, 24, 9, 10], [64, 24, 3, 3])
    log = dgrad_check(gpu, dtype, x_shape, w_shape, [1, 1],
                      epilogue=ep_dx_backward(mode)(gpu, dtype))
    assert "with its pointwise epilogue" in stages(log)[0], log
    assert on_tensor_cores(log) == (geo == "tensor_cores" and dtype != "fp32"), log


@pytest.mark.parametrize("mode", ["gelu_backward", "tanh_backward", "swish_backward"])
def test_data_gradient_as_a_backward_pointwise_input(gpu, dtype, mode):
    log = dgrad_check(gpu, dtype, [2, 16, 8, 8], [24, 16, 3, 3], [1, 1],
                      epilogue=ep_dx_backward(mode, "input")(gpu, dtype))
    assert "with its pointwise epilogue" in stages(log)[0], log


# ---- weight gradient (conv_wgrad) -------------------------------------------------------------

def wgrad_check(gpu, dtype, x_shape, w_shape, pad=None, stride=None, dil=None, post=None,
                layout="channels_last", flip=False, epilogue=None):
    """dw = conv_wgrad(x, dy), the forward convolution's geometry (then epilogue, on dw); x
    and dy in `layout`, dw channels-last (KRSC), as the engine writes it."""
    pad, post, stride, dil = conv_geometry(x_shape, pad, stride, dil, post)
    y_shape = list(ref.conv_fprop(np.zeros(x_shape), np.zeros(w_shape), pad, post, stride,
                                  dil).shape)
    x = gpu.input(x_shape, dtype, layout)
    dy = gpu.input(y_shape, dtype, layout)
    g = gpu.graph(dtype)
    dw = g.conv_wgrad(image=x.bind(g, "x"), loss=dy.bind(g, "dy"), pre_padding=pad,
                      post_padding=post, stride=stride, dilation=dil, name="wgrad",
                      convolution_mode=CM.CONVOLUTION if flip else CM.CROSS_CORRELATION)
    dw.set_dim(list(w_shape))
    want = ref.conv_wgrad(x.values, dy.values, w_shape, pad, post, stride, dil, flip=flip)
    magnitude = ref.conv_wgrad(np.abs(x.values), np.abs(dy.values), w_shape, pad, post, stride,
                               dil, flip=flip)
    outs = epilogue(g, dw, want) if epilogue else [(dw, want, "conv_wgrad")]
    log = run_and_check(gpu, g, dtype, "conv_wgrad", [x, dy], outs, "channels_last",
                        y_shape[0] * int(np.prod(y_shape[2:])), magnitude)
    plan = stages(log)
    assert len(plan) == 1 and "conv_wgrad" in plan[0], log  # one kernel, on the GPU engine
    return log


def sm90():
    """Whether the engine runs on an sm_90 GPU (the emulation is none)."""
    return GPU_ENGINE == "hip" and compute_capability() == (9, 0)


def wgrad_on_tensor_cores(dtype, geo):
    # only the sm_90 kernel runs a weight gradient on tensor cores
    return sm90() and dtype != "fp32" and geo["x"][1] % 8 == 0 and geo["w"][0] % 8 == 0


def ran_wgmma(log):
    return any("first run of the tensor-core (wgmma)" in m for m in log)


@pytest.mark.parametrize("name", list(GEOMETRIES))
def test_weight_gradient_geometry(gpu, dtype, name):
    geo = GEOMETRIES[name]
    log = wgrad_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                      geo.get("dil"), geo.get("post"))
    assert ran_wgmma(log) == wgrad_on_tensor_cores(dtype, geo), log


@pytest.mark.large
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_weight_gradient_each_sm90_tile_over_more_tiles_than_multiprocessors(gpu, monkeypatch,
                                                                              bn):
    # dw 136 x (9 taps x 256 channels): 2 row tiles (the last ragged) x 9 to 36 column
    # tiles; k = 4 x 6 x 6 = 144 positions, 3 steps, split 3 ways: up to 216 blocks, more
    # than the multiprocessors, so a persistent block walks several
    monkeypatch.setenv("HIPDNN_HIP_WGMMA_BN", str(bn))
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "3")
    log = wgrad_check(gpu, "fp16", [4, 256, 6, 6], [136, 256, 3, 3], [1, 1], flip=True)
    assert k_split(log) == 3 and ran_wgmma(log) == sm90(), log


def test_weight_gradient_nchw_and_true_convolution(gpu, dtype):
    wgrad_check(gpu, dtype, [2, 8, 9, 7], [6, 8, 3, 3], [1, 1], stride=[2, 2],
                layout="packed", flip=True)


def test_weight_gradient_into_an_nchw_filter_is_declined_with_the_reason(gpu):
    # dw written [K, C, R, S]: its columns (r, s, c) are not one dim of the product's space
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 8, 6, 6], stride=[288, 1, 48, 8])
    dy = g.tensor(name="dy", dim=[2, 4, 6, 6], stride=[144, 1, 24, 4])
    dw = g.conv_wgrad(image=x, loss=dy, padding=[1, 1], name="wgrad")
    dw.set_dim([4, 8, 3, 3]).set_stride([72, 9, 3, 1]).set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    why = dict(g.support_report())[GPU_ENGINE]
    assert why and "not dense in (filter taps, channels)" in why and "'wgrad'" in why, why


def test_weight_gradient_with_its_epilogue(gpu, dtype):
    # an SGD step fused: w - lr * dw (w and the rate inputs), one kernel
    def epilogue(g, dw, want):
        w = gpu.input(list(want.shape), dtype, "channels_last")
        out = g.sub(w.bind(g, "w"), g.scale(dw, 0.125), name="step")
        return [(out, w.values - 0.125 * want, "pointwise", [w])]
    wgrad_check(gpu, dtype, [2, 16, 8, 8], [24, 16, 3, 3], [1, 1], epilogue=epilogue)


# ---- split-k -------------------------------------------------------------------------------

def test_weight_gradient_over_many_positions_is_split(gpu, dtype):
    # k = 8 x 16 x 16 = 2048 positions of dy for a 24 x 144 dw, one tile: the plan splits k
    log = wgrad_check(gpu, dtype, [8, 16, 16, 16], [24, 16, 3, 3], [1, 1])
    assert k_split(log) > 1, log


@pytest.mark.parametrize("op", ["fprop", "dgrad", "wgrad"])
def test_k_split_into_ranges(gpu, dtype, monkeypatch, op):
    # three ranges forced: the forward's and data gradient's gathers (tensor cores where
    # the dtype allows) start at a range's first filter tap and channel; an epilogue after
    # the sum
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "3")
    if op == "fprop":
        log = conv_check(gpu, dtype, [2, 64, 6, 5], [24, 64, 3, 3], [1, 1],
                         epilogue=ep_bias_relu(gpu, dtype))
    elif op == "dgrad":
        log = dgrad_check(gpu, dtype, [2, 16, 6, 5], [64, 16, 3, 3], [1, 1], stride=[2, 2])
    else:
        log = wgrad_check(gpu, dtype, [3, 16, 10, 9], [24, 16, 3, 3], [1, 1])
    assert k_split(log) == 3, log


# ---- fused epilogues --------------------------------------------------------------------------

def ep_bias_relu(gpu, dtype):
    def epilogue(g, y, want):  # a bias a channel, of the output's rank
        bias = gpu.input([1, want.shape[1]] + [1] * (want.ndim - 2), dtype, "channels_last")
        out = g.relu(g.bias(y, bias.bind(g, "bias")), name="act")
        return [(out, ref.relu(want + bias.values), "pointwise", [bias])]
    return epilogue


def ep_scale_shift_relu_residual(gpu, dtype):
    # batchnorm inference folded into a scale and a shift, relu, then a residual add
    def epilogue(g, y, want):
        k = want.shape[1]
        scale = gpu.input([1, k, 1, 1], dtype, "channels_last", low=0.5, high=1.5)
        shift = gpu.input([1, k, 1, 1], dtype, "channels_last")
        res = gpu.input(list(want.shape), dtype, "channels_last")
        t = g.relu(g.add(g.mul(y, scale.bind(g, "scale")), shift.bind(g, "shift")))
        out = g.add(t, res.bind(g, "residual"), name="block")
        want_out = ref.relu(want * scale.values + shift.values) + res.values
        return [(out, want_out, "pointwise", [scale, shift, res])]
    return epilogue


def ep_batchnorm_relu(gpu, dtype):
    # a batchnorm_inference node (not folded): the pointwise program runs it in the epilogue
    def epilogue(g, y, want):
        k = want.shape[1]
        stats = [gpu.input([1, k, 1, 1], dtype, "channels_last", low=lo, high=hi, signed=sg)
                 for lo, hi, sg in ((0.1, 1.0, True), (0.5, 1.5, False), (0.5, 1.5, True),
                                    (0.1, 1.0, True))]
        names = ["mean", "inv_variance", "scale", "bias"]
        out = g.relu(g.batchnorm_inference(y, *[t.bind(g, n) for t, n in zip(stats, names)],
                                           name="bn"), name="act")
        want_out = ref.relu(ref.batchnorm_inference(want, *[t.values for t in stats]))
        return [(out, want_out, "batchnorm", stats)]
    return epilogue


def ep_two_outputs(gpu, dtype):
    def epilogue(g, y, want):
        return [(y, want, "conv_fprop"), (g.relu(y, name="act"), ref.relu(want), "pointwise")]
    return epilogue


def ep_relu_backward(gpu, dtype):
    # the forward's y as the loss of relu's backward at a full-size saved input
    def epilogue(g, y, want):
        x = gpu.input(list(want.shape), dtype, "channels_last")
        out = g.relu_backward(y, x.bind(g, "x_saved"), name="bwd")
        return [(out, ref.relu_backward(x.values, want), "pointwise", [x])]
    return epilogue


def ep_gelu_backward_of_y(gpu, dtype):
    # y as the input of gelu's backward (recomputed), the loss a full-size graph input
    def epilogue(g, y, want):
        dy = gpu.input(list(want.shape), dtype, "channels_last")
        out = g.gelu_backward(dy.bind(g, "dy"), y, name="bwd")
        return [(out, ref.gelu_backward(want, dy.values), "pointwise", [dy])]
    return epilogue


EPILOGUES = {"bias_relu": ep_bias_relu, "scale_shift_relu_residual": ep_scale_shift_relu_residual,
             "batchnorm_relu": ep_batchnorm_relu, "two_outputs": ep_two_outputs,
             "relu_backward": ep_relu_backward, "gelu_backward_of_y": ep_gelu_backward_of_y}


@pytest.mark.parametrize("name", list(EPILOGUES))
def test_epilogue_runs_in_the_convolution_kernel(gpu, dtype, name):
    log = conv_check(gpu, dtype, [2, 16, 8, 9], [24, 16, 3, 3], [1, 1],
                     epilogue=EPILOGUES[name](gpu, dtype))
    plan = stages(log)
    assert len(plan) == 1 and "with its pointwise epilogue" in plan[0], log


def test_resnet_bottleneck_block(gpu, dtype):
    """1x1 -> bn -> relu, 3x3 -> bn -> relu, 1x1 -> bn, + x -> relu: three stages, each a
    convolution with its epilogue (batchnorm inference as a folded scale and shift)."""
    n, c, mid, hw = 2, 32, 16, 8
    x = gpu.input([n, c, hw, hw], dtype, "channels_last")
    ws = [gpu.input(s, dtype, "channels_last", low=0.05, high=0.3)
          for s in ([mid, c, 1, 1], [mid, mid, 3, 3], [c, mid, 1, 1])]
    bns = [(gpu.input([1, k, 1, 1], dtype, "channels_last", low=0.5, high=1.5),
            gpu.input([1, k, 1, 1], dtype, "channels_last")) for k in (mid, mid, c)]
    g = gpu.graph(dtype)
    t = xt = x.bind(g, "x")
    want = x.values
    for i, (w, (sc, sh)) in enumerate(zip(ws, bns)):
        pad = [1, 1] if i == 1 else [0, 0]
        t = g.conv_fprop(t, w.bind(g, f"w{i}"), padding=pad, name=f"conv{i}")
        t = g.add(g.mul(t, sc.bind(g, f"scale{i}")), sh.bind(g, f"shift{i}"))
        want = ref.conv_fprop(want, w.values, pad, pad, [1, 1], [1, 1]) * sc.values + sh.values
        if i < 2:
            t = g.relu(t)
            want = ref.relu(want)
    out_t = g.relu(g.add(t, xt), name="out")
    want = ref.relu(want + x.values)
    out = gpu.output(out_t, [n, c, hw, hw], dtype, "channels_last")
    operands = [x] + ws + [v for pair in bns for v in pair] + [out]
    log = ran(lambda: gpu.execute(g, operands))
    scale = np.abs(want).max() + 1.0
    # three convolutions in a row: their fp32 intermediates are not rounded; the error
    # bound is the sum of each stage's, held loosely to the largest value
    assert_product_close(out, want, 3 * graph_tolerance(["conv_fprop", "pointwise"], dtype),
                         c * 9, np.full(want.shape, scale))
    plan = stages(log)
    assert len(plan) == 3 and all("conv_fprop" in m and "epilogue" in m for m in plan), log


@pytest.mark.skipif(GPU_ENGINE != "hip", reason="the vendor engines need a real GPU")
def test_resnet_bottleneck_block_on_the_fastest_engine_for_each_layer(gpu, dtype):
    """The bottleneck as a framework lowers it, a graph a layer (conv -> folded batchnorm ->
    relu; the last with the residual), no engine chosen: each graph runs on the default
    ranking's first engine (cudnn for 16-bit convolutions where it is loaded: measured 1.4
    to 4.1 times the hip engine's, runs M24) and the chain matches float64."""
    n, c, mid, hw = 8, 256, 64, 28  # ResNet-50's first stage's channels, at a size a
    # framework runs (at toy sizes every layer is memory-bound, where the engines tie)
    x = gpu.input([n, c, hw, hw], dtype, "channels_last")
    cur, want, chosen = x, x.values, []
    for i, (k, cin, r) in enumerate(((mid, c, 1), (mid, mid, 3), (c, mid, 1))):
        w = gpu.input([k, cin, r, r], dtype, "channels_last", low=0.05, high=0.3)
        sc = gpu.input([1, k, 1, 1], dtype, "channels_last", low=0.5, high=1.5)
        sh = gpu.input([1, k, 1, 1], dtype, "channels_last")
        g = gpu.graph(dtype)
        pad = [r // 2] * 2
        t = g.conv_fprop(cur.bind(g, f"x{i}"), w.bind(g, f"w{i}"), padding=pad, name=f"conv{i}")
        t = g.add(g.mul(t, sc.bind(g, f"scale{i}")), sh.bind(g, f"shift{i}"))
        want = ref.conv_fprop(want, w.values, pad, pad, [1, 1], [1, 1]) * sc.values + sh.values
        operands = [cur, w, sc, sh]
        if i == 2:
            t = g.add(t, x.bind(g, "residual"))
            want = want + x.values
            operands.append(x)
        out = gpu.output(g.relu(t, name=f"out{i}"), [n, k, hw, hw], dtype, "channels_last")
        want = ref.relu(want)
        g.build([hipdnn.heur_mode.A])
        chosen.append(g.get_engine_name())
        gpu.execute(g, operands + [out], build=False)
        # each layer from the float64 values its input held (that layer's bound)
        assert_product_close(out, want, graph_tolerance(["conv_fprop", "pointwise"], dtype),
                             cin * r * r, np.full(want.shape, np.abs(want).max() + 1.0))
        cur = gpu.input([n, k, hw, hw], dtype, "channels_last", values=out.decoded())
        want = cur.values
    assert all(e in ("hip", "cudnn") for e in chosen), chosen
    if "cudnn" in {e.name for e in hipdnn.engines()} and dtype != "fp32":
        assert chosen == ["cudnn"] * 3, chosen


# ---- grouped and depthwise convolutions ------------------------------------------------------
# x's C channels in groups of C/g, w [K, C/g, ...] its K filters in groups of K/g: each group
# a product of its own (the group the product's batch dim), its epilogue writing the
# group's run of the output's channels.  Tensor cores where each group's channels are as
# an ungrouped convolution's would have to be (the tensor cores' conditions, per group);
# fewer (depthwise: C/g = 1; C/g = 5) take the general kernel.

GROUPED = {
    "2_groups": dict(x=[2, 16, 7, 6], w=[24, 8, 3, 3], pad=[1, 1]),
    "4_groups_stride2": dict(x=[2, 32, 9, 8], w=[16, 8, 3, 3], pad=[1, 1], stride=[2, 2]),
    "4_groups_1d": dict(x=[3, 32, 20], w=[32, 8, 5], pad=[2]),
    "4_groups_3d": dict(x=[1, 16, 4, 5, 6], w=[8, 4, 3, 3, 3], pad=[1, 1, 1]),
    "2_groups_odd_channels": dict(x=[2, 10, 6, 6], w=[6, 5, 3, 3], pad=[1, 1]),
    "depthwise": dict(x=[2, 16, 8, 7], w=[16, 1, 3, 3], pad=[1, 1]),
    "depthwise_multiplier2_dilation2": dict(x=[2, 8, 9, 9], w=[16, 1, 3, 3], pad=[2, 2],
                                            dil=[2, 2]),
    "depthwise_3d": dict(x=[1, 8, 4, 5, 6], w=[8, 1, 3, 3, 3], pad=[1, 1, 1]),
}


def groups_of(geo):
    return geo["x"][1] // geo["w"][1]


def grouped_stage(log, op, groups):
    """The plan's one stage, on the GPU engine, saying its groups."""
    plan = stages(log)
    assert len(plan) == 1 and op in plan[0] and f"{groups} groups of " in plan[0], log


@pytest.mark.parametrize("epilogue", [None, "bias_relu"])
@pytest.mark.parametrize("name", list(GROUPED))
def test_grouped_forward(gpu, dtype, name, epilogue):
    geo = GROUPED[name]
    log = conv_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                     geo.get("dil"), epilogue=epilogue and ep_bias_relu(gpu, dtype))
    grouped_stage(log, "conv_fprop", groups_of(geo))
    assert on_tensor_cores(log) == (dtype != "fp32" and geo["w"][1] % 8 == 0), log


@pytest.mark.parametrize("layout", ["packed", "strided"])
@pytest.mark.parametrize("name", ["2_groups", "4_groups_3d", "depthwise"])
def test_grouped_forward_nchw(gpu, dtype, name, layout):
    geo = GROUPED[name]
    log = conv_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                     geo.get("dil"), layout=layout, flip=True)
    grouped_stage(log, "conv_fprop", groups_of(geo))
    assert not on_tensor_cores(log), log


# data gradients: tensor cores where each group has a multiple of 64 of dy's channels and a
# multiple of 8 of dx's
GROUPED_DGRAD = {**GROUPED,
                 "2_groups_on_tensor_cores": dict(x=[2, 16, 6, 5], w=[128, 8, 3, 3], pad=[1, 1]),
                 "2_groups_stride2_on_tensor_cores": dict(x=[2, 32, 7, 6], w=[128, 16, 3, 3],
                                                          pad=[1, 1], stride=[2, 2])}


def grouped_dgrad_on_tensor_cores(dtype, geo):
    groups = groups_of(geo)
    return dtype != "fp32" and geo["w"][0] // groups % 64 == 0 and geo["w"][1] % 8 == 0


def ep_dx_bias_relu(gpu, dtype):
    def epilogue(g, dx, want):  # a bias a channel of dx, then relu
        bias = gpu.input([1, want.shape[1]] + [1] * (want.ndim - 2), dtype, "channels_last")
        out = g.relu(g.bias(dx, bias.bind(g, "bias")), name="act")
        return [(out, ref.relu(want + bias.values), "pointwise", [bias])]
    return epilogue


@pytest.mark.parametrize("epilogue", [None, "bias_relu"])
@pytest.mark.parametrize("name", list(GROUPED_DGRAD))
def test_grouped_data_gradient(gpu, dtype, name, epilogue):
    geo = GROUPED_DGRAD[name]
    log = dgrad_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                      geo.get("dil"), epilogue=epilogue and ep_dx_bias_relu(gpu, dtype))
    grouped_stage(log, "conv_dgrad", groups_of(geo))
    assert on_tensor_cores(log) == grouped_dgrad_on_tensor_cores(dtype, geo), log


@pytest.mark.parametrize("layout", ["packed", "strided"])
@pytest.mark.parametrize("name", ["4_groups_stride2", "depthwise_3d"])
def test_grouped_data_gradient_nchw(gpu, dtype, name, layout):
    geo = GROUPED_DGRAD[name]
    log = dgrad_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                      geo.get("dil"), layout=layout, flip=True)
    grouped_stage(log, "conv_dgrad", groups_of(geo))
    assert not on_tensor_cores(log), log


# weight gradients: on tensor cores (sm_90 only) where each group has a multiple of 8 of
# x's channels and of dy's
GROUPED_WGRAD = {**GROUPED,
                 "4_groups_stride2_wide": dict(x=[3, 32, 6, 6], w=[64, 8, 3, 3], pad=[1, 1],
                                               stride=[2, 2])}


def grouped_wgrad_on_tensor_cores(dtype, geo):
    groups = groups_of(geo)
    return (sm90() and dtype != "fp32" and geo["w"][1] % 8 == 0 and
            geo["w"][0] // groups % 8 == 0)


def ep_dw_bias_relu(gpu, dtype):
    def epilogue(g, dw, want):  # a value a filter (broadcast over its taps and channels)
        bias = gpu.input([want.shape[0]] + [1] * (want.ndim - 1), dtype, "channels_last")
        out = g.relu(g.bias(dw, bias.bind(g, "bias")), name="act")
        return [(out, ref.relu(want + bias.values), "pointwise", [bias])]
    return epilogue


@pytest.mark.parametrize("epilogue", [None, "bias_relu"])
@pytest.mark.parametrize("name", list(GROUPED_WGRAD))
def test_grouped_weight_gradient(gpu, dtype, name, epilogue):
    geo = GROUPED_WGRAD[name]
    log = wgrad_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                      geo.get("dil"), epilogue=epilogue and ep_dw_bias_relu(gpu, dtype))
    grouped_stage(log, "conv_wgrad", groups_of(geo))
    assert ran_wgmma(log) == grouped_wgrad_on_tensor_cores(dtype, geo), log


@pytest.mark.parametrize("layout", ["packed", "strided"])
@pytest.mark.parametrize("name", ["2_groups", "depthwise_3d"])
def test_grouped_weight_gradient_nchw(gpu, dtype, name, layout):
    geo = GROUPED_WGRAD[name]
    log = wgrad_check(gpu, dtype, geo["x"], geo["w"], geo.get("pad"), geo.get("stride"),
                      geo.get("dil"), layout=layout, flip=True)
    grouped_stage(log, "conv_wgrad", groups_of(geo))
    assert not ran_wgmma(log), log


@pytest.mark.parametrize("op", ["fprop", "dgrad", "wgrad"])
def test_grouped_k_split_into_ranges(gpu, dtype, monkeypatch, op):
    # three ranges of each group's k forced, the partial products a (range, group, tile)
    # each, summed a (group, tile); an epilogue after the sum
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "3")
    if op == "fprop":
        log = conv_check(gpu, dtype, [2, 128, 6, 5], [24, 64, 3, 3], [1, 1],
                         epilogue=ep_bias_relu(gpu, dtype))
    elif op == "dgrad":
        log = dgrad_check(gpu, dtype, [2, 32, 6, 5], [128, 16, 3, 3], [1, 1], stride=[2, 2])
    else:
        log = wgrad_check(gpu, dtype, [3, 32, 10, 9], [16, 8, 3, 3], [1, 1])
    grouped_stage(log, "conv_" + op, 4 if op == "wgrad" else 2)
    assert k_split(log) == 3, log


@pytest.mark.large
@pytest.mark.parametrize("bn", [64, 128, 256])
def test_grouped_each_sm90_tile_over_more_tiles_than_multiprocessors(gpu, monkeypatch, bn):
    # 4 groups of 72 filters over 16 channels: each group 6 x 40 x 40 = 9600 positions, 75
    # row tiles x 1 or 2 column tiles (the last ragged, reading the next group's filters
    # nowhere), so a persistent block walks tiles of several groups
    monkeypatch.setenv("HIPDNN_HIP_WGMMA_BN", str(bn))
    log = conv_check(gpu, "bf16", [6, 64, 40, 40], [288, 16, 3, 3], [1, 1],
                     epilogue=ep_bias_relu(gpu, "bf16"))
    assert on_tensor_cores(log) and "4 groups of " in stages(log)[0], log


def test_grouped_convolution_then_a_layernorm(gpu):
    # a grouped convolution no longer sends its graph elsewhere: the GPU engine runs the
    # convolution and the norm after it
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 4, 8, 8])
    w = g.tensor(name="w", dim=[4, 2, 3, 3])
    y = g.conv_fprop(x, w, padding=[1, 1], stride=[1, 1], dilation=[1, 1], name="conv")
    z = g.layernorm(hipdnn.norm_forward_phase.INFERENCE, y, g.tensor(name="s", dim=[1, 4, 8, 8]),
                    g.tensor(name="b", dim=[1, 4, 8, 8]), 1e-5, name="ln")[0]
    z.set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    assert not dict(g.support_report())[GPU_ENGINE]
