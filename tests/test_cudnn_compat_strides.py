"""cuDNN frontend compatibility: strides.

A pointwise output shaped as one of its inputs takes that input's strides (cuDNN
frontend's rule), so outputs can be written into strided views; set_dim re-lays strides
that tensor_like took from an array; outputs whose strides overlap are refused.
"""
import numpy as np
import pytest

import hipdnn as cudnn
from compat_support import assert_close, channels_last, poison, rand, tol_for, unchanged, \
    values


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def test_pointwise_output_takes_the_strides_of_a_same_shape_input(rng):
    parent = rand(rng, (6, 20))
    x = parent[::2, 3:15:2]  # a [3, 6] view: strides [40, 2] elements
    bias = rand(rng, (1, 6))
    graph = cudnn.pygraph(io_data_type=np.float32)
    X, B = graph.tensor_like(x), graph.tensor_like(bias)
    Y = graph.add(name="add", a=B, b=X)  # the first input is broadcast: b gives the layout
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    assert X.get_stride() == [40, 2] and Y.get_stride() == [40, 2]
    out_parent = poison(np.empty((6, 20), np.float32))
    y = out_parent[::2, 3:15:2]  # written through the same view into another buffer
    with unchanged(parent, bias):
        graph.execute({X: x, B: bias, Y: y}, None)
    assert_close(y, values(x) + values(bias), tol_for("pointwise", y))
    outside = np.ones(out_parent.shape, bool)
    outside[::2, 3:15:2] = False
    assert np.isnan(out_parent[outside]).all(), "wrote outside the output view"


def test_channels_last_stays_channels_last_through_a_chain(rng):
    x = channels_last(rand(rng, (2, 5, 3, 4), np.float16))
    graph = cudnn.pygraph(io_data_type=np.float16, intermediate_data_type=np.float32,
                          compute_data_type=np.float32)
    X = graph.tensor_like(x)
    Y = graph.relu(name="relu", input=graph.mul(name="mul", a=X, b=0.5))
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    assert Y.get_stride() == X.get_stride() == [60, 1, 20, 5]
    y = poison(np.zeros_like(x))  # keeps x's layout, as torch.zeros_like does
    graph.execute({X: x, Y: y}, None)
    assert_close(y, np.maximum(values(x) * 0.5, 0), tol_for("pointwise", y))


def test_set_dim_after_tensor_like_lays_the_strides_out_again(rng):
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor_like(channels_last(rand(rng, (2, 3, 4, 5))))
    assert X.get_stride() == [60, 1, 15, 3]
    X.set_dim([1, 6, 2, 2])  # same layout (channels last) for the new dims
    assert X.get_stride() == [24, 1, 12, 6]
    X.set_dim([4, 5])  # another rank: packed
    assert X.get_stride() == [5, 1]
    Y = graph.tanh(input=X)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])  # builds: the strides fit the dims
    x = rand(rng, (4, 5))
    y = poison(np.empty((4, 5), np.float32))
    graph.execute({X: x, Y: y}, None)
    assert_close(y, np.tanh(values(x)), tol_for("pointwise", y))


def test_set_dim_keeps_strides_given_by_hand():
    graph = cudnn.pygraph(io_data_type=np.float32)
    T = graph.tensor(dim=[2, 3], stride=[1, 2])
    T.set_dim([3, 3])
    assert T.get_stride() == [1, 2]
    T2 = graph.tensor(dim=[2, 3]).set_stride([4, 1]).set_dim([2, 4])
    assert T2.get_stride() == [4, 1]


@pytest.mark.parametrize("strides", [[1, 1], [2, 2], [2, 1]])
def test_output_strides_that_overlap_are_refused_at_build(strides):
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor(name="X", dim=[2, 3])
    Y = graph.relu(name="relu", input=X)
    Y.set_output(True).set_stride(strides)
    with pytest.raises(cudnn.InvalidGraphError, match=r"'relu::OUT_0'.*output of relu "
                                                      r"'relu'.*overlap"):
        graph.build([cudnn.heur_mode.A])


def test_an_aliasing_input_is_fine_and_its_output_is_packed(rng):
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor(name="X", dim=[3, 5], stride=[1, 1])  # rows overlap: fine for an input
    Y = graph.identity(name="copy", input=X)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A])
    assert Y.get_stride() == [5, 1]
    base = rand(rng, (7,))
    xs = np.lib.stride_tricks.as_strided(base, shape=(3, 5), strides=(4, 4))  # rows overlap
    y = poison(np.empty((3, 5), np.float32))
    with unchanged(base):
        graph.execute({X: xs, Y: y}, None)
    assert_close(y, values(xs), 0)


def test_rotary_halves_written_in_place_interleave_without_clashing(rng):
    # cuDNN frontend's test_apply_rope: Y1 and Y2 are written over the two halves of each
    # row they read, x[..., :8] and x[..., 8:16]; their byte ranges meet, their bytes do
    # not, so neither output is refused and each reads its input as it was
    rows, half = 6, 8
    x = rand(rng, (2, rows, 4 * half))
    c, s = rand(rng, (1, rows, half)), rand(rng, (1, rows, half))
    x1, x2 = x[..., :half], x[..., half:2 * half]
    want1 = values(x1) * values(c) - values(x2) * values(s)
    want2 = values(x2) * values(c) + values(x1) * values(s)
    rest = x[..., 2 * half:].copy()
    graph = cudnn.pygraph(io_data_type=np.float32, intermediate_data_type=np.float32,
                          compute_data_type=np.float32)
    X1, X2 = graph.tensor_like(x1), graph.tensor_like(x2)
    C, S = graph.tensor_like(c), graph.tensor_like(s)
    Y1 = graph.sub(a=graph.mul(a=X1, b=C), b=graph.mul(a=X2, b=S))
    Y2 = graph.add(a=graph.mul(a=X2, b=C), b=graph.mul(a=X1, b=S))
    Y1.set_output(True)
    Y2.set_output(True)
    graph.build([cudnn.heur_mode.A])
    assert Y1.get_stride() == list(np.array(x1.strides) // 4)  # the input's, as cuDNN infers
    with unchanged(c, s):
        graph.execute({X1: x1, X2: x2, C: c, S: s, Y1: x1, Y2: x2}, None)
    assert_close(x1, want1, tol_for("pointwise", x1))
    assert_close(x2, want2, tol_for("pointwise", x2))
    assert np.array_equal(x[..., 2 * half:], rest)  # the bytes no output covers


def test_outputs_that_share_a_byte_are_still_refused(rng):
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor(name="X", dim=[4, 8])
    A = graph.relu(input=X, name="a")
    B = graph.tanh(input=X, name="b")
    A.set_output(True).set_stride([16, 1])
    B.set_output(True).set_stride([16, 1])
    graph.build([cudnn.heur_mode.A])
    buf = poison(np.empty(4 * 16 + 8, np.float32))
    a = np.lib.stride_tricks.as_strided(buf, shape=(4, 8), strides=(64, 4))
    b = np.lib.stride_tricks.as_strided(buf[7:], shape=(4, 8), strides=(64, 4))  # a[.., 7]
    with pytest.raises(cudnn.InvalidGraphError, match=r"outputs 'a::OUT_0' .* and "
                                                      r"'b::OUT_0' .* share memory"):
        graph.execute({X: rand(rng, (4, 8)), A: a, B: b}, None)
