"""Pointwise ops on the reference engine against float64 NumPy.

Binary ops with same-shape, broadcast and Python-float operands; activations including
relu's clips and negative slope; layouts; fp32 / fp16 / bf16 storage.
"""
import math

import pytest

import references as ref
from tolerances import tolerance

SHAPE = [2, 4, 5, 6]

# pygraph method name -> reference
BINARY = {
    "add": ref.add,
    "sub": ref.sub,
    "mul": ref.mul,
    "div": ref.div,
    "max": ref.maximum,
    "min": ref.minimum,
}


def check_binary(nx, dtype, op, a_shape, b_shape, a_layout="packed", b_layout="packed",
                 y_layout="packed"):
    a = nx.input(a_shape, dtype, a_layout)
    # A divisor well away from zero keeps the quotient meaningful under rtol.
    b = nx.input(b_shape, dtype, b_layout, low=0.5, high=2.0) if op == "div" else \
        nx.input(b_shape, dtype, b_layout)
    g = nx.graph(dtype)
    y = getattr(g, op)(a=a.bind(g, "a"), b=b.bind(g, "b"), name=op)
    expected = BINARY[op](a.values, b.values)
    out = nx.output(y, expected.shape, dtype, y_layout)
    nx.execute(g, [a, b, out])
    nx.assert_close(out, expected, tolerance("pointwise", dtype))


def check_unary(nx, dtype, build, reference, shape=SHAPE, low=0.1, high=1.0,
                x_layout="packed", y_layout="packed"):
    x = nx.input(shape, dtype, x_layout, low=low, high=high)
    g = nx.graph(dtype)
    y = build(g, x.bind(g, "x"))
    expected = reference(x.values)
    out = nx.output(y, expected.shape, dtype, y_layout)
    nx.execute(g, [x, out])
    nx.assert_close(out, expected, tolerance("pointwise", dtype))


# ---- binary ops ---------------------------------------------------------------------------

@pytest.mark.parametrize("op", list(BINARY))
def test_binary_same_shape(nx, dtype, op):
    check_binary(nx, dtype, op, SHAPE, SHAPE)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_broadcasts_per_channel_operand(nx, dtype, op):
    # [N, C, H, W] (op) [1, C, 1, 1], the bias / scale pattern.
    check_binary(nx, dtype, op, SHAPE, [1, 4, 1, 1])


@pytest.mark.parametrize("op", ["sub", "div"])
def test_binary_broadcasts_first_operand(nx, dtype, op):
    # Non-commutative ops tell a swapped operand order apart.
    check_binary(nx, dtype, op, [1, 4, 1, 1], SHAPE)


@pytest.mark.parametrize("op", ["add", "mul"])
def test_binary_broadcasts_both_operands(nx, dtype, op):
    # [N, 1, H, W] (op) [1, C, 1, 1] -> [N, C, H, W]
    check_binary(nx, dtype, op, [2, 1, 5, 6], [1, 4, 1, 1])


@pytest.mark.parametrize("op", ["add", "div"])
def test_binary_broadcast_output_dims_and_strides_inferred(nx, dtype, op):
    check_binary(nx, dtype, op, [2, 1, 5, 6], [1, 4, 1, 1], y_layout="inferred")


def test_binary_broadcasts_trailing_dims(nx, dtype):
    check_binary(nx, dtype, "add", [3, 5, 7], [1, 1, 7])


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_nhwc_operands_and_output(nx, dtype, op):
    check_binary(nx, dtype, op, SHAPE, SHAPE, a_layout="channels_last",
                 b_layout="channels_last", y_layout="channels_last")


def test_binary_mixed_layouts(nx, dtype):
    check_binary(nx, dtype, "sub", SHAPE, SHAPE, a_layout="channels_last", b_layout="strided",
                 y_layout="packed")


def test_binary_non_contiguous_views_with_broadcast(nx, dtype):
    check_binary(nx, dtype, "mul", SHAPE, [1, 4, 1, 1], a_layout="strided",
                 b_layout="strided", y_layout="strided")


def test_binary_medium(nx, dtype):
    check_binary(nx, dtype, "add", [4, 16, 24, 24], [1, 16, 1, 1])


# ---- Python float operands ------------------------------------------------------------------

@pytest.mark.parametrize("op,scalar", [("add", 0.75), ("sub", 2.5), ("mul", -1.5),
                                       ("div", 4.0), ("max", 0.25), ("min", -0.25)])
def test_binary_with_python_float(nx, dtype, op, scalar):
    # Scalars chosen exactly representable in every storage dtype.
    a = nx.input(SHAPE, dtype)
    g = nx.graph(dtype)
    y = getattr(g, op)(a=a.bind(g, "a"), b=scalar, name=op)
    expected = BINARY[op](a.values, scalar)
    out = nx.output(y, expected.shape, dtype)
    nx.execute(g, [a, out])
    nx.assert_close(out, expected, tolerance("pointwise", dtype))


# ---- relu -------------------------------------------------------------------------------

def test_relu(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.relu(input=x), ref.relu)


def test_relu_negative_slope(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.relu(input=x, negative_slope=0.125),
                lambda v: ref.relu(v, lower_clip_slope=0.125))


def test_relu_lower_and_upper_clip(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.relu(input=x, lower_clip=-0.5, upper_clip=0.5),
                lambda v: ref.relu(v, lower_clip=-0.5, upper_clip=0.5))


def test_relu_upper_clip_only(nx, dtype):
    # relu6-style: 0 below, capped above.
    check_unary(nx, dtype, lambda g, x: g.relu(input=x, upper_clip=0.625),
                lambda v: ref.relu(v, upper_clip=0.625))


def test_relu_clips_and_slope_together(nx, dtype):
    check_unary(nx, dtype,
                lambda g, x: g.relu(input=x, lower_clip=0.25, upper_clip=0.75,
                                    negative_slope=0.0625),
                lambda v: ref.relu(v, lower_clip=0.25, upper_clip=0.75,
                                   lower_clip_slope=0.0625))


def test_relu_nhwc_to_strided_output(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.relu(input=x), ref.relu, x_layout="channels_last",
                y_layout="strided")


# ---- other activations ----------------------------------------------------------------------

@pytest.mark.parametrize("op", ["sigmoid", "tanh", "gelu", "exp"])
def test_activation(nx, dtype, op):
    # |x| up to 4 reaches the saturating tails.
    check_unary(nx, dtype, lambda g, x: getattr(g, op)(input=x), getattr(ref, op),
                low=0.1, high=4.0)


@pytest.mark.parametrize("op", ["sigmoid", "tanh", "gelu", "exp"])
def test_activation_non_contiguous_views(nx, dtype, op):
    check_unary(nx, dtype, lambda g, x: getattr(g, op)(input=x), getattr(ref, op),
                shape=[2, 3, 4, 5], low=0.1, high=3.0, x_layout="strided", y_layout="strided")


def test_unary_output_inferred_from_nhwc_input(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.sigmoid(input=x), ref.sigmoid,
                x_layout="channels_last", y_layout="inferred")


def test_identity(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.identity(input=x), ref.identity, low=0.1, high=8.0)


def test_identity_repacks_nhwc_to_nchw(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.identity(input=x), ref.identity,
                x_layout="channels_last", y_layout="packed")


def test_unary_on_1d_and_5d_tensors(nx, dtype):
    check_unary(nx, dtype, lambda g, x: g.tanh(input=x), ref.tanh, shape=[37])
    check_unary(nx, dtype, lambda g, x: g.sigmoid(input=x), ref.sigmoid, shape=[2, 3, 2, 3, 4])


def test_gelu_is_the_exact_erf_form(nx):
    # The erf and tanh forms differ by 1e-4 .. 4e-4 at these points, far above 1e-5.
    x = nx.input([4], "fp32", values=[-1.0, -2.0, 1.5, 3.0])
    g = nx.graph("fp32")
    y = g.gelu(input=x.bind(g, "x"))
    out = nx.output(y, [4], "fp32")
    nx.execute(g, [x, out])
    exact = [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.values]
    nx.assert_close(out, exact, tolerance("pointwise", "fp32"))
