"""Builds hipdnn with CMake and puts every artefact inside the package (DESIGN 2):
hipdnn/_C.abi3.so, hipdnn/lib/libhipdnn_backend.so, hipdnn/lib/hipdnn_plugins/engines/*.so,
hipdnn/include/hipdnn/*.h and hipdnn/lib/cmake/hipdnn/hipdnnConfig.cmake."""
import os
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        pkg_dir = os.path.abspath(os.path.dirname(self.get_ext_fullpath(ext.name)))
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(build_dir, exist_ok=True)
        src = os.path.abspath(os.path.dirname(__file__))
        subprocess.check_call([
            "cmake", "-S", src, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DHIPDNN_PACKAGE_DIR={pkg_dir}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DHIPDNN_BUILD_TESTS=OFF",
        ])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])


setup(
    ext_modules=[Extension("hipdnn._C", sources=[], py_limited_api=True)],
    cmdclass={"build_ext": CMakeBuild},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
