"""norm_backward (layernorm_backward, rmsnorm_backward, instancenorm_backward,
batchnorm_backward, adalayernorm_backward) and genstats on the reference engine against
float64 NumPy: every mode and storage type, odd sizes, NHWC and strided layouts, with and
without dbias, zero-centered gamma; the backward formula itself checked against finite
differences of the float64 forward; serialization and declines."""
import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import assert_close
from tolerances import tolerance

dt = hipdnn.data_type
TRAINING = hipdnn.norm_forward_phase.TRAINING

# case -> (x shape, scale shape, mode)
CASES = {
    "layer": ([2, 7, 33], [1, 1, 33], "layer"),
    "layer_nchw": ([2, 3, 4, 5], [1, 3, 4, 5], "layer"),
    "rms": ([3, 5, 64], [1, 1, 64], "rms"),
    "instance": ([2, 3, 5, 7], [1, 3, 1, 1], "instance"),
    "batch": ([4, 3, 5, 7], [1, 3, 1, 1], "batch"),
    "ada_layer": ([2, 7, 33], [2, 1, 33], "ada_layer"),
}


def saved_stats(mode, x, scale, epsilon=1e-3):
    """The forward's float64 statistics (mean None for rms)."""
    _, mean, inv = ref.norm_forward(mode, x, scale, None, epsilon)
    return mean, inv


def add_node(g, mode, dy, x, scale, mean, inv, has_dbias=True, zero_centered=False, name="bwd"):
    if mode == "layer":
        return g.layernorm_backward(dy, x, scale, mean, inv, name=name,
                                    zero_centered_gamma=zero_centered)
    if mode == "ada_layer":
        return g.adalayernorm_backward(dy, x, scale, mean, inv, name=name)
    if mode == "rms":
        return g.rmsnorm_backward(dy, x, scale, inv, has_dbias=has_dbias, name=name,
                                  zero_centered_gamma=zero_centered)
    if mode == "instance":
        return g.instancenorm_backward(dy, x, scale, mean, inv, name=name)
    return g.batchnorm_backward(dy, x, scale, mean, inv, name=name)


def check(nx, dtype, case, x_shape=None, scale_shape=None, layout="packed", stats_dtype="fp32",
          has_dbias=True, zero_centered=False, param_dtype=None, want_dscale=True):
    default_x, default_scale, mode = CASES[case]
    x_shape = x_shape or default_x
    scale_shape = scale_shape or default_scale
    param_dtype = param_dtype or dtype
    x = nx.input(x_shape, dtype, layout, values=2.0 + 1.5 * nx.random(x_shape))
    dy = nx.input(x_shape, dtype, layout)
    scale = nx.input(scale_shape, param_dtype, low=0.5, high=1.5)
    mean64, inv64 = saved_stats(mode, x.values, scale.values)
    stats_shape = list(inv64.shape)
    inv = nx.input(stats_shape, stats_dtype, values=inv64)
    mean = nx.input(stats_shape, stats_dtype, values=mean64) if mode != "rms" else None
    g = nx.graph(dtype)
    dx, dscale, dbias = add_node(g, mode, dy.bind(g, "dy"), x.bind(g, "x"),
                                 scale.bind(g, "scale"), mean.bind(g, "mean") if mean else None,
                                 inv.bind(g, "inv"), has_dbias, zero_centered)
    if mode == "rms" and not has_dbias:
        assert dbias is None
    want = ref.norm_backward(mode, x.values, dy.values, scale.values,
                             mean.values if mean else None, inv.values, zero_centered)
    outs = [nx.output(dx, x_shape, dtype, layout)]
    checks = [(outs[0], want[0])]
    if want_dscale:
        outs.append(nx.output(dscale, scale_shape, param_dtype))
        checks.append((outs[-1], want[1]))
    if dbias is not None:
        outs.append(nx.output(dbias, scale_shape, param_dtype))
        checks.append((outs[-1], want[2]))
    ins = [x, dy, scale, inv] + ([mean] if mean else [])
    nx.execute(g, ins + outs)
    for out, w in checks:
        nx.assert_close(out, w, tolerance("norm_backward", dtype if out is outs[0]
                                          else param_dtype))


@pytest.mark.parametrize("case", list(CASES))
def test_every_mode(nx, dtype, case):
    check(nx, dtype, case)


@pytest.mark.parametrize("case", list(CASES))
def test_float64_storage(nx, case):
    check(nx, "fp64", case, stats_dtype="fp64")


@pytest.mark.parametrize("layout", ["channels_last", "strided"])
@pytest.mark.parametrize("case", ["instance", "batch", "layer_nchw"])
def test_layouts(nx, dtype, case, layout):
    check(nx, dtype, case, layout=layout)


def test_transposed_layernorm_input(nx, dtype):
    check(nx, dtype, "layer", layout="transposed")


def test_rmsnorm_without_dbias(nx, dtype):
    check(nx, dtype, "rms", has_dbias=False)


@pytest.mark.parametrize("case", ["layer", "rms"])
def test_zero_centered_gamma(nx, dtype, case):
    check(nx, dtype, case, zero_centered=True)


def test_low_precision_activations_with_fp32_parameters(nx, dtype):
    check(nx, dtype, "layer", param_dtype="fp32")
    check(nx, dtype, "batch", param_dtype="fp32")


@pytest.mark.parametrize("case,x_shape,scale_shape", [
    ("layer", [5, 1031], [1, 1031]),           # long rows
    ("layer", [1037, 7], [1, 7]),              # many short rows
    ("layer", [4, 6, 1], [1, 1, 1]),           # one value per row
    ("rms", [2, 3, 1000], [1, 1, 1000]),
    ("instance", [2, 5, 33, 33], [1, 5, 1, 1]),
    ("batch", [1, 4, 1, 1], [1, 4, 1, 1]),     # one value per channel
    ("batch", [32, 3, 17, 17], [1, 3, 1, 1]),  # few channels, many values
    ("ada_layer", [3, 17, 1000], [3, 1, 1000]),
    ("ada_layer", [3, 40], [3, 40]),           # scale as large as x: nothing summed
])
def test_sizes(nx, case, x_shape, scale_shape):
    check(nx, "fp32", case, x_shape=x_shape, scale_shape=scale_shape)


# ---- the formula itself: finite differences of the float64 forward --------------------------

@pytest.mark.parametrize("case,zero_centered",
                         [(c, False) for c in CASES] + [("layer", True), ("rms", True)],
                         ids=[c for c in CASES] + ["layer_zero_centered", "rms_zero_centered"])
def test_gradients_match_finite_differences(rng, case, zero_centered):
    """<dy, y(x + t v) - y(x - t v)> / 2t against <dx, v>, and the same for scale and bias,
    with the statistics recomputed by the forward (so they depend on x)."""
    x_shape, scale_shape, mode = CASES[case]
    x = 1.0 + rng.standard_normal(x_shape)
    scale = rng.uniform(0.5, 1.5, scale_shape)
    bias = rng.standard_normal(scale_shape)
    dy = rng.standard_normal(x_shape)
    eps = 1e-3

    def loss(x_, scale_, bias_):
        y, _, _ = ref.norm_forward(mode, x_, scale_, bias_, eps, zero_centered)
        return float(np.sum(dy * y))

    _, mean, inv = ref.norm_forward(mode, x, scale, bias, eps, zero_centered)
    g = hipdnn.Graph(io_data_type=dt.DOUBLE, preferred_engine="reference_cpu")
    kw = {"zero_centered": zero_centered} if mode in ("layer", "rms") else {}
    dx, dscale, dbias = add_node(g, mode, dy, x, scale, mean, inv, **kw)
    g.output(dx, dscale, dbias)
    g.build()
    got_dx, got_dscale, got_dbias = g()
    t = 1e-6
    for got, point, make in (
            (got_dx, x, lambda p: (p, scale, bias)),
            (got_dscale, scale, lambda p: (x, p, bias)),
            (got_dbias, bias, lambda p: (x, scale, p))):
        v = rng.standard_normal(point.shape)
        numeric = (loss(*make(point + t * v)) - loss(*make(point - t * v))) / (2 * t)
        assert numeric == pytest.approx(float(np.sum(got * v)), rel=1e-6, abs=1e-7)


# ---- genstats -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,layout", [([2, 3, 5, 7], "packed"), ([4, 5, 9, 9], "channels_last"),
                                          ([3, 6, 4, 5], "strided"), ([2, 7, 3, 4, 5], "packed"),
                                          ([16, 3, 33, 33], "packed")])
def test_genstats(nx, dtype, shape, layout):
    x = nx.input(shape, dtype, layout)
    g = nx.graph(dtype)
    s, sq = g.genstats(x.bind(g, "x"), name="stats")
    c = [1 if i != 1 else d for i, d in enumerate(shape)]
    outs = [nx.output(s, c, "fp32"), nx.output(sq, c, "fp32")]
    nx.execute(g, [x] + outs)
    want = ref.genstats(x.values)
    for out, w in zip(outs, want):
        nx.assert_close(out, w, tolerance("genstats", "fp32"))


def test_genstats_after_a_convolution(nx, dtype):
    # conv_fprop -> genstats, the fusion cuDNN offers; the conv output stays virtual
    x = nx.input([2, 3, 9, 9], dtype)
    w = nx.input([4, 3, 3, 3], dtype)
    g = nx.graph(dtype)
    y = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], stride=[1, 1],
                     dilation=[1, 1], name="conv")
    s, sq = g.genstats(y, name="stats")
    outs = [nx.output(s, [1, 4, 1, 1], "fp32"), nx.output(sq, [1, 4, 1, 1], "fp32")]
    nx.execute(g, [x, w] + outs)
    conv = ref.round_to(ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1]), "fp32")
    for out, want in zip(outs, ref.genstats(conv)):
        nx.assert_close(out, want, tolerance("conv_fprop", dtype) + tolerance("genstats", "fp32"))


# ---- the friendly layer, serialization, declines -------------------------------------------------

def test_graph_wrapper_layernorm_forward_then_backward(rng):
    """One graph: layernorm training forward, then its backward from the saved statistics
    (virtual), as a training step would run it."""
    x = rng.standard_normal((4, 9, 64)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 1, 64)).astype(np.float32)
    bias = rng.standard_normal((1, 1, 64)).astype(np.float32)
    dy = rng.standard_normal((4, 9, 64)).astype(np.float32)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        y, mean, inv = g.layernorm(TRAINING, x, scale, bias, 1e-5)
        dx, dscale, dbias = g.layernorm_backward(dy, x, scale, mean, inv)
        g.output(y, dx, dscale, dbias)
    got = g()
    want_y, mean64, inv64 = ref.norm_forward("layer", x, scale, bias, 1e-5)
    # the statistics pass through float32 (the intermediate type) between the nodes
    want = ref.norm_backward("layer", x, dy, scale, ref.round_to(mean64, "fp32"),
                             ref.round_to(inv64, "fp32"))
    assert_close(got[0], want_y, tolerance("layernorm", "fp32"))
    for a, w in zip(got[1:], want):
        assert_close(a, w, tolerance("norm_backward", "fp32"))


def test_serialized_batchnorm_backward_runs_after_deserialize(rng):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    shape, c = [4, 3, 5, 5], [1, 3, 1, 1]
    tensors = {n: g.tensor(name=n, dim=d) for n, d in
               (("dy", shape), ("x", shape), ("s", c), ("m", c), ("v", c))}
    outs = g.batchnorm_backward(tensors["dy"], tensors["x"], tensors["s"], tensors["m"],
                                tensors["v"], name="bnb")
    for t, n in zip(outs, ("dx", "ds", "db")):
        t.set_output(True).set_name(n)
    x = rng.standard_normal(shape).astype(np.float32)
    mean64, inv64 = saved_stats("batch", x, np.ones(c))
    arrays = {"dy": rng.standard_normal(shape).astype(np.float32), "x": x,
              "s": rng.uniform(0.5, 1.5, c).astype(np.float32),
              "m": mean64.astype(np.float32), "v": inv64.astype(np.float32)}
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    g2.set_preferred_engine("reference_cpu")
    g2.build([hipdnn.heur_mode.A])
    results = {t.get_uid(): np.full(t.get_dim(), np.nan, np.float32) for t in outs}
    g2.execute({**{tensors[n].get_uid(): a for n, a in arrays.items()}, **results},
               np.empty(g2.get_workspace_size(), np.uint8))
    want = ref.norm_backward("batch", arrays["x"], arrays["dy"], arrays["s"], arrays["m"],
                             arrays["v"])
    for t, w in zip(outs, want):
        assert_close(results[t.get_uid()], w, tolerance("norm_backward", "fp32"))


def test_rejects_a_statistic_of_the_wrong_shape():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[2, 8])
    outs = g.layernorm_backward(g.tensor(name="dy", dim=[2, 8]), x,
                                g.tensor(name="s", dim=[1, 8]), g.tensor(name="m", dim=[1, 8]),
                                g.tensor(name="v", dim=[2, 1]), name="lnb")
    for t in outs:
        t.set_output(True)
    with pytest.raises(hipdnn.HipdnnError,
                       match=r"layernorm_backward 'lnb': mean 'm' is \[1, 8\] but a saved "
                             r"statistic .* needs \[2, 1\]"):
        g.validate()


def test_rejects_a_mean_for_rmsnorm_and_instancenorm_without_statistics():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[2, 3, 4, 4])
    with pytest.raises(ValueError, match="instancenorm_backward: give mean and inv_variance"):
        g.instancenorm_backward(g.tensor(name="dy", dim=[2, 3, 4, 4]), x,
                                g.tensor(name="s", dim=[1, 3, 1, 1]))
    with pytest.raises(ValueError, match="peer_stats"):
        g.batchnorm_backward(x, x, x, x, x, peer_stats=[x])


def test_declines_integer_gradients_naming_the_tensor():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    dx, dscale, dbias = g.rmsnorm_backward(g.tensor(name="dy", dim=[2, 8]),
                                           g.tensor(name="x", dim=[2, 8]),
                                           g.tensor(name="s", dim=[1, 8]),
                                           g.tensor(name="v", dim=[2, 1]), has_dbias=False,
                                           name="rb")
    assert dbias is None
    dx.set_output(True)
    dscale.set_output(True).set_data_type(dt.INT32)
    g.set_preferred_engine("reference_cpu")
    with pytest.raises(hipdnn.GraphNotSupportedError,
                       match=r"reference_cpu: node 'rb' \(rmsnorm_backward\): dscale "
                             r"'rb::Dscale' \(uid \d+\): data type int32 not supported"):
        g.build([hipdnn.heur_mode.A])
