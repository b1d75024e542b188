"""The GPU engine's tf32 knob (hipdnn's knob 20000, as the blaslt engine's): with it at 1 an
fp32 matmul whose a has k contiguous and b k or n runs on the sm_90 kernel's tensor cores
reading its inputs as TF32 (wgmma's .tf32 kind: b with n contiguous is copied transposed by
the producer warpgroup), as does a forward convolution with w dense in k (x gathered 4
channels at a time channels-last, an element at a time NCHW or with KCRS w); at 0, the
default, fp32 stays exact.

On an sm_90 GPU the products are held to the TF32 bound (docs/architecture.md, Tolerances):
each input read as TF32 keeps 10 of fp32's 23 mantissa bits, truncated or rounded, so a
product a*b is off by at most (2^-10 + 2^-10 + 2^-20) |a*b|, and a dot of k of them by at
most 2^-9 (|a| @ |b|) beyond fp32 accumulation's k u (|a| @ |b|).  Random inputs land far
inside it (about sqrt(k) 2^-11 relative to the dot's size), and far outside exact fp32's.
Elsewhere (the engine's host emulation, other GPUs) the knob's plan runs the exact fp32
kernel: the same checks at fp32's tolerance.  What every machine checks: the plan's stage
line, the declines (layouts wgmma cannot read as TF32, filters TMA cannot bring, an exact
KERNEL_CFG),
the config's numerical note (cuDNN's TENSOR_CORE, the note PyTorch deselects for fp32
without TF32), and that autotuning never sweeps the knob.  Outputs poisoned, inputs checked
unchanged (conftest.DeviceNumerics), as in test_gpu_matmul.py.
"""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import GPU_ENGINE, engine_log
from tolerances import TF32_UNIT, graph_tolerance
from test_gpu_matmul import FP32_UNIT, _bias, build_with_knobs, compute_capability

pytestmark = pytest.mark.gpu

KNOB_TF32 = 20000
WGMMA_TF32 = "first run of the tensor-core (wgmma), TF32"
TILED = "first run of the fp32 register-tiled"


def on_sm90():
    """True on an sm_90 GPU, False elsewhere (the emulation too), None where torch cannot
    tell (the log then says which kernel ran)."""
    if GPU_ENGINE != "hip":
        return False
    cc = compute_capability()
    return None if cc is None else cc == (9, 0)


def ran_tf32(log):
    """Whether the run's log says the sm_90 kernel read the inputs as TF32; checked against
    the GPU where torch can tell."""
    tf32 = any(WGMMA_TF32 in m for m in log)
    assert on_sm90() in (None, tf32), log
    return tf32


def product(gpu, a_shape, b_shape, a_layout, b_layout, tf32, bias_relu=False, knobs=None):
    """c = a @ b in fp32 (then bias + relu) on a config with knob TF32 = tf32 (None: the
    heuristics' plan, no knob given); checked against float64 NumPy, to the TF32 bound where
    the plan reads TF32 on an sm_90 GPU, else to fp32's.  The log and the worst error as a
    fraction of (|a| @ |b|)."""
    a = gpu.input(a_shape, "fp32", a_layout)
    b = gpu.input(b_shape, "fp32", b_layout)
    g = gpu.graph("fp32")
    c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    want = np.matmul(a.values, b.values)
    magnitude = np.matmul(np.abs(a.values), np.abs(b.values))
    operands = [a, b]
    ops = ["matmul"]
    if bias_relu:
        bias = _bias(gpu, "fp32", want.shape[-1])
        c = g.relu(g.bias(c, bias.bind(g, "bias")), name="act")
        want = ref.relu(want + bias.values)
        operands.append(bias)
        ops.append("pointwise")
    out = gpu.output(c, want.shape, "fp32")
    operands.append(out)
    if tf32 is not None:
        build_with_knobs(g, {KNOB_TF32: tf32, **(knobs or {})})
    log = engine_log(lambda: gpu.execute(g, operands, build=tf32 is None))
    got = np.asarray(out.decoded(), np.float64)
    k = a_shape[-1]
    tol = graph_tolerance(ops, "fp32")
    read_tf32 = tf32 == 1 and ran_tf32(log)
    # TF32: 2^-9 of (|a| @ |b|) for the inputs' rounding; both: fp32 accumulation's k u
    bound = (tol + tol * np.abs(want) + 2.0 * k * FP32_UNIT * magnitude +
             (2.0 * TF32_UNIT * magnitude if read_tf32 else 0.0))
    err = np.abs(got - want)
    bad = np.unravel_index(int(np.argmax(err - bound)), err.shape)
    assert (err <= bound).all(), f"|diff| {err[bad]:.3g} > {bound[bad]:.3g} at {bad}"
    return log, float(np.max(err / magnitude))


# odd M, N and K; K-major operands padded to 16-byte rows where K is not a multiple of 4;
# b K-major (TMA) or N-major (copied transposed: any N, any K)
TF32_CASES = [((7, 5), (5, 13), "padded", "transposed_padded"),
              ((129, 40), (40, 257), "packed", "transposed"),
              ((33, 67), (67, 300), "padded", "transposed_padded"),
              ((200, 1000), (1000, 72), "packed", "transposed"),
              ((2, 3, 64, 96), (96, 80), "packed", "transposed"),
              ((7, 5), (5, 13), "padded", "packed"),
              ((129, 40), (40, 257), "packed", "packed"),
              ((33, 67), (67, 301), "padded", "packed"),
              ((300, 1000), (1000, 200), "packed", "padded"),
              ((2, 3, 64, 96), (3, 96, 80), "packed", "packed")]


@pytest.mark.parametrize("a_shape,b_shape,a_layout,b_layout", TF32_CASES)
def test_the_tf32_knob_reads_fp32_as_tf32_on_sm90(gpu, a_shape, b_shape, a_layout, b_layout):
    log, worst = product(gpu, a_shape, b_shape, a_layout, b_layout, 1, bias_relu=True)
    plan = [m for m in log if ": stage " in m]
    assert len(plan) == 1 and "TF32 on tensor cores on sm_90, else exact fp32 FMA" in plan[0], log
    if ran_tf32(log):  # the inputs were read as TF32: errors far above fp32's few ulps
        assert worst > 2.0 ** -16, worst


@pytest.mark.parametrize("tf32", [None, 0])
def test_fp32_stays_exact_without_the_knob(gpu, tf32):
    # the heuristics' config (no knob) and knob TF32 = 0: the exact fp32 kernel, fp32's
    # tolerance, on every GPU
    log, worst = product(gpu, (129, 40), (40, 257), "packed", "transposed", tf32, bias_relu=True)
    assert any(TILED in m for m in log) and not any("TF32" in m for m in log), log
    assert worst < 2.0 ** -18, worst


@pytest.mark.parametrize("b_layout", ["transposed", "packed"])
@pytest.mark.parametrize("tile_n", [64, 128, 256])
def test_each_sm90_tile_reads_tf32(gpu, tile_n, b_layout):
    # TILE_N picks the sm_90 kernel's tile (the exact kernel's only 64 or 128: 256 leaves it
    # to the model there); more tiles than multiprocessors, so the persistent ones walk
    log, _ = product(gpu, (2100, 136), (136, 1100), "packed", b_layout, 1,
                     knobs={hipdnn.knob_type.TILE_N: tile_n})
    ran_tf32(log)


@pytest.mark.parametrize("b_layout", ["transposed", "packed"])
def test_a_long_k_split_into_ranges_reads_tf32(gpu, monkeypatch, b_layout):
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "4")
    log, _ = product(gpu, (64, 4096), (4096, 64), "packed", b_layout, 1, bias_relu=True)
    assert any("k split 4 ways" in m for m in log), log


@pytest.mark.parametrize("a_layout,b_layout,said", [
    ("packed", "strided", "b is not"),            # b neither k nor n contiguous
    ("transposed", "transposed", "a is not"),     # a [M, K] column-major: m contiguous
    ("packed", "transposed", "a is not")])        # k = 37: a's rows not 16-byte multiples
def test_the_tf32_knob_declines_layouts_wgmma_cannot_read(gpu, a_layout, b_layout, said):
    k = 37 if said == "a is not" and a_layout == "packed" else 40
    a = gpu.input([24, k], "fp32", a_layout)
    b = gpu.input([k, 16], "fp32", b_layout)
    g = gpu.graph("fp32")
    g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"node 'mm' \(matmul\): knob TF32 = 1: wgmma "
                       r"reads TF32 operands K-major only .*; " + said):
        build_with_knobs(g, {KNOB_TF32: 1})


# x, w, stride, pad: odd sizes; channels-last x and KRSC w (x gathered 16 bytes at a time,
# C a multiple of 4), NCHW x and KCRS w (ONNX's; an element at a time), and mixed
CONV_CASES = [([2, 8, 6, 6], [12, 8, 3, 3], [1, 1], [1, 1], "channels_last", "channels_last"),
              ([3, 36, 9, 7], [20, 36, 3, 3], [2, 1], [1, 0], "channels_last", "channels_last"),
              ([2, 64, 14, 14], [72, 64, 1, 1], [1, 1], [0, 0], "channels_last", "channels_last"),
              ([4, 132, 5, 5], [130, 132, 3, 3], [1, 1], [1, 1], "channels_last",
               "channels_last"),
              ([2, 8, 6, 6], [12, 8, 3, 3], [1, 1], [1, 1], "packed", "packed"),
              ([3, 36, 9, 7], [20, 36, 3, 3], [2, 1], [1, 0], "packed", "packed"),
              ([2, 8, 11, 9], [7, 8, 1, 1], [1, 1], [0, 0], "packed", "packed"),
              ([2, 12, 7, 7], [16, 12, 3, 3], [1, 1], [1, 1], "packed", "channels_last"),
              ([2, 12, 7, 7], [16, 12, 3, 3], [1, 1], [1, 1], "channels_last", "packed")]


def conv_tf32(gpu, x_shape, w_shape, stride, pad, x_layout, w_layout, dil=None, flip=False):
    """relu(conv_fprop(x, w)) in fp32 on a config with knob TF32 = 1 (a grouped one where w
    has fewer channels than x), checked against float64 NumPy to the TF32 bound where the
    plan reads TF32 on an sm_90 GPU, else to fp32's; the log."""
    dil = dil or [1] * len(pad)
    x = gpu.input(x_shape, "fp32", x_layout)
    w = gpu.input(w_shape, "fp32", w_layout)
    g = gpu.graph("fp32")
    mode = hipdnn.convolution_mode
    y = g.relu(g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=pad, stride=stride,
                            dilation=dil, name="conv",
                            convolution_mode=mode.CONVOLUTION if flip else mode.CROSS_CORRELATION),
               name="act")
    want = ref.relu(ref.conv_fprop(x.values, w.values, pad, pad, stride, dil, flip=flip))
    magnitude = ref.conv_fprop(np.abs(x.values), np.abs(w.values), pad, pad, stride, dil,
                               flip=flip)
    out = gpu.output(y, want.shape, "fp32", "channels_last")
    build_with_knobs(g, {KNOB_TF32: 1})
    log = engine_log(lambda: gpu.execute(g, [x, w, out], build=False))
    k = int(np.prod(w_shape[1:]))
    tol = graph_tolerance(["conv_fprop", "pointwise"], "fp32")
    read_tf32 = ran_tf32(log)
    bound = (tol + tol * np.abs(want) + 2.0 * k * FP32_UNIT * magnitude +
             (2.0 * TF32_UNIT * magnitude if read_tf32 else 0.0))
    err = np.abs(np.asarray(out.decoded(), np.float64) - want)
    assert (err <= bound).all(), float(np.max(err - bound))
    plan = [m for m in log if ": stage " in m]
    assert plan and "TF32 on tensor cores on sm_90, else exact fp32 FMA" in plan[0], log
    if read_tf32:
        assert float(np.max(err / magnitude)) > 2.0 ** -16
    return log


@pytest.mark.parametrize("x_shape,w_shape,stride,pad,x_layout,w_layout", CONV_CASES)
def test_the_tf32_knob_reads_a_forward_convolution_as_tf32(gpu, x_shape, w_shape, stride, pad,
                                                           x_layout, w_layout):
    conv_tf32(gpu, x_shape, w_shape, stride, pad, x_layout, w_layout)


# NCHW x and KCRS w, gathered an element at a time (gm_wg_tf32_conv): dilated, true
# convolutions, 1 and 3 spatial dims, a 1D filter of 33 taps (over the 31 a mask of the taps
# holds: their coordinates compared instead), groups, a strided x, more tiles than
# multiprocessors (each block walking several), and k split into ranges
ELEMENT_CASES = {
    "5x5_dilation2": dict(x=[1, 8, 13, 12], w=[16, 8, 5, 5], pad=[2, 3], dil=[2, 2]),
    "true_convolution": dict(x=[2, 16, 7, 7], w=[8, 16, 3, 3], pad=[1, 1], flip=True),
    "1d": dict(x=[4, 16, 33], w=[24, 16, 5], pad=[2]),
    "1d_33_taps": dict(x=[2, 4, 70], w=[12, 4, 33], pad=[16], stride=[2]),
    "3d": dict(x=[1, 8, 5, 6, 7], w=[16, 8, 3, 3, 3], pad=[1, 1, 1], flip=True),
    "2_groups": dict(x=[2, 16, 7, 6], w=[24, 8, 3, 3], pad=[1, 1]),
    "strided_x": dict(x=[2, 12, 9, 8], w=[20, 12, 3, 3], pad=[1, 1], stride=[2, 2],
                      layout="strided"),
    "many_tiles": dict(x=[16, 16, 48, 48], w=[16, 16, 3, 3], pad=[1, 1]),
}


@pytest.mark.parametrize("name", list(ELEMENT_CASES))
def test_the_tf32_knob_gathers_nchw_an_element_at_a_time(gpu, name):
    geo = ELEMENT_CASES[name]
    nsp = len(geo["pad"])
    conv_tf32(gpu, geo["x"], geo["w"], geo.get("stride", [1] * nsp), geo["pad"],
              geo.get("layout", "packed"), "packed", geo.get("dil"), geo.get("flip", False))


def test_an_element_gathered_convolution_split_into_ranges(gpu, monkeypatch):
    monkeypatch.setenv("HIPDNN_HIP_SPLIT_K", "3")  # ranges starting mid-filter
    log = conv_tf32(gpu, [2, 64, 9, 9], [16, 64, 3, 3], [1, 1], [1, 1], "packed", "packed")
    assert any("k split 3 ways" in m for m in log), log


@pytest.mark.parametrize("w_layout", ["packed", "channels_last"])
def test_the_tf32_knob_declines_filters_tma_cannot_bring(gpu, w_layout):
    # 3 channels of 3x3 taps: each filter 27 elements, its start not 16-byte aligned
    x = gpu.input([2, 3, 6, 6], "fp32", "packed")
    w = gpu.input([8, 3, 3, 3], "fp32", w_layout)
    said = "w dense in the product's k"
    g = gpu.graph("fp32")
    g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], name="conv").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"node 'conv' \(conv_fprop\): knob TF32 = 1: "
                       r"the sm_90 kernel reads a convolution as TF32 with " + said):
        build_with_knobs(g, {KNOB_TF32: 1})


def test_the_tf32_knob_declines_an_exact_kernel_cfg(gpu):
    a = gpu.input([24, 40], "fp32")
    b = gpu.input([40, 16], "fp32", "transposed")
    g = gpu.graph("fp32")
    g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm").set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"knob TF32 = 1 reads fp32 as TF32 on the "
                       r"sm_90 kernel, and knob KERNEL_CFG = 4 names the fp32 register-tiled "
                       r"kernel, which computes exact fp32"):
        build_with_knobs(g, {KNOB_TF32: 1, hipdnn.knob_type.KERNEL_CFG: 4})


def test_the_tf32_knob_leaves_16_bit_products_alone(gpu):
    # fp16 is multiplied on tensor cores anyway: the knob changes nothing there
    a = gpu.input([64, 64], "fp16")
    b = gpu.input([64, 48], "fp16")
    g = gpu.graph("fp16")
    c = g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm")
    out = gpu.output(c, [64, 48], "fp16")
    build_with_knobs(g, {KNOB_TF32: 1})
    log = engine_log(lambda: gpu.execute(g, [a, b, out], build=False))
    assert not any("TF32" in m for m in log), log
    want = a.values @ b.values
    tol = graph_tolerance(["matmul"], "fp16")
    assert np.all(np.abs(out.decoded() - want) <= tol + tol * np.abs(want) +
                  2 * 64 * FP32_UNIT * (np.abs(a.values) @ np.abs(b.values)))


def test_a_tf32_config_has_the_tensor_core_note_and_deselecting_it_bars_it(gpu):
    a = gpu.input([24, 40], "fp32")
    b = gpu.input([40, 16], "fp32", "transposed")
    g = gpu.graph("fp32")
    g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm").set_output(True)
    build_with_knobs(g, {KNOB_TF32: 1})
    assert g.get_plan_name_at_index(g.get_execution_plan_count() - 1).endswith(
        f"_k{KNOB_TF32}=1")
    notes = g._configs[-1].numerical_notes()
    assert hipdnn.numerical_note.TENSOR_CORE in notes, notes
    g = gpu.graph("fp32")
    g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm").set_output(True)
    g.deselect_numeric_notes([hipdnn.numerical_note.TENSOR_CORE])  # PyTorch's allow_tf32 off
    with pytest.raises(hipdnn.HipdnnError, match="has a deselected numeric note"):
        build_with_knobs(g, {KNOB_TF32: 1})
    g = gpu.graph("fp32")
    g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm").set_output(True)
    build_with_knobs(g, {KNOB_TF32: 0})
    assert hipdnn.numerical_note.TENSOR_CORE not in g._configs[-1].numerical_notes()


def test_autotuning_never_sweeps_the_tf32_knob(gpu):
    g = gpu.graph("fp32")
    a = gpu.input([24, 40], "fp32")
    b = gpu.input([40, 16], "fp32", "transposed")
    g.matmul(a.bind(g, "a"), b.bind(g, "b"), name="mm").set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    engine = [e.name for e in hipdnn.engines()].index(GPU_ENGINE)
    assert (KNOB_TF32, 0, 1, 0, 1, ()) in g._knob_space(engine)
    before = len(g._configs)
    added = g._add_knob_sweep(64)  # what autotune() times besides the heuristics' configs
    assert added and len(g._configs) > before
    assert all(KNOB_TF32 not in dict(g._configs[i].knobs) for i in added), \
        [g._configs[i].tag() for i in added]
