"""tools/cudnn_frontend_samples.py, the runner of cuDNN frontend's sample notebooks (issue
28), on synthetic notebooks: which cells and lines it keeps, each outcome (passed, failed
with its cell, not supported with hipdnn's message, skipped on a gate, a timeout, a
crash), the report, and the static check of the cuDNN frontend names a notebook uses.
The real notebooks need torch with CUDA; docs/porting_from_cudnn_frontend.md says how to
run them on a GPU machine.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import cudnn_frontend_api  # noqa: E402
import cudnn_frontend_samples as runner  # noqa: E402


def notebook(folder, name, cells):
    """An nbformat-4 notebook: cells are code sources, or ("markdown", text)."""
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    for c in cells:
        kind, src = c if isinstance(c, tuple) else ("code", c)
        nb["cells"].append({"cell_type": kind, "metadata": {}, "source": src.splitlines(True),
                            **({"outputs": [], "execution_count": None} if kind == "code"
                               else {})})
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    return path


# A graph cuDNN frontend's way, on NumPy arrays (the reference engine runs it on the host).
ADD_GRAPH = """import numpy as np
import cudnn
import hipdnn
assert cudnn is hipdnn
graph = cudnn.pygraph(io_data_type=cudnn.data_type.FLOAT)
x = np.arange(12, dtype=np.float32).reshape(3, 4)
X = graph.tensor_like(x)
Y = graph.add(a=X, b=X)
Y.set_output(True)
graph.build([cudnn.heur_mode.A])
y = np.full((3, 4), np.nan, np.float32)
graph.execute({X: x, Y: y}, None)
np.testing.assert_array_equal(y, 2 * x)
"""

SINK_SDPA = """import numpy as np
import cudnn
graph = cudnn.pygraph(io_data_type=cudnn.data_type.HALF,
                      intermediate_data_type=cudnn.data_type.FLOAT,
                      compute_data_type=cudnn.data_type.FLOAT)
q, k, v = (graph.tensor(dim=[1, 1, 8, 16], stride=[128, 128, 16, 1]) for _ in range(3))
sink = graph.tensor(dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=cudnn.data_type.FLOAT)
o, _ = graph.sdpa(q=q, k=k, v=v, is_inference=True, attn_scale=0.25, sink_token=sink)
o.set_output(True)
graph.validate()
graph.build_operation_graph()
graph.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
"""


def test_magics_shell_lines_and_print_only_cells_are_dropped_and_nothing_else(tmp_path):
    path = notebook(tmp_path, "nb", [
        ("markdown", "# title"),
        "!pip install nvidia-cudnn-frontend \\\n    torch\n!nvidia-smi",
        "%%bash\nls -l\n",
        "%%time\nz = 3\n",
        "import os\nprint(os.getcwd())\n",
        "print('environment')\nos.system('pip list')\n",
        "# get_ipython().system('nvidia-smi')\n",
        "x = 1\n%matplotlib inline\nif x:\n    !echo hi\n    y = 2\nget_ipython().run_line_magic('time', '')\n",
    ])
    cells = runner.read_cells(path)
    assert [c.number for c in cells] == [2, 3, 4, 5, 6, 7, 8]  # markdown counted
    state = {c.number: c.why_dropped for c in cells}
    assert state[2] == "no code (comments or magics only)"
    assert state[3] == "cell magic %%bash"
    assert state[4] == "" and cells[2].source.splitlines()[1] == "z = 3"
    assert state[5] == ""  # an import beside the print: kept whole
    assert state[6] == "only installs or prints"
    assert state[7] == "no code (comments or magics only)"
    last = cells[-1]
    assert last.kept and last.dropped == ["%matplotlib inline", "    !echo hi",
                                          "get_ipython().run_line_magic('time', '')"]
    assert cells[0].dropped == ["!pip install nvidia-cudnn-frontend \\", "    torch",
                                "!nvidia-smi"]
    # dropped lines become `pass` at their indentation: same line numbers, still compiles
    assert len(last.source.splitlines()) == len(last.original.splitlines())
    namespace = {}
    exec(compile(last.source, "cell", "exec"), namespace)
    assert namespace["y"] == 2
    listing = runner.list_cells([path], verbose=True)
    assert "cell 3: dropped (cell magic %%bash)" in listing and "      - !nvidia-smi" in listing
    assert "      |     y = 2" in listing


def run(tmp_path, cells, timeout=120):
    return runner.run_notebook(notebook(tmp_path, "nb", cells), timeout)


def test_a_notebook_that_runs_to_its_end_passes_with_cudnn_as_hipdnn(tmp_path):
    r = run(tmp_path, ["!pip install nvidia-cudnn-frontend", ADD_GRAPH,
                       "total = y.sum()\nprint('done', total)\n"])
    assert (r.outcome, r.cell, r.detail) == ("passed", None, ""), r.output
    assert "done 132.0" in r.output


def test_a_failing_assert_fails_naming_its_cell(tmp_path):
    r = run(tmp_path, [("markdown", "intro"), ADD_GRAPH, "assert y[0, 1] == 3, 'y is wrong'",
                       "raise SystemExit('never reached')"])
    assert (r.outcome, r.cell) == ("failed", 3)
    assert r.detail == "AssertionError: y is wrong"
    assert 'File "<cell 3>", line 1' in r.traceback


def test_other_exceptions_fail_with_their_first_line(tmp_path):
    r = run(tmp_path, ["import cudnn\ng = cudnn.pygraph()\n\ng.no_such_op(name='x')\n"])
    assert (r.outcome, r.cell) == ("failed", 1)
    assert r.detail.startswith("AttributeError: ") and "no_such_op" in r.detail
    assert 'File "<cell 1>", line 4' in r.traceback


def test_hipdnn_feature_not_supported_is_its_own_outcome(tmp_path):
    r = run(tmp_path, [ADD_GRAPH, SINK_SDPA, "raise AssertionError('not reached')"])
    assert (r.outcome, r.cell) == ("not supported", 2), r.traceback
    assert r.detail.startswith("FeatureNotSupportedError: ")
    assert "sink_token" in r.detail


def test_a_version_gate_or_a_missing_module_skips(tmp_path):
    gate = ("import cudnn\nassert (\n    cudnn.backend_version() >= 99000\n), "
            "'needs cuDNN 9.90'\n")
    r = run(tmp_path, [ADD_GRAPH, gate])
    assert (r.outcome, r.cell) == ("skipped", 2)
    assert r.detail == ("the notebook's own gate: assert ( cudnn.backend_version() >= 99000 ), "
                        "'needs cuDNN 9.90'")
    r = run(tmp_path, ["import numpy\nimport no_such_module_for_hipdnn_tests\n"])
    assert (r.outcome, r.cell) == ("skipped", 1)
    assert "no_such_module_for_hipdnn_tests" in r.detail
    # an assert is a gate when its statement names a version or the device
    r = run(tmp_path, ["import sys\nassert sys.version_info >= (9, 0)\n"])
    assert (r.outcome, r.detail) == ("skipped", "the notebook's own gate: assert "
                                                "sys.version_info >= (9, 0)")
    r = run(tmp_path, ["level = 3\nassert level > 4\n"])  # else a failure
    assert (r.outcome, r.detail) == ("failed", "AssertionError")


def test_a_notebook_importing_torch_needs_torch_with_a_gpu(tmp_path):
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.is_available())"],
                           capture_output=True, text=True)
    if probe.stdout.strip() == "True":
        pytest.skip("torch has a GPU here: the notebook would run")
    r = run(tmp_path, ["import torch\nhas_cuda = torch.cuda.is_available()\n",
                       "if has_cuda:\n    raise AssertionError('ran')\n"])
    assert (r.outcome, r.cell) == ("skipped", None)
    assert r.detail.startswith("needs torch") or r.detail.startswith("needs a GPU")


def test_a_timeout_or_a_crash_fails_naming_the_cell(tmp_path):
    r = run(tmp_path, ["x = 1", "import time\ntime.sleep(60)\n"], timeout=3)
    assert (r.outcome, r.cell, r.detail) == ("failed", 2, "timed out after 3 s")
    assert r.seconds < 30
    r = run(tmp_path, ["import os", "os._exit(7)"])
    assert (r.outcome, r.cell, r.detail) == ("failed", 2, "the process died (exit code 7)")


def test_the_report_and_the_command_line(tmp_path):
    folder = tmp_path / "samples"
    folder.mkdir()
    notebook(folder, "10_pass", [ADD_GRAPH])
    notebook(folder, "20_fail", ["assert 2 + 2 == 5, 'arithmetic'"])
    notebook(folder, "52_sink", [SINK_SDPA])
    notebook(folder, "99_not_picked", ["raise SystemExit(1)"])
    out = tmp_path / "samples.md"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "cudnn_frontend_samples.py"),
                           "--samples", str(folder), "--only", "^[125]", "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    assert "| 10_pass | passed |  |  |" in text
    assert "| 20_fail | failed | 1 | AssertionError: arithmetic |" in text
    assert "| 52_sink | not supported | 1 | FeatureNotSupportedError: " in text
    assert "99_not_picked" not in text
    assert "**all**: 1 passed, 1 failed, 1 not supported, 0 skipped of 3 notebooks" in text
    assert "### 20_fail: failed in cell 1" in text
    assert "| 52_sink | " in text.split("## cuDNN frontend names the notebooks use")[1]
    listing = subprocess.run([sys.executable, str(REPO / "tools" / "cudnn_frontend_samples.py"),
                              "--samples", str(folder), "--list", "--api", "--only", "52"],
                             capture_output=True, text=True, timeout=120).stdout
    assert "== 52_sink.ipynb: 1 of 1 code cells kept" in listing
    assert "ok  pygraph.sdpa(sink_token=)" in listing


def test_the_api_check_follows_graphs_and_tensors_and_names_what_hipdnn_lacks():
    code = """
import cudnn
handle = cudnn.create_handle()
with cudnn.Graph(io_data_type=cudnn.data_type.HALF, inputs=["mm::A"]) as graph:
    c = graph.matmul(name="mm", A=a, B=b, no_such_keyword=1)
    c.set_output(True).set_no_such_setter(2)
y = graph(a, b, handle=handle)
g = cudnn.pygraph(handle=handle)
x, w = g.tensor_like(a), g.tensor_like(b)
out, mean, inv = g.layernorm(input=x, scale=w, bias=w, epsilon=x,
                             norm_forward_phase=cudnn.norm_forward_phase.TRAINING)
mean.set_uid(3)
g.execute({x: a}, None, handle=handle)
cudnn.no_such_function(1)
def factory():
    with cudnn.graph(handle) as (inner, _):
        inner.no_such_method()
"""
    uses = {u: (ok, why) for u, ok, why in cudnn_frontend_api.check([(1, code)])}
    for present in ("cudnn.create_handle()", "cudnn.Graph(inputs=)", "Graph.matmul(A=)",
                    "tensor.set_output()", "Graph.__call__(handle=)", "pygraph.tensor_like()",
                    "pygraph.layernorm(norm_forward_phase=)", "cudnn.norm_forward_phase.TRAINING",
                    "tensor.set_uid()", "pygraph.execute(handle=)", "cudnn.data_type.HALF"):
        assert uses[present] == (True, ""), present
    assert uses["Graph.matmul(no_such_keyword=)"] == (False, "not a keyword hipdnn takes")
    assert uses["tensor.set_no_such_setter()"] == (False, "hipdnn's Tensor has no "
                                                          "set_no_such_setter")
    assert uses["cudnn.no_such_function"][0] is False
    assert "no attribute 'no_such_function'" in uses["cudnn.no_such_function"][1]
    assert uses["pygraph.no_such_method()"][0] is False
    assert not any(u.startswith(("np.", "torch.")) for u in uses)
