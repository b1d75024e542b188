"""hipdnn::hipdnn_dynamic: the backend loaded on first use (docs/linking.md).

C programs are built from the installed package with find_package(hipdnn), as
test_cpp_consumer.py does: the sample of tests/dynamic/conv_bias_relu.c linked with
hipdnn::hipdnn and with hipdnn::hipdnn_dynamic, a program that calls every function of
hipdnn.h (generated here from the header), the two-thread first-call race, and stand-in
backends that are wrong in one way each.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

# Compiles and links consumer programs: `make test-slow` and CI run it, a plain `make test` does not.
pytestmark = pytest.mark.slow


import hipdnn

REPO = Path(__file__).resolve().parents[1]
HEADER = REPO / "csrc" / "include" / "hipdnn" / "hipdnn.h"
ENTRY_POINTS = REPO / "csrc" / "dynamic" / "entry_points.h"
SAMPLES = REPO / "tests" / "dynamic"
PACKAGE = Path(hipdnn.__file__).resolve().parent
LIB_DIR = PACKAGE / "lib"
CMAKE_DIR = LIB_DIR / "cmake" / "hipdnn"
BACKEND = "libhipdnn_backend.so"
MAJOR, MINOR, _ = (int(p) for p in hipdnn.__version__.split("."))
NOT_INITIALIZED = 1
TOOLS = ("cmake", "readelf", "nm", "cc")
needs_tools = pytest.mark.skipif(any(shutil.which(t) is None for t in TOOLS),
                                 reason=f"needs {', '.join(TOOLS)}")


# ---- hipdnn.h, read as text ---------------------------------------------------------

def header_functions():
    """[(return type, name, [(parameter type, parameter name)])] of every HIPDNN_EXPORT
    function of hipdnn.h, in order."""
    text = HEADER.read_text()
    for name in re.findall(r'^#include "hipdnn/(\w+\.h)"', text, re.M):  # hipdnn_tuning.h
        text += (HEADER.parent / name).read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)  # the HIPDNN_EXPORT definition itself
    out = []
    for m in re.finditer(r"HIPDNN_EXPORT\s+([^;(]*?)\b(hipdnn\w+)\s*\(([^)]*)\)\s*;", text):
        params = " ".join(m.group(3).split())
        parsed = []
        if params != "void":
            for p in params.split(","):
                name = re.search(r"(\w+)\s*$", p).group(1)
                parsed.append((p.strip()[: -len(name)].strip(), name))
        out.append((" ".join(m.group(1).split()), m.group(2), parsed))
    return out


FUNCTIONS = header_functions()
STATUS_FUNCTIONS = [f for f in FUNCTIONS if f[0] == "hipdnnStatus_t"]


def entry_point_list():
    """{name: normalized parameter text} of csrc/dynamic/entry_points.h."""
    text = re.sub(r"/\*.*?\*/", "", ENTRY_POINTS.read_text(), flags=re.S).replace("\\\n", " ")
    entries = {}
    for m in re.finditer(r"X\((?:[^,()]+,\s*)?(hipdnn\w+),\s*\(([^)]*)\)", text):
        assert m.group(1) not in entries, f"{m.group(1)} is listed twice"
        entries[m.group(1)] = " ".join(m.group(2).split())
    return entries


def test_entry_point_list_holds_every_function_of_the_header():
    assert len(FUNCTIONS) > 40, "the header parser found too few functions"
    listed = entry_point_list()
    in_header = {name: " ".join(", ".join(f"{t} {n}" for t, n in params).split()) or "void"
                 for _, name, params in FUNCTIONS}
    missing = sorted(set(in_header) - set(listed))
    assert not missing, f"hipdnn.h exports functions that entry_points.h lacks: {missing}"
    extra = sorted(set(listed) - set(in_header))
    assert not extra, f"entry_points.h lists functions hipdnn.h does not export: {extra}"
    differ = {n: (listed[n], in_header[n]) for n in listed
              if listed[n].replace("* ", "*") != in_header[n].replace("* ", "*")}
    assert not differ, f"parameters differ (entry_points.h, hipdnn.h): {differ}"


def test_the_backend_exports_exactly_the_header_functions():
    if shutil.which("nm") is None:
        pytest.skip("needs nm")
    out = subprocess.run(["nm", "-D", "--defined-only", str(LIB_DIR / BACKEND)],
                         capture_output=True, text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if " T " in line}
    assert {n for n in exported if n.startswith("hipdnn")} == {f[1] for f in FUNCTIONS}


def test_package_ships_the_dynamic_library():
    assert (LIB_DIR / "libhipdnn_dynamic.a").is_file()
    config = (CMAKE_DIR / "hipdnnConfig.cmake").read_text()
    for target in ("hipdnn::hipdnn", "hipdnn::hipdnn_dynamic", "hipdnn::backend"):
        assert target in config


# ---- the consumer project -------------------------------------------------------------

def _every_call_source():
    """A program that calls each function of hipdnn.h once (status functions with zero
    arguments) and prints what it got."""
    lines = ["#include <stdio.h>", "#include <hipdnn/hipdnn.h>", "",
             "static void report(const char* name, hipdnnStatus_t st) {",
             '    printf("call %s %d %s\\n", name, (int)st, hipdnnPeekLastErrorString_ext());',
             "}", "", "int main(void) {"]
    for _, name, params in STATUS_FUNCTIONS:
        args = ", ".join(f"({t})0" for t, _ in params)
        lines.append(f'    report("{name}", {name}({args}));')
    lines += [
        '    printf("status_name %s\\n", hipdnnGetErrorString(HIPDNN_STATUS_NOT_INITIALIZED));',
        '    printf("version [%s]\\n", hipdnnVersionString_ext());',
        "    static char copied[8192];",
        "    hipdnnGetLastErrorString(copied, sizeof(copied));",
        '    printf("copied %s\\n", copied);',
        '    printf("after_copy [%s]\\n", hipdnnPeekLastErrorString_ext());',
        "    return 0;", "}", ""]
    return "\n".join(lines)


def _missing_symbol_source(left_out):
    """A library that reports the right version and defines every entry point but one."""
    lines = ['#define EXPORT __attribute__((visibility("default")))',
             f'EXPORT const char* hipdnnVersionString_ext(void) {{ return "{hipdnn.__version__}"; }}']
    lines += [f"EXPORT void {name}(void) {{}}" for _, name, _ in FUNCTIONS
              if name not in (left_out, "hipdnnVersionString_ext")]
    return "\n".join(lines) + "\n"


CMAKELISTS = r"""
cmake_minimum_required(VERSION 3.22)
project(hipdnn_dynamic_consumer LANGUAGES C)
find_package(hipdnn @REQUEST@ CONFIG REQUIRED)
get_filename_component(HIPDNN_LIB_DIR "${hipdnn_DIR}/../.." ABSOLUTE)
set(SAMPLES "@SAMPLES@")

add_executable(app_dynamic "${SAMPLES}/conv_bias_relu.c")
target_include_directories(app_dynamic PRIVATE "@TESTS_C@")
target_link_libraries(app_dynamic PRIVATE hipdnn::hipdnn_dynamic)

add_executable(app_direct "${SAMPLES}/conv_bias_relu.c")
target_include_directories(app_direct PRIVATE "@TESTS_C@")
target_link_libraries(app_direct PRIVATE hipdnn::hipdnn)
set_target_properties(app_direct PROPERTIES BUILD_RPATH "${HIPDNN_LIB_DIR}")

add_executable(every_call every_call.c)
target_link_libraries(every_call PRIVATE hipdnn::hipdnn_dynamic)

add_executable(first_use_race "${SAMPLES}/first_use_race.c")
target_link_libraries(first_use_race PRIVATE hipdnn::hipdnn_dynamic)

add_library(version_mismatch MODULE version_mismatch.c)
add_library(missing_symbol MODULE missing_symbol.c)
add_library(counting_backend MODULE "${SAMPLES}/counting_backend.c")
target_link_libraries(counting_backend PRIVATE hipdnn::hipdnn)
target_link_options(counting_backend PRIVATE "LINKER:--no-as-needed")
set_target_properties(counting_backend PROPERTIES BUILD_RPATH "${HIPDNN_LIB_DIR}")
"""


def _run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300,
                          **kw)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    if any(shutil.which(t) is None for t in TOOLS):
        pytest.skip(f"needs {', '.join(TOOLS)}")
    root = tmp_path_factory.mktemp("dynamic_consumer")
    src, out = root / "src", root / "build"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        CMAKELISTS.replace("@REQUEST@", f"{MAJOR}.{MINOR}")
        .replace("@SAMPLES@", str(SAMPLES)).replace("@TESTS_C@", str(REPO / "tests" / "c")))
    (src / "every_call.c").write_text(_every_call_source())
    (src / "version_mismatch.c").write_text(
        '__attribute__((visibility("default"))) const char* hipdnnVersionString_ext(void) '
        '{ return "9.9.9"; }\n')
    (src / "missing_symbol.c").write_text(_missing_symbol_source("hipdnnBackendExecute"))
    _run(["cmake", "-S", src, "-B", out, f"-Dhipdnn_DIR={CMAKE_DIR}",
          "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror"])
    _run(["cmake", "--build", out])
    return out


def _env(**extra):
    # LD_PRELOAD stays: the sanitizer builds preload their runtime (Makefile, test-asan)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "HIPDNN_PLUGIN_DIR", "HIPDNN_BACKEND_PATH",
                        "HIPDNN_LOG_FILE")}
    env.update(extra)
    return env


def _exec(exe, env, cwd=None):
    proc = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=120,
                          cwd=cwd)
    assert proc.returncode >= 0, f"{exe.name} died of signal {-proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


# ---- (1) link only: nothing of the backend in the consumer ---------------------------

def _needed(binary):
    out = _run(["readelf", "-d", binary])
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out), out


def _dynamic_symbols(binary, *flags):
    out = _run(["nm", "-D", *flags, binary])
    return [line.split()[-1] for line in out.splitlines() if line.split()]


@needs_tools
@pytest.mark.parametrize("program", ["app_dynamic", "every_call", "first_use_race"])
def test_dynamic_consumer_needs_no_backend_at_link_time(build, program):
    needed, dynamic_section = _needed(build / program)
    assert not [n for n in needed if "hipdnn" in n], needed
    assert "RPATH" not in dynamic_section and "RUNPATH" not in dynamic_section, dynamic_section
    undefined = _dynamic_symbols(build / program, "--undefined-only")
    assert not [s for s in undefined if s.startswith("hipdnn")], undefined
    # The stubs are hidden: the consumer does not re-export hipdnn's API.
    defined = _dynamic_symbols(build / program, "--defined-only")
    assert not [s for s in defined if s.startswith("hipdnn")], defined


@needs_tools
def test_the_link_check_sees_a_direct_link(build):
    """The same checks on the program linked with hipdnn::hipdnn find the backend, so the
    test above can fail."""
    needed, _ = _needed(build / "app_direct")
    assert BACKEND in needed
    undefined = _dynamic_symbols(build / "app_direct", "--undefined-only")
    assert "hipdnnCreate" in undefined


# ---- (2) conv -> bias -> relu, the same bits both ways --------------------------------

def _parse_sample(stdout):
    fields, data = {}, {}
    for line in stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key in ("dims", "strides"):
            name, *values = rest.split()
            fields[(key, name)] = [int(v) for v in values]
        elif key == "data":
            name, *words = rest.split()
            data[name] = np.array([int(w, 16) for w in words], np.uint32)
        elif key == "engine":
            fields["engine"] = rest
    return fields, data


def _logical(fields, data, name):
    """The tensor as an NCHW float64 array, read through its strides."""
    values = data[name].view(np.float32).astype(np.float64)
    dims, strides = fields[("dims", name)], fields[("strides", name)]
    return np.lib.stride_tricks.as_strided(
        values, shape=dims, strides=[s * values.itemsize for s in strides]).copy()


def _reference(x, w, b, pad=(1, 1), stride=(2, 1), dilation=(1, 2)):
    """float64 relu(conv(x, w) + b), cross-correlation, the geometry of car_build."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    ho = (h + 2 * pad[0] - dilation[0] * (r - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * pad[1] - dilation[1] * (s - 1) - 1) // stride[1] + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    y = np.zeros((n, k, ho, wo))
    for i in range(r):
        for j in range(s):
            rows = xp[:, :, i * dilation[0]: i * dilation[0] + stride[0] * (ho - 1) + 1: stride[0],
                      j * dilation[1]: j * dilation[1] + stride[1] * (wo - 1) + 1: stride[1]]
            y += np.einsum("nchw,kc->nkhw", rows, w[:, :, i, j])
    return np.maximum(y + b, 0.0)


@pytest.fixture(scope="module")
def direct_run(build):
    proc = _exec(build / "app_direct", _env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _beside_consumer(build, tmp_path):
    """The dynamic sample copied into a folder whose lib/ is the package's lib/."""
    (tmp_path / "app").mkdir()
    shutil.copy2(build / "app_dynamic", tmp_path / "app" / "app_dynamic")
    (tmp_path / "app" / "lib").symlink_to(LIB_DIR, target_is_directory=True)
    return tmp_path / "app" / "app_dynamic", _env()


FINDERS = {
    "env_folder": lambda build, tmp: (build / "app_dynamic", _env(HIPDNN_BACKEND_PATH=str(LIB_DIR))),
    "env_file": lambda build, tmp: (build / "app_dynamic",
                                    _env(HIPDNN_BACKEND_PATH=str(LIB_DIR / BACKEND))),
    "beside_consumer_lib": _beside_consumer,
    "loader_search_path": lambda build, tmp: (build / "app_dynamic",
                                              _env(LD_LIBRARY_PATH=str(LIB_DIR))),
}


@needs_tools
@pytest.mark.parametrize("finder", sorted(FINDERS))
def test_conv_bias_relu_through_the_stubs_matches_the_direct_link(build, direct_run, tmp_path,
                                                                  finder):
    exe, env = FINDERS[finder](build, tmp_path)
    proc = _exec(exe, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("passed, 0 failed")
    fields, data = _parse_sample(proc.stdout)
    direct_fields, direct_data = _parse_sample(direct_run)
    assert fields["engine"] == direct_fields["engine"] == "reference_cpu"
    assert fields == direct_fields
    for name in ("x", "w", "bias", "y"):
        assert np.array_equal(data[name], direct_data[name]), f"{name} differs from the direct link"

    y = _logical(fields, data, "y")
    ref = _reference(_logical(fields, data, "x"), _logical(fields, data, "w"),
                     _logical(fields, data, "bias"))
    assert y.shape == ref.shape and np.isfinite(y).all()
    assert (np.abs(y - ref) <= 1e-5 + 1e-5 * np.abs(ref)).all(), np.abs(y - ref).max()
    assert (y > 0).any() and (y == 0).any(), "relu should both pass and clip values here"


@needs_tools
def test_a_refused_candidate_does_not_stop_the_search(build, direct_run):
    """$HIPDNN_BACKEND_PATH names a library of the wrong version; the loader's search path
    has the real one, which is used."""
    env = _env(HIPDNN_BACKEND_PATH=str(build / "libversion_mismatch.so"),
               LD_LIBRARY_PATH=str(LIB_DIR))
    proc = _exec(build / "app_dynamic", env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _parse_sample(proc.stdout)[1]["y"].tolist() == _parse_sample(direct_run)[1]["y"].tolist()


# ---- (3) and (4): no usable backend -> a status and a message, never a crash -----------

def _every_call(build, env):
    proc = _exec(build / "every_call", env, cwd=build)
    assert proc.returncode == 0, f"every_call exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    calls, other = {}, {}
    for line in proc.stdout.splitlines():
        key, _, rest = line.partition(" ")
        if key == "call":
            name, status, message = (rest.split(" ", 2) + [""])[:3]
            calls[name] = (int(status), message)
        else:
            other[key] = rest
    assert sorted(calls) == sorted(f[1] for f in STATUS_FUNCTIONS)
    return calls, other


def _assert_every_call_refused(calls, other, must_mention):
    for name, (status, message) in calls.items():
        assert status == NOT_INITIALIZED, f"{name} gave status {status}: {message}"
        assert message.startswith(f"{name}: no compatible hipdnn backend"), message
        for text in must_mention:
            assert text in message, f"{name}'s message lacks {text!r}: {message}"
    # The error functions answer without a backend, from the stubs' own thread-local buffer.
    assert other["status_name"] == "HIPDNN_STATUS_NOT_INITIALIZED"
    assert other["version"] == "[]"
    assert other["copied"].startswith("hipdnnVersionString_ext: no compatible hipdnn backend")
    assert other["after_copy"] == "[]"


def _searched_defaults(build):
    return [f"{build}/{BACKEND} (beside the consumer): absent",
            f"{build}/lib/{BACKEND} (beside the consumer): absent",
            f"{BACKEND}.{MAJOR} (loader search path): dlopen failed: ",
            f"{BACKEND} (loader search path): dlopen failed: "]


@needs_tools
def test_missing_backend_gives_a_status_from_every_call(build):
    calls, other = _every_call(build, _env(HIPDNN_BACKEND_PATH="/nonexistent"))
    _assert_every_call_refused(
        calls, other,
        ["/nonexistent ($HIPDNN_BACKEND_PATH): absent"] + _searched_defaults(build))


@needs_tools
@pytest.mark.parametrize("case", ["wrong_version", "missing_symbol", "not_a_library"])
def test_incompatible_backend_gives_a_status_naming_it(build, tmp_path, case):
    if case == "wrong_version":
        path = build / "libversion_mismatch.so"
        why = (f"{path} ($HIPDNN_BACKEND_PATH): version 9.9.9, incompatible with hipdnn.h "
               f"{hipdnn.__version__}")
    elif case == "missing_symbol":
        path = build / "libmissing_symbol.so"
        why = f"{path} ($HIPDNN_BACKEND_PATH): missing symbol hipdnnBackendExecute;"
    else:
        path = tmp_path / BACKEND
        path.write_text("not a shared library\n")
        why = f"{path} ($HIPDNN_BACKEND_PATH): dlopen failed: "
    calls, other = _every_call(build, _env(HIPDNN_BACKEND_PATH=str(path)))
    _assert_every_call_refused(calls, other, [why] + _searched_defaults(build))


# ---- (5) concurrent first calls load once -----------------------------------------------

@needs_tools
def test_concurrent_first_calls_load_the_backend_once(build):
    env = _env(HIPDNN_BACKEND_PATH=str(build / "libcounting_backend.so"))
    proc = _exec(build / "first_use_race", env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert out["thread0"] == "0" and out["thread1"] == "0", proc.stdout
    assert out["version_calls"] == "1", proc.stdout
