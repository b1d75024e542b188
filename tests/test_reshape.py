"""reshape on the reference engine: LOGICAL (NumPy's reshape: row-major logical order,
any strides in and out) and VIEW_ONLY (y's dims and strides describe x's memory: merging
or splitting dims, and transposes as permuted dims and strides, also of virtual tensors
feeding another op).  Elements move bit for bit, so results are compared exactly, in every
storage type, integers and bfloat16 included."""
import re

import hipdnn
import numpy as np
import pytest

import references as ref
from conftest import assert_close
from tolerances import tolerance

dt = hipdnn.data_type
LOGICAL, VIEW = hipdnn.reshape_mode.LOGICAL, hipdnn.reshape_mode.VIEW_ONLY

# (numpy dtype, hipdnn data type) of every storage reshape moves
STORAGE = {
    "fp32": (np.float32, dt.FLOAT), "fp16": (np.float16, dt.HALF),
    "bf16": (np.uint16, dt.BFLOAT16), "fp64": (np.float64, dt.DOUBLE),
    "i8": (np.int8, dt.INT8), "u8": (np.uint8, dt.UINT8), "i32": (np.int32, dt.INT32),
    "i64": (np.int64, dt.INT64), "bool": (np.bool_, dt.BOOLEAN),
}


def values(rng, shape, storage):
    npt, _ = STORAGE[storage]
    if storage == "bool":
        return rng.random(shape) < 0.5
    if storage in ("i8", "u8", "i32", "i64", "bf16"):
        info = np.iinfo(npt)  # bf16: every bit pattern, NaN payloads included
        return rng.integers(info.min, info.max, size=shape, dtype=npt, endpoint=True)
    return rng.standard_normal(shape).astype(npt)


def run(g, inputs, outputs):
    """Builds on the reference engine and runs; outputs are preallocated arrays."""
    g.set_preferred_engine("reference_cpu")
    g.build([hipdnn.heur_mode.A])
    g.execute({**inputs, **outputs}, np.full(g.get_workspace_size(), 0xA5, np.uint8))


def poisoned(shape, npt, strides=None):
    """An output buffer full of a recognizable byte pattern, with element strides (or
    packed); returns (view, base)."""
    n = int(np.prod(shape))
    base = np.frombuffer(np.full(n * np.dtype(npt).itemsize, 0x5A, np.uint8).tobytes(),
                         npt).copy()
    if strides is None:
        return base.reshape(shape), base
    item = base.itemsize
    return np.lib.stride_tricks.as_strided(base, shape, [s * item for s in strides]), base


def same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("storage", sorted(STORAGE))
@pytest.mark.parametrize("mode", [LOGICAL, VIEW])
def test_reshape_of_a_packed_input_is_numpys_reshape(rng, storage, mode):
    npt, dtype = STORAGE[storage]
    x = values(rng, [2, 3, 4, 5], storage)
    before = x.copy()
    g = hipdnn.pygraph(io_data_type=dtype)
    xt = g.tensor_like(x, name="x", data_type=dtype)
    y = g.reshape(xt, name="r", reshape_mode=mode)
    y.set_output(True).set_dim([6, 4, 5])
    out, _ = poisoned([6, 4, 5], npt)
    run(g, {xt: x}, {y: out})
    assert same_bits(out, x.reshape(6, 4, 5))
    assert same_bits(x, before)


@pytest.mark.parametrize("layout", ["transposed", "channels_last", "strided"])
def test_logical_reshape_reads_any_strides_in_row_major_order(rng, layout):
    full = rng.standard_normal([3, 4, 6, 5]).astype(np.float32)
    if layout == "transposed":
        x = np.ascontiguousarray(full.swapaxes(2, 3)).swapaxes(2, 3)
    elif layout == "channels_last":
        x = np.ascontiguousarray(full.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    else:
        big = np.full([3, 5, 6, 11], np.nan, np.float32)
        big[:, 1:, :, ::2][:, :, :, :5] = full
        x = big[:, 1:, :, ::2][:, :, :, :5]
    assert np.array_equal(x, full) and not x.flags.c_contiguous
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    xt = g.tensor_like(x, name="x")
    y = g.reshape(xt, reshape_mode=LOGICAL)
    y.set_output(True).set_dim([12, 30])
    out, _ = poisoned([12, 30], np.float32)
    run(g, {xt: x}, {y: out})
    assert same_bits(out, full.reshape(12, 30))


def test_logical_reshape_writes_a_strided_output(rng):
    x = rng.standard_normal([4, 6]).astype(np.float32)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    xt = g.tensor_like(x, name="x")
    y = g.reshape(xt, reshape_mode=LOGICAL)
    y.set_output(True).set_dim([3, 8]).set_stride([1, 3])  # column-major
    out, base = poisoned([3, 8], np.float32, [1, 3])
    run(g, {xt: x}, {y: out})
    assert same_bits(out, x.reshape(3, 8))
    assert same_bits(base, x.reshape(3, 8).T.reshape(-1))  # every element written, no gap


def test_view_only_transpose_is_a_view_with_permuted_dims_and_strides(rng):
    b, s, h, d = 2, 5, 3, 4
    x = rng.standard_normal([b, s, h, d]).astype(np.float32)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    xt = g.tensor_like(x, name="x")
    y = g.reshape(xt, name="bhsd")  # VIEW_ONLY, cuDNN frontend's default
    strides = [s * h * d, d, h * d, 1]  # x's strides, permuted as the dims
    y.set_output(True).set_dim([b, h, s, d]).set_stride(strides)
    out, _ = poisoned([b, h, s, d], np.float32, strides)
    run(g, {xt: x}, {y: out})
    assert same_bits(out, x.transpose(0, 2, 1, 3))


def test_a_transposed_virtual_view_feeds_a_matmul(rng):
    m, k, n = 5, 7, 3
    a = rng.standard_normal([m, k]).astype(np.float32)
    w = rng.standard_normal([n, k]).astype(np.float32)  # used as w.T, [k, n]
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    at, wt = g.tensor_like(a, name="a"), g.tensor_like(w, name="w")
    w_t = g.reshape(wt, name="transpose")
    w_t.set_dim([k, n]).set_stride([1, k]).set_data_type(dt.FLOAT)
    c = g.matmul(at, w_t, name="mm")
    c.set_output(True)
    out, _ = poisoned([m, n], np.float32)
    run(g, {at: a, wt: w}, {c: out})
    assert_close(out, ref.matmul(a, w.T), tolerance("matmul", "fp32"))


def test_view_only_of_an_input_with_gaps_is_declined_with_the_reason(rng):
    base = rng.standard_normal([4, 10]).astype(np.float32)
    x = base[:, ::2]  # [4, 5] with gaps
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.reshape(g.tensor_like(x, name="x"), name="v")
    y.set_output(True).set_dim([20])
    g.set_preferred_engine("reference_cpu")
    with pytest.raises(hipdnn.GraphNotSupportedError,
                       match=r"reference_cpu: node 'v' \(reshape\): a VIEW_ONLY reshape reads "
                             r"y's strides as a view of x's memory.*x is not \(reshape_mode "
                             r"LOGICAL copies"):
        g.build([hipdnn.heur_mode.A])


def test_reshape_does_not_convert_data_types():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.reshape(g.tensor(name="x", dim=[4, 6]), name="v")
    y.set_output(True).set_dim([24]).set_data_type(dt.HALF)
    g.set_preferred_engine("reference_cpu")
    with pytest.raises(hipdnn.GraphNotSupportedError,
                       match=r"x is float32 but y is float16; reshape moves elements"):
        g.build([hipdnn.heur_mode.A])
    g2 = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y2 = g2.reshape(g2.tensor(name="x", dim=[4, 6]), name="l", reshape_mode=LOGICAL)
    y2.set_output(True).set_dim([24]).set_data_type(dt.HALF)
    with pytest.raises(hipdnn.HipdnnError, match=r"a LOGICAL reshape keeps the data type"):
        g2.validate()


@pytest.mark.parametrize("dims,message", [
    (None, r"reshape 'r': output 'y' \(tensor 'r::Y'\) has no dims; give them \(as many "
           r"elements as x 'x' \[4, 6\]\)"),
    ([5, 5], r"reshape 'r': y 'r::Y' \[5, 5\] has 25 elements but x 'x' \[4, 6\] has 24"),
])
def test_validation_asks_for_y_dims_with_x_element_count(dims, message):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.reshape(g.tensor(name="x", dim=[4, 6]), name="r")
    y.set_output(True)
    if dims:
        y.set_dim(dims)
    with pytest.raises(hipdnn.HipdnnError, match=message):
        g.validate()


def test_reshape_mode_survives_serialization(rng):
    x = rng.standard_normal([3, 4]).astype(np.float32).T  # transposed: LOGICAL only
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    xt = g.tensor_like(x, name="x")
    y = g.reshape(xt, name="r", reshape_mode=LOGICAL)
    y.set_output(True).set_dim([12])
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    assert g2.serialize() == g.serialize()
    out, _ = poisoned([12], np.float32)
    run(g2, {xt.get_uid(): x}, {y.get_uid(): out})
    assert same_bits(out, x.reshape(12))


def test_python_checks_the_mode():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[4, 6])
    with pytest.raises(ValueError, match=re.escape("reshape_mode 7 is not a "
                                                   "hipdnn.reshape_mode")):
        g.reshape(x, reshape_mode=7)
    assert "0 nodes" in repr(g)


def test_reshape_result_takes_its_input_type_not_the_graphs_io_type():
    # the virtual pooled tensor is the intermediate type (float32) in a float16 graph
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    pooled, _ = g.resample(g.tensor(name="x", dim=[1, 2, 4, 4]), hipdnn.resample_mode.MAXPOOL,
                           window=[2, 2], stride=[2, 2])
    y = g.reshape(pooled, reshape_mode=LOGICAL)
    y.set_output(True).set_dim([8])
    g.validate()
    assert y.get_data_type() == dt.FLOAT
