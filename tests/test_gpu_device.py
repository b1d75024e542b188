"""Device memory from Python: hipdnn.DeviceArray, DLPack and __cuda_array_interface__ both
ways, PyTorch and CuPy tensors as variant-pack values (zero-copy), streams, memory-space
checks, and hipdnn.Graph staging NumPy through the device.

Skipped with the reason without a GPU; CI runs it over the fake driver and the engine's
host emulation (tests/test_gpu_emulated.py).  PyTorch and CuPy cases run where they are
installed with GPU support.
"""
import ctypes

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import (FAKE_GPU, GPU_ENGINE, assert_close, gpu_unavailable_reason,
                      skip_or_fail_without_gpu)
from test_execute_fast_path import error_of, inputs, poisoned, relu_add_graph, run_checked
from tolerances import tolerance

pytestmark = pytest.mark.gpu
dt = hipdnn.data_type


@pytest.fixture(autouse=True)
def need_gpu():
    reason = gpu_unavailable_reason()
    if reason:
        skip_or_fail_without_gpu(reason)


def torch_cuda():
    torch = pytest.importorskip("torch")
    if FAKE_GPU or not torch.cuda.is_available():
        pytest.skip("PyTorch has no GPU here")
    return torch


def cupy_gpu():
    cupy = pytest.importorskip("cupy")
    if FAKE_GPU:
        pytest.skip("CuPy needs a real GPU")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # pragma: no cover - depends on the machine
        pytest.skip(f"CuPy has no GPU here: {e}")
    return cupy


def add_relu_graph(like_a, like_b, engine=GPU_ENGINE, dtype=dt.FLOAT, y_stride=None):
    """y = relu(a + b) built from the tensors' descriptions (arrays of any kind); y's
    strides are a's (cuDNN frontend's pointwise inference) unless y_stride is given."""
    g = hipdnn.pygraph(io_data_type=dtype, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    a = g.tensor_like(like_a, name="a", data_type=dtype)
    b = g.tensor_like(like_b, name="b", data_type=dtype)
    y = g.relu(input=g.add(a=a, b=b, name="sum"), name="y")
    y.set_output(True)
    if y_stride is not None:
        y.set_stride(y_stride)
    g.set_preferred_engine(engine)
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name(0) == engine
    return g, a, b, y


# ---- the runtime ------------------------------------------------------------------------

def test_device_runtime_names_the_runtime_and_its_devices():
    rt = hipdnn.device_runtime()
    assert rt.name in ("cuda", "hip") and rt.device_count >= 1 and rt.reason == ""


def test_pointer_memory_space_tells_device_from_host():
    d = hipdnn.DeviceArray.empty([16], np.float32)
    assert hipdnn._C.pointer_memory_space(d.data_ptr) == (int(hipdnn.memory_space.DEVICE),
                                                          d.device)
    h = np.zeros(16, np.float32)
    assert hipdnn._C.pointer_memory_space(h.ctypes.data) == (int(hipdnn.memory_space.HOST), -1)


# ---- DeviceArray ------------------------------------------------------------------------

@pytest.mark.parametrize("np_dtype,hint", [
    (np.float32, None), (np.float16, None), (np.float64, None), (np.int8, None),
    (np.uint8, None), (np.int32, None), (np.int64, None), (np.bool_, None),
    (np.uint16, dt.BFLOAT16)])
def test_round_trip_of_every_data_type(rng, np_dtype, hint):
    host = (rng.standard_normal((3, 5, 7)) * 50).astype(np_dtype)
    d = hipdnn.DeviceArray.from_numpy(host, data_type=hint)
    assert d.shape == (3, 5, 7) and d.ndim == 3 and d.size == 105
    assert d.itemsize == host.itemsize and d.strides == host.strides
    assert d.element_strides == (35, 7, 1) and d.nbytes_spanned == host.nbytes
    assert d.data_type == (hint if hint is not None else hipdnn.arrays.data_type_of(np_dtype))
    back = d.numpy()
    assert back.dtype == host.dtype and np.array_equal(back, host)
    assert "DeviceArray" in repr(d) and "device memory" in repr(d)


def test_uint16_needs_to_be_called_bfloat16():
    with pytest.raises(TypeError, match="bfloat16"):
        hipdnn.DeviceArray.from_numpy(np.zeros(4, np.uint16))
    with pytest.raises(TypeError, match="cannot hold"):
        hipdnn.DeviceArray.from_numpy(np.zeros(4, np.float32), data_type=dt.HALF)


def test_strided_empty_views_and_bounds():
    base = hipdnn.DeviceArray.from_numpy(np.arange(40, dtype=np.float32))
    v = base.as_strided([4, 3], [10, 2], offset=1)
    assert v.base is base and v.element_strides == (10, 2) and v.strides == (40, 8)
    assert v.data_ptr == base.data_ptr + 4
    want = np.arange(40, dtype=np.float32)[1:][np.arange(4)[:, None] * 10 + np.arange(3) * 2]
    assert np.array_equal(v.numpy(), want)
    with pytest.raises(ValueError, match="reach past"):
        base.as_strided([4, 3], [10, 2], offset=10)
    with pytest.raises(ValueError, match="reach past"):
        base.as_strided([41], [1])
    for offset in (2 ** 61 - 1, 2 ** 62, 2 ** 63 - 1):  # offset * 4 bytes would overflow
        with pytest.raises(ValueError, match=f"4 bytes from element {offset} reach past the "
                                             "160 bytes"):
            base.as_strided([1], [1], offset=offset)
    del base  # the view keeps its memory alive
    assert np.array_equal(v.numpy(), want)
    e = hipdnn.DeviceArray.empty([2, 3], "bfloat16", strides=[1, 2])
    assert e.data_type == dt.BFLOAT16 and e.element_strides == (1, 2) and e.nbytes_spanned == 12


def test_fill_bytes_sets_every_spanned_byte():
    d = hipdnn.DeviceArray.empty([5], np.float32)
    d.fill_bytes(0)
    assert np.array_equal(d.numpy(), np.zeros(5, np.float32))
    d.fill_bytes(0xFF)
    assert np.isnan(d.numpy()).all()
    with pytest.raises(ValueError):
        d.fill_bytes(256)


def test_numpy_array_protocol_copies():
    d = hipdnn.DeviceArray.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    a = np.asarray(d)
    assert np.array_equal(a, [[0, 1, 2], [3, 4, 5]])
    assert np.asarray(d, dtype=np.float64).dtype == np.float64
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        with pytest.raises(ValueError, match="without a copy"):
            np.asarray(d, copy=False)


# ---- export: DLPack and the CUDA Array Interface -----------------------------------------

def test_dlpack_export():
    d = hipdnn.DeviceArray.from_numpy(np.ones((2, 3), np.float16))
    kind = 10 if hipdnn.device_runtime().name == "hip" else 2
    assert d.__dlpack_device__() == (kind, d.device)
    legacy = d.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    versioned = d.__dlpack__(max_version=(1, 0), stream=-1)
    assert "dltensor_versioned" in repr(versioned)
    del legacy, versioned  # unconsumed capsules release their reference
    with pytest.raises(BufferError, match="copy"):
        d.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="device"):
        d.__dlpack__(dl_device=(1, 0))


def test_cuda_array_interface_export():
    d = hipdnn.DeviceArray.from_numpy(np.zeros((4, 6), np.float32)).as_strided([4, 3], [6, 2])
    cai = d.__cuda_array_interface__
    assert cai["shape"] == (4, 3) and cai["typestr"] == "<f4" and cai["version"] == 3
    assert cai["data"] == (d.data_ptr, False) and cai["strides"] == (24, 8)


class ViaDLPack:
    """Someone else's array, seen only through DLPack."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class ViaCAI:
    """Someone else's array, seen only through __cuda_array_interface__."""

    def __init__(self, array):
        self.__cuda_array_interface__ = array.__cuda_array_interface__
        self.keep = array


def test_dlpack_and_cai_objects_are_variant_pack_values(rng):
    a = rng.standard_normal((6, 10)).astype(np.float32)
    b = rng.standard_normal((6, 10)).astype(np.float32)
    da, db = hipdnn.DeviceArray.from_numpy(a), hipdnn.DeviceArray.from_numpy(b)
    g, A, B, Y = add_relu_graph(ViaDLPack(da), ViaCAI(db))
    out = hipdnn.DeviceArray.empty([6, 10], np.float32)
    out.fill_bytes(0xFF)
    g.execute({A: ViaDLPack(da), B: ViaCAI(db), Y: ViaDLPack(out)})
    np.testing.assert_allclose(out.numpy(), np.maximum(a.astype(np.float64) + b, 0),
                               rtol=1e-6, atol=1e-6)
    assert np.array_equal(da.numpy(), a) and np.array_equal(db.numpy(), b)


def test_tensor_like_reads_device_arrays():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    base = hipdnn.DeviceArray.empty([4, 8], np.float16)
    t = g.tensor_like(base.as_strided([4, 3], [8, 2]), name="v")
    assert t.get_dim() == [4, 3] and t.get_stride() == [8, 2] and t.get_data_type() == dt.HALF
    bits = hipdnn.DeviceArray.empty([3], "bfloat16")
    assert g.tensor_like(ViaCAI(bits), data_type=dt.BFLOAT16).get_data_type() == dt.BFLOAT16
    with pytest.raises(TypeError, match="uint16"):
        g.tensor_like(ViaCAI(bits))  # '<u2' alone does not say bfloat16


# ---- graphs made from device arrays plan on device engines -------------------------------

def other_device_engines():
    """The device engines loaded besides the GPU engine under test (the vendor-library
    plugins on a GPU machine, which take these graphs too): left out where a test is about
    the GPU engine against the host one."""
    return [e.name for e in hipdnn.engines()
            if e.memory_space == hipdnn.memory_space.DEVICE and e.name != GPU_ENGINE]


def device_graph(like, deselect=()):
    """y = relu(a + b) from tensor_like of `like`, built with cuDNN frontend's steps and
    heuristics A then FALLBACK (which rank the reference engine first), the other device
    engines left out; the graph."""
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    a, b = g.tensor_like(like, name="a"), g.tensor_like(like, name="b")
    g.relu(input=g.add(a=a, b=b)).set_output(True)
    g.deselect_engines(list(deselect) + other_device_engines())
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([hipdnn.heur_mode.A, hipdnn.heur_mode.FALLBACK])
    return g


def test_a_graph_made_from_device_arrays_plans_only_device_engines():
    g = device_graph(hipdnn.DeviceArray.empty([2, 4], np.float32))
    g.check_support()
    g.build_plans()
    assert g.get_engine_name() == GPU_ENGINE
    assert g.get_memory_space() == hipdnn.memory_space.DEVICE
    host = [i for i in range(g.get_execution_plan_count())
            if g.get_plan_name_at_index(i).startswith("reference_cpu")]
    assert host  # ranked, but not to be built: the reason says why
    with pytest.raises(hipdnn.cudnnGraphNotSupportedError, match="made from a device array"):
        g.build_plan_at_index(host[0])


def test_the_gpu_engine_notes_runtime_compilation_and_filters_see_it():
    g = device_graph(hipdnn.DeviceArray.empty([2, 4], np.float32))
    notes = {g.get_plan_name_at_index(i): g.get_behavior_notes_for_plan_at_index(i)
             for i in range(g.get_execution_plan_count())}
    assert notes[GPU_ENGINE] == [hipdnn.behavior_note.RUNTIME_COMPILATION]
    assert notes["reference_cpu"] == []
    g.select_behavior_notes([hipdnn.behavior_note.RUNTIME_COMPILATION])
    g.deselect_numeric_notes([hipdnn.numerical_note.NONDETERMINISTIC])  # deterministic
    g.check_support()
    g.build_plans()
    assert g.get_engine_name() == GPU_ENGINE
    assert g.get_behavior_notes() == [hipdnn.behavior_note.RUNTIME_COMPILATION]
    host = device_graph(np.empty((2, 4), np.float32))
    host.deselect_behavior_notes([hipdnn.behavior_note.RUNTIME_COMPILATION])
    host.check_support()
    host.build_plans()
    assert host.get_engine_name() == "reference_cpu"
    g.deselect_behavior_notes([hipdnn.behavior_note.RUNTIME_COMPILATION])
    with pytest.raises(hipdnn.cudnnGraphNotSupportedError, match="has a deselected behavior"):
        g.check_support()


def test_the_same_graph_from_host_arrays_keeps_its_heuristics_choice():
    # nothing barred: the plan built is heuristics A's first, whatever memory it runs in
    # (the GPU engine on a GPU, where its priority ranks it first; the reference engine
    # over the fake driver, whose emulation ranks below it)
    g = device_graph(np.empty((2, 4), np.float32))
    g.build_plans()
    first = g.get_plan_name_at_index(0).split(" ")[0].split(":")[0]
    assert g.get_engine_name() == first
    assert first == (GPU_ENGINE if not FAKE_GPU else "reference_cpu")


def test_no_device_engine_for_a_device_graph_fails_at_build_with_each_reason():
    # as cuDNN does: the error at check_support(), naming each engine and why, never a
    # host plan that fails at execute
    g = device_graph(hipdnn.DeviceArray.empty([2, 4], np.float32), deselect=[GPU_ENGINE])
    with pytest.raises(hipdnn.cudnnGraphNotSupportedError) as e:
        g.check_support()
    text = str(e.value)
    assert "reference_cpu" in text and "tensor 'a'" in text and \
        "made from a device array" in text and "set_preferred_engine('reference_cpu')" in text, text


def test_a_preferred_host_engine_runs_a_device_graph_staged_and_says_so():
    # asked for explicitly, the reference engine runs on device tensors through host copies
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((2, 4)).astype(np.float32) for _ in range(2))
    da, db = hipdnn.DeviceArray.from_numpy(a), hipdnn.DeviceArray.from_numpy(b)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="staged")
    A, B = g.tensor_like(da, name="a"), g.tensor_like(db, name="b")
    Y = g.relu(input=g.add(a=A, b=B))
    Y.set_output(True).set_stride([6, 1])
    g.set_preferred_engine("reference_cpu")
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == "reference_cpu"
    assert g.get_memory_space() == hipdnn.memory_space.HOST
    base = hipdnn.DeviceArray.from_numpy(np.full((2, 6), np.nan, np.float32))
    out = base.as_strided([2, 4], [6, 1], 1)  # a strided view, one element in
    said = []
    hipdnn.set_log_callback(lambda level, message: said.append((level, message)))
    try:
        for _ in range(2):
            g.execute({A: da, B: db, Y: out})
        hipdnn._C.flush_log()
    finally:
        hipdnn.set_log_callback(None)
    got = base.numpy()
    np.testing.assert_array_equal(got[:, 1:5], np.maximum(a + b, 0))
    assert np.isnan(got[:, 0]).all() and np.isnan(got[:, 5]).all()
    np.testing.assert_array_equal(da.numpy(), a)
    np.testing.assert_array_equal(db.numpy(), b)
    staged = [m for lv, m in said if "copies them to host memory" in m]
    assert len(staged) == 1 and "graph 'staged': reference_cpu" in staged[0], said


def _described_add_relu(name):
    """y = relu(a + b) from tensor(dim=, stride=) alone (cuDNN frontend's usual way): the
    graph does not say where its tensors live."""
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name=name)
    A = g.tensor(name="a", dim=[3, 5], stride=[5, 1])
    B = g.tensor(name="b", dim=[3, 5], stride=[5, 1])
    Y = g.relu(input=g.add(a=A, b=B))
    Y.set_output(True)
    g.build([hipdnn.heur_mode.A, hipdnn.heur_mode.FALLBACK])
    return g, A, B, Y


def test_execute_runs_the_first_engine_of_the_arrays_memory_and_says_so():
    # heuristics A's first plan runs in one memory (the GPU engine's on a GPU, the
    # reference engine's over the fake driver, whose emulation ranks below it); arrays of
    # the other memory run on the first config that runs in theirs, said once in the log
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal((3, 5)).astype(np.float32) for _ in range(2))
    want = np.maximum(a.astype(np.float64) + b, 0)
    g, A, B, Y = _described_add_relu("either")
    first = g.get_engine_name()
    other = "reference_cpu" if first == GPU_ENGINE else GPU_ENGINE
    said = []
    hipdnn.set_log_level(hipdnn.log_level.INFO)
    hipdnn.set_log_callback(lambda level, message: said.append(message))
    try:
        for _ in range(2):
            host_y = np.full((3, 5), np.nan, np.float32)
            g.execute({A: a, B: b, Y: host_y})
            dev_y = hipdnn.DeviceArray.from_numpy(np.full((3, 5), np.nan, np.float32))
            da, db = hipdnn.DeviceArray.from_numpy(a), hipdnn.DeviceArray.from_numpy(b)
            g.execute({A: da, B: db, Y: dev_y})
            for got in (host_y, dev_y.numpy()):
                assert_close(got, want, tolerance("pointwise", "fp32"))
            np.testing.assert_array_equal(da.numpy(), a)
        hipdnn._C.flush_log()
    finally:
        hipdnn.set_log_callback(None)
        hipdnn.set_log_level(hipdnn.log_level.WARN)
    switched = [m for m in said if "so " + other + " runs it instead of " + first in m]
    assert len(switched) == 1 and "graph 'either'" in switched[0], said
    assert g.get_engine_name() == first  # the build's choice stands for its own memory


def test_arrays_no_engine_of_their_memory_runs_fail_with_each_engines_reason():
    # a graph only the reference engine runs (the GPU engine declines it), given device
    # arrays: cuDNN's kind of error, each engine's reason and how to run it staged, never
    # a host engine handed device pointers
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="host_only")
    X = g.tensor(name="x", dim=[2, 3], stride=[3, 1])
    Y = g.relu(input=X)
    Y.set_output(True)
    g.deselect_engines([GPU_ENGINE] + other_device_engines())
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == "reference_cpu"
    x = hipdnn.DeviceArray.from_numpy(np.ones((2, 3), np.float32))
    y = hipdnn.DeviceArray.from_numpy(np.full((2, 3), np.nan, np.float32))
    with pytest.raises(hipdnn.cudnnGraphNotSupportedError) as e:
        g.execute({X: x, Y: y})
    text = str(e.value)
    assert "graph 'host_only'" in text and GPU_ENGINE in text and \
        "deselected by the user" in text, text
    assert "reference_cpu: runs in host memory, and the variant pack's tensors are in " \
        "device memory" in text, text
    assert "set_preferred_engine('reference_cpu')" in text, text
    assert np.isnan(y.numpy()).all()


def _address(a):
    return a.__cuda_array_interface__["data"][0]


def test_device_addresses_as_ints_are_tensors_and_workspace():
    # cuDNN frontend code passes t.data_ptr() for tensors and the workspace: each is the
    # tensor's own dims, strides and type at that address, checked like any device array
    rng = np.random.default_rng(11)
    x = rng.standard_normal((6, 70)).astype(np.float32)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="addresses")
    X = g.tensor(name="x", dim=[6, 70], stride=[70, 1])
    r = g.reduction(input=g.mul(a=X, b=X), mode=hipdnn.reduction_mode.ADD)
    r.set_dim([6, 1])
    Y = g.relu(input=g.sub(a=r, b=1.0))
    Y.set_output(True)
    g.set_preferred_engine(GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    assert g.get_workspace_size() > 0  # stages pass values through it
    dx = hipdnn.DeviceArray.from_numpy(x)
    dy = hipdnn.DeviceArray.from_numpy(np.full((6, 1), np.nan, np.float32))
    ws = hipdnn.DeviceArray.empty([g.get_workspace_size()], np.uint8)
    g.execute({X: _address(dx), Y: _address(dy)}, _address(ws))
    want = np.maximum((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True) - 1, 0)
    assert_close(dy.numpy(), want, tolerance("reduction", "fp32"))
    np.testing.assert_array_equal(dx.numpy(), x)


@pytest.mark.parametrize("what", ["short allocation", "NULL", "host memory", "short workspace"])
def test_device_addresses_that_do_not_hold_the_tensor_are_refused_naming_it(what):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="bad_addresses")
    X = g.tensor(name="x", dim=[6, 70], stride=[70, 1])
    r = g.reduction(input=g.mul(a=X, b=X), mode=hipdnn.reduction_mode.ADD)
    r.set_dim([6, 1])
    Y = g.relu(input=g.sub(a=r, b=1.0))
    Y.set_output(True).set_name("y")
    g.set_preferred_engine(GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    host = np.ones((6, 70), np.float32)
    small = hipdnn.DeviceArray.empty([4], np.float32)
    dx = hipdnn.DeviceArray.from_numpy(host)
    dy = hipdnn.DeviceArray.from_numpy(np.full((6, 1), np.nan, np.float32))
    ws = hipdnn.DeviceArray.empty([g.get_workspace_size()], np.uint8)
    x_at, ws_at, match = {
        "short allocation": (_address(small), _address(ws),
                             r"tensor 'x' \(uid \d+\) spans 1680 bytes .* device allocation "
                             r"ends 16 bytes after it"),
        "NULL": (0, _address(ws), r"tensor 'x' \(uid \d+\) has a NULL pointer"),
        "host memory": (host.ctypes.data, _address(ws),
                        r"tensor 'x' \(uid \d+\) is declared device memory but .* reports "
                        "host memory"),
        "short workspace": (_address(dx), _address(small),
                            r"needs a workspace of \d+ bytes but the workspace's device "
                            "allocation ends 16 bytes after it"),
    }[what]
    with pytest.raises(hipdnn.HipdnnError, match=match):
        g.execute({X: x_at, Y: _address(dy)}, ws_at)
    assert np.isnan(dy.numpy()).all()
    np.testing.assert_array_equal(host, 1)


class HostTensor:
    """Another library's CPU tensor (a torch CPU tensor's protocols): DLPack on the host,
    no __array_interface__."""

    def __init__(self, a):
        self._a = np.asarray(a)

    def __dlpack__(self, stream=None):
        return self._a.__dlpack__()

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_a_host_tensor_scalar_rides_with_device_tensors():
    # cuDNN frontend's epsilon / scale as a CPU tensor next to CUDA tensors: tensor_like
    # of a one-element host tensor is a runtime scalar, and a host tensor is its value at
    # each execute, on the GPU engine
    x = np.array([[1.0, -2.0, 3.0, 0.5]], np.float32)
    d = hipdnn.DeviceArray.from_numpy(x)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    X = g.tensor_like(d, name="x")
    S = g.tensor_like(HostTensor(np.full((1, 1), 2.0, np.float32)), name="scale")
    assert S.get_is_pass_by_value() and S.get_dim() == [1, 1]
    Y = g.mul(a=X, b=S, name="y")
    Y.set_output(True)
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == GPU_ENGINE
    out = hipdnn.DeviceArray.from_numpy(np.full_like(x, np.nan))
    for value in (HostTensor(np.full((1, 1), 3.0, np.float32)), HostTensor(np.float32(-0.5)),
                  np.float32(4.0)):
        g.execute({X: d, S: value, Y: out})
        np.testing.assert_array_equal(out.numpy(), x * np.asarray(value._a if
                                                                  isinstance(value, HostTensor)
                                                                  else value).reshape(()))
    with pytest.raises(ValueError, match=r"tensor 'scale' \(uid \d+\) is a scalar; got an "
                                         r"array of shape \[2\]"):
        g.execute({X: d, S: HostTensor(np.ones(2, np.float32)), Y: out})


def test_a_host_tensor_of_more_elements_stays_an_array():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    t = g.tensor_like(HostTensor(np.ones((2, 3), np.float32)))
    assert not t.get_is_pass_by_value() and t.get_dim() == [2, 3]


# ---- what execute refuses --------------------------------------------------------------

def test_host_memory_for_the_gpu_engine_is_refused_naming_the_tensor():
    a = np.ones((2, 4), np.float32)
    d = hipdnn.DeviceArray.from_numpy(a)
    g, A, B, Y = add_relu_graph(d, d)
    out = hipdnn.DeviceArray.empty([2, 4], np.float32)
    with pytest.raises(hipdnn.InvalidGraphError,
                       match=rf"tensor 'a' \(uid \d+\) is in host memory but {GPU_ENGINE} "
                             "needs device memory"):
        g.execute({A: a, B: d, Y: out})


def test_device_memory_for_the_cpu_engine_is_refused_naming_the_tensor():
    # a host plan nobody asked to stage (the heuristics' choice for a graph of NumPy arrays)
    d = hipdnn.DeviceArray.from_numpy(np.ones((2, 4), np.float32))
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    a, b = (g.tensor_like(np.empty((2, 4), np.float32), name=n) for n in "ab")
    y = g.relu(input=g.add(a=a, b=b))
    y.set_output(True)
    g.build([hipdnn.heur_mode.FALLBACK])  # the reference engine, whatever else is loaded
    assert g.get_engine_name() == "reference_cpu"
    with pytest.raises(hipdnn.InvalidGraphError,
                       match=r"tensor 'b' \(uid \d+\) is in device memory but reference_cpu "
                             "needs host memory"):
        g.execute({a: np.ones((2, 4), np.float32), b: d, y: np.empty((2, 4), np.float32)})


def test_device_values_are_checked_like_arrays():
    d = hipdnn.DeviceArray.from_numpy(np.ones((2, 4), np.float32))
    g, A, B, Y = add_relu_graph(d, d)
    out = hipdnn.DeviceArray.empty([2, 4], np.float32)
    with pytest.raises(ValueError, match=r"tensor 'b' \(uid \d+\) expects float32 \[2, 4\], "
                                         r"got float16 \[2, 4\] \(DeviceArray\)"):
        g.execute({A: d, B: hipdnn.DeviceArray.empty([2, 4], np.float16), Y: out})
    with pytest.raises(ValueError, match=r"expects float32 \[2, 4\], got float32 \[4, 2\]"):
        g.execute({A: d, B: hipdnn.DeviceArray.empty([4, 2], np.float32), Y: out})
    with pytest.raises(ValueError, match=r"expects strides \[4, 1\] \(in elements\), got "
                                         r"\[1, 2\] \(__cuda_array_interface__\)"):
        g.execute({A: d, B: ViaCAI(hipdnn.DeviceArray.empty([2, 4], np.float32,
                                                           strides=[1, 2])), Y: out})


class RawDLPack:
    """A DLPack producer of whatever a hostile caller says: one DLTensor (unversioned) over
    `ptr` on CUDA device 0, with the given dtype and shape, made with ctypes."""

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                    ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                    ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                    ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                    ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64),
                    ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]

    def __init__(self, ptr, code, bits, lanes, shape):
        self.shape = (ctypes.c_int64 * len(shape))(*shape)
        self.t = self.DLTensor(ptr, 2, 0, len(shape), code, bits, lanes, self.shape, None, 0,
                               None, None)

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, **_):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                       ctypes.c_void_p]
        return new(ctypes.addressof(self.t), b"dltensor", None)


def test_a_workspace_must_be_of_a_byte_addressable_type():
    # one byte described as one element of 255 bits times 65 535 lanes would pass as 2 MB
    d = hipdnn.DeviceArray.from_numpy(np.ones((2, 4), np.float32))
    g, A, B, Y = add_relu_graph(d, d)
    out = hipdnn.DeviceArray.empty([2, 4], np.float32)
    byte = hipdnn.DeviceArray.empty([1], np.uint8)
    with pytest.raises(ValueError, match=r"execute: workspace \(DLPack\) is DLPack type "
                                         r"\(code 0, 255 bits, 65535 lanes\): a workspace takes"):
        g.execute({A: d, B: d, Y: out}, RawDLPack(byte.data_ptr, 0, 255, 65535, [1]))
    g.execute({A: d, B: d, Y: out}, RawDLPack(byte.data_ptr, 1, 8, 1, [1]))  # uint8: fine
    np.testing.assert_array_equal(out.numpy(), np.full((2, 4), 2, np.float32))


@pytest.mark.parametrize("code,name", [(10, "fp8_e4m3"), (12, "fp8_e5m2")])
def test_fp8_dlpack_arrays_are_read_as_hipdnns_fp8(code, name):
    # torch.float8_e4m3fn / float8_e5m2 go the DLPack way, with DLPack 1.1's type codes
    # (cuDNN frontend's test_silu_and_mul hands them over so); no engine computes fp8 in a
    # pointwise node yet, so the variant pack's message shows how the array was read
    raw = hipdnn.DeviceArray.from_numpy(np.array([0x38, 0x40, 0xB8, 0x3C], np.uint8))
    g, A, B, Y = add_relu_graph(np.zeros(4, np.float32), np.zeros(4, np.float32))
    out = hipdnn.DeviceArray.empty([4], np.float32)
    with pytest.raises(ValueError, match=rf"variant pack: tensor 'a' \(uid \d+\) expects float32 "
                                         rf"\[4\], got {name} \[4\] \(DLPack\)"):
        g.execute({A: RawDLPack(raw.data_ptr, code, 8, 1, [4]), B: out, Y: out})
    assert raw.numpy().tolist() == [0x38, 0x40, 0xB8, 0x3C]


class LyingCAI:
    """A __cuda_array_interface__ over `array`'s pointer whose shape may overstate it."""

    def __init__(self, array, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (array.data_ptr, False), "strides": None,
                                         "version": 3}
        self.keep = array


def test_a_device_array_may_not_claim_more_than_its_allocation():
    # 4 bytes that claim [64, 64] float32 would be read and written 16 KiB past their end
    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 64
    d = hipdnn.DeviceArray.from_numpy(x)
    g, A, B, Y = add_relu_graph(d, d)
    small = hipdnn.DeviceArray.from_numpy(np.array([3.5], np.float32))
    out = hipdnn.DeviceArray.empty([64, 64], np.float32)
    for name, pack in [("y", {A: d, B: d, Y: LyingCAI(small, [64, 64])}),
                       ("b", {A: d, B: LyingCAI(small, [64, 64]), Y: out})]:
        with pytest.raises(hipdnn.InvalidGraphError,
                           match=rf"tensor '{name}[^']*' \(uid \d+\) spans 16384 bytes from 0x[0-9a-f]+ "
                                 r"but its device allocation ends 4 bytes after it; its dims or "
                                 r"strides overstate the memory"):
            g.execute(pack)
    assert small.numpy().tolist() == [3.5]
    # the same pointer claiming what it has, and a view inside a larger allocation, run
    g1, A1, B1, Y1 = add_relu_graph(small, small)
    one = hipdnn.DeviceArray.empty([1], np.float32)
    g1.execute({A1: LyingCAI(small, [1]), B1: small, Y1: one})
    assert one.numpy().tolist() == [7.0]
    g.execute({A: d, B: d, Y: LyingCAI(out, [64, 64])})
    np.testing.assert_array_equal(out.numpy(), 2 * x)


def test_a_copy_may_not_run_past_a_device_allocation():
    small = hipdnn.DeviceArray.from_numpy(np.array([1.0, 2.0], np.float32))
    host = bytearray(64 * 4)
    with pytest.raises(hipdnn.HipdnnError, match=r"hipdnnDeviceMemcpy_ext: src 0x[0-9a-f]+ is "
                                                  r"given 256 bytes but its device allocation "
                                                  r"ends 8 bytes after it"):
        hipdnn._C.copy_value(LyingCAI(small, [64]), host, True)
    with pytest.raises(hipdnn.HipdnnError, match=r"dst 0x[0-9a-f]+ is given 256 bytes"):
        hipdnn._C.copy_value(LyingCAI(small, [64]), host, False)
    assert small.numpy().tolist() == [1.0, 2.0]
    two = bytearray(8)
    hipdnn._C.copy_value(LyingCAI(small, [2]), two, True)
    assert np.frombuffer(bytes(two), np.float32).tolist() == [1.0, 2.0]


def test_a_workspace_may_not_claim_more_than_its_allocation():
    x = np.linspace(-1, 1, 6 * 70, dtype=np.float32).reshape(6, 70)
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    X = g.tensor_like(x, name="x")
    r = g.reduction(input=g.mul(a=X, b=X), mode=hipdnn.reduction_mode.ADD)
    r.set_dim([6, 1])
    y = g.relu(input=g.sub(a=r, b=1.0), name="y")
    y.set_output(True).set_dim([6, 1])
    g.set_preferred_engine(GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    size = g.get_workspace_size()
    assert size > 16
    dx, out = hipdnn.DeviceArray.from_numpy(x), hipdnn.DeviceArray.empty([6, 1], np.float32)
    ws = hipdnn.DeviceArray.empty([16], np.uint8)
    with pytest.raises(hipdnn.HipdnnError, match=rf"engine '{GPU_ENGINE}' needs a workspace of "
                                                  rf"{size} bytes but the workspace's device "
                                                  r"allocation ends 16 bytes after it"):
        g.execute({X: dx, y: out}, LyingCAI(ws, [size], "|u1"))
    ws = hipdnn.DeviceArray.empty([size], np.uint8)
    g.execute({X: dx, y: out}, LyingCAI(ws, [size], "|u1"))
    want = np.maximum((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True) - 1, 0)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


# ---- streams --------------------------------------------------------------------------

class FakeTorchStream:
    def __init__(self, ptr):
        self.cuda_stream = ptr


class FakeCupyStream:
    def __init__(self, ptr):
        self.ptr = ptr


class StreamProtocol:
    def __init__(self, ptr):
        self.ptr = ptr

    def __cuda_stream__(self):
        return (0, self.ptr)


def test_set_stream_takes_ints_and_stream_objects():
    h = hipdnn.Handle()
    for obj, want in [(None, 0), (0, 0), (FakeTorchStream(0), 0), (FakeCupyStream(0), 0),
                      (StreamProtocol(0), 0)]:
        h.set_stream(obj)
        assert h.get_stream() == want
    with pytest.raises(TypeError, match="stream"):
        h.set_stream("stream")


def test_execute_is_ordered_on_a_torch_stream(rng):
    torch = torch_cuda()
    a = torch.randn(1 << 20, device="cuda")
    b = torch.randn(1 << 20, device="cuda")
    out = torch.full_like(a, float("nan"))
    g, A, B, Y = add_relu_graph(a, b)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        h = hipdnn.Handle()
        h.set_stream(s)
        g.execute({A: a, B: b, Y: out}, handle=h)
    s.synchronize()
    assert torch.equal(out, torch.relu(a + b))


# ---- PyTorch and CuPy, zero-copy --------------------------------------------------------

@pytest.mark.parametrize("tdtype,hdtype,tol", [("float32", dt.FLOAT, "fp32"),
                                               ("float16", dt.HALF, "fp16"),
                                               ("bfloat16", dt.BFLOAT16, "bf16")])
def test_torch_tensors_in_and_out(tdtype, hdtype, tol):
    torch = torch_cuda()
    t = getattr(torch, tdtype)
    a = torch.randn(37, 129, device="cuda").to(t)
    b = torch.randn(37, 129, device="cuda").to(t)
    out = torch.full_like(a, float("nan"))
    g, A, B, Y = add_relu_graph(a, b, dtype=hdtype)
    g.execute({A: a, B: b, Y: out})
    torch.cuda.synchronize()
    want = torch.relu(a.double() + b.double())
    assert_ok = torch.allclose(out.double(), want, rtol=tolerance("pointwise", tol),
                               atol=tolerance("pointwise", tol))
    assert assert_ok, (out.double() - want).abs().max()


def test_device_outputs_over_inputs_give_the_out_of_place_result(rng):
    # issue 26: the overlapping input is copied on the device first (aliasing.c)
    a = rng.standard_normal(4097).astype(np.float32)
    b = rng.standard_normal(4096).astype(np.float32)
    want = np.maximum(a[:4096].astype(np.float64) + b, 0).astype(np.float32)
    base, db = hipdnn.DeviceArray.from_numpy(a), hipdnn.DeviceArray.from_numpy(b)
    g, A, B, Y = add_relu_graph(base.as_strided([4096], [1], 0), db)
    g.execute({A: base.as_strided([4096], [1], 0), B: db, Y: base.as_strided([4096], [1], 1)})
    np.testing.assert_allclose(base.numpy()[1:], want, rtol=1e-6, atol=1e-6)
    same = hipdnn.DeviceArray.from_numpy(a[:4096])  # identical: in place
    g.execute({A: same, B: db, Y: same})
    np.testing.assert_allclose(same.numpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(db.numpy(), b)


def test_torch_views_with_offsets_and_strides():
    # torch tensors are read from their attributes (interop.c): offset and strides count
    torch = torch_cuda()
    base_a = torch.randn(40, 131, device="cuda")
    base_b = torch.randn(129, 37, device="cuda")
    a = base_a[3:, 2:]  # [37, 129], strides (131, 1), 3 * 131 + 2 elements in
    b = base_b.t()      # [37, 129], strides (1, 37)
    out_base = torch.full((5 + 37 * 129 + 3,), float("nan"), device="cuda")
    out = out_base[5:5 + 37 * 129].view(37, 129)  # packed, 5 elements in
    g, A, B, Y = add_relu_graph(a, b, y_stride=[129, 1])  # not a's row stride of 131
    g.execute({A: a, B: b, Y: out})
    torch.cuda.synchronize()
    assert torch.equal(out, torch.relu(a + b))
    assert torch.isnan(out_base[:5]).all() and torch.isnan(out_base[-3:]).all()


def test_torch_block_of_another_shape_stands_for_dw_as_in_cudnn():
    # cuDNN frontend's test_wgrads hands dw torch.zeros_like(x): cuDNN reads the pointer
    torch = torch_cuda()
    gen = torch.Generator(device="cuda").manual_seed(7)
    x = torch.randn(4, 32, 16, 16, device="cuda", generator=gen).half() \
        .to(memory_format=torch.channels_last)
    dy = torch.randn(4, 64, 16, 16, device="cuda", generator=gen).half() \
        .to(memory_format=torch.channels_last)
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    X, DY = g.tensor_like(x), g.tensor_like(dy)
    DW = g.conv_wgrad(name="wgrad", image=X, loss=DY, padding=[1, 1], stride=[1, 1],
                      dilation=[1, 1])
    DW.set_output(True).set_dim([64, 32, 3, 3])
    g.build([hipdnn.heur_mode.A])
    block = torch.full_like(x, float("nan"))
    with pytest.warns(RuntimeWarning, match=r"expects float16 \[64, 32, 3, 3\], got an array "
                                            r"shaped \[4, 32, 16, 16\]"):
        g.execute({X: x, DY: dy, DW: block})
    torch.cuda.synchronize()
    dw = block.as_strided([64, 32, 3, 3], DW.get_stride()).double().cpu().numpy()
    want = ref.conv_wgrad(x.double().cpu().numpy(), dy.double().cpu().numpy(),
                          (64, 32, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1))
    tol = tolerance("conv_wgrad", "fp16")
    assert np.all(np.abs(dw - want) <= tol + tol * np.abs(want)), np.abs(dw - want).max()
    stored = block.permute(0, 2, 3, 1).reshape(-1)  # storage order (channels last)
    assert torch.isnan(stored[64 * 32 * 9:]).all()  # nothing past dw written


def test_torch_work_on_another_stream_comes_first():
    # a and b are still being computed on torch's current stream when hipdnn runs on its
    # own: the engine's stream must wait for that work, as DLPack promises
    torch = torch_cuda()
    x = torch.randn(3000, 3000, device="cuda")
    ours = torch.cuda.Stream()
    h = hipdnn.Handle()
    h.set_stream(ours)
    theirs = torch.cuda.Stream()
    with torch.cuda.stream(theirs):
        for _ in range(3):
            torch.cuda.synchronize()
            a = torch.empty(3000, 3000, device="cuda")
            b = torch.empty(3000, 3000, device="cuda")
            out = torch.full_like(a, float("nan"))
            g, A, B, Y = add_relu_graph(a, b)
            torch.matmul(x, x, out=a)  # long: still running when execute returns
            torch.matmul(x, -x, out=b)
            g.execute({A: a, B: b, Y: out}, handle=h)
            ours.synchronize()
            theirs.synchronize()
            assert torch.equal(out, torch.relu(a + b))


def test_torch_tensors_needing_grad_are_read_as_their_data_as_cudnn_reads_them():
    # cuDNN frontend's samples hand leaf tensors that require grad to execute and
    # tensor_like; torch's __dlpack__ refuses those, hipdnn reads their data.
    torch = torch_cuda()
    for device in ("cuda", "cpu"):  # the attribute read, then the DLPack way
        a = torch.randn(8, device=device, requires_grad=True)
        b = torch.randn(8, device=device)
        out = torch.full_like(b, float("nan")).requires_grad_(True)
        before = a.detach().clone()
        g, A, B, Y = add_relu_graph(a, b, GPU_ENGINE if device == "cuda" else "reference_cpu")
        g.execute({A: a, B: b, Y: out})
        if device == "cuda":
            torch.cuda.synchronize()
        assert torch.equal(out.detach(), torch.relu(before + b))
        assert torch.equal(a.detach(), before) and a.requires_grad


def test_torch_reads_device_arrays_zero_copy():
    torch = torch_cuda()
    d = hipdnn.DeviceArray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    t = torch.from_dlpack(d)
    assert t.data_ptr() == d.data_ptr and t.shape == (3, 4)
    t2 = torch.as_tensor(d, device="cuda")  # through __cuda_array_interface__
    assert t2.data_ptr() == d.data_ptr
    t.mul_(2)
    torch.cuda.synchronize()
    assert np.array_equal(d.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4) * 2)
    bf = hipdnn.DeviceArray.from_numpy(hipdnn.to_bfloat16([1.5, -2.0]), data_type=dt.BFLOAT16)
    tb = torch.from_dlpack(bf)
    assert tb.dtype == torch.bfloat16 and tb.tolist() == [1.5, -2.0]


def test_cupy_arrays_in_and_out_and_back():
    cupy = cupy_gpu()
    a = cupy.random.standard_normal((64, 33)).astype(cupy.float32)
    b = cupy.random.standard_normal((64, 33)).astype(cupy.float32)
    out = cupy.full_like(a, cupy.nan)
    g, A, B, Y = add_relu_graph(a, b)
    g.execute({A: a, B: b, Y: out})
    cupy.cuda.runtime.deviceSynchronize()
    np.testing.assert_allclose(cupy.asnumpy(out),
                               np.maximum(cupy.asnumpy(a).astype(np.float64) +
                                          cupy.asnumpy(b), 0), rtol=1e-5, atol=1e-5)
    d = hipdnn.DeviceArray.from_numpy(np.arange(5, dtype=np.float32))
    c = cupy.asarray(d)
    assert c.data.ptr == d.data_ptr and cupy.asnumpy(c).tolist() == [0, 1, 2, 3, 4]
    c2 = cupy.from_dlpack(d)
    assert c2.data.ptr == d.data_ptr


# ---- hipdnn.Graph: NumPy in, NumPy out, through the device --------------------------------

def test_graph_stages_numpy_through_the_gpu_engine(rng):
    x = rng.standard_normal((8, 3, 5, 5)).astype(np.float32)
    s = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    with hipdnn.Graph(preferred_engine=GPU_ENGINE, name="staged") as g:
        g.gelu(g.mul(x, s))
    assert g.engine_name == GPU_ENGINE
    got = g(x, s)
    assert isinstance(got, np.ndarray) and got.shape == x.shape
    np.testing.assert_allclose(got, ref.gelu(x.astype(np.float64) * s), rtol=1e-5, atol=1e-5)
    dx, ds = hipdnn.DeviceArray.from_numpy(x), hipdnn.DeviceArray.from_numpy(s)
    on_device = g(dx, ds)  # device arrays in: the output stays on the device
    assert isinstance(on_device, hipdnn.DeviceArray)
    np.testing.assert_allclose(on_device.numpy(), got, rtol=0, atol=0)


def test_graph_refuses_device_arrays_for_a_host_engine():
    x = np.ones((2, 2), np.float32)
    with hipdnn.Graph(preferred_engine="reference_cpu") as g:
        g.relu(x)
    with pytest.raises(hipdnn.HipdnnError, match="device memory"):
        g(hipdnn.DeviceArray.from_numpy(x))


def test_device_arrays_fast_path_follows_memory_and_keeps_device_errors():
    # pygraph.execute's fast path (tests/test_execute_fast_path.py) on device arrays
    g, a, b, y = relu_add_graph("dev", hipdnn.heur_mode.A)
    g2, a2, b2, y2 = relu_add_graph("dev", hipdnn.heur_mode.A)
    xa, xb = inputs(4)
    want = np.maximum(xa + xb, 0)
    da, db = hipdnn.DeviceArray.from_numpy(xa), hipdnn.DeviceArray.from_numpy(xb)
    for _ in range(3):  # device, host, device: each memory runs on its own engine
        dy = hipdnn.DeviceArray.from_numpy(poisoned())
        g.execute({a: da, b: db, y: dy})
        np.testing.assert_array_equal(dy.numpy(), want)
        assert g._fast_run is not None
        run_checked(g, a, b, y, 4)
    g.execute({a: da, b: db, y: dy})  # the fast path holds the device plan now
    dev_pack = g._fast_run[1]
    mistakes = {
        "shape": lambda A, B, Y: {A: hipdnn.DeviceArray.from_numpy(xa[:, :4]), B: db, Y: dy},
        "dtype": lambda A, B, Y: {A: hipdnn.DeviceArray.from_numpy(xa.astype(np.float16)),
                                  B: db, Y: dy},
        "mixed": lambda A, B, Y: {A: xa, B: db, Y: dy},
    }
    for what, make in mistakes.items():
        got, want_err = error_of(g, make(a, b, y)), error_of(g2, make(a2, b2, y2))
        assert got is not None and got == want_err, what
        assert g._fast_run is None or g._fast_run[1] is dev_pack
    assert GPU_ENGINE in {g.get_engine_name(i) for i in range(g.get_execution_plan_count())
                          if g._plans[i] is not None}
