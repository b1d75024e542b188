"""The GPU engine's fused pointwise kernel against float64 NumPy (DESIGN tolerances) and
against the reference engine: every mode, fp32 / fp16 / bf16 storage, broadcasting, odd
sizes and strides, unaligned views, special values, DAGs fused into one kernel, and
batchnorm inference (alone and fused with what follows it).

Every run copies each operand's whole allocation to the device, NaN poison in its gaps
included, and back (conftest.DeviceNumerics), so outputs are checked to be fully written
and nothing else, and inputs unchanged.  Skipped with the reason without a GPU; CI runs
this file on the engine's host emulation (tests/test_gpu_emulated.py).
"""
import math

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import GPU_ENGINE, STORAGES, assert_close, engine_log
from pointwise_cases import ARITY, CASES, run_case, shapes_for
from test_numerics import (BACKWARD, BACKWARD_LIMITS, BACKWARD_REF, UNARY_BUILD,
                           assert_same_values, exact_input, grid_values, subnormal,
                           unary_specials)
from test_batchnorm_inference import check_batchnorm
from test_pointwise import BINARY, SHAPE, check_binary, check_unary
from tolerances import DTYPES, graph_tolerance, tolerance

pytestmark = pytest.mark.gpu
dt = hipdnn.data_type


# ---- every mode, against float64 NumPy ------------------------------------------------

@pytest.mark.parametrize("op", list(BINARY))
def test_binary_same_shape(gpu, dtype, op):
    check_binary(gpu, dtype, op, SHAPE, SHAPE)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_broadcasts_per_channel_operand(gpu, dtype, op):
    check_binary(gpu, dtype, op, SHAPE, [1, SHAPE[1], 1, 1])


@pytest.mark.parametrize("op", ["sub", "div"])
def test_binary_broadcasts_first_operand(gpu, dtype, op):
    check_binary(gpu, dtype, op, [1, 1, 1, SHAPE[3]], SHAPE)


def test_binary_broadcasts_both_operands(gpu, dtype):
    check_binary(gpu, dtype, "mul", [SHAPE[0], 1, SHAPE[2], 1], [1, SHAPE[1], 1, SHAPE[3]])


def test_binary_broadcasts_trailing_dims(gpu, dtype):
    check_binary(gpu, dtype, "add", SHAPE, [SHAPE[3]])


@pytest.mark.parametrize("op", ["add", "max"])
def test_binary_nhwc_operands_and_output(gpu, dtype, op):
    check_binary(gpu, dtype, op, SHAPE, SHAPE, "channels_last", "channels_last", "channels_last")


def test_binary_mixed_layouts(gpu, dtype):
    check_binary(gpu, dtype, "sub", SHAPE, SHAPE, "channels_last", "packed", "transposed")


def test_binary_strided_views_with_gaps(gpu, dtype):
    check_binary(gpu, dtype, "mul", SHAPE, [1, SHAPE[1], 1, 1], "strided", "packed", "strided")


def test_relu(gpu, dtype):
    check_unary(gpu, dtype, lambda g, x: g.relu(input=x), ref.relu, low=0.1, high=2.0)


def test_relu_negative_slope(gpu, dtype):
    check_unary(gpu, dtype, lambda g, x: g.relu(input=x, negative_slope=0.2),
                lambda v: ref.relu(v, lower_clip_slope=0.2))


def test_relu_lower_and_upper_clip(gpu, dtype):
    check_unary(gpu, dtype, lambda g, x: g.relu(input=x, lower_clip=-0.25, upper_clip=0.5),
                lambda v: ref.relu(v, lower_clip=-0.25, upper_clip=0.5))


def test_relu_clips_and_slope_together(gpu, dtype):
    check_unary(gpu, dtype,
                lambda g, x: g.relu(input=x, negative_slope=0.5, lower_clip=0.25,
                                    upper_clip=0.75),
                lambda v: ref.relu(v, lower_clip=0.25, upper_clip=0.75, lower_clip_slope=0.5))


UNARY = {"sigmoid": ref.sigmoid, "tanh": ref.tanh, "gelu": ref.gelu, "identity": ref.identity,
         "exp": ref.exp}


@pytest.mark.parametrize("op", list(UNARY))
def test_activation(gpu, dtype, op):
    check_unary(gpu, dtype, lambda g, x: getattr(g, op)(input=x), UNARY[op], low=0.05, high=4.0)


@pytest.mark.parametrize("op", ["gelu", "sigmoid"])
def test_activation_strided_input_to_nhwc_output(gpu, dtype, op):
    check_unary(gpu, dtype, lambda g, x: getattr(g, op)(input=x), UNARY[op],
                x_layout="strided", y_layout="channels_last")


def test_gelu_far_negative_tail(gpu):
    # where 1 + erf cancels: the kernel must use the erfc form too
    x = gpu.input([64], "fp32", values=-gpu.random([64], 5.0, 9.0, signed=False))
    g = gpu.graph("fp32")
    y = g.gelu(input=x.bind(g, "x"))
    out = gpu.output(y, [64], "fp32")
    gpu.execute(g, [x, out])
    assert_close(out.decoded(), ref.gelu_erfc(x.values), tolerance("pointwise", "fp32"), "gelu")


# ---- sizes, strides, alignment ---------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 1023, 4097, 65536 + 5])
def test_one_dim_sizes_around_the_vector_width(gpu, n):
    check_binary(gpu, "bf16", "add", [n], [n])


@pytest.mark.parametrize("shape", [[3, 1], [5, 3], [2, 3, 13], [1, 1, 1, 9], [4, 17, 1, 3]])
def test_odd_shapes_with_broadcast_innermost(gpu, dtype, shape):
    check_binary(gpu, dtype, "mul", shape, shape[:-1] + [1])


def test_large_contiguous_uses_the_grid_stride_loop(gpu):
    # more steps than the grid has threads (the launch caps the grid at 64 blocks per SM)
    n = 3 * 1024 * 1024 + 11
    check_binary(gpu, "fp16", "sub", [n], [n])


@pytest.mark.parametrize("dtype", DTYPES)
def test_unaligned_contiguous_views(gpu, dtype):
    """Contiguous views that start one element into their allocation: no 16-byte loads."""
    n = 1000
    a = gpu.input([n + 1], dtype)
    b = gpu.input([n + 1], dtype)
    for op in (a, b):  # keep the whole allocation, view all but the first element
        op.array = op.array[1:]
        op.values = op.values[1:]
        op.shape = op.array.shape
    g = gpu.graph(dtype)
    y = g.add(a=a.bind(g, "a"), b=b.bind(g, "b"))
    out = gpu.output(y, [n], dtype)
    gpu.execute(g, [a, b, out])
    gpu.assert_close(out, ref.add(a.values, b.values), tolerance("pointwise", dtype))


# ---- the fast way: every tensor contiguous ------------------------------------------------
# Plans whose tensors are all contiguous take the fast way (flat index, whole 16-byte
# vectors, several loads in flight a thread, the last n % 8 elements by one thread) when
# every pointer is 16-byte aligned, and the generic way otherwise.  The engine logs the
# first run of each kernel, so these tests see which one ran.

def ran(run):
    """Calls run() with the engine's log on; the kernels it first ran ("fast", "generic")."""
    return [m.split("first run of the ", 1)[1] for m in engine_log(run) if "first run of the " in m]


def view_into(op, n, offset):
    """Makes operand `op` (allocated with n + offset elements) a view of its last n: the
    first `offset` elements stay in the allocation as poison (outputs) or untouched data."""
    op.array = op.array[offset:]
    if op.values is not None:
        op.values = op.values[offset:]
    else:
        op.mask[:offset] = False
        op.tensor.set_dim([n]).set_stride([1])
    op.shape = op.array.shape


def diamond(gpu, dtype, n, in_offset=0, out_offset=0):
    """y = gelu(a * b + a) + b over n elements (the benchmark's graph), each operand a view
    `offset` elements into its allocation; returns the graph, operands and float64 want."""
    a = gpu.input([n + in_offset], dtype, low=0.1, high=2.0)
    b = gpu.input([n + in_offset], dtype)
    view_into(a, n, in_offset)
    view_into(b, n, in_offset)
    g = gpu.graph(dtype)
    A, B = a.bind(g, "a"), b.bind(g, "b")
    y = g.add(a=g.gelu(input=g.add(a=g.mul(a=A, b=B), b=A)), b=B)
    out = gpu.output(y, [n + out_offset], dtype)
    view_into(out, n, out_offset)
    want = ref.gelu(a.values * b.values + a.values) + b.values
    return g, [a, b, out], want


# 1 and 7: the tail alone; 8 * 5 + 3: vectors and a tail; 3 * 1024 + 43: whole blocks of
# vectors plus vectors and a tail; 3 * 4096 + 17: several tiles.
@pytest.mark.parametrize("n", [1, 7, 8, 8 * 5 + 3, 3 * 1024 + 43, 3 * 4096 + 17])
def test_fast_way_sizes_vectors_and_tails(gpu, dtype, n):
    g, ops, want = diamond(gpu, dtype, n)
    kernels = ran(lambda: gpu.execute(g, ops))
    assert len(kernels) == 1 and kernels[0].split()[1] == "fast", kernels
    gpu.assert_close(ops[-1], want, graph_tolerance(["pointwise"], dtype))


@pytest.mark.parametrize("in_offset,out_offset", [(1, 0), (0, 1), (3, 3)])
def test_fast_way_falls_back_to_the_generic_way_for_unaligned_views(gpu, dtype, in_offset,
                                                                    out_offset):
    n = 2 * 1024 + 8 * 3 + 5
    g, ops, want = diamond(gpu, dtype, n, in_offset, out_offset)
    kernels = ran(lambda: gpu.execute(g, ops))
    assert len(kernels) == 1 and "generic kernel (pointers not 16-byte aligned)" in kernels[0], \
        kernels
    gpu.assert_close(ops[-1], want, graph_tolerance(["pointwise"], dtype))


@pytest.mark.large
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_fast_way_strides_over_more_tiles_than_the_grid(gpu, dtype):
    # the fast grid is capped at 1024 blocks an SM (the emulation has one SM): over 1024
    # tiles of 128 threads x 4 (bf16) or 2 (fp32) vectors x 8 elements, some blocks stride
    n = 1024 * 128 * (4 if dtype == "bf16" else 2) * 8 + 8 * 130 + 5
    g, ops, want = diamond(gpu, dtype, n)
    kernels = ran(lambda: gpu.execute(g, ops))
    assert len(kernels) == 1 and kernels[0].split()[1] == "fast", kernels
    gpu.assert_close(ops[-1], want, graph_tolerance(["pointwise"], dtype))


def test_generic_way_on_request(gpu, monkeypatch):
    monkeypatch.setenv("HIPDNN_HIP_KERNEL", "generic")  # read at plan time
    g, ops, want = diamond(gpu, "bf16", 1000)
    kernels = ran(lambda: gpu.execute(g, ops))
    assert len(kernels) == 1 and kernels[0].split()[1] == "generic", kernels
    gpu.assert_close(ops[-1], want, graph_tolerance(["pointwise"], "bf16"))


def test_gelu_is_accurate_to_a_few_ulp_everywhere(gpu):
    """Dense fp32 inputs over [-14, 8], the far negative tail included: within 16 ulp of
    the float64 erfc form in the normal range, 16 subnormal steps below it (erfcf of the
    rounded x / sqrt(2) loses up to about 200 ulp in that tail)."""
    x64 = np.concatenate([np.linspace(-14.0, 8.0, 60001), np.linspace(-0.01, 0.01, 2001)])
    x = gpu.input([x64.size], "fp32", values=x64)
    g = gpu.graph("fp32")
    y = g.gelu(input=x.bind(g, "x"))
    out = gpu.output(y, [x64.size], "fp32")
    gpu.execute(g, [x, out])
    want = ref.gelu_erfc(x.values)
    got = out.decoded()
    ulp = np.maximum(np.spacing(np.abs(want).astype(np.float32)).astype(np.float64), 2.0 ** -149)
    err = np.abs(got - want) / ulp
    worst = int(np.argmax(err))
    assert err[worst] <= 16, f"gelu({x.values[worst]!r}) = {got[worst]!r}, want {want[worst]!r}: " \
        f"{err[worst]:.1f} ulp"


# ---- accuracy of every function in fp32 ------------------------------------------------------
# Dense fp32 inputs over each function's range, tails included, against float64: the error
# in fp32 ulps of the result (of `floor` where a derivative crosses zero: there the fp32
# terms of the sum are that large).  Measured on the host emulation (glibc's fp32 libm),
# worst case: 0.5 exp, pow, sqrt, reciprocal; 0.6 sin, cos; 0.7 erf, elu; 0.8 log, tan;
# 1.4 softplus; 1.5 rsqrt; 1.9 tanh, softplus_backward; 2.0 sigmoid, gelu_approx_tanh;
# 2.3 swish; 2.5 gelu_approx_tanh_backward; 2.6 swish_backward; 3.8 sigmoid_backward,
# tanh_backward; 4.6 gelu_backward; 5.2 gelu.  The bounds leave room for a GPU's libm
# (CUDA: 2 ulp expf, sinf, erff; 4 tanf, powf).

def _dense(lo, hi, n=40001):
    return np.linspace(lo, hi, n)


ACCURACY = {  # mode -> (build(g, x), inputs, float64 reference, floor, ulp bound)
    "sqrt": (lambda g, x: g.sqrt(input=x), np.geomspace(1e-3, 1e3, 40001), ref.sqrt, 0, 1),
    "rsqrt": (lambda g, x: g.rsqrt(input=x), np.geomspace(1e-3, 1e3, 40001), ref.rsqrt, 0, 4),
    "reciprocal": (lambda g, x: g.reciprocal(input=x), _dense(0.01, 100), ref.reciprocal, 0, 1),
    "log": (lambda g, x: g.log(input=x), np.geomspace(1e-3, 1e3, 40001), ref.log, 0, 4),
    "exp": (lambda g, x: g.exp(input=x), _dense(-80, 80), ref.exp, 0, 4),
    "sin": (lambda g, x: g.sin(input=x), _dense(-8, 8), ref.sin, 0, 4),
    "cos": (lambda g, x: g.cos(input=x), _dense(-8, 8), ref.cos, 0, 4),
    "tan": (lambda g, x: g.tan(input=x), _dense(-1.5, 1.5), ref.tan, 0, 8),
    "erf": (lambda g, x: g.erf(input=x), _dense(-5, 5), ref.erf, 0, 4),
    "sigmoid": (lambda g, x: g.sigmoid(input=x), _dense(-20, 20), ref.sigmoid, 0, 8),
    "tanh": (lambda g, x: g.tanh(input=x), _dense(-8, 8), ref.tanh, 0, 8),
    "elu": (lambda g, x: g.elu(input=x, elu_alpha=0.75), _dense(-20, 8),
            lambda v: ref.elu(v, 0.75), 0, 4),
    "softplus": (lambda g, x: g.softplus(input=x, softplus_beta=1.75), _dense(-20, 20),
                 lambda v: ref.softplus(v, 1.75), 0, 8),
    "swish": (lambda g, x: g.swish(input=x, swish_beta=1.75), _dense(-40, 20),
              lambda v: ref.swish(v, 1.75), 0, 8),
    "gelu_approx_tanh": (lambda g, x: g.gelu_approx_tanh(input=x), _dense(-10, 8),
                         ref.gelu_approx_tanh, 0, 8),
    "tanh_backward": (lambda g, x: g.tanh_backward(loss=1.0, input=x), _dense(-10, 10),
                      lambda v: ref.tanh_backward(v, 1.0), 0, 8),
    "sigmoid_backward": (lambda g, x: g.sigmoid_backward(loss=1.0, input=x), _dense(-20, 20),
                         lambda v: ref.sigmoid_backward(v, 1.0), 0, 8),
    "elu_backward": (lambda g, x: g.elu_backward(loss=1.0, input=x), _dense(-20, 8),
                     lambda v: ref.elu_backward(v, 1.0), 0, 4),
    "softplus_backward": (lambda g, x: g.softplus_backward(loss=1.0, input=x, softplus_beta=1.75),
                          _dense(-20, 20), lambda v: ref.softplus_backward(v, 1.0, 1.75), 0, 8),
    "gelu_backward": (lambda g, x: g.gelu_backward(loss=1.0, input=x), _dense(-10, 8),
                      lambda v: ref.gelu_backward(v, 1.0), 0.25, 16),
    "gelu_approx_tanh_backward": (lambda g, x: g.gelu_approx_tanh_backward(loss=1.0, input=x),
                                  _dense(-10, 8),
                                  lambda v: ref.gelu_approx_tanh_backward(v, 1.0), 0.25, 16),
    "swish_backward": (lambda g, x: g.swish_backward(loss=1.0, input=x, swish_beta=1.75),
                       _dense(-30, 20), lambda v: ref.swish_backward(v, 1.0, 1.75), 0.25, 16),
}


@pytest.mark.parametrize("mode", list(ACCURACY))
def test_every_function_is_accurate_to_a_few_ulp(gpu, mode):
    build, values, reference, floor, bound = ACCURACY[mode]
    x = gpu.input([values.size], "fp32", values=values.astype(np.float32).astype(np.float64))
    g = gpu.graph("fp32")
    y = build(g, x.bind(g, "x"))
    out = gpu.output(y, [values.size], "fp32")
    gpu.execute(g, [x, out])
    want = reference(x.values)
    scale = np.maximum(np.abs(want), floor)
    ulp = np.maximum(np.spacing(scale.astype(np.float32)).astype(np.float64), 2.0 ** -149)
    err = np.abs(out.decoded() - want) / ulp
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (f"{mode}({x.values[worst]!r}) = {out.decoded()[worst]!r}, "
                                 f"want {want[worst]!r}: {err[worst]:.1f} ulp")


# ---- special values: exactly as the reference engine documents them -----------------------

def assert_special_values(got, want, dtype, name, ulps, inputs=()):
    """As assert_same_values (NaN, infinities and signed zeros exactly where the reference
    has them), but finite nonzero results of fp32 functions within `ulps` of the storage
    type: the kernel's fp32 libm is not correctly rounded."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    exact = ~np.isfinite(want) | (want == 0)
    assert_same_values(np.where(exact, got, 0.0), np.where(exact, want, 0.0), name, inputs)
    spacing = {"fp32": np.float32, "fp16": np.float16}.get(dtype)
    finite = np.where(exact, 1.0, want)
    with np.errstate(invalid="ignore", over="ignore"):
        step = (np.spacing(np.abs(finite).astype(spacing)).astype(np.float64) if spacing
                else np.abs(finite) * 2.0 ** -7)
        bad = ~exact & ~(np.abs(got - want) <= ulps * np.maximum(step, 2.0 ** -149))
    if bad.any():
        i = int(np.argmax(bad))
        pytest.fail(f"{name}: got {got.flat[i]!r}, want {want.flat[i]!r} (more than {ulps} ulp)")


# Modes whose fp32 results the GPU's libm may give an ulp or two away from the correctly
# rounded value (the rest are exact: arithmetic, selects, sqrt, rounding functions).
INEXACT = {"sigmoid", "tanh", "gelu", "exp", "rsqrt", "log", "sin", "cos", "tan", "erf", "elu",
           "softplus", "swish", "gelu_approx_tanh"}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", list(UNARY_BUILD))
def test_unary_special_values(gpu, mode, dtype):
    values, expected = unary_specials(subnormal(dtype))
    x = exact_input(dtype, values)
    g = gpu.graph(dtype)
    y = UNARY_BUILD[mode](g, x.bind(g, "x"))
    out = gpu.output(y, [len(values)], dtype)
    gpu.execute(g, [x, out])
    assert_special_values(out.decoded(), ref.round_to(expected[mode], dtype), dtype, mode,
                          2 if mode in INEXACT else 0, inputs=[x.values])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", list(BACKWARD))
def test_backward_special_values(gpu, mode, dtype):
    v = grid_values(dtype)
    x = exact_input(dtype, np.asarray(v, np.float64)[:, None])
    dy = exact_input(dtype, np.asarray(v, np.float64)[None, :])
    g = gpu.graph(dtype)
    dx = BACKWARD[mode](g, x.bind(g, "x"), dy.bind(g, "dy"))
    out = gpu.output(dx, [len(v), len(v)], dtype)
    gpu.execute(g, [x, dy, out])
    want = ref.round_to(BACKWARD_REF[mode](x.values, dy.values), dtype)
    assert_special_values(out.decoded(), want, dtype, mode, 0 if "relu" in mode else 4,
                          inputs=[x.values, dy.values])


@pytest.mark.parametrize("mode", list(BACKWARD))
def test_backward_limits(gpu, mode):
    x = exact_input("fp32", [[-math.inf], [-0.0], [math.inf]])
    dy = exact_input("fp32", [[1.5]])
    g = gpu.graph("fp32")
    dx = BACKWARD[mode](g, x.bind(g, "x"), dy.bind(g, "dy"))
    out = gpu.output(dx, [3, 1], "fp32")
    gpu.execute(g, [x, dy, out])
    assert_same_values(out.decoded()[:, 0], BACKWARD_LIMITS[mode], mode)


@pytest.mark.parametrize("op", ["add_square", "mod", "pow", "cmp_eq", "cmp_neq", "cmp_lt",
                                "cmp_ge", "logical_and", "logical_or"])
def test_binary_modes_on_special_values(gpu, op):
    v = grid_values("fp32")
    a = exact_input("fp32", np.asarray(v, np.float64)[:, None])
    b = exact_input("fp32", np.asarray(v, np.float64)[None, :])
    case = CASES[op]
    g = gpu.graph("fp32")
    y = case.build(g, a.bind(g, "a"), b.bind(g, "b"))
    out = gpu.output(y, [len(v), len(v)], "fp32" if case.out == "same" else case.out)
    gpu.execute(g, [a, b, out])
    want = ref.round_to(case.reference(a.values, b.values), "fp32")
    assert_special_values(out.decoded(), want, "fp32", op, 4 if op == "pow" else 0,
                          inputs=[a.values, b.values])


# ---- every mode: odd sizes, broadcasting, strided views (pointwise_cases.py) -----------------

@pytest.mark.parametrize("mode", list(CASES))
def test_every_mode_on_an_odd_shape(gpu, dtype, mode):
    run_case(gpu, mode, dtype, shapes_for(mode, [3, 5, 7], broadcast=False))


@pytest.mark.parametrize("mode", [m for m in CASES if ARITY[m] > 1])
def test_every_mode_broadcasts_its_operands(gpu, dtype, mode):
    run_case(gpu, mode, dtype, shapes_for(mode, [2, 3, 4, 5], broadcast=True))


@pytest.mark.parametrize("mode", list(CASES))
def test_every_mode_on_strided_views(gpu, dtype, mode):
    run_case(gpu, mode, dtype, shapes_for(mode, [2, 3, 4, 5], broadcast=False),
             layouts=["strided", "channels_last", "transposed"][:ARITY[mode]],
             y_layout="strided")


@pytest.mark.parametrize("mode", ["binary_select", "gelu_backward", "cmp_lt", "gen_index"])
def test_modes_on_the_fast_way(gpu, mode):
    # contiguous and aligned: whole vectors, several a thread, and a tail
    run_case(gpu, mode, "bf16", [[3, 1024 + 43]] * ARITY[mode])


def grid(gpu, op, dtype):
    s = subnormal(dtype)
    v = [math.nan, math.inf, -math.inf, -0.0, 0.0, s, -s, 1.5, -2.5]
    a = exact_input(dtype, np.asarray(v, np.float64)[:, None])
    b = exact_input(dtype, np.asarray(v, np.float64)[None, :])
    g = gpu.graph(dtype)
    y = getattr(g, op)(a=a.bind(g, "a"), b=b.bind(g, "b"))
    out = gpu.output(y, [len(v), len(v)], dtype)
    gpu.execute(g, [a, b, out])
    return a, b, out.decoded()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_on_special_values_is_ieee(gpu, op, dtype):
    a, b, got = grid(gpu, op, dtype)
    with np.errstate(all="ignore"):
        want = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                "div": np.divide}[op](a.values, b.values)
    assert_same_values(got, ref.round_to(want, dtype), op, inputs=[a.values, b.values])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_are_ieee_maximum_minimum(gpu, op, dtype):
    a, b, got = grid(gpu, op, dtype)
    want = (ref.ieee_maximum if op == "max" else ref.ieee_minimum)(a.values, b.values)
    assert_same_values(got, ref.round_to(want, dtype), op, inputs=[a.values, b.values])


# ---- fused graphs ----------------------------------------------------------------------

def chain_graph(gpu, dtype, shape, inter_dtype=dt.FLOAT):
    """x * s + b -> leaky relu -> max(., 0.25) -> tanh: five nodes, a per-channel scale,
    a per-column shift and a by-value constant, intermediates of `inter_dtype`."""
    x = gpu.input(shape, dtype, low=0.1, high=3.0)
    s = gpu.input([1, shape[1], 1, 1], dtype)
    b = gpu.input([1, 1, 1, shape[3]], dtype)
    g = hipdnn.pygraph(io_data_type=STORAGES[dtype].data_type, intermediate_data_type=inter_dtype,
                       compute_data_type=dt.FLOAT)
    t = g.mul(a=x.bind(g, "x"), b=s.bind(g, "s"))
    t = g.add(a=t, b=b.bind(g, "b"))
    t = g.relu(input=t, negative_slope=0.0625)
    t = g.max(a=t, b=0.25)
    y = g.tanh(input=t)
    vals = np.tanh(np.maximum(ref.relu(x.values * s.values + b.values, lower_clip_slope=0.0625),
                              0.25))
    out = gpu.output(y, shape, dtype)
    return g, [x, s, b, out], vals


@pytest.mark.parametrize("dtype", DTYPES)
def test_five_node_chain(gpu, dtype):
    g, ops, want = chain_graph(gpu, dtype, [2, 3, 5, 7])
    gpu.execute(g, ops)
    gpu.assert_close(ops[-1], want, graph_tolerance(["pointwise"], dtype))


def test_the_engine_the_tests_run_on_fuses_whole_graphs(gpu):
    messages = []
    hipdnn.set_log_level(hipdnn.log_level.INFO)
    hipdnn.set_log_callback(lambda level, msg: messages.append(msg))
    try:
        g, ops, want = chain_graph(gpu, "fp32", [2, 3, 5, 7])
        gpu.execute(g, ops)
        hipdnn._C.flush_log()
    finally:
        hipdnn.set_log_callback(None)
        hipdnn.set_log_level(hipdnn.log_level.WARN)
    fused = [m for m in messages if "fused:" in m and GPU_ENGINE in m]
    assert fused and "(5 nodes) fused: 3 in, 1 out, 1 scalars" in fused[-1], messages
    assert g.get_workspace_size() == 0  # intermediates never touch memory


def test_diamond_dag_reads_each_input_once(gpu, dtype):
    # y = gelu(a * b + a) + b: the benchmark's graph, a and b each read by two nodes
    a = gpu.input([5, 33], dtype)
    b = gpu.input([5, 33], dtype)
    g = gpu.graph(dtype)
    A, B = a.bind(g, "a"), b.bind(g, "b")
    y = g.add(a=g.gelu(input=g.add(a=g.mul(a=A, b=B), b=A)), b=B)
    out = gpu.output(y, [5, 33], dtype)
    gpu.execute(g, [a, b, out])
    want = ref.gelu(a.values * b.values + a.values) + b.values
    gpu.assert_close(out, want, graph_tolerance(["pointwise"], dtype))


def test_square_and_reversed_operands(gpu):
    # mul(t, t) needs t in a slot too; sub(scalar, t) and div(t2, t) reverse the operands
    x = gpu.input([4, 9], "fp32", low=0.5, high=2.0)
    g = gpu.graph("fp32")
    t = g.add(a=x.bind(g, "x"), b=1.0)
    sq = g.mul(a=t, b=t)
    r = g.sub(a=3.0, b=sq)
    y = g.div(a=r, b=t)
    out = gpu.output(y, [4, 9], "fp32")
    gpu.execute(g, [x, out])
    tv = x.values + 1.0
    gpu.assert_close(out, (3.0 - tv * tv) / tv, tolerance("pointwise", "fp32"))


def test_intermediate_outputs_and_outputs_of_other_shapes(gpu, dtype):
    # t = a + c is an output of shape [1, 7] broadcast against b [6, 7] later
    a = gpu.input([1, 7], dtype)
    c = gpu.input([1, 7], dtype)
    b = gpu.input([6, 7], dtype)
    g = gpu.graph(dtype)
    t = g.add(a=a.bind(g, "a"), b=c.bind(g, "c"), name="t")
    y = g.mul(a=t, b=b.bind(g, "b"), name="y")
    out_t = gpu.output(t, [1, 7], dtype)
    out_y = gpu.output(y, [6, 7], dtype)
    gpu.execute(g, [a, c, b, out_t, out_y])
    tv = ref.round_to(a.values + c.values, dtype)  # y reads t as stored
    tol = tolerance("pointwise", dtype)
    gpu.assert_close(out_t, a.values + c.values, tol)
    gpu.assert_close(out_y, tv * b.values, graph_tolerance(["pointwise"] * 2, dtype))


@pytest.mark.parametrize("inter", [dt.HALF, dt.BFLOAT16])
def test_low_precision_intermediates_are_rounded_like_the_reference(gpu, inter):
    g, ops, _ = chain_graph(gpu, "fp32", [2, 4, 3, 9], inter_dtype=inter)
    gpu.execute(g, ops)
    got = ops[-1].decoded()
    # the reference engine rounds each intermediate to its data type too
    h = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=inter,
                       compute_data_type=dt.FLOAT)
    xs = {n: h.tensor_like(op.array, name=n) for n, op in zip("xsb", ops[:3])}
    t = h.mul(a=xs["x"], b=xs["s"])
    t = h.add(a=t, b=xs["b"])
    t = h.relu(input=t, negative_slope=0.0625)
    t = h.max(a=t, b=0.25)
    y = h.tanh(input=t)
    y.set_output(True).set_data_type(dt.FLOAT)
    h.set_preferred_engine("reference_cpu")
    h.build([hipdnn.heur_mode.A])
    want = np.empty(got.shape, np.float32)
    h.execute({xs[n]: op.array for n, op in zip("xsb", ops[:3])} | {y: want})
    # both round each intermediate to 16 bits; they may differ by one 16-bit rounding step
    step = 2.0 ** -10 if inter == dt.HALF else 2.0 ** -7
    assert_close(got, want.astype(np.float64), step, "y")


def test_eight_inputs_use_the_widest_kernel(gpu):
    ins = [gpu.input([3, 11], "fp32") for _ in range(8)]
    g = gpu.graph("fp32")
    ts = [op.bind(g, f"in{i}") for i, op in enumerate(ins)]
    acc = ts[0]
    for t in ts[1:]:
        acc = g.add(a=acc, b=t)
    out = gpu.output(acc, [3, 11], "fp32")
    gpu.execute(g, ins + [out])
    gpu.assert_close(out, sum(op.values for op in ins), 1e-5)


def test_runtime_by_value_scalars(gpu):
    """scale and shift given at each execute as host numbers (cuDNN's CPU scalars)."""
    x = gpu.input([3, 8], "fp32")
    g = gpu.graph("fp32")
    k = g.tensor(name="k", dim=[1, 1], stride=[1, 1], data_type=dt.FLOAT, is_pass_by_value=True)
    c = g.tensor(name="c", dim=[1, 1], stride=[1, 1], data_type=dt.HALF, is_pass_by_value=True)
    y = g.add(a=g.mul(a=x.bind(g, "x"), b=k), b=c)
    out = gpu.output(y, [3, 8], "fp32")
    gpu.build(g)
    x_dev = hipdnn.DeviceArray.from_numpy(x.base)
    for kv, cv in ((2.5, 0.25), (-0.75, 1.5)):
        y_dev = hipdnn.DeviceArray.from_numpy(out.base)  # NaN poison
        g.execute({x.tensor: x_dev, k: kv, c: np.float16(cv), out.tensor: y_dev})
        np.copyto(out.base, y_dev.numpy())
        gpu.assert_close(out, x.values * kv + cv, 1e-5)


# ---- batchnorm inference, alone and fused ----------------------------------------------------

def test_batchnorm_inference_nchw(gpu, dtype):
    check_batchnorm(gpu, dtype, [2, 6, 5, 7])


def test_batchnorm_inference_nhwc_with_fp32_statistics(gpu, dtype):
    check_batchnorm(gpu, dtype, [2, 6, 5, 7], stats_dtype="fp32", x_layout="channels_last",
                    y_layout="channels_last")


def test_batchnorm_inference_strided_views(gpu, dtype):
    check_batchnorm(gpu, dtype, [2, 5, 4, 6], x_layout="strided", y_layout="strided",
                    stats_layout="strided")


def test_batchnorm_then_relu_is_one_kernel(gpu, dtype):
    shape, stat = [3, 4, 5, 6], [1, 4, 1, 1]
    x = gpu.input(shape, dtype, high=3.0)
    st = [gpu.input(stat, dtype), gpu.input(stat, dtype, low=0.5, high=2.0, signed=False),
          gpu.input(stat, dtype, low=0.5, high=1.5), gpu.input(stat, dtype)]
    g = gpu.graph(dtype)
    names = ["mean", "inv_variance", "scale", "bias"]
    t = g.batchnorm_inference(x.bind(g, "x"), *[op.bind(g, n) for op, n in zip(st, names)])
    y = g.relu(input=t)
    out = gpu.output(y, shape, dtype)
    gpu.execute(g, [x] + st + [out])
    want = ref.relu(ref.batchnorm_inference(x.values, *[op.values for op in st]))
    gpu.assert_close(out, want, graph_tolerance(["batchnorm", "pointwise"], dtype))


# ---- the GPU engine and the reference engine agree ---------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_and_reference_engines_agree(gpu, dtype):
    g, ops, _ = chain_graph(gpu, dtype, [3, 4, 6, 5])
    gpu.execute(g, ops)
    got = ops[-1].decoded()
    cpu = hipdnn.pygraph(io_data_type=ops[0].storage.data_type,
                         intermediate_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    xs = {n: cpu.tensor_like(op.array, name=n, data_type=op.storage.data_type)
          for n, op in zip("xsb", ops[:3])}
    t = cpu.add(a=cpu.mul(a=xs["x"], b=xs["s"]), b=xs["b"])
    y = cpu.tanh(input=cpu.max(a=cpu.relu(input=t, negative_slope=0.0625), b=0.25))
    y.set_output(True)
    cpu.set_preferred_engine("reference_cpu")
    cpu.build([hipdnn.heur_mode.A])
    want = np.empty(got.shape, ops[-1].storage.np_dtype)
    cpu.execute({xs[n]: op.array for n, op in zip("xsb", ops[:3])} | {y: want})
    assert_close(got, ops[-1].storage.decode(want), graph_tolerance(["pointwise"], dtype), "y")


# ---- what the engine declines, with its reason -------------------------------------------

def reasons(g):
    return dict(g.support_report())


def test_declines_what_it_cannot_run_with_reasons(gpu):
    # an attention backward with head dims past the kernels' 256 (test_gpu_sdpa_backward.py)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    q, k, v, o, do = (g.tensor(name=n, dim=[1, 2, 8, 288]) for n in ("q", "k", "v", "o", "do"))
    st = g.tensor(name="st", dim=[1, 2, 8, 1])
    for t in g.sdpa_backward(q, k, v, o, do, st, attn_scale=0.25, name="attn_bwd"):
        t.set_output(True)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    why = reasons(g)[GPU_ENGINE]
    assert why and "sdpa_backward" in why and "head dims up to 256" in why, why

    h = hipdnn.pygraph(io_data_type=dt.DOUBLE, compute_data_type=dt.FLOAT)
    a = h.tensor(name="a64", dim=[4])
    h.relu(input=a).set_output(True)
    h.validate()
    h.build_operation_graph()
    h.create_execution_plans([hipdnn.heur_mode.A])
    why = reasons(h)[GPU_ENGINE]
    assert why and "a64" in why and "float64" in why, why
    h.build_plans()
    assert h.get_engine_name(0) == "reference_cpu"


def test_declines_integer_inputs_and_long_index_axes_with_reasons(gpu):
    # fp32 compute: int32 values over 2^24 would round, and so would indices past 2^24
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    i = g.tensor(name="counts", dim=[4], data_type=dt.INT32)
    g.add(a=i, b=1.0).set_output(True).set_data_type(dt.FLOAT)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    why = reasons(g)[GPU_ENGINE]
    assert "counts" in why and "int32 not supported" in why, why
    assert reasons(g)["reference_cpu"] is None

    h = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = h.tensor(name="x", dim=[(1 << 24) + 1])
    h.gen_index(input=x, axis=0).set_output(True).set_data_type(dt.INT32)
    h.validate()
    h.build_operation_graph()
    h.create_execution_plans([hipdnn.heur_mode.A])
    why = reasons(h)[GPU_ENGINE]
    assert "16777217 indices" in why and "2^24" in why, why


def test_declines_an_output_type_a_mode_cannot_give(gpu):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[4])
    g.tanh(input=x, name="t").set_output(True).set_data_type(dt.BOOLEAN)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A])
    why = reasons(g)[GPU_ENGINE]
    assert "node 't'" in why and "bool not supported for this output" in why, why
