"""cuDNN frontend compatibility: engines, knobs, plans, notes, serialization.

Plan indices count engine configs, as cuDNN frontend's do; serialize() after build_plans
carries the chosen plan, and deserialize() gives a graph that executes without a build.
"""
import numpy as np
import pytest

import hipdnn as cudnn
import references as ref
from compat_support import assert_close, channels_last, poison, rand, tol_for, unchanged, \
    values


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def _conv_relu_graph(x, w, handle=None):
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
    X = graph.tensor(name="X", dim=x.shape, stride=[s // x.itemsize for s in x.strides],
                     data_type=x.dtype)
    W = graph.tensor(name="W", dim=w.shape, stride=[s // w.itemsize for s in w.strides],
                     data_type=w.dtype)
    conv_output = graph.conv_fprop(image=X, weight=W, padding=[0, 1], stride=[2, 3],
                                   dilation=[1, 1])
    Y = graph.relu(name="relu", input=conv_output, lower_clip=0.5, upper_clip=0.55)
    Y.set_output(True)
    return graph, X, W, Y


def _expected(x, w):
    conv = ref.conv_fprop(values(x), values(w), [0, 1], [0, 1], [2, 3], [1, 1])
    return ref.relu(conv, lower_clip=0.5, upper_clip=0.55)


def _inputs(rng):
    x = channels_last(rand(rng, (2, 8, 9, 10), np.float16))
    w = channels_last(rand(rng, (6, 8, 3, 4), np.float16))
    return x, w


def test_execution_plan_creation_by_engine_and_knobs(rng):
    # cuDNN frontend's test_conv_relu_execution_plan_creation, as it is written there
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    graph.validate()
    graph.build_operation_graph()
    assert graph.get_engine_count() == len(cudnn.engines()) >= 1
    created = 0
    for engine in range(graph.get_engine_count()):
        try:
            knobs = graph.get_knobs_for_engine(engine)
        except RuntimeError:
            continue
        assert knobs == []  # no hipdnn engine offers knobs yet
        graph.create_execution_plan(engine, {})
        created += 1
        for knob in knobs:  # pragma: no cover - kept as cuDNN frontend writes it
            if knob.type == cudnn.knob_type.KERNEL_CFG:
                graph.create_execution_plan(engine, {cudnn.knob_type.KERNEL_CFG: 0})
    assert graph.get_execution_plan_count() == created
    graph.check_support()
    graph.build_plans()
    y = poison(cudnn.empty_like(Y))
    with unchanged(x, w):
        graph.execute({X: x, W: w, Y: y}, np.empty(graph.get_workspace_size(), np.uint8))
    assert_close(y, _expected(x, w), tol_for("conv_fprop", y))


def test_engine_and_knob_arguments_are_checked(rng):
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    with pytest.raises(cudnn.HipdnnError, match="build_operation_graph"):
        graph.get_engine_count()
    graph.build_operation_graph()
    with pytest.raises(IndexError, match="engine 99 out of range"):
        graph.get_knobs_for_engine(99)
    with pytest.raises(IndexError, match="out of range"):
        graph.create_execution_plan(-1, {})
    with pytest.raises(TypeError, match="knob value must be an int"):
        graph.create_execution_plan(0, {cudnn.knob_type.TILE_SIZE: 1.5})


def test_a_knob_the_engine_lacks_fails_when_its_config_is_made(rng):
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    graph.build_operation_graph()
    ref_engine = [e.name for e in cudnn.engines()].index("reference_cpu")
    with pytest.raises(cudnn.HipdnnError, match=r"engine 'reference_cpu' has no knob 12 "
                                                r"\(it has none\)"):
        graph.create_execution_plan(ref_engine, {cudnn.knob_type.KERNEL_CFG: 3})
    graph.create_execution_plan(ref_engine, {})
    assert graph.get_plan_name_at_index(0) == "reference_cpu"
    graph.build_plans()
    assert graph.get_engine_name() == "reference_cpu"
    y = poison(Y.empty())
    graph.execute_plan_at_index({X: x, W: w, Y: y}, None, 0)
    assert_close(y, _expected(x, w), tol_for("conv_fprop", y))


def test_behavior_notes_and_note_filters(rng):
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    assert graph.get_behavior_notes_for_plan_at_index(0) == []
    with pytest.raises(IndexError):
        graph.get_behavior_notes_for_plan_at_index(graph.get_execution_plan_count())
    graph.deselect_behavior_notes([cudnn.behavior_note.RUNTIME_COMPILATION])  # reference: none
    graph.deselect_numeric_notes([cudnn.numerical_note.TENSOR_CORE])
    graph.check_support()
    graph.select_behavior_notes([cudnn.behavior_note.SUPPORTS_CUDA_GRAPH_NATIVE_API])
    with pytest.raises(cudnn.cudnnGraphNotSupportedError, match="lacks a selected behavior"):
        graph.check_support()
    graph.select_behavior_notes([])
    graph.check_support()
    graph.build_plans()
    assert graph.get_behavior_notes() == []
    assert graph.get_plan_name_at_index(0) == graph.get_engine_name()


def test_deselect_engines_matches_parts_of_names(rng):
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    graph.build_operation_graph()
    graph.deselect_engines(["eng4_"])  # a cuDNN engine tag: matches no hipdnn engine
    graph.create_execution_plans([cudnn.heur_mode.A])
    graph.check_support()
    graph.deselect_engines(["_cpu"])  # part of "reference_cpu"
    graph.create_execution_plans([cudnn.heur_mode.A])
    with pytest.raises(cudnn.cudnnGraphNotSupportedError, match="deselected by the user"):
        graph.check_support()


def test_workspace_limit_leaves_plans_out(rng):
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A])
    graph.deselect_workspace_greater_than(0)
    with pytest.raises(cudnn.cudnnGraphNotSupportedError, match="B of workspace"):
        graph.build_plans()
    graph.deselect_workspace_greater_than(1 << 40)
    graph.build_plans()


def test_opensource_heur_mode_ranks_as_a(rng):
    x, w = _inputs(rng)
    graph, X, W, Y = _conv_relu_graph(x, w)
    graph.build([cudnn.heur_mode.OPENSOURCE])
    y = poison(Y.empty())
    graph.execute({X: x, W: w, Y: y}, None)
    assert_close(y, _expected(x, w), tol_for("conv_fprop", y))


# ---- serialization -----------------------------------------------------------------------

def _matmul_bias_graph(a, b, d, handle=None):
    # cuDNN frontend's 02_low_level_api serialization example
    graph = cudnn.pygraph(handle=handle, io_data_type=cudnn.data_type.HALF,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    a_cudnn, b_cudnn, d_cudnn = graph.tensor_like(a), graph.tensor_like(b), graph.tensor_like(d)
    a_cudnn.set_uid(0)
    b_cudnn.set_uid(1)
    d_cudnn.set_uid(2)
    ab = graph.matmul(name="mm", A=a_cudnn, B=b_cudnn)
    c_cudnn = graph.bias(name="bias", input=ab, bias=d_cudnn)
    c_cudnn.set_output(True).set_uid(3)
    return graph


def test_serialize_after_build_gives_a_graph_that_executes_without_a_build(rng):
    a, b, d = (rand(rng, s, np.float16) for s in ((4, 8, 16), (4, 16, 8), (1, 8, 8)))
    handle = cudnn.create_handle()
    graph = _matmul_bias_graph(a, b, d, handle)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    serialized_data = graph.serialize()
    assert serialized_data == graph.serialize()  # deterministic

    for with_handle in (False, True):  # deserialize(data) and deserialize(handle, data)
        newgraph = cudnn.pygraph()
        if with_handle:
            newgraph.deserialize(handle, serialized_data)
        else:
            newgraph.deserialize(serialized_data)
        assert newgraph.get_execution_plan_count() == 1
        c = poison(np.empty((4, 8, 8), np.float16))
        workspace = np.empty(newgraph.get_workspace_size(), np.uint8)
        with unchanged(a, b, d):
            newgraph.execute({0: a, 1: b, 2: d, 3: c}, workspace, handle=handle)
        expected = ref.matmul(values(a), values(b)) + values(d)
        assert_close(c, expected, max(tol_for("matmul", c), tol_for("pointwise", c)))
        assert newgraph.serialize() == serialized_data
        assert newgraph.key() == graph.key()


def test_serialize_before_a_plan_is_the_graph_only(rng):
    a, b, d = (rand(rng, s, np.float16) for s in ((2, 4, 8), (2, 8, 4), (1, 4, 4)))
    graph = _matmul_bias_graph(a, b, d)
    graph_only = graph.serialize()
    key = graph.key()
    graph.build([cudnn.heur_mode.A])
    with_plan = graph.serialize()
    assert with_plan != graph_only and with_plan.endswith(graph_only)
    assert graph.key() == key  # the key is the graph's, plan or not
    g2 = cudnn.pygraph()
    g2.deserialize(graph_only)
    assert g2.get_execution_plan_count() == 0  # needs a build
    with pytest.raises(cudnn.HipdnnError, match="build_plans"):
        g2.execute({}, None)
    g2.build([cudnn.heur_mode.A])
    c = poison(g2.query_tensor_attributes_of_uid(3).empty())
    g2.execute({0: a, 1: b, 2: d, 3: c}, None)
    expected = ref.matmul(values(a), values(b)) + values(d)
    assert_close(c, expected, max(tol_for("matmul", c), tol_for("pointwise", c)))


def test_corrupted_plan_bytes_are_refused_cleanly(rng):
    a, b, d = (rand(rng, s, np.float16) for s in ((2, 4, 8), (2, 8, 4), (1, 4, 4)))
    graph = _matmul_bias_graph(a, b, d)
    graph.build([cudnn.heur_mode.A])
    data = graph.serialize()
    for n in (0, 4, 8, 12, 20, 28, 35, len(data) - 1):
        with pytest.raises(cudnn.InvalidGraphError, match="deserialize"):
            cudnn.pygraph().deserialize(data[:n])
    with pytest.raises(cudnn.InvalidGraphError, match="version 7"):
        cudnn.pygraph().deserialize(data[:8] + (7).to_bytes(4, "little") + data[12:])
    with pytest.raises(cudnn.InvalidGraphError, match="at most 64"):
        cudnn.pygraph().deserialize(data[:20] + (1000).to_bytes(4, "little") + data[24:])
    other_engine = data[:12] + (12345).to_bytes(8, "little") + data[20:]
    with pytest.raises(cudnn.cudnnGraphNotSupportedError, match="engine id 12345"):
        cudnn.pygraph().deserialize(other_engine)
    with pytest.raises(TypeError, match="handle must be a hipdnn.Handle"):
        cudnn.pygraph().deserialize(123, data)
