"""cuDNN frontend compatibility: version gates, handles and streams.

Written as cuDNN frontend's Python tests are, with ``import hipdnn as cudnn`` and NumPy
arrays in place of torch tensors.
"""
import numpy as np
import pytest

import hipdnn as cudnn
from compat_support import assert_close, poison, rand, tol_for, unchanged, values


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def _relu_graph(handle, shape=(2, 3, 4)):
    graph = cudnn.pygraph(handle=handle, io_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    X = graph.tensor(name="X", dim=list(shape))
    Y = graph.relu(name="relu", input=X)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    return graph, X, Y


# ---- versions ---------------------------------------------------------------------------

def test_backend_version_is_the_cudnn_feature_level_as_an_int():
    v = cudnn.backend_version()
    assert isinstance(v, int) and v == 90500
    assert cudnn.backend_version_string() == "9.5.0"
    major, minor, patch = (int(p) for p in cudnn.backend_version_string().split("."))
    assert v == major * 10000 + minor * 100 + patch


def test_version_gates_take_the_branches_hipdnn_supports():
    # gates cuDNN frontend's tests put on what hipdnn has (conv with pre/post padding,
    # broadcast matmul, int8 conv descriptors) pass; those on what it lacks skip
    def version(text):  # what LooseVersion compares: the numbers in order
        return tuple(int(p) for p in text.split("."))

    s = version(cudnn.backend_version_string())
    assert not s < version("9.5.0") and not s < version("8.9.6") and not s < version("8.6")
    assert s < version("9.10") and cudnn.backend_version() < 91200  # kernel cache, wrapper


def test_hipdnn_keeps_its_own_version_apart():
    assert cudnn.__version__ == cudnn.version()
    assert cudnn.__version__ != cudnn.backend_version_string()


# ---- handles and streams ----------------------------------------------------------------

def test_create_set_get_stream_destroy():
    handle = cudnn.create_handle()
    assert cudnn.get_stream(handle) == 0
    cudnn.set_stream(handle=handle, stream=0)
    assert cudnn.get_stream(handle) == 0
    cudnn.destroy_handle(handle)
    with pytest.raises(ValueError, match="destroyed"):
        cudnn.get_stream(handle)
    with pytest.raises(ValueError, match="destroyed"):
        cudnn.set_stream(handle=handle, stream=0)
    with pytest.raises(ValueError, match="destroyed"):
        cudnn.destroy_handle(handle)


def test_handle_arguments_are_checked():
    with pytest.raises(TypeError, match="create_handle"):
        cudnn.set_stream(handle=12345, stream=0)
    with pytest.raises(TypeError, match="stream must be an int"):
        cudnn.set_stream(handle=cudnn.create_handle(), stream="default")
    with pytest.raises(TypeError, match="handle must be a hipdnn.Handle"):
        cudnn.pygraph(handle=0)


def test_graph_built_on_one_handle_executes_on_another(rng):
    build_handle, run_handle = cudnn.create_handle(), cudnn.create_handle()
    graph, X, Y = _relu_graph(build_handle)
    x = rand(rng, (2, 3, 4))
    for handle in (run_handle, build_handle, None):
        y = poison(np.empty((2, 3, 4), np.float32))
        with unchanged(x):
            graph.execute({X: x, Y: y}, np.empty(graph.get_workspace_size(), np.uint8),
                          handle=handle)
        assert_close(y, np.maximum(values(x), 0), tol_for("pointwise", y))
    cudnn.destroy_handle(run_handle)
    with pytest.raises(ValueError, match="destroyed"):
        graph.execute({X: x, Y: np.empty((2, 3, 4), np.float32)}, None, handle=run_handle)


def test_plan_outlives_the_handle_it_was_built_on(rng):
    handle = cudnn.create_handle()
    graph, X, Y = _relu_graph(handle)
    cudnn.destroy_handle(handle)  # the plan holds its own reference
    x = rand(rng, (2, 3, 4))
    y = poison(np.empty((2, 3, 4), np.float32))
    graph.execute({X: x, Y: y}, None, handle=cudnn.create_handle())
    assert_close(y, np.maximum(values(x), 0), tol_for("pointwise", y))


def test_destroyed_handle_cannot_start_a_graph():
    handle = cudnn.create_handle()
    cudnn.destroy_handle(handle)
    graph = cudnn.pygraph(handle=handle, io_data_type=cudnn.data_type.FLOAT)
    graph.relu(input=graph.tensor(dim=[2])).set_output(True)
    with pytest.raises(ValueError, match="destroyed"):
        graph.build()
