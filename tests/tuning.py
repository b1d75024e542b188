"""Autotuning and plan-cache tests' child processes (tests/test_autotune.py,
tests/test_plan_cache.py): each runs in a fresh interpreter whose only engines are the
test plugin tests/tune_engine (tune_a and tune_b, a float32 relu at chosen speeds) and
reference_cpu, with its own cache folder.

A child builds a relu graph named "r" over x [dims] for each step and prints one JSON line:
the heuristics' order, the engine execute() runs, whether relu(x) came out right, the
autotune table (with whether the output array was left as it was and the input unchanged)
and every log line."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hipdnn

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
TUNE_ENGINE = BUILD_DIR / "tests" / "tune_engine" / "libtune_engine.so"
PACKAGE = Path(hipdnn.__file__).resolve().parent
REFERENCE = PACKAGE / "lib" / "hipdnn_plugins" / "engines" / "libhipdnn_reference_cpu.so"

CHILD = r"""
import json, sys
import numpy as np
import hipdnn
steps = json.loads(sys.argv[1])
logs = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
out = []
for step in steps:
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT, name="r")
    x = g.tensor(name="x", dim=step["dims"])
    y = g.relu(x, name="act")
    y.set_output(True)
    g.deselect_engines(step.get("deselect", []))
    g.build([hipdnn.heur_mode.A])
    res = {"order": [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]}
    xa = np.random.default_rng(0).standard_normal(step["dims"]).astype(np.float32)
    x_before = xa.copy()
    ya = np.full(step["dims"], np.nan, np.float32)
    ya.view(np.uint32)[...] = 0x7FC00123  # a NaN payload that shows any write
    y_before = ya.copy()
    if step.get("autotune"):
        table = g.autotune({x: xa, y: ya}, **step.get("options", {}))
        res["table"] = [r._asdict() for r in table]
        res["y_kept"] = ya.tobytes() == y_before.tobytes()
        res["x_kept"] = xa.tobytes() == x_before.tobytes()
    g.execute({x: xa, y: ya})
    res["engine"] = g.get_engine_name()
    res["correct"] = np.array_equal(ya, np.maximum(x_before, 0))
    out.append(res)
print(json.dumps({"steps": out, "logs": logs}))
"""


def plugin_folder(tmp_path):
    """A folder holding the two plugins (symlinks), made once per test."""
    if not TUNE_ENGINE.is_file():
        pytest.fail(f"build the test plugins first ({TUNE_ENGINE})")
    folder = tmp_path / "engines"
    if not folder.is_dir():
        folder.mkdir(parents=True)
        for lib in (REFERENCE, TUNE_ENGINE):
            (folder / lib.name).symlink_to(lib)
    return folder


def child_env(tmp_path, cache, **extra):
    env = dict(os.environ, HIPDNN_PLUGIN_DIR=str(plugin_folder(tmp_path)),
               HIPDNN_CACHE_DIR=str(cache))
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("HIPDNN_ENGINE", "HIPDNN_TUNE_SLOW", "HIPDNN_CACHE", "HIPDNN_CACHE_MAX_PLANS"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def start(tmp_path, cache, steps, **extra):
    """A child running `steps` (dicts: dims, deselect, autotune, options), not waited for."""
    return subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(steps)],
                            env=child_env(tmp_path, cache, **extra), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(proc):
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    return json.loads(out.splitlines()[-1])


def run(tmp_path, cache, steps, **extra):
    return finish(start(tmp_path, cache, steps, **extra))


def tune(dims=(4, 8), **options):
    """A step that autotunes the graph over tune_a and tune_b (reference_cpu deselected:
    its relu takes about as long as the fastest test config, so it would make a tie)."""
    return {"dims": list(dims), "deselect": ["reference"], "autotune": True,
            "options": dict({"budget_ms": 400.0}, **options)}


def build(dims=(4, 8)):
    return {"dims": list(dims)}


def entries(cache):
    return sorted((Path(cache) / "plans").glob("*.plan"))


def tuned_entries(cache):
    """The entries autotune wrote: not the rankings heuristics remember (time_ms -1)."""
    return [e for e in entries(cache) if "\ntime_ms -1\n" not in e.read_text()]
