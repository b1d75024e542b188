"""Graph capture (csrc/backend/graph_capture.c, docs/engine_selection.md#graph-capture):
pygraph.populate_cuda_graph records a built plan's run into the caller's CUDA graph,
update_cuda_graph swaps its buffers without a new instantiation, and a plan's execute
inside the caller's own stream capture is recorded, not run.  On a GPU the CUDA driver
records the hip engine's kernels; here (HIPDNN_TEST_FAKE_GPU=1, test_gpu_emulated.py) the
fake driver records the emulation's launches (tests/fake_cuda/fake_graph.c) and refuses,
as a real one does, what a capture forbids.  The graphs themselves are made, instantiated
and launched by the test through the driver API (ctypes), as an application would.
Results against float64 NumPy references at the fp32 pointwise tolerance; outputs
poisoned before every launch."""
import ctypes

import numpy as np
import pytest

import hipdnn
from conftest import GPU_ENGINE, assert_close, gpu_unavailable_reason, skip_or_fail_without_gpu
from tolerances import tolerance

pytestmark = pytest.mark.gpu

TOL = tolerance("pointwise", "fp32")  # a mean and a subtraction, or a multiply-add
CAPTURE_THREAD_LOCAL = 1


def end_capture(d, stream):
    g = ctypes.c_void_p()
    d("cuStreamEndCapture", ctypes.c_void_p(stream), ctypes.byref(g))
    return g.value


class Driver:
    """The CUDA driver's graph entry points, as an application calls them."""

    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def __call__(self, name, *args):
        r = getattr(self.lib, name)(*args)
        assert r == 0, f"{name}: CUDA error {r}"

    def out(self, name, *args):
        v = ctypes.c_void_p()
        self(name, ctypes.byref(v), *args)
        return v.value

    def graph(self):
        return self.out("cuGraphCreate", ctypes.c_uint(0))

    def add_child(self, parent, child):
        node = ctypes.c_void_p()
        self("cuGraphAddChildGraphNode", ctypes.byref(node), ctypes.c_void_p(parent), None,
             ctypes.c_size_t(0), ctypes.c_void_p(child))
        return node.value

    def instantiate(self, graph):
        return self.out("cuGraphInstantiateWithFlags", ctypes.c_void_p(graph), ctypes.c_ulonglong(0))

    def launch(self, exec_graph, stream=None):
        self("cuGraphLaunch", ctypes.c_void_p(exec_graph), ctypes.c_void_p(stream))
        hipdnn._C.device_synchronize()

    def nodes(self, graph):
        n = ctypes.c_size_t(0)
        self("cuGraphGetNodes", ctypes.c_void_p(graph), None, ctypes.byref(n))
        return n.value


@pytest.fixture
def drv():
    reason = gpu_unavailable_reason()
    if reason:
        skip_or_fail_without_gpu(reason)
    if hipdnn.device_runtime().name != "cuda":
        pytest.skip("the test drives graphs through the CUDA driver API")
    d = Driver()
    made = []
    yield d, made
    for kind, h in reversed(made):
        d("cuGraphExecDestroy" if kind == "exec" else "cuGraphDestroy", ctypes.c_void_p(h))


def epilogue_graph(engine=None):
    """y = relu(x * s + b): one fused kernel on the hip engine."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT, name="fma_relu")
    x, s, b = (g.tensor(name=n, dim=[64, 48]) for n in "xsb")
    y = g.relu(g.add(g.mul(x, s), b))
    y.set_output(True).set_data_type(hipdnn.data_type.FLOAT)
    g.set_preferred_engine(engine or GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    return g, (x, s, b), y


def staged_graph():
    """y = x - mean over rows(x): a row-wise stage, its result in the workspace, then a
    pointwise stage."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT, name="centre")
    x = g.tensor(name="x", dim=[40, 96])
    m = g.reduction(input=x, mode=hipdnn.reduction_mode.AVG, name="mean")
    m.set_dim([40, 1]).set_data_type(hipdnn.data_type.FLOAT)
    y = g.sub(x, m)
    y.set_output(True).set_data_type(hipdnn.data_type.FLOAT)
    g.set_preferred_engine(GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    return g, (x,), y


def ref_epilogue(xs):
    x, s, b = (a.astype(np.float64) for a in xs)
    return np.maximum(x * s + b, 0)


def ref_staged(xs):
    x = xs[0].astype(np.float64)
    return x - x.mean(axis=1, keepdims=True)


CASES = {"fused": (epilogue_graph, ref_epilogue), "staged": (staged_graph, ref_staged)}


class Buffers:
    """Device arrays for a graph's inputs (random), its output (poisoned) and workspace."""

    def __init__(self, g, ins, y, rng):
        self.host = [rng.standard_normal(list(t.get_dim())).astype(np.float32) for t in ins]
        self.dev = [hipdnn.DeviceArray.from_numpy(a) for a in self.host]
        self.out = hipdnn.DeviceArray.empty(list(y.get_dim()), np.float32)
        self.poison()
        size = max(g.get_workspace_size(), 1)
        self.ws = hipdnn.DeviceArray.empty([size], np.uint8)
        self.pack = dict(zip(ins, self.dev))
        self.pack[y] = self.out

    def poison(self):
        self.out.fill_bytes(0xFF)  # NaN in float32

    def refill(self, rng):
        """New input values in the same memory."""
        for i, a in enumerate(self.host):
            self.host[i] = rng.standard_normal(a.shape).astype(np.float32)
            hipdnn._C.copy_value(self.dev[i], self.host[i], False)

    def check(self, ref, what):
        assert_close(self.out.numpy(), ref(self.host), TOL, what)
        for d, h in zip(self.dev, self.host):  # inputs unchanged
            assert np.array_equal(d.numpy(), h), f"{what}: an input changed"


@pytest.mark.parametrize("case", list(CASES))
def test_a_populated_graph_replays_the_plan_each_launch_and_update_swaps_its_buffers(
        drv, rng, case):
    d, made = drv
    build, ref = CASES[case]
    g, ins, y = build()
    a = Buffers(g, ins, y, rng)
    mine = d.graph()
    made.append(("graph", mine))
    g.populate_cuda_graph(None, a.pack, a.ws, mine)
    assert d.nodes(mine) == 1  # one child graph holding the plan's recording
    assert np.isnan(a.out.numpy()).all(), "populate ran the plan instead of recording it"
    # the application's graph holds ours as a child, and is launched several times
    main = d.graph()
    made.append(("graph", main))
    node = d.add_child(main, mine)
    ex = d.instantiate(main)
    made.append(("exec", ex))
    for launch in range(3):
        a.poison()
        if launch == 2:
            a.refill(rng)  # a replay reads the buffers as they are at launch
        d.launch(ex)
        a.check(ref, f"launch {launch}")
    # update: new buffers, carried into the instantiated graph without re-instantiating
    b = Buffers(g, ins, y, rng)
    embedded = ctypes.c_void_p()  # the copy of ours that the application's graph holds
    d("cuGraphChildGraphNodeGetGraph", ctypes.c_void_p(node), ctypes.byref(embedded))
    embedded = embedded.value
    g.update_cuda_graph(None, b.pack, b.ws, embedded)
    d("cuGraphExecChildGraphNodeSetParams", ctypes.c_void_p(ex), ctypes.c_void_p(node),
      ctypes.c_void_p(embedded))
    a.poison()
    d.launch(ex)
    b.check(ref, "after update")
    assert np.isnan(a.out.numpy()).all(), "the old output was written after the update"


def test_execute_inside_the_applications_stream_capture_is_recorded(drv, rng):
    d, made = drv
    g, ins, y = staged_graph()
    a = Buffers(g, ins, y, rng)
    stream = d.out("cuStreamCreate", ctypes.c_uint(0))
    handle = hipdnn.create_handle()
    try:
        hipdnn.set_stream(handle, stream)
        d("cuStreamBeginCapture_v2", ctypes.c_void_p(stream), CAPTURE_THREAD_LOCAL)
        assert hipdnn._C.stream_is_capturing(stream) == 1
        g.execute(a.pack, a.ws, handle=handle)  # no synchronization, no allocation
        captured = end_capture(d, stream)
        made.append(("graph", captured))
        assert np.isnan(a.out.numpy()).all(), "execute ran during the capture"
        ex = d.instantiate(captured)
        made.append(("exec", ex))
        for _ in range(2):
            a.poison()
            d.launch(ex)
            a.check(ref_staged, "captured execute")
    finally:
        hipdnn.destroy_handle(handle)
        d("cuStreamDestroy_v2", ctypes.c_void_p(stream))


def test_execute_in_a_capture_without_a_workspace_says_to_pass_one(drv, rng):
    d, _ = drv
    g, ins, y = staged_graph()
    assert g.get_workspace_size() > 0
    a = Buffers(g, ins, y, rng)
    stream = d.out("cuStreamCreate", ctypes.c_uint(0))
    handle = hipdnn.create_handle()
    try:
        hipdnn.set_stream(handle, stream)
        d("cuStreamBeginCapture_v2", ctypes.c_void_p(stream), CAPTURE_THREAD_LOCAL)
        with pytest.raises(ValueError, match="capturing a graph and the plan needs a workspace"):
            g.execute(a.pack, None, handle=handle)
        captured = end_capture(d, stream)
        d("cuGraphDestroy", ctypes.c_void_p(captured))
    finally:
        hipdnn.destroy_handle(handle)
        d("cuStreamDestroy_v2", ctypes.c_void_p(stream))


def test_a_host_engines_plan_cannot_be_recorded(drv, rng):
    d, made = drv
    g, ins, y = epilogue_graph("reference_cpu")
    host = [rng.standard_normal((64, 48)).astype(np.float32) for _ in ins]
    pack = dict(zip(ins, host))
    pack[y] = np.zeros((64, 48), np.float32)
    mine = d.graph()
    made.append(("graph", mine))
    with pytest.raises(hipdnn.errors.NotSupportedError, match="engine 'reference_cpu' runs on the host"):
        g.populate_cuda_graph(None, pack, np.zeros(max(g.get_workspace_size(), 1), np.uint8), mine)
    assert d.nodes(mine) == 0


def test_populate_wants_an_empty_graph_and_update_one_populate_filled(drv, rng):
    d, made = drv
    g, ins, y = epilogue_graph()
    a = Buffers(g, ins, y, rng)
    mine, other = d.graph(), d.graph()
    made += [("graph", mine), ("graph", other)]
    g.populate_cuda_graph(None, a.pack, a.ws, mine)
    with pytest.raises(hipdnn.errors.HipdnnError, match="the graph has 1 node; populate fills an empty"):
        g.populate_cuda_graph(None, a.pack, a.ws, mine)
    with pytest.raises(hipdnn.errors.HipdnnError, match="was not filled by populate"):
        g.update_cuda_graph(None, a.pack, a.ws, other)
    sg, sins, sy = staged_graph()
    b = Buffers(sg, sins, sy, rng)
    with pytest.raises(ValueError, match="needs a workspace of"):
        sg.populate_cuda_graph(None, b.pack, None, other)
