"""cuDNN frontend compatibility: the ``cudnn.Graph`` wrapper and the ``graph`` / ``jit`` /
``graph_cache`` helpers, as cuDNN frontend's notebooks use them (NumPy arrays in place of
torch tensors); hipdnn.Graph's own use keeps working beside them.
"""
import numpy as np
import pytest

import hipdnn as cudnn
import references as ref
from compat_support import assert_close, channels_last, poison, rand, tol_for, unchanged, \
    values
from tolerances import graph_tolerance


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


@pytest.fixture
def conv_inputs(rng):
    X = channels_last(rand(rng, (2, 8, 6, 6), np.float16))
    W = channels_last(rand(rng, (4, 8, 3, 3), np.float16))
    return X, W


def conv_expected(X, W):
    return ref.conv_fprop(values(X), values(W), [1, 1], [1, 1], [1, 1], [1, 1])


CONV_FP16 = graph_tolerance(["conv_fprop"], "fp16")


def test_inputs_and_outputs_named_up_front(conv_inputs):
    X, W = conv_inputs
    handle = cudnn.create_handle()
    with cudnn.Graph(inputs=["conv2d::image", "conv2d::weight"], outputs=["conv_out"]) as graph:
        Y = graph.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1],
                             dilation=[1, 1], compute_data_type=cudnn.data_type.FLOAT,
                             name="conv2d")
        Y.set_output(True).set_data_type(cudnn.data_type.HALF).set_name("conv_out")
    with unchanged(X, W):
        Y_out = graph(X, W, handle=handle)
    assert Y_out.dtype == np.float16 and Y_out.shape == (2, 4, 6, 6)
    assert_close(Y_out, conv_expected(X, W), CONV_FP16)
    assert [t.get_name() for t in graph.outputs] == ["conv_out"]


def test_set_io_tuples_after_the_block(conv_inputs):
    X, W = conv_inputs
    with cudnn.Graph(name="graph_0", io_data_type=cudnn.data_type.HALF,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        Y = graph.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1],
                             dilation=[1, 1], name="conv2d")
        Y.set_output(True).set_name("conv_out")
    graph.set_io_tuples(["conv2d::image", "conv2d::weight"], ["conv_out"])
    assert_close(graph(X, W), conv_expected(X, W), CONV_FP16)
    # other ways of naming them: tensors, arrays, uids; reversed order
    graph.set_io_tuples([W, X], [Y])
    assert_close(graph(W, X), conv_expected(X, W), CONV_FP16)
    graph.set_io_tuples([graph.pygraph.tensors()[0].get_uid(), "conv2d::weight"], [Y.get_uid()])
    assert_close(graph(X, W), conv_expected(X, W), CONV_FP16)


def test_positional_and_default_node_names(conv_inputs):
    X, W = conv_inputs
    with cudnn.Graph(io_data_type=cudnn.data_type.HALF,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        Y = graph.conv_fprop(X, weight=W, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
        Y.set_output(True)
    assert Y.get_name() == "conv_fprop.0::Y"
    graph.set_io_tuples(["conv_fprop.0::0", "conv_fprop.0::weight"], ["conv_fprop.0::Y"])
    assert_close(graph(X, W), conv_expected(X, W), CONV_FP16)


def test_call_with_a_dict(conv_inputs):
    X, W = conv_inputs
    with cudnn.Graph(io_data_type=cudnn.data_type.HALF,
                     compute_data_type=cudnn.data_type.FLOAT) as graph:
        Y = graph.conv_fprop(image=X, weight=W, padding=[1, 1], stride=[1, 1],
                             dilation=[1, 1], name="conv2d")
        Y.set_output(True)
    Y_out = poison(np.zeros((2, 6, 6, 4), np.float16).transpose(0, 3, 1, 2))
    output = graph({"conv2d::image": X, "conv2d::weight": W, "conv2d::Y": Y_out})
    assert output["conv2d::Y"] is Y_out
    assert_close(Y_out, conv_expected(X, W), CONV_FP16)
    output = graph({"conv2d::image": X, "conv2d::weight": W})  # the output is allocated
    assert_close(output["conv2d::Y"], conv_expected(X, W), CONV_FP16)
    with pytest.raises(ValueError, match="no array for input.*conv2d::weight"):
        graph({"conv2d::image": X})


def test_matmul_bias_named_by_node_keywords(rng):
    # cuDNN frontend's 10_matrix_multiplication
    a, b, d = (rand(rng, s, np.float16) for s in ((4, 8, 16), (4, 16, 8), (1, 8, 8)))
    with cudnn.Graph(io_data_type=cudnn.data_type.HALF,
                     intermediate_data_type=cudnn.data_type.FLOAT,
                     compute_data_type=cudnn.data_type.FLOAT,
                     inputs=["mm::A", "mm::B", "bias::bias"], outputs=["bias::OUT_0"]) as graph:
        AB = graph.matmul(name="mm", A=a, B=b)
        C = graph.bias(name="bias", input=AB, bias=d)
        C.set_output(True)
    with unchanged(a, b, d):
        c = graph(a, b, d)
    assert c.dtype == np.float16
    expected = ref.matmul(values(a), values(b)) + values(d)
    assert_close(c, expected, graph_tolerance(["matmul", "pointwise"], "fp16"))


def test_fp16_chain_returns_fp16(rng):
    a = rand(rng, (3, 5), np.float16)
    with cudnn.Graph() as fg:  # no io_data_type: the inputs' type
        fg.relu(fg.add(a, a))
    out = fg(a)
    assert out.dtype == np.float16
    assert_close(out, np.maximum(2 * values(a), 0), tol_for("pointwise", out))


def test_mixed_input_types_leave_outputs_to_inference(rng):
    a, b = rand(rng, (3, 5), np.float16), rand(rng, (3, 5), np.float32)
    with cudnn.Graph() as fg:
        fg.add(a, b)
    out = fg(a, b)
    assert out.dtype == np.float16  # the first input's, as the backend infers it
    assert_close(out, values(a) + values(b), tol_for("pointwise", out))


def test_hipdnn_style_still_works(rng):
    x0, w0, b0 = rand(rng, (2, 3, 5, 5)), rand(rng, (4, 3, 3, 3)), rand(rng, (1, 4, 1, 1))
    with cudnn.Graph() as fg:
        y = fg.relu(fg.add(fg.conv_fprop(x0, w0, padding=[1, 1]), b0))
        fg.output(y)
    x1 = rand(rng, (2, 3, 5, 5))
    out = fg(x1, w0, b0)  # order of first use, no set_io_tuples
    conv = ref.conv_fprop(values(x1), values(w0), [1, 1], [1, 1], [1, 1], [1, 1])
    assert_close(out, np.maximum(conv + values(b0), 0),
                 graph_tolerance(["conv_fprop", "pointwise"], "fp32"))


def test_wrapper_errors(rng, conv_inputs):
    X, W = conv_inputs
    with pytest.raises(ValueError, match="inputs must be a list"):
        cudnn.Graph(inputs="conv::image")
    with cudnn.Graph(io_data_type=cudnn.data_type.HALF) as graph:
        Y = graph.conv_fprop(image=X, weight=W, padding=[1, 1], name="conv")
        Y.set_output(True)
    with pytest.raises(ValueError, match="input at index 0 .* is not a tensor"):
        graph.set_io_tuples(["conv::nothing"], ["conv::Y"])
    with pytest.raises(ValueError, match="'conv::weight' is a non-virtual tensor but is "
                                         "neither"):
        graph.set_io_tuples(["conv::image"], ["conv::Y"])
    with pytest.raises(ValueError, match="given twice"):
        graph.set_io_tuples(["conv::image", X], ["conv::Y"])
    graph.set_io_tuples(["conv::image", "conv::weight"], ["conv::Y"])
    with pytest.raises(TypeError, match="takes 2 input array"):
        graph(X)
    with cudnn.Graph() as twice:
        twice.relu(X, name="r")
        with pytest.raises(ValueError, match="node name 'r' is used twice"):
            twice.relu(X, name="r")
    with cudnn.Graph(workspace_alloc=False) as nows:
        nows.tanh(rand(rng, (2, 2)))
    with pytest.raises(ValueError, match="workspace_alloc=False"):
        nows()
    out = nows(workspace=np.empty(nows.get_workspace_size(), np.uint8))
    assert out.shape == (2, 2)


# ---- graph / jit / graph_cache -------------------------------------------------------------

def test_jit_graph_and_graph_cache(rng):
    a, b, d = (rand(rng, s, np.float16) for s in ((2, 8, 16), (2, 16, 4), (1, 8, 4)))
    handle = cudnn.create_handle()
    built = []

    def matmul_cache_key(handle, a, b, bias):
        return (tuple(a.shape), tuple(b.shape), tuple(a.strides), tuple(b.strides), a.dtype,
                b.dtype)

    @cudnn.jit(heur_modes=[cudnn.heur_mode.A, cudnn.heur_mode.B])
    @cudnn.graph_cache(key_fn=matmul_cache_key)
    def create_matmul_bias_graph(handle, a, b, bias):
        with cudnn.graph(handle) as (g, _):
            a_cudnn = g.tensor_like(a)
            b_cudnn = g.tensor_like(b)
            bias_cudnn = g.tensor_like(bias)
            c_cudnn = g.matmul(name="matmul", A=a_cudnn, B=b_cudnn)
            out = g.bias(name="bias", input=c_cudnn, bias=bias_cudnn)
            out.set_output(True).set_data_type(cudnn.data_type.HALF)
        built.append(g)
        return g, [a_cudnn, b_cudnn, bias_cudnn, out]

    g, uids = create_matmul_bias_graph(handle, a, b, d)
    assert g.io_data_type == cudnn.data_type.HALF and g.name == "cudnn_graph"
    a_uid, b_uid, bias_uid, out_uid = uids
    c = poison(np.empty((2, 8, 4), np.float16))
    g.execute({a_uid: a, b_uid: b, bias_uid: d, out_uid: c},
              np.empty(g.get_workspace_size(), np.uint8))
    expected = ref.matmul(values(a), values(b)) + values(d)
    assert_close(c, expected, graph_tolerance(["matmul", "pointwise"], "fp16"))
    g2, uids2 = create_matmul_bias_graph(handle, a, b, d)  # same key: cached, not rebuilt
    assert g2 is g and uids2 == uids and len(built) == 1
    create_matmul_bias_graph(handle, rand(rng, (1, 8, 16), np.float16), b, d)  # new key
    assert len(built) == 2


def test_graph_cache_evicts_the_oldest():
    calls = []

    @cudnn.graph_cache(key_fn=lambda n: n, maxsize=2)
    def make(n):
        calls.append(n)
        return n

    for n in (1, 2, 1, 3, 1):
        make(n)
    assert calls == [1, 2, 3, 1]  # 3 evicted 1, so 1 was made again


def test_jit_wants_a_graph_and_tensors():
    @cudnn.jit()
    def bad():
        return 42

    with pytest.raises(TypeError, match="must return \\(graph, \\[tensors\\]\\)"):
        bad()


class HostTensor:
    """Another library's host tensor (a torch CPU tensor): DLPack only, no NumPy
    interface."""

    def __init__(self, array):
        self._a = array

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_a_host_tensor_is_a_scalar_input_of_the_wrapper(rng):
    """cuDNN frontend's notebook 20: `epsilon=eps_cpu` (a one-element torch CPU tensor)
    given to `cudnn.Graph`'s layernorm and to its call is a pass-by-value input."""
    x = rand(rng, (8, 16, 1, 1), np.float32)
    scale, bias = rand(rng, (1, 16, 1, 1), np.float32), rand(rng, (1, 16, 1, 1), np.float32)
    eps = HostTensor(np.full((1, 1, 1, 1), 1e-3, np.float32))
    before = [a.copy() for a in (x, scale, bias)]
    with cudnn.Graph(io_data_type=cudnn.data_type.FLOAT,
                     inputs=["ln::input", "ln::scale", "ln::bias", "ln::epsilon"],
                     outputs=["ln::Y", "ln::MEAN", "ln::INV_VARIANCE"]) as graph:
        y, mean, inv = graph.layernorm(name="ln", input=x, scale=scale, bias=bias, epsilon=eps,
                                       norm_forward_phase=cudnn.norm_forward_phase.TRAINING)
        for t in (y, mean, inv):
            t.set_output(True).set_data_type(cudnn.data_type.FLOAT)
    assert graph.pygraph.query_tensor_attributes_of_uid(
        graph.inputs[3].get_uid()).get_is_pass_by_value()
    for e in (1e-3, 0.5):  # the value given at each call is the one used
        got = graph(x, scale, bias, HostTensor(np.full((1, 1, 1, 1), e, np.float32)))
        want = ref.norm_forward("layer", x, scale, bias, e)
        tol = graph_tolerance(["layernorm"], "fp32")
        for g, w, name in zip(got, want, ("y", "mean", "inv_variance")):
            assert_close(g, w, tol, name)
    for a, b in zip((x, scale, bias), before):
        np.testing.assert_array_equal(a, b)
