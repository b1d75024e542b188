"""A C program finds the installed package through CMake and runs the backend.

The package ships hipdnn/include and hipdnn/lib/cmake/hipdnn/hipdnnConfig.cmake (with
hipdnnConfigVersion.cmake); a user writes find_package(hipdnn 0.2 CONFIG REQUIRED) and links
hipdnn::backend. Before 1.0 only the same major.minor is compatible.
"""
import os
import shutil
import subprocess

import hipdnn
import pytest

# Configures and builds CMake projects against the package: `make test-slow` and CI run it, a plain `make test` does not.
pytestmark = pytest.mark.slow


PACKAGE = os.path.dirname(os.path.abspath(hipdnn.__file__))
CMAKE_DIR = os.path.join(PACKAGE, "lib", "cmake", "hipdnn")
MAJOR, MINOR, PATCH = (int(p) for p in hipdnn.__version__.split("."))

APP_C = r"""
#include <stdio.h>
#include <string.h>
#include <hipdnn/hipdnn.h>

int main(void) {
    hipdnnHandle_t handle = NULL;
    hipdnnStatus_t st = hipdnnCreate(&handle);
    if (st != HIPDNN_STATUS_SUCCESS) {
        fprintf(stderr, "hipdnnCreate: %s: %s\n", hipdnnGetErrorString(st),
                hipdnnPeekLastErrorString_ext());
        return 1;
    }
    int64_t count = -1;
    st = hipdnnGetEngineCount_ext(&count);
    if (st != HIPDNN_STATUS_SUCCESS) {
        fprintf(stderr, "engine count: %s\n", hipdnnPeekLastErrorString_ext());
        return 1;
    }
    printf("version %s\n", hipdnnVersionString_ext());
    printf("engines %lld\n", (long long)count);
    for (int64_t i = 0; i < count; i++) {
        hipdnnEngineInfo_ext_t info;
        memset(&info, 0, sizeof info);
        if (hipdnnGetEngineInfo_ext(i, &info) == HIPDNN_STATUS_SUCCESS)
            printf("engine %s\n", info.name);
    }
    printf("header %d.%d.%d\n", HIPDNN_VERSION_MAJOR, HIPDNN_VERSION_MINOR,
           HIPDNN_VERSION_PATCH);
    return hipdnnDestroy(handle) == HIPDNN_STATUS_SUCCESS ? 0 : 1;
}
"""

CMAKELISTS = r"""
cmake_minimum_required(VERSION 3.22)
project(hipdnn_consumer LANGUAGES C)
find_package(hipdnn @REQUEST@ CONFIG REQUIRED)
get_filename_component(HIPDNN_LIB_DIR "${hipdnn_DIR}/../.." ABSOLUTE)
add_executable(app app.c)
target_link_libraries(app PRIVATE hipdnn::backend)
set_target_properties(app PROPERTIES BUILD_RPATH "${HIPDNN_LIB_DIR}")
file(WRITE "${CMAKE_BINARY_DIR}/package_version.txt" "${hipdnn_VERSION}")
"""


def _run(cmd, cwd):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def test_package_ships_headers_and_cmake_config():
    assert os.path.isfile(os.path.join(PACKAGE, "include", "hipdnn", "hipdnn.h"))
    assert os.path.isfile(os.path.join(CMAKE_DIR, "hipdnnConfig.cmake"))
    assert os.path.isfile(os.path.join(CMAKE_DIR, "hipdnnConfigVersion.cmake"))
    assert os.path.isfile(os.path.join(PACKAGE, "lib", "libhipdnn_backend.so"))


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_c_program_builds_against_the_package_with_find_package(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "app.c").write_text(APP_C)
    (src / "CMakeLists.txt").write_text(CMAKELISTS.replace("@REQUEST@", f"{MAJOR}.{MINOR}"))
    build = tmp_path / "build"
    configure = ["cmake", "-S", str(src), "-B", str(build),
                f"-Dhipdnn_DIR={CMAKE_DIR}",
                "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror"]
    _run(configure, tmp_path)
    _run(["cmake", "--build", str(build)], tmp_path)

    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "HIPDNN_PLUGIN_DIR")}
    proc = subprocess.run([str(build / "app")], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, f"app failed:\n{proc.stdout}\n{proc.stderr}"
    lines = proc.stdout.splitlines()
    fields = dict(line.split(" ", 1) for line in lines if " " in line)

    package_version = (build / "package_version.txt").read_text().strip()
    assert fields["version"] == package_version == fields["header"]
    if hasattr(hipdnn, "__version__"):
        assert fields["version"] == hipdnn.__version__
    assert int(fields["engines"]) >= 1
    engines = [line.split(" ", 1)[1] for line in lines if line.startswith("engine ")]
    assert len(engines) == int(fields["engines"])
    assert "reference_cpu" in engines


VERSION_PROBE = r"""
cmake_minimum_required(VERSION 3.22)
project(probe LANGUAGES C)
find_package(hipdnn @REQUEST@ CONFIG REQUIRED)
message(STATUS "found hipdnn ${hipdnn_VERSION}")
"""


def _configure_probe(tmp_path, request):
    """Configures a project asking for `request`, found through CMAKE_PREFIX_PATH=<package>
    (CMake looks in <prefix>/lib/cmake/hipdnn/)."""
    src = tmp_path / f"probe-{request.replace(' ', '_')}"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(VERSION_PROBE.replace("@REQUEST@", request))
    return subprocess.run(["cmake", "-S", str(src), "-B", str(src / "build"),
                           f"-DCMAKE_PREFIX_PATH={PACKAGE}"],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_find_package_accepts_the_same_major_minor_and_refuses_others(tmp_path):
    ok = _configure_probe(tmp_path, f"{MAJOR}.{MINOR}")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert f"found hipdnn {hipdnn.__version__}" in ok.stdout
    exact = _configure_probe(tmp_path, f"{MAJOR}.{MINOR}.{PATCH} EXACT")
    assert exact.returncode == 0, exact.stdout + exact.stderr

    # A newer version than installed, and (before 1.0) an older minor: both refused.
    refused = ["9.0", f"{MAJOR}.{MINOR + 1}"] + ([f"0.{MINOR - 1}"] if MAJOR == 0 < MINOR else [])
    for request in refused:
        proc = _configure_probe(tmp_path, request)
        assert proc.returncode != 0, f"find_package(hipdnn {request}) should fail"
        message = " ".join(proc.stderr.split())
        assert f'compatible with requested version "{request}"' in message, proc.stderr
        assert f"version: {hipdnn.__version__}" in message, proc.stderr
