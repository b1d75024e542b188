"""A plan executed while the application captures a CUDA graph on ANOTHER stream (issue 25:
cuDNN frontend's test_sdpa_with_caching).  The handle's stream B does not capture; the
application's stream A does, in CUDA's default global mode, as `with torch.cuda.graph(g):`
does around `graph.execute(..., handle=handle)`.  In that mode CUDA fails every
"potentially unsafe" call (allocating, freeing, synchronizing) made by the capturing thread,
or by any thread, and invalidates A's capture.  So hipdnn's execute must do none of them:
it runs eagerly on B (not recorded: B is not capturing), and A's capture ends valid, holding
only the application's own work.  Checked for a plan executed before the capture and for
one whose first execute happens inside it, on a pointwise graph, a staged one (workspace),
a matmul and cuDNN frontend's ragged sdpa (ragged q and o of the batch's real tokens only,
a padding mask); and with the capture begun on another thread.  An array handed over with a
stream to order after (__cuda_array_interface__'s "stream", as torch's current stream is
during a capture) must not fork B into A's capture: CUDA would then record hipdnn's work
into a capture B never joins back (CUDA_ERROR_STREAM_CAPTURE_UNJOINED).

Over the fake driver (HIPDNN_TEST_FAKE_GPU=1, test_gpu_emulated.py), which models the three
capture modes and event forks and joins (tests/fake_cuda/fake_graph.c).  Results against
float64 NumPy references; outputs poisoned before each run, inputs checked unchanged."""
import ctypes
import threading

import numpy as np
import pytest

import hipdnn
from conftest import GPU_ENGINE, assert_close
from test_gpu_graph_capture import drv, end_capture  # noqa: F401 (drv is a fixture)
from tolerances import tolerance

pytestmark = pytest.mark.gpu

dt = hipdnn.data_type
GLOBAL, THREAD_LOCAL, RELAXED = 0, 1, 2
CAPTURE_UNSUPPORTED, CAPTURE_INVALIDATED, CAPTURE_UNJOINED = 900, 901, 904


def dev(a):
    return hipdnn.DeviceArray.from_numpy(np.ascontiguousarray(a))


def build(g):
    g.set_preferred_engine(GPU_ENGINE)
    g.build([hipdnn.heur_mode.A])
    return g


class Case:
    """A graph, its device arrays (inputs random, outputs poisoned), and its reference.
    Everything the test itself allocates or synchronizes for is done outside captures."""

    def poison(self):
        for o in self.outs:
            o.fill_bytes(0xFF)  # NaN in float16 and float32
        if not hasattr(self, "ws"):
            self.ws = hipdnn.DeviceArray.empty([max(self.g.get_workspace_size(), 1)], np.uint8)

    def run(self, handle):
        self.g.execute(self.pack, self.ws, handle=handle)

    def check(self, what):
        for (dev_in, host), name in zip(self.inputs, self.input_names):
            assert np.array_equal(dev_in.numpy(), host), f"{what}: input {name} changed"
        for o, want, tol in zip(self.outs, self.want, self.tols):
            assert_close(o.numpy(), want, tol, what)


class Pointwise(Case):
    """y = relu(x * s + b): one fused kernel."""

    def __init__(self, rng):
        g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="fma_relu")
        ts = [g.tensor(name=n, dim=[64, 48]) for n in "xsb"]
        y = g.relu(g.add(g.mul(ts[0], ts[1]), ts[2]))
        y.set_output(True).set_data_type(dt.FLOAT)
        self.g = build(g)
        host = [rng.standard_normal((64, 48)).astype(np.float32) for _ in ts]
        self.inputs = [(dev(h), h) for h in host]
        self.input_names = "xsb"
        self.outs = [hipdnn.DeviceArray.empty([64, 48], np.float32)]
        self.pack = {t: d for t, (d, _) in zip(ts, self.inputs)}
        self.pack[y] = self.outs[0]
        self.y = y
        x, s, b = (h.astype(np.float64) for h in host)
        self.want = [np.maximum(x * s + b, 0)]
        self.tols = [tolerance("pointwise", "fp32")]


class Staged(Case):
    """y = x - mean over rows(x): a row-wise stage into the workspace, then a pointwise one."""

    def __init__(self, rng):
        g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="centre")
        x = g.tensor(name="x", dim=[40, 96])
        m = g.reduction(input=x, mode=hipdnn.reduction_mode.AVG, name="mean")
        m.set_dim([40, 1]).set_data_type(dt.FLOAT)
        y = g.sub(x, m)
        y.set_output(True).set_data_type(dt.FLOAT)
        self.g = build(g)
        assert self.g.get_workspace_size() > 0
        h = rng.standard_normal((40, 96)).astype(np.float32)
        self.inputs, self.input_names = [(dev(h), h)], ["x"]
        self.outs = [hipdnn.DeviceArray.empty([40, 96], np.float32)]
        self.pack = {x: self.inputs[0][0], y: self.outs[0]}
        h64 = h.astype(np.float64)
        self.want = [h64 - h64.mean(axis=1, keepdims=True)]
        self.tols = [tolerance("pointwise", "fp32")]


class Matmul(Case):
    """c = a @ b, fp16 storage, fp32 compute."""

    def __init__(self, rng):
        g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name="mm")
        a = g.tensor(name="a", dim=[1, 24, 40], data_type=dt.HALF)
        b = g.tensor(name="b", dim=[1, 40, 32], data_type=dt.HALF)
        c = g.matmul(a, b, compute_data_type=dt.FLOAT, name="mm")
        c.set_output(True).set_data_type(dt.HALF)
        self.g = build(g)
        host = [rng.standard_normal(s).astype(np.float16) for s in ((1, 24, 40), (1, 40, 32))]
        self.inputs, self.input_names = [(dev(h), h) for h in host], "ab"
        self.outs = [hipdnn.DeviceArray.empty([1, 24, 32], np.float16)]
        self.pack = {a: self.inputs[0][0], b: self.inputs[1][0], c: self.outs[0]}
        self.want = [host[0].astype(np.float64) @ host[1].astype(np.float64)]
        self.tols = [tolerance("matmul", "fp16")]


class RaggedSdpa(Case):
    """cuDNN frontend's test_sdpa_with_caching graph, smaller: q and o ragged (THD: the
    batch's real tokens back to back, offsets in elements, one offsets tensor for both),
    declared [B, H, S_max, D] with BSHD strides; k, v padded BSHD; a padding mask from
    seq_len tensors.  q and o are given as FE gives them: arrays of the tokens alone
    ([T, H, D]), smaller than their declared dims would reach, and back to back in one
    allocation, as torch's caching allocator places them: q's dims would reach into o."""

    B, H, S, D = 3, 2, 16, 32

    def __init__(self, rng):
        B, H, S, D = self.B, self.H, self.S, self.D
        lq = np.array([3, 4, 1], np.int32)
        lkv = np.array([16, 9, 12], np.int32)
        T = int(lq.sum())
        g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name="fe_ragged_sdpa")
        q = g.tensor(name="q", dim=[B, H, S, D], stride=[H * D, D, H * D, 1], data_type=dt.HALF)
        rq = g.tensor(name="ragged_q", dim=[B + 1, 1, 1, 1], stride=[1, 1, 1, 1],
                      data_type=dt.INT32)
        q.set_ragged_offset(rq)
        k = g.tensor(name="k", dim=[B, H, S, D], stride=[S * H * D, D, H * D, 1], data_type=dt.HALF)
        v = g.tensor(name="v", dim=[B, H, S, D], stride=[S * H * D, D, H * D, 1], data_type=dt.HALF)
        sq = g.tensor(name="seq_q", dim=[B, 1, 1, 1], stride=[1, 1, 1, 1], data_type=dt.INT32)
        skv = g.tensor(name="seq_kv", dim=[B, 1, 1, 1], stride=[1, 1, 1, 1], data_type=dt.INT32)
        o, stats = g.sdpa(name="sdpa", q=q, k=k, v=v, seq_len_q=sq, seq_len_kv=skv,
                          use_padding_mask=True, attn_scale=D ** -0.5, generate_stats=False,
                          compute_data_type=dt.FLOAT)
        assert stats is None
        o.set_output(True).set_dim([B, H, S, D]).set_stride([S * H * D, D, H * D, 1])
        o.set_data_type(dt.HALF).set_ragged_offset(rq)
        self.g = build(g)
        qh = rng.standard_normal((T, H, D)).astype(np.float16)
        kh = rng.standard_normal((B, S, H, D)).astype(np.float16)
        vh = rng.standard_normal((B, S, H, D)).astype(np.float16)
        starts = np.concatenate([[0], np.cumsum(lq)]).astype(np.int32)
        offs = (starts * H * D).reshape(B + 1, 1, 1, 1)
        host = [qh, offs, kh, vh, lq.reshape(B, 1, 1, 1), lkv.reshape(B, 1, 1, 1)]
        self.inputs = [(dev(h), h) for h in host]
        segment = dev(np.concatenate([qh, qh]))  # q's tokens, then o's
        self.inputs[0] = (segment.as_strided([T, H, D], [H * D, D, 1], 0), qh)
        assert (B - 1) * H * D + (S - 1) * H * D + H * D > 2 * T * H * D  # past o too
        self.input_names = ["q", "ragged_q", "k", "v", "seq_q", "seq_kv"]
        kd, vd = (self.inputs[i][0].as_strided([B, H, S, D], [S * H * D, D, H * D, 1])
                  for i in (2, 3))
        self.outs = [segment.as_strided([T, H, D], [H * D, D, 1], T * H * D)]
        self.pack = {q: self.inputs[0][0], rq: self.inputs[1][0], k: kd, v: vd,
                     sq: self.inputs[4][0], skv: self.inputs[5][0], o: self.outs[0]}
        want = np.zeros((T, H, D))
        for b in range(B):
            qs = qh[starts[b]:starts[b + 1]].astype(np.float64)  # [lq, H, D]
            ks, vs = (a[b, :lkv[b]].astype(np.float64) for a in (kh, vh))
            s = np.einsum("qhd,khd->hqk", qs, ks) * np.float64(np.float32(D ** -0.5))
            p = np.exp(s - s.max(axis=2, keepdims=True))
            p /= p.sum(axis=2, keepdims=True)
            want[starts[b]:starts[b + 1]] = np.einsum("hqk,khd->qhd", p, vs)
        self.want = [want]
        self.tols = [tolerance("sdpa", "fp16")]


CASES = {"pointwise": Pointwise, "staged": Staged, "matmul": Matmul, "ragged_sdpa": RaggedSdpa}


class Streams:
    """Stream A (the application's, which captures) and a handle on stream B."""

    def __init__(self, d):
        self.d = d
        self.a = d.out("cuStreamCreate", ctypes.c_uint(0))
        self.b = d.out("cuStreamCreate", ctypes.c_uint(0))
        self.handle = hipdnn.create_handle()
        hipdnn.set_stream(self.handle, self.b)
        self.marker = hipdnn.DeviceArray.empty([64], np.uint8)  # A's own captured work
        self.at = self.marker.data_ptr

    def begin(self, mode=GLOBAL):
        self.marker.fill_bytes(0)
        self.d("cuStreamBeginCapture_v2", ctypes.c_void_p(self.a), mode)
        self.d("cuMemsetD8Async", ctypes.c_void_p(self.at), ctypes.c_ubyte(7),
               ctypes.c_size_t(64), ctypes.c_void_p(self.a))

    def end_checked(self, made):
        """A's capture ends valid and holds A's own work alone, which replays."""
        captured = end_capture(self.d, self.a)
        made.append(("graph", captured))
        assert self.d.nodes(captured) == 1, "hipdnn's run was recorded into A's capture"
        assert not self.marker.numpy().any(), "A's captured work ran during the capture"
        ex = self.d.instantiate(captured)
        made.append(("exec", ex))
        self.d.launch(ex, self.a)
        assert (self.marker.numpy() == 7).all()

    def close(self):
        hipdnn.destroy_handle(self.handle)
        for s in (self.a, self.b):
            self.d("cuStreamDestroy_v2", ctypes.c_void_p(s))


def in_thread(d, fn):
    """fn() on a new thread with this thread's context current there, as a CUDA runtime
    makes it; its result."""
    ctx, out = d.out("cuCtxGetCurrent"), []

    def body():
        d("cuCtxSetCurrent", ctypes.c_void_p(ctx))
        out.append(fn())

    t = threading.Thread(target=body)
    t.start()
    t.join()
    return out[0]


def capturing(d, stream):
    status = ctypes.c_int(-1)
    d("cuStreamIsCapturing", ctypes.c_void_p(stream), ctypes.byref(status))
    return status.value


@pytest.fixture
def streams(drv):  # noqa: F811 (the fixture imported above)
    d, made = drv
    s = Streams(d)
    yield s, made
    s.close()


def test_the_fake_driver_fails_what_a_global_capture_forbids_from_any_thread(streams):
    """The model the tests below stand on (tests/fake_cuda/fake_graph.c): in a global
    capture, a synchronization of another stream fails and invalidates the capture, from
    the capturing thread or another; relaxed and thread-local captures leave other threads
    alone; a thread that asks for relaxed interaction is never refused."""
    s, _ = streams
    lib = s.d.lib

    def sync_b():
        return lib.cuStreamSynchronize(ctypes.c_void_p(s.b))

    graph = ctypes.c_void_p()
    for mode, here, there in [(GLOBAL, CAPTURE_UNSUPPORTED, CAPTURE_UNSUPPORTED),
                              (THREAD_LOCAL, CAPTURE_UNSUPPORTED, 0), (RELAXED, 0, 0)]:
        for call in (sync_b, lambda: in_thread(s.d, sync_b)):
            s.d("cuStreamBeginCapture_v2", ctypes.c_void_p(s.a), mode)
            want = here if call is sync_b else there
            assert call() == want, (mode, want)
            assert capturing(s.d, s.a) == (2 if want else 1)
            r = lib.cuStreamEndCapture(ctypes.c_void_p(s.a), ctypes.byref(graph))
            assert r == (CAPTURE_INVALIDATED if want else 0), (mode, r)
            if graph.value:
                s.d("cuGraphDestroy", graph)
    s.d("cuStreamBeginCapture_v2", ctypes.c_void_p(s.a), GLOBAL)
    relaxed = ctypes.c_int(RELAXED)
    s.d("cuThreadExchangeStreamCaptureMode", ctypes.byref(relaxed))
    assert sync_b() == 0  # this thread now relaxed
    s.d("cuThreadExchangeStreamCaptureMode", ctypes.byref(relaxed))
    assert relaxed.value == RELAXED
    s.d("cuGraphDestroy", ctypes.c_void_p(end_capture(s.d, s.a)))


def test_an_event_recorded_in_a_capture_forks_the_waiting_stream_into_it(streams):
    """CUDA's fork and join: B waits on an event recorded on capturing A and captures too;
    A's capture ends only once A has waited on an event recorded on B after B's work."""
    s, made = streams
    lib = s.d.lib
    graph = ctypes.c_void_p()
    for join in (False, True):
        ev = [s.d.out("cuEventCreate", ctypes.c_uint(0)) for _ in range(2)]
        s.begin()
        s.d("cuEventRecord", ctypes.c_void_p(ev[0]), ctypes.c_void_p(s.a))
        s.d("cuStreamWaitEvent", ctypes.c_void_p(s.b), ctypes.c_void_p(ev[0]), ctypes.c_uint(0))
        assert capturing(s.d, s.b) == 1
        s.d("cuMemsetD8Async", ctypes.c_void_p(s.at + 8), ctypes.c_ubyte(9),
            ctypes.c_size_t(8), ctypes.c_void_p(s.b))
        if join:
            s.d("cuEventRecord", ctypes.c_void_p(ev[1]), ctypes.c_void_p(s.b))
            s.d("cuStreamWaitEvent", ctypes.c_void_p(s.a), ctypes.c_void_p(ev[1]),
                ctypes.c_uint(0))
        r = lib.cuStreamEndCapture(ctypes.c_void_p(s.a), ctypes.byref(graph))
        assert r == (0 if join else CAPTURE_UNJOINED)
        assert capturing(s.d, s.b) == 0
        if graph.value:
            made.append(("graph", graph.value))
            assert s.d.nodes(graph.value) == 2
        for e in ev:
            s.d("cuEventDestroy_v2", ctypes.c_void_p(e))


@pytest.mark.parametrize("first_run", ["before", "inside"])
@pytest.mark.parametrize("case", list(CASES))
def test_execute_on_a_stream_that_does_not_capture_runs_now_and_leaves_the_capture_valid(
        streams, rng, case, first_run):
    s, made = streams
    c = CASES[case](rng)
    if first_run == "before":
        c.poison()
        c.run(s.handle)
        c.check("before the capture")
    c.poison()
    s.begin(GLOBAL)
    c.run(s.handle)  # eager on B: the fake driver does the work at once
    assert capturing(s.d, s.a) == 1, "hipdnn's execute invalidated the capture on A"
    assert capturing(s.d, s.b) == 0, "hipdnn's execute joined B to the capture on A"
    s.end_checked(made)
    c.check("executed during another stream's capture")


def test_execute_during_a_global_capture_on_another_thread(streams, rng):
    """The capture is begun (and ended) by another thread: in global mode it forbids this
    thread's unsafe calls too."""
    s, made = streams
    c = RaggedSdpa(rng)
    c.poison()
    begun, done, out = threading.Event(), threading.Event(), {}
    ctx = s.d.out("cuCtxGetCurrent")

    def application():
        try:
            s.d("cuCtxSetCurrent", ctypes.c_void_p(ctx))
            s.begin(GLOBAL)
        finally:
            begun.set()
        done.wait(60)
        g = ctypes.c_void_p()
        out["r"] = s.d.lib.cuStreamEndCapture(ctypes.c_void_p(s.a), ctypes.byref(g))
        out["g"] = g.value

    t = threading.Thread(target=application)
    t.start()
    try:
        begun.wait(60)
        assert capturing(s.d, s.a) == 1
        c.run(s.handle)
        assert capturing(s.d, s.a) == 1, "hipdnn's execute invalidated the other thread's capture"
    finally:
        done.set()
        t.join()
    assert out["r"] == 0, f"the capture ended with CUDA error {out['r']}"
    made.append(("graph", out["g"]))
    c.check("executed during another thread's capture")


class OnStream:
    """A device array handed over with the stream its producer last used, as
    __cuda_array_interface__ (version 3) says it; torch's current stream is the capturing
    one inside `with torch.cuda.graph(...)`."""

    def __init__(self, arr, stream):
        self.arr, self.stream = arr, stream

    @property
    def __cuda_array_interface__(self):
        cai = dict(self.arr.__cuda_array_interface__)
        cai["stream"] = self.stream
        return cai


def test_an_array_from_a_capturing_stream_does_not_fork_the_handles_stream(streams, rng):
    s, made = streams
    c = Pointwise(rng)
    c.pack = {t: OnStream(a, s.a) for t, a in c.pack.items()}
    c.poison()
    s.begin(GLOBAL)
    c.run(s.handle)
    assert capturing(s.d, s.b) == 0, "B waited on an event recorded in A's capture"
    s.end_checked(made)
    c.check("inputs ordered after a capturing stream")


def test_an_output_over_its_input_is_staged_without_touching_the_capture(streams, rng):
    """y = relu(x * s + b) written over x: hipdnn reads a copy of x (aliasing.c), allocated,
    synchronized on and freed around the run on B, in relaxed capture interaction since B
    does not capture (hipdnnDeviceRelaxCapture): A's global capture stays valid."""
    s, made = streams
    c = Pointwise(rng)
    x = c.inputs[0][0]
    c.pack[c.y] = x
    c.outs, c.inputs, c.input_names = [x], c.inputs[1:], c.input_names[1:]
    c.poison = lambda: setattr(c, "ws", hipdnn.DeviceArray.empty([1], np.uint8))
    c.poison()
    s.begin(GLOBAL)
    c.run(s.handle)
    assert capturing(s.d, s.a) == 1, "staging the input invalidated the capture on A"
    s.end_checked(made)
    c.check("written over its input during another stream's capture")
