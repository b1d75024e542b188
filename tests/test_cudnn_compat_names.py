"""cuDNN frontend compatibility: names.

The enums, the exception and the op spellings cuDNN frontend code uses, and the default
node and tensor names it gives ("<node index>::OUT_0" and so on).
"""
import numpy as np
import pytest

import hipdnn as cudnn
import references as ref
from compat_support import assert_close, poison, rand, tol_for, unchanged, values


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


ENUMS = {
    "norm_forward_phase": ["NOT_SET", "INFERENCE", "TRAINING"],
    "reduction_mode": ["NOT_SET", "ADD", "MUL", "MIN", "MAX", "AMAX", "AVG", "NORM1", "NORM2",
                       "MUL_NO_ZEROS"],
    "diagonal_alignment": ["TOP_LEFT", "BOTTOM_RIGHT"],
    "attention_implementation": ["AUTO", "COMPOSITE", "UNIFIED"],
    "behavior_note": ["NOT_SET", "RUNTIME_COMPILATION", "REQUIRES_FILTER_INT8x32_REORDER",
                      "REQUIRES_BIAS_INT8x32_REORDER", "SUPPORTS_CUDA_GRAPH_NATIVE_API",
                      "CUBLASLT_DEPENDENCY"],
    "numerical_note": ["NOT_SET", "TENSOR_CORE", "DOWN_CONVERT_INPUTS",
                       "REDUCED_PRECISION_REDUCTION", "FFT", "NONDETERMINISTIC", "WINOGRAD",
                       "WINOGRAD_TILE_4x4", "WINOGRAD_TILE_6x6", "WINOGRAD_TILE_13x13",
                       "STRICT_NAN_PROP"],
    "heur_mode": ["A", "B", "FALLBACK", "OPENSOURCE"],
    "build_plan_policy": ["HEURISTICS_CHOICE", "ALL"],
}


@pytest.mark.parametrize("enum", sorted(ENUMS))
def test_enums_carry_cudnn_frontend_names(enum):
    members = [m.name for m in getattr(cudnn, enum)]
    assert members == ENUMS[enum]
    assert getattr(cudnn, enum).__doc__


def test_knob_types_and_knob_objects():
    assert cudnn.knob_type.KERNEL_CFG.name == "KERNEL_CFG" and cudnn.knob_type.NOT_SET == 0
    k = cudnn.knob(cudnn.knob_type.TILE_SIZE, 8, 1, 1)
    assert (k.type, k.max_value, k.min_value, k.stride) == (cudnn.knob_type.TILE_SIZE, 8, 1, 1)


def test_graph_not_supported_has_cudnn_frontends_name():
    assert cudnn.cudnnGraphNotSupportedError is cudnn.GraphNotSupportedError
    assert issubclass(cudnn.cudnnGraphNotSupportedError, RuntimeError)
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
    graph.relu(input=graph.tensor(dim=[2])).set_output(True)
    graph.deselect_engines([e.name for e in cudnn.engines()])
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    with pytest.raises(cudnn.cudnnGraphNotSupportedError):
        graph.check_support()


def test_tensor_class_is_cudnn_tensor():
    graph = cudnn.pygraph()
    assert isinstance(graph.tensor(dim=[1]), cudnn.tensor)


# ---- op spellings ------------------------------------------------------------------------

def test_bias_scale_and_leaky_relu(rng):
    x, s, b = rand(rng, (2, 8, 3, 3)), rand(rng, (1, 8, 1, 1)), rand(rng, (1, 8, 1, 1))
    graph = cudnn.pygraph(io_data_type=np.float32, intermediate_data_type=np.float32,
                          compute_data_type=np.float32)
    X, S, B = graph.tensor_like(x), graph.tensor_like(s), graph.tensor_like(b)
    scaled = graph.scale(name="scale", input=X, scale=S)
    biased = graph.bias(name="bias", input=scaled, bias=B)
    Y = graph.leaky_relu(name="relu", input=biased, negative_slope=0.01)
    Y.set_output(True)
    graph.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    y = poison(np.empty((2, 8, 3, 3), np.float32))
    with unchanged(x, s, b):
        graph.execute({X: x, S: s, B: b, Y: y}, np.empty(graph.get_workspace_size(), np.uint8))
    expected = ref.relu(values(x) * values(s) + values(b), lower_clip_slope=0.01)
    assert_close(y, expected, tol_for("pointwise", y))
    with pytest.raises(TypeError, match="negative_slope"):
        graph.leaky_relu(input=X, negative_slope=None)


@pytest.mark.parametrize("spelling", ["input0/input1", "a/b", "positional"])
def test_max_and_min_take_input0_input1_or_a_b(rng, spelling):
    a, b = rand(rng, (4, 6)), rand(rng, (4, 6))
    graph = cudnn.pygraph(io_data_type=np.float32)
    A, B = graph.tensor_like(a), graph.tensor_like(b)
    if spelling == "input0/input1":
        hi, lo = graph.max(input0=A, input1=B), graph.min(input0=A, input1=B)
    elif spelling == "a/b":
        hi, lo = graph.max(a=A, b=B), graph.min(a=A, b=B)
    else:
        hi, lo = graph.max(A, B), graph.min(A, B)
    hi.set_output(True)
    lo.set_output(True)
    graph.build([cudnn.heur_mode.A])
    y_hi, y_lo = poison(np.empty((4, 6), np.float32)), poison(np.empty((4, 6), np.float32))
    graph.execute({A: a, B: b, hi: y_hi, lo: y_lo}, None)
    assert_close(y_hi, ref.ieee_maximum(values(a), values(b)), 0)
    assert_close(y_lo, ref.ieee_minimum(values(a), values(b)), 0)
    with pytest.raises(TypeError, match="not both"):
        graph.max(input0=A, b=B)


# ---- default names -----------------------------------------------------------------------

def test_default_node_and_tensor_names_follow_cudnn_frontend():
    graph = cudnn.pygraph(io_data_type=np.float32)
    X = graph.tensor(dim=[1, 4, 5, 5])
    W = graph.tensor(dim=[2, 4, 3, 3])
    conv = graph.conv_fprop(image=X, weight=W, padding=[1, 1])          # node 0
    Bm = graph.tensor(dim=[1, 2, 1, 1])
    added = graph.add(a=conv, b=Bm)                                      # node 1
    A = graph.tensor(dim=[3, 5])
    Bmat = graph.tensor(dim=[5, 2])
    prod = graph.matmul(A=A, B=Bmat)                                     # node 2
    act = graph.relu(input=added, name="")                               # node 3: "" = unset
    assert conv.get_name() == "0::Y"
    assert added.get_name() == "1::OUT_0" and Bm.get_name() == "1::IN_1"
    assert A.get_name() == "2::A" and Bmat.get_name() == "2::B" and prod.get_name() == "2::C"
    assert act.get_name() == "3::OUT_0"
    assert X.get_name() == "" and W.get_name() == ""  # conv names no inputs
    named = graph.tensor(name="keep", dim=[3, 5])
    graph.sigmoid(input=named, name="sig")
    assert named.get_name() == "keep"  # a given name is kept


def test_uid_minus_one_and_empty_name_mean_unset():
    graph = cudnn.pygraph()
    t = graph.tensor(dim=[2], stride=[1], data_type=cudnn.data_type.FLOAT, uid=-1, name="")
    assert t.get_uid() > 0 and t.get_name() == ""
