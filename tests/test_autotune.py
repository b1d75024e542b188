"""pygraph.autotune and hipdnnAutotune_ext (docs/engine_selection.md): every engine config
(engines x knob values) timed on the user's arrays, the fastest kept.  The engines are
tests/tune_engine's tune_a and tune_b, whose speed each test sets: every execute sleeps
2 ms * |knob 1000 - 1|, plus 6 ms for the engine $HIPDNN_TUNE_SLOW names; knob 1001 takes
0 to 12 in steps of 4 and knob 1002 only 0, 64, 128 or 256, and a tile over four times the
element count does not build (tests/tuning.py runs each case in a child process with its
own plugins and cache)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import hipdnn
from hipdnn._pygraph.autotune import _knob_values, _round_robin, _variants
from tuning import build, child_env, entries, run, tune, tuned_entries

# each engine's default, then one knob at a time (3 x 4 x 4 combinations are over 32); at
# (4, 8), 32 elements, tile 256 does not build and is left out
VARIANTS = ["k1000=1", "k1000=2", "k1001=4", "k1001=8", "k1001=12", "k1002=64", "k1002=128"]
ALL_CONFIGS = {"tune_a", "tune_b"} | {f"tune_{e}_{v}" for e in "ab" for v in VARIANTS}


def test_autotune_picks_the_faster_engine_though_heuristics_rank_the_slower_first(tmp_path):
    got = run(tmp_path, tmp_path / "cache", [tune()], HIPDNN_TUNE_SLOW="tune_a")["steps"][0]
    assert got["order"] == ["tune_a", "tune_b"], got  # tune_a has the higher priority
    table = {r["name"]: r for r in got["table"]}
    assert set(table) == ALL_CONFIGS, table
    chosen = [r for r in got["table"] if r["chosen"]]
    assert [r["name"] for r in chosen] == ["tune_b_k1000=1"], got["table"]
    assert got["engine"] == "tune_b" and got["correct"], got
    for r in got["table"]:
        assert r["status"] == "ok" and r["timer"] == "host clock" and r["runs"] >= 1, r
        assert r["min_ms"] <= r["median_ms"], r
        assert chosen[0]["median_ms"] <= r["median_ms"], (chosen, r)
    # the slow engine's best is its own knob 1: 6 ms, against 8 ms for its other values
    assert table["tune_a_k1000=1"]["median_ms"] >= 5.5, table
    assert table["tune_a_k1000=2"]["median_ms"] >= 7.5, table


def test_autotune_picks_the_other_engine_when_it_is_the_slow_one(tmp_path):
    got = run(tmp_path, tmp_path / "cache", [tune()], HIPDNN_TUNE_SLOW="tune_b")["steps"][0]
    assert [r["name"] for r in got["table"] if r["chosen"]] == ["tune_a_k1000=1"], got
    assert got["engine"] == "tune_a" and got["correct"], got


def test_autotune_puts_the_outputs_back_and_leaves_the_inputs_unchanged(tmp_path):
    got = run(tmp_path, tmp_path / "cache", [tune()])["steps"][0]
    assert got["y_kept"] and got["x_kept"], got
    assert got["correct"], got  # the execute after it still writes relu(x)


def test_autotune_stops_each_config_at_repeat_or_when_its_budget_share_is_spent(tmp_path):
    steps = [tune(repeat=2, budget_ms=10_000.0), tune(dims=(2, 8), budget_ms=0.01, repeat=50)]
    first, second = run(tmp_path, tmp_path / "cache", steps)["steps"]
    assert all(r["runs"] <= 2 for r in first["table"]), first["table"]
    # a config whose one timed run outlasts its share (0.01 ms / configs) stops there; the
    # ones that do not sleep (knob 1000 = 1) may take under a microsecond, so may run again
    share = 0.01 / len(second["table"])
    assert all(r["runs"] == 1 or r["min_ms"] < share for r in second["table"]), second["table"]
    assert sum(r["median_ms"] >= 1.0 for r in second["table"]) >= 8, second["table"]


def test_autotune_with_store_false_writes_no_plan_cache_entry(tmp_path):
    cache = tmp_path / "cache"
    got = run(tmp_path, cache, [tune(store=False), build()], HIPDNN_TUNE_SLOW="tune_a")
    assert tuned_entries(cache) == [], entries(cache)  # the heuristics' ranking only
    assert not any("plan cache hit" in m for m in got["logs"]), got["logs"]


def relu_graph(n):
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT, name=f"relu{n}")
    x = g.tensor(name="x", dim=[2, n])
    y = g.relu(x, name="act")
    y.set_output(True)
    return g, x, y


def test_autotune_checks_its_arguments():
    g, x, y = relu_graph(4)
    xa, ya = np.ones((2, 4), np.float32), np.zeros((2, 4), np.float32)
    g.validate()
    with pytest.raises(hipdnn.HipdnnError, match="needs create_execution_plans"):
        g.autotune({x: xa, y: ya})
    g.build([hipdnn.heur_mode.A])
    with pytest.raises(ValueError, match="budget_ms must be a number >= 0.001"):
        g.autotune({x: xa, y: ya}, budget_ms=0)
    with pytest.raises(TypeError, match="repeat must be an int"):
        g.autotune({x: xa, y: ya}, repeat="3")
    with pytest.raises(ValueError, match="warmup must be an int >= 0"):
        g.autotune({x: xa, y: ya}, warmup=-1)
    with pytest.raises(ValueError, match="no array for"):
        g.autotune({x: xa})


def test_the_c_call_refuses_plans_of_another_graph():
    g1, x, y = relu_graph(4)
    g2, *_ = relu_graph(6)
    for g in (g1, g2):
        g.build([hipdnn.heur_mode.A])
        g.build_plans()
    plan1, plan2 = g1._plans[g1._candidate], g2._plans[g2._candidate]
    arrays = g1._arrays_for(plan1, {x: np.ones((2, 4), np.float32),
                                    y: np.zeros((2, 4), np.float32)})
    with pytest.raises(ValueError, match="plan 1 is for another graph than plan 0"):
        plan1.pack.autotune(hipdnn.default_handle(), arrays, None, [plan1.desc, plan2.desc],
                            store=False)
    with pytest.raises(ValueError, match="plans must be a non-empty list"):
        plan1.pack.autotune(hipdnn.default_handle(), arrays, None, [], store=False)


def test_the_sweep_times_only_values_a_knob_takes_and_leaves_out_plans_that_do_not_build(
        tmp_path):
    got = run(tmp_path, tmp_path / "cache", [tune()])
    table = got["steps"][0]["table"]
    assert {r["name"] for r in table} == ALL_CONFIGS, table
    assert all(r["status"] == "ok" for r in table), table
    left_out = [m for m in got["logs"] if "did not build" in m]
    assert len(left_out) == 2, got["logs"]  # one line per engine
    for e in "ab":
        line = next(m for m in left_out if f"engine 'tune_{e}'" in m)
        assert "1 knob config(s)" in line and f"tune_{e}_k1002=256" in line, line
        assert "over four times the tensor's 32 elements" in line, line


def test_max_configs_lets_each_engine_add_variants_in_turn(tmp_path):
    got = run(tmp_path, tmp_path / "cache", [tune(max_configs=6)])["steps"][0]
    names = [r["name"] for r in got["table"]]
    assert names == ["tune_a", "tune_b", "tune_a_k1000=1", "tune_b_k1000=1",
                     "tune_a_k1001=4", "tune_b_k1001=4"], names


KNOBS = r"""
import json
import hipdnn
g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, name="k")
x = g.tensor(name="x", dim=[4, 8])
g.relu(x).set_output(True)
g.validate()
names = [e.name for e in hipdnn.engines()]
knobs = [tuple(k) for k in g.get_knobs_for_engine(names.index("tune_a"))]
try:
    g.create_execution_plan(names.index("tune_a"), {1001: 6})
    refused = ""
except Exception as e:
    refused = f"{type(e).__name__}: {e}"
print(json.dumps({"knobs": knobs, "refused": refused}))
"""


def test_a_knob_says_its_stride_and_values_and_other_values_are_refused(tmp_path):
    out = subprocess.run([sys.executable, "-c", KNOBS], env=child_env(tmp_path, tmp_path / "c"),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["knobs"] == [[1000, 2, 0, 1, []], [1001, 12, 0, 4, []],
                            [1002, 256, 0, 64, [0, 64, 128, 256]]], got
    assert "knob 1001 of engine 'tune_a' takes 0 to 12 in steps of 4, not 6" in got["refused"], got


def test_knob_values_follow_the_stride_the_list_and_powers_of_two():
    # the hip engine's knobs: split-k 0 to 64, kernel 0 to 3, tile width 0, 64, 128 or 256
    assert _knob_values(0, 64, 0, 1, ()) == [0, 1, 2, 4, 8, 16, 32, 64]
    assert _knob_values(0, 3, 0, 1, ()) == [0, 1, 2, 3]
    assert _knob_values(0, 256, 0, 64, (0, 64, 128, 256)) == [0, 64, 128, 256]
    assert _knob_values(0, 12, 4, 4, ()) == [4, 0, 8, 12]  # the default first
    spread = _knob_values(0, 1000, 0, 3, ())  # no power of two is on this stride
    assert len(spread) == 8 and all(v % 3 == 0 for v in spread), spread
    assert spread[0] == 0 and max(spread) == 999, spread
    assert _knob_values(1, 1000, 1, 3, ()) == [1, 4, 16, 64, 256, 1000]
    hip = [(9, 0, 64, 0, 1, ()), (12, 0, 3, 0, 1, ()), (27, 0, 256, 0, 64, (0, 64, 128, 256))]
    variants = _variants(hip)
    assert len(variants) == 7 + 3 + 3 and all(len(v) == 1 for v in variants), variants
    assert variants[:3] == [((9, 1),), ((12, 1),), ((27, 64),)], variants
    assert {v[0][1] for v in variants if v[0][0] == 27} == {64, 128, 256}, variants
    assert _variants([(1, 0, 1, 0, 1, ()), (2, 0, 4, 0, 4, ())]) == [
        ((2, 4),), ((1, 1),), ((1, 1), (2, 4))]
    assert _round_robin([[1, 2, 3], [4], [5, 6]]) == [1, 4, 5, 2, 6, 3]
