"""The notebooks of notebooks/ run top to bottom, as a reader would run them.

Each notebook is one test: it is executed by Debian's nbclient on an ipykernel started with
the interpreter running these tests (a kernel spec written for the run, not whatever
`python3` kernel is installed) and the hipdnn under test importable (PYTHONPATH, as
tests/test_docs_blocks.py gives its blocks), in notebooks/ as the working folder. A cell
that raises fails the test with the cell's source and traceback; each cell has a time
limit. GPU cells skip themselves with a printed reason where there is no GPU, so on a
machine without one every other cell must run.

Also: the notebooks are stored without outputs, and each is what its source in
notebooks/src/ gives (notebooks/make_notebooks.py writes them).
"""
import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

import hipdnn

nbformat = pytest.importorskip(
    "nbformat", reason="python3-nbformat is not installed (apt-get install python3-nbformat)")
nbclient = pytest.importorskip(
    "nbclient", reason="python3-nbclient is not installed (apt-get install python3-nbclient)")
pytest.importorskip(
    "ipykernel", reason="python3-ipykernel is not installed (apt-get install python3-ipykernel)")
from jupyter_client import KernelManager  # noqa: E402  (comes with nbclient)
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402

# Starts a Jupyter kernel per notebook: `make test-slow` and CI run it, a plain `make test` does not.
pytestmark = pytest.mark.slow


REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
PACKAGE = Path(hipdnn.__file__).resolve().parent
ALL = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
TEST_PLUGINS = BUILD_DIR / "tests" / "plugins"
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
CELL_TIMEOUT = 60  # seconds, per cell
KERNEL = "hipdnn-under-test"
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks

sys.path.insert(0, str(NOTEBOOKS))
import make_notebooks  # noqa: E402

# Run after the notebook's own cells: which interpreter and which hipdnn the kernel used.
PROBE = ("import sys, hipdnn, json\n"
         "print(json.dumps({'python': sys.executable, 'hipdnn': hipdnn.__file__}))")


def test_every_notebook_the_issue_names_is_there():
    names = {p.stem for p in ALL}
    assert names == {"00_introduction", "01_graph_wrapper", "02_plugins_and_engines",
                     "03_porting_from_cudnn_frontend", "10_matmul_epilogues",
                     "20_normalization", "30_attention", "40_gpu_and_interop",
                     "50_performance", "55_autotuning", "60_onnxruntime"}


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
             and (c.outputs or c.execution_count is not None)]
    assert dirty == [], f"{path.name}: cells {dirty} hold outputs (clear them before committing)"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


def test_notebooks_are_what_their_sources_give():
    assert make_notebooks.stale() == [], (
        "run `/usr/bin/python3 notebooks/make_notebooks.py` (or carry a notebook's edit "
        "back into notebooks/src/)")


def test_source_parser_reads_cells_and_refuses_stray_text(tmp_path):
    src = tmp_path / "00_x.py"
    src.write_text("# %% [markdown]\n# # Title\n#\n# text\n\n# %%\nx = 1\n\n\n# %%\nprint(x)\n")
    cells = [(c.cell_type, c.source) for c in make_notebooks.notebook(src).cells]
    assert cells == [("markdown", "# Title\n\ntext"), ("code", "x = 1"), ("code", "print(x)")]
    src.write_text("x = 1\n# %%\ny = 2\n")
    with pytest.raises(ValueError, match="before the first"):
        make_notebooks.notebook(src)


@pytest.fixture(scope="module")
def kernel_dirs(tmp_path_factory):
    """A kernel spec for this interpreter with the hipdnn under test on its path."""
    root = tmp_path_factory.mktemp("kernels")
    spec = root / KERNEL
    spec.mkdir()
    env = {"PYTHONPATH": str(PACKAGE.parent),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline",
           "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "hipdnn under test", "language": "python", "env": env}))
    return [str(root)]


def _outputs_text(cell):
    text = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            text.append(out.get("text", ""))
        elif "data" in out and "text/plain" in out["data"]:
            text.append(out["data"]["text/plain"])
    return "".join(text)


def execute(path, kernel_dirs, env_changes=None):
    """Runs the notebook at `path` in notebooks/; returns (executed notebook, the text each
    code cell printed).  A cell that fails or runs too long fails the test, showing it."""
    nb = nbformat.read(str(path), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE, id="probe"))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "HIPDNN_PLUGIN_DIR", "JUPYTER_PATH")}
    env.update(env_changes or {})
    km = KernelManager(kernel_name=KERNEL,
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=kernel_dirs))
    client = nbclient.NotebookClient(nb, km=km, timeout=CELL_TIMEOUT,
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    failure = None
    try:
        client.execute(env=env)
    except nbclient.exceptions.CellTimeoutError as e:
        failure = f"{path.name}: a cell ran over {CELL_TIMEOUT} s\n{e}"
    except nbclient.exceptions.CellExecutionError as e:  # its text: the cell and traceback
        failure = f"{path.name}: a cell failed\n{ANSI.sub('', str(e))}"
    if failure:  # outside the except block, so the report holds the cell once
        pytest.fail(failure, pytrace=False)
    probe = json.loads(_outputs_text(nb.cells[-1]).strip().splitlines()[-1])
    assert probe["python"] == sys.executable
    assert Path(probe["hipdnn"]).resolve().parent == PACKAGE
    printed = [_outputs_text(c) for c in nb.cells[:-1] if c.cell_type == "code"]
    return nb, printed


def _skips(printed):
    return [line for text in printed for line in text.splitlines()
            if line.startswith("skipped:")]


# What may skip on a machine without a GPU: the GPU notebook's GPU cells, and the ONNX
# Runtime notebook where the build has no ORT (HIPDNN_ORT_EP=OFF, or a failed fetch).
MAY_SKIP = {"40_gpu_and_interop": lambda: True,
            "60_onnxruntime": lambda: not (BUILD_DIR / "tests" / "ort" / "ort_run").exists()}


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom(path, kernel_dirs):
    _, printed = execute(path, kernel_dirs)
    skips = _skips(printed)
    if skips and not MAY_SKIP.get(path.stem, lambda: False)():
        pytest.fail(f"{path.name}: cells skipped on this machine: {skips}", pytrace=False)
    if path.stem == "02_plugins_and_engines" and (TEST_PLUGINS / "libdeclines_all.so").exists():
        assert "preferred 'declines_all' declined" in "".join(printed)


def test_gpu_cells_run_on_the_emulated_gpu(kernel_dirs, tmp_path):
    """40_gpu_and_interop over the fake CUDA driver and the HIP engine's host emulation (as
    tests/test_gpu_emulated.py runs the GPU tests): every GPU cell must run, and only the
    PyTorch and CuPy cells may skip (those packages are not here)."""
    assert (FAKE_DRIVER / "libcuda.so.1").is_file(), f"build the test targets ({FAKE_DRIVER})"
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    shutil.copy(PACKAGE / "lib" / "hipdnn_plugins" / "engines" / "libhipdnn_reference_cpu.so",
                plugins)
    shutil.copy(EMULATED, plugins)
    env = {"LD_LIBRARY_PATH": str(FAKE_DRIVER) + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
           "HIPDNN_DEVICE_RUNTIME": "cuda", "HIPDNN_EMULATED_MEMORY": "device",
           "HIPDNN_PLUGIN_DIR": str(plugins)}
    _, printed = execute(NOTEBOOKS / "40_gpu_and_interop.ipynb", kernel_dirs, env)
    text = "".join(printed)
    assert "GPU cells: run on 'hip_emulated'" in text
    assert "engine: hip_emulated" in text and "DeviceArray: round trip, view and fill ok" in text
    for line in _skips(printed):
        assert "PyTorch" in line or "CuPy" in line, line
