"""A new user's first `import hipdnn` fails in a way that says what to do.

Each case runs in a subprocess on a copy of the package laid out as the user would have it:
a checkout that was never built, a package whose backend library is missing, and an
interpreter without NumPy. (`pip install .` and `pip install -e .` are checked by
`make pip-check`, which `make test` runs.)
"""
import os
import shutil
import subprocess
import sys

import hipdnn

PACKAGE = os.path.dirname(os.path.abspath(hipdnn.__file__))
REPO = os.path.dirname(PACKAGE)  # where the hipdnn under test lives
CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKERS = ("CMakeLists.txt", "Makefile", "setup.py")  # what makes a folder a checkout
BUILT = ("lib", "include", "__pycache__")


def _copy_sources(dest, with_extension=False):
    """The package's Python sources (and, if asked, _C but not lib/) under dest/hipdnn."""
    pkg = dest / "hipdnn"
    pkg.mkdir(parents=True)
    for name in os.listdir(PACKAGE):
        src = os.path.join(PACKAGE, name)
        if name in BUILT or not os.path.isfile(src):
            continue
        if name.startswith("_C") and name.endswith(".so") and not with_extension:
            continue
        shutil.copy2(src, pkg / name)
    return pkg


def _import(root, code="import hipdnn", cwd=None):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONPATH"] = str(root)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd or root, env=env,
                          capture_output=True, text=True, timeout=60)


def _last_line(proc):
    lines = proc.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def test_unbuilt_checkout_says_run_make_build(tmp_path):
    _copy_sources(tmp_path)
    for marker in MARKERS:
        shutil.copy2(os.path.join(CHECKOUT, marker), tmp_path / marker)
    proc = _import(tmp_path)
    assert proc.returncode != 0
    assert _last_line(proc) == (
        f"ImportError: hipdnn's C extension is not built: run `make build` in {tmp_path}")
    assert "circular import" not in proc.stderr


def test_package_without_extension_outside_a_checkout_says_reinstall(tmp_path):
    pkg = _copy_sources(tmp_path)
    proc = _import(tmp_path)
    assert proc.returncode != 0
    last = _last_line(proc)
    assert last.startswith("ImportError: hipdnn's C extension is not built: reinstall hipdnn")
    assert str(pkg) in last


def test_extension_without_its_backend_library_names_the_library(tmp_path):
    _copy_sources(tmp_path, with_extension=True)
    for marker in MARKERS:
        shutil.copy2(os.path.join(CHECKOUT, marker), tmp_path / marker)
    proc = _import(tmp_path)
    assert proc.returncode != 0
    last = _last_line(proc)
    assert last.startswith("ImportError: hipdnn's C extension did not load (")
    assert "libhipdnn_backend.so" in last
    assert last.endswith(f"run `make build` in {tmp_path}")


# Hides numpy from the interpreter as a Python without it (pyenv's, say) would.
HIDE_NUMPY = """
import sys
class HideNumpy:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ModuleNotFoundError("No module named 'numpy'", name="numpy")
        return None
sys.meta_path.insert(0, HideNumpy())
import hipdnn
"""


def test_python_without_numpy_says_which_python_to_use():
    proc = _import(REPO, HIDE_NUMPY)
    assert proc.returncode != 0
    assert _last_line(proc) == (
        f"ImportError: numpy not found for {sys.executable} (No module named 'numpy'): "
        "use /usr/bin/python3 (Debian's) or a venv made from it with --system-site-packages")


def test_too_old_python_says_which_python_to_use():
    # An old interpreter is simulated: the check must run before anything 3.11-only.
    code = "import sys; sys.version_info = (3, 9, 18, 'final', 0); import hipdnn"
    proc = _import(REPO, code)
    assert proc.returncode != 0
    last = _last_line(proc)
    assert last.startswith(f"ImportError: hipdnn needs Python >= 3.11; {sys.executable} is ")
    assert "/usr/bin/python3" in last


def test_built_package_imports_from_outside_the_checkout(tmp_path):
    code = "import hipdnn; print(hipdnn.__file__, *(e.name for e in hipdnn.engines()))"
    proc = _import(REPO, code, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[0] == os.path.join(PACKAGE, "__init__.py")
    assert "reference_cpu" in words[1:]
