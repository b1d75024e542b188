# %% [markdown]
# # 50 · Performance: hipdnn against PyTorch, from `benchmarks/history/`
#
# The benchmarks are run on GPU machines by `benchmarks/gpu_bench.py` (through
# `tools/gpu_check.sh`) and on the CPU by `benchmarks/cpu_bench.py`; each run is filed in
# `benchmarks/history/` with what was measured and why the numbers are what they are
# (`benchmarks/RESULTS.md` holds the latest row of each case). This notebook reads those
# files, so it needs no GPU and runs nothing heavy: it parses the tables, checks that each
# table agrees with itself, and plots them.
#
# How to read the GPU numbers:
#
# * every hipdnn result was checked against a float64 reference before it was timed;
# * times are medians of CUDA-event timings after warm-up, on the same data for every
#   implementation;
# * "of copy" is the achieved bandwidth over the device's own device-to-device copy
#   bandwidth: for memory-bound ops, 100 % is the ceiling;
# * runs happened on H100s and H200s: compare **ratios** within a run (hipdnn against
#   PyTorch eager on the same machine), not times across runs.

# %%
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

HISTORY = Path.cwd().parent / "benchmarks" / "history"
RUNS = sorted(p for p in HISTORY.glob("*.md") if p.name != "README.md")  # date, then order
text = "\n\n".join(p.read_text(encoding="utf-8") for p in RUNS)
print(HISTORY, f"({len(RUNS)} files, {len(text.splitlines())} lines)")

# %% [markdown]
# ## Parsing the GPU tables
#
# Each GPU run is a fixed-width table that starts with a `device:` line (the GPU and its
# measured copy bandwidth) and has one row per implementation of a case:
#
# ```text
# case (elements)      implementation           time     GB/s  of copy  ratios
# softmax (2^27)        hipdnn hip, row-wise  0.395ms     1358    46.0%  1.07x vs torch eager
# ```
#
# A run is named by the heading above it. The hipdnn row that carries the ratios is the
# implementation hipdnn runs by default; other hipdnn rows force another kernel, to
# compare.

# %%
DEVICE = re.compile(r"device: (?P<gpu>.+?)\s+\|\s+D2D copy bandwidth (?P<tbs>[\d.]+) TB/s")
ROW = re.compile(r"^(?P<case>\S.*?)\s{2,}(?P<impl>\S.*?)\s{2,}(?P<ms>[\d.]+)ms\s+"
                 r"(?P<gbs>\d+)\s+(?P<copy>[\d.]+)%(?P<rest>.*)$")
VS_EAGER = re.compile(r"([\d.]+)x vs torch eager")
VS_COMPILE = re.compile(r"([\d.]+)x vs torch\.compile")


def gpu_runs(text):
    """[{heading, gpu, copy_tbs, rows: [{case, impl, ms, gbs, copy, vs_eager, vs_compile}]}]"""
    runs, heading = [], None
    for line in text.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            continue
        s = line.strip()
        m = DEVICE.match(s)
        if m:
            runs.append({"heading": heading, "gpu": m["gpu"], "copy_tbs": float(m["tbs"]),
                         "rows": []})
            continue
        m = ROW.match(s)
        if m and runs and runs[-1]["heading"] == heading:
            eager, compiled = VS_EAGER.search(m["rest"]), VS_COMPILE.search(m["rest"])
            runs[-1]["rows"].append({
                "case": re.sub(r"\s*\(2\^\d+\)$", "", m["case"]), "impl": m["impl"],
                "ms": float(m["ms"]), "gbs": int(m["gbs"]), "copy": float(m["copy"]),
                "vs_eager": float(eager[1]) if eager else None,
                "vs_compile": float(compiled[1]) if compiled else None})
    return runs


runs = gpu_runs(text)
for i, run in enumerate(runs, 1):
    gpu = re.search(r"H\d00", run["gpu"])[0]
    cases = sorted({r["case"] for r in run["rows"]})
    print(f"run {i}: {gpu}, {len(run['rows']):2} rows, {len(cases)} cases | {run['heading'][:70]}")
assert runs and all(run["rows"] for run in runs)

# %% [markdown]
# ## Do the tables agree with themselves?
#
# Before plotting, check the parse against what each table says twice:
#
# * "of copy" must be GB/s over the run's copy bandwidth;
# * a stated ratio ("3.59x vs torch eager") must be the PyTorch row's time over the hipdnn
#   row's time, where the run lists that PyTorch row.
#
# Times are printed to the microsecond and bandwidths to the GB/s, so agreement is up to
# that rounding: 2 % plus 0.01 for ratios, 1 % plus 0.15 points for "of copy".

# %%
checked = 0
for i, run in enumerate(runs, 1):
    by_impl = {(r["case"], r["impl"]): r for r in run["rows"]}
    for r in run["rows"]:
        of_copy = r["gbs"] / (run["copy_tbs"] * 1000) * 100
        assert abs(of_copy - r["copy"]) <= 0.01 * r["copy"] + 0.15, (i, r)
        checked += 1
        for key, torch_impl in (("vs_eager", "torch eager"), ("vs_compile", "torch.compile")):
            torch_row = by_impl.get((r["case"], torch_impl))
            if r[key] is not None and torch_row is not None:
                ratio = torch_row["ms"] / r["ms"]
                assert abs(ratio - r[key]) <= 0.02 * ratio + 0.01, (i, r, ratio)
                checked += 1
print(f"{checked} figures checked, all consistent")

# %% [markdown]
# ## hipdnn against PyTorch, latest run of each case
#
# For each case, the latest run that measured it: the speed of `torch.compile` and of
# hipdnn's default kernel **relative to PyTorch eager** on the same GPU (above 1: faster
# than eager). Where the run left the PyTorch rows out of its table, the hipdnn row's
# stated ratios give them.

# %%
def speeds(run):
    """{case: (speed of torch.compile, speed of hipdnn), each over torch eager's}"""
    out = {}
    for r in run["rows"]:
        if r["impl"].startswith("hipdnn") and r["vs_eager"] is not None:
            compile_speed = r["vs_eager"] / r["vs_compile"] if r["vs_compile"] else np.nan
            out.setdefault(r["case"], (compile_speed, r["vs_eager"]))
    return out


latest = {}
for i, run in enumerate(runs, 1):
    gpu = re.search(r"H\d00", run["gpu"])[0]
    for case, (compile_speed, hipdnn_speed) in speeds(run).items():
        latest[case] = (compile_speed, hipdnn_speed, f"run {i}, {gpu}")

cases = sorted(latest)
fig, ax = plt.subplots(figsize=(9, 0.45 * len(cases) + 1.5))
y = np.arange(len(cases))
ax.barh(y - 0.2, [latest[c][0] for c in cases], height=0.4, label="torch.compile")
ax.barh(y + 0.2, [latest[c][1] for c in cases], height=0.4, label="hipdnn (hip)")
ax.axvline(1.0, color="black", linewidth=1, label="PyTorch eager")
ax.set_yticks(y, [f"{c}\n({latest[c][2]})" for c in cases], fontsize=8)
ax.set_xlabel("speed relative to PyTorch eager (higher is faster)")
ax.set_title("Memory-bound ops on the GPU: hipdnn and torch.compile against PyTorch eager")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

for c in cases:
    compile_speed = "not measured" if np.isnan(latest[c][0]) else f"{latest[c][0]:.2f}x eager"
    print(f"{c:<22} hipdnn {latest[c][1]:5.2f}x eager   torch.compile {compile_speed:<13}"
          f"({latest[c][2]})")
assert len(ax.patches) == 2 * len(cases)

# %% [markdown]
# ## How each case moved from run to run
#
# hipdnn's speed relative to PyTorch eager in every run that measured the case. The
# ratio, not the time, is what carries across runs on different GPUs. The notes under
# each run in `benchmarks/history/` say what changed in between (a fast path for
# contiguous plans, a warp a row for norms, split reductions for batchnorm, ...).

# %%
history = {}
for i, run in enumerate(runs, 1):
    for case, (_, hipdnn_speed) in speeds(run).items():
        history.setdefault(case, []).append((i, hipdnn_speed))

fig, ax = plt.subplots(figsize=(9, 4.5))
for case, points in sorted(history.items()):
    ax.plot(*zip(*points), marker="o", label=case)
ax.axhline(1.0, color="black", linewidth=1)
ax.set_xticks(range(1, len(runs) + 1))
ax.set_xlabel("run (in the order of benchmarks/history/)")
ax.set_ylabel("hipdnn speed / PyTorch eager")
ax.set_yscale("log")
ax.set_yticks([0.25, 0.5, 1, 2, 4], ["0.25x", "0.5x", "1x", "2x", "4x"])
ax.minorticks_off()
ax.set_title("hipdnn against PyTorch eager, run by run")
ax.legend(fontsize=8, ncol=2)
fig.tight_layout()
plt.show()
assert len(ax.lines) == len(history) + 1

# %% [markdown]
# ## The CPU engine against NumPy
#
# The CPU tables are markdown tables: `hipdnn ms` (the reference engine) against
# `NumPy ms` (NumPy's float32 on the same machine), and the ratio between them. Same
# check as above: the stated ratio must be NumPy's time over hipdnn's, up to the
# rounding of times printed to 0.01 ms.
#
# The plot follows each case through the tables in file order. Read the headings
# printed with it: the tables were not all made on one machine (the later ones ran on a
# CPU whose NumPy uses OpenBLAS, much faster at matmul and convolution than Debian's
# reference BLAS), so a ratio compares hipdnn with the NumPy beside it, never across
# machines.

# %%
def markdown_tables(text):
    """[(heading, [{column: cell}])] of every markdown table with hipdnn and NumPy times."""
    tables, heading, lines = [], None, text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and "hipdnn ms" in line and "NumPy ms" in line:
            columns = [c.strip() for c in line.strip("|").split("|")]
            rows, i = [], i + 2                           # skip the |---| line
            while i < len(lines) and lines[i].startswith("|"):
                cells = (c.strip() for c in lines[i].strip("|").split("|"))
                rows.append(dict(zip(columns, cells)))
                i += 1
            tables.append((heading, rows))
            continue
        i += 1
    return tables


cpu_tables = markdown_tables(text)
for heading, rows in cpu_tables:
    for r in rows:
        ratio = float(r["NumPy ms"]) / float(r["hipdnn ms"])
        assert abs(ratio - float(r["speed hipdnn/NumPy"])) <= 0.02 * ratio + 0.005, (heading, r)
print(f"{len(cpu_tables)} CPU tables, {sum(len(r) for _, r in cpu_tables)} rows, ratios consistent")

cpu_history = {}
for t, (heading, rows) in enumerate(cpu_tables, 1):
    print(f"table {t}: {heading[:80]}")
    for r in rows:
        label = f"{r['case']} {r['shape'].split(' (')[0]}"
        cpu_history.setdefault(label, []).append((t, float(r["speed hipdnn/NumPy"])))

fig, ax = plt.subplots(figsize=(11, 4.5))
for label, points in sorted(cpu_history.items()):
    ax.plot(*zip(*points), marker="o", label=label)
ax.axhline(1.0, color="black", linewidth=1)
ax.set_xticks(range(1, len(cpu_tables) + 1))
ax.set_xlabel("CPU table (in the order of benchmarks/history/)")
ax.set_ylabel("reference_cpu speed / NumPy")
ax.set_yscale("log")
ax.set_yticks([0.1, 0.3, 1, 3, 10, 30], ["0.1x", "0.3x", "1x", "3x", "10x", "30x"])
ax.minorticks_off()
ax.set_title("The reference engine against NumPy on the same CPU, table by table")
ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1.0), loc="upper left")
fig.tight_layout()
plt.show()
assert len(ax.lines) == len(cpu_history) + 1
