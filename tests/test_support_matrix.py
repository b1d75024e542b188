"""The operation-support matrix: docs/support_matrix.md is what `python -m hipdnn support
--markdown` gives today with the reference engine and the HIP engine's host emulation
loaded (it fails, with the difference and the command that refreshes it, when it is
stale), and the answers are the engines' own: an engine that declines everything has an
empty column and its own reason under --why, and a graph the backend refuses is "n/a"
for every engine."""
import difflib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hipdnn
from hipdnn import _support

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
TEST_PLUGINS = BUILD_DIR / "tests" / "plugins"
PACKAGE = Path(hipdnn.__file__).resolve().parent
REFERENCE = PACKAGE / "lib" / "hipdnn_plugins" / "engines" / "libhipdnn_reference_cpu.so"
DOC = REPO / "docs" / "support_matrix.md"


def support(*args, timeout=120):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HIPDNN_LOG_LEVEL", "off")
    return subprocess.run([sys.executable, "-m", "hipdnn", "support", *args], env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=str(REPO))


def test_the_checked_in_matrix_is_current():
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    t0 = time.monotonic()
    r = support("--markdown", "--plugin", str(REFERENCE), "--plugin", str(EMULATED))
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    have = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if have != r.stdout:
        diff = "".join(difflib.unified_diff(have.splitlines(True), r.stdout.splitlines(True),
                                            "docs/support_matrix.md (checked in)",
                                            "python -m hipdnn support --markdown (now)"))
        pytest.fail("docs/support_matrix.md is stale; refresh it from the checkout's root "
                    f"with\n  {_support.MARKDOWN_COMMAND}\n(with your build folder for "
                    f"build/)\n\n{diff}")
    assert took < 30, f"the matrix took {took:.1f} s to make; keep it under 30"


def test_the_hip_column_is_the_emulated_engine_named_for_the_hip_engine():
    text = DOC.read_text(encoding="utf-8")
    head = next(line for line in text.splitlines() if line.startswith("| operation | layout"))
    assert head == "| operation | layout | asked | hip | reference_cpu |"
    assert "hip_emulated" in text and "same support checks" in text


def test_text_table_and_reasons_come_from_each_engine(tmp_path):
    # reference_cpu runs conv in every data type asked; declines_all declines everything
    # with its own reason, which --why shows
    declines = TEST_PLUGINS / "libdeclines_all.so"
    assert declines.is_file(), f"build the test plugins first ({declines})"
    r = support("--why", "--plugin", str(REFERENCE), "--plugin", str(declines))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["op", "layout", "asked", "declines_all", "reference_cpu"]
    conv = next(line for line in lines if line.startswith("conv_fprop ") and " NHWC " in line)
    assert conv.split() == ["conv_fprop", "NHWC"] + ["fp32", "fp16", "bf16", "fp64", "int8"] \
        + ["none"] + ["fp32", "fp16", "bf16", "fp64", "int8"]
    declined = [line for line in lines if ", declines_all: [no] " in line]
    rows = sum(len(c.layouts) * len(c.dtypes) for c in _support.CASES)
    assert len(declined) == rows
    assert all(line.endswith(": [no] declines_all: this test engine declines every graph")
               for line in declined), declined[0]
    ref = [line for line in lines if ", reference_cpu: [no] " in line]
    assert ref and all(line.split(": [no] ")[1].startswith("reference_cpu: ") for line in ref)


def test_markdown_goes_to_a_file(tmp_path):
    out = tmp_path / "matrix.md"
    r = support("--markdown", "-o", str(out), "--plugin", str(REFERENCE))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    text = out.read_text()
    assert text.startswith("# Operation support matrix\n")
    assert "| operation | layout | asked | reference_cpu |" in text
    assert "The `hip` column" not in text  # the note on the emulation only where it is used


def test_a_graph_the_backend_refuses_is_not_applicable_to_any_engine():
    def bad(g, dt, layout):
        x = g.tensor(name="x", dim=[2, 3])
        g.add(x, g.tensor(name="y", dim=[4, 5]), name="mismatch").set_output(True)

    case = _support.Case("broken", ("fp32",), ("packed",), "shapes that do not broadcast", bad)
    cells = _support.ask(case, "fp32", "packed", ["reference_cpu"])
    assert cells["reference_cpu"].status == "n/a"
    assert cells["reference_cpu"].reason.startswith("the backend refuses the graph: ")
    assert "mismatch" in cells["reference_cpu"].reason


def test_a_yes_is_a_plan_that_runs():
    # one accepted cell, run for real: the graph the matrix built executes and is right
    import numpy as np
    case = next(c for c in _support.CASES if c.op == "pointwise ADD")
    assert _support.ask(case, "fp16", "NHWC", ["reference_cpu"])["reference_cpu"].status == "yes"
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       intermediate_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT)
    case.build(g, hipdnn.data_type.HALF, "NHWC")
    g.build([hipdnn.heur_mode.A])
    x, b = (next(t for t in g.tensors() if t.get_name() == n) for n in ("x", "b"))
    rng = np.random.default_rng(0)
    xa = np.empty_like(x.empty())
    xa[...] = rng.standard_normal(xa.shape).astype(np.float16)
    ba = rng.standard_normal(b.get_dim()).astype(np.float16)
    y = next(t for t in g.tensors() if t.get_name() == "add::OUT_0")
    ya = y.empty()
    ya[...] = np.nan
    g.execute({x: xa, b: ba, y: ya})
    ref = xa.astype(np.float64) + ba
    assert np.all(np.abs(ya - ref) <= 1e-3 + 1e-3 * np.abs(ref))


def test_unknown_plugin_paths_are_named():
    r = support("--plugin", "no/such/plugin.so")
    assert r.returncode == 1
    assert "plugin path 'no/such/plugin.so' does not exist" in r.stderr


def test_no_engine_loaded_says_so(tmp_path):
    r = support("--plugin", str(tmp_path))
    assert r.returncode == 1
    assert r.stderr.startswith("hipdnn support: no engine loaded")


def test_progress_goes_to_stderr():
    r = support("--progress", "--plugin", str(REFERENCE))
    assert r.returncode == 0
    steps = [line for line in r.stderr.splitlines() if line.startswith("support: ")]
    assert len(steps) == sum(len(c.layouts) for c in _support.CASES)
    assert steps[0] == "support: conv_fprop (NCHW)"

