"""The driver calls of a steady-state execute (issue 29, host overhead): on the GPU engine's
host emulation over the fake CUDA driver, which counts every entry point called
(tests/fake_cuda/fake_calls.c), a plan run again on the same memory asks the driver
nothing but what its launch needs, so that a regression shows without a GPU.

With HIPDNN_POINTER_CACHE=1 the backend keeps what the driver said of each device
allocation, per thread, until hipdnn frees device memory (csrc/backend/pointer_cache.c;
off by default).  So these also check that the kept answers change no verdict: after a
free through hipdnn the next execute asks the driver again, a view claiming more than its
allocation or host memory is still refused naming the tensor once every range is kept
(asked afresh before the refusal stands), and without the setting every call asks.
Each case runs in a fresh interpreter, where the fake driver is on the loader's path."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
CALLS = 50

PRELUDE = r"""
import ctypes, json, sys
import numpy as np
import hipdnn
hipdnn.set_engine_plugin_paths(["hipdnn_plugins/engines/libhipdnn_reference_cpu.so", EMULATED],
                               hipdnn.plugin_loading_mode.ABSOLUTE)
dt = hipdnn.data_type
drv = ctypes.CDLL("libcuda.so.1")
drv.fakeCudaCallCount.restype = ctypes.c_long
drv.fakeCudaCallCount.argtypes = [ctypes.c_char_p]

def calls():
    buf = ctypes.create_string_buffer(4096)
    drv.fakeCudaCallList(buf, len(buf))
    return buf.value.decode()

def counted(fn, n):
    '''The driver calls of n runs of fn: {"total": per run, "list": "cuA=k ..."}.'''
    drv.fakeCudaCallReset()
    for _ in range(n):
        fn()
    return {"total": drv.fakeCudaCallCount(None) / n, "list": calls()}

def relu_graph(n=16):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="tiny_relu")
    x = g.tensor(name="x", dim=[n], data_type=dt.FLOAT)
    y = g.relu(input=x, name="y")
    y.set_output(True)
    g.set_preferred_engine("hip_emulated")
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == "hip_emulated"
    return g, x, y

class LyingCAI:
    '''A __cuda_array_interface__ over an allocation's pointer, with any shape.'''
    def __init__(self, array, shape):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": "<f4",
                                         "data": (array.data_ptr, False), "strides": None,
                                         "version": 3}
        self.keep = array

def refusal(fn):
    try:
        fn()
    except hipdnn.HipdnnError as e:
        return str(e)
    return None

out = {}
"""


def run(body, **env_extra):
    """Runs PRELUDE + body over the fake driver; the `out` dict it fills."""
    assert (FAKE_DRIVER / "libcuda.so.1").is_file(), f"build the test targets ({FAKE_DRIVER})"
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    env = dict(os.environ)
    env.update({
        "LD_LIBRARY_PATH": str(FAKE_DRIVER) + os.pathsep + env.get("LD_LIBRARY_PATH", ""),
        "HIPDNN_DEVICE_RUNTIME": "cuda",
        "HIPDNN_EMULATED_MEMORY": "device",
        "PYTHONPATH": str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
    })
    env.pop("HIPDNN_PLUGIN_DIR", None)
    env["HIPDNN_POINTER_CACHE"] = "1"  # off by default (pointer_cache.c says why)
    env.update(env_extra)
    env = {k: v for k, v in env.items() if v is not None}
    code = f"EMULATED = {str(EMULATED)!r}\nCALLS = {CALLS}\n" + PRELUDE + body + \
        "\nprint('RESULT ' + json.dumps(out))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=str(REPO), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    line = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


STEADY = r"""
g, x, y = relu_graph()
host = np.arange(16, dtype=np.float32) - 8
dx = hipdnn.DeviceArray.from_numpy(host)
dy = hipdnn.DeviceArray.from_numpy(np.full(16, np.nan, np.float32))
pack = {x: dx, y: dy}
g.execute(pack)  # the checked way, then the fast path
g.execute(pack)
out["default stream"] = counted(lambda: g.execute(pack), CALLS)
out["checked path"] = counted(lambda: g.execute_plan_at_index(pack, None, g._candidate), CALLS)
stream = ctypes.c_void_p()
assert drv.cuStreamCreate(ctypes.byref(stream), 0) == 0
h = hipdnn.Handle()
h.set_stream(stream.value)
g.execute(pack, handle=h)
out["own stream"] = counted(lambda: g.execute(pack, handle=h), CALLS)
out["right"] = bool(np.array_equal(dy.numpy(), np.maximum(host, 0)))

# stages through a workspace: y = relu(sum(x * x, rows) - 1)
gw = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                    compute_data_type=dt.FLOAT, name="staged")
X = gw.tensor(name="x", dim=[6, 70], stride=[70, 1])
r = gw.reduction(input=gw.mul(a=X, b=X), mode=hipdnn.reduction_mode.ADD)
r.set_dim([6, 1])
Y = gw.relu(input=gw.sub(a=r, b=1.0))
Y.set_output(True)
gw.set_preferred_engine("hip_emulated")
gw.build([hipdnn.heur_mode.A])
ws = hipdnn.DeviceArray.empty([gw.get_workspace_size()], np.uint8)
wpack = {X: hipdnn.DeviceArray.from_numpy(np.ones((6, 70), np.float32)),
         Y: hipdnn.DeviceArray.empty([6, 1], np.float32)}
gw.execute(wpack, ws)
out["workspace"] = counted(lambda: gw.execute(wpack, ws), CALLS)
out["workspace size"] = gw.get_workspace_size()
out["staged right"] = wpack[Y].numpy().ravel().tolist() == [69.0] * 6
"""


@pytest.fixture(scope="module")
def steady():
    return run(STEADY)


def test_a_steady_execute_on_the_default_stream_calls_the_driver_not_at_all(steady):
    # before the kept ranges: cuCtxGetCurrent and cuPointerGetAttributes for each of the
    # two pointers, 4 calls an execute; the emulated launch on the default stream needs none
    assert steady["right"]
    assert steady["default stream"]["total"] == 0, steady["default stream"]
    assert steady["checked path"]["total"] == 0, steady["checked path"]


def test_a_steady_staged_execute_with_a_workspace_calls_the_driver_not_at_all(steady):
    assert steady["workspace size"] > 0 and steady["staged right"]
    assert steady["workspace"]["total"] == 0, steady["workspace"]


def test_a_steady_execute_on_a_stream_makes_only_its_launchs_call(steady):
    # the emulated launch asks whether the stream captures (standing for cuLaunchKernel on
    # a GPU): one call, and nothing else
    got = steady["own stream"]
    assert got["total"] == 1 and got["list"] == f"cuStreamIsCapturing={CALLS}", got


FREED = r"""
g, x, y = relu_graph()
dx = hipdnn.DeviceArray.from_numpy(np.arange(16, dtype=np.float32) - 8)
dy = hipdnn.DeviceArray.empty([16], np.float32)
g.execute({x: dx, y: dy})
g.execute({x: dx, y: dy})
other = hipdnn.DeviceArray.empty([4], np.float32)
del other  # a free through hipdnn: every kept range is dropped
out["after a free"] = counted(lambda: g.execute({x: dx, y: dy}), 1)
out["then"] = counted(lambda: g.execute({x: dx, y: dy}), CALLS)

"""


def test_a_free_through_hipdnn_makes_the_next_execute_ask_again():
    got = run(FREED)
    assert got["after a free"]["list"] == "cuCtxGetCurrent=2 cuPointerGetAttributes=2", got
    assert got["then"]["total"] == 0, got


WARM_REFUSALS = r"""
g, x, y = relu_graph()
dx = hipdnn.DeviceArray.from_numpy(np.arange(16, dtype=np.float32) - 8)
dy = hipdnn.DeviceArray.empty([16], np.float32)
small = hipdnn.DeviceArray.empty([4], np.float32)
g2, x2, y2 = relu_graph(4)
for _ in range(3):  # every allocation's range kept
    g.execute({x: dx, y: dy})
    g2.execute({x2: small, y2: LyingCAI(dy, [4])})
before = dy.numpy().copy()
out["overstated"] = refusal(lambda: g.execute({x: dx, y: LyingCAI(small, [16])}))
out["host"] = refusal(lambda: g.execute({x: np.zeros(16, np.float32), y: dy}))
out["host address"] = refusal(lambda: g.execute({x: np.zeros(16, np.float32).ctypes.data,
                                                 y: dy}))
out["unchanged"] = bool(np.array_equal(dy.numpy(), before, equal_nan=True))
"""


def test_kept_ranges_still_refuse_overstated_views_and_host_memory_naming_the_tensor():
    got = run(WARM_REFUSALS)
    assert got["overstated"] is not None and "tensor 'y" in got["overstated"] and \
        "spans 64 bytes" in got["overstated"] and \
        "device allocation ends 16 bytes after it" in got["overstated"], got["overstated"]
    assert got["host"] == "variant pack: tensor 'x' (uid 1) is in host memory but " \
        "hip_emulated needs device memory", got["host"]
    assert got["host address"] is not None and got["host address"].startswith(
        "variant pack: tensor 'x' (uid 1) is declared device memory but the cuda runtime "
        "reports host memory at 0x"), got["host address"]
    assert got["unchanged"]


OFF = r"""
g, x, y = relu_graph()
pack = {x: hipdnn.DeviceArray.from_numpy(np.ones(16, np.float32)),
        y: hipdnn.DeviceArray.empty([16], np.float32)}
g.execute(pack)
out["off"] = counted(lambda: g.execute(pack), CALLS)
"""


@pytest.mark.parametrize("setting", ["0", None], ids=["0", "unset"])
def test_without_hipdnn_pointer_cache_1_the_driver_is_asked_on_every_call(setting):
    got = run(OFF, HIPDNN_POINTER_CACHE=setting)
    assert got["off"]["list"] == \
        f"cuCtxGetCurrent={2 * CALLS} cuPointerGetAttributes={2 * CALLS}", got
