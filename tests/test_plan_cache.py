"""The plan cache (csrc/backend/plan_cache.c, docs/engine_selection.md): autotuning's winner
for a graph on a device, stored under $HIPDNN_CACHE_DIR/plans and ranked first by later
processes' heuristics; damaged, foreign or other-device entries ignored with one log line;
concurrent writers; LRU eviction; HIPDNN_CACHE=0; `python -m hipdnn cache`.  Each process
is a child of tests/tuning.py (tune_engine's tune_a / tune_b and reference_cpu)."""
import os
import re
import subprocess
import sys
import time

from tuning import PACKAGE, build, child_env, entries, finish, run, start, tune, tuned_entries

HIT = "plan cache hit: graph 'r' runs on tune_b with knobs k1000=1"


def fnv64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def rewrite(path, field, value):
    """Sets one field of an entry and recomputes its check line: a well-formed entry that
    says something else."""
    lines = path.read_bytes().split(b"\n")[:-2]  # drop the check line and the end
    lines = [(field + b" " + value) if ln.split(b" ", 1)[0] == field else ln for ln in lines]
    body = b"\n".join(lines) + b"\n"
    path.write_bytes(body + b"check %016x\n" % fnv64(body))


def tuned(tmp_path, cache):
    """Autotunes the graph once (tune_a slow, so tune_b with knob 1 wins); its entry."""
    run(tmp_path, cache, [tune()], HIPDNN_TUNE_SLOW="tune_a")
    (entry,) = entries(cache)
    return entry


def test_a_later_process_gets_the_tuned_config_first_with_a_cache_hit(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    text = entry.read_text()
    assert re.fullmatch(r"HIPDNN-PLAN 1\nhipdnn \d+\.\d+\.\d+\ndevice host\nplugins "
                        r"reference_cpu \S+;tune_engine 1\.0\.0-test\ngraph \d+ [0-9a-f]{16}\n"
                        r"engine tune_b\nknobs 1000=1\ntime_ms \S+\ncheck [0-9a-f]{16}\n",
                        text), text
    got = run(tmp_path, cache, [build()])
    step = got["steps"][0]
    assert step["order"] == ["tune_b_k1000=1", "tune_a", "tune_b", "reference_cpu"], step
    assert step["engine"] == "tune_b" and step["correct"], step
    assert [m for m in got["logs"] if "plan cache" in m] == \
        [m for m in got["logs"] if m.startswith(HIT) and str(entry) in m], got["logs"]
    assert len([m for m in got["logs"] if m.startswith(HIT)]) == 1, got["logs"]


def test_another_graph_and_hipdnn_engine_are_not_overridden_by_the_entry(tmp_path):
    cache = tmp_path / "cache"
    tuned(tmp_path, cache)
    other = run(tmp_path, cache, [build(dims=(4, 9))])
    assert other["steps"][0]["order"][0] == "tune_a", other
    assert [m for m in other["logs"] if "plan cache" in m and "remembered" not in m] == [], \
        other["logs"]
    named = run(tmp_path, cache, [build()], HIPDNN_ENGINE="reference_cpu")["steps"][0]
    assert named["order"][:2] == ["reference_cpu", "tune_b_k1000=1"], named


def test_hipdnn_cache_0_neither_stores_nor_reads(tmp_path):
    cache = tmp_path / "cache"
    run(tmp_path, cache, [tune()], HIPDNN_TUNE_SLOW="tune_a", HIPDNN_CACHE=0)
    assert not (cache / "plans").exists()
    tuned(tmp_path, cache)
    got = run(tmp_path, cache, [build()], HIPDNN_CACHE=0)
    assert got["steps"][0]["order"][0] == "tune_a", got
    assert not any("plan cache" in m for m in got["logs"]), got["logs"]


def damaged_then_rewritten(tmp_path, cache, entry, expect_log, removed):
    """A process that finds the entry bad: one log line, no hit (a damaged file removed),
    and its own ranking remembered in its place; then autotune writes the tuned entry again
    and the next process hits."""
    got = run(tmp_path, cache, [build()])
    lines = [m for m in got["logs"] if "plan cache" in m]
    assert len(lines) == 2 and expect_log in lines[0] and str(entry) in lines[0], got["logs"]
    assert ("removed" in lines[0]) == removed, lines
    assert lines[1] == f"plan cache: remembered {entry} (engine tune_a, ranked first)", lines
    assert got["steps"][0]["order"][0] == "tune_a" and got["steps"][0]["correct"], got
    assert entries(cache) == [entry] and tuned_entries(cache) == []
    run(tmp_path, cache, [tune()], HIPDNN_TUNE_SLOW="tune_a")
    assert entries(cache) == [entry]
    again = run(tmp_path, cache, [build()])
    assert any(m.startswith(HIT) for m in again["logs"]), again["logs"]


def test_a_flipped_bit_is_caught_and_the_entry_removed_then_rewritten(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    data = bytearray(entry.read_bytes())
    data[data.index(b"engine tune_b") + 12] ^= 0x01  # tune_b -> tune_c
    entry.write_bytes(bytes(data))
    damaged_then_rewritten(tmp_path, cache, entry, "damaged or cut short", removed=True)


def test_a_truncated_entry_is_caught_and_removed_then_rewritten(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    entry.write_bytes(entry.read_bytes()[:-10])
    damaged_then_rewritten(tmp_path, cache, entry, "damaged or cut short", removed=True)


def test_an_entry_of_another_hipdnn_version_is_ignored_then_replaced(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    rewrite(entry, b"hipdnn", b"0.0.1")
    damaged_then_rewritten(tmp_path, cache, entry, "written by hipdnn 0.0.1, this is",
                           removed=False)


def test_an_entry_of_another_device_is_ignored_then_replaced(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    rewrite(entry, b"device", b"cuda:0:NVIDIA H200 sm_90 143771MiB driver 12080")
    damaged_then_rewritten(tmp_path, cache, entry, "tuned on device 'cuda:0:NVIDIA H200",
                           removed=False)


def test_an_entry_of_other_plugins_is_ignored_then_replaced(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    rewrite(entry, b"plugins", b"reference_cpu 0.1.0;tune_engine 1.0.0-test")
    damaged_then_rewritten(tmp_path, cache, entry, "tuned with plugins", removed=False)


def test_processes_racing_to_write_leave_only_whole_entries(tmp_path):
    cache = tmp_path / "cache"
    dims = [(4, 8), (4, 8), (4, 8), (3, 5), (3, 5), (2, 2)]
    procs = [start(tmp_path, cache, [tune(dims=d, budget_ms=50.0)] * 3, HIPDNN_TUNE_SLOW="tune_a")
             for d in dims]
    for p in procs:
        finish(p)
    assert len(entries(cache)) == 3, entries(cache)
    assert [p.name for p in (cache / "plans").iterdir() if p.name.startswith(".tmp")] == []
    got = run(tmp_path, cache, [build(dims=d) for d in sorted(set(dims))])
    hits = [m for m in got["logs"] if m.startswith(HIT)]
    assert len(hits) == 3 and not any("ignored" in m for m in got["logs"]), got["logs"]


def test_the_least_recently_used_entries_are_evicted(tmp_path):
    cache = tmp_path / "cache"
    limit = {"HIPDNN_CACHE_MAX_PLANS": 3, "HIPDNN_TUNE_SLOW": "tune_a"}
    for n in (1, 2, 3):
        run(tmp_path, cache, [tune(dims=(2, n), budget_ms=50.0)], **limit)
        time.sleep(0.02)  # distinct modification times
    run(tmp_path, cache, [build(dims=(2, 1))], **limit)  # a hit: (2, 1) is used again
    time.sleep(0.02)
    run(tmp_path, cache, [tune(dims=(2, 4), budget_ms=50.0)], **limit)
    assert len(entries(cache)) == 3, entries(cache)
    got = run(tmp_path, cache, [build(dims=(2, n)) for n in (1, 2, 3, 4)])
    hit = [s["order"][0] == "tune_b_k1000=1" for s in got["steps"]]
    assert hit == [True, False, True, True], got["steps"]


def cli(cache, *args, **extra):
    env = dict(os.environ, HIPDNN_CACHE_DIR=str(cache), **extra)
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("HIPDNN_KERNEL_CACHE_DIR", None)
    r = subprocess.run([sys.executable, "-m", "hipdnn", "cache", *args], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_python_m_hipdnn_cache_info_and_clear(tmp_path):
    cache = tmp_path / "cache"
    entry = tuned(tmp_path, cache)
    (cache / "kernels").mkdir()
    (cache / "kernels" / "pw-0123.kernel").write_bytes(b"x" * 10)
    size = entry.stat().st_size
    assert cli(cache) == [f"plans:   {cache}/plans: 1 entries, {size} bytes",
                          f"kernels: {cache}/kernels: 1 entries, 10 bytes"]
    assert cli(cache, "clear") == [f"plans:   removed 1 from {cache}/plans",
                                   f"kernels: removed 1 from {cache}/kernels"]
    assert entries(cache) == [] and list((cache / "kernels").iterdir()) == []
    assert cli(cache, "info") == [f"plans:   {cache}/plans: 0 entries, 0 bytes",
                                  f"kernels: {cache}/kernels: 0 entries, 0 bytes"]
    assert cli(cache, "info", HIPDNN_CACHE="0") == [
        "plans:   off (plan cache off: HIPDNN_CACHE=0)", "kernels: off (HIPDNN_CACHE=0)"]
