"""A build in a new process whose plan cache already holds the graph's tuned config (or the
ranking an earlier process's heuristics remembered) asks only that engine (csrc/backend/heuristics.c, the short cut): no other engine is asked, and
the vendor-library engines make no library handle and no heuristic query of theirs; the
other configs are ranked when a step needs them (get_execution_plan_count,
build_plans(ALL)).  A cold build still asks every engine, and an entry whose engine now
declines falls back to the full ranking with a log line.

Two worlds, each a child process with its own cache folder: the fake CUDA driver with the
fake cuDNN and cuBLASLt (build/tests/fake_*, which count the handles they make and the
heuristic queries they answer) under the cudnn and blaslt engines beside reference_cpu;
and tests/tuning.py's tune_a / tune_b test engine (which counts its applicability
queries, and declines where HIPDNN_TUNE_DECLINE names it) beside reference_cpu."""
import json
import os
import subprocess
import sys
from pathlib import Path

import hipdnn
import tuning

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
FAKE_CUDNN = BUILD_DIR / "tests" / "fake_cudnn" / "libcudnn.so.9"
FAKE_LT = BUILD_DIR / "tests" / "fake_cublaslt" / "libcublasLt.so.13"
ENGINES = Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" / "engines"
PLUGINS = [str(ENGINES / f"libhipdnn_{n}.so") for n in ("reference_cpu", "cudnn", "blaslt")]

# A matmul + bias + relu in fp16 (benchmarks/host_overhead_bench.py's fused graph, small);
# argv[1]: "tune" (build, autotune on host arrays: reference_cpu wins and is stored) or
# "warm" (build, then every config: count, names, build_plans(ALL)).
VENDOR_CHILD = r"""
import ctypes, json, os, sys
import numpy as np
import hipdnn
hipdnn.set_engine_plugin_paths(json.loads(os.environ["WARM_PLUGINS"]),
                               hipdnn.plugin_loading_mode.ABSOLUTE)
logs = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
dt = hipdnn.data_type
cudnn = ctypes.CDLL(os.environ["HIPDNN_CUDNN_LIBRARY"])
lt = ctypes.CDLL(os.environ["HIPDNN_BLASLT_LIBRARY"])
for f in (cudnn.fakeCudnnHandlesCreated, cudnn.fakeCudnnHeuristicQueries,
          lt.fakeCublasLtHandlesCreated, lt.fakeCublasLtHeuristicQueries):
    f.restype = ctypes.c_long

def counts():
    return {"cudnn_handles": cudnn.fakeCudnnHandlesCreated(),
            "cudnn_queries": cudnn.fakeCudnnHeuristicQueries(),
            "lt_handles": lt.fakeCublasLtHandlesCreated(),
            "lt_queries": lt.fakeCublasLtHeuristicQueries()}

g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                   compute_data_type=dt.FLOAT, name="mbr")
a = g.tensor(name="a", dim=[1, 32, 16])
b = g.tensor(name="b", dim=[1, 16, 8])
bias = g.tensor(name="bias", dim=[1, 1, 8])
y = g.relu(g.bias(g.matmul(a, b, name="mm"), bias, name="add"), name="act")
y.set_output(True)
g.build([hipdnn.heur_mode.A])
out = {"built": counts(), "engine": g.get_engine_name()}
rng = np.random.default_rng(0)
arrays = {a: rng.standard_normal((1, 32, 16)).astype(np.float16),
          b: rng.standard_normal((1, 16, 8)).astype(np.float16),
          bias: rng.standard_normal((1, 1, 8)).astype(np.float16),
          y: np.zeros((1, 32, 8), np.float16)}
if sys.argv[1] == "tune":
    out["table"] = [(r.engine, r.status) for r in g.autotune(arrays, budget_ms=100)]
else:
    out["first"] = g.get_plan_name_at_index(0)
    out["count"] = g.get_execution_plan_count()
    out["order"] = [g.get_plan_name_at_index(i) for i in range(out["count"])]
    g.build_plans(hipdnn.build_plan_policy.ALL)
    out["built_all"] = [g.get_engine_name(i) for i in range(out["count"])]
    out["ranked"] = counts()
g.execute(arrays)
out["logs"] = logs
print(json.dumps(out))
"""


def vendor_child(cache, step):
    for lib in (FAKE_DRIVER / "libcuda.so.1", FAKE_CUDNN, FAKE_LT):
        assert lib.is_file(), f"build the test targets ({lib})"
    env = dict(os.environ, HIPDNN_CACHE_DIR=str(cache), HIPDNN_DEVICE_RUNTIME="cuda",
               HIPDNN_CUDNN_LIBRARY=str(FAKE_CUDNN), HIPDNN_BLASLT_LIBRARY=str(FAKE_LT),
               WARM_PLUGINS=json.dumps(PLUGINS), HIPDNN_BUILD_DIR=str(BUILD_DIR))
    env["LD_LIBRARY_PATH"] = os.pathsep.join([str(FAKE_DRIVER), env.get("LD_LIBRARY_PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "tests"), str(REPO), env.get("PYTHONPATH", "")])
    for k in ("HIPDNN_PLUGIN_DIR", "HIPDNN_ENGINE", "HIPDNN_CACHE"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-c", VENDOR_CHILD, step], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def test_a_warm_build_makes_no_vendor_handle_and_no_vendor_query(tmp_path):
    cold = vendor_child(tmp_path / "cache", "tune")
    # cold: every engine asked, each vendor library its handle and its heuristic
    assert all(n >= 1 for n in cold["built"].values()), cold
    assert ("reference_cpu", "ok") in [tuple(r) for r in cold["table"]], cold
    warm = vendor_child(tmp_path / "cache", "warm")
    assert warm["engine"] == "reference_cpu" and warm["first"] == "reference_cpu", warm
    assert warm["built"] == {"cudnn_handles": 0, "cudnn_queries": 0, "lt_handles": 0,
                             "lt_queries": 0}, warm
    assert any(m.startswith("plan cache hit: graph 'mbr' runs on reference_cpu")
               for m in warm["logs"]), warm["logs"]
    assert "heuristics: graph 'mbr': reference_cpu ranked first (its tuned config) without " \
           "asking the other engines" in warm["logs"], warm["logs"]
    # every candidate, asked for: the tuned config first, then the others, all built
    assert sorted(warm["order"]) == sorted(["reference_cpu", "cudnn", "blaslt"]), warm
    assert warm["built_all"] == warm["order"], warm
    assert warm["ranked"]["cudnn_handles"] >= 1 and warm["ranked"]["lt_handles"] >= 1, warm


def test_a_build_remembers_its_ranking_and_the_next_process_asks_that_engine_alone(tmp_path):
    # no autotune: the first process's full ranking leaves its first engine in the cache
    # (time_ms -1, not a tuned entry), and the second asks that engine alone
    cold = vendor_child(tmp_path / "cache", "warm")
    assert all(n >= 1 for n in cold["built"].values()), cold
    first = cold["engine"]
    assert any(m.startswith("plan cache: remembered ") and
               m.endswith(f"(engine {first}, ranked first)") for m in cold["logs"]), cold["logs"]
    (entry,) = tuning.entries(tmp_path / "cache")
    assert "\ntime_ms -1\n" in entry.read_text() and tuning.tuned_entries(tmp_path / "cache") == []
    warm = vendor_child(tmp_path / "cache", "warm")
    assert warm["engine"] == first and warm["order"] == cold["order"], (cold, warm)
    # the engines not ranked first make no handle and no query of their library
    own = {"cudnn": "cudnn_", "blaslt": "lt_"}.get(first, "none")
    assert {k: v for k, v in warm["built"].items() if not k.startswith(own)} == \
        {k: 0 for k in warm["built"] if not k.startswith(own)}, warm
    assert f"heuristics: graph 'mbr': {first} ranked first (remembered from an earlier " \
           "process) without asking the other engines" in warm["logs"], warm["logs"]
    assert any(m.startswith(f"plan cache hit: graph 'mbr' runs on {first} (ranked first by an "
                            "earlier process's heuristics") for m in warm["logs"]), warm["logs"]
    assert not any("remembered" in m and m.startswith("plan cache:") for m in warm["logs"])


# ---- the tune_a / tune_b world ------------------------------------------------------------

TUNE_CHILD = r"""
import ctypes, json, os, sys
import hipdnn
logs = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
queries = ctypes.CDLL(os.environ["TUNE_ENGINE"]).tuneEngineQueries
queries.restype = ctypes.c_long
g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                   compute_data_type=hipdnn.data_type.FLOAT, name="r")
y = g.relu(g.tensor(name="x", dim=[4, 8]), name="act")
y.set_output(True)
if sys.argv[1]:
    g.set_preferred_engine(sys.argv[1])
g.build([hipdnn.heur_mode.A])
out = {"queries": queries(), "engine": g.get_engine_name(), "logs": list(logs)}
out["support"] = g.support_report()
out["order"] = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
print(json.dumps(out))
"""


def tune_child(tmp_path, cache, preferred="", **extra):
    env = tuning.child_env(tmp_path, cache, TUNE_ENGINE=str(tuning.TUNE_ENGINE), **extra)
    r = subprocess.run([sys.executable, "-c", TUNE_CHILD, preferred], env=env,
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def test_a_cold_build_asks_every_engine(tmp_path):
    got = tune_child(tmp_path, tmp_path / "cache")
    assert got["queries"] == 1, got
    assert sorted(got["order"]) == ["reference_cpu", "tune_a", "tune_b"], got
    assert not any("without asking" in m for m in got["logs"]), got["logs"]


def test_the_preferred_engine_alone_is_asked_and_the_rest_ranked_when_needed(tmp_path):
    got = tune_child(tmp_path, tmp_path / "cache", preferred="reference_cpu")
    assert got["queries"] == 0 and got["engine"] == "reference_cpu", got
    assert "heuristics: graph 'r': reference_cpu ranked first (the preferred engine) without " \
           "asking the other engines" in got["logs"], got["logs"]
    # support_report() and the plan count asked the others: the full ranking, same first
    assert got["order"][0] == "reference_cpu" and len(got["order"]) == 3, got
    assert dict(got["support"]) == {"reference_cpu": None, "tune_a": None, "tune_b": None}, got


def test_an_entry_whose_engine_now_declines_falls_back_to_the_full_ranking(tmp_path):
    cache = tmp_path / "cache"
    tuned = tuning.run(tmp_path, cache, [tuning.tune()], HIPDNN_TUNE_SLOW="tune_a")["steps"][0]
    assert tuned["engine"] == "tune_b", tuned
    hit = tune_child(tmp_path, cache)
    assert hit["engine"] == "tune_b" and hit["order"][0] == "tune_b_k1000=1", hit
    got = tune_child(tmp_path, cache, HIPDNN_TUNE_DECLINE="tune_b")
    assert got["engine"] != "tune_b" and "tune_b" not in " ".join(got["order"]), got
    assert "plan cache: graph 'r' was tuned to engine tune_b, which is not applicable here; " \
           "every engine is ranked" in got["logs"], got["logs"]
    assert not any("without asking" in m for m in got["logs"]), got["logs"]
    assert dict(got["support"])["tune_b"] == "tune_b: declined ($HIPDNN_TUNE_DECLINE)", got
