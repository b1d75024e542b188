"""HIPDNN_ENGINE: a process-wide engine preference (csrc/backend/heuristics.c), under the
graph's own set_preferred_engine.  Each case runs in a child with two engines loaded that
both run a relu on host arrays: reference_cpu (priority 0) and the hip engine's host
emulation, hip_emulated."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hipdnn

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
PACKAGE = Path(hipdnn.__file__).resolve().parent
REFERENCE = PACKAGE / "lib" / "hipdnn_plugins" / "engines" / "libhipdnn_reference_cpu.so"

CHILD = r"""
import json, sys
import hipdnn
logs = []
hipdnn.set_log_level("warn")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, compute_data_type=hipdnn.data_type.FLOAT)
y = g.relu(g.tensor(name="x", dim=[4, 8]), name="act")
y.set_output(True)
if sys.argv[1]:
    g.set_preferred_engine(sys.argv[1])
g.build([hipdnn.heur_mode.A])
order = [g.get_plan_name_at_index(i) for i in range(g.get_execution_plan_count())]
print(json.dumps({"order": order, "engine": g.get_engine_name(), "logs": logs}))
"""


def ranked(tmp_path, env_value, preferred=""):
    if not EMULATED.is_file():
        pytest.fail(f"build the test plugins first ({EMULATED})")
    folder = tmp_path / "engines"
    folder.mkdir(parents=True)
    for lib in (REFERENCE, EMULATED):
        (folder / lib.name).symlink_to(lib)
    env = dict(os.environ, HIPDNN_PLUGIN_DIR=str(folder), HIPDNN_LOG_LEVEL="warn")
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("HIPDNN_ENGINE", None)
    if env_value is not None:
        env["HIPDNN_ENGINE"] = env_value
    r = subprocess.run([sys.executable, "-c", CHILD, preferred], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_hipdnn_engine_puts_the_engine_it_names_first(tmp_path):
    default = ranked(tmp_path / "a", None)
    assert sorted(default["order"]) == ["hip_emulated", "reference_cpu"], default
    assert default["logs"] == [], default
    second = default["order"][1]
    got = ranked(tmp_path / "b", second)
    assert got["order"] == [second, default["order"][0]] and got["engine"] == second, got


def test_hipdnn_engine_lists_engines_in_order_and_skips_unknown_names_with_a_warning(tmp_path):
    for order in (["reference_cpu", "hip_emulated"], ["hip_emulated", "reference_cpu"]):
        got = ranked(tmp_path / order[0], "no_such_engine, " + ",".join(order))
        assert got["order"] == order, got
        assert got["logs"] == ["HIPDNN_ENGINE names 'no_such_engine', which is not a loaded "
                               "engine (see `python -m hipdnn info`): skipped"], got


def test_the_graphs_preferred_engine_comes_before_hipdnn_engine(tmp_path):
    for env, preferred in (("reference_cpu", "hip_emulated"), ("hip_emulated", "reference_cpu")):
        got = ranked(tmp_path / env, env, preferred=preferred)
        assert got["order"] == [preferred, env] and got["engine"] == preferred, got
