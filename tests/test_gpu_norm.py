"""The GPU engine's layer, RMS, instance and adaptive layer norms (norm_forward) against
float64 NumPy (DESIGN tolerances): inference and training (mean and inv_variance out),
with and without bias, zero-centered gamma, epsilon constant or given at execute, rows of
1 to 40000 elements, strided layouts, and the pointwise nodes after y run in the same
kernel (relu, gelu, swish, a residual add).

Every run copies each operand's whole allocation to the device, NaN poison in its gaps
included, and back (conftest.DeviceNumerics), so outputs are checked to be fully written
and nothing else, and inputs unchanged.  Skipped with the reason without a GPU; CI runs
this file on the engine's host emulation (tests/test_gpu_emulated.py).
"""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import GPU_ENGINE, STORAGES, assert_close, engine_log
from tolerances import graph_tolerance, tolerance

pytestmark = pytest.mark.gpu
dt = hipdnn.data_type
PHASE = hipdnn.norm_forward_phase
EPS = 1e-5


ran = engine_log  # the engine's lines while run() runs (conftest)


def one_kernel(log, what):
    return any("runs in 1 stage" in m for m in log) and \
        any(f"stage 1 of 1 ({what}" in m and "first run" in m for m in log)


# ---- float64 references ----------------------------------------------------------------------

def norm_ref(x, scale, bias, axes, rms=False, eps=EPS, zero_centered=False):
    """y, mean (None for RMS) and inv_variance over `axes`, as hipdnn defines them."""
    eps = float(np.float32(eps))  # the kernel reads epsilon as fp32
    if rms:
        mean = None
        inv = 1.0 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
        centred = x
    else:
        mean = np.mean(x, axis=axes, keepdims=True)
        inv = 1.0 / np.sqrt(np.mean((x - mean) ** 2, axis=axes, keepdims=True) + eps)
        centred = x - mean
    gamma = scale + 1.0 if zero_centered else scale
    y = centred * inv * gamma + (bias if bias is not None else 0.0)
    return y, mean, inv


def stats_shape(shape, axes):
    return [1 if i in axes else d for i, d in enumerate(shape)]


def param_shape(shape, axes):
    return [d if i in axes else 1 for i, d in enumerate(shape)]


# ---- layer and RMS norms ------------------------------------------------------------------------

def check_norm(gpu, dtype, shape, rms=False, training=False, with_bias=True, zero_centered=False,
               x_layout="packed", y_layout="packed", param_dtype=None, axes=None):
    """layernorm / rmsnorm over the axes scale spans (all but the first by default)."""
    axes = tuple(axes if axes is not None else range(1, len(shape)))
    param_dtype = param_dtype or dtype
    x = gpu.input(shape, dtype, x_layout, high=3.0)
    scale = gpu.input(param_shape(shape, axes), param_dtype, low=0.5, high=1.5)
    bias = gpu.input(param_shape(shape, axes), param_dtype) if with_bias else None
    g = gpu.graph(dtype)
    X, S = x.bind(g, "x"), scale.bind(g, "scale")
    B = bias.bind(g, "bias") if with_bias else None
    phase = PHASE.TRAINING if training else PHASE.INFERENCE
    if rms:
        y, inv = g.rmsnorm(phase, X, S, bias=B, epsilon=EPS, zero_centered_gamma=zero_centered,
                           name="n")
        mean = None
    else:
        y, mean, inv = g.layernorm(phase, X, S, B, EPS, zero_centered_gamma=zero_centered,
                                   name="n")
    want_y, want_mean, want_inv = norm_ref(x.values, scale.values,
                                           bias.values if with_bias else None, axes, rms,
                                           zero_centered=zero_centered)
    outs = [gpu.output(y, shape, dtype, y_layout)]
    if training:
        outs.append(gpu.output(inv, stats_shape(shape, axes), "fp32"))
        if not rms:
            outs.append(gpu.output(mean, stats_shape(shape, axes), "fp32"))
    ops = [x, scale] + ([bias] if with_bias else []) + outs
    log = ran(lambda: gpu.execute(g, ops))
    name = "rmsnorm" if rms else "layernorm"
    gpu.assert_close(outs[0], want_y, tolerance(name, dtype))
    if training:
        gpu.assert_close(outs[1], want_inv, tolerance(name, "fp32"))
        if not rms:
            gpu.assert_close(outs[2], want_mean, tolerance(name, "fp32"))
    return log


@pytest.mark.parametrize("n", [1, 7, 33, 1000, 4097])
@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_row_lengths(gpu, dtype, rms, n):
    log = check_norm(gpu, dtype, [5, n], rms=rms)
    assert one_kernel(log, "rmsnorm" if rms else "layernorm"), log


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_whole_aligned_rows_take_the_fast_way_and_others_the_general_one(gpu, dtype, rms):
    for n, way in ((256, "(fast way)"), (250, "(general way)")):
        log = check_norm(gpu, dtype, [9, n], rms=rms, training=True)
        assert any(way in m for m in log), (n, log)


@pytest.mark.parametrize("n", [264, 1000, 2048, 4096, 4104])
@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_16_bit_rows_held_packed(gpu, rms, n):
    # up to 4096 16-bit elements the row is held as loaded, at most 4 vectors a thread: a
    # warp a row up to 1024 elements, then 64 or 128 threads; 4104 is past that
    nvec = -(-n // 8)
    threads = 32 if nvec <= 128 else 1 << (-(-nvec // 4) - 1).bit_length()
    for dtype in ("bf16", "fp16"):
        log = check_norm(gpu, dtype, [7, n], rms=rms, training=True)
        assert any("(fast way)" in m for m in log), (dtype, n, log)
        packed = any(f"held as loaded by {threads} threads" in m for m in log)
        assert packed == (n <= 4096), (dtype, n, log)


@pytest.mark.parametrize("data,params,with_bias,zero_centered,x_layout", [
    ("bf16", "bf16", True, False, "packed"),  # rows one dim, parameters of x's type
    ("fp16", "fp32", False, True, "packed"),  # fp32 parameters
    ("bf16", "fp16", True, False, "packed"),  # another 16-bit type: read as the tensors say
    ("fp16", "fp16", True, True, "bshd"),     # rows over several dims: the general addressing
])
@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_16_bit_rows_held_packed_every_variant(gpu, rms, data, params, with_bias, zero_centered,
                                               x_layout):
    # rw_kernels.h's packed kernel has lean variants (rows one dim, parameter type known)
    # and a general one; each must give the same results
    shape = [2, 3, 4, 1024] if x_layout == "bshd" else [6, 1024]
    log = check_norm(gpu, data, shape, rms=rms, training=True, with_bias=with_bias,
                     zero_centered=zero_centered, x_layout=x_layout, param_dtype=params,
                     axes=[len(shape) - 1])
    assert any("held as loaded by 32 threads" in m for m in log), log


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_training_writes_fp32_statistics(gpu, dtype, rms):
    check_norm(gpu, dtype, [6, 300], rms=rms, training=True)


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_without_bias(gpu, dtype, rms):
    check_norm(gpu, dtype, [4, 200], rms=rms, with_bias=False, training=True)


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_zero_centered_gamma(gpu, dtype, rms):
    check_norm(gpu, dtype, [3, 96], rms=rms, zero_centered=True)


def test_fp32_parameters_with_bf16_data(gpu):
    check_norm(gpu, "bf16", [8, 512], param_dtype="fp32", training=True)


@pytest.mark.parametrize("x_layout,y_layout", [("strided", "packed"), ("transposed", "strided"),
                                               ("packed", "transposed")])
@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_strided_layouts(gpu, dtype, rms, x_layout, y_layout):
    check_norm(gpu, dtype, [6, 40], rms=rms, training=True, x_layout=x_layout, y_layout=y_layout)


def test_over_several_axes(gpu, dtype):
    # [N, S, D] normalized over S and D (scale [1, S, D]), packed and with S, D swapped
    check_norm(gpu, dtype, [3, 5, 24], training=True)
    check_norm(gpu, dtype, [3, 5, 24], training=True, x_layout="transposed")
    check_norm(gpu, dtype, [2, 3, 4, 10], rms=True, training=True, x_layout="channels_last")


def test_over_the_last_axis_of_three(gpu, dtype):
    # scale [1, 1, D] on x [N, S, D]: every (n, s) is a row
    check_norm(gpu, dtype, [3, 5, 40], training=True, axes=[2])


@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_rows_too_long_for_registers(gpu, rms):
    log = check_norm(gpu, "fp32", [2, 40000], rms=rms, training=True)
    assert any("read again" in m for m in log), log


def test_epsilon_given_at_execute(gpu):
    x = gpu.input([4, 64], "fp32", low=0.001, high=0.01)  # small: epsilon matters
    scale = gpu.input([1, 64], "fp32", low=0.5, high=1.5)
    bias = gpu.input([1, 64], "fp32")
    g = gpu.graph("fp32")
    eps = g.tensor(name="eps", dim=[1], stride=[1], data_type=dt.FLOAT, is_pass_by_value=True)
    X, S, B = x.bind(g, "x"), scale.bind(g, "scale"), bias.bind(g, "bias")
    y, _, _ = g.layernorm(PHASE.INFERENCE, X, S, B, eps, name="n")
    out = gpu.output(y, [4, 64], "fp32")
    gpu.build(g)
    x_dev = hipdnn.DeviceArray.from_numpy(x.base)
    s_dev = hipdnn.DeviceArray.from_numpy(scale.base)
    b_dev = hipdnn.DeviceArray.from_numpy(bias.base)
    for e in (1e-5, 1e-3):
        y_dev = hipdnn.DeviceArray.from_numpy(out.base)  # NaN poison
        g.execute({X: x_dev, S: s_dev, B: b_dev, eps: e, out.tensor: y_dev})
        np.copyto(out.base, y_dev.numpy())
        want, _, _ = norm_ref(x.values, scale.values, bias.values, (1,), eps=e)
        gpu.assert_close(out, want, tolerance("layernorm", "fp32"))


# ---- instance and adaptive layer norms ----------------------------------------------------------

def test_instance_norm(gpu, dtype):
    shape = [2, 3, 5, 7]
    x = gpu.input(shape, dtype, high=3.0)
    scale = gpu.input([1, 3, 1, 1], dtype, low=0.5, high=1.5)
    bias = gpu.input([1, 3, 1, 1], dtype)
    g = gpu.graph(dtype)
    y, mean, inv = g.instancenorm(PHASE.TRAINING, x.bind(g, "x"), scale.bind(g, "scale"),
                                  bias.bind(g, "bias"), EPS, name="n")
    want_y, want_mean, want_inv = norm_ref(x.values, scale.values, bias.values, (2, 3))
    outs = [gpu.output(y, shape, dtype), gpu.output(mean, [2, 3, 1, 1], "fp32"),
            gpu.output(inv, [2, 3, 1, 1], "fp32")]
    gpu.execute(g, [x, scale, bias] + outs)
    tol = tolerance("layernorm", dtype)
    gpu.assert_close(outs[0], want_y, tol)
    gpu.assert_close(outs[1], want_mean, tolerance("layernorm", "fp32"))
    gpu.assert_close(outs[2], want_inv, tolerance("layernorm", "fp32"))


@pytest.mark.parametrize("shape,params,with_bias", [
    ([4, 64, 16, 24], None, True),    # rows over two dims (N, C): the general addressing
    ([1, 96, 16, 32], "fp32", True),  # one dim, fp32 parameters: a lean variant
    ([1, 64, 32, 32], None, False),   # one dim, parameters of x's type, no bias
])
def test_instance_norm_of_16_bit_rows_held_packed(gpu, shape, params, with_bias):
    # scale and bias one value a row (a channel's): the packed kernel reads that one value
    # for each vector, as it reads a layernorm's row of them
    c = shape[1]
    for dtype in ("bf16", "fp16"):
        x = gpu.input(shape, dtype, high=3.0)
        scale = gpu.input([1, c, 1, 1], params or dtype, low=0.5, high=1.5)
        bias = gpu.input([1, c, 1, 1], params or dtype) if with_bias else None
        g = gpu.graph(dtype)
        y, mean, inv = g.instancenorm(PHASE.TRAINING, x.bind(g, "x"), scale.bind(g, "scale"),
                                      bias.bind(g, "bias") if bias else None, EPS, name="n")
        want = norm_ref(x.values, scale.values, bias.values if bias else None, (2, 3))
        outs = [gpu.output(y, shape, dtype)] + [gpu.output(t, [shape[0], c, 1, 1], "fp32")
                                                for t in (mean, inv)]
        log = ran(lambda: gpu.execute(g, [x, scale] + ([bias] if bias else []) + outs))
        for out, w, t in zip(outs, want, (dtype, "fp32", "fp32")):
            gpu.assert_close(out, w, tolerance("layernorm", t))
        assert any("held as loaded" in m and "parameters one value a row" in m for m in log), log


def test_adaptive_layer_norm(gpu, dtype):
    shape = [3, 4, 48]
    x = gpu.input(shape, dtype, high=3.0)
    scale = gpu.input([3, 1, 48], dtype, low=0.5, high=1.5)  # per sample
    bias = gpu.input([3, 1, 48], dtype)
    g = gpu.graph(dtype)
    y, _, _ = g.adalayernorm(PHASE.INFERENCE, x.bind(g, "x"), scale.bind(g, "scale"),
                             bias.bind(g, "bias"), EPS, name="n")
    out = gpu.output(y, shape, dtype)
    gpu.execute(g, [x, scale, bias, out])
    want, _, _ = norm_ref(x.values, scale.values, bias.values, (2,))
    gpu.assert_close(out, want, tolerance("layernorm", dtype))


# ---- epilogues: the pointwise nodes after y, in the same kernel ---------------------------------

def norm_then(gpu, dtype, shape, then, rms=False, y_out=False, extra=()):
    """y = norm(x); z = then(g, y, *extra tensors) fused; returns ops, log, and float64 y."""
    x = gpu.input(shape, dtype, high=3.0)
    scale = gpu.input([1] + shape[1:], dtype, low=0.5, high=1.5)
    bias = gpu.input([1] + shape[1:], dtype)
    ins = [gpu.input(s, dtype) for s in extra]
    g = gpu.graph(dtype)
    X, S, B = x.bind(g, "x"), scale.bind(g, "scale"), bias.bind(g, "bias")
    if rms:
        y, _ = g.rmsnorm(PHASE.INFERENCE, X, S, bias=B, epsilon=EPS, name="n")
    else:
        y, _, _ = g.layernorm(PHASE.INFERENCE, X, S, B, EPS, name="n")
    z = then(g, y, *[op.bind(g, f"in{i}") for i, op in enumerate(ins)])
    outs = [gpu.output(z, shape, dtype)]
    if y_out:
        outs.append(gpu.output(y, shape, dtype))
    log = ran(lambda: gpu.execute(g, [x, scale, bias] + ins + outs))
    axes = tuple(range(1, len(shape)))
    want_y, _, _ = norm_ref(x.values, scale.values, bias.values, axes, rms)
    return outs, ins, log, want_y


@pytest.mark.parametrize("act", ["relu", "gelu", "sigmoid", "tanh"])
def test_norm_then_activation_is_one_kernel(gpu, dtype, act):
    outs, _, log, y = norm_then(gpu, dtype, [6, 256], lambda g, y: getattr(g, act)(input=y))
    assert one_kernel(log, "layernorm") and any("epilogue" in m for m in log), log
    fn = {"relu": ref.relu, "gelu": ref.gelu, "sigmoid": ref.sigmoid, "tanh": ref.tanh}[act]
    gpu.assert_close(outs[0], fn(y), graph_tolerance(["layernorm", "pointwise"], dtype))


def test_rmsnorm_then_swish(gpu, dtype):
    outs, _, log, y = norm_then(gpu, dtype, [4, 1000],
                                lambda g, y: g.mul(a=y, b=g.sigmoid(input=y)), rms=True)
    assert one_kernel(log, "rmsnorm"), log
    gpu.assert_close(outs[0], y * ref.sigmoid(y), graph_tolerance(["rmsnorm", "pointwise"], dtype))


def test_norm_then_residual_add_and_relu(gpu, dtype):
    outs, ins, log, y = norm_then(gpu, dtype, [5, 33],
                                  lambda g, y, r: g.relu(input=g.add(a=y, b=r)),
                                  extra=[[5, 33]])
    assert one_kernel(log, "layernorm"), log
    gpu.assert_close(outs[0], ref.relu(y + ins[0].values),
                     graph_tolerance(["layernorm", "pointwise"], dtype))


def test_norm_then_broadcast_operands_and_constants(gpu, dtype):
    # (y * w + 0.5) with w per column, over [N, S, D] rows of S * D
    outs, ins, log, y = norm_then(gpu, dtype, [3, 4, 40],
                                  lambda g, y, w: g.add(a=g.mul(a=y, b=w), b=0.5),
                                  extra=[[1, 1, 40]])
    assert one_kernel(log, "layernorm"), log
    gpu.assert_close(outs[0], y * ins[0].values + 0.5,
                     graph_tolerance(["layernorm", "pointwise"], dtype))


def test_norm_then_its_column_index(gpu, dtype):
    # gen_index after a norm (a stage of its own: the norm's epilogue takes no gen_index)
    # reads no memory: its stage binds no pointer for it
    n = 48
    outs, _, log, y = norm_then(gpu, dtype, [5, n],
                                lambda g, y: g.add(a=y, b=g.gen_index(input=y, axis=1)))
    assert any("runs in 2 stages" in m for m in log), log
    gpu.assert_close(outs[0], y + np.arange(n, dtype=np.float64),
                     graph_tolerance(["layernorm", "pointwise"], dtype))


def test_norm_output_read_by_its_epilogue_is_written_too(gpu, dtype):
    outs, _, log, y = norm_then(gpu, dtype, [4, 100], lambda g, y: g.gelu(input=y), y_out=True)
    assert one_kernel(log, "layernorm"), log
    gpu.assert_close(outs[1], y, tolerance("layernorm", dtype))
    # gelu reads y as stored: rounded to its storage type
    gpu.assert_close(outs[0], ref.gelu(ref.round_to(y, dtype)),
                     graph_tolerance(["layernorm", "pointwise"], dtype))


def test_epilogue_of_long_rows(gpu):
    outs, _, log, y = norm_then(gpu, "fp32", [2, 40000], lambda g, y: g.relu(input=y))
    assert one_kernel(log, "layernorm"), log
    gpu.assert_close(outs[0], ref.relu(y), graph_tolerance(["layernorm", "pointwise"], "fp32"))


def test_pointwise_before_a_norm_runs_as_its_own_stage(gpu, dtype):
    # the classic residual: z = layernorm(a + b); the add is a stage of its own
    a = gpu.input([4, 128], dtype)
    b = gpu.input([4, 128], dtype)
    scale = gpu.input([1, 128], dtype, low=0.5, high=1.5)
    bias = gpu.input([1, 128], dtype)
    g = gpu.graph(dtype)
    s = g.add(a=a.bind(g, "a"), b=b.bind(g, "b"))
    y, _, _ = g.layernorm(PHASE.INFERENCE, s, scale.bind(g, "scale"), bias.bind(g, "bias"), EPS)
    out = gpu.output(y, [4, 128], dtype)
    log = ran(lambda: gpu.execute(g, [a, b, scale, bias, out]))
    assert any("runs in 2 stages" in m for m in log), log
    assert g.get_workspace_size() >= 4 * 128 * 4
    want, _, _ = norm_ref(a.values + b.values, scale.values, bias.values, (1,))
    gpu.assert_close(out, want, graph_tolerance(["layernorm", "pointwise"], dtype))


# ---- the GPU engine and the reference engine agree -----------------------------------------------

@pytest.mark.parametrize("rms", [False, True], ids=["layernorm", "rmsnorm"])
def test_gpu_and_reference_engines_agree(gpu, dtype, rms):
    shape = [5, 70]
    check_norm(gpu, dtype, shape, rms=rms)  # against NumPy first
    x = gpu.input(shape, dtype, high=3.0)
    scale = gpu.input([1, 70], dtype, low=0.5, high=1.5)
    bias = gpu.input([1, 70], dtype)
    results = []
    for engine in (GPU_ENGINE, "reference_cpu"):
        g = gpu.graph(dtype)
        X, S, B = x.bind(g, "x"), scale.bind(g, "scale"), bias.bind(g, "bias")
        if rms:
            y, _ = g.rmsnorm(PHASE.INFERENCE, X, S, bias=B, epsilon=EPS)
        else:
            y, _, _ = g.layernorm(PHASE.INFERENCE, X, S, B, EPS)
        out = gpu.output(y, shape, dtype)
        if engine == GPU_ENGINE:
            gpu.execute(g, [x, scale, bias, out])
            results.append(out.decoded())
            continue
        g.set_preferred_engine("reference_cpu")
        try:
            g.build([hipdnn.heur_mode.A])
        except hipdnn.HipdnnError as e:
            pytest.skip(f"the reference engine does not run norm_forward (yet): {e}")
        if g.get_engine_name(0) != "reference_cpu":
            pytest.skip("the reference engine declined: "
                        f"{dict(g.support_report()).get('reference_cpu')}")
        want = np.full(shape, STORAGES[dtype].nan, STORAGES[dtype].np_dtype)
        g.execute({X: x.array, S: scale.array, B: bias.array, out.tensor: want})
        results.append(STORAGES[dtype].decode(want))
    assert_close(results[0], results[1], tolerance("rmsnorm" if rms else "layernorm", dtype), "y")
