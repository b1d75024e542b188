"""hipdnn-ep and the plan cache (docs/onnxruntime.md, "Autotuning"; docs/engine_selection.md):
a fused node's plan is built through the backend's heuristics, so the plan cache's entry for
its graph, whoever autotuned it (Python, C or hipdnn-ep's own ep.hipdnn.autotune=1), goes
first in a later process.  The engines are the test plugin tests/tune_engine alone (tune_a
and tune_b, a float32 relu that sleeps 2 ms * |knob 1000 - 1|, 6 ms more for the engine in
$HIPDNN_TUNE_SLOW): the heuristics rank tune_a first, and the fastest config is tune_b with
knob 1000 = 1.  Each session is a fresh ort_run process with its own log."""
import json
import os
import re
import subprocess
import sys

import numpy as np

from test_ort_ep import EP_LIB, ORT_RUN, ORT_RUN_PY, RUNNER, helper, model, rand  # noqa: F401
from test_ort_ep_context import Payload, epcontext_nodes
from tuning import PACKAGE, TUNE_ENGINE, tuned_entries

DIMS = [4, 8]


def prepare(tmp_path):
    """A folder with the relu model and its input, and the environment: tune_engine alone,
    tune_a slow, the plan cache in tmp_path/cache."""
    engines = tmp_path / "engines"
    engines.mkdir()
    (engines / TUNE_ENGINE.name).symlink_to(TUNE_ENGINE)
    import onnx
    onnx.save(model([helper.make_node("Relu", ["x"], ["y"])], [("x", DIMS)], [("y", DIMS)]),
              str(tmp_path / "model.onnx"))
    x = rand(np.random.default_rng(7), *DIMS)
    np.save(tmp_path / "x.npy", x)
    env = dict(os.environ, HIPDNN_PLUGIN_DIR=str(engines), HIPDNN_CACHE_DIR=str(tmp_path / "cache"),
               HIPDNN_TUNE_SLOW="tune_a")
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("HIPDNN_ENGINE", "HIPDNN_CACHE", "HIPDNN_CACHE_MAX_PLANS"):
        env.pop(k, None)
    return env, x


def session(tmp_path, env, *args, model_path=None):
    """One ort_run process on hipdnn-ep's CPU device, log at info; (y, log)."""
    cmd = [str(ORT_RUN)] if RUNNER == "c" else [sys.executable, str(ORT_RUN_PY), "--ep-lib",
                                                str(EP_LIB)]
    cmd += ["--device", "cpu", "--opt-level", "disable", "--log-level", "1", "--option",
            "log_level=info", "--model", str(model_path or tmp_path / "model.onnx"),
            "--out-dir", str(tmp_path), "--input", f"x={tmp_path / 'x.npy'}", *args]
    (tmp_path / "y.0.npy").unlink(missing_ok=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert p.returncode == 0, p.stderr[-4000:]
    return np.load(tmp_path / "y.0.npy"), p.stderr


def built_on(log):
    return re.findall(r"plan 1 built on engine (\S+)", log)


def test_the_heuristics_rank_tune_a_first_without_a_cache_entry(tmp_path):
    env, x = prepare(tmp_path)
    y, log = session(tmp_path, env)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert built_on(log) == ["tune_a"] and "plan cache hit" not in log, log[-3000:]


AUTOTUNE_CHILD = r"""
import json, sys
import numpy as np
import hipdnn
graph, x_uid, y_uid = bytes.fromhex(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
g = hipdnn.pygraph()
g.deserialize(graph)
g.build([hipdnn.heur_mode.A])
xa = np.load(sys.argv[4])
ya = np.zeros_like(xa)
table = g.autotune({x_uid: xa, y_uid: ya}, budget_ms=400.0)
print(json.dumps([r.name for r in table if r.chosen]))
"""


def test_an_entry_python_autotuned_for_the_same_graph_is_used_by_hipdnn_ep(tmp_path):
    """The fused node's graph, as an EPContext payload holds it (hipdnn-ep's own bytes),
    autotuned through Python in another process: a later hipdnn-ep session's heuristics
    take the stored config first (mode A), with no timing of its own."""
    env, x = prepare(tmp_path)
    session(tmp_path, env, "--config", "ep.context_enable=1", "--config",
            "ep.context_embed_mode=1")
    [node] = epcontext_nodes(tmp_path / "model_ctx.onnx")
    p = Payload(next(a.s for a in node.attribute if a.name == "ep_cache_context"))
    [part] = p.parts
    uid = {kind: u for u, kind, _ in part["bindings"]}
    child = subprocess.run([sys.executable, "-c", AUTOTUNE_CHILD, part["graph"].hex(),
                            str(uid[0]), str(uid[1]), str(tmp_path / "x.npy")],
                           capture_output=True, text=True, timeout=180, env=env)
    assert child.returncode == 0, child.stderr[-3000:]
    assert json.loads(child.stdout.splitlines()[-1]) == ["tune_b_k1000=1"], child.stdout
    y, log = session(tmp_path, env)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert re.search(r"plan cache hit: graph 'hipdnn_\S+' runs on tune_b with knobs k1000=1 ",
                     log), log[-3000:]
    assert built_on(log) == ["tune_b"] and not re.search(r"autotune(d \d+|:)", log), log[-3000:]
    # the capability check and the plan took the short cut's one config: no other engine was
    # asked (PARTIAL_COUNT_EXT read first; docs/engine_selection.md)
    assert "ranked first (its tuned config) without asking the other engines" in log, log[-3000:]
    assert "the other engines asked now" not in log, log[-3000:]


def test_the_autotune_option_tunes_on_the_first_run_and_a_later_process_gets_it(tmp_path):
    """ep.hipdnn.autotune=1: the first run times every candidate on ORT's buffers (the
    output is then the real run's, the input unchanged), keeps tune_b k1000=1 and stores
    it; a later process without the option builds it first from the plan cache, untimed."""
    env, x = prepare(tmp_path)
    y, log = session(tmp_path, env, "--option", "autotune=1", "--option",
                     "autotune_budget_ms=400", "--input", f"x={tmp_path / 'x.npy'}")
    np.testing.assert_array_equal(y, np.maximum(x, 0))  # run 0's output; run 1 below
    np.testing.assert_array_equal(np.load(tmp_path / "y.1.npy"), np.maximum(x, 0))
    np.testing.assert_array_equal(np.load(tmp_path / "x.npy"), x)
    assert built_on(log) == ["tune_a"], log[-3000:]  # the heuristics' plan, before tuning
    rows = re.findall(r"autotune: (tune_[ab][^:]*): (median|failed)", log)
    assert ("tune_a", "median") in rows and ("tune_b", "median") in rows, log[-3000:]
    assert ("tune_b k1000=1", "median") in rows and len(rows) >= 8, rows
    chosen = re.findall(r"autotune: ([^:]+): median [^\n]*<- chosen", log)
    assert chosen == ["tune_b k1000=1"], log[-3000:]
    assert len(re.findall(r"autotuned \d+ configs", log)) == 1, log[-3000:]  # once, not per run
    assert "runs on tune_b k1000=1 from now on" in log
    assert len(tuned_entries(tmp_path / "cache")) == 1
    y, log = session(tmp_path, env)
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert re.search(r"plan cache hit: graph 'hipdnn_\S+' runs on tune_b with knobs k1000=1 ",
                     log), log[-3000:]
    assert built_on(log) == ["tune_b"] and not re.search(r"autotune(d \d+|:)", log), log[-3000:]
    # with the option still on, what the cache holds is not tuned again
    y, log = session(tmp_path, env, "--option", "autotune=1", "--option",
                     "autotune_budget_ms=400")
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    assert built_on(log) == ["tune_b"] and not re.search(r"autotuned \d+", log), log[-3000:]
    assert re.search(r"autotune: the plan on tune_b is the plan cache's tuned one; not tuned "
                     "again", log), log[-3000:]


def test_the_autotune_option_on_the_gpu_device(tmp_path, monkeypatch):
    """On the fake GPU (the emulated hip engine; on a GPU machine, its GPU): each fused node's
    knob variants are timed with the runtime's events on ORT's stream, the outputs are the
    real run's, and a later process gets both tuned configs from the plan cache."""
    from test_ort_ep import run
    from test_ort_ep_context import TOL, conv_block
    from test_ort_ep_models import devices
    monkeypatch.setenv("HIPDNN_CACHE_DIR", str(tmp_path / "cache"))
    m, feeds = conv_block(np.random.default_rng(3))
    want, _, _ = run(tmp_path, m, feeds, ep="cpu")
    device = "gpu" if "gpu" in devices() else None
    opts = {"autotune": "1", "autotune_budget_ms": "200"}
    got, _, err = run(tmp_path, m, feeds, device=device, options=opts, log_level=1)
    np.testing.assert_allclose(got["y"][0], want["y"][0], **TOL)
    assert len(re.findall(r"autotuned \d+ configs", err)) == 2, err[-3000:]
    assert "(device events)" in err and "<- chosen" in err
    assert len(tuned_entries(tmp_path / "cache")) == 2
    got, _, err = run(tmp_path, m, feeds, device=device, options={"log_level": "info"},
                      log_level=1)
    np.testing.assert_allclose(got["y"][0], want["y"][0], **TOL)
    assert len(re.findall(r"plan cache hit: graph 'hipdnn_", err)) == 2, err[-3000:]
    assert not re.search(r"autotune(d \d+|:)", err)
    got, _, err = run(tmp_path, m, feeds, device=device, options=dict(opts, log_level="info"),
                      log_level=1)  # the option on again: both plans are the cache's
    np.testing.assert_allclose(got["y"][0], want["y"][0], **TOL)
    assert not re.findall(r"autotuned \d+ configs", err), err[-3000:]
    assert len(re.findall(r"is the plan cache's tuned one; not tuned again", err)) == 2, err[-3000:]
