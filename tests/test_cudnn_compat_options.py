"""cuDNN frontend compatibility: the pygraph keywords hipdnn takes without acting on them.

cuDNN frontend's tests build graphs with ``sm_version=``, ``kernel_cache=``,
``is_override_shape_enabled=`` and the like; hipdnn takes every keyword its pygraph
constructor has, checks its type (an error names the keyword), and gives the same results
as without it.  What it cannot do says NotImplementedError, naming the feature: running a
plan with other shapes (execute's ``override_shapes``), writing a kernel cache out.
"""
import numpy as np
import pytest

import hipdnn as cudnn
from compat_support import assert_close, poison, rand, tol_for, unchanged, values

FRONTEND_KEYWORDS = dict(sm_count=132, sm_version=90, is_dynamic_shape_enabled=True,
                         is_override_shape_enabled=True)


@pytest.fixture
def rng(request):
    return np.random.default_rng(abs(hash(request.node.name)) % 2 ** 32)


def relu_add(rng, **keywords):
    """y = relu(a) + b on a graph made with `keywords`, built, run and checked; the graph
    and y."""
    a, b = rand(rng, (3, 5)), rand(rng, (3, 5))
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT,
                          intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT,
                          handle=cudnn.create_handle(), **keywords)
    ta, tb = graph.tensor_like(a), graph.tensor_like(b)
    y = graph.add(a=graph.relu(input=ta), b=tb)
    y.set_output(True)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    graph.check_support()
    graph.build_plans()
    out = poison(np.empty((3, 5), np.float32))
    with unchanged(a, b):
        graph.execute({ta: a, tb: b, y: out}, np.empty(graph.get_workspace_size(), np.uint8))
    assert_close(out, np.maximum(values(a), 0) + values(b), tol_for("pointwise", out))
    return graph, out


def test_every_constructor_keyword_of_cudnn_frontend_is_taken(rng):
    graph, _ = relu_add(rng, kernel_cache=cudnn.create_kernel_cache(),
                        device_property=cudnn.create_device_properties(0), **FRONTEND_KEYWORDS)
    options = graph.frontend_options
    assert options["sm_version"] == 90 and options["is_override_shape_enabled"] is True


def test_the_keywords_change_no_result():
    # the same graph and inputs with and without them: the same engine, bit-identical
    # outputs
    plain, with_keywords = (relu_add(np.random.default_rng(7), **keywords)
                            for keywords in ({}, FRONTEND_KEYWORDS))
    assert plain[0].get_engine_name() == with_keywords[0].get_engine_name()
    assert np.array_equal(plain[1], with_keywords[1])


@pytest.mark.parametrize("keyword,value,error", [
    ("sm_version", "90", TypeError), ("sm_count", 1.5, TypeError), ("sm_count", 0, ValueError),
    ("kernel_cache", object(), TypeError), ("device_property", 0, TypeError),
    ("is_dynamic_shape_enabled", 1, TypeError), ("is_override_shape_enabled", None, TypeError),
])
def test_a_wrong_keyword_value_is_refused_naming_it(keyword, value, error):
    with pytest.raises(error, match=keyword):
        cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT, **{keyword: value})


def test_execute_with_other_shapes_is_not_implemented_and_says_so(rng):
    graph, _ = relu_add(rng, is_override_shape_enabled=True)
    ta, tb, y = [t for t in graph._tensors if not t.get_is_virtual()]
    a, b, out = (np.ones((3, 5), np.float32) for _ in range(3))
    for keyword in ("override_uids", "override_shapes", "override_strides"):
        with pytest.raises(NotImplementedError, match=keyword):
            graph.execute({ta: a, tb: b, y: out}, None, **{keyword: [[3, 5]]})


def test_kernel_cache_holds_nothing_to_write_out():
    cache = cudnn.create_kernel_cache()
    with pytest.raises(NotImplementedError, match="serialize"):
        cache.serialize()
    with pytest.raises(NotImplementedError, match="deserialize"):
        cache.deserialize("{}")


def test_device_properties_round_trip_through_json():
    props = cudnn.create_device_properties(0)
    again = cudnn.create_device_properties(props.serialize())
    assert again.serialize() == props.serialize() and again.device_id == 0
    with pytest.raises(ValueError, match="create_device_properties"):
        cudnn.create_device_properties("not json")
    with pytest.raises(TypeError, match="create_device_properties"):
        cudnn.create_device_properties(-1)


@pytest.mark.parametrize("feature,value", [
    ("score_mod", lambda g, s: s), ("score_max", object()), ("score_sum_exp", object()),
    ("block_mask", object()), ("sink_token", object()),
])
def test_attention_features_hipdnn_lacks_are_not_implemented_naming_them(feature, value):
    # cuDNN validates such a graph and its frontend's tests (test_flexible_sdpa) call
    # validate() and build_operation_graph() outside the try that skips on
    # cudnnGraphNotSupportedError around create_execution_plans() and check_support(): a
    # feature missing here is that error (and a NotImplementedError), raised there, not a
    # wrong argument raised by sdpa()
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF)
    q = graph.tensor(name="q", dim=[1, 1, 4, 8])
    o, _ = graph.sdpa(q, q, q, generate_stats=False, name="attn", **{feature: value})
    o.set_output(True)
    graph.validate()
    graph.build_operation_graph()
    for step in (lambda: graph.create_execution_plans([cudnn.heur_mode.A]), graph.check_support):
        with pytest.raises(cudnn.cudnnGraphNotSupportedError,
                           match=f"sdpa 'attn': sdpa: {feature} is not supported") as e:
            step()
        assert isinstance(e.value, NotImplementedError)


def test_a_ragged_offset_needs_a_padding_mask_and_is_kept_on_the_tensor():
    # test_mhas's THD layouts: set_ragged_offset / get_ragged_offset; a ragged sdpa
    # without use_padding_mask is refused at validate() naming the tensor (the samples end
    # at seq_len_q / seq_len_kv); tests/test_sdpa_ragged.py runs them
    graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF)
    q = graph.tensor(name="q", dim=[2, 1, 4, 8])
    offsets = graph.tensor(name="q_offsets", dim=[3, 1, 1, 1], data_type=cudnn.data_type.INT32)
    assert q.set_ragged_offset(offsets) is q and q.get_ragged_offset() is offsets
    o, _ = graph.sdpa(q, q, q, generate_stats=False)
    o.set_output(True)
    with pytest.raises(cudnn.InvalidGraphError,
                       match=r"q 'q' is ragged but use_padding_mask is not set"):
        graph.validate()
    with pytest.raises(TypeError, match="set_ragged_offset: expected a tensor"):
        q.set_ragged_offset([0, 4, 8])


@pytest.mark.parametrize("name,printed", [("FP8_E4M3", "fp8_e4m3"), ("FP8_E5M2", "fp8_e5m2"),
                                          ("FP8_E8M0", "fp8_e8m0"), ("FP4_E2M1", "fp4_e2m1")])
def test_fp8_and_fp4_are_named_and_declined_at_build_with_the_reason(name, printed):
    # cuDNN's values; a graph using one fails at check_support() naming the type, never
    # with AttributeError or at execute
    dt = getattr(cudnn.data_type, name)
    assert int(dt) == {"FP8_E4M3": 12, "FP8_E5M2": 13, "FP8_E8M0": 15, "FP4_E2M1": 16}[name]
    graph = cudnn.pygraph(io_data_type=dt, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT)
    a = graph.tensor(name="a", dim=[4, 8], stride=[8, 1], data_type=dt)
    b = graph.tensor(name="b", dim=[8, 4], stride=[4, 1], data_type=dt)
    graph.matmul(a, b, name="mm").set_output(True).set_data_type(cudnn.data_type.FLOAT)
    graph.validate()
    graph.build_operation_graph()
    graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    with pytest.raises(cudnn.cudnnGraphNotSupportedError, match=f"{printed} not supported"):
        graph.check_support()


@pytest.mark.parametrize("name", ["GemmSwigluSm100", "gemm_amax_wrapper_sm100",
                                  "grouped_gemm_glu_hadamard_wrapper_sm100",
                                  "SdpafwdSm100D256", "grouped_gemm", "NSA"])
def test_cudnn_kernel_apis_for_sm100_raise_import_error_naming_them(name):
    # cuDNN frontend loads these lazily and raises ImportError without their optional
    # dependencies; its tests import them in a try that skips on ImportError
    with pytest.raises(ImportError, match=f"{name} is one of cuDNN frontend's CuTe DSL"):
        exec(f"from hipdnn import {name}", {})  # `cudnn` is hipdnn in that code
    with pytest.raises(ImportError, match=name):
        getattr(cudnn, name)


def test_other_missing_names_stay_attribute_errors():
    assert not hasattr(cudnn, "no_such_thing")
    with pytest.raises(AttributeError, match="'hipdnn' has no attribute 'group_norm_sm90'"):
        cudnn.group_norm_sm90


def test_datatypes_helpers_that_cudnn_frontend_test_utilities_import():
    import importlib.util
    from hipdnn.datatypes import (_convert_to_cutlass_data_type, _torch_to_cudnn_data_type,
                                  is_cutlass_available, is_torch_available)
    assert _convert_to_cutlass_data_type(object(), interpret_uint8_as_fp4x2=True) is None
    assert is_torch_available() == (importlib.util.find_spec("torch") is not None)
    assert is_cutlass_available() == (importlib.util.find_spec("cutlass") is not None)
    assert _torch_to_cudnn_data_type(cudnn.data_type.HALF) is None  # not a torch dtype
    if is_torch_available():  # the GPU machine has torch, this one does not
        import torch
        assert _torch_to_cudnn_data_type(torch.bfloat16) == cudnn.data_type.BFLOAT16
        assert _torch_to_cudnn_data_type(torch.complex64) is None
