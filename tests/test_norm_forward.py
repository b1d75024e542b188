"""norm_forward on the reference engine against float64 NumPy: layer, RMS, instance, batch
(training, with running statistics) and adaptive layer normalization, in the training
phase (y, mean, inv_variance) and the inference phase (y), with and without bias,
zero-centered gamma, epsilon given at execute time, layouts and storage types."""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import STORAGES, Operand, assert_close
from tolerances import graph_tolerance, tolerance

dt = hipdnn.data_type
TRAINING = hipdnn.norm_forward_phase.TRAINING
INFERENCE = hipdnn.norm_forward_phase.INFERENCE

# mode -> (x shape, scale shape, tolerance row): odd sizes, each mode's parameter shape
CASES = {
    "layer": ([2, 7, 33], [1, 1, 33], "layernorm"),           # [B, S, D], scale [1, 1, D]
    "layer_nchw": ([2, 3, 4, 5], [1, 3, 4, 5], "layernorm"),  # [N, C, H, W], scale [1, C, H, W]
    "rms": ([3, 5, 64], [1, 1, 64], "rmsnorm"),
    "instance": ([2, 3, 5, 7], [1, 3, 1, 1], "instancenorm"),
    "batch": ([4, 3, 5, 7], [1, 3, 1, 1], "batchnorm"),
    "ada_layer": ([2, 7, 33], [2, 1, 33], "adalayernorm"),    # per-sample scale and bias
}


def ref_mode(case):
    return "layer" if case == "layer_nchw" else case


def runtime_scalar(g, name, value):
    """A pass-by-value tensor with no value in the graph, and its operand: the value
    comes with each execute."""
    t = g.tensor(name=name, is_pass_by_value=True, data_type=dt.FLOAT)
    array = np.array([value], np.float32)
    op = Operand(array, array, np.ones(1, bool), STORAGES["fp32"], array.astype(np.float64))
    op.tensor = t
    return op


class Norm:
    """One norm_forward node under test: its operands, outputs and float64 references."""

    def __init__(self, nx, dtype, case, phase=TRAINING, bias=True, zero_centered=False,
                 epsilon=1e-3, runtime_epsilon=False, x_layout="packed", y_layout="packed",
                 stats_dtype="fp32", param_dtype=None, running=False, momentum=0.1,
                 runtime_momentum=False, x_shape=None, scale_shape=None):
        default_x, default_scale, self.tol_op = CASES[case]
        x_shape = x_shape or default_x
        scale_shape = scale_shape or default_scale
        mode = ref_mode(case)
        param_dtype = param_dtype or dtype
        self.nx, self.dtype, self.stats_dtype = nx, dtype, stats_dtype
        training = phase == TRAINING
        # an offset keeps the mean well away from 0, so centering is tested
        self.x = nx.input(x_shape, dtype, x_layout, values=2.0 + 1.5 * nx.random(x_shape))
        self.scale = nx.input(scale_shape, param_dtype, low=0.5, high=1.5)
        self.bias = nx.input(scale_shape, param_dtype) if bias else None
        g = self.g = nx.graph(dtype)
        self.operands = [self.x, self.scale] + ([self.bias] if bias else [])
        xt, st = self.x.bind(g, "x"), self.scale.bind(g, "scale")
        bt = self.bias.bind(g, "bias") if bias else None
        eps = epsilon
        if runtime_epsilon:
            eps_op = runtime_scalar(g, "epsilon", epsilon)
            self.operands.append(eps_op)
            eps = eps_op.tensor
        # a float becomes a scalar of the compute type (float32), a runtime one is float32
        epsilon = float(np.float32(epsilon))
        momentum = float(np.float32(momentum))
        axes = ref.norm_axes(mode, x_shape, scale_shape)
        self.stats_shape = [1 if i in axes else d for i, d in enumerate(x_shape)]
        if case.startswith("layer"):
            outs = g.layernorm(phase, xt, st, bt, eps, name="norm",
                               zero_centered_gamma=zero_centered)
        elif case == "ada_layer":
            outs = g.adalayernorm(phase, xt, st, bt, eps, name="norm")
        elif case == "rms":
            y, inv = g.rmsnorm(phase, xt, st, bias=bt, epsilon=eps, name="norm",
                               zero_centered_gamma=zero_centered)
            outs = [y, None, inv]
        elif case == "instance":
            outs = g.instancenorm(phase, xt, st, bt, eps, name="norm")
        else:
            kw = {}
            if running:
                self.rm = nx.input(self.stats_shape, "fp32")
                self.rv = nx.input(self.stats_shape, "fp32", low=0.5, high=2.0, signed=False)
                self.operands += [self.rm, self.rv]
                kw = dict(in_running_mean=self.rm.bind(g, "running_mean"),
                          in_running_var=self.rv.bind(g, "running_var"), momentum=momentum)
                if runtime_momentum:
                    m_op = runtime_scalar(g, "momentum", momentum)
                    self.operands.append(m_op)
                    kw["momentum"] = m_op.tensor
            outs = g.batchnorm(xt, st, bt, epsilon=eps, name="norm", **kw)
        y, mean, inv = outs[:3]
        self.expected = ref.norm_forward(mode, self.x.values, self.scale.values,
                                         self.bias.values if bias else None, epsilon,
                                         zero_centered)
        if not training:
            assert mean is None and inv is None
        if y_layout == "inferred":
            self.y = nx.output(y, x_shape, dtype, "inferred")
        else:
            self.y = nx.output(y, x_shape, dtype, y_layout)
        self.mean = self.inv = self.next = None
        if training:
            self.inv = nx.output(inv, self.stats_shape, stats_dtype)
            if mode != "rms":
                self.mean = nx.output(mean, self.stats_shape, stats_dtype)
        if running:
            self.next = [nx.output(t, self.stats_shape, "fp32") for t in outs[3:5]]
            self.expected_running = ref.running_stats(self.x.values, self.rm.values,
                                                      self.rv.values, momentum)
        outputs = [o for o in [self.y, self.mean, self.inv] + (self.next or []) if o]
        self.operands += outputs

    def run_and_check(self):
        self.nx.execute(self.g, self.operands)
        y, mean, inv = self.expected
        self.nx.assert_close(self.y, y, tolerance(self.tol_op, self.dtype))
        stats_tol = tolerance(self.tol_op, self.stats_dtype)
        if self.mean:
            self.nx.assert_close(self.mean, mean, stats_tol)
        if self.inv:
            self.nx.assert_close(self.inv, inv, stats_tol)
        if self.next:
            for out, want in zip(self.next, self.expected_running):
                self.nx.assert_close(out, want, tolerance("batchnorm", "fp32"))


def check(nx, dtype, case, **kw):
    Norm(nx, dtype, case, **kw).run_and_check()


# ---- every mode, phase and storage type ------------------------------------------------------

@pytest.mark.parametrize("case", list(CASES))
def test_training_phase(nx, dtype, case):
    check(nx, dtype, case)


@pytest.mark.parametrize("case", [c for c in CASES if c != "batch"])
def test_inference_phase(nx, dtype, case):
    check(nx, dtype, case, phase=INFERENCE)


# batchnorm's inference phase is batchnorm_inference, an op of its own
@pytest.mark.parametrize("case,phase", [(c, p) for c in CASES for p in (TRAINING, INFERENCE)
                                        if c != "batch" or p == TRAINING],
                         ids=lambda v: v if isinstance(v, str) else v.name.lower())
def test_without_bias(nx, dtype, case, phase):
    check(nx, dtype, case, phase=phase, bias=False)


@pytest.mark.parametrize("case", list(CASES))
def test_float64_storage(nx, case):
    check(nx, "fp64", case, stats_dtype="fp64")


@pytest.mark.parametrize("case", ["layer", "rms"])
@pytest.mark.parametrize("phase", [TRAINING, INFERENCE], ids=["training", "inference"])
def test_zero_centered_gamma_uses_scale_plus_one(nx, dtype, case, phase):
    check(nx, dtype, case, phase=phase, zero_centered=True)


@pytest.mark.parametrize("case", list(CASES))
def test_epsilon_given_at_execute(nx, case):
    # a large epsilon, so that its value visibly matters
    check(nx, "fp32", case, epsilon=0.25, runtime_epsilon=True)


def test_low_precision_activations_with_fp32_parameters(nx, dtype):
    check(nx, dtype, "layer", param_dtype="fp32")
    check(nx, dtype, "batch", param_dtype="fp32")


def test_statistics_in_the_storage_type(nx, dtype):
    check(nx, dtype, "layer", stats_dtype=dtype)


# ---- batchnorm's running statistics ------------------------------------------------------------

def test_batchnorm_updates_running_statistics(nx, dtype):
    check(nx, dtype, "batch", running=True, momentum=0.1)


def test_batchnorm_running_statistics_with_momentum_at_execute(nx):
    check(nx, "fp32", "batch", running=True, momentum=0.3, runtime_momentum=True,
          runtime_epsilon=True)


def test_batchnorm_running_statistics_nhwc_large(nx):
    check(nx, "fp32", "batch", running=True, x_shape=[16, 8, 33, 33],
          scale_shape=[1, 8, 1, 1], x_layout="channels_last", y_layout="channels_last")


# ---- shapes and layouts -----------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("case", ["instance", "batch", "layer_nchw"])
def test_layouts(nx, dtype, case, layout):
    check(nx, dtype, case, x_layout=layout, y_layout=layout)


def test_transposed_layernorm_input(nx, dtype):
    check(nx, dtype, "layer", x_layout="transposed")


def test_output_strides_inferred_from_nhwc_input(nx):
    check(nx, "fp32", "instance", x_layout="channels_last", y_layout="inferred")


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [5, 1031], [1, 1031]),           # long rows
    ("layer", [4099, 7], [1, 7]),              # many short rows
    ("layer", [4, 6, 1], [1, 1, 1]),           # one value per row: var 0, y = bias
    ("rms", [2, 3, 1000], [1, 1, 1000]),
    ("instance", [2, 5, 33, 33], [1, 5, 1, 1]),
    ("batch", [1, 4, 1, 1], [1, 4, 1, 1]),     # one value per channel
    ("batch", [64, 3, 32, 32], [1, 3, 1, 1]),  # few channels, many values: pieces
    ("ada_layer", [3, 17, 1000], [3, 1, 1000]),
])
def test_sizes(nx, case, x_shape, scale_shape):
    check(nx, "fp32", case, x_shape=x_shape, scale_shape=scale_shape)


def test_layernorm_over_two_trailing_dims(nx, dtype):
    check(nx, dtype, "layer", x_shape=[3, 4, 6, 5], scale_shape=[1, 1, 6, 5])


# ---- outputs that feed other nodes ----------------------------------------------------------------

def test_virtual_statistics_feed_a_pointwise_node(nx, dtype):
    # mean and inv_variance stay virtual (workspace slots of a multi-output node) and a
    # pointwise node reads both
    x = nx.input([3, 5, 40], dtype, values=1.0 + nx.random([3, 5, 40]))
    scale = nx.input([1, 1, 40], dtype, low=0.5, high=1.5)
    bias = nx.input([1, 1, 40], dtype)
    g = nx.graph(dtype)
    y, mean, inv = g.layernorm(TRAINING, x.bind(g, "x"), scale.bind(g, "scale"),
                               bias.bind(g, "bias"), 1e-5, name="ln")
    z = g.mul(mean, inv, name="mean_over_std")
    want_y, want_mean, want_inv = ref.norm_forward("layer", x.values, scale.values,
                                                   bias.values, 1e-5)
    out_y = nx.output(y, [3, 5, 40], dtype)
    out_z = nx.output(z, [3, 5, 1], dtype)
    nx.execute(g, [x, scale, bias, out_y, out_z])
    nx.assert_close(out_y, want_y, tolerance("layernorm", dtype))
    nx.assert_close(out_z, want_mean * want_inv,
                    graph_tolerance(["layernorm", "pointwise"], dtype))


def test_pointwise_result_feeds_a_norm(nx, dtype):
    x = nx.input([4, 3, 5, 5], dtype)
    scale = nx.input([1, 3, 1, 1], dtype, low=0.5, high=1.5)
    bias = nx.input([1, 3, 1, 1], dtype)
    g = nx.graph(dtype)
    h = g.relu(x.bind(g, "x"), name="act")
    y, _, _ = g.instancenorm(INFERENCE, h, scale.bind(g, "scale"), bias.bind(g, "bias"),
                             1e-5, name="inorm")
    h64 = ref.relu(x.values)
    h64 = ref.round_to(h64, "fp32")  # the virtual relu output is float32
    want, _, _ = ref.norm_forward("instance", h64, scale.values, bias.values, 1e-5)
    out = nx.output(y, [4, 3, 5, 5], dtype)
    nx.execute(g, [x, scale, bias, out])
    nx.assert_close(out, want, graph_tolerance(["instancenorm", "pointwise"], dtype))


# ---- the friendly layer, serialization, declines -------------------------------------------------

def layernorm_ref(x, scale, bias, eps):
    return ref.norm_forward("layer", x.astype(np.float64), scale.astype(np.float64),
                            bias.astype(np.float64), eps)


def test_graph_wrapper_layernorm_inference(rng):
    x = rng.standard_normal((4, 9, 64)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 1, 64)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 64)).astype(np.float32)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        y, mean, inv = g.layernorm(INFERENCE, x, scale, bias, 1e-5)
    assert mean is None and inv is None
    out = g(x, scale, bias)
    assert out.shape == x.shape and out.dtype == np.float32
    assert_close(out, layernorm_ref(x, scale, bias, 1e-5)[0], tolerance("layernorm", "fp32"))


def test_graph_wrapper_layernorm_training_returns_statistics(rng):
    x = rng.standard_normal((4, 9, 64)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 1, 64)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 64)).astype(np.float32)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        y, mean, inv = g.layernorm(TRAINING, x, scale, bias, 1e-5)
        g.output(y, mean, inv)
    got = g()
    want = layernorm_ref(x, scale, bias, 1e-5)
    assert [a.shape for a in got] == [(4, 9, 64), (4, 9, 1), (4, 9, 1)]
    for a, w in zip(got, want):
        assert_close(a, w, tolerance("layernorm", "fp32"))


def test_graph_wrapper_returns_every_result_of_the_last_op(rng):
    # no output marked: the last op's results are the outputs, all three of them
    x = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 4, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        g.instancenorm(TRAINING, x, scale, bias, 1e-5)
    got = g()
    want = ref.norm_forward("instance", x, scale, bias, 1e-5)
    assert [a.shape for a in got] == [(3, 4, 5, 6), (3, 4, 1, 1), (3, 4, 1, 1)]
    for a, w in zip(got, want):
        assert_close(a, w, tolerance("instancenorm", "fp32"))


def test_serialized_layernorm_runs_after_deserialize(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[3, 5, 16])
    s = g.tensor(name="s", dim=[1, 1, 16])
    b = g.tensor(name="b", dim=[1, 1, 16])
    y, mean, inv = g.layernorm(TRAINING, x, s, b, 1e-5, name="ln")
    for t, n in ((y, "y"), (mean, "mean"), (inv, "inv")):
        t.set_output(True).set_name(n)
    g.build([hipdnn.heur_mode.A])
    arrays = {x: rng.standard_normal((3, 5, 16)).astype(np.float32),
              s: rng.uniform(0.5, 1.5, (1, 1, 16)).astype(np.float32),
              b: rng.standard_normal((1, 1, 16)).astype(np.float32)}
    first = {t: np.full(t.get_dim(), np.nan, np.float32) for t in (y, mean, inv)}
    g.execute({**arrays, **first}, np.empty(g.get_workspace_size(), np.uint8))
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    g2.set_preferred_engine("reference_cpu")
    g2.build([hipdnn.heur_mode.A])
    second = {t.get_uid(): np.full(t.get_dim(), np.nan, np.float32) for t in (y, mean, inv)}
    g2.execute({**{t.get_uid(): a for t, a in arrays.items()}, **second},
               np.empty(g2.get_workspace_size(), np.uint8))
    for t in (y, mean, inv):
        assert np.array_equal(first[t], second[t.get_uid()]), t.get_name()
    want = layernorm_ref(arrays[x], arrays[s], arrays[b], 1e-5)
    for t, w in zip((y, mean, inv), want):
        assert_close(second[t.get_uid()], w, tolerance("layernorm", "fp32"))


def test_declines_running_variance_of_one_value_per_channel():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    c = [1, 4, 1, 1]
    outs = g.batchnorm(g.tensor(name="x", dim=c), g.tensor(name="s", dim=c),
                       g.tensor(name="b", dim=c), in_running_mean=g.tensor(name="rm", dim=c),
                       in_running_var=g.tensor(name="rv", dim=c), epsilon=1e-5,
                       momentum=0.1, name="bn")
    for t in outs:
        t.set_output(True)
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    with pytest.raises(hipdnn.GraphNotSupportedError,
                       match=r"reference_cpu: node 'bn' \(batchnorm\): the running variance "
                             r"\(unbiased\) needs more than one value per channel, x gives 1"):
        g.check_support()


def test_declines_integer_statistics_naming_the_tensor():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    y, mean, inv = g.layernorm(TRAINING, g.tensor(name="x", dim=[2, 8]),
                               g.tensor(name="s", dim=[1, 8]), g.tensor(name="b", dim=[1, 8]),
                               1e-5, name="ln")
    y.set_output(True)
    mean.set_output(True).set_data_type(dt.INT32)
    inv.set_output(True)
    g.set_preferred_engine("reference_cpu")
    with pytest.raises(hipdnn.GraphNotSupportedError,
                       match=r"reference_cpu: node 'ln' \(layernorm\): mean 'ln::MEAN' "
                             r"\(uid \d+\): data type int32 not supported"):
        g.build([hipdnn.heur_mode.A])
