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


def _own_members(cls):
    """What a class defines: in its body, or in the mixins it is assembled from
    (hipdnn/_pygraph/: pygraph's methods live there, one file per op family)."""
    members = {}
    for klass in reversed(cls.__mro__):
        if klass is cls or klass.__module__.startswith("hipdnn._pygraph."):
            members.update(vars(klass))
    return members


def _undocumented_members(qualname, cls):
    """Public methods and properties a class defines itself (inherited ones are their base
    class's business; enum members are values, not API)."""
    missing = []
    for name, member in _own_members(cls).items():
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


PUBLIC_MODULES = ["api_base", "arrays", "bfloat16", "compat", "datatypes", "device", "enums",
                  "errors",
                  "graph", "plan_bytes", "pygraph", "runtime"]


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


def test_pygraph_is_checked_with_the_methods_of_its_mixins():
    """pygraph's op families and build stages are mixins (hipdnn/_pygraph/); their
    methods are pygraph's own to document."""
    own = _own_members(hipdnn.pygraph)
    assert {"conv_fprop", "add", "layernorm", "sdpa", "build", "execute", "serialize",
            "tensor"} <= set(own)
    assert "__init_subclass__" not in own  # object's, not pygraph's


def test_pygraph_methods_are_named_as_pygraphs():
    """Python names a method by its __qualname__ in its argument errors and reprs: the
    methods pygraph takes from its mixins read as pygraph's, as when one class held them."""
    public = [n for n in dir(hipdnn.pygraph) if not n.startswith("_")
              and inspect.isfunction(getattr(hipdnn.pygraph, n))]
    assert len(public) > 100
    assert [n for n in public if getattr(hipdnn.pygraph, n).__qualname__ != f"pygraph.{n}"] \
        == []
    with pytest.raises(TypeError, match=r"^pygraph\.conv_fprop\(\) got an unexpected keyword "
                                        r"argument 'paddin'$"):
        hipdnn.pygraph().conv_fprop(None, None, paddin=[1, 1])


def test_every_package_folder_is_shipped():
    """`pip install .` ships the packages pyproject.toml lists: every folder of hipdnn/
    that holds Python modules is one."""
    config = tomllib.loads(open(os.path.join(CHECKOUT, "pyproject.toml")).read())
    folders = sorted(
        "hipdnn" + "".join("." + part for part in os.path.relpath(root, PACKAGE).split(os.sep)
                           if part != ".")
        for root, _dirs, files in os.walk(PACKAGE) if "__init__.py" in files)
    assert "hipdnn._pygraph" in folders
    assert sorted(config["tool"]["setuptools"]["packages"]) == folders


def _python_sources():
    for root, _dirs, files in os.walk(PACKAGE):
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(root, f)


def test_python_files_and_functions_stay_small():
    """No Python file of the package over 800 lines, no function over 80 (def to last
    line): a family or a stage that grows gets its own file, a long function named helpers
    (docs/architecture.md, "Python layers")."""
    import ast

    long_files, long_functions = [], []
    for path in _python_sources():
        text = open(path, encoding="utf-8").read()
        name = os.path.relpath(path, CHECKOUT)
        if len(text.splitlines()) > 800:
            long_files.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 80:
                    long_functions.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    assert long_files == []
    assert long_functions == []


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


@pytest.mark.toolchain
def test_mypy_strict_is_clean():
    config = tomllib.loads(open(os.path.join(CHECKOUT, "pyproject.toml")).read())
    assert config["tool"]["mypy"]["strict"] is True
    proc = _run(["mypy", "hipdnn"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.toolchain
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
