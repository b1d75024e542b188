"""Storage dtypes: the bf16 helpers, and the engine's fp32 / fp16 / bf16 conversions.

Conversions have one right answer (round to nearest even when narrowing, exact when
widening or keeping the dtype), so these tests compare bits, not tolerances.
"""
import hipdnn
import numpy as np
import pytest

import references as ref
from conftest import STORAGES
from tolerances import tolerance


def bf16_round_nearest_even(values):
    """NumPy reference: float32 -> bf16 bit patterns, ties to even, NaN kept NaN."""
    bits = np.asarray(values, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))
    out = (rounded >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(np.asarray(values, np.float32))
    out[nan] = ((bits[nan] >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return out


def bf16_bits_to_float(bits):
    return (np.asarray(bits, np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


# ---- hipdnn.to_bfloat16 / from_bfloat16 -----------------------------------------------------

@pytest.mark.parametrize("value,bits", [
    (1.0, 0x3F80), (-2.0, 0xC000), (0.0, 0x0000), (-0.0, 0x8000),
    (np.inf, 0x7F80), (-np.inf, 0xFF80),
    (1.0 + 2.0 ** -8, 0x3F80),      # tie, rounds down to the even pattern
    (1.0 + 3 * 2.0 ** -8, 0x3F82),  # tie, rounds up to the even pattern
    (1.0 + 2.0 ** -8 + 2.0 ** -20, 0x3F81),  # just above the tie
    (3.4028234663852886e38, 0x7F80),  # FLT_MAX rounds to +inf
])
def test_to_bfloat16_known_patterns(value, bits):
    got = hipdnn.to_bfloat16(np.array([value], np.float32))
    assert got.dtype == np.uint16
    assert int(got[0]) == bits, f"{value!r} -> {int(got[0]):#06x}, want {bits:#06x}"


def test_to_bfloat16_keeps_nan_a_nan():
    got = hipdnn.to_bfloat16(np.array([np.nan, -np.nan], np.float32))
    assert np.isnan(bf16_bits_to_float(got)).all()


def test_to_bfloat16_rounds_to_nearest_even_on_random_floats(rng):
    x = (rng.standard_normal(4096) * np.exp2(rng.integers(-60, 60, 4096))).astype(np.float32)
    np.testing.assert_array_equal(hipdnn.to_bfloat16(x), bf16_round_nearest_even(x))


def test_to_bfloat16_keeps_shape_and_accepts_non_contiguous_arrays(rng):
    x = rng.standard_normal((4, 6, 5)).astype(np.float32)[:, ::2, 1:]
    got = hipdnn.to_bfloat16(x)
    assert got.shape == x.shape and got.dtype == np.uint16
    np.testing.assert_array_equal(got, bf16_round_nearest_even(x))


def test_bfloat16_conversions_keep_a_scalar_zero_dimensional():
    # NumPy 1's ascontiguousarray makes 0-d arrays 1-d: assigning such a result to one
    # element is an error under NumPy 2
    for value in (1.5, np.float64(np.nan), np.float32(-0.0)):
        bits = hipdnn.to_bfloat16(value)
        assert bits.shape == () and bits.dtype == np.uint16
        back = hipdnn.from_bfloat16(bits)
        assert back.shape == () and back.dtype == np.float32
    assert hipdnn.from_bfloat16(hipdnn.to_bfloat16(1.5)) == 1.5
    assert np.isnan(hipdnn.from_bfloat16(hipdnn.to_bfloat16(np.nan)))
    assert np.signbit(hipdnn.from_bfloat16(hipdnn.to_bfloat16(-0.0)))


def test_from_bfloat16_is_exact_for_every_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    got = hipdnn.from_bfloat16(bits)
    assert got.dtype == np.float32 and got.shape == bits.shape
    want = bf16_bits_to_float(bits)
    finite = ~np.isnan(want)
    np.testing.assert_array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))
    assert np.isnan(got[~finite]).all()


def test_bfloat16_round_trip_is_lossless_for_every_non_nan_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    keep = ~np.isnan(bf16_bits_to_float(bits))
    np.testing.assert_array_equal(hipdnn.to_bfloat16(hipdnn.from_bfloat16(bits[keep])),
                                  bits[keep])


# ---- the engine's conversions, through identity ---------------------------------------------

def run_identity(nx, x, out_dtype):
    g = nx.graph(x.storage.name)
    y = g.identity(input=x.bind(g, "x"))
    out = nx.output(y, x.array.shape, out_dtype)
    nx.execute(g, [x, out])
    return out


def wide_range_values(nx, shape):
    # Magnitudes from 2^-10 to 2^10: normal numbers in fp16 and bf16 alike.
    return nx.random(shape) * np.exp2(nx.rng.integers(-10, 10, shape))


@pytest.mark.parametrize("dtype", ["fp32", "fp16", "bf16"])
def test_identity_within_one_dtype_is_bit_exact(nx, dtype):
    x = nx.input([3, 4, 5, 6], dtype, values=wide_range_values(nx, [3, 4, 5, 6]))
    out = run_identity(nx, x, dtype)
    np.testing.assert_array_equal(out.array.view(np.uint8), x.array.view(np.uint8))


@pytest.mark.parametrize("dtype", ["fp16", "bf16"])
def test_widening_to_fp32_is_exact(nx, dtype):
    x = nx.input([2, 5, 7], dtype, values=wide_range_values(nx, [2, 5, 7]))
    out = run_identity(nx, x, "fp32")
    np.testing.assert_array_equal(out.array, x.values.astype(np.float32))


def test_narrowing_fp32_to_fp16_rounds_to_nearest_even(nx):
    x = nx.input([4, 257], "fp32", values=wide_range_values(nx, [4, 257]))
    out = run_identity(nx, x, "fp16")
    want = x.array.astype(np.float16)  # NumPy rounds to nearest even
    np.testing.assert_array_equal(out.array.view(np.uint16), want.view(np.uint16))


def test_narrowing_fp32_to_bf16_rounds_to_nearest_even(nx):
    x = nx.input([4, 257], "fp32", values=wide_range_values(nx, [4, 257]))
    out = run_identity(nx, x, "bf16")
    np.testing.assert_array_equal(out.array, bf16_round_nearest_even(x.array))


def test_fp16_to_bf16_goes_through_fp32(nx):
    x = nx.input([3, 50], "fp16", values=wide_range_values(nx, [3, 50]))
    out = run_identity(nx, x, "bf16")
    np.testing.assert_array_equal(out.array, bf16_round_nearest_even(x.values))


# ---- mixed storage in one op ----------------------------------------------------------------

def test_add_of_fp16_and_fp32_operands_into_fp32(nx):
    a = nx.input([2, 4, 5, 5], "fp16")
    b = nx.input([1, 4, 1, 1], "fp32")
    g = nx.graph("fp16")
    y = g.add(a=a.bind(g, "a"), b=b.bind(g, "b"))
    out = nx.output(y, [2, 4, 5, 5], "fp32")
    nx.execute(g, [a, b, out])
    nx.assert_close(out, ref.add(a.values, b.values), tolerance("pointwise", "fp32"))


def test_bf16_matmul_with_fp32_output_keeps_fp32_accumulation(nx):
    # Output stored in fp32: only input rounding (already in the reference) remains.
    a, b = nx.input([2, 8, 32], "bf16"), nx.input([2, 32, 8], "bf16")
    g = nx.graph("bf16")
    c = g.matmul(A=a.bind(g, "A"), B=b.bind(g, "B"))
    out = nx.output(c, [2, 8, 8], "fp32")
    nx.execute(g, [a, b, out])
    nx.assert_close(out, ref.matmul(a.values, b.values), tolerance("matmul", "fp32"))


def test_storage_helpers_decode_what_they_encode(nx):
    # The harness's own bf16 decoder against hipdnn's, on random inputs.
    x = nx.input([64], "bf16")
    np.testing.assert_array_equal(STORAGES["bf16"].decode(x.array),
                                  hipdnn.from_bfloat16(x.array).astype(np.float64))
