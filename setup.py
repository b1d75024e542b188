"""Builds hipdnn with CMake and puts every artefact inside the package
(docs/architecture.md, "Packaging"): hipdnn/_C.abi3.so, hipdnn/lib/libhipdnn_backend.so,
hipdnn/lib/hipdnn_plugins/engines/*.so, hipdnn/lib/hipdnn_plugins/heuristics/*.so,
hipdnn/include/hipdnn/*.h and
hipdnn/lib/cmake/hipdnn/hipdnnConfig*.cmake."""
import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


SRC = os.path.abspath(os.path.dirname(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        pkg_dir = os.path.abspath(os.path.dirname(self.get_ext_fullpath(ext.name)))
        # HIPDNN_SETUP_BUILD_DIR (relative to the source): where CMake builds.  make pip-check
        # puts it one level below the source, as build/ is, so that ccache (CCACHE_BASEDIR
        # makes its paths relative) finds build/'s objects instead of compiling again.
        build_dir = os.path.join(SRC, os.environ["HIPDNN_SETUP_BUILD_DIR"]) \
            if os.environ.get("HIPDNN_SETUP_BUILD_DIR") \
            else os.path.abspath(os.path.join(self.build_temp, "cmake"))
        os.makedirs(build_dir, exist_ok=True)
        subprocess.check_call([
            "cmake", "-S", SRC, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DHIPDNN_PACKAGE_DIR={pkg_dir}",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DHIPDNN_BUILD_TESTS=OFF",
            # Extra CMake options, e.g. -DHIPDNN_WITH_CUDA=OFF (make pip-check uses it).
            *shlex.split(os.environ.get("HIPDNN_CMAKE_ARGS", "")),
        ])
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])

    def copy_extensions_to_source(self):
        """In-place and editable builds (`pip install -e .`): setuptools copies only
        _C.abi3.so into the source package, but _C finds libhipdnn_backend.so through its
        rpath $ORIGIN/lib and the backend finds its plugins beside itself, so lib/ and
        include/ go along."""
        super().copy_extensions_to_source()
        inplace, self.inplace = self.inplace, False  # so get_ext_fullpath names the build
        try:
            for ext in self.extensions:
                built = os.path.dirname(os.path.abspath(self.get_ext_fullpath(ext.name)))
                source = os.path.join(SRC, *ext.name.split(".")[:-1])
                for sub in ("lib", "include"):
                    shutil.copytree(os.path.join(built, sub), os.path.join(source, sub),
                                    symlinks=True, dirs_exist_ok=True)
        finally:
            self.inplace = inplace


setup(
    ext_modules=[Extension("hipdnn._C", sources=[], py_limited_api=True)],
    cmdclass={"build_ext": CMakeBuild},
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
