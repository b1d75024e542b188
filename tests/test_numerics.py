"""Numerics held tight: the reference engine computes in float64 and rounds once on store.

What that promises, checked bit for bit or to a fraction of an ulp:
  * fp32 outputs lie within half an fp32 ulp of the float64 reference plus a bound on the
    float64 error of engine and reference (for the inputs used here far below half an
    ulp), so within 1 ulp;
  * fp16 and bf16 outputs of pointwise ops and batchnorm are exactly the float64
    reference rounded once, to nearest even (their float64 results are exact or within a
    few float64 ulps, and random inputs do not land that close to a tie);
  * a float64 value is rounded to fp16 / bf16 once, not through float32 first;
  * NaN, infinities, signed zeros and subnormals come out as plugins/reference_cpu/
    pointwise.c and docs/python.md say: NaN in gives NaN out, relu(-inf) = 0,
    relu(-0) = +0, leaky relu(-inf) = -inf, gelu(-inf) = -0, max/min are IEEE 754-2019
    maximum/minimum (NaN if either is NaN, -0 below +0).

A NaN result cannot be told from the NaN poison, so tests that expect NaN run the graph
twice, over NaN poison and over finite poison, and require the same bits both times.
"""
import math

import numpy as np
import pytest

import references as ref
from conftest import STORAGES, Operand, assert_close
from pointwise_cases import CASES, make_inputs
from tolerances import tolerance

U64 = 2.0 ** -53  # float64 unit roundoff
FINITE_POISON = 3.0  # exact in every storage dtype
SHAPE = [2, 3, 5, 7]
LOW_PRECISION = ["fp16", "bf16"]


# ---- helpers ----------------------------------------------------------------------------

def _bits(a):
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def exact_input(dtype, values):
    """An input holding exactly `values`, special values allowed (nx.input takes finite
    random data only); each value must be representable in `dtype`."""
    storage = STORAGES[dtype]
    values = np.asarray(values, np.float64)
    array = ref.bfloat16_bits(values) if dtype == "bf16" else values.astype(storage.np_dtype)
    op = Operand(array, array, np.ones(array.shape, bool), storage, storage.decode(array))
    assert_same_values(op.values, values, f"{dtype} input (not representable?)")
    return op


def assert_same_values(got, want, name="output", inputs=()):
    """NaN exactly where `want` is NaN (any payload); everywhere else the same value with
    the same sign, so -0 and +0 differ.  `inputs` (arrays broadcast like got) are shown
    for the first mismatch."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, f"{name}: shape {got.shape}, expected {want.shape}"
    same = np.where(np.isnan(want), np.isnan(got),
                    (got == want) & (np.signbit(got) == np.signbit(want)))
    if not same.all():
        idx = tuple(int(i) for i in np.argwhere(~same)[0])
        at = ", ".join(f"{np.broadcast_to(x, got.shape)[idx]!r}" for x in inputs)
        pytest.fail(f"{name}: {int((~same).sum())} of {got.size} elements differ; first at "
                    f"{idx}" + (f" (inputs {at})" if at else "") +
                    f": got {got[idx]!r}, expected {want[idx]!r}")


def assert_rounded_once(got, reference, err64, name="output", within_one_ulp=True):
    """|got - reference| <= half an fp32 ulp + err64, where err64 bounds the float64 error
    of engine and reference together.  within_one_ulp also requires err64 to stay under
    half an ulp, making the whole bound 1 ulp."""
    got = np.asarray(got, np.float64)
    reference = np.asarray(reference, np.float64)
    assert np.isfinite(got).all(), f"{name}: non-finite output (unwritten poison?)"
    # The spacing of the fp32 binade the reference rounds into: half of it is the most
    # one rounding may move (the larger binade's spacing where it rounds up into it).
    half_ulp = 0.5 * np.spacing(np.abs(reference).astype(np.float32)).astype(np.float64)
    if within_one_ulp:
        assert (err64 < half_ulp).all(), f"{name}: inputs too ill-conditioned for 1 ulp"
    err = np.abs(got - reference)
    bad = err > half_ulp + err64
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        pytest.fail(f"{name}: {int(bad.sum())} of {got.size} elements more than half an ulp "
                    f"(+ float64 error) off; first at {idx}: got {got[idx]!r}, reference "
                    f"{reference[idx]!r}, {err[idx] / (2 * half_ulp[idx]):.3g} ulp")


def execute_twice(nx, g, operands, out):
    """Runs g over NaN poison, then over finite poison: every element, NaN ones included,
    must be written the same both times.  Gives the output as float64."""
    nx.execute(g, operands)
    first = out.array.copy()
    if out.storage.name == "bool":  # its poison is a byte neither 0 nor 1: use another
        out.array.view(np.uint8)[...] = 0xA5
    else:
        out.array[...] = exact_input(out.storage.name, FINITE_POISON).array
    nx.execute(g, operands, build=False)
    unwritten = _bits(first) != _bits(out.array)
    assert not unwritten.any(), (
        f"{int(unwritten.sum())} output elements differ between runs over NaN and finite "
        f"poison: not written, or not deterministic")
    return out.decoded()


def gamma(n):
    """Higham's gamma_n: the relative error bound of an n-term float64 dot product."""
    return n * U64 / (1 - n * U64)


# ---- float64 values are rounded to fp16 / bf16 once ---------------------------------------

def values_near_ties(rng, decode, last_pattern, count):
    """float64 values at and just beside the midpoints of `count` random pairs of
    neighbouring finite values (bit patterns p, p + 1 <= last_pattern), every subnormal
    binade included, with random signs.  Just above or below a tie float32 rounds onto
    the tie itself, so a conversion through float32 rounds a second time and goes wrong
    about half the time."""
    p = rng.integers(0, last_pattern, count).astype(np.uint16)
    p[:16] = np.arange(16)  # the smallest subnormals
    lo, hi = decode(p), decode(p + np.uint16(1))
    mid = 0.5 * (lo + hi)  # exact: both have few bits
    values = np.concatenate([mid, np.nextafter(mid, np.inf), np.nextafter(mid, 0.0),
                             mid * (1 + 2.0 ** -35), mid * (1 - 2.0 ** -35)])
    return values * rng.choice([-1.0, 1.0], values.size)


def check_rounded_once_from_float64(nx, out_dtype, values, want_bits, via_float32_bits):
    x = nx.input([values.size], "fp64", values=values)
    g = nx.graph("fp64")
    y = g.identity(input=x.bind(g, "x"))
    out = nx.output(y, [values.size], out_dtype)
    nx.execute(g, [x, out])
    # The data must tell the two roundings apart, or the test proves nothing.
    assert (via_float32_bits != want_bits).sum() > values.size // 8
    got = _bits(out.array)
    bad = got != want_bits
    assert not bad.any(), (
        f"{int(bad.sum())} of {values.size} float64 values rounded wrongly to {out_dtype}, "
        f"first {values[bad][0]!r}: got {int(got[bad][0]):#06x}, want "
        f"{int(want_bits[bad][0]):#06x}" +
        (" (as if rounded through float32)" if via_float32_bits[bad][0] == got[bad][0] else ""))


def test_references_round_float64_to_fp16_as_numpy_does(rng):
    # One rounding routine makes both the fp16 and the bf16 reference; NumPy's own
    # float64 -> float16 cast (also rounded once) checks it.
    values = values_near_ties(rng, lambda p: p.view(np.float16).astype(np.float64), 0x7BFF,
                              4096)
    values = np.concatenate([values, [65520.0, np.nextafter(65520.0, 0.0), 1e300, 1e-300,
                                      -0.0, np.inf, -np.inf]])
    with np.errstate(over="ignore"):
        want = values.astype(np.float16)
    np.testing.assert_array_equal(ref.float16_bits(values), want.view(np.uint16))


def test_float64_to_fp16_store_rounds_once(nx):
    values = values_near_ties(nx.rng, lambda p: p.view(np.float16).astype(np.float64),
                              0x7BFF, 512)
    # The overflow tie 65520 goes to infinity; just below it stays 65504 (through
    # float32 it would become the tie and then infinity).
    values = np.concatenate([values, [65520.0, np.nextafter(65520.0, 0.0),
                                      -np.nextafter(65520.0, 0.0)]])
    want = ref.float16_bits(values)
    via32 = ref.float16_bits(values.astype(np.float32))
    check_rounded_once_from_float64(nx, "fp16", values, want, via32)


def test_float64_to_bf16_store_rounds_once(nx):
    values = values_near_ties(nx.rng, ref.bfloat16_values, 0x7F7F, 512)
    top = float(np.uint32(0x7F7F8000).view(np.float32))  # tie between bf16 max and 2^128
    values = np.concatenate([values, [top, np.nextafter(top, 0.0)]])
    want = ref.bfloat16_bits(values)
    via32 = ref.bfloat16_bits(values.astype(np.float32))
    check_rounded_once_from_float64(nx, "bf16", values, want, via32)


# ---- op families: every pointwise mode of pointwise_cases.py -----------------------------
# Comparisons, logic and indices give exact 0 / 1 or integers (checked exactly there);
# every mode whose result is a float is held to the rounding contract here.

POINTWISE = [m for m, c in CASES.items() if c.out == "same"]


def run_pointwise(nx, mode, dtype):
    """Random inputs of `dtype` through one pointwise mode into `dtype`: (got, expected)."""
    case = CASES[mode]
    ins = make_inputs(nx, case, [SHAPE] * len(case.inputs), dtype)
    g = nx.graph(dtype)
    y = case.build(g, *[op.bind(g, f"in{k}") for k, op in enumerate(ins)])
    out = nx.output(y, SHAPE, dtype)
    nx.execute(g, ins + [out])
    return out.decoded(), np.asarray(case.reference(*[op.values for op in ins]), np.float64)


def run_batchnorm(nx, dtype, shape=(2, 4, 5, 6)):
    stat = [1, shape[1]] + [1] * (len(shape) - 2)
    x = nx.input(shape, dtype, high=3.0)
    mean = nx.input(stat, dtype)
    inv_variance = nx.input(stat, dtype, low=0.5, high=2.0, signed=False)
    scale = nx.input(stat, dtype, low=0.5, high=1.5)
    bias = nx.input(stat, dtype)
    g = nx.graph(dtype)
    y = g.batchnorm_inference(input=x.bind(g, "x"), mean=mean.bind(g, "mean"),
                              inv_variance=inv_variance.bind(g, "inv_variance"),
                              scale=scale.bind(g, "scale"), bias=bias.bind(g, "bias"))
    out = nx.output(y, list(shape), dtype)
    nx.execute(g, [x, mean, inv_variance, scale, bias, out])
    return out.decoded(), ref.batchnorm_inference(x.values, mean.values, inv_variance.values,
                                                  scale.values, bias.values)


# ---- fp32 outputs: within 1 ulp of float64 ------------------------------------------------

def test_conv_fprop_fp32_is_within_one_ulp_of_float64(nx):
    # Positive data: no cancellation, so the float64 sums (any order) are within
    # 2 * gamma_72 * |y| ~ 2e-14 |y| of each other, far inside half an fp32 ulp.
    x = nx.input([2, 8, 9, 9], "fp32", low=0.5, high=1.0, signed=False)
    w = nx.input([6, 8, 3, 3], "fp32", low=0.5, high=1.0, signed=False)
    g = nx.graph("fp32")
    y = g.conv_fprop(image=x.bind(g, "x"), weight=w.bind(g, "w"), padding=[1, 1],
                     stride=[1, 1], dilation=[1, 1])
    want = ref.conv_fprop(x.values, w.values, [1, 1], [1, 1], [1, 1], [1, 1])
    out = nx.output(y, want.shape, "fp32")
    nx.execute(g, [x, w, out])
    err64 = 2 * gamma(8 * 3 * 3) * np.abs(want)
    assert_rounded_once(out.decoded(), want, err64, "conv_fprop")


def test_matmul_fp32_is_within_one_ulp_of_float64(nx):
    a = nx.input([3, 9, 64], "fp32", low=0.5, high=1.0, signed=False)
    b = nx.input([3, 64, 7], "fp32", low=0.5, high=1.0, signed=False)
    g = nx.graph("fp32")
    c = g.matmul(A=a.bind(g, "A"), B=b.bind(g, "B"))
    want = ref.matmul(a.values, b.values)
    out = nx.output(c, want.shape, "fp32")
    nx.execute(g, [a, b, out])
    assert_rounded_once(out.decoded(), want, 2 * gamma(64) * np.abs(want), "matmul")


def test_matmul_fp32_with_cancellation_is_within_half_ulp_plus_the_float64_error(nx):
    # Signed data: the float64 sums may differ by up to 2 * gamma_k * sum|a_ik * b_kj|,
    # which near cancellation is no longer small next to |c|; the bound still holds.
    a = nx.input([9, 64], "fp32")
    b = nx.input([64, 7], "fp32")
    g = nx.graph("fp32")
    c = g.matmul(A=a.bind(g, "A"), B=b.bind(g, "B"))
    want = ref.matmul(a.values, b.values)
    out = nx.output(c, want.shape, "fp32")
    nx.execute(g, [a, b, out])
    err64 = 2 * gamma(64) * ref.matmul(np.abs(a.values), np.abs(b.values))
    assert_rounded_once(out.decoded(), want, err64, "matmul", within_one_ulp=False)


@pytest.mark.parametrize("mode", POINTWISE)
def test_pointwise_fp32_is_within_one_ulp_of_float64(nx, mode):
    got, want = run_pointwise(nx, mode, "fp32")
    # Arithmetic is exact or correctly rounded in float64; libm's functions and NumPy's
    # are within a few float64 ulps of each other.
    assert_rounded_once(got, want, 16 * U64 * np.abs(want), mode)


def test_gelu_fp32_is_within_one_ulp_in_the_far_negative_tail(nx):
    # gelu(-12) ~ -2e-32: 1 + erf(x / sqrt(2)) would have cancelled to nothing here.
    x = nx.input(SHAPE, "fp32", low=5.0, high=12.0, signed=False)
    x = exact_input("fp32", -x.values)
    g = nx.graph("fp32")
    y = g.gelu(input=x.bind(g, "x"))
    out = nx.output(y, SHAPE, "fp32")
    nx.execute(g, [x, out])
    want = ref.gelu_erfc(x.values)
    assert_rounded_once(out.decoded(), want, 16 * U64 * np.abs(want), "gelu")


def test_batchnorm_inference_fp32_is_within_one_ulp_of_float64(nx):
    got, want = run_batchnorm(nx, "fp32")
    # Four float64 operations, each rounded once (the engine's order is the reference's).
    assert_rounded_once(got, want, 8 * U64 * np.abs(want), "batchnorm_inference")


# ---- fp16 / bf16 outputs: exactly the rounded float64 reference ------------------------

@pytest.mark.parametrize("dtype", LOW_PRECISION)
@pytest.mark.parametrize("mode", POINTWISE)
def test_pointwise_low_precision_output_is_the_float64_result_rounded_once(nx, mode, dtype):
    got, want = run_pointwise(nx, mode, dtype)
    assert_same_values(got, ref.round_to(want, dtype), mode)


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_batchnorm_low_precision_output_is_the_float64_result_rounded_once(nx, dtype):
    got, want = run_batchnorm(nx, dtype)
    assert_same_values(got, ref.round_to(want, dtype), "batchnorm_inference")


# ---- special values through pointwise ops -----------------------------------------------

NAN, INF = math.nan, math.inf


def subnormal(dtype):
    """A subnormal of the storage dtype: 1e-40 rounded for fp32 and bf16, 2^-20 for fp16."""
    return float(ref.round_to(2.0 ** -20 if dtype == "fp16" else 1e-40, dtype))


def unary_specials(s):
    """Inputs and, per mode, the expected float64 results (before storage rounding) for
    NaN, +inf, -inf, -0, +0 and the subnormals +s and -s."""
    x = [NAN, INF, -INF, -0.0, 0.0, s, -s]
    # finite arguments, in float64 (rounded to the storage type by the caller)
    softplus = lambda v: math.log1p(math.exp(v))  # noqa: E731
    swish = lambda v: v / (1.0 + math.exp(-v))  # noqa: E731
    gtanh = lambda v: v / (1.0 + math.exp(-2.0 * math.sqrt(2.0 / math.pi) *  # noqa: E731
                                          (v + 0.044715 * v ** 3)))
    return x, {
        "identity": x,
        "relu": [NAN, INF, 0.0, 0.0, 0.0, s, 0.0],
        # negative_slope 0.125: the line goes on to -inf; -0 still gives +0.
        "leaky_relu": [NAN, INF, -INF, 0.0, 0.0, s, -0.125 * s],
        # lower_clip -0.5, upper_clip 0.5: zeros and subnormals pass unchanged.
        "clipped_relu": [NAN, 0.5, -0.5, -0.0, 0.0, s, -s],
        "sigmoid": [NAN, 1.0, 0.0, 0.5, 0.5, 0.5, 0.5],
        "tanh": [NAN, 1.0, -1.0, -0.0, 0.0, s, -s],
        # gelu(x) = x * P(x): P(-inf) = 0 gives -0 (not -inf * 0); P(s) is 1/2 to well
        # within the storage precision, as sigmoid(s) is and tanh(s) is s.
        "gelu": [NAN, INF, -0.0, -0.0, 0.0, 0.5 * s, -0.5 * s],
        "exp": [NAN, INF, 0.0, 1.0, 1.0, 1.0, 1.0],
        "neg": [NAN, -INF, INF, 0.0, -0.0, -s, s],
        "abs": [NAN, INF, INF, 0.0, 0.0, s, s],
        "ceil": [NAN, INF, -INF, -0.0, 0.0, 1.0, -0.0],
        "floor": [NAN, INF, -INF, -0.0, 0.0, 0.0, -1.0],
        "sqrt": [NAN, INF, NAN, -0.0, 0.0, math.sqrt(s), NAN],
        "rsqrt": [NAN, 0.0, NAN, -INF, INF, 1.0 / math.sqrt(s), NAN],
        "reciprocal": [NAN, 0.0, -0.0, -INF, INF, 1.0 / s, -1.0 / s],
        "log": [NAN, INF, NAN, -INF, -INF, math.log(s), NAN],
        "sin": [NAN, NAN, NAN, -0.0, 0.0, s, -s],
        "cos": [NAN, NAN, NAN, 1.0, 1.0, 1.0, 1.0],
        "tan": [NAN, NAN, NAN, -0.0, 0.0, s, -s],
        "erf": [NAN, 1.0, -1.0, -0.0, 0.0, math.erf(s), -math.erf(s)],
        # elu: alpha * expm1(x) below 0, so -0 stays -0 and -inf gives -alpha
        "elu": [NAN, INF, -1.0, -0.0, 0.0, s, math.expm1(-s)],
        "softplus": [NAN, INF, 0.0, math.log(2.0), math.log(2.0), softplus(s), softplus(-s)],
        # x * sigmoid(x): a zero of x's sign where sigmoid is 0 (swish(-inf) = -0)
        "swish": [NAN, INF, -0.0, -0.0, 0.0, swish(s), swish(-s)],
        "gelu_approx_tanh": [NAN, INF, -0.0, -0.0, 0.0, gtanh(s), gtanh(-s)],
    }


UNARY_BUILD = {
    "identity": lambda g, x: g.identity(input=x),
    "relu": lambda g, x: g.relu(input=x),
    "leaky_relu": lambda g, x: g.relu(input=x, negative_slope=0.125),
    "clipped_relu": lambda g, x: g.relu(input=x, lower_clip=-0.5, upper_clip=0.5),
    **{m: (lambda g, x, m=m: getattr(g, m)(input=x)) for m in [
        "sigmoid", "tanh", "gelu", "exp", "neg", "abs", "ceil", "floor", "sqrt", "rsqrt",
        "reciprocal", "log", "sin", "cos", "tan", "erf", "elu", "softplus", "swish",
        "gelu_approx_tanh"]},
}


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("mode", list(UNARY_BUILD))
def test_unary_mode_maps_nan_infinities_signed_zeros_and_subnormals_as_documented(
        nx, mode, dtype):
    values, expected = unary_specials(subnormal(dtype))
    x = exact_input(dtype, values)
    g = nx.graph(dtype)
    y = UNARY_BUILD[mode](g, x.bind(g, "x"))
    out = nx.output(y, [len(values)], dtype)
    got = execute_twice(nx, g, [x, out], out)
    assert_same_values(got, ref.round_to(expected[mode], dtype), mode, inputs=[x.values])


def run_binary_grid(nx, op, dtype, a_values, b_values, build=None, out="same"):
    """Every a against every b: a is [n, 1], b is [1, m], broadcast to [n, m]."""
    a = exact_input(dtype, np.asarray(a_values, np.float64)[:, None])
    b = exact_input(dtype, np.asarray(b_values, np.float64)[None, :])
    g = nx.graph(dtype)
    A, B = a.bind(g, "a"), b.bind(g, "b")
    y = build(g, A, B) if build else getattr(g, op)(a=A, b=B)
    result = nx.output(y, [a.shape[0], b.shape[1]], dtype if out == "same" else out)
    return a, b, execute_twice(nx, g, [a, b, result], result)


def grid_values(dtype):
    s = subnormal(dtype)
    return [NAN, INF, -INF, -0.0, 0.0, s, -s, 1.5, -2.5]


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_arithmetic_on_special_values_is_ieee(nx, op, dtype):
    v = grid_values(dtype)
    a, b, got = run_binary_grid(nx, op, dtype, v, v)
    with np.errstate(all="ignore"):
        want = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                "div": np.divide}[op](a.values, b.values)
    assert_same_values(got, ref.round_to(want, dtype), op, inputs=[a.values, b.values])


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_on_special_values_are_ieee_maximum_minimum(nx, op, dtype):
    # NaN in either operand gives NaN; -inf < subnormals < +inf; -0 < +0.
    v = grid_values(dtype)
    a, b, got = run_binary_grid(nx, op, dtype, v, v)
    want = (ref.ieee_maximum if op == "max" else ref.ieee_minimum)(a.values, b.values)
    assert_same_values(got, ref.round_to(want, dtype), op, inputs=[a.values, b.values])


@pytest.mark.parametrize("op,want", [("max", [0.0, 0.0]), ("min", [-0.0, -0.0])])
def test_max_and_min_order_minus_zero_below_plus_zero_in_either_operand_order(nx, op, want):
    a = exact_input("fp32", [-0.0, 0.0])
    b = exact_input("fp32", [0.0, -0.0])
    g = nx.graph("fp32")
    y = getattr(g, op)(a=a.bind(g, "a"), b=b.bind(g, "b"))
    out = nx.output(y, [2], "fp32")
    nx.execute(g, [a, b, out])
    assert_same_values(out.decoded(), want, op, inputs=[a.values, b.values])


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("op", ["add_square", "mod", "pow"])
def test_add_square_mod_and_pow_on_special_values_are_numpys(nx, op, dtype):
    # C99 / NumPy: fmod(x, 0) and fmod(inf, y) are NaN, fmod(x, inf) = x; pow(x, +-0) = 1
    # even for NaN, pow(1, y) = 1, pow(-0, -1.5) = +inf, pow(-2.5, 1.5) = NaN ...
    v = grid_values(dtype)
    a, b, got = run_binary_grid(nx, op, dtype, v, v, build=lambda g, x, y: {
        "add_square": lambda: g.add_square(a=x, b=y), "mod": lambda: g.mod(input0=x, input1=y),
        "pow": lambda: g.pow(input0=x, input1=y)}[op]())
    want = {"add_square": ref.add_square, "mod": ref.fmod, "pow": ref.power}[op](
        a.values, b.values)
    assert_same_values(got, ref.round_to(want, dtype), op, inputs=[a.values, b.values])


@pytest.mark.parametrize("op", ["eq", "neq", "gt", "ge", "lt", "le"])
def test_comparisons_on_special_values_are_ieee(nx, op):
    # NaN is unequal to everything, itself included (cmp_neq 1, the rest 0); -0 == +0
    v = grid_values("fp32")
    a, b, got = run_binary_grid(nx, "cmp_" + op, "fp32", v, v, out="bool",
                                build=lambda g, x, y: getattr(g, "cmp_" + op)(input=x,
                                                                              comparison=y))
    assert_same_values(got, ref.cmp(op)(a.values, b.values), "cmp_" + op,
                       inputs=[a.values, b.values])


@pytest.mark.parametrize("op", ["logical_and", "logical_or"])
def test_logic_on_special_values_takes_nan_and_infinities_as_true(nx, op):
    v = grid_values("fp32")
    a, b, got = run_binary_grid(nx, op, "fp32", v, v, out="bool",
                                build=lambda g, x, y: getattr(g, op)(a=x, b=y))
    assert_same_values(got, getattr(ref, op)(a.values, b.values), op,
                       inputs=[a.values, b.values])


def test_logical_not_and_select_on_special_values(nx):
    # NaN, +-inf and subnormals are true; only +-0 is false
    v = grid_values("fp32")
    t = exact_input("fp32", v)
    x = exact_input("fp32", np.arange(len(v), dtype=np.float64))
    g = nx.graph("fp32")
    T = t.bind(g, "t")
    n = g.logical_not(input=T)
    y = g.binary_select(input0=x.bind(g, "x"), input1=-1.0, mask=T)
    out_n = nx.output(n, [len(v)], "bool")
    out_y = nx.output(y, [len(v)], "fp32")
    nx.execute(g, [t, x, out_n, out_y])
    assert_same_values(out_n.decoded(), ref.logical_not(t.values), "logical_not")
    assert_same_values(out_y.decoded(), ref.binary_select(x.values, -1.0, t.values),
                       "binary_select")


BACKWARD = {  # mode -> build(g, x, dy)
    "relu_backward": lambda g, x, dy: g.relu_backward(loss=dy, input=x),
    "leaky_relu_backward": lambda g, x, dy: g.relu_backward(loss=dy, input=x,
                                                            negative_slope=0.125),
    "clipped_relu_backward": lambda g, x, dy: g.relu_backward(loss=dy, input=x,
                                                              lower_clip=-0.5, upper_clip=0.5),
    **{m: (lambda g, x, dy, m=m: getattr(g, m)(loss=dy, input=x)) for m in [
        "tanh_backward", "sigmoid_backward", "elu_backward", "gelu_backward",
        "gelu_approx_tanh_backward", "softplus_backward", "swish_backward"]},
}
BACKWARD_REF = {
    "relu_backward": ref.relu_backward,
    "leaky_relu_backward": lambda x, dy: ref.relu_backward(x, dy, lower_clip_slope=0.125),
    "clipped_relu_backward": lambda x, dy: ref.relu_backward(x, dy, lower_clip=-0.5,
                                                             upper_clip=0.5),
    **{m: getattr(ref, m) for m in [
        "tanh_backward", "sigmoid_backward", "elu_backward", "gelu_backward",
        "gelu_approx_tanh_backward", "softplus_backward", "swish_backward"]},
}

# The derivatives' limits, as numbers (dy = 1.5): x = -inf, -0, +inf.
BACKWARD_LIMITS = {
    "relu_backward": [0.0, 0.0, 1.5],           # x <= 0 is the flat part: exactly 0
    "leaky_relu_backward": [0.1875, 0.1875, 1.5],
    "clipped_relu_backward": [0.0, 1.5, 0.0],
    "tanh_backward": [0.0, 1.5, 0.0],
    "sigmoid_backward": [0.0, 0.375, 0.0],
    "elu_backward": [0.0, 1.5, 1.5],
    "gelu_backward": [0.0, 0.75, 1.5],
    "gelu_approx_tanh_backward": [0.0, 0.75, 1.5],
    "softplus_backward": [0.0, 0.75, 1.5],
    "swish_backward": [0.0, 0.75, 1.5],
}


def run_backward_grid(nx, mode, dtype, x_values, dy_values):
    """Every x against every dy: x is [n, 1], dy [1, m]; gives (x, dy, dx as float64)."""
    x = exact_input(dtype, np.asarray(x_values, np.float64)[:, None])
    dy = exact_input(dtype, np.asarray(dy_values, np.float64)[None, :])
    g = nx.graph(dtype)
    dx = BACKWARD[mode](g, x.bind(g, "x"), dy.bind(g, "dy"))
    out = nx.output(dx, [x.shape[0], dy.shape[1]], dtype)
    return x, dy, execute_twice(nx, g, [x, dy, out], out)


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
@pytest.mark.parametrize("mode", list(BACKWARD))
def test_backward_modes_on_special_values_follow_their_definitions(nx, mode, dtype):
    # NaN in x or dy gives NaN except where the derivative is exactly 0 (relu's flat
    # parts); an infinite dy times a derivative of 0 (the limits at +-inf) is NaN, as
    # IEEE multiplication gives
    v = grid_values(dtype)
    x, dy, got = run_backward_grid(nx, mode, dtype, v, v)
    want = BACKWARD_REF[mode](x.values, dy.values)
    assert_same_values(got, ref.round_to(want, dtype), mode, inputs=[x.values, dy.values])


@pytest.mark.parametrize("mode", list(BACKWARD))
def test_backward_modes_reach_their_limits(nx, mode):
    x, dy, got = run_backward_grid(nx, mode, "fp32", [-INF, -0.0, INF], [1.5])
    assert_same_values(got[:, 0], BACKWARD_LIMITS[mode], mode, inputs=[x.values[:, 0]])


@pytest.mark.parametrize("mode", sorted(ref.TEXTBOOK_BACKWARD))
def test_stable_backward_references_agree_with_the_textbook_forms(mode, rng):
    # where the textbook form does not cancel (|x| <= 4), to 1e-12
    x = rng.uniform(-4.0, 4.0, 1000)
    dy = rng.uniform(-1.0, 1.0, 1000)
    np.testing.assert_allclose(getattr(ref, mode)(x, dy), ref.TEXTBOOK_BACKWARD[mode](x, dy),
                               rtol=1e-12, atol=1e-15)


def test_stable_gelu_approx_tanh_reference_agrees_with_the_textbook_form(rng):
    x = rng.uniform(-4.0, 4.0, 1000)
    np.testing.assert_allclose(ref.gelu_approx_tanh(x), ref.gelu_approx_tanh_textbook(x),
                               rtol=1e-11, atol=1e-15)


# ---- NaN through batchnorm and matmul: NaN exactly where the input is used ---------------

def test_batchnorm_nan_in_x_gives_nan_in_that_element_only(nx):
    shape, stat = [2, 3, 4, 5], [1, 3, 1, 1]
    values = nx.random(shape)
    values[1, 2, 3, 0] = NAN
    x = exact_input("fp32", ref.round_to(values, "fp32"))
    params = [nx.input(stat, "fp32"), nx.input(stat, "fp32", low=0.5, high=2.0, signed=False),
              nx.input(stat, "fp32"), nx.input(stat, "fp32")]
    g = nx.graph("fp32")
    y = g.batchnorm_inference(x.bind(g, "x"), *[p.bind(g, n) for p, n in zip(
        params, ["mean", "inv_variance", "scale", "bias"])])
    out = nx.output(y, shape, "fp32")
    got = execute_twice(nx, g, [x] + params + [out], out)
    want = ref.batchnorm_inference(x.values, *[p.values for p in params])
    assert np.isnan(want).sum() == 1
    assert_same_values(got, ref.round_to(want, "fp32"), "batchnorm_inference")


@pytest.mark.parametrize("which", ["mean", "inv_variance", "scale", "bias"])
def test_batchnorm_nan_in_a_channel_parameter_gives_nan_in_that_channel_only(nx, which):
    shape, stat = [2, 3, 4, 5], [1, 3, 1, 1]
    names = ["mean", "inv_variance", "scale", "bias"]
    x = nx.input(shape, "fp32")
    params = []
    for name in names:
        values = nx.random(stat, 0.5, 2.0, signed=name != "inv_variance")
        if name == which:
            values[0, 1, 0, 0] = NAN
        params.append(exact_input("fp32", ref.round_to(values, "fp32")))
    g = nx.graph("fp32")
    y = g.batchnorm_inference(x.bind(g, "x"), *[p.bind(g, n) for p, n in zip(params, names)])
    out = nx.output(y, shape, "fp32")
    got = execute_twice(nx, g, [x] + params + [out], out)
    expected_nan = np.zeros(shape, bool)
    expected_nan[:, 1] = True
    assert_same_values(np.isnan(got), expected_nan, "NaN positions")
    want = ref.batchnorm_inference(x.values, *[p.values for p in params])
    assert_same_values(got, ref.round_to(want, "fp32"), "batchnorm_inference")


@pytest.mark.parametrize("operand", ["A", "B"])
def test_matmul_nan_gives_nan_in_the_row_or_column_it_feeds(nx, operand):
    # A[1, 3] = NaN feeds row 1 of C; B[3, 2] = NaN feeds column 2.  All data is non-zero,
    # so nothing can hide the NaN; every other element is finite and close.
    av, bv = nx.random([4, 6]), nx.random([6, 5])
    expected_nan = np.zeros([4, 5], bool)
    if operand == "A":
        av[1, 3] = NAN
        expected_nan[1, :] = True
    else:
        bv[3, 2] = NAN
        expected_nan[:, 2] = True
    a = exact_input("fp32", ref.round_to(av, "fp32"))
    b = exact_input("fp32", ref.round_to(bv, "fp32"))
    g = nx.graph("fp32")
    c = g.matmul(A=a.bind(g, "A"), B=b.bind(g, "B"))
    out = nx.output(c, [4, 5], "fp32")
    got = execute_twice(nx, g, [a, b, out], out)
    assert_same_values(np.isnan(got), expected_nan, "NaN positions")
    # The NaN read as 0 changes nothing in the elements it does not feed.
    want = ref.matmul(np.nan_to_num(a.values), np.nan_to_num(b.values))
    assert_close(got[~expected_nan], want[~expected_nan], tolerance("matmul", "fp32"),
                 "elements the NaN does not feed")
