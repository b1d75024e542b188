"""The cudnn engine's norms (plugins/cudnn/cudnn_norm.c): layernorm, rmsnorm, instancenorm
and batchnorm (training, with running statistics), their inference phases and
batchnorm_inference, and layernorm / rmsnorm / instancenorm / batchnorm_backward, each one
cuDNN NORM_FORWARD or NORM_BACKWARD operation, against the float64 references of
test_norm_forward / test_norm_backward at DESIGN tolerances (fp32 / fp16 / bf16 data, fp32
scale, bias and statistics as cuDNN's norm engines take them, odd sizes, epsilon and
momentum as graph constants or given at execute, both layernorm layouts of the support
matrix), and what the engine declines and why.

The tests marked `gpu` run on cuDNN with an NVIDIA GPU, and in CI over the fake CUDA driver
and fake cuDNN (test_the_gpu_tests_pass_over_the_fake_libraries runs this file there in a
subprocess), whose norm engines compute the operation in float64 by cuDNN's rules (the
axes a layer norm's scale spans, the statistics' shapes, epsilon by value): they check the
translation, not cuDNN's kernels.  Every run copies each operand's whole allocation, NaN
poison included, to the device and back (conftest.DeviceNumerics): outputs are checked to
be fully written and nothing else, inputs unchanged.  Where a case's layout or size is one
cuDNN's engines may not take (NCHW batch norms, a transposed or odd-length layer norm,
16-bit parameters), a GPU run accepts cuDNN's own refusal (its status in the reason) and
prints it; over the fakes every case must run.

On a GPU: HIPDNN_TEST_REQUIRE_GPU=1 python -m pytest -m gpu tests/test_cudnn_norm.py
"""
import contextlib
import ctypes
import os

import numpy as np
import pytest

import hipdnn
import test_batchnorm_inference as bni
import test_norm_backward as nb
import test_norm_forward as nf
from conftest import DeviceNumerics, Numerics, assert_close
from test_cudnn_plugin import (ENGINE, FAKE, cd, cudnn_log,  # noqa: F401 (cd: the fixture)
                               gpu_tests_pass_over_the_fake_libraries, reason)
from tolerances import tolerance

dt = hipdnn.data_type
TRAINING, INFERENCE = nf.TRAINING, nf.INFERENCE

# case -> (x shape, scale shape): odd batch and spatial sizes, channels a multiple of 8
# (cuDNN's 16-bit norm engines want it), every mode's parameter shape
CASES = {
    "layer": ([4, 7, 64], [1, 1, 64]),          # [B, S, D] over D
    "layer_nchw": ([2, 8, 5, 7], [1, 8, 5, 7]),  # [N, C, H, W] over C, H, W
    "rms": ([3, 5, 64], [1, 1, 64]),
    "instance": ([3, 8, 5, 7], [1, 8, 1, 1]),
    "batch": ([5, 8, 3, 7], [1, 8, 1, 1]),
}
# cuDNN's batch and instance norm engines take NHWC tensors
LAYOUT = {"instance": "channels_last", "batch": "channels_last"}


class CudnnDeclined(Exception):
    pass


def build_checked(g, may_decline=False):
    """Builds g with cudnn preferred; fails with cudnn's reason where it does not take g,
    but for CudnnDeclined where cuDNN itself refuses it and may (on a GPU only: over the
    fakes every translated norm runs)."""
    g.set_preferred_engine(ENGINE)
    g.build([hipdnn.heur_mode.A])
    if g.get_engine_name(0) != ENGINE:
        why = dict(g.support_report())[ENGINE]
        if may_decline and not FAKE and why and ("CUDNN_STATUS_" in why or
                                                 "offer no engine config" in why):
            raise CudnnDeclined(why)
        pytest.fail(f"cudnn does not run the graph: {why}")
    return g


def build_or_decline(g):
    return build_checked(g, may_decline=True)


def checked(cd):  # noqa: F811
    """cd, its builds failing with cudnn's reason (unless or_cudnn_declines is in force)."""
    if "build" not in vars(cd):
        cd.build = build_checked
    return cd


@contextlib.contextmanager
def or_cudnn_declines(cd):  # noqa: F811
    """The check inside, or cuDNN's own refusal of its graph (printed)."""
    cd.build = build_or_decline
    try:
        yield
    except CudnnDeclined as e:
        print(f"cuDNN declined: {e}")


def forward(cd, dtype, case, **kw):  # noqa: F811
    layout = LAYOUT.get(case, "packed")
    x_shape, scale_shape = CASES[case]
    kw.setdefault("x_layout", layout)
    kw.setdefault("y_layout", layout)
    kw.setdefault("param_dtype", "fp32")
    nf.Norm(checked(cd), dtype, case, x_shape=x_shape, scale_shape=scale_shape,
            **kw).run_and_check()


def backward(cd, dtype, case, **kw):  # noqa: F811
    x_shape, scale_shape = CASES[case]
    kw.setdefault("layout", LAYOUT.get(case, "packed"))
    kw.setdefault("param_dtype", "fp32")
    nb.CASES.setdefault(case, (x_shape, scale_shape, nf.ref_mode(case)))
    nb.check(checked(cd), dtype, case, x_shape=x_shape, scale_shape=scale_shape, **kw)


# ---- forward ------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("case", list(CASES))
def test_training_phase(cd, dtype, case):  # noqa: F811
    forward(cd, dtype, case)


@pytest.mark.gpu
@pytest.mark.parametrize("case", [c for c in CASES if c != "batch"])
def test_inference_phase(cd, dtype, case):  # noqa: F811
    forward(cd, dtype, case, phase=INFERENCE)


@pytest.mark.gpu
@pytest.mark.parametrize("phase", [TRAINING, INFERENCE], ids=["training", "inference"])
def test_rmsnorm_without_bias(cd, dtype, phase):  # noqa: F811
    forward(cd, dtype, "rms", phase=phase, bias=False)


@pytest.mark.gpu
def test_batchnorm_updates_running_statistics(cd, dtype):  # noqa: F811
    forward(cd, dtype, "batch", running=True, momentum=0.1)


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["layer", "batch"])
def test_epsilon_and_momentum_given_at_execute(cd, case):  # noqa: F811
    # a large epsilon, so that its value visibly matters
    forward(cd, "fp32", case, epsilon=0.25, runtime_epsilon=True, running=case == "batch",
            momentum=0.3, runtime_momentum=case == "batch")


@pytest.mark.gpu
@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [16, 64], [1, 64]),               # rank 2: given trailing dims of 1
    ("batch", [33, 8], [1, 8]),                 # rank 2 batch norm: C stays axis 1
    ("instance", [2, 8, 33], [1, 8, 1]),        # rank 3
    ("layer", [3, 4, 8, 5, 6], [1, 1, 8, 5, 6]),  # rank 5, over three trailing dims
])
def test_ranks_other_than_4(cd, dtype, case, x_shape, scale_shape):  # noqa: F811
    with or_cudnn_declines(cd):
        nf.Norm(cd, dtype, case, x_shape=x_shape, scale_shape=scale_shape,
                param_dtype="fp32").run_and_check()


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["packed", "transposed"])
def test_both_layernorm_layouts_of_the_support_matrix(cd, dtype, layout):  # noqa: F811
    # the support matrix's layernorm: x [2, 6, 16] over its last dim, packed and with its
    # last two dims swapped in memory
    with or_cudnn_declines(cd):
        nf.Norm(cd, dtype, "layer", x_shape=[2, 6, 16], scale_shape=[1, 1, 16],
                x_layout=layout, param_dtype="fp32").run_and_check()


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["layer", "rms"])
def test_odd_row_length(cd, dtype, case):  # noqa: F811
    with or_cudnn_declines(cd):
        nf.Norm(cd, dtype, case, x_shape=[3, 5, 33], scale_shape=[1, 1, 33],
                param_dtype="fp32").run_and_check()


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["batch", "instance"])
def test_nchw_batch_and_instance_norms(cd, dtype, case):  # noqa: F811
    with or_cudnn_declines(cd):
        forward(cd, dtype, case, x_layout="packed", y_layout="packed")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["channels_last", "packed"])
def test_batchnorm_inference(cd, dtype, layout):  # noqa: F811
    # cuDNN 9.14 on an H200 offers no engine for it in either layout (its heuristic:
    # CUDNN_STATUS_NOT_SUPPORTED, 2026-11-30): cuDNN frontend builds batchnorm inference
    # from pointwise operations instead; the hip engine fuses it
    with or_cudnn_declines(cd):
        bni.check_batchnorm(checked(cd), dtype, [3, 8, 5, 7], stats_dtype="fp32",
                            x_layout=layout, y_layout=layout)


@pytest.mark.gpu
def test_16_bit_parameters(cd):  # noqa: F811
    # the fake's engines take fp32 parameters only, as cuDNN's documentation says
    n = nf.Norm(cd, "fp16", "layer", x_shape=[4, 7, 64], scale_shape=[1, 1, 64])
    why = reason(n.g)
    if FAKE:
        assert why and why.startswith(f"{ENGINE}: ") and "CUDNN_STATUS_NOT_SUPPORTED" in why \
            and "fp32 scale, bias and statistics" in why, why
        return
    with or_cudnn_declines(cd):
        n.run_and_check()


def described_x(g):
    """(dims, strides) of x as the engine described it to the fake cuDNN building g's plan
    (translated again for the plan, whatever the engine remembers of its support check)."""
    fake = ctypes.CDLL(os.environ["HIPDNN_CUDNN_LIBRARY"])
    dims, strides = (ctypes.c_int64 * 8)(), (ctypes.c_int64 * 8)()
    fake.fakeCudnnLastNormX(dims, strides)
    build_checked(g)
    n = fake.fakeCudnnLastNormX(dims, strides)
    return list(dims[:n]), list(strides[:n])


@pytest.mark.gpu
@pytest.mark.parametrize("case,x_shape,scale_shape,layout,dims,strides", [
    # cuDNN frontend's samples: [B * S, D, 1, 1], channels_last strides
    ("layer", [4, 7, 64], [1, 1, 64], "packed", [28, 64, 1, 1], [64, 1, 64, 64]),
    ("rms", [3, 4, 8, 5, 6], [1, 1, 8, 5, 6], "packed", [12, 8, 5, 6], [240, 30, 6, 1]),
    # the leading axes not one stride: as hipdnn has them, a trailing 1
    ("layer", [2, 6, 16], [1, 1, 16], "transposed", [2, 6, 16, 1], [96, 1, 6, 6]),
    ("batch", [33, 8], [1, 8], "packed", [33, 8, 1, 1], [8, 1, 8, 8]),
    ("instance", [2, 8, 33], [1, 8, 1], "channels_last", [2, 8, 33, 1], [264, 1, 8, 8]),
])
def test_how_the_tensors_are_described_to_cudnn(cd, case, x_shape, scale_shape,  # noqa: F811
                                                layout, dims, strides):
    if not FAKE:
        pytest.skip("reads what the fake cuDNN was given")
    n = nf.Norm(cd, "fp16", case, x_shape=x_shape, scale_shape=scale_shape, x_layout=layout,
                param_dtype="fp32")
    assert described_x(n.g) == (dims, strides)


@pytest.mark.gpu
def test_the_log_names_the_norm_and_its_engine_config(cd):  # noqa: F811
    log = cudnn_log(lambda: forward(cd, "bf16", "rms"))
    assert any("rmsnorm 'norm', engine config 0 " in m for m in log), log


# ---- backward -----------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("case", list(CASES))
def test_backward(cd, dtype, case):  # noqa: F811
    backward(cd, dtype, case)


@pytest.mark.gpu
def test_rmsnorm_backward_without_dbias(cd, dtype):  # noqa: F811
    backward(cd, dtype, "rms", has_dbias=False)


@pytest.mark.gpu
def test_transposed_layernorm_backward(cd, dtype):  # noqa: F811
    with or_cudnn_declines(cd):
        backward(cd, dtype, "layer", layout="transposed")


# ---- the same graph on cudnn and on reference_cpu -----------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("case", ["layer", "batch"])
def test_cudnn_and_reference_cpu_agree(cd, dtype, case):  # noqa: F811
    got = {}
    x_shape, scale_shape = CASES[case]
    # the same seed on both: the same x, scale and bias
    on_cudnn = checked(DeviceNumerics(np.random.default_rng(27)))
    on_cudnn.engine = ENGINE
    for engine, nx in ((ENGINE, on_cudnn), ("reference_cpu", Numerics(np.random.default_rng(27)))):
        layout = LAYOUT.get(case, "packed")  # y as x: cuDNN wants them alike
        n = nf.Norm(nx, dtype, case, x_shape=x_shape, scale_shape=scale_shape,
                    x_layout=layout, y_layout=layout, param_dtype="fp32")
        nx.execute(n.g, n.operands)
        assert n.g.get_engine_name() == engine
        got[engine] = n.y.decoded()
    assert_close(got[ENGINE], got["reference_cpu"], 2 * tolerance(nf.CASES[case][2], dtype),
                 "cudnn vs reference_cpu")


# ---- what it declines, and why ------------------------------------------------------------------

def layer_graph(x_shape=(4, 7, 64), scale_shape=(1, 1, 64), bias=True, io=dt.HALF, **kw):
    g = hipdnn.pygraph(io_data_type=io, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=list(x_shape))
    s = g.tensor(name="scale", dim=list(scale_shape), data_type=dt.FLOAT)
    b = g.tensor(name="bias", dim=list(scale_shape), data_type=dt.FLOAT) if bias else None
    eps = kw.pop("epsilon", 1e-5)
    then = kw.pop("then", None)
    y, _, _ = g.layernorm(INFERENCE, x, s, b, eps, name="ln", **kw)
    if then:
        y = then(g, y)
    y.set_output(True)
    return g


def device_epsilon_graph():
    g = hipdnn.pygraph(io_data_type=dt.HALF, compute_data_type=dt.FLOAT)
    eps = g.tensor(name="eps", dim=[1, 1, 1], stride=[1, 1, 1], data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[4, 7, 64])
    s, b = (g.tensor(name=n, dim=[1, 1, 64], data_type=dt.FLOAT) for n in ("scale", "bias"))
    y, _, _ = g.layernorm(INFERENCE, x, s, b, eps, name="ln")
    y.set_output(True)
    return g


def ada_graph():
    g = hipdnn.pygraph(io_data_type=dt.HALF, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[4, 7, 64])
    s, b = (g.tensor(name=n, dim=[4, 1, 64], data_type=dt.FLOAT) for n in ("scale", "bias"))
    y, _, _ = g.adalayernorm(INFERENCE, x, s, b, 1e-5, name="ln")
    y.set_output(True)
    return g


def rms_backward_graph(zero_centered):
    g = hipdnn.pygraph(io_data_type=dt.HALF, compute_data_type=dt.FLOAT)
    x, dy = (g.tensor(name=n, dim=[4, 7, 64]) for n in ("x", "dy"))
    s = g.tensor(name="scale", dim=[1, 1, 64], data_type=dt.FLOAT)
    inv = g.tensor(name="inv", dim=[4, 7, 1], data_type=dt.FLOAT)
    dx, dscale, _ = g.rmsnorm_backward(dy, x, s, inv, has_dbias=False, name="bwd",
                                       zero_centered_gamma=zero_centered)
    dx.set_output(True)
    dscale.set_output(True).set_data_type(dt.FLOAT)  # as cuDNN's norm engines write it
    return g


SAID = "layernorm 'ln': "


@pytest.mark.gpu
@pytest.mark.parametrize("make,said", [
    (lambda: layer_graph(zero_centered_gamma=True),
     SAID + "zero_centered_gamma; cuDNN's norms have no such attribute"),
    (lambda: layer_graph(bias=False),
     SAID + "no bias; cuDNN frontend gives its layernorm one always"),
    (device_epsilon_graph,
     SAID + "epsilon 'eps' is a tensor in device memory; cuDNN's norms read it by value"),
    (lambda: layer_graph(io=dt.DOUBLE), SAID + "x 'x' is float64; cudnn translates fp32, fp16 "
                                               "and bf16 norms"),
    (lambda: layer_graph(then=lambda g, y: g.relu(y, name="act")),
     SAID + "a norm with other nodes in its graph; cudnn translates a norm node on its own"),
    (ada_graph, "adalayernorm 'ln': cudnn does not translate adaptive layer norm yet"),
    (lambda: rms_backward_graph(True), "rmsnorm_backward 'bwd': zero_centered_gamma"),
], ids=["zero_centered_gamma", "no_bias", "device_epsilon", "fp64",
        "epilogue", "adaptive", "backward_zero_centered"])
def test_what_it_does_not_translate_is_declined_naming_the_node(cd, make, said):  # noqa: F811
    why = reason(make())
    assert why and why.startswith(f"{ENGINE}: ") and said in why, why


@pytest.mark.gpu
def test_rmsnorm_backward_is_translated(cd):  # noqa: F811
    # the same graph as the decline above, without zero_centered_gamma: nothing of ours
    # declines it (over the fakes it runs; on a GPU cuDNN has the last word)
    why = reason(rms_backward_graph(False))
    assert why is None or (not FAKE and "CUDNN_STATUS_" in why), why


# ---- over the fakes, in CI ----------------------------------------------------------------------

def test_the_gpu_tests_pass_over_the_fake_libraries():
    gpu_tests_pass_over_the_fake_libraries(__file__)
