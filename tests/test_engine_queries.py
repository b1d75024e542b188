"""With HIPDNN_PARALLEL_QUERIES=1 a full ranking asks the engine plugins at once
(csrc/backend/engine_query.c): one worker thread per ABI 1.1 plugin, the calling thread
asking one, so that the vendor libraries' handles (cudnnCreate, cublasLtCreate) and first
queries could overlap in a cold build (on an H200 they did not; off by default, in turn:
"0" or unset).

Each test runs children over the fake CUDA driver, the fake cuDNN and the fake cuBLASLt
(build/tests/fake_*), each child with its own empty cache folder (a cold build):
  - the overlap: with each fake's handle made in 300 ms (FAKE_CUDNN_CREATE_MS,
    FAKE_CUBLASLT_CREATE_MS), a cold build takes one wait, not two (sleeps, with wide
    margins: the mechanism, not a speed claim);
  - the answers: rankings under modes A, B and FALLBACK, the support reports and the log
    lines are the same either way, over every engine: reference_cpu, cudnn, blaslt, the
    hip engine's emulation, and ABI 1.0 test plugins (which stay on the calling thread);
  - a plugin whose query or handle fails on a worker (tests/query_fails): its reason names
    the engine and carries the plugin's own message, read on the worker's thread;
  - workers that cannot be started (pthread_create refused, through a preloaded shim):
    the calling thread asks every plugin, with the same answers."""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hipdnn

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
FAKE_CUDNN = BUILD_DIR / "tests" / "fake_cudnn" / "libcudnn.so.9"
FAKE_LT = BUILD_DIR / "tests" / "fake_cublaslt" / "libcublasLt.so.13"
QUERY_FAILS = BUILD_DIR / "tests" / "query_fails" / "libquery_fails.so"
ENGINES = Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" / "engines"
VENDOR = [str(ENGINES / f"libhipdnn_{n}.so") for n in ("reference_cpu", "cudnn", "blaslt")]
EVERY = VENDOR + [str(BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"),
                  str(BUILD_DIR / "tests" / "plugins" / "libdeclines_all.so"),
                  str(BUILD_DIR / "tests" / "plugins" / "libno_reason.so"),
                  str(BUILD_DIR / "tests" / "tune_engine" / "libtune_engine.so")]

# Builds the graphs argv[1] names in this process, one pygraph each, under the modes given;
# prints per build: its seconds, the ranking, the support report, and the log lines.
CHILD = r"""
import json, os, sys, threading, time
import hipdnn
hipdnn.set_engine_plugin_paths(json.loads(os.environ["QUERY_PLUGINS"]),
                               hipdnn.plugin_loading_mode.ABSOLUTE)
logs = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
dt = hipdnn.data_type

def matmul_bias_relu(g):
    a = g.tensor(name="a", dim=[1, 32, 16])
    b = g.tensor(name="b", dim=[1, 16, 8])
    bias = g.tensor(name="bias", dim=[1, 1, 8])
    return g.relu(g.bias(g.matmul(a, b, name="mm"), bias, name="add"), name="act")

def conv_relu(g):
    x = g.tensor(name="x", dim=[2, 8, 10, 10])
    w = g.tensor(name="w", dim=[16, 8, 3, 3])
    return g.relu(g.conv_fprop(x, w, padding=[1, 1], stride=[1, 1], dilation=[1, 1],
                               name="conv"), name="act")

def relu(g):
    return g.relu(g.tensor(name="x", dim=[4, 8]), name="act")

def sdpa(g):
    q, k, v = (g.tensor(name=n, dim=[1, 2, 16, 64]) for n in "qkv")
    o, _ = g.sdpa(q, k, v, attn_scale=0.125, generate_stats=False, use_causal_mask=True,
                  name="attn")
    return o

GRAPHS = {"mbr": matmul_bias_relu, "conv": conv_relu, "relu": relu, "sdpa": sdpa}
out = {"main_thread": threading.get_native_id(), "builds": []}
for name, mode in json.loads(sys.argv[1]):
    io = dt.FLOAT if name == "relu" else dt.HALF
    g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name=name)
    y = GRAPHS[name](g)
    y.set_output(True)
    logs.clear()
    t = time.perf_counter()
    try:
        g.build([getattr(hipdnn.heur_mode, mode)])
        error = None
    except hipdnn.HipdnnError as e:
        error = str(e)
    seconds = time.perf_counter() - t
    build = {"graph": name, "mode": mode, "seconds": seconds, "error": error}
    if error is None:
        build["order"] = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
    build["report"] = g.support_report()
    build["logs"] = [m.replace(os.environ["HIPDNN_CACHE_DIR"], "<cache>") for m in logs]
    out["builds"].append(build)
print(json.dumps(out))
"""


def child(tmp_path, plugins, builds, **env_extra):
    """One child's answers; env_extra on top of the fakes' environment (no cache entry)."""
    for lib in (FAKE_DRIVER / "libcuda.so.1", FAKE_CUDNN, FAKE_LT, *map(Path, plugins)):
        assert lib.is_file(), f"build the test targets ({lib})"
    cache = tmp_path / f"cache{len(list(tmp_path.iterdir()))}"
    env = dict(os.environ, HIPDNN_CACHE_DIR=str(cache), HIPDNN_DEVICE_RUNTIME="cuda",
               HIPDNN_CUDNN_LIBRARY=str(FAKE_CUDNN), HIPDNN_BLASLT_LIBRARY=str(FAKE_LT),
               QUERY_PLUGINS=json.dumps(plugins), HIPDNN_BUILD_DIR=str(BUILD_DIR))
    env["LD_LIBRARY_PATH"] = os.pathsep.join([str(FAKE_DRIVER), env.get("LD_LIBRARY_PATH", "")])
    for k in ("HIPDNN_PLUGIN_DIR", "HIPDNN_ENGINE", "HIPDNN_CACHE", "HIPDNN_PARALLEL_QUERIES",
              "HIPDNN_LOG_LEVEL", "HIPDNN_LOG_FILE"):
        env.pop(k, None)
    env["HIPDNN_PARALLEL_QUERIES"] = "1"  # at once unless a test asks in turn ("0")
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(builds)], env=env,
                       capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.splitlines()[-1])


def test_the_vendor_libraries_handles_are_made_at_once_in_a_cold_build(tmp_path):
    slow = {"FAKE_CUDNN_CREATE_MS": "300", "FAKE_CUBLASLT_CREATE_MS": "300"}
    builds = [["mbr", "A"]]
    at_once = child(tmp_path, VENDOR, builds, **slow)["builds"][0]
    in_turn = child(tmp_path, VENDOR, builds, HIPDNN_PARALLEL_QUERIES="0", **slow)["builds"][0]
    for b in (at_once, in_turn):  # both libraries made their handle: each waited once
        assert b["error"] is None and sorted(b["order"]) == ["blaslt", "cudnn", "reference_cpu"], b
    assert in_turn["seconds"] >= 0.6, in_turn["seconds"]
    assert at_once["seconds"] >= 0.3, at_once["seconds"]
    assert at_once["seconds"] < 0.8 * in_turn["seconds"], (at_once["seconds"], in_turn["seconds"])
    assert (at_once["order"], at_once["report"]) == (in_turn["order"], in_turn["report"])
    # the backend's own account: the ranking took about one wait, each library's plugin one
    said = [m for m in at_once["logs"] if "engine plugins asked at once in " in m]
    assert len(said) == 1, at_once["logs"]
    wall = float(re.search(r"asked at once in ([0-9.]+) ms", said[0]).group(1))
    each = {n: float(t) for n, t in re.findall(r"(\w+) ([0-9.]+) ms", said[0].split("(", 1)[1])}
    assert each["cudnn"] >= 300 and each["blaslt"] >= 300, said
    assert wall < each["cudnn"] + each["blaslt"] - 150, said


def test_rankings_reports_and_logs_are_the_same_asked_at_once_or_in_turn(tmp_path):
    builds = [[g, m] for g in ("mbr", "conv", "relu", "sdpa") for m in ("A", "B", "FALLBACK")]
    at_once = child(tmp_path, EVERY, builds)["builds"]
    in_turn = child(tmp_path, EVERY, builds, HIPDNN_PARALLEL_QUERIES="0")["builds"]
    engines = {name for b in at_once for name, _ in b["report"]}
    assert engines == {"reference_cpu", "cudnn", "blaslt", "hip_emulated", "declines_all",
                       "no_reason", "tune_a", "tune_b"}, engines
    assert all(b["error"] is None for b in at_once), at_once
    # the vendor engines took part: both rank the matmul, cudnn the convolution and sdpa
    assert {"cudnn", "blaslt"} <= set(at_once[0]["order"]), at_once[0]
    assert "cudnn" in at_once[3]["order"] and "cudnn" in at_once[9]["order"], at_once
    for a, b in zip(at_once, in_turn):
        a.pop("seconds"), b.pop("seconds")
        # the one line that differs: how the plugins were asked, and how long each took
        for build, how in ((a, "at once"), (b, "in turn")):
            said = [m for m in build["logs"] if " engine plugins asked " in m]
            assert len(said) == 1 and f"7 engine plugins asked {how} in " in said[0], said
            build["logs"].remove(said[0])
        assert a == b, (a, b)
    # the ABI 1.0 test plugins' log lines (asked on the calling thread) are there
    assert any("declines_all: declining graph 'mbr'" in m for m in at_once[0]["logs"]), at_once[0]


def test_a_query_that_fails_on_a_worker_names_the_engine_and_the_plugins_message(tmp_path):
    plugins = VENDOR + [str(QUERY_FAILS)]
    builds = [["mbr", "A"]]
    at_once = child(tmp_path, plugins, builds)
    in_turn = child(tmp_path, plugins, builds, HIPDNN_PARALLEL_QUERIES="0")
    for out, worker in ((at_once, True), (in_turn, False)):
        b = out["builds"][0]
        assert b["error"] is None and "query_fails" not in b["order"], b
        why = dict(b["report"])["query_fails"]
        assert why.startswith("plugin error while checking the graph: query_fails: cannot "
                              "check the graph on thread "), why
        asked = [m for m in b["logs"] if m.startswith("query_fails: asked on thread ")]
        assert len(asked) == 1, b["logs"]
        tid = int(asked[0].rsplit(" ", 1)[1])
        assert why.endswith(f"thread {tid} (told to)"), (why, asked)
        assert (tid != out["main_thread"]) == worker, (tid, out["main_thread"])
    # the other engines' answers do not depend on it
    assert at_once["builds"][0]["order"] == in_turn["builds"][0]["order"]


def test_a_plugin_handle_that_cannot_be_made_on_a_worker_names_the_plugin(tmp_path):
    plugins = VENDOR + [str(QUERY_FAILS)]
    out = child(tmp_path, plugins, [["mbr", "A"]], HIPDNN_QUERY_FAILS_AT="create")
    b = out["builds"][0]
    why = dict(b["report"])["query_fails"]
    assert why.startswith(f"plugin {QUERY_FAILS}: create failed: query_fails: CreateForDevice "
                          "failed on thread "), why
    tid = int(why.split(" on thread ")[1].split()[0])
    assert tid != out["main_thread"], why
    assert b["error"] is None and sorted(b["order"]) == ["blaslt", "cudnn", "reference_cpu"], b


# pthread_create refused for the threads the backend starts (their start routine lies in
# libhipdnn_backend.so); every other thread starts.
REFUSE_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
typedef int (*create_fn)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int pthread_create(pthread_t* t, const pthread_attr_t* a, void* (*fn)(void*), void* arg) {
    Dl_info info;
    if (dladdr((void*)fn, &info) && info.dli_fname && strstr(info.dli_fname, "libhipdnn_backend"))
        return EAGAIN;
    return ((create_fn)dlsym(RTLD_NEXT, "pthread_create"))(t, a, fn, arg);
}
"""


def test_workers_that_cannot_start_leave_every_query_to_the_calling_thread(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "no C compiler (cc) to build the pthread_create shim"
    (tmp_path / "shim.c").write_text(REFUSE_SHIM)
    shim = tmp_path / "shim.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(shim), str(tmp_path / "shim.c"), "-ldl"],
                   check=True)
    # first, even before a sanitizer's runtime (the sanitizer builds preload it): its
    # pthread_create would otherwise be found first; the shim's call reaches it
    preload = " ".join(p for p in (str(shim), os.environ.get("LD_PRELOAD", "")) if p)
    options = ":".join(o for o in (os.environ.get("ASAN_OPTIONS", ""),
                                   "verify_asan_link_order=0") if o)
    plugins = VENDOR + [str(QUERY_FAILS)]
    builds = [["mbr", "A"], ["conv", "B"]]
    refused = child(tmp_path, plugins, builds, LD_PRELOAD=preload, ASAN_OPTIONS=options)
    in_turn = child(tmp_path, plugins, builds, HIPDNN_PARALLEL_QUERIES="0")
    for r, t in zip(refused["builds"], in_turn["builds"]):
        assert r["error"] is None and r["order"] == t["order"], (r, t)
        tids = [int(m.rsplit(" ", 1)[1]) for m in r["logs"]
                if m.startswith("query_fails: asked on thread ")]
        assert tids == [refused["main_thread"]], (tids, refused["main_thread"])
        assert [line for line in r["report"] if line[0] != "query_fails"] == \
               [line for line in t["report"] if line[0] != "query_fails"]
