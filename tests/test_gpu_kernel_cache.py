"""The hip engine's disk cache on a real GPU, across processes: a process whose kernels all
come from the cache does not load the run-time compiler (plugins/hip/rtc_facts.c: NVRTC is
a 100 MB library, ~8 ms to map warm, ~200 ms cold, which was most of a warm-cache build),
and still computes the right result; facts that no longer hold are not trusted (the
compiler is loaded, the facts rewritten).  The emulation has no compiler to load, so
these run on a GPU only; tests/test_hip_kernel_cache.py covers the cache itself and
tests/c/test_rtc_facts.c the facts file."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FAKE_GPU

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[1]

# A fused matmul + bias + relu in fp16 and a pointwise mul + relu in fp32 on the hip engine,
# on device memory, checked against float64 NumPy; then whether the compiler's library is
# mapped into this process.
CHILD = r"""
import json, os
import numpy as np
import hipdnn
logs = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
dt = hipdnn.data_type
m, n, k = 96, 80, 64
g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                   compute_data_type=dt.FLOAT, name="mbr")
a = g.tensor(name="a", dim=[1, m, k])
b = g.tensor(name="b", dim=[1, k, n])
bias = g.tensor(name="bias", dim=[1, 1, n])
y = g.relu(g.bias(g.matmul(a, b, name="mm"), bias, name="add"), name="act")
y.set_output(True)
g.set_preferred_engine("hip")
g.build([hipdnn.heur_mode.A])
rng = np.random.default_rng(7)
host = {a: rng.standard_normal((1, m, k)).astype(np.float16),
        b: rng.standard_normal((1, k, n)).astype(np.float16),
        bias: rng.standard_normal((1, 1, n)).astype(np.float16)}
dev = {t: hipdnn.DeviceArray.from_numpy(v) for t, v in host.items()}
dev[y] = hipdnn.DeviceArray.from_numpy(np.full((1, m, n), np.nan, np.float16))
g.execute(dev)
hipdnn.device.synchronize()
f = {t: v.astype(np.float64) for t, v in host.items()}
ref = np.maximum(f[a] @ f[b] + f[bias], 0)
err = float(np.max(np.abs(dev[y].numpy().astype(np.float64) - ref) / (1 + np.abs(ref))))
# a pointwise graph: its plan's own kernel (jit.hip), kept on disk as one image
p = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="pw")
x = p.tensor(name="x", dim=[3, 1000])
s = p.tensor(name="s", dim=[1, 1000])
z = p.relu(p.mul(x, s, name="mul"), name="act")
z.set_output(True)
p.set_preferred_engine("hip")
p.build([hipdnn.heur_mode.A])
hx = {x: rng.standard_normal((3, 1000)).astype(np.float32),
      s: rng.standard_normal((1, 1000)).astype(np.float32)}
pdev = {t: hipdnn.DeviceArray.from_numpy(v) for t, v in hx.items()}
pdev[z] = hipdnn.DeviceArray.from_numpy(np.full((3, 1000), np.nan, np.float32))
p.execute(pdev)
hipdnn.device.synchronize()
pref = np.maximum(hx[x].astype(np.float64) * hx[s], 0)
err = max(err, float(np.max(np.abs(pdev[z].numpy() - pref) / (1 + np.abs(pref)))))
hipdnn._C.flush_log()
maps = open("/proc/self/maps").read()
print(json.dumps({"err": err, "nvrtc": "libnvrtc" in maps,
                  "engines": [g.get_engine_name(), p.get_engine_name()],
                  "logs": logs}))
"""


def child(cache):
    env = dict(os.environ, HIPDNN_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    for k in ("HIPDNN_CACHE", "HIPDNN_KERNEL_CACHE_DIR", "HIPDNN_HIP_JIT"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["engines"] == ["hip", "hip"] and out["err"] < 2e-2, out  # fp16 output, fp32 accumulation
    return out


def kernel_lines(out, how, kernel=""):
    return [m for m in out["logs"] if m.startswith("hip: kernel " + kernel) and how in m]


def test_a_warm_process_loads_its_kernels_without_loading_the_compiler(tmp_path, gpu):
    if FAKE_GPU:
        pytest.skip("the emulation has no run-time compiler to load")
    cache = tmp_path / "cache"
    cold = child(cache)
    assert cold["nvrtc"] and kernel_lines(cold, "compiled in"), cold["logs"]
    facts = cache / "kernels" / "compiler.facts"
    assert facts.read_text().startswith("HIPDNN-RTC-FACTS 1\n")
    warm = child(cache)
    assert not warm["nvrtc"], warm["logs"]
    for kernel in ("hipdnn_gemm", "hipdnn_pw_fused"):  # the matmul's, the pointwise plan's
        assert kernel_lines(cold, "compiled in", kernel), cold["logs"]
        assert kernel_lines(warm, "loaded from the disk cache", kernel), warm["logs"]
    assert not kernel_lines(warm, "compiled in"), warm["logs"]


def test_facts_that_do_not_hold_are_not_trusted_and_are_rewritten(tmp_path, gpu):
    if FAKE_GPU:
        pytest.skip("the emulation has no run-time compiler to load")
    cache = tmp_path / "cache"
    child(cache)
    facts = cache / "kernels" / "compiler.facts"
    good = facts.read_text()
    facts.write_text(good.replace("state env ", "state env 0"))  # another state: and its check
    again = child(cache)
    assert again["nvrtc"], again["logs"]  # loaded to learn the facts; kernels still from disk
    assert kernel_lines(again, "loaded from the disk cache"), again["logs"]
    assert facts.read_text() == good
    assert not child(cache)["nvrtc"]
