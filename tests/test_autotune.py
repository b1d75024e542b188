"""pygraph.autotune and hipdnnAutotune_ext (docs/engine_selection.md): every engine config
(engines x knob values) timed on the user's arrays, the fastest kept.  The engines are
tests/tune_engine's tune_a and tune_b, whose speed each test sets: every execute sleeps
2 ms * |knob 1000 - 1|, plus 6 ms for the engine $HIPDNN_TUNE_SLOW names (tests/tuning.py
runs each case in a child process with its own plugins and cache)."""
import numpy as np
import pytest

import hipdnn
from tuning import build, entries, run, tune

ALL_CONFIGS = {"tune_a", "tune_b"} | {f"tune_{e}_k1000={v}" for e in "ab" for v in range(3)}


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
    assert all(r["runs"] == 1 for r in second["table"]), second["table"]


def test_autotune_with_store_false_writes_no_plan_cache_entry(tmp_path):
    cache = tmp_path / "cache"
    got = run(tmp_path, cache, [tune(store=False), build()], HIPDNN_TUNE_SLOW="tune_a")
    assert entries(cache) == [], entries(cache)
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
