"""The GPU engine's matmul and its fused epilogues against float64 NumPy (DESIGN
tolerances): fp32 / fp16 / bf16 storage, odd M, N and K, row- and column-major and
strided operands, broadcast batches, and the pointwise nodes after a matmul (bias, relu,
gelu, gelu_tanh, swish, clamp, scale, residual add, a second output before the
activation) run in the matmul's kernel.

Every run copies each operand's whole allocation to the device, NaN poison in its gaps
included, and back (conftest.DeviceNumerics), so outputs are checked to be fully written
and nothing else, and inputs unchanged.  Skipped with the reason without a GPU; CI runs
this file on the engine's host emulation (tests/test_gpu_emulated.py), which checks the
plan, the kernel choice, the indexing and the epilogue, but not the tensor-core kernel.
"""
import ctypes

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import GPU_ENGINE, STORAGES, Operand, assert_close, engine_log
from tolerances import graph_tolerance, tolerance

pytestmark = pytest.mark.gpu


ran = engine_log  # the engine's lines while run() runs (conftest)


FP32_UNIT = 2.0 ** -24  # unit roundoff of the fp32 accumulator


def assert_product_close(out, want, tol, k, magnitude):
    """The DESIGN tolerance, plus what fp32 accumulation of k terms may lose (cuBLAS's
    arithmetic too): k * u * (|a| @ |b|), doubled for an epilogue's slope (docs/architecture.md,
    Tolerances)."""
    got = out.decoded()
    slack = 2.0 * k * FP32_UNIT * magnitude
    err = np.abs(np.asarray(got, np.float64) - want)
    bound = tol + tol * np.abs(want) + slack
    if not (err <= bound).all():  # report it the standard way, slack folded into the reference
        assert_close(got, want, tol, out.tensor.get_name())
        bad = np.unravel_index(int(np.argmax(err - bound)), err.shape)
        pytest.fail(f"{out.tensor.get_name()}: |diff| {err[bad]:.3g} > {bound[bad]:.3g} at {bad}")


def stages(log):
    """The plan's stages, one line each."""
    return [m for m in log if ": stage " in m and "first run" not in m]


def build_with_knobs(g, knobs):
    """g's plan on the GPU engine with these knob choices (create_execution_plan)."""
    g.validate()
    g.build_operation_graph()
    engine = [e.name for e in hipdnn.engines()].index(GPU_ENGINE)
    g.create_execution_plan(engine, knobs)
    g.build_plans()
    assert g.get_engine_name() == GPU_ENGINE
    return engine


def check(gpu, dtype, a_shape, b_shape, a_layout="packed", b_layout="packed", out_layout="packed",
          epilogue=None, knobs=None):
    """c = a @ b, then epilogue(g, c, ref_c) -> [(tensor, reference)] (default: c itself);
    knobs: the engine config's, else heuristics' plan."""
    a = gpu.input(a_shape, dtype, a_layout)
    b = gpu.input(b_shape, dtype, b_layout, low=0.1, high=1.0)
    g = gpu.graph(dtype)
    c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    want_c = np.matmul(a.values, b.values)
    magnitude = np.matmul(np.abs(a.values), np.abs(b.values))
    outs = epilogue(g, c, want_c) if epilogue else [(c, want_c, "matmul")]
    operands = [a, b]
    checks = []
    for item in outs:
        tensor, want = item[0], item[1]
        extra = item[3] if len(item) > 3 else []
        operands += extra
        out = gpu.output(tensor, want.shape, dtype, out_layout)
        operands.append(out)
        checks.append((out, want, item[2]))
    if knobs is not None:
        build_with_knobs(g, knobs)
    log = ran(lambda: gpu.execute(g, operands, build=knobs is None))
    for out, want, ops in checks:
        tol = graph_tolerance(["matmul"] + ([ops] if ops != "matmul" else []), dtype)
        assert_product_close(out, want, tol, a_shape[-1], np.broadcast_to(magnitude, want.shape))
    return log


def on_tensor_cores(log):
    return any("on tensor cores" in m or "on matrix cores (MFMA)" in m for m in log)


# ---- shapes --------------------------------------------------------------------------------

SHAPES = [(1, 1, 1), (7, 13, 5), (16, 8, 16), (64, 64, 64), (100, 72, 200), (129, 257, 40),
          (33, 8, 1000)]


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_shapes(gpu, dtype, m, n, k):
    log = check(gpu, dtype, [m, k], [k, n])
    aligned = k % 8 == 0 and n % 8 == 0
    assert on_tensor_cores(log) == (dtype != "fp32" and aligned), log


@pytest.mark.parametrize("a_layout,b_layout", [("transposed", "packed"), ("packed", "transposed"),
                                               ("transposed", "transposed")])
def test_column_major_operands(gpu, dtype, a_layout, b_layout):
    # transposes by strides: k or m contiguous for a, k or n for b (ldmatrix .trans)
    log = check(gpu, dtype, [96, 64], [64, 136], a_layout, b_layout)
    assert on_tensor_cores(log) == (dtype != "fp32"), log


def test_strided_operands_take_the_general_kernel(gpu, dtype):
    log = check(gpu, dtype, [40, 24], [24, 48], "strided", "strided", "strided")
    assert not on_tensor_cores(log) and any("general" in m for m in log), log


def misaligned_product(gpu, dtype, m, k, n, knobs=None):
    """a @ b with a starting one element into its allocation (packed strides, a pointer 2
    or 4 bytes off), checked; the log.  knobs: the engine config's, else heuristics'."""
    storage = STORAGES[dtype]
    base = storage.full((m * k + 1,))
    view = base[1:].reshape(m, k)
    view[...] = storage.encode(gpu.random([m, k]))
    mask = np.zeros(base.shape, bool)
    mask[1:] = True
    a = Operand(view, base, mask, storage, storage.decode(view))
    b = gpu.input([k, n], dtype)
    g = gpu.graph(dtype)
    c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    out = gpu.output(c, [m, n], dtype)
    if knobs is not None:
        build_with_knobs(g, knobs)
    log = ran(lambda: gpu.execute(g, [a, b, out], build=knobs is None))
    assert_product_close(out, a.values @ b.values, tolerance("matmul", dtype), k,
                         np.abs(a.values) @ np.abs(b.values))
    return log


def test_a_view_not_16_byte_aligned_takes_the_general_kernel(gpu, dtype):
    # the plan's tensor-core kernel cannot read a, the general one is compiled at enqueue
    log = misaligned_product(gpu, dtype, 48, 64, 40)
    assert any("first run of the general kernel" in line for line in log), log


@pytest.mark.large
def test_a_large_product_in_large_tiles(gpu, dtype):
    check(gpu, dtype, [1024, 256], [256, 1280])


@pytest.mark.parametrize("a_layout,b_layout", [("packed", "packed"), ("transposed", "packed"),
                                               ("packed", "transposed"),
                                               ("transposed", "transposed")])
@pytest.mark.large
def test_many_tiles_and_k_steps_in_every_layout(gpu, dtype, a_layout, b_layout):
    # 296 x 600 over k = 520: ragged against every tile (128 / 256 rows, 64 k a stage), and
    # more k steps than the pipeline has stages; batched, so each batch's rows start afresh
    log = check(gpu, dtype, [2, 296, 520], [520, 600], a_layout, b_layout)
    assert on_tensor_cores(log) == (dtype != "fp32"), log


def compute_capability():
    """The GPU's (major, minor), where torch can tell; None otherwise."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_capability() if torch.cuda.is_available() else None


@pytest.mark.skipif(GPU_ENGINE != "hip", reason="the emulation is no sm_90 GPU")
def test_sm90_gpus_run_the_wgmma_kernel(gpu):
    cc = compute_capability()
    if cc != (9, 0):
        pytest.skip(f"needs an sm_90 GPU (H100, H200) and torch to tell; this one: {cc}")
    log = check(gpu, "bf16", [2, 256, 512], [512, 384], "packed", "transposed")
    assert any("first run of the tensor-core (wgmma)" in m for m in log), log


# ---- batches -------------------------------------------------------------------------------

def test_batched(gpu, dtype):
    check(gpu, dtype, [3, 40, 32], [3, 32, 24])


@pytest.mark.parametrize("a_shape,b_shape", [([2, 3, 17, 32], [32, 40]),
                                             ([2, 1, 17, 32], [1, 3, 32, 40]),
                                             ([17, 32], [4, 32, 40])])
def test_batch_broadcast(gpu, dtype, a_shape, b_shape):
    check(gpu, dtype, a_shape, b_shape)


def test_batched_transposed_b(gpu, dtype):
    check(gpu, dtype, [2, 2, 48, 64], [2, 2, 64, 72], "packed", "transposed")


# ---- fused epilogues ---------------------------------------------------------------------------

def _bias(gpu, dtype, n):
    return gpu.input([1, n], dtype)


def ep_bias_relu(gpu, dtype):
    def epilogue(g, c, want_c):
        bias = _bias(gpu, dtype, want_c.shape[-1])
        y = g.relu(g.bias(c, bias.bind(g, "bias")), name="act")
        return [(y, ref.relu(want_c + bias.values), "pointwise", [bias])]
    return epilogue


def ep_bias_gelu(gpu, dtype):
    def epilogue(g, c, want_c):
        bias = _bias(gpu, dtype, want_c.shape[-1])
        y = g.gelu(g.add(c, bias.bind(g, "bias")), name="act")
        return [(y, ref.gelu(want_c + bias.values), "pointwise", [bias])]
    return epilogue


def ep_gelu_tanh(gpu, dtype):
    def epilogue(g, c, want_c):
        return [(g.gelu_approx_tanh(c, name="act"), ref.gelu_approx_tanh(want_c), "pointwise")]
    return epilogue


def ep_swish(gpu, dtype):
    def epilogue(g, c, want_c):
        return [(g.swish(c, name="act"), ref.swish(want_c), "pointwise")]
    return epilogue


def ep_clamp_scale(gpu, dtype):
    def epilogue(g, c, want_c):
        scale = gpu.input([1, 1], dtype, low=0.5, high=2.0, signed=False)
        y = g.relu(g.scale(c, scale.bind(g, "alpha")), lower_clip=-0.5, upper_clip=0.5, name="clamp")
        return [(y, ref.relu(want_c * scale.values, lower_clip=-0.5, upper_clip=0.5), "pointwise",
                 [scale])]
    return epilogue


def ep_residual(gpu, dtype):
    def epilogue(g, c, want_c):
        res = gpu.input(list(want_c.shape), dtype, "transposed")
        y = g.add(c, res.bind(g, "residual"), name="res")
        return [(y, want_c + res.values, "pointwise", [res])]
    return epilogue


def ep_two_outputs(gpu, dtype):
    # the product itself is an output too (for a backward pass), and relu of it
    def epilogue(g, c, want_c):
        y = g.relu(c, name="act")
        return [(c, want_c, "matmul"), (y, ref.relu(want_c), "pointwise")]
    return epilogue


def ep_column_index(gpu, dtype):
    # gen_index in the epilogue: its input has no memory
    def epilogue(g, c, want_c):
        y = g.mul(c, g.gen_index(c, axis=want_c.ndim - 1), name="scaled")
        return [(y, want_c * np.arange(want_c.shape[-1], dtype=np.float64), "pointwise")]
    return epilogue


EPILOGUES = {"bias_relu": ep_bias_relu, "bias_gelu": ep_bias_gelu, "gelu_tanh": ep_gelu_tanh,
             "swish": ep_swish, "clamp_scale": ep_clamp_scale, "residual": ep_residual,
             "two_outputs": ep_two_outputs, "column_index": ep_column_index}


@pytest.mark.parametrize("name", list(EPILOGUES))
@pytest.mark.parametrize("m,n,k", [(64, 128, 64), (37, 50, 24)])
def test_epilogue_runs_in_the_matmul_kernel(gpu, dtype, name, m, n, k):
    log = check(gpu, dtype, [m, k], [k, n], epilogue=EPILOGUES[name](gpu, dtype))
    plan = stages(log)
    assert len(plan) == 1 and "with its pointwise epilogue" in plan[0], log


# The pointwise backward modes (dx = dy * f'(x), cuDNN's ports: dy the loss, x the
# activation's input), each with a full-size second operand read in the epilogue.
BACKWARD_MODES = ["relu_backward", "tanh_backward", "sigmoid_backward", "elu_backward",
                  "gelu_backward", "gelu_approx_tanh_backward", "softplus_backward",
                  "swish_backward"]


def ep_backward(mode, product_is, layout="packed"):
    """The product as the loss (dh = dy @ w^T, then the activation's backward at its saved
    input: a training graph's usual order) or as the input (the activation's input
    recomputed, the loss a graph input)."""
    def make(gpu, dtype):
        def epilogue(g, c, want_c):
            other = gpu.input(list(want_c.shape), dtype, layout)
            bwd, want_of = getattr(g, mode), getattr(ref, mode)
            if product_is == "loss":
                y = bwd(c, other.bind(g, "x"), name="bwd")
                want = want_of(other.values, want_c)
            else:
                y = bwd(other.bind(g, "dy"), c, name="bwd")
                want = want_of(want_c, other.values)
            return [(y, want, "pointwise", [other])]
        return epilogue
    return make


@pytest.mark.parametrize("mode", BACKWARD_MODES)
@pytest.mark.parametrize("m,n,k", [(64, 128, 64), (37, 50, 24)])
def test_backward_pointwise_runs_in_the_matmul_kernel(gpu, dtype, mode, m, n, k):
    # was two stages (the matmul, then "1 pointwise node fused"): the epilogue looked for
    # the node's output on port y, and the _BWD modes write dx
    log = check(gpu, dtype, [m, k], [k, n], epilogue=ep_backward(mode, "loss")(gpu, dtype))
    plan = stages(log)
    assert len(plan) == 1 and "with its pointwise epilogue" in plan[0], log


# relu_backward's step at 0 is left out here: a product within its rounding of 0 may
# take either side (the product as the loss above has no such step)
@pytest.mark.parametrize("mode", [m for m in BACKWARD_MODES if m != "relu_backward"])
def test_backward_pointwise_of_the_product_runs_in_the_matmul_kernel(gpu, dtype, mode):
    log = check(gpu, dtype, [48, 40], [40, 72],
                epilogue=ep_backward(mode, "input", "transposed")(gpu, dtype))
    plan = stages(log)
    assert len(plan) == 1 and "with its pointwise epilogue" in plan[0], log


def test_backward_pointwise_with_the_product_kept_and_a_bias_gradient_chain(gpu, dtype):
    # dh = dy @ w^T kept as an output, da = gelu_backward(dh, a), then * a scale: one kernel
    def epilogue(g, c, want_c):
        a = gpu.input(list(want_c.shape), dtype)
        scale = gpu.input([1, want_c.shape[-1]], dtype, low=0.5, high=1.5)
        da = g.gelu_backward(c, a.bind(g, "a"), name="da")
        y = g.mul(da, scale.bind(g, "scale"), name="scaled")
        want = ref.gelu_backward(a.values, want_c) * scale.values
        return [(c, want_c, "matmul"), (y, want, "pointwise", [a, scale])]
    log = check(gpu, dtype, [40, 64], [64, 56], epilogue=epilogue)
    plan = stages(log)
    assert len(plan) == 1 and "with its pointwise epilogue" in plan[0], log


def test_a_node_reading_another_stage_is_not_fused_and_says_why(gpu):
    # c1 + c2: each product's epilogue would need the other's product in memory first, so
    # the add runs as a stage of its own, and the log says why for each
    dtype = "fp32"
    a, b = gpu.input([16, 24], dtype), gpu.input([24, 32], dtype)
    a2, b2 = gpu.input([16, 8], dtype), gpu.input([8, 32], dtype)
    g = gpu.graph(dtype)
    c1 = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm1")
    c2 = g.matmul(a2.bind(g, "a2"), b2.bind(g, "b2"), name="mm2")
    y = g.add(c1, c2, name="sum")
    out = gpu.output(y, [16, 32], dtype)
    log = ran(lambda: gpu.execute(g, [a, b, a2, b2, out]))
    assert len(stages(log)) == 3, log
    for mm in ("mm1", "mm2"):
        said = (f"node 'sum' (pointwise) is not fused into the epilogue of node '{mm}' "
                "(matmul): it reads a value another stage makes")
        assert any(said in m for m in log), log
    want = a.values @ b.values + a2.values @ b2.values
    magnitude = np.abs(a.values) @ np.abs(b.values) + np.abs(a2.values) @ np.abs(b2.values)
    assert_product_close(out, want, graph_tolerance(["matmul", "pointwise"], dtype), 24,
                         magnitude)


@pytest.mark.large
@pytest.mark.parametrize("bn", [64, 128, 256])
@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
def test_each_sm90_tile_over_more_tiles_than_multiprocessors(gpu, monkeypatch, bn, b_layout):
    # HIPDNN_HIP_WGMMA_BN forces the sm_90 kernel's tile (elsewhere the variable is unread):
    # 1100 x 1000 is 9 x 16 tiles of 128 x 64, more than an H100's 132 multiprocessors, so
    # the persistent grid's blocks each walk several, the epilogue's buffer reused
    monkeypatch.setenv("HIPDNN_HIP_WGMMA_BN", str(bn))
    check(gpu, "bf16", [1100, 256], [256, 1000], "packed", b_layout,
          epilogue=ep_bias_relu(gpu, "bf16"))


# ---- the sm_90 kernel's 64-row tile (decode: m <= 64) ------------------------------------------
# fp16 / bf16 matmuls of at most 64 rows run it on an sm_90 GPU (gemm_choice.c): one consumer
# warpgroup, a's TMA box 64 rows, deeper stages.  Elsewhere (the emulation, other GPUs) the
# same products run the plan's other kernels and are checked alike; knob TILE_M (26) forces
# (64) or forbids (128) it, and declines what it cannot run on any GPU.

ROWS64 = "first run of the tensor-core (wgmma), 64-row tile"
WGMMA = "first run of the tensor-core (wgmma)"


def sm90():
    """Whether this run is the hip engine on an sm_90 GPU (which torch tells)."""
    return GPU_ENGINE == "hip" and compute_capability() == (9, 0)


def assert_rows64(log, expected=True):
    """On an sm_90 GPU (torch says so, or the wgmma kernel ran) the 64-row tile ran (or,
    expected False, the 128-row one); elsewhere tensor cores."""
    wgmma = any(WGMMA in m for m in log)
    if wgmma or sm90():
        assert wgmma and any(ROWS64 in m for m in log) == expected, log
    else:
        assert on_tensor_cores(log), log


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("n,k,b_layout", [
    pytest.param(4096, 4096, "transposed", marks=pytest.mark.large),  # an LLM's projection
    (1001, 512, "transposed"), (520, 776, "packed"), (72, 4104, "packed")])
@pytest.mark.parametrize("m", [1, 16, 33, 64])
def test_the_64_row_tile_over_decode_shapes(gpu, dt, m, n, k, b_layout):
    # b [K, N] n contiguous, or k contiguous (nn.Linear's [N, K] weight); n odd where k is
    # contiguous; m ragged against the tile but for 64; k of many stages, ragged against
    # the 64-deep stage (776, 4104); the model's split-k
    log = check(gpu, dt, [m, k], [k, n], "packed", b_layout, epilogue=ep_bias_gelu(gpu, dt))
    assert_rows64(log)


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("m,n,k,b_layout", [(16, 256, 999, "packed"), (64, 136, 333, "packed"),
                                            (16, 200, 520, "transposed")])
def test_the_64_row_tile_reads_a_transposed(gpu, dt, m, n, k, b_layout):
    # a [M, K] with m contiguous (TMA's box of 64 m x 64 k, wgmma's transposed a): k odd
    log = check(gpu, dt, [m, k], [k, n], "transposed", b_layout, epilogue=ep_residual(gpu, dt))
    assert_rows64(log)


@pytest.mark.parametrize("name", list(EPILOGUES))
@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
def test_the_64_row_tile_runs_every_epilogue(gpu, name, b_layout):
    log = check(gpu, "bf16", [16, 264], [264, 200], "packed", b_layout,
                epilogue=EPILOGUES[name](gpu, "bf16"))
    assert_rows64(log)
    assert len(stages(log)) == 1, log


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("a_shape,b_shape,b_layout", [
    ([3, 16, 256], [256, 136], "packed"), ([2, 33, 128], [2, 128, 72], "transposed"),
    ([2, 2, 1, 512], [2, 1, 512, 264], "transposed"), ([4, 64, 64], [64, 1000], "packed")])
def test_the_64_row_tile_over_batches(gpu, dt, a_shape, b_shape, b_layout):
    # batched, and broadcast (a's batch dims against b's, b's size-1 dims against a's)
    log = check(gpu, dt, a_shape, b_shape, "packed", b_layout, epilogue=ep_bias_relu(gpu, dt))
    assert_rows64(log)


@pytest.mark.parametrize("dt", ["fp16", "bf16"])
@pytest.mark.parametrize("splits", [1, 3, 8])
@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
@pytest.mark.parametrize("m", [1, 33])
def test_the_64_row_tile_splits_k_by_the_knob(gpu, dt, m, splits, b_layout):
    # SPLIT_K_SLC: none, 3 or 8 ranges of k = 2000 (32 steps, the last ragged); each range's
    # partial holds the product's rows only (gm_store_partial), the last sums them
    log = check(gpu, dt, [2, m, 2000], [2000, 264], "packed", b_layout,
                epilogue=ep_bias_gelu(gpu, dt), knobs={hipdnn.knob_type.SPLIT_K_SLC: splits})
    assert_rows64(log)
    assert k_split(log) == splits, log


@pytest.mark.parametrize("tile_m,m", [(64, 16), (128, 16), (64, 200), (128, 200)])
def test_the_tile_m_knob_forces_or_forbids_the_64_row_tile(gpu, tile_m, m):
    # 64: the 64-row tile over 200 rows too (4 row tiles); 128: the 128-row tile over 16
    log = check(gpu, "bf16", [m, 512], [512, 392], "packed", "transposed",
                epilogue=ep_two_outputs(gpu, "bf16"), knobs={hipdnn.knob_type.TILE_M: tile_m})
    assert_rows64(log, tile_m == 64)


@pytest.mark.large
@pytest.mark.parametrize("bn", [64, 128])
@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
def test_each_64_row_tile_width_over_more_tiles_than_multiprocessors(gpu, monkeypatch, bn,
                                                                    b_layout):
    # HIPDNN_HIP_WGMMA_BN forces the width: 4 x 4504 columns are 284 or 144 tiles, more than
    # an H200's 132 multiprocessors, so the persistent blocks each walk several
    monkeypatch.setenv("HIPDNN_HIP_WGMMA_BN", str(bn))
    log = check(gpu, "bf16", [4, 33, 256], [256, 4504], "packed", b_layout,
                epilogue=ep_bias_relu(gpu, "bf16"))
    assert_rows64(log)


def test_the_tile_m_knob_declines_what_the_64_row_tile_cannot_run(gpu):
    # on any GPU: a TF32 matmul (the sm_90 kernel's, fp32 read as TF32) and a convolution
    # keep 128 rows; the 64-row tile is no 256 wide
    g = gpu.graph("fp32")
    g.matmul(g.tensor(name="a", dim=[16, 64]), g.tensor(name="b", dim=[64, 64]),
             name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"node 'mm' \(matmul\): knob TILE_M = 64 asks "
                                                 r"for the sm_90 kernel's 64-row tile, which runs "
                                                 r"fp16 / bf16 matmuls only \(a TF32 matmul"):
        build_with_knobs(g, {hipdnn.knob_type.TILE_M: 64, 20000: 1})
    g = gpu.graph("fp16")
    x = g.tensor(name="x", dim=[2, 16, 8, 8], stride=[1024, 1, 128, 16])
    w = g.tensor(name="w", dim=[24, 16, 3, 3], stride=[144, 1, 48, 16])
    g.conv_fprop(x, w, padding=[1, 1], name="conv").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"knob TILE_M = 64 .*\(a convolution keeps "
                                                 "128 rows"):
        build_with_knobs(g, {hipdnn.knob_type.TILE_M: 64})
    g = gpu.graph("bf16")
    g.matmul(g.tensor(name="a", dim=[16, 64]), g.tensor(name="b", dim=[64, 64]),
             name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"knob TILE_M = 64 with TILE_N = 256: the "
                                                 "sm_90 kernel's 64-row tile is 64 or 128 wide"):
        build_with_knobs(g, {hipdnn.knob_type.TILE_M: 64, hipdnn.knob_type.TILE_N: 256})


# ---- the fp32 register-tiled kernel ----------------------------------------------------------

TILED = "first run of the fp32 register-tiled"


@pytest.mark.parametrize("a_layout,b_layout", [("packed", "packed"), ("transposed", "packed"),
                                               ("packed", "transposed"),
                                               ("transposed", "transposed")])
@pytest.mark.parametrize("m,n,k", [(132, 132, 36), (200, 72, 100), (300, 260, 12)])
def test_fp32_products_run_the_register_tiled_kernel(gpu, m, n, k, a_layout, b_layout):
    # fp32 operands whose contiguous dims are multiples of 4 long: every layout (k or m / n
    # contiguous), m and n ragged against the 128 and 64 tiles, k not a multiple of the
    # stage's 8; the emulation runs the kernel's own code, a block's threads as host threads
    log = check(gpu, "fp32", [m, k], [k, n], a_layout, b_layout,
                epilogue=ep_bias_relu(gpu, "fp32"))
    assert any(TILED in line for line in log), log


def test_a_large_fp32_product_over_more_than_one_wave(gpu):
    # 264 x 520 over k = 64: more tiles of 128 x 64 than one wave (the model's choice)
    log = check(gpu, "fp32", [2, 264, 64], [64, 520], epilogue=ep_bias_gelu(gpu, "fp32"))
    assert any(TILED in line for line in log), log


@pytest.mark.parametrize("tile_n", [64, 128])
def test_the_tile_n_knob_chooses_the_fp32_tile(gpu, tile_n):
    log = check(gpu, "fp32", [3, 40, 64], [64, 136], "packed", "transposed",
                epilogue=ep_residual(gpu, "fp32"), knobs={hipdnn.knob_type.TILE_N: tile_n})
    assert any(TILED in line for line in log), log


@pytest.mark.parametrize("splits", [2, 3])
def test_k_split_on_the_register_tiled_kernel(gpu, monkeypatch, splits):
    # its partial tiles to the workspace straight from registers, summed in order, 64 rows
    # of the tile at a time through the epilogue
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", str(splits))
    log = check(gpu, "fp32", [2, 150, 1000], [2, 1000, 72], "packed", "transposed",
                epilogue=ep_two_outputs(gpu, "fp32"))
    assert any(f"{TILED}, k split {splits} ways," in line for line in log), log


def test_the_kernel_cfg_knob_asks_for_the_register_tiled_kernel(gpu):
    log = check(gpu, "fp32", [2, 40, 32], [32, 24], knobs={hipdnn.knob_type.KERNEL_CFG: 4})
    assert any("fp32 FMA, register-tiled" in m and TILED in m for m in log), log
    log = check(gpu, "fp32", [40, 32], [32, 24], knobs={hipdnn.knob_type.KERNEL_CFG: 1})
    assert any("first run of the general kernel" in m for m in log), log
    g = gpu.graph("fp32")  # k = 7: no 16-byte rows
    g.matmul(g.tensor(name="a", dim=[64, 7]), g.tensor(name="b", dim=[7, 64]),
             name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"node 'mm' \(matmul\): knob KERNEL_CFG = 4 "
                                                 "asks for the fp32 register-tiled kernel"):
        build_with_knobs(g, {hipdnn.knob_type.KERNEL_CFG: 4})


def test_a_misaligned_fp32_view_takes_the_general_kernel(gpu):
    log = misaligned_product(gpu, "fp32", 48, 64, 40)
    assert any("fp32 FMA, register-tiled" in line for line in log), log
    assert any("first run of the general kernel" in line for line in log), log


# ---- split-k ---------------------------------------------------------------------------------

def k_split(log):
    """The ranges the first run's kernel split k into (1: none)."""
    for line in log:
        if "first run of the " in line and "k split " in line:
            return int(line.split("k split ", 1)[1].split(" ", 1)[0])
    return 1


@pytest.mark.parametrize("splits", [2, 3])
@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
def test_k_split_into_ranges(gpu, dtype, monkeypatch, splits, b_layout):
    # HIPDNN_HIP_SPLIT_K forces the ranges: k = 1000 is 16 steps of 64 (the last ragged), in
    # ranges of 8 or 6; batched, m and n ragged against every tile, an epilogue after the
    # sum (the product rounded once, as without the split)
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", str(splits))
    log = check(gpu, dtype, [2, 33, 1000], [2, 1000, 72], "packed", b_layout,
                epilogue=ep_bias_gelu(gpu, dtype))
    assert k_split(log) == splits, log


@pytest.mark.parametrize("splits", [1, 3])
def test_the_split_k_knob_chooses_the_ranges(gpu, dtype, splits):
    # cuDNN frontend's way: create_execution_plan(engine, {knob: value}); 64 x 64 over
    # k = 4096 the model would split, the knob says how (1: not at all)
    log = check(gpu, dtype, [64, 4096], [4096, 64], epilogue=ep_bias_relu(gpu, dtype),
                knobs={hipdnn.knob_type.SPLIT_K_SLC: splits})
    assert k_split(log) == splits, log


@pytest.mark.parametrize("cfg,stage,kernel", [(1, "general (fp32 FMA)", "general"),
                                              (2, "on tensor cores", "tensor-core")])
def test_the_kernel_cfg_knob_chooses_the_kernel(gpu, cfg, stage, kernel):
    # KERNEL_CFG 1: the general kernel where the model would take tensor cores; 2: mma.sync's
    # tensor cores (not the sm_90 kernel, on an sm_90 GPU too)
    log = check(gpu, "fp16", [64, 96], [96, 80], epilogue=ep_bias_relu(gpu, "fp16"),
                knobs={hipdnn.knob_type.KERNEL_CFG: cfg})
    assert any(stage in m and f"first run of the {kernel} kernel" in m for m in log), log


def test_the_kernel_cfg_knob_declines_a_kernel_that_cannot_run_the_product(gpu):
    # fp32 operands never feed the tensor cores: the plan fails with the reason
    g = gpu.graph("fp32")
    g.matmul(g.tensor(name="a", dim=[64, 64]), g.tensor(name="b", dim=[64, 64]),
             name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"node 'mm' \(matmul\): knob KERNEL_CFG = 2 "
                                                 "asks for tensor cores through mma.sync"):
        build_with_knobs(g, {hipdnn.knob_type.KERNEL_CFG: 2})


def test_the_kernel_cfg_knob_asks_for_the_sm90_kernel(gpu):
    # KERNEL_CFG 3 runs wgmma on an sm_90 GPU; elsewhere the plan fails saying why
    cc = compute_capability()
    if GPU_ENGINE == "hip" and cc is None:
        pytest.skip("needs torch to tell the GPU's compute capability")
    if cc == (9, 0):
        log = check(gpu, "bf16", [256, 512], [512, 384],
                    knobs={hipdnn.knob_type.KERNEL_CFG: 3})
        assert any("first run of the tensor-core (wgmma)" in m for m in log), log
        return
    g = gpu.graph("fp16")
    g.matmul(g.tensor(name="a", dim=[64, 64]), g.tensor(name="b", dim=[64, 64])).set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match="KERNEL_CFG = 3 asks for tensor cores "
                                                 r"through wgmma \(sm_90\): .*not an sm_90"):
        build_with_knobs(g, {hipdnn.knob_type.KERNEL_CFG: 3})


def test_the_engine_lists_its_knobs_and_refuses_others(gpu):
    g = gpu.graph("fp16")
    g.matmul(g.tensor(name="a", dim=[64, 64]), g.tensor(name="b", dim=[64, 64])).set_output(True)
    g.validate()
    g.build_operation_graph()
    names = [e.name for e in hipdnn.engines()]
    knobs = g.get_knobs_for_engine(names.index(GPU_ENGINE))
    assert [(k.type, k.min_value, k.max_value, k.stride) for k in knobs] == [
        (hipdnn.knob_type.SPLIT_K_SLC, 0, 64, 1), (hipdnn.knob_type.KERNEL_CFG, 0, 5, 1),
        (hipdnn.knob_type.TILE_M, 0, 128, 64), (hipdnn.knob_type.TILE_N, 0, 256, 64),
        (20000, 0, 1, 1)]  # 20000: tf32 (test_gpu_tf32.py)
    assert knobs[2].values == (0, 64, 128) and knobs[0].values == (), knobs
    assert knobs[3].values == (0, 64, 128, 256), knobs
    assert g.get_knobs_for_engine(names.index("reference_cpu")) == []
    for choice, said in (({hipdnn.knob_type.SPLIT_K_SLC: 65}, "takes 0 to 64, not 65"),
                         ({hipdnn.knob_type.STAGES: 2},
                          r"has no knob 7 \(its knobs: 9, 12, 26, 27, 20000\)"),
                         ({hipdnn.knob_type.TILE_M: 32}, rf"knob 26 of engine '{GPU_ENGINE}' takes 0 to "
                          r"128 in steps of 64 \(only 0, 64, 128\), not 32"),
                         ({hipdnn.knob_type.TILE_N: 96}, rf"knob 27 of engine '{GPU_ENGINE}' takes 0 to "
                          r"256 in steps of 64 \(only 0, 64, 128, 256\), not 96"),
                         ({hipdnn.knob_type.TILE_N: 192}, r"\(only 0, 64, 128, 256\), not 192")):
        with pytest.raises(hipdnn.HipdnnError, match=said):
            build_with_knobs(g, choice)
    with pytest.raises(hipdnn.HipdnnError, match="engine 'reference_cpu' has no knob 9 "
                                                 "\\(it has none\\)"):
        g.create_execution_plan(names.index("reference_cpu"), {hipdnn.knob_type.SPLIT_K_SLC: 2})


def test_k_split_on_the_general_kernel_for_a_misaligned_view(gpu, dtype, monkeypatch):
    # the plan's ranges, run by the kernel compiled at enqueue (its own tiles, the same
    # workspace)
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "4")
    log = misaligned_product(gpu, dtype, 40, 512, 24)  # k: 8 steps, 2 a range
    assert any("first run of the general, k split 4 ways, kernel" in line for line in log), log


def test_a_long_k_over_few_tiles_is_split(gpu, dtype):
    # 64 x 64 is one tile: most multiprocessors would idle while it walks k = 4096; the
    # plan splits k (into how many ranges the model says)
    log = check(gpu, dtype, [64, 4096], [4096, 64], epilogue=ep_bias_relu(gpu, dtype))
    assert k_split(log) > 1, log


# ---- split-k in one launch: a tile's last range sums the partials (gemm_split.c) ------------
# k = 867 is 14 steps of 64, the last ragged: forced 2, 3 or 7 ways it splits into 2, 3 and
# 7 ranges; m and n ragged against every tile.  Every run's workspace starts as 0xA5 garbage
# (conftest), so every arrival word is claimed from a foreign value.

SPLIT_K = 867


@pytest.mark.parametrize("splits", [2, 3, 7])
@pytest.mark.parametrize("name", list(EPILOGUES))
def test_k_split_with_every_epilogue(gpu, dtype, monkeypatch, name, splits):
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", str(splits))
    log = check(gpu, dtype, [37, SPLIT_K], [SPLIT_K, 50], epilogue=EPILOGUES[name](gpu, dtype))
    assert k_split(log) == splits, log
    assert len(stages(log)) == 1, log


@pytest.mark.parametrize("splits", [3, 7])
def test_k_split_of_a_broadcast_batch_with_a_backward_epilogue(gpu, dtype, monkeypatch, splits):
    # three batches of a against one b, the product the loss of a gelu backward
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", str(splits))
    log = check(gpu, dtype, [3, 70, SPLIT_K], [SPLIT_K, 72], "packed", "transposed",
                epilogue=ep_backward("gelu_backward", "loss")(gpu, dtype))
    assert k_split(log) == splits, log


def split_graph(dtype, m=70, n=72, k=SPLIT_K, batch=2):
    """y = relu(a @ b + bias) and c = a @ b, both outputs, a batched; float32 or float16."""
    io = {"fp32": hipdnn.data_type.FLOAT, "fp16": hipdnn.data_type.HALF}[dtype]
    g = hipdnn.pygraph(io_data_type=io, compute_data_type=hipdnn.data_type.FLOAT,
                       name="split_k")
    a = g.tensor(name="a", dim=[batch, m, k])
    b = g.tensor(name="b", dim=[k, n])
    bias = g.tensor(name="bias", dim=[1, n])
    c = g.matmul(a, b, name="mm")
    y = g.relu(g.bias(c, bias), name="act")
    for t in (c, y):
        t.set_output(True).set_data_type(io)
    g.set_preferred_engine(GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    return g, (a, b, bias), (c, y)


class SplitRun:
    """Device buffers for split_graph: random inputs, NaN-poisoned outputs, and one
    workspace, 0xA5 garbage until a run leaves its own words there."""

    def __init__(self, g, ins, outs, dtype, rng):
        np_type = {"fp32": np.float32, "fp16": np.float16}[dtype]
        self.host = [rng.uniform(-1, 1, list(t.get_dim())).astype(np_type) for t in ins]
        self.dev = [hipdnn.DeviceArray.from_numpy(h) for h in self.host]
        self.outs = [hipdnn.DeviceArray.empty(list(t.get_dim()), np_type) for t in outs]
        self.ws = hipdnn.DeviceArray.empty([max(g.get_workspace_size(), 1)], np.uint8)
        self.ws.fill_bytes(0xA5)
        self.pack = dict(zip(list(ins) + list(outs), self.dev + self.outs))
        self.poison()

    def poison(self):
        for o in self.outs:
            o.fill_bytes(0xFF)

    def refill(self, rng):
        """New input values in the same memory (a replay reads them as they are)."""
        for i, h in enumerate(self.host):
            self.host[i] = rng.uniform(-1, 1, h.shape).astype(h.dtype)
            hipdnn._C.copy_value(self.dev[i], self.host[i], False)

    def results(self):
        return [o.numpy().copy() for o in self.outs]

    def check(self, dtype, what):
        a, b, bias = (h.astype(np.float64) for h in self.host)
        c = np.matmul(a, b)
        k = a.shape[-1]
        magnitude = np.matmul(np.abs(a), np.abs(b))
        for got, want, ops in zip(self.results(), (c, ref.relu(c + bias)),
                                  (["matmul"], ["matmul", "pointwise"])):
            tol = graph_tolerance(ops, dtype)
            bound = tol + tol * np.abs(want) + 2.0 * k * FP32_UNIT * magnitude
            err = np.abs(got.astype(np.float64) - want)
            assert np.isfinite(got).all() and (err <= bound).all(), (
                f"{what}: |diff| up to {np.nanmax(err):.3g}")


def assert_arrival_words_reset(g, ws, splits, m, n, batch):
    """The workspace's arrival words (gemm_split.c: after the partials of the ranges
    reserved, one a 64 x 64 tile) are each 0 (reset by its tile's last range) or untouched
    garbage (a word of a smaller tile grid than the largest)."""
    partials = splits * batch * (-(-m // 128) * 128) * (-(-n // 256) * 256) * 4
    words = batch * -(-m // 64) * -(-n // 64)
    assert 0 <= g.get_workspace_size() - (partials + 8 * words) < 256  # buffers 256-aligned
    tail = ws.numpy()[partials:partials + 8 * words].view(np.uint64)
    assert ((tail == 0) | (tail == 0xA5A5A5A5A5A5A5A5)).all(), [hex(w) for w in tail]
    assert (tail == 0).any()


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
def test_k_split_runs_again_and_again_on_one_workspace_alike(gpu, monkeypatch, rng, dtype):
    # the second and third runs find the arrival words the first left (0, another launch's
    # nonce: claimed again), the fourth a workspace of garbage again; every run's outputs
    # bit for bit the first's, whichever range of each tile came last
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "3")
    g, ins, outs = split_graph(dtype)
    run = SplitRun(g, ins, outs, dtype, rng)
    log = ran(lambda: g.execute(run.pack, run.ws))
    assert k_split(log) == 3, log
    run.check(dtype, "first run")
    first = run.results()
    for again in range(3):
        run.poison()
        if again == 2:
            run.ws.fill_bytes(0xA5)
        g.execute(run.pack, run.ws)
        assert_arrival_words_reset(g, run.ws, 3, 70, 72, 2)
        for got, want in zip(run.results(), first):
            assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), f"run {again + 2}"


def test_k_split_is_one_launch_and_a_replayed_capture_sums_each_time(gpu, monkeypatch, rng):
    # captured on a stream: one kernel node for the split product with its epilogue (no
    # summing launch, no memset); each replay carries the same nonce and finds the words
    # the last one left at 0 (new inputs each replay: no range's stale partial passes)
    from test_gpu_graph_capture import CAPTURE_THREAD_LOCAL, Driver, end_capture
    if hipdnn.device_runtime().name != "cuda":
        pytest.skip("the test drives graphs through the CUDA driver API")
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "7")
    g, ins, outs = split_graph("fp32", m=130, n=72, batch=1)
    run = SplitRun(g, ins, outs, "fp32", rng)
    d = Driver()
    stream = d.out("cuStreamCreate", ctypes.c_uint(0))
    handle = hipdnn.create_handle()
    captured = ex = None
    try:
        hipdnn.set_stream(handle, stream)
        d("cuStreamBeginCapture_v2", ctypes.c_void_p(stream), CAPTURE_THREAD_LOCAL)
        log = ran(lambda: g.execute(run.pack, run.ws, handle=handle))
        captured = end_capture(d, stream)
        assert d.nodes(captured) == 1, log
        assert k_split(log) == 7, log
        ex = d.instantiate(captured)
        for replay in range(3):
            run.poison()
            if replay:
                run.refill(rng)
            d.launch(ex)
            run.check("fp32", f"replay {replay}")
            assert_arrival_words_reset(g, run.ws, 7, 130, 72, 1)
    finally:
        if ex:
            d("cuGraphExecDestroy", ctypes.c_void_p(ex))
        if captured:
            d("cuGraphDestroy", ctypes.c_void_p(captured))
        hipdnn.destroy_handle(handle)
        d("cuStreamDestroy_v2", ctypes.c_void_p(stream))


def test_epilogue_on_a_batched_product(gpu, dtype):
    log = check(gpu, dtype, [2, 3, 40, 64], [64, 48], epilogue=ep_bias_gelu(gpu, dtype))
    assert len(stages(log)) == 1, log


def test_transformer_mlp(gpu, dtype):
    # x @ w1 + b1 -> gelu -> @ w2 + b2 -> + x: two matmul stages, each with its epilogue
    rows, d, h = 48, 64, 128
    x = gpu.input([rows, d], dtype)
    w1, b1 = gpu.input([d, h], dtype, low=0.05, high=0.2), gpu.input([1, h], dtype)
    w2, b2 = gpu.input([h, d], dtype, low=0.05, high=0.2), gpu.input([1, d], dtype)
    g = gpu.graph(dtype)
    xt = x.bind(g, "x")
    hdn = g.gelu(g.bias(g.matmul(xt, w1.bind(g, "w1"), name="fc1"), b1.bind(g, "b1")))
    y = g.add(g.bias(g.matmul(hdn, w2.bind(g, "w2"), name="fc2"), b2.bind(g, "b2")), xt)
    out = gpu.output(y, [rows, d], dtype)
    log = ran(lambda: gpu.execute(g, [x, w1, b1, w2, b2, out]))
    h64 = ref.gelu(x.values @ w1.values + b1.values)  # an fp32 intermediate: no rounding
    want = h64 @ w2.values + b2.values + x.values
    magnitude = np.abs(x.values) @ np.abs(w1.values) @ np.abs(w2.values) + np.abs(h64) @ np.abs(w2.values)
    assert_product_close(out, want, 2 * graph_tolerance(["matmul", "pointwise"], dtype), h,
                         magnitude)
    plan = stages(log)
    assert len(plan) == 2 and all("with its pointwise epilogue" in m for m in plan), log


def test_gpu_and_reference_engines_agree(gpu, dtype):
    a = gpu.input([24, 40], dtype)
    b = gpu.input([40, 16], dtype)
    results = []
    for engine in (gpu.engine, "reference_cpu"):
        g = gpu.graph(dtype)
        c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
        out = gpu.output(c, [24, 16], dtype)
        if engine == "reference_cpu":
            g.set_preferred_engine(engine)
            g.build([hipdnn.heur_mode.A])
            g.execute({a.tensor: a.array, b.tensor: b.array, out.tensor: out.array})
        else:
            gpu.execute(g, [a, b, out])
        results.append(out.decoded())
    np.testing.assert_allclose(results[0], results[1], rtol=2 * tolerance("matmul", dtype),
                               atol=2 * tolerance("matmul", dtype))


# ---- AMD matrix cores (MFMA) ------------------------------------------------------------------
# The ROCm build's kernel for fp16 / bf16 matmuls (gm_mfma.h).  No AMD GPU has run it: the
# emulation runs its own code with a host model of the instruction (emulate_mfma.cpp), asked
# for by KERNEL_CFG 5; an NVIDIA build declines the knob.

MFMA = "matrix-core (MFMA)"
MFMA_KNOBS = {hipdnn.knob_type.KERNEL_CFG: 5}
EMULATED = GPU_ENGINE == "hip_emulated"
needs_mfma = pytest.mark.skipif(not EMULATED, reason="only the emulation (or a ROCm build) runs MFMA")


def on_mfma(log):
    return any(f"first run of the {MFMA}" in m for m in log)


@needs_mfma
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("m,n,k,a_layout,b_layout", [
    (8, 8, 8, "packed", "packed"), (37, 64, 40, "packed", "packed"),
    (64, 48, 37, "transposed", "packed"), (72, 136, 96, "transposed", "transposed"),
    (100, 200, 64, "packed", "transposed"), (129, 257, 48, "packed", "transposed")])
def test_the_mfma_kernel_over_shapes_and_layouts(gpu, dtype, m, n, k, a_layout, b_layout):
    # m, n, k ragged against the 64 x 128 tile and the 32-deep stage; k odd where no
    # operand's contiguous dim is k
    log = check(gpu, dtype, [m, k], [k, n], a_layout, b_layout, knobs=MFMA_KNOBS)
    assert on_mfma(log), log


@needs_mfma
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("a_shape,b_shape", [([2, 3, 40, 32], [32, 24]),
                                             ([3, 1, 24, 16], [1, 2, 16, 40])])
def test_the_mfma_kernel_broadcasts_batches(gpu, dtype, a_shape, b_shape):
    log = check(gpu, dtype, a_shape, b_shape, knobs=MFMA_KNOBS)
    assert on_mfma(log), log


@needs_mfma
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("name", list(EPILOGUES))
def test_the_mfma_kernel_runs_every_epilogue(gpu, dtype, name):
    log = check(gpu, dtype, [37, 24], [24, 56], epilogue=EPILOGUES[name](gpu, dtype),
                knobs=MFMA_KNOBS)
    assert on_mfma(log) and any("with its pointwise epilogue" in m for m in log), log


@needs_mfma
@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
@pytest.mark.parametrize("splits", [2, 3])
@pytest.mark.parametrize("b_layout", ["packed", "transposed"])
def test_the_mfma_kernel_splits_k(gpu, dtype, monkeypatch, splits, b_layout):
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", str(splits))
    log = check(gpu, dtype, [2, 33, 1000], [2, 1000, 72], "packed", b_layout,
                epilogue=ep_bias_gelu(gpu, dtype), knobs=MFMA_KNOBS)
    assert on_mfma(log) and k_split(log) == splits, log


@needs_mfma
def test_a_misaligned_view_leaves_the_mfma_kernel_for_the_general_one(gpu):
    log = misaligned_product(gpu, "fp16", 48, 40, 64, knobs=MFMA_KNOBS)
    assert any("on matrix cores (MFMA)" in line for line in log), log
    assert any("first run of the general kernel" in line for line in log), log
    g = gpu.graph("fp16")  # k = 36: no 16-byte rows of 8
    g.matmul(g.tensor(name="a", dim=[64, 36]), g.tensor(name="b", dim=[36, 64]),
             name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"node 'mm' \(matmul\): knob KERNEL_CFG = 5 "
                                                 "asks for AMD matrix cores through MFMA"):
        build_with_knobs(g, MFMA_KNOBS)


@pytest.mark.skipif(EMULATED, reason="the emulation has the MFMA kernel's model")
def test_an_nvidia_build_declines_the_mfma_kernel(gpu):
    g = gpu.graph("fp16")
    g.matmul(g.tensor(name="a", dim=[64, 64]), g.tensor(name="b", dim=[64, 64]),
             name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"KERNEL_CFG = 5 asks for AMD matrix cores "
                                                 "through MFMA .*which the NVIDIA build does not have"):
        build_with_knobs(g, MFMA_KNOBS)
