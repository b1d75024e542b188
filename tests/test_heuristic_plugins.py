"""Heuristic plugins (csrc/backend/heuristic_plugins.c, hipdnn_heuristic_plugin.h): the
active plugin orders the engines under heur modes A and B, a faulty one is skipped or its
answer refused with one log line and the built-in ranking stands, HIPDNN_HEURISTIC chooses
or disables, and cost_model explains its estimate.  Each case runs in a child process
(plugins load once per process) with reference_cpu and tests/tune_engine's tune_a
(priority 50) and tune_b (priority 40) loaded, all running a float32 relu on host arrays;
the built-in order is tune_a, tune_b, reference_cpu."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hipdnn

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
TEST_HEUR = BUILD_DIR / "tests" / "heuristic_plugins"
TUNE = BUILD_DIR / "tests" / "tune_engine" / "libtune_engine.so"
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
PACKAGE = Path(hipdnn.__file__).resolve().parent
REFERENCE = PACKAGE / "lib" / "hipdnn_plugins" / "engines" / "libhipdnn_reference_cpu.so"
COST = PACKAGE / "lib" / "hipdnn_plugins" / "heuristics" / "libhipdnn_heuristic_cost.so"
BUILTIN = ["tune_a", "tune_b", "reference_cpu"]

CHILD = r"""
import json, sys
import numpy as np
import hipdnn
logs = []
hipdnn.set_log_level("warn")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
mode, preferred = sys.argv[1], sys.argv[2]
g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, compute_data_type=hipdnn.data_type.FLOAT)
xt = g.tensor(name="x", dim=[4, 8])
y = g.relu(xt, name="act")
y.set_output(True)
if preferred:
    g.set_preferred_engine(preferred)
g.build([getattr(hipdnn.heur_mode, mode)])
order = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
x0 = x.copy()
out = np.full((4, 8), np.nan, np.float32)
g.execute({xt: x, y: out})
ok = bool(np.array_equal(out, np.maximum(x0.astype(np.float64), 0).astype(np.float32))
          and np.array_equal(x, x0))
print(json.dumps({"order": order, "ran": g.get_engine_name(), "ok": ok, "logs": logs,
                  "why": g.get_heuristic_explanations(),
                  "plugins": [list(p) for p in hipdnn.heuristic_plugins()]}))
"""


def child(tmp_path, heuristics, mode="A", preferred="", engines=(REFERENCE, TUNE), **env_extra):
    for lib in list(engines) + [p for p in heuristics if tmp_path not in p.parents]:
        if not lib.is_file():
            pytest.fail(f"build the test plugins first ({lib})")
    folder = tmp_path / "engines"
    folder.mkdir(parents=True)
    for lib in engines:
        (folder / lib.name).symlink_to(lib)
    env = dict(os.environ, HIPDNN_PLUGIN_DIR=str(folder), HIPDNN_LOG_LEVEL="warn", HIPDNN_CACHE="0",
               HIPDNN_HEURISTIC_PLUGIN_PATH=":".join(str(p) for p in heuristics) or str(tmp_path))
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("HIPDNN_ENGINE", "HIPDNN_HEURISTIC", "HIPDNN_COST_HOST_GBPS",
              "HIPDNN_COST_HOST_GFLOPS", "HIPDNN_TUNE_SLOW"):
        env.pop(k, None)
    env.update(env_extra)
    r = subprocess.run([sys.executable, "-c", CHILD, mode, preferred], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["ok"], out  # whatever ranked it, the chosen engine computed relu exactly
    return out


def test_without_a_heuristic_plugin_the_builtin_ranking_orders_the_engines(tmp_path):
    out = child(tmp_path, [])
    assert out["order"] == BUILTIN and out["why"] == [] and out["plugins"] == []
    assert out["logs"] == [], out


def test_a_loaded_plugin_orders_the_engines_and_explains_each(tmp_path):
    by_name = TEST_HEUR / "libheur_by_name.so"
    out = child(tmp_path, [by_name])
    assert out["order"] == ["tune_b", "tune_a", "reference_cpu"], out  # against priorities
    assert out["ran"] == "tune_b"
    assert out["why"] == [[e, "by_name", float(k), f"by_name rank {k} of 3"]  # one line
                          for k, e in enumerate(out["order"])]
    assert out["plugins"] == [[str(by_name), "by_name", "active", ""]]
    assert out["logs"] == [], out
    b = child(tmp_path / "b", [by_name], mode="B")
    assert b["order"] == ["tune_b", "tune_a", "reference_cpu"]  # no device engine to lift


FAKE_GPU = dict(LD_LIBRARY_PATH=str(BUILD_DIR / "tests" / "fake_cuda"), HIPDNN_DEVICE_RUNTIME="cuda",
                HIPDNN_TEST_FAKE_GPU="1", HIPDNN_EMULATED_MEMORY="device")


def test_mode_b_keeps_device_engines_first_within_the_plugins_order(tmp_path):
    """by_name puts hip_emulated (a device engine on the fake GPU) last; mode B lifts it to
    the front and keeps the plugin's order for the rest, explanations included."""
    by_name = TEST_HEUR / "libheur_by_name.so"
    engines = (REFERENCE, TUNE, EMULATED)
    a = child(tmp_path / "a", [by_name], engines=engines, **FAKE_GPU)
    assert a["order"] == ["tune_b", "tune_a", "reference_cpu", "hip_emulated"], a
    b = child(tmp_path / "b", [by_name], mode="B", engines=engines, **FAKE_GPU)
    assert b["order"] == ["hip_emulated", "tune_b", "tune_a", "reference_cpu"], b
    assert [w[0] for w in b["why"]] == b["order"]
    assert b["why"][0][3] == "by_name rank 3 of 4"


def test_the_users_choices_stay_above_the_plugins_ranking(tmp_path):
    by_name = TEST_HEUR / "libheur_by_name.so"
    assert child(tmp_path / "p", [by_name], preferred="tune_a")["order"] == \
        ["tune_a", "tune_b", "reference_cpu"]
    env = child(tmp_path / "e", [by_name], HIPDNN_ENGINE="reference_cpu")
    assert env["order"] == ["reference_cpu", "tune_b", "tune_a"] and env["ran"] == "reference_cpu"


def test_fallback_mode_and_hipdnn_heuristic_builtin_keep_the_builtin_ranking(tmp_path):
    by_name = TEST_HEUR / "libheur_by_name.so"
    fb = child(tmp_path / "f", [by_name], mode="FALLBACK")
    assert fb["order"] == ["reference_cpu"] and fb["why"] == []
    off = child(tmp_path / "o", [by_name], HIPDNN_HEURISTIC="builtin")
    assert off["order"] == BUILTIN and off["why"] == []
    assert off["plugins"] == [[str(by_name), "by_name", "loaded", ""]]
    assert off["logs"] == [], off


def test_hipdnn_heuristic_chooses_among_loaded_plugins_and_warns_on_an_unknown_name(tmp_path):
    by_name = TEST_HEUR / "libheur_by_name.so"
    both = child(tmp_path / "c", [COST, by_name], HIPDNN_HEURISTIC="by_name")
    assert both["order"] == ["tune_b", "tune_a", "reference_cpu"]
    assert [p[2] for p in both["plugins"]] == ["loaded", "active"]
    first = child(tmp_path / "d", [COST, by_name])  # unset: the first loaded
    assert first["why"][0][1] == "cost_model"
    unknown = child(tmp_path / "u", [by_name], HIPDNN_HEURISTIC="nonesuch")
    assert unknown["order"] == BUILTIN and unknown["why"] == []
    assert any("HIPDNN_HEURISTIC names 'nonesuch'" in m for m in unknown["logs"]), unknown


@pytest.mark.parametrize("fault,reason", [
    ("bad_version", "heuristic API 2.0 but host speaks 1.x"),
    ("missing_symbol", "missing symbol hipdnnHeuristicPluginRank"),
])
def test_a_plugin_that_does_not_load_is_skipped_with_its_reason(tmp_path, fault, reason):
    path = TEST_HEUR / f"libheur_{fault}.so"
    out = child(tmp_path, [path])
    assert out["order"] == BUILTIN and out["why"] == []
    assert out["plugins"] == [[str(path), "", "skipped", reason]]
    assert [m for m in out["logs"] if "heuristic" in m] == \
        [f"heuristic plugin skipped: {path}: {reason}"], out


def test_a_missing_path_is_listed_as_skipped(tmp_path):
    out = child(tmp_path, [tmp_path / "nonesuch.so"])
    assert out["order"] == BUILTIN
    assert out["plugins"][0][2:] == ["skipped", "could not open: no such file or folder"]


@pytest.mark.parametrize("fault,reason", [
    ("rank_fails", "Rank failed (status 5): rank_fails: refuses on purpose"),
    ("out_of_range", "order[0] = 3 is out of range (3 candidates)"),
    ("duplicates", "order[1] = 0 is given twice"),
])
def test_a_bad_rank_answer_is_refused_and_the_builtin_ranking_used(tmp_path, fault, reason):
    path = TEST_HEUR / f"libheur_{fault}.so"
    out = child(tmp_path, [path])
    assert out["order"] == BUILTIN and out["ran"] == "tune_a" and out["why"] == []
    assert out["plugins"] == [[str(path), fault, "active", ""]]
    assert [m for m in out["logs"] if "heuristic" in m] == [
        f"heuristic plugin {path} ({fault}): {reason}; the built-in ranking is used "
        "(later refusals of it are not logged)"], out


def test_cost_model_ranks_by_its_roofline_estimate_and_says_so(tmp_path):
    out = child(tmp_path, [COST], HIPDNN_COST_HOST_GBPS="10", HIPDNN_COST_HOST_GFLOPS="20")
    # a tie between tune_a and tune_b keeps their priorities' order; the reference
    # (FALLBACK) is modelled at a tenth of their efficiency
    assert out["order"] == BUILTIN, out
    flop, nbytes = 4 * 8, 2 * 4 * 8 * 4  # relu: one per element; x and y in float32
    est = max(flop / 20e9, nbytes / 10e9) * 1e3
    for (engine, plugin, score, text), eff in zip(out["why"], (0.5, 0.5, 0.05)):
        assert plugin == "cost_model"
        assert score == pytest.approx(est / eff, rel=1e-5)
        assert text.startswith(f"relu 'act' float32: 32 FLOP, 2.6e+02 B; memory-bound; {engine} "
                               f"est. {est / eff:.3g} ms (roofline model: host 10 GB/s configured, "
                               f"20 GFLOP/s configured, x{eff:.2g} efficiency)"), text
    assert out["plugins"] == [[str(COST), "cost_model", "active", ""]]


def test_cost_model_puts_engines_where_the_tensors_are_first(tmp_path):
    """On the fake GPU the tensors are taken to be device memory: the hip engine's
    emulation, a device engine here, would go first, but its negative priority (chosen
    only by name) puts it last; host engines are ranked as not where the tensors are."""
    out = child(tmp_path, [COST], engines=(REFERENCE, TUNE, EMULATED), **FAKE_GPU)
    assert out["order"] == BUILTIN + ["hip_emulated"], out
    texts = dict((w[0], w[3]) for w in out["why"])
    assert "negative priority: chosen only by name, ranked last" in texts["hip_emulated"]
    assert "not where the tensors are" in texts["tune_a"]


def test_cost_model_explains_a_matmul_with_its_flops(tmp_path):
    code = r"""
import hipdnn
g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, compute_data_type=hipdnn.data_type.FLOAT)
c = g.matmul(g.tensor(name="a", dim=[1, 64, 32]), g.tensor(name="b", dim=[1, 32, 16]), name="mm")
c.set_output(True)
g.build([hipdnn.heur_mode.A])
print(g.get_heuristic_explanations()[0][3])
"""
    env = dict(os.environ, HIPDNN_HEURISTIC_PLUGIN_PATH=str(COST), HIPDNN_COST_HOST_GBPS="10",
               HIPDNN_CACHE="0")
    env.pop("HIPDNN_HEURISTIC", None)
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    flop, nbytes = 2 * 64 * 16 * 32, (64 * 32 + 32 * 16 + 64 * 16) * 4
    assert r.stdout.startswith(f"matmul 64x16x32 float32: {flop:.2g} FLOP, {nbytes:.2g} B; "
                               "compute-bound; reference_cpu est."), r.stdout


def test_python_m_hipdnn_info_lists_the_heuristic_plugins(tmp_path):
    good, bad = TEST_HEUR / "libheur_by_name.so", TEST_HEUR / "libheur_bad_version.so"
    env = dict(os.environ, HIPDNN_HEURISTIC_PLUGIN_PATH=f"{good}:{bad}")
    env.pop("HIPDNN_HEURISTIC", None)
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-m", "hipdnn", "info"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "heuristic plugins (2):" in r.stdout
    assert f"  {good}: by_name active\n" in r.stdout
    assert f"  {bad}: skipped: heuristic API 2.0 but host speaks 1.x\n" in r.stdout


def test_cost_model_uses_the_device_facts_the_backend_reads(tmp_path):
    """The fake driver describes an H100 SXM (tests/fake_cuda): 132 SMs at 1.98 GHz, HBM at
    2.619 GHz on 5120 bits.  The backend turns them into the device info's sm_count,
    peak_bytes_per_s (2 x clock x bus bytes) and peak_flops (SMs x clock x 256 fp32 FLOPs a
    clock on sm_90, device_facts.c), which cost_model then uses instead of its table."""
    out = child(tmp_path, [COST], engines=(REFERENCE, TUNE, EMULATED), **FAKE_GPU)
    bw, flops = 2 * 2.619e9 * 5120 / 8, 132 * 1.98e9 * 256
    score, text = [(w[2], w[3]) for w in out["why"] if w[0] == "hip_emulated"][0]
    assert f"sm_90 {bw / 1e12:.3g} TB/s, {flops / 1e12:.3g} TFLOP/s from the device, 132 SMs" \
        in text, text
    assert score == pytest.approx(max(32 / flops, 2 * 4 * 8 * 4 / bw) / 0.5 * 1e3, rel=1e-5)


def test_cost_model_falls_back_to_its_table_without_device_facts(tmp_path):
    out = child(tmp_path, [COST], engines=(REFERENCE, TUNE, EMULATED), FAKE_CUDA_NO_ATTRIBUTES="1",
                **FAKE_GPU)
    text = [w[3] for w in out["why"] if w[0] == "hip_emulated"][0]
    assert "from the device" not in text and "guessed" in text, text


def test_cost_model_keeps_the_host_bandwidth_it_measured_for_later_processes(tmp_path):
    cache = tmp_path / "cache"
    first = child(tmp_path / "a", [COST], HIPDNN_CACHE="1", HIPDNN_CACHE_DIR=str(cache))
    kept = cache / "heuristics" / "host_bandwidth"
    magic, host, value = kept.read_text().splitlines()
    assert magic == "hipdnn cost_model host bandwidth 1" and host == os.uname().nodename
    assert f"host {float(value) / 1e9:.3g} GB/s measured" in first["why"][0][3]
    # a later process reads it instead of measuring: a planted figure shows through
    kept.write_text(f"{magic}\n{host}\n12.5e9\n")
    second = child(tmp_path / "b", [COST], HIPDNN_CACHE="1", HIPDNN_CACHE_DIR=str(cache))
    assert "host 12.5 GB/s measured" in second["why"][0][3], second["why"]
    # another host's figure, or a damaged file, is measured again and rewritten
    kept.write_text(f"{magic}\nsome-other-host\n12.5e9\n")
    third = child(tmp_path / "c", [COST], HIPDNN_CACHE="1", HIPDNN_CACHE_DIR=str(cache))
    assert "host 12.5 GB/s" not in third["why"][0][3]
    assert kept.read_text().splitlines()[1] == host
