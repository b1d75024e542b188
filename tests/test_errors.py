"""Every error path of the Python API raises the right exception with a message that points
at the input: variant-pack checks name the tensor, invalid graphs name the node or tensor,
unsupported graphs list each engine's reason, wrong Python types raise TypeError.
"""
import numpy as np
import pytest

import hipdnn
from hipdnn import _C

dt = hipdnn.data_type


@pytest.fixture
def half_relu():
    """x (float16 [8, 3, 5, 5], uid 1) -> relu -> y (float16, output), built."""
    g = hipdnn.pygraph(io_data_type=dt.HALF, compute_data_type=dt.FLOAT, name="g")
    x = g.tensor(name="x", dim=[8, 3, 5, 5], stride=[75, 25, 5, 1], uid=1)
    y = g.relu(input=x, name="act")
    y.set_output(True).set_name("y")
    g.build([hipdnn.heur_mode.A])
    return g, x, y


def x_ok():
    return np.ones((8, 3, 5, 5), np.float16)


def y_ok():
    return np.full((8, 3, 5, 5), np.nan, np.float16)


# ---- the hierarchy --------------------------------------------------------------------

def test_exception_hierarchy():
    assert issubclass(hipdnn.HipdnnError, RuntimeError)
    assert issubclass(hipdnn.InvalidGraphError, hipdnn.HipdnnError)
    assert issubclass(hipdnn.InvalidGraphError, ValueError)
    assert issubclass(hipdnn.NotSupportedError, hipdnn.HipdnnError)
    assert issubclass(hipdnn.GraphNotSupportedError, hipdnn.NotSupportedError)


def test_backend_errors_carry_status_and_name():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    g.conv_fprop(image=g.tensor(dim=[1, 8, 5, 5]), weight=g.tensor(dim=[4, 3, 3, 3]),
                 name="conv1").set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError) as info:
        g.build()
    assert info.value.status == _C.STATUS_BAD_PARAM
    assert info.value.status_name == "HIPDNN_STATUS_BAD_PARAM"


# ---- variant pack ---------------------------------------------------------------------

def test_wrong_dtype_names_the_tensor(half_relu):
    g, x, y = half_relu
    with pytest.raises(ValueError) as info:
        g.execute({x: np.ones((8, 3, 5, 5), np.float32), y: y_ok()})
    assert str(info.value) == ("variant pack: tensor 'x' (uid 1) expects float16 [8, 3, 5, 5], "
                               "got float32 [8, 3, 5, 5]")


def test_wrong_shape_names_the_tensor(half_relu):
    g, x, y = half_relu
    with pytest.raises(ValueError, match=r"tensor 'x' \(uid 1\) expects float16 \[8, 3, 5, 5\], "
                                         r"got float16 \[8, 3, 5, 4\]"):
        g.execute({x: np.ones((8, 3, 5, 4), np.float16), y: y_ok()})
    with pytest.raises(ValueError, match=r"got float16 \[600\]"):
        g.execute({x: np.ones(600, np.float16), y: y_ok()})


def test_wrong_strides_name_the_tensor_in_elements(half_relu):
    g, x, y = half_relu
    nhwc = np.ones((8, 5, 5, 3), np.float16).transpose(0, 3, 1, 2)
    with pytest.raises(ValueError, match=r"tensor 'x' \(uid 1\) expects strides "
                                         r"\[75, 25, 5, 1\] \(in elements\), got "
                                         r"\[75, 1, 15, 3\]"):
        g.execute({x: nhwc, y: y_ok()})


def test_strides_that_are_not_whole_elements(half_relu):
    g, x, y = half_relu
    odd = np.ndarray((8, 3, 5, 5), np.float16, np.zeros(4000, np.uint8), 0, (301, 101, 21, 3))
    with pytest.raises(ValueError, match=r"tensor 'x' \(uid 1\) expects strides \[75, 25, 5, 1\] "
                                         r"\(in elements\), got byte strides "
                                         r"\[301, 101, 21, 3\] that are not multiples of the "
                                         r"element size 2"):
        g.execute({x: odd, y: y_ok()})


def test_size_one_dims_ignore_their_stride():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    b = g.tensor(name="b", dim=[1, 4, 1, 1])
    y = g.identity(input=b)
    y.set_output(True)
    g.build()
    odd = np.ones((1, 4, 1, 1), np.float32)
    odd = np.lib.stride_tricks.as_strided(odd, (1, 4, 1, 1), (999 * 4, 4, 7 * 4, 3 * 4))
    out = np.full((1, 4, 1, 1), np.nan, np.float32)
    g.execute({b: odd, y: out})
    assert np.array_equal(out, np.ones((1, 4, 1, 1), np.float32))


def test_read_only_output_names_the_tensor(half_relu):
    g, x, y = half_relu
    out = y_ok()
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"variant pack: tensor 'y' \(uid \d+\) is an output "
                                         r"but its array is read-only"):
        g.execute({x: x_ok(), y: out})


def test_read_only_inputs_are_fine(half_relu):
    g, x, y = half_relu
    xa = np.linspace(-1, 1, 600, dtype=np.float16).reshape(8, 3, 5, 5)
    xa.flags.writeable = False
    out = y_ok()
    g.execute({x: xa, y: out})
    ref = np.maximum(xa.astype(np.float64), 0)
    # pointwise fp16 tolerance (docs/architecture.md, "Tolerances")
    assert np.all(np.abs(out - ref) <= 1e-3 + 1e-3 * np.abs(ref))


def test_missing_array_names_the_tensor(half_relu):
    g, x, y = half_relu
    with pytest.raises(ValueError, match=r"variant pack: no array for tensor 'y' \(uid \d+\)"):
        g.execute({x: x_ok()})


def test_unknown_uid(half_relu):
    g, x, y = half_relu
    with pytest.raises(ValueError, match="uid 99 is not a tensor of graph 'g'"):
        g.execute({x: x_ok(), y: y_ok(), 99: x_ok()})


def test_virtual_tensor_in_the_variant_pack():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[4])
    v = g.relu(input=x, name="hidden")
    y = g.tanh(input=v)
    y.set_output(True)
    g.build()
    with pytest.raises(ValueError, match=r"tensor 'hidden::OUT_0' \(uid \d+\) is virtual"):
        g.execute({x: np.ones(4, np.float32), v: np.ones(4, np.float32),
                   y: np.ones(4, np.float32)})


def test_same_tensor_given_twice(half_relu):
    g, x, y = half_relu
    with pytest.raises(ValueError, match="given twice"):
        g.execute({x: x_ok(), 1: x_ok(), y: y_ok()})


def test_tensor_of_another_graph(half_relu):
    g, x, y = half_relu
    other = hipdnn.pygraph(name="other").tensor(name="x", dim=[1])
    with pytest.raises(ValueError, match="belongs to graph 'other'"):
        g.execute({other: x_ok(), y: y_ok()})


def test_non_array_values_are_type_errors(half_relu):
    g, x, y = half_relu
    with pytest.raises(TypeError, match=r"tensor 'x' \(uid 1\) needs an array with the buffer "
                                        r"protocol.*got list"):
        g.execute({x: [[1.0]], y: y_ok()})
    # None values are skipped (cuDNN frontend's optional outputs): x is then missing
    with pytest.raises(ValueError, match=r"no array for tensor 'x' \(uid 1\)"):
        g.execute({x: None, y: y_ok()})
    with pytest.raises(TypeError, match="keys must be tensors or uids"):
        g.execute({"x": x_ok(), y: y_ok()})
    with pytest.raises(TypeError, match="expected a dict"):
        g.execute([x_ok(), y_ok()])


def test_bfloat16_mismatch_explains_the_bit_patterns():
    g = hipdnn.pygraph(io_data_type=dt.BFLOAT16)
    x = g.tensor(name="xb", dim=[4])
    y = g.relu(input=x)
    y.set_output(True)
    g.build()
    with pytest.raises(ValueError, match=r"expects bfloat16 \[4\], got float32 \[4\] "
                                         r"\(bfloat16 takes uint16 bit patterns"):
        g.execute({x: np.ones(4, np.float32), y: np.zeros(4, np.uint16)})


def test_big_endian_arrays_are_refused(half_relu):
    g, x, y = half_relu
    with pytest.raises(ValueError, match="tensor 'x'"):
        g.execute({x: x_ok().astype(">f2"), y: y_ok()})


def test_workspace_checks():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x, w = g.tensor(name="x", dim=[1, 2, 5, 5]), g.tensor(name="w", dim=[2, 2, 3, 3])
    y = g.conv_fprop(image=x, weight=w, padding=[1, 1])
    y.set_output(True)
    g.build()
    need = g.get_workspace_size()
    pack = {x: np.ones((1, 2, 5, 5), np.float32), w: np.ones((2, 2, 3, 3), np.float32),
            y: np.zeros((1, 2, 5, 5), np.float32)}
    if need > 0:
        with pytest.raises(ValueError, match=f"workspace has {need - 1} bytes but the plan "
                                             f"needs {need}"):
            g.execute(pack, np.empty(need - 1, np.uint8))
    with pytest.raises(ValueError, match="workspace must be a writable"):
        g.execute(pack, bytes(need + 1))


def test_execute_before_build():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, name="early")
    x = g.tensor(dim=[2])
    g.relu(input=x).set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"graph 'early': execute\(\) needs "
                                                 r"build_plans\(\) first \(or call build") as info:
        g.execute({x: np.ones(2, np.float32)})
    assert info.value.status_name == "HIPDNN_STATUS_NOT_INITIALIZED"
    g.validate()
    with pytest.raises(hipdnn.HipdnnError, match="create_execution_plans"):
        g.check_support()
    with pytest.raises(hipdnn.HipdnnError, match=r"get_workspace_size\(\) needs build_plans"):
        g.get_workspace_size()


# ---- invalid graphs ---------------------------------------------------------------------

def test_conv_channel_mismatch_names_the_node():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.conv_fprop(image=g.tensor(name="img", dim=[1, 8, 5, 5]),
                     weight=g.tensor(name="w", dim=[4, 3, 3, 3]), name="conv1")
    y.set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError,
                       match=r"conv_fprop 'conv1': weight C=3 does not divide image C=8"):
        g.validate()


def test_matmul_inner_dims_name_the_node():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    c = g.matmul(A=g.tensor(name="a", dim=[4, 5]), B=g.tensor(name="b", dim=[6, 7]), name="fc1")
    c.set_output(True)
    with pytest.raises(ValueError, match=r"matmul 'fc1': A is \[4, 5\] but B is \[6, 7\]"):
        g.build()


def test_input_without_data_type_names_the_tensor():
    g = hipdnn.pygraph()  # no io_data_type
    y = g.relu(input=g.tensor(name="nodtype", dim=[3]), name="r")
    y.set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match="'nodtype'.*no data type"):
        g.build()


def test_duplicate_explicit_uids_name_both_tensors():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, name="dup")
    a = g.tensor(name="a", dim=[3], uid=5)
    b = g.tensor(name="b", dim=[3], uid=5)
    g.add(a=a, b=b).set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match="'a' and 'b' share uid 5"):
        g.build()


def test_broadcast_mismatch_names_the_node():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.add(a=g.tensor(name="a", dim=[2, 3]), b=g.tensor(name="b", dim=[4, 3]), name="plus")
    y.set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match="'plus'"):
        g.build()


def test_output_dims_that_contradict_inference():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.relu(input=g.tensor(name="x", dim=[2, 3]), name="r")
    y.set_output(True).set_dim([3, 2])
    with pytest.raises(hipdnn.InvalidGraphError, match=r"relu 'r'.*\[3, 2\]"):
        g.build()


def test_empty_graph():
    with pytest.raises(hipdnn.InvalidGraphError, match="no operations"):
        hipdnn.pygraph(name="empty").build()


def test_pass_by_value_tensor_without_a_value_needs_one_at_execute():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    s = g.tensor(name="s", is_pass_by_value=True)
    x = g.tensor(dim=[2])
    y = g.mul(a=x, b=s).set_output(True)
    g.build()  # a runtime scalar: its value comes with each execute
    with pytest.raises(ValueError, match=r"no array for tensor 's' \(uid \d+\)"):
        g.execute({x: np.ones(2, np.float32), y: np.empty(2, np.float32)})
    with pytest.raises(ValueError, match=r"'s' \(uid \d+\) is a scalar; got an array of "
                                         r"shape \[2\]"):
        g.execute({x: np.ones(2, np.float32), y: np.empty(2, np.float32), s: np.ones(2)})


def test_deserialized_graphs_cannot_be_edited():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    g.relu(input=g.tensor(dim=[2])).set_output(True)
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    with pytest.raises(ValueError, match="deserialized"):
        g2.tensor(dim=[1])
    with pytest.raises(ValueError, match="deserialized"):
        g2.tensors()[0].set_dim([3])


# ---- unsupported graphs -------------------------------------------------------------------

def test_graph_not_supported_lists_every_engine():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, name="nobody")
    g.relu(input=g.tensor(dim=[2])).set_output(True)
    g.deselect_engines([e.name for e in hipdnn.engines()])
    g.validate()
    g.create_execution_plans([hipdnn.heur_mode.A])
    with pytest.raises(hipdnn.GraphNotSupportedError) as info:
        g.check_support()
    err = info.value
    assert isinstance(err, hipdnn.HipdnnError)
    assert err.status_name == "HIPDNN_STATUS_NOT_SUPPORTED"
    assert set(err.reasons) == {e.name for e in hipdnn.engines()}
    text = str(err)
    assert text.startswith("no engine supports graph 'nobody':")
    for name in err.reasons:
        assert f"  {name}: deselected by the user" in text.splitlines()
    with pytest.raises(hipdnn.GraphNotSupportedError):
        g.build_plans()


def test_unknown_engine_names():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    g.relu(input=g.tensor(dim=[2])).set_output(True)
    g.validate()
    g.set_preferred_engine("no_such_engine")
    with pytest.raises(ValueError, match="no loaded engine is named 'no_such_engine' "
                                         r"\(loaded: .*reference_cpu"):
        g.create_execution_plans()
    g.set_preferred_engine(None)
    # deselect_engines matches parts of names, as cuDNN frontend's: this one matches none
    g.deselect_engines(["also_missing"])
    g.create_execution_plans()
    assert [n for n, why in g.support_report() if why is None] == \
        [e.name for e in hipdnn.engines()]


# ---- wrong types and values ---------------------------------------------------------------

@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(dim="abc"), TypeError, "dim: expected a list of ints, got str"),
    (dict(dim=[1.5]), TypeError, "item of type float"),
    (dict(dim=5), TypeError, "expected a list of ints, got int"),
    (dict(dim=[0, 2]), ValueError, "dims must be positive"),
    (dict(dim=[1] * 9), ValueError, "at most 8"),
    (dict(dim=[2, 3], stride=[1]), ValueError, "1 strides for 2 dims"),
    (dict(dim=[2, 3], stride=[3, -1]), ValueError, "strides must be positive"),
    (dict(data_type=55), ValueError, "55 is not a hipdnn.data_type"),
    (dict(data_type="float"), TypeError, "expected a hipdnn.data_type, got str"),
    (dict(name=3), TypeError, "expected a str, got int"),
    (dict(uid="1"), TypeError, "uid must be an int"),
    (dict(is_virtual="yes"), TypeError, "expected a bool"),
    (dict(value="1"), TypeError, "value must be a float"),
])
def test_tensor_argument_checks(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        hipdnn.pygraph().tensor(**kwargs)


def test_setter_argument_checks():
    t = hipdnn.pygraph().tensor(name="t", dim=[2])
    with pytest.raises(TypeError):
        t.set_dim("2")
    with pytest.raises(ValueError, match="positive"):
        t.set_dim([-2])
    with pytest.raises(TypeError):
        t.set_uid(1.0)
    with pytest.raises(ValueError, match="not a hipdnn.data_type"):
        t.set_data_type(1000)
    with pytest.raises(TypeError):
        t.set_output("no")
    with pytest.raises(TypeError):
        t.set_name(None)


def test_op_argument_checks():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[1, 2, 4, 4])
    w = g.tensor(name="w", dim=[2, 2, 3, 3])
    with pytest.raises(TypeError, match=r"add '0': input 'b' must be a hipdnn tensor or a "
                                        r"float, got list"):
        g.add(a=x, b=[1.0])
    with pytest.raises(TypeError, match="NumPy array; describe it with g.tensor_like"):
        g.relu(input=np.ones(3, np.float32))
    with pytest.raises(TypeError, match="input 'image' is required"):
        g.conv_fprop(image=None, weight=w)
    with pytest.raises(TypeError, match="got bool"):
        g.mul(a=x, b=True)
    with pytest.raises(ValueError, match="padding, or pre_padding and post_padding, not both"):
        g.conv_fprop(image=x, weight=w, padding=[1, 1], pre_padding=[1, 1])
    with pytest.raises(ValueError, match="one entry per spatial dim"):
        g.conv_fprop(image=x, weight=w, padding=[1, 1], stride=[1, 1, 1])
    with pytest.raises(TypeError, match="convolution_mode"):
        g.conv_fprop(image=x, weight=w, convolution_mode="conv")
    with pytest.raises(TypeError, match="negative_slope must be a float"):
        g.relu(input=x, negative_slope="0.1")
    with pytest.raises(TypeError, match="compute_data_type"):
        g.relu(input=x, compute_data_type="float")
    other = hipdnn.pygraph(name="elsewhere").tensor(name="o", dim=[1])
    with pytest.raises(ValueError, match="belongs to graph 'elsewhere'"):
        g.add(a=x, b=other)
    assert g.tensors() == [x, w]  # failed calls left nothing behind


def test_graph_and_step_argument_checks():
    with pytest.raises(TypeError, match="io_data_type"):
        hipdnn.pygraph(io_data_type="half")
    with pytest.raises(TypeError, match="handle must be a hipdnn.Handle"):
        hipdnn.pygraph(handle=object())
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    g.relu(input=g.tensor(dim=[2])).set_output(True)
    g.validate()
    with pytest.raises(TypeError, match="heur_mode"):
        g.create_execution_plans(["A"])
    with pytest.raises(ValueError, match="7 is not a hipdnn.heur_mode"):
        g.create_execution_plans([7])
    with pytest.raises(ValueError, match="at least one"):
        g.create_execution_plans([])
    g.create_execution_plans()
    with pytest.raises(ValueError, match="build_plan_policy"):
        g.build_plans(5)
    with pytest.raises(TypeError, match="build_plan_policy"):
        g.build_plans("ALL")
    with pytest.raises(TypeError, match="engine names"):
        g.deselect_engines("reference_cpu")
    g.build_plans()
    with pytest.raises(TypeError, match="index must be an int"):
        g.get_engine_name("0")


def test_tensor_like_argument_checks():
    g = hipdnn.pygraph()
    with pytest.raises(TypeError, match="expected a NumPy array"):
        g.tensor_like([1.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        g.tensor_like(np.zeros((0, 3), np.float32))
    with pytest.raises(TypeError, match="has no hipdnn data type"):
        g.tensor_like(np.zeros(3, np.complex64))
    with pytest.raises(ValueError, match="cannot be a tensor stride"):
        g.tensor_like(np.zeros((3, 4), np.float32)[::-1])
    with pytest.raises(ValueError, match="no dims yet"):
        g.tensor_like(g.relu(input=g.tensor(dim=[2])))


def test_plugin_and_log_argument_checks():
    with pytest.raises(TypeError, match="single path"):
        hipdnn.set_engine_plugin_paths("/tmp")
    with pytest.raises(TypeError, match="callable"):
        hipdnn.set_log_callback(42)
    with pytest.raises(ValueError, match="not off, error, warn or info"):
        hipdnn.set_log_level("loud")
    with pytest.raises(ValueError):
        _C.set_log_level(9)
    with pytest.raises(TypeError, match="plan must be an EXECUTION_PLAN Descriptor"):
        _C.VariantPack(None)
