"""cuDNN frontend compatibility: data types.

Wherever a ``data_type`` is taken, NumPy dtypes (and torch dtypes, when torch imports) work
as well as ``hipdnn.data_type``; bfloat16 travels as uint16 bit patterns, converted by
``hipdnn.bfloat16`` with round-to-nearest-even.
"""
import numpy as np
import pytest

import hipdnn as cudnn
import references as ref
from compat_support import assert_close, poison, rand, tol_for, unchanged, values


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


NUMPY_TYPES = [
    (np.float32, cudnn.data_type.FLOAT), (np.float16, cudnn.data_type.HALF),
    (np.float64, cudnn.data_type.DOUBLE), (np.int8, cudnn.data_type.INT8),
    (np.int32, cudnn.data_type.INT32), (np.int64, cudnn.data_type.INT64),
    (np.uint8, cudnn.data_type.UINT8), (np.bool_, cudnn.data_type.BOOLEAN),
]


@pytest.mark.parametrize("np_type, expected", NUMPY_TYPES)
def test_numpy_dtypes_name_data_types_everywhere(np_type, expected):
    graph = cudnn.pygraph(io_data_type=np_type, intermediate_data_type=np.dtype(np_type),
                          compute_data_type=np_type)
    assert graph.io_data_type == graph.intermediate_data_type == expected
    assert graph.compute_data_type == expected
    X = graph.tensor(name="X", dim=[2, 3], stride=[3, 1], data_type=np_type)
    assert X.get_data_type() == expected
    assert X.set_data_type(np.dtype(np_type)).get_data_type() == expected
    like = graph.tensor_like(np.zeros((2, 3), np.float32), data_type=np_type)
    assert like.get_data_type() == expected


def test_not_set_means_the_graph_decides():
    graph = cudnn.pygraph(io_data_type=np.float16)
    X = graph.tensor(name="X", dim=[4], data_type=cudnn.data_type.NOT_SET)
    assert X.get_data_type() == cudnn.data_type.HALF  # io_data_type
    X.set_data_type(np.float32)
    X.set_data_type()  # cuDNN frontend's default argument: NOT_SET
    assert X.get_data_type() == cudnn.data_type.HALF


def test_compute_data_type_of_an_op_takes_a_numpy_dtype(rng):
    graph = cudnn.pygraph(io_data_type=np.float32)
    A = graph.tensor(name="A", dim=[2, 3, 4])
    B = graph.tensor(name="B", dim=[2, 4, 5])
    C = graph.matmul(name="mm", A=A, B=B, compute_data_type=np.float64)
    C.set_output(True).set_data_type(np.float64)
    graph.build([cudnn.heur_mode.A])
    a, b = rand(rng, (2, 3, 4)), rand(rng, (2, 4, 5))
    c = poison(np.empty((2, 3, 5), np.float64))
    with unchanged(a, b):
        graph.execute({A: a, B: b, C: c}, None)
    assert_close(c, ref.matmul(values(a), values(b)), 1e-12)


def test_strings_and_python_types_are_refused():
    graph = cudnn.pygraph()
    # "float" is float64 to NumPy but 32-bit FLOAT to cuDNN: refused rather than guessed
    for bad in ("float", float, int, 1.5):
        with pytest.raises(TypeError, match="expected a hipdnn.data_type"):
            graph.tensor(name="X", dim=[1], data_type=bad)
    with pytest.raises(TypeError, match="uint16 is not a hipdnn data type"):
        graph.tensor(name="X", dim=[1], data_type=np.uint16)
    with pytest.raises(TypeError, match="has no hipdnn data type"):
        graph.tensor(name="X", dim=[1], data_type=np.complex64)
    with pytest.raises(ValueError, match="not a hipdnn.data_type"):
        graph.tensor(name="X", dim=[1], data_type=12345)


class _FakeTorchDtype:
    """What torch.float16 looks like to a library that does not import torch."""

    def __init__(self, name):
        self._name = name

    def __str__(self):
        return self._name


_FakeTorchDtype.__name__ = "dtype"
_FakeTorchDtype.__module__ = "torch"


def test_torch_dtypes_name_data_types():
    # recognised by their type, without hipdnn importing torch: checked with look-alikes
    graph = cudnn.pygraph(io_data_type=_FakeTorchDtype("torch.float16"))
    assert graph.io_data_type == cudnn.data_type.HALF
    X = graph.tensor(name="X", dim=[2], data_type=_FakeTorchDtype("torch.bfloat16"))
    assert X.get_data_type() == cudnn.data_type.BFLOAT16
    with pytest.raises(TypeError, match="torch.complex64 has no hipdnn data type"):
        X.set_data_type(_FakeTorchDtype("torch.complex64"))
    # and with torch's own dtypes where torch is installed (the rest of the test ran)
    torch = pytest.importorskip("torch", reason="torch is not installed: the real torch "
                                                "dtypes are not checked here")
    expected = {torch.float32: cudnn.data_type.FLOAT, torch.float16: cudnn.data_type.HALF,
                torch.bfloat16: cudnn.data_type.BFLOAT16, torch.float64: cudnn.data_type.DOUBLE,
                torch.int8: cudnn.data_type.INT8, torch.int32: cudnn.data_type.INT32,
                torch.int64: cudnn.data_type.INT64, torch.uint8: cudnn.data_type.UINT8,
                torch.bool: cudnn.data_type.BOOLEAN}
    for torch_type, dt in expected.items():
        assert graph.tensor(dim=[1], data_type=torch_type).get_data_type() == dt


# ---- bfloat16 ---------------------------------------------------------------------------

def test_bfloat16_from_float_rounds_to_nearest_even():
    one = 1.0
    ulp = 2.0 ** -7  # bfloat16 spacing at 1
    vals = np.array([one, one + ulp / 2, one + 3 * ulp / 2, one + ulp / 2 + 2 ** -20,
                     one - ulp / 4, -2.0, 0.0, -0.0, 3.4e38, np.inf, -np.inf,
                     1e-40, -1e-40], np.float32)
    bits = cudnn.bfloat16.from_float(vals)
    assert bits.dtype == np.uint16 and bits.shape == vals.shape
    back = cudnn.bfloat16.to_float(bits)
    expected = ref.bfloat16_values(ref.bfloat16_bits(vals.astype(np.float64)))
    assert np.array_equal(back.view(np.uint32), expected.astype(np.float32).view(np.uint32))
    assert back[1] == one            # halfway: ties to the even neighbour (1.0)
    assert back[2] == one + 2 * ulp  # halfway: ties to the even neighbour above
    assert back[3] == one + ulp      # past halfway: up
    assert np.signbit(back[7]) and back[7] == 0
    assert back[8] == np.inf         # beyond the bfloat16 range
    nan = cudnn.bfloat16.from_float(np.array([np.nan, -np.nan], np.float32))
    assert np.all(np.isnan(cudnn.bfloat16.to_float(nan)))
    assert np.array_equal(np.signbit(cudnn.bfloat16.to_float(nan)), [False, True])


def test_bfloat16_to_float_is_exact_for_every_bit_pattern():
    bits = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    f = cudnn.bfloat16.to_float(bits)
    assert np.array_equal(f.view(np.uint32) >> 16, bits.astype(np.uint32))
    finite = np.isfinite(f)
    assert np.array_equal(cudnn.bfloat16.from_float(f[finite]), bits[finite])
    with pytest.raises(TypeError, match="uint16"):
        cudnn.bfloat16.to_float(np.zeros(3, np.float32))
    assert cudnn.to_bfloat16 is not None and np.array_equal(
        cudnn.to_bfloat16(f[finite]), cudnn.bfloat16.from_float(f[finite]))


@pytest.mark.parametrize("data_type", [cudnn.data_type.BFLOAT16, cudnn.bfloat16],
                         ids=["enum", "module"])
def test_bfloat16_bits_through_tensor_like_and_execute(rng, data_type):
    x = rand(rng, (3, 8), "bf16")
    b = rand(rng, (1, 8), "bf16")
    graph = cudnn.pygraph(intermediate_data_type=np.float32, compute_data_type=np.float32)
    X = graph.tensor_like(x, data_type=data_type)
    B = graph.tensor_like(b, data_type=data_type)
    assert X.get_data_type() == cudnn.data_type.BFLOAT16
    Y = graph.gelu(name="act", input=graph.bias(name="bias", input=X, bias=B))
    Y.set_output(True).set_data_type(data_type)
    graph.build([cudnn.heur_mode.A])
    y = poison(Y.empty())
    assert y.dtype == np.uint16
    with unchanged(x, b):
        graph.execute({X: x, B: b, Y: y}, np.empty(graph.get_workspace_size(), np.uint8))
    assert_close(y, ref.gelu(values(x) + values(b)), tol_for("pointwise", y))


def test_uint16_arrays_are_bfloat16_only_when_said():
    graph = cudnn.pygraph()
    with pytest.raises(TypeError, match="bfloat16 bit patterns only when you say so"):
        graph.tensor_like(np.zeros(4, np.uint16))
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.BFLOAT16)  # the graph says so
    assert graph.tensor_like(np.zeros(4, np.uint16)).get_data_type() == \
        cudnn.data_type.BFLOAT16
