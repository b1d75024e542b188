# %% [markdown]
# # 02 · Plugins and engines: who runs a graph, and why one says no
#
# hipdnn's core does not compute anything itself. The work is done by **engines**, which
# live in **plugins**: shared libraries the backend loads from a folder when the first
# handle is made (or the first engine query runs).
#
# * `reference_cpu` runs every operation on the CPU, in float64, rounding once into each
#   output: the engine that is always there, and the yardstick for the others.
# * `hip` runs memory-bound graphs (pointwise chains, reductions, norms, ...) on AMD and
#   NVIDIA GPUs. Its plugin declines to load on a machine without a GPU, and says why.
#
# When a graph is built, every engine is asked whether it can run it. An engine that
# cannot **declines** with a one-line reason; declining is not an error. Only when every
# engine declines does the build fail, and the error lists each engine's reason.

# %%
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "from", Path(hipdnn.__file__).parent)
dt = hipdnn.data_type
rng = np.random.default_rng(2)


def rand(*shape, dtype=np.float32):
    """Uniform magnitudes in [0.1, 1) with random signs: never zero, never tiny."""
    values = rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
    return values.astype(dtype)

# %% [markdown]
# ## What is loaded here
#
# The folders searched, the plugins loaded, the ones skipped (with the reason: on a
# machine without a GPU, the GPU plugin is listed here if it was built) and the engines
# the loaded plugins registered. `python -m hipdnn info` prints the same.

# %%
print("searched:", hipdnn.plugin_search_paths())
for path in hipdnn.loaded_engine_plugin_paths():
    print("loaded: ", path)
for path, reason in hipdnn.skipped_engine_plugins():
    print("not loaded:", Path(path).name, "->", reason)

print(f"\n{'engine':<16} {'id':<20} {'memory':<8} {'priority':>8}  fallback")
for e in hipdnn.engines():
    print(f"{e.name:<16} {e.id:#018x}   {e.memory_space.name:<8} {e.priority:>8}  {e.is_fallback}")

names = [e.name for e in hipdnn.engines()]
assert "reference_cpu" in names

# %% [markdown]
# An engine's id is not a counter: it is the 64-bit FNV-1a hash of its name, the same in
# every process and every build, so a plan serialized with its engine id stays valid.
# Computing the hash here gives the id the backend reports:

# %%
def fnv1a64(text):
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) % 2**64
    return h


for e in hipdnn.engines():
    assert e.id == fnv1a64(e.name), e.name
print("every engine id is the FNV-1a 64 hash of its name")

# %% [markdown]
# ## Why a graph is not supported
#
# The reference engine runs every operation, but not every *mode* of every operation.
# Pooling (`resample`) by nearest-neighbour upsampling is one it declines. The build then
# raises `GraphNotSupportedError`, whose text has one line per engine and whose
# `.reasons` maps each engine to its reason. The reason names the engine, the node and
# the operation, and says what would be accepted.

# %%
def upsample_graph(mode):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="pool")
    X = g.tensor_like(rand(2, 3, 8, 8), name="x")
    y, _ = g.resample(input=X, resampling_mode=mode, window=[2, 2], stride=[2, 2], name="up")
    y.set_output(True)
    return g


g = upsample_graph(hipdnn.resample_mode.NEAREST)
try:
    g.build([hipdnn.heur_mode.A])
except hipdnn.GraphNotSupportedError as e:
    print(type(e).__name__ + ":", e)
    reasons = e.reasons
else:
    raise AssertionError("NEAREST resampling was accepted")

assert "node 'up'" in reasons["reference_cpu"] and "NEAREST" in reasons["reference_cpu"]

# %% [markdown]
# The same graph with max pooling builds. `support_report()` gives what each engine said
# (`None`: it accepted). On a machine with the GPU engine, `hip` shows up here too.

# %%
g = upsample_graph(hipdnn.resample_mode.MAXPOOL)
g.build([hipdnn.heur_mode.A])
for engine, reason in g.support_report():
    print(f"{engine}: {'accepts' if reason is None else reason}")
print("runs on:", g.get_engine_name())

# %% [markdown]
# A graph can also be refused before any engine is asked: an **invalid** graph (shapes
# that do not fit together) raises `InvalidGraphError` from the backend's own checks,
# naming the node and both shapes. An unsupported graph is valid, just not runnable by
# the engines at hand.

# %%
g = hipdnn.pygraph(io_data_type=dt.FLOAT)
A = g.tensor(name="a", dim=[4, 5])
B = g.tensor(name="b", dim=[6, 7])
g.matmul(A=A, B=B, name="fc1").set_output(True)
try:
    g.build([hipdnn.heur_mode.A])
except hipdnn.InvalidGraphError as e:
    print(type(e).__name__ + ":", e)
    assert "fc1" in str(e)
else:
    raise AssertionError("a matmul of [4, 5] by [6, 7] was accepted")

# %% [markdown]
# ## Choosing engines: preferred and deselected
#
# Before plans are created, a graph can rank one engine first
# (`set_preferred_engine(name)`; it still has to accept the graph) or leave engines out
# (`deselect_engines([...])`: every engine whose name contains one of the strings, as
# cuDNN frontend matches its engine tags). A deselected engine's reason says so.
#
# Heuristic modes rank the rest: `A` by the active heuristic plugin (the shipped
# `cost_model`: a roofline estimate with each engine's measured efficiency on the graph's
# kind, so that on a GPU the fastest engine measured goes first; ties, and
# `HIPDNN_HEURISTIC=builtin`, by each engine's priority), `B` device engines first,
# `FALLBACK` the reference engine only.

# %%
def relu_graph():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="act")
    X = g.tensor_like(rand(4, 8), name="x")
    g.relu(input=X, name="relu").set_output(True)
    return g


g = relu_graph()
g.set_preferred_engine("reference_cpu")
g.build([hipdnn.heur_mode.A])
print("preferred reference_cpu ->", g.get_engine_name())

g = relu_graph()
g.build([hipdnn.heur_mode.FALLBACK])
print("heur_mode.FALLBACK ->", g.get_engine_name())
assert g.get_engine_name() == "reference_cpu"

g = relu_graph()
g.deselect_engines(["reference"])
try:
    g.build([hipdnn.heur_mode.A])
except hipdnn.GraphNotSupportedError as e:
    print(e)
    assert e.reasons["reference_cpu"] == "deselected by the user"
else:
    raise AssertionError("the graph built with its only engine deselected")

g = relu_graph()
g.set_preferred_engine("tensor_cores")
try:
    g.build([hipdnn.heur_mode.A])
except ValueError as e:
    print("ValueError:", e)
    assert "tensor_cores" in str(e)
else:
    raise AssertionError("an engine name that is not loaded was accepted")

# %% [markdown]
# ## Watching the backend: the log
#
# `hipdnn.set_log_level("info")` and a log callback show what the backend does: which
# plugins it loads (when they load) and what each plan holds: here three pointwise nodes
# that the reference engine fuses into one pass, so `x * y + b` is never written out.

# %%
messages = []
hipdnn.set_log_callback(lambda level, message: messages.append((level.name, message)))
hipdnn.set_log_level("info")
with hipdnn.Graph() as fg:
    fg.tanh(fg.add(fg.mul(rand(64, 64), rand(64, 64)), rand(1, 64)))
fg()
hipdnn._C.flush_log()  # deliver now rather than at the next hipdnn call
hipdnn.set_log_callback(None)
hipdnn.set_log_level("warn")
for level, message in messages:
    print(level, message)
assert any("fused pointwise run" in m for _, m in messages)

# %% [markdown]
# ## `HIPDNN_PLUGIN_DIR`: another plugin folder
#
# The plugin registry is global to the process and fixed when plugins first load: the
# variable is read then, and `hipdnn.set_engine_plugin_paths` (the same from Python) is
# refused afterwards. This kernel loaded its plugins above:

# %%
try:
    hipdnn.set_engine_plugin_paths([tempfile.gettempdir()])
except hipdnn.NotSupportedError as e:
    print(type(e).__name__ + ":", e)
else:
    raise AssertionError("plugin paths were changed after the plugins had loaded")

# %% [markdown]
# So a different folder needs a new process. The cell below makes a folder holding a copy
# of the reference plugin and some files a deployment can leave behind by accident (a
# text file named `*.so`, an empty `*.so`), and, when the build folder is found
# (`$HIPDNN_BUILD_DIR` or `../build`), the test plugins of `tests/plugins/`: one whose
# engine declines every graph, one that does not say why, one whose init fails as a GPU
# plugin's does without its GPU, one speaking another plugin API version. A subprocess
# with `HIPDNN_PLUGIN_DIR` pointing there reports what loaded, what was skipped and why,
# and what its engines say of a graph.

# %%
REPO = Path.cwd().parent
build_dir = Path(os.environ.get("HIPDNN_BUILD_DIR") or REPO / "build")
test_plugins = sorted((build_dir / "tests" / "plugins").glob("lib*.so"))
wanted = ["libdeclines_all.so", "libno_reason.so", "libinit_fails.so", "libbad_abi_version.so"]
test_plugins = [p for p in test_plugins if p.name in wanted]
if not test_plugins:
    print(f"no test plugins in {build_dir / 'tests' / 'plugins'}: "
          "showing the reference plugin and broken files only")

reference_plugin = Path(next(e.plugin_path for e in hipdnn.engines()
                             if e.name == "reference_cpu"))
folder = Path(tempfile.mkdtemp(prefix="hipdnn-plugins-"))
for plugin in [reference_plugin] + test_plugins:
    shutil.copy(plugin, folder / plugin.name)
(folder / "README.so").write_text("not a library\n")
(folder / "empty.so").touch()
print(sorted(p.name for p in folder.iterdir()))

CHILD = r"""
import json, numpy as np, hipdnn
dt = hipdnn.data_type
report = {"loaded": [p.rsplit("/", 1)[1] for p in hipdnn.loaded_engine_plugin_paths()],
          "skipped": {p.rsplit("/", 1)[1]: r for p, r in hipdnn.skipped_engine_plugins()},
          "engines": [e.name for e in hipdnn.engines()]}
x = np.random.default_rng(0).uniform(0.1, 1.0, (4, 8)).astype(np.float32)
g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
g.relu(input=g.tensor_like(x, name="x"), name="relu").set_output(True)
if "declines_all" in report["engines"]:
    g.set_preferred_engine("declines_all")
g.build([hipdnn.heur_mode.A])
report["support"] = dict(g.support_report())
report["ran_on"] = g.get_engine_name()
print(json.dumps(report))
"""
env = dict(os.environ, HIPDNN_PLUGIN_DIR=str(folder), HIPDNN_LOG_LEVEL="warn",
           PYTHONPATH=str(Path(hipdnn.__file__).parent.parent))
child = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                       text=True, timeout=120)
shutil.rmtree(folder)
assert child.returncode == 0, child.stderr
print("the child's log (stderr):")
print(child.stderr)
report = json.loads(child.stdout)
print(json.dumps(report, indent=1))

# %% [markdown]
# What to read in it:
#
# * the two broken files were skipped, each with its reason, and the other plugins still
#   loaded (a refusal is one log line naming the path, never a crash);
# * with the test plugins, the plugin whose init failed and the one speaking plugin API
#   2.0 were skipped with the plugin's own message and both versions;
# * `declines_all` was preferred but declined with its reason, `no_reason` got the
#   backend's default reason, and the graph ran on the engine that accepted it.

# %%
assert reference_plugin.name in report["loaded"]
assert "not an ELF file" in report["skipped"]["README.so"]
assert "empty" in report["skipped"]["empty.so"]
assert report["ran_on"] == "reference_cpu" and report["support"]["reference_cpu"] is None
if test_plugins:
    assert report["skipped"]["libinit_fails.so"] == "init failed: init_fails: no device found"
    assert "API 2.0" in report["skipped"]["libbad_abi_version.so"]
    assert report["support"]["declines_all"] == \
        "declines_all: this test engine declines every graph"
    assert report["support"]["no_reason"] == "declined, no reason given"
    print("preferred 'declines_all' declined; the graph ran on", report["ran_on"])
