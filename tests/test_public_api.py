"""The public surface is finished: every public name documented, the package and its stub
type-check (mypy, strict, as configured in pyproject.toml), one version everywhere, and a
licence.

mypy is Debian's python3-mypy (`make deps` installs it).
"""
import enum
import importlib
import inspect
import os
import re
import subprocess
import sys
import tomllib

import hipdnn
import pytest
from hipdnn import _C

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.dirname(os.path.abspath(hipdnn.__file__))


def _doc(obj):
    if isinstance(obj, property):
        obj = obj.fget
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    return (getattr(obj, "__doc__", None) or "").strip()


def _undocumented_members(qualname, cls):
    """Public methods and properties a class defines itself (inherited ones are their base
    class's business; enum members are values, not API)."""
    missing = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(cls, enum.EnumMeta) and name in cls.__members__:
            continue
        if not (callable(member) or isinstance(member, (property, staticmethod, classmethod))
                or inspect.isdatadescriptor(member) or inspect.ismethoddescriptor(member)):
            continue
        if not _doc(member):
            missing.append(f"{qualname}.{name}")
    return missing


def _undocumented(module, names):
    missing = []
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            if not _doc(obj) or (obj.__doc__ or "").strip() == "An enumeration.":
                missing.append(name)
            missing += _undocumented_members(name, obj)
        elif callable(obj) and not _doc(obj):
            missing.append(name)
    return missing


def test_every_public_name_has_a_docstring():
    assert _undocumented(hipdnn, hipdnn.__all__) == []


PUBLIC_MODULES = ["arrays", "bfloat16", "compat", "device", "enums", "errors", "graph",
                  "plan_bytes", "pygraph", "runtime"]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_name_of_each_module_has_a_docstring(name):
    """What `from hipdnn.<module> import *` gives is documented too, not only what the
    package re-exports (hipdnn.graph the attribute is compat's context manager, so the
    module is taken from sys.modules)."""
    importlib.import_module(f"hipdnn.{name}")
    module = sys.modules[f"hipdnn.{name}"]
    assert (module.__doc__ or "").strip(), f"hipdnn.{name} has no module docstring"
    assert module.__all__, f"hipdnn.{name} has an empty __all__"
    assert _undocumented(module, module.__all__) == []


def test_every_public_module_is_checked():
    found = sorted(f[:-3] for f in os.listdir(PACKAGE)
                   if f.endswith(".py") and not f.startswith("_"))
    assert found == sorted(PUBLIC_MODULES)


def test_every_public_name_of_the_extension_has_a_docstring():
    public = [n for n in dir(_C) if not n.startswith("_")
              and (inspect.isclass(getattr(_C, n)) or callable(getattr(_C, n)))]
    assert len(public) >= 10
    assert _undocumented(_C, public) == []


def test_the_docstring_check_sees_a_missing_docstring():
    class Half:
        """Documented class."""

        def documented(self):
            """Yes."""

        def bare(self):
            pass

        @property
        def bare_property(self):
            return 1

    class Mode(enum.IntEnum):
        A = 1

    mod = type(sys)("fake")
    mod.Half, mod.Mode, mod.fn = Half, Mode, lambda: None
    assert sorted(_undocumented(mod, ["Half", "Mode", "fn"])) == [
        "Half.bare", "Half.bare_property", "Mode", "fn"]


def _run(args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = CHECKOUT
    proc = subprocess.run([sys.executable, "-m", *args], cwd=CHECKOUT, env=env,
                          capture_output=True, text=True, timeout=600)
    if "No module named mypy" in proc.stderr:
        pytest.fail(f"mypy is not installed for {sys.executable}: run `make deps` "
                    "(Debian's python3-mypy)")
    return proc


def test_mypy_strict_is_clean():
    config = tomllib.loads(open(os.path.join(CHECKOUT, "pyproject.toml")).read())
    assert config["tool"]["mypy"]["strict"] is True
    proc = _run(["mypy", "hipdnn"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_extension_stub_matches_the_extension():
    """hipdnn/_C.pyi lists exactly what _C defines, with the same signatures."""
    proc = _run(["mypy.stubtest", "--concise", "--mypy-config-file", "pyproject.toml",
                 "hipdnn._C"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _header_version():
    text = open(os.path.join(CHECKOUT, "csrc", "include", "hipdnn", "hipdnn.h")).read()
    parts = [re.search(rf"^#define HIPDNN_VERSION_{p} (\d+)$", text, re.M).group(1)
             for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


def test_one_version_everywhere():
    version = _header_version()
    pyproject = tomllib.loads(open(os.path.join(CHECKOUT, "pyproject.toml")).read())
    assert pyproject["project"]["version"] == version
    assert hipdnn.__version__ == hipdnn.version() == _C.__version__ == version
    assert (_C.VERSION_MAJOR, _C.VERSION_MINOR, _C.VERSION_PATCH) == tuple(
        int(p) for p in version.split("."))
    config_version = open(os.path.join(PACKAGE, "lib", "cmake", "hipdnn",
                                       "hipdnnConfigVersion.cmake")).read()
    assert f'set(PACKAGE_VERSION "{version}")' in config_version


def test_licence_is_mit():
    text = open(os.path.join(CHECKOUT, "LICENSE")).read()
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the hipdnn authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    pyproject = tomllib.loads(open(os.path.join(CHECKOUT, "pyproject.toml")).read())
    assert pyproject["project"]["license"] == {"text": "MIT"}
