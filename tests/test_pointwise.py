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


# ---- every mode: odd sizes, broadcasting, strided views --------------------------------
# The case table (pointwise_cases.py) gives each mode's inputs, float64 reference and
# result storage; run_case poisons the output, checks every element against the
# reference and every input unchanged.

import numpy as np  # noqa: E402

import hipdnn  # noqa: E402
from hipdnn import _ops  # noqa: E402
from pointwise_cases import ARITY, CASES, run_case, shapes_for  # noqa: E402

ODD = [3, 5, 7]


@pytest.mark.parametrize("mode", list(CASES))
def test_every_mode_on_an_odd_shape(nx, dtype, mode):
    run_case(nx, mode, dtype, shapes_for(mode, ODD, broadcast=False))


@pytest.mark.parametrize("mode", [m for m in CASES if ARITY[m] > 1])
def test_every_mode_broadcasts_its_operands(nx, dtype, mode):
    run_case(nx, mode, dtype, shapes_for(mode, [2, 3, 4, 5], broadcast=True))


@pytest.mark.parametrize("mode", list(CASES))
def test_every_mode_on_strided_views(nx, dtype, mode):
    n = ARITY[mode]
    run_case(nx, mode, dtype, shapes_for(mode, [2, 3, 4, 5], broadcast=False),
             layouts=["strided", "channels_last", "transposed"][:n], y_layout="strided")


def test_every_pointwise_method_has_a_case():
    # a mode of the table without a case here would go untested on every engine
    assert set(_ops.POINTWISE_MODES) <= set(CASES)


def test_binary_select_broadcasts_all_three_operands(nx, dtype):
    run_case(nx, "binary_select", dtype, [[2, 1, 5], [1, 3, 1], [2, 3, 1]])


def test_backward_broadcasts_a_per_channel_gradient_onto_x(nx, dtype):
    # dy [1, C, 1] against x [N, C, W]: dx takes the broadcast shape
    run_case(nx, "tanh_backward", dtype, [[2, 3, 5], [1, 3, 1]])


@pytest.mark.parametrize("out", ["i32", "i64", "fp32"])
def test_gen_index_into_integer_and_float_outputs(nx, out):
    x = nx.input([4, 6, 3], "fp32")
    g = nx.graph("fp32")
    y = g.gen_index(input=x.bind(g, "x"), axis=1, compute_data_type=hipdnn.data_type.INT32)
    o = nx.output(y, [4, 6, 3], out)
    nx.execute(g, [x, o])
    nx.assert_close(o, ref.gen_index([4, 6, 3], 1), 0.0)


@pytest.mark.parametrize("op", ["logical_and", "logical_or"])
def test_logic_on_float_operands_takes_nonzero_as_true(nx, op):
    a = nx.input([4, 5], "fp32", values=nx.rng.choice([0.0, -0.0, 1.5, -2.0], size=(4, 5)))
    b = nx.input([4, 5], "fp32", values=nx.rng.choice([0.0, 0.25], size=(4, 5)))
    g = nx.graph("fp32")
    y = getattr(g, op)(a=a.bind(g, "a"), b=b.bind(g, "b"))
    out = nx.output(y, [4, 5], "bool")
    nx.execute(g, [a, b, out])
    nx.assert_close(out, getattr(ref, op)(a.values, b.values), 0.0)


def test_comparisons_into_a_float_output_give_one_and_zero(nx):
    a = nx.input([3, 4], "fp16")
    g = nx.graph("fp16")
    y = g.cmp_ge(input=a.bind(g, "a"), comparison=0.0)
    out = nx.output(y, [3, 4], "fp16")
    nx.execute(g, [a, out])
    nx.assert_close(out, (a.values >= 0).astype(np.float64), 0.0)


def test_comparison_result_is_boolean_unless_set():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF)
    x = g.tensor(name="x", dim=[2, 3])
    m = g.cmp_lt(input=x, comparison=1.0)
    v = g.logical_not(input=m)
    f = g.binary_select(input0=x, input1=0.0, mask=v)
    for t in (m, v, f):
        t.set_output(True)
    g.validate()
    assert m.get_data_type() == hipdnn.data_type.BOOLEAN
    assert v.get_data_type() == hipdnn.data_type.BOOLEAN
    assert f.get_data_type() == hipdnn.data_type.HALF


@pytest.mark.parametrize("build,message", [
    (lambda g, x: g.softplus(input=x, softplus_beta=0.0), "softplus_beta is 0"),
    (lambda g, x: g.swish(input=x, swish_beta=math.inf), "swish_beta is inf"),
    (lambda g, x: g.elu_backward(loss=x, input=x, elu_alpha=-math.inf), "elu_alpha is -inf"),
    (lambda g, x: g.gen_index(input=x, axis=2), "axis 2 is out of range"),
])
def test_unusable_parameters_are_refused_naming_them(build, message):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])
    build(g, x).set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match=message):
        g.validate()


def test_a_mask_that_does_not_broadcast_is_refused_naming_it():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])
    m = g.tensor(name="m", dim=[2, 4], data_type=hipdnn.data_type.BOOLEAN)
    g.binary_select(input0=x, input1=x, mask=m, name="sel").set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match=r"t 'm' \[2, 4\] does not broadcast"):
        g.validate()


def test_the_reference_engine_declines_an_output_type_a_mode_cannot_give():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])
    g.add(a=x, b=x, name="sum").set_output(True).set_data_type(hipdnn.data_type.INT32)
    with pytest.raises(hipdnn.GraphNotSupportedError) as e:
        g.build([hipdnn.heur_mode.A])
    why = dict(g.support_report())["reference_cpu"]
    assert "int32 not supported for add" in why, why
    assert "reference_cpu" in str(e.value)


def test_backward_nodes_write_dx_and_list_cudnn_frontends_keywords():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])
    dy = g.tensor(name="dy", dim=[2, 3])
    dx = g.swish_backward(dy, x, swish_beta=2.0, name="sb")
    assert dx.get_name() == "sb::OUT_0"
    listing = repr(g)
    assert "swish_backward 'sb': loss=dy" in listing and "input=x" in listing
    assert "-> dx=sb::OUT_0" in listing


def test_graph_wrapper_takes_arrays_for_every_kind_of_mode(rng):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    dy = rng.standard_normal((3, 7)).astype(np.float32)
    with hipdnn.Graph() as fg:
        dx = fg.gelu_backward(loss=dy, input=x)
        m = fg.cmp_gt(input=x, comparison=0.25)
        fg.output(fg.binary_select(input0=dx, input1=x, mask=m),
                  fg.gen_index(input=x, axis=1), m)
    assert [t.get_dim() for t in fg.inputs] == [[3, 7], [3, 7]]
    got, idx, mask = fg(dy, x)
    x64 = x.astype(np.float64)
    want = np.where(x64 > 0.25, ref.gelu_backward(x64, dy.astype(np.float64)), x64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert mask.dtype == np.bool_ and np.array_equal(mask, x > 0.25)
    np.testing.assert_array_equal(idx, ref.gen_index([3, 7], 1))
