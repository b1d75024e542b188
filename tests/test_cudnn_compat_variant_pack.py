"""cuDNN frontend compatibility: variant packs and scalars.

None keys and None values are skipped (cuDNN frontend's optional outputs); a
pass-by-value tensor without a value in the graph takes its value at each execute, as a
Python number or a 0-d / one-element array (cuDNN frontend's CPU scalars);
``tensor.empty()`` / ``hipdnn.empty_like(tensor)`` allocate what a tensor describes.
"""
import numpy as np
import pytest

import hipdnn as cudnn
import references as ref
from compat_support import assert_close, poison, rand, tol_for, unchanged, values


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def _scale_bias_graph(scalar_type=np.float32, io=np.float32):
    """Y = X * scale + bias with scale, bias runtime scalars (CPU scalars in cuDNN)."""
    graph = cudnn.pygraph(io_data_type=io, intermediate_data_type=np.float32,
                          compute_data_type=np.float32)
    X = graph.tensor(name="X", dim=[2, 3, 4])
    scale = graph.tensor(name="scale", dim=[1, 1, 1], stride=[1, 1, 1],
                         data_type=scalar_type, is_pass_by_value=True)
    bias = graph.tensor(name="bias", dim=[1, 1, 1], stride=[1, 1, 1],
                        data_type=scalar_type, is_pass_by_value=True)
    Y = graph.bias(name="b", input=graph.scale(name="s", input=X, scale=scale), bias=bias)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    return graph, X, scale, bias, Y


@pytest.mark.parametrize("given", ["float", "int", "numpy scalar", "0-d array",
                                   "one-element array", "[1,1,1] array"])
def test_runtime_scalars_take_numbers_and_one_element_arrays(rng, given):
    graph, X, scale, bias, Y = _scale_bias_graph()
    x = rand(rng, (2, 3, 4))
    s_val, b_val = (3, -2) if given == "int" else (0.75, -0.125)
    make = {"float": float, "int": int, "numpy scalar": np.float64,
            "0-d array": lambda v: np.array(v, np.float32),
            "one-element array": lambda v: np.array([v], np.float32),
            "[1,1,1] array": lambda v: np.full((1, 1, 1), v, np.float32)}[given]
    y = poison(np.empty((2, 3, 4), np.float32))
    with unchanged(x):
        graph.execute({X: x, scale: make(s_val), bias: make(b_val), Y: y}, None)
    assert_close(y, values(x) * s_val + b_val, tol_for("pointwise", y))
    # a new value at the next execute, with the same plan
    graph.execute({X: x, scale: make(2 * s_val), bias: make(b_val), Y: y}, None)
    assert_close(y, values(x) * 2 * s_val + b_val, tol_for("pointwise", y))


def test_runtime_scalar_in_half_and_bfloat16(rng):
    for scalar_type, tol in ((np.float16, 1e-3), (cudnn.data_type.BFLOAT16, 1e-2)):
        graph, X, scale, bias, Y = _scale_bias_graph(scalar_type)
        x = rand(rng, (2, 3, 4))
        y = poison(np.empty((2, 3, 4), np.float32))
        graph.execute({X: x, scale: 0.5, bias: 0.25, Y: y}, None)  # both exact in 16 bits
        assert_close(y, values(x) * 0.5 + 0.25, tol_for("pointwise", y))
        graph.execute({X: x, scale: 1.0 / 3.0, bias: 0.0, Y: y}, None)  # rounded first
        assert_close(y, values(x) / 3.0, tol)


def test_scalar_values_are_checked():
    graph, X, scale, bias, Y = _scale_bias_graph()
    pack = {X: np.ones((2, 3, 4), np.float32), Y: np.empty((2, 3, 4), np.float32)}
    with pytest.raises(ValueError, match=r"'scale' \(uid \d+\) is a scalar; got an array of "
                                         r"shape \[2\]"):
        graph.execute({**pack, scale: np.ones(2, np.float32), bias: 0.0}, None)
    with pytest.raises(ValueError, match=r"no array for tensor 'bias'"):
        graph.execute({**pack, scale: 1.0}, None)
    with pytest.raises(TypeError, match="got a bool"):
        graph.execute({**pack, scale: True, bias: 0.0}, None)


def test_tensor_like_of_a_0d_array_is_a_cpu_scalar(rng):
    eps = np.array(1e-3, np.float32)  # torch.tensor(1e-3) on the CPU in cuDNN frontend
    graph = cudnn.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    X = graph.tensor(name="X", dim=[4, 5])
    epsilon = graph.tensor_like(eps)
    assert epsilon.get_is_pass_by_value() and epsilon.get_dim() == [1]
    assert epsilon.get_data_type() == cudnn.data_type.FLOAT
    Y = graph.add(name="add", a=X, b=epsilon)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    x = rand(rng, (4, 5))
    y = poison(np.empty((4, 5), np.float32))
    graph.execute({X: x, epsilon: eps, Y: y}, None)
    assert_close(y, values(x) + values(eps), tol_for("pointwise", y))


def test_none_keys_and_values_are_skipped(rng):
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor(name="X", dim=[3, 3])
    Y = graph.tanh(name="t", input=X)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    x = rand(rng, (3, 3))
    y = poison(np.empty((3, 3), np.float32))
    optional_out = None  # e.g. stats an op did not produce, in cuDNN frontend's tests
    graph.execute({X: x, Y: y, None: np.empty(3, np.float32), optional_out: None}, None)
    assert_close(y, np.tanh(values(x)), tol_for("pointwise", y))
    with pytest.raises(ValueError, match=r"no array for tensor 'X'"):
        graph.execute({X: None, Y: y}, None)


@pytest.mark.parametrize("layout", ["packed", "channels_last"])
def test_empty_and_empty_like_allocate_what_the_tensor_describes(rng, layout):
    x = rand(rng, (2, 3, 4, 5), np.float16)
    if layout == "channels_last":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    graph = cudnn.pygraph(intermediate_data_type=np.float32, compute_data_type=np.float32)
    X = graph.tensor_like(x)
    Y = graph.sigmoid(name="sig", input=X)
    Y.set_output(True)
    with pytest.raises(ValueError, match="build the graph first"):
        Y.empty()  # an op result has no dims before the build
    graph.build([cudnn.heur_mode.A])
    for y in (Y.empty(), cudnn.empty_like(Y)):
        assert y.dtype == np.float16 and list(y.shape) == Y.get_dim()
        assert [s // y.itemsize for s in y.strides] == Y.get_stride() == X.get_stride()
        poison(y)
        with unchanged(x):
            graph.execute({X: x, Y: y}, None)
        assert_close(y, ref.sigmoid(values(x)), tol_for("pointwise", y))
    bf = graph.tensor(dim=[2, 2], data_type=cudnn.data_type.BFLOAT16).empty()
    assert bf.dtype == np.uint16
    with pytest.raises(TypeError, match="expected a hipdnn tensor"):
        cudnn.empty_like(np.zeros(3))


def _wgrad_graph(x, dy):
    """cuDNN frontend's test_wgrads: dw [6, 8, 3, 3] of a 3x3 convolution, padding 1."""
    graph = cudnn.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    X, DY = graph.tensor_like(x), graph.tensor_like(dy)
    DW = graph.conv_wgrad(name="wgrad", image=X, loss=DY, padding=[1, 1], stride=[1, 1],
                          dilation=[1, 1])
    DW.set_output(True).set_dim([6, 8, 3, 3])
    graph.build([cudnn.heur_mode.A])
    return graph, X, DY, DW


def test_a_dense_block_of_another_shape_stands_for_a_tensor_as_in_cudnn(rng):
    # cuDNN reads only the pointer: its test_wgrads passes dw as torch.zeros_like(x)
    x, dy = rand(rng, (4, 8, 10, 10)), rand(rng, (4, 6, 10, 10))
    graph, X, DY, DW = _wgrad_graph(x, dy)
    block = poison(np.empty_like(x))
    with unchanged(x, dy), pytest.warns(RuntimeWarning, match=r"tensor 'wgrad::DW' .* "
                                        r"expects float32 \[6, 8, 3, 3\], got an array "
                                        r"shaped \[4, 8, 10, 10\]"):
        graph.execute({X: x, DY: dy, DW: block}, None)
    dw = block.reshape(-1)[:6 * 8 * 9].reshape(6, 8, 3, 3)
    want = ref.conv_wgrad(values(x), values(dy), (6, 8, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    assert_close(dw, want, tol_for("conv_wgrad", dw))
    assert np.isnan(block.reshape(-1)[6 * 8 * 9:]).all()  # nothing past the tensor written


@pytest.mark.parametrize("given", ["too small", "as large", "not dense", "other dtype",
                                   "an input"])
def test_other_arrays_of_another_shape_stay_errors(rng, given):
    x, dy = rand(rng, (4, 8, 10, 10)), rand(rng, (4, 6, 10, 10))
    graph, X, DY, DW = _wgrad_graph(x, dy)
    dw = {"too small": np.empty((6, 8, 8), np.float32),  # 384 < 432 elements
          "as large": np.empty((8, 6, 9), np.float32),  # the same 432: a mistake, not scratch
          "not dense": np.empty((4, 8, 10, 20), np.float32)[..., ::2],
          "other dtype": np.empty((4, 8, 10, 10), np.float64),
          "an input": np.empty((6, 8, 3, 3), np.float32)}[given]
    if given == "an input":  # an input of another shape would be read wrong: never taken
        x_block, name, want = np.empty((5, 8, 10, 10), np.float32), "with uid", r"\[4, 8, "
    else:
        x_block, name, want = x, r"'wgrad::DW' \(uid", r"\[6, 8, 3, 3\]"
    with pytest.raises(ValueError, match=rf"variant pack: tensor {name} \d+\)? "
                                         rf"expects float32 {want}"):
        graph.execute({X: x_block, DY: dy, DW: dw}, None)


def test_arrays_a_rank_apart_with_the_same_layout_stand_for_tensors(rng):
    # cuDNN frontend's conv-reduction test reads its [n, 1, h, w] sum into an [n, h, w]
    # tensor: dims of 1 aside, the same elements at the same places
    x = rand(rng, (2, 5, 4, 3))
    graph = cudnn.pygraph(io_data_type=np.float32, compute_data_type=np.float32)
    X = graph.tensor(name="X", dim=[2, 5, 4, 3])
    Y = graph.reduction(name="sum", input=X, mode=cudnn.reduction_mode.ADD)
    Y.set_output(True).set_dim([2, 1, 4, 3])
    graph.build([cudnn.heur_mode.A])
    y = poison(np.empty((2, 4, 3), np.float32))
    with unchanged(x):
        graph.execute({X: x.reshape(2, 5, 4, 3, 1)[..., 0], Y: y}, None)
    assert_close(y, values(x).sum(axis=1), tol_for("reduction", y))
    with pytest.raises(ValueError, match=r"expects float32 \[2, 1, 4, 3\], got float32 "
                                         r"\[2, 3, 4\]"):
        graph.execute({X: x, Y: np.empty((2, 3, 4), np.float32)}, None)  # not a squeeze


def test_an_output_after_virtual_tensors_takes_the_strides_of_the_view_at_their_head(rng):
    # cuDNN frontend's rotary-embedding test: halves of x's last dim (strided views) go
    # through virtual products, and the results are written back into the same views
    x = rand(rng, (4, 8, 32), np.float16)
    cs = rand(rng, (1, 8, 16))
    x1, x2, c1, c2 = x[..., :8], x[..., 8:16], cs[..., :8], cs[..., 8:]
    graph = cudnn.pygraph(intermediate_data_type=np.float32, compute_data_type=np.float32)
    X1, X2, C1, C2 = (graph.tensor_like(a) for a in (x1, x2, c1, c2))
    Y1 = graph.sub(a=graph.mul(a=X1, b=C1), b=graph.mul(a=X2, b=C2))
    Y1.set_output(True).set_data_type(cudnn.data_type.HALF)
    graph.build([cudnn.heur_mode.A])
    assert Y1.get_stride() == X1.get_stride() == [256, 32, 1]
    want = values(x1) * values(c1) - values(x2) * values(c2)
    rest = x[..., 8:].copy()
    graph.execute({X1: x1, X2: x2, C1: c1, C2: c2, Y1: x1}, None)  # in place, as there
    assert_close(x1, want, tol_for("pointwise", x1))
    assert np.array_equal(x[..., 8:], rest)


def test_a_tensor_no_node_uses_may_be_in_the_variant_pack(rng):
    # cuDNN frontend's test_instancenorm makes an epsilon for its backward graph that no
    # node takes and passes it at execute; cuDNN reads only what the graph uses
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor(name="X", dim=[2, 3])
    unused = graph.tensor(name="epsilon", dim=[1, 1], stride=[1, 1], data_type=np.float32,
                          is_pass_by_value=True)
    spare = graph.tensor(name="spare", dim=[4])
    Y = graph.relu(input=X)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    x = rand(rng, (2, 3))
    y = poison(np.empty((2, 3), np.float32))
    with unchanged(x):
        graph.execute({X: x, unused: np.full((1, 1), 1e-5, np.float32),
                       spare: np.ones(4, np.float32), Y: y})
    assert_close(y, np.maximum(values(x), 0), tol_for("pointwise", y))
