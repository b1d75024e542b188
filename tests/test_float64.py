"""DOUBLE everywhere on the reference engine: every op with float64 storage, float64
intermediates and a float64 compute type, against the float64 NumPy references at the
float64 tolerance (1e-12: only the order of summation differs).  The checks are the op
files' own, run on a graph whose three data types are all DOUBLE."""
import numpy as np
import pytest

import hipdnn
import references as ref
import test_batchnorm_inference as bn
import test_conv_fprop as conv
import test_conv_grad as conv_grad
import test_matmul as mm
import test_norm_backward as nb
import test_norm_forward as nf
import test_pointwise as pw
import test_reduction as red
from conftest import Numerics
from tolerances import tolerance

DOUBLE = hipdnn.data_type.DOUBLE


class DoubleNumerics(Numerics):
    """Graphs whose io, intermediate and compute data types are all DOUBLE."""

    def graph(self, dtype, name=None):
        assert dtype == "fp64"
        return hipdnn.pygraph(io_data_type=DOUBLE, intermediate_data_type=DOUBLE,
                              compute_data_type=DOUBLE, name=name)


@pytest.fixture
def nx64(rng):
    return DoubleNumerics(rng)


@pytest.mark.parametrize("case", ["2d", "groups_stride_dilation", "1d", "3d_true_convolution"])
def test_conv_fprop(nx64, case):
    kw = {
        "2d": dict(x=[2, 4, 7, 7], w=[6, 4, 3, 3], padding=[1, 1]),
        "groups_stride_dilation": dict(x=[2, 6, 11, 9], w=[9, 2, 3, 3], pre=[2, 1],
                                       post=[1, 2], stride=[2, 1], dilation=[2, 2]),
        "1d": dict(x=[3, 4, 17], w=[5, 4, 4], pre=[2], post=[1], stride=[2]),
        "3d_true_convolution": dict(x=[1, 2, 5, 6, 4], w=[3, 2, 2, 3, 2], pre=[1, 1, 0],
                                    post=[0, 1, 1], mode=conv.TRUE_CONV),
    }[case]
    conv.check_conv(nx64, "fp64", **kw)


def test_conv_fprop_nhwc(nx64):
    conv.check_conv(nx64, "fp64", x=[2, 5, 6, 7], w=[4, 5, 3, 3], padding=[1, 1],
                    x_layout="channels_last", y_layout="channels_last")


@pytest.mark.parametrize("case", list(conv_grad.CASES))
def test_conv_dgrad(nx64, case):
    conv_grad.check_dgrad(nx64, "fp64", **conv_grad.CASES[case])


@pytest.mark.parametrize("case", list(conv_grad.CASES))
def test_conv_wgrad(nx64, case):
    conv_grad.check_wgrad(nx64, "fp64", **conv_grad.CASES[case])


@pytest.mark.parametrize("a,b,layout", [([7, 5], [5, 6], "packed"),
                                        ([2, 1, 4, 5], [1, 3, 5, 6], "packed"),
                                        ([3, 6, 7], [3, 7, 5], "transposed")])
def test_matmul(nx64, a, b, layout):
    mm.check_matmul(nx64, "fp64", a, b, b_layout=layout)


@pytest.mark.parametrize("op", list(pw.BINARY))
def test_pointwise_binary_broadcast(nx64, op):
    pw.check_binary(nx64, "fp64", op, [2, 4, 5, 6], [1, 4, 1, 1])


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "gelu", "gelu_approx_tanh",
                                  "exp", "elu", "softplus", "swish"])
def test_pointwise_unary(nx64, name):
    reference = {"relu": ref.relu, "sigmoid": ref.sigmoid, "tanh": ref.tanh, "gelu": ref.gelu,
                 "gelu_approx_tanh": ref.gelu_approx_tanh, "exp": ref.exp, "elu": ref.elu,
                 "softplus": ref.softplus, "swish": ref.swish}[name]
    pw.check_unary(nx64, "fp64", lambda g, x: getattr(g, name)(x, name=name), reference)


@pytest.mark.parametrize("mode", red.MODES)
def test_reduction(nx64, mode):
    red.check(nx64, "fp64", mode, [5, 7, 33], [5, 1, 1])


def test_batchnorm_inference(nx64):
    bn.check_batchnorm(nx64, "fp64", [2, 6, 5, 7])


@pytest.mark.parametrize("case", list(nf.CASES))
def test_norm_forward(nx64, case):
    # an epsilon float32 holds exactly: with a DOUBLE compute type the float becomes a
    # DOUBLE scalar, while nf.check's reference takes the float32 one
    nf.check(nx64, "fp64", case, stats_dtype="fp64", epsilon=2.0 ** -10)


@pytest.mark.parametrize("case", list(nb.CASES))
def test_norm_backward(nx64, case):
    nb.check(nx64, "fp64", case, stats_dtype="fp64")


def test_genstats(nx64):
    x = nx64.input([3, 4, 5, 6], "fp64")
    g = nx64.graph("fp64")
    s, sq = g.genstats(x.bind(g, "x"), name="stats")
    outs = [nx64.output(s, [1, 4, 1, 1], "fp64"), nx64.output(sq, [1, 4, 1, 1], "fp64")]
    nx64.execute(g, [x] + outs)
    for out, want in zip(outs, ref.genstats(x.values)):
        nx64.assert_close(out, want, tolerance("genstats", "fp64"))


def test_slice_and_concatenate(nx64):
    x = nx64.input([4, 6, 5], "fp64")
    g = nx64.graph("fp64")
    X = x.bind(g, "x")
    a = g.slice(X, [slice(None), slice(0, 3), slice(None)], name="a")
    b = g.slice(X, [slice(None), slice(3, 6), slice(None)], name="b")
    y = g.concatenate([g.relu(b, name="r"), a], axis=1, name="cat")
    out = nx64.output(y, [4, 6, 5], "fp64")
    nx64.execute(g, [x, out])
    want = np.concatenate([np.maximum(x.values[:, 3:], 0), x.values[:, :3]], axis=1)
    nx64.assert_close(out, want, 0.0)


def test_chain_keeps_double_intermediates(nx64):
    """conv -> bias -> gelu with DOUBLE virtual tensors: no float32 rounding in between
    (a float32 intermediate would be off by ~1e-8, far over the float64 tolerance)."""
    x = nx64.input([2, 3, 6, 6], "fp64")
    w = nx64.input([4, 3, 3, 3], "fp64")
    bias = nx64.input([1, 4, 1, 1], "fp64")
    g = nx64.graph("fp64")
    c = g.conv_fprop(x.bind(g, "x"), w.bind(g, "w"), padding=[1, 1], stride=[1, 1],
                     dilation=[1, 1], name="conv")
    y = g.gelu(g.add(c, bias.bind(g, "bias"), name="bias"), name="act")
    out = nx64.output(y, [2, 4, 6, 6], "fp64")
    nx64.execute(g, [x, w, bias, out])
    want = ref.gelu(ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1]) +
                    bias.values)
    nx64.assert_close(out, want, tolerance("conv_fprop", "fp64"))
