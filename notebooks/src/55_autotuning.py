# %% [markdown]
# # 55 · Autotuning and the plan cache: time the candidates once, keep the fastest
#
# Several engines (and, within an engine, several knob settings) may run the same graph.
# The heuristics rank them without running anything; `pygraph.autotune` runs them all on
# your own arrays, keeps the fastest, and writes the choice to an on-disk **plan cache**,
# so every later process that builds the same graph on this machine gets it first, without
# timing again ([docs/engine_selection.md](../docs/engine_selection.md)).
#
# This notebook tunes a `relu(x @ w)` graph on the engines of this machine, plots the
# timing table, and shows a second process getting the tuned config from the cache. On a
# machine without a GPU the only engine is `reference_cpu` (no knobs): the table has one
# row. With a GPU and arrays in device memory (notebook 40), the table grows to every
# device engine and its knob values: the `hip` engine's split-k counts, kernels and tile
# widths, `cudnn`'s and `blaslt`'s configs.

# %%
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

# A cache folder of this notebook's own, so that your real cache (~/.cache/hipdnn) is left
# alone; without this line autotune writes there.
CACHE = tempfile.mkdtemp(prefix="hipdnn_nb55_")
os.environ["HIPDNN_CACHE_DIR"] = CACHE
print("hipdnn", hipdnn.__version__, "| engines:", [e.name for e in hipdnn.engines()])
print("plan cache:", CACHE)

# %% [markdown]
# ## The graph
#
# The graph is built by a few lines kept in a string, so that the second process below
# builds the very same graph: the cache is keyed by the graph's bytes (its ops, shapes,
# types and names) and the device, so a graph that differs in anything is a new entry.

# %%
BUILD = '''
import hipdnn
g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                   compute_data_type=hipdnn.data_type.FLOAT, name="mm_relu")
x = g.tensor(name="x", dim=[1, 192, 256])
w = g.tensor(name="w", dim=[1, 256, 128])
y = g.relu(g.matmul(x, w, name="mm"), name="act")
y.set_output(True)
g.build([hipdnn.heur_mode.A])
'''
scope = {}
exec(BUILD, scope)
g, x, w, y = scope["g"], scope["x"], scope["w"], scope["y"]
print("heuristics' order:", [g.get_plan_name_at_index(i)
                             for i in range(g.get_execution_plan_count())])

# %% [markdown]
# ## Autotuning
#
# `autotune` builds every config (each engine's default and the knob values the engine
# says it takes), runs each once untimed, then times it until `repeat` runs, until the
# last three agree within 2 %, or until its share of `budget_ms` is spent. Host plans are
# timed with the host clock, device plans with the device's events. The output array is
# put back as it was (here: NaN) and the inputs are only read; afterwards `execute()`
# runs the winner.
#
# **Tolerance.** matmul and pointwise in float32: 1e-5 (atol = rtol) against a float64
# NumPy reference.

# %%
rng = np.random.default_rng(55)


def rand(*shape):
    """Uniform magnitudes in [0.1, 1) with random signs: never zero, never tiny."""
    return (rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(np.float32)


xa, wa = rand(1, 192, 256), rand(1, 256, 128)
ya = np.full((1, 192, 128), np.nan, np.float32)
x_before, w_before = xa.copy(), wa.copy()

table = g.autotune({x: xa, w: wa, y: ya}, budget_ms=500, repeat=10)
assert np.isnan(ya).all(), "autotune left its output in y"

print(f"{'config':<28} {'status':<10} {'median ms':>10} {'min ms':>8} {'runs':>5}  timer")
for r in table:
    med = f"{r.median_ms:.3f}" if r.median_ms is not None else "-"
    low = f"{r.min_ms:.3f}" if r.min_ms is not None else "-"
    print(f"{r.name:<28} {r.status:<10} {med:>10} {low:>8} {r.runs:>5}  {r.timer}"
          f"{'  <- chosen' if r.chosen else ''}{'  (' + r.reason + ')' if r.reason else ''}")

g.execute({x: xa, w: wa, y: ya})
ref = np.maximum(xa.astype(np.float64) @ wa.astype(np.float64), 0.0)
err = np.abs(ya - ref)
ratio = float((err / (1e-5 + 1e-5 * np.abs(ref))).max())
print(f"\nexecute() ran {g.get_engine_name()}: max |error| {err.max():.2e}, "
      f"{ratio:.2g} of the bound")
assert ratio <= 1.0 and np.isfinite(ya).all()
assert np.array_equal(xa, x_before) and np.array_equal(wa, w_before), "an input changed"

# %% [markdown]
# ## The timing table as a plot
#
# One bar per config that ran: its median, with a tick at its fastest run; the chosen one
# is highlighted. Configs that did not run (not built here, or in the other memory than
# the arrays) are listed under the plot with the reason.

# %%
ran = [r for r in table if r.status == "ok"]
fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * len(ran)))
ypos = np.arange(len(ran))
ax.barh(ypos, [r.median_ms for r in ran],
        color=["tab:orange" if r.chosen else "tab:blue" for r in ran], label="median")
ax.plot([r.min_ms for r in ran], ypos, "k|", markersize=14, label="fastest run")
ax.set_yticks(ypos, [r.name for r in ran])
ax.invert_yaxis()
ax.set_xlabel("ms per execute")
ax.set_title(f"autotune of graph '{g.name}' (orange: chosen)")
ax.legend(loc="lower right")
plt.tight_layout()
plt.show()
for r in table:
    if r.status != "ok":
        print(f"{r.name}: {r.status}: {r.reason}")

# %% [markdown]
# ## A second process gets the tuned config
#
# A fresh interpreter builds the same graph and asks the heuristics (mode A) as any
# program would: the plan cache's entry goes first, and the log (level info) says
# `plan cache hit`. The same lookup is in the backend, so C programs and hipdnn-ep get it
# too.

# %%
CHILD = ("import hipdnn, json\nlogs = []\nhipdnn.set_log_level('info')\n"
         "hipdnn.set_log_callback(lambda level, msg: logs.append(msg))\n" + BUILD +
         "print(json.dumps({'first': g.get_plan_name_at_index(0), "
         "'hits': [m for m in logs if 'plan cache' in m]}))\n")
env = dict(os.environ, PYTHONPATH=str(Path(hipdnn.__file__).resolve().parent.parent))
out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                     timeout=120)
assert out.returncode == 0, out.stderr
child = json.loads(out.stdout.splitlines()[-1])
chosen = next(r for r in table if r.chosen)
print("second process ranks first:", child["first"])
for line in child["hits"]:
    print("log:", line)
assert child["first"] == chosen.name, (child, chosen.name)
assert any("plan cache hit" in m for m in child["hits"]), child

# %% [markdown]
# ## Looking at the cache, and clearing it
#
# `python -m hipdnn cache info` prints the folders, entries and bytes of the plan cache
# and the `hip` engine's kernel cache; `python -m hipdnn cache clear` empties both.
# `HIPDNN_CACHE=0` turns the caches off.

# %%
for args in (["cache", "info"], ["cache", "clear"]):
    run = subprocess.run([sys.executable, "-m", "hipdnn", *args], env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    print("$ python -m hipdnn", " ".join(args))
    print(run.stdout)
shutil.rmtree(CACHE)
