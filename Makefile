# hipdnn: `make demo` and `make test` set up a fresh Debian 12 machine (apt), build, run.
# `make demo` builds only what the demo runs (the backend, the reference engine, the Python
# extension, and the HIP engine where nvcc is found: its kernels are compiled at run time,
# so it costs about a minute); `make test` builds everything that runs here (C tests, test
# plugins, hipdnn-ep) and runs every test but those marked slow; `make check` is what CI
# runs: that, the slow tests, the ROCm build, the sanitizers and the fuzzers.
# Python is Debian's interpreter, whose packages (numpy, pytest) apt installs; a `python3`
# earlier on PATH (pyenv, conda) would lack them.  nbclient, ipykernel, nbformat and
# matplotlib run the notebooks of notebooks/ (tests/test_notebooks.py); graphviz's `dot`
# renders graph pictures (pygraph._repr_svg_, python -m hipdnn draw; tests/test_draw.py).
PYTHON ?= /usr/bin/python3
BUILD ?= build
JOBS ?= 2
# What `make demo` needs: a C/C++ toolchain, CMake, FlatBuffers, Python with NumPy.
DEMO_APT_PACKAGES = cmake make gcc g++ python3 python3-dev python3-numpy \
                    libflatbuffers-dev flatbuffers-compiler
APT_PACKAGES = $(DEMO_APT_PACKAGES) ccache python3-pytest python3-pytest-xdist \
               python3-setuptools python3-wheel python3-pip python3-venv \
               python3-setuptools-whl python3-wheel-whl python3-pip-whl \
               python3-mypy git graphviz fonts-liberation2 \
               python3-nbclient python3-ipykernel python3-nbformat python3-matplotlib
# Debian's hipcc and libamdhip64-dev (HIP 5.2, about 15 s to install) build the HIP engine
# for AMD GPUs (`make build-rocm`, CI); nvcc, where installed (/usr/local/cuda), builds it
# for NVIDIA GPUs in every build.
ROCM_APT_PACKAGES = hipcc libamdhip64-dev
# hipdnn-ep (ep/, docs/onnxruntime.md): its build fetches ONNX Runtime with npm
# (tools/fetch_ort.sh) and its tests build models with python3-onnx.  npm from apt only
# where none is on PATH.  ORT_EP=ON makes a failed fetch fail the configure (CI), AUTO skips
# hipdnn-ep and its tests with a message, OFF never fetches.  libonnx-testdata: ONNX's own
# node tests, which tests/test_ort_ep_node_tests.py runs through hipdnn-ep.
ORT_APT_PACKAGES = python3-onnx libonnx-testdata $(if $(shell command -v npm),,npm)
ORT_EP ?= AUTO
# `make fuzz` only: Debian's clang with libFuzzer and the sanitizer runtimes, and the
# symbolizer for readable reports.
FUZZ_APT_PACKAGES = clang-14 libclang-rt-14-dev llvm-14
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# ccache for every C/C++ compile (make deps installs it): a fresh machine compiles each
# file once, and the pip install checks and later stages reuse what build/ compiled.
# Recursive (=): asked when a recipe runs, after make deps.  Paths are hashed relative to
# the checkout, so another build folder of the same sources hits the cache.
CCACHE = $(shell command -v ccache)
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
CMAKE_LAUNCHER = $(if $(CCACHE),-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE) -DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE))
# Each stage's time goes to $(TIMES); `make test` and `make check` print them at the end.
TIMES = $(CURDIR)/$(BUILD)/stage_times.tsv
TIMED = $(CURDIR)/tools/timed.sh $(TIMES)
# pytest over both cores where pytest-xdist is installed.  Recursive (=), so it is asked
# when a recipe runs, after `make deps` has installed it on a fresh machine.
PYTEST_JOBS = $(shell $(PYTHON) -c 'import xdist' 2>/dev/null && echo "-n $(JOBS) --dist loadgroup")
# --durations: the slowest tests of each run in its log, where CI's time goes.
PYTEST = $(PYTHON) -m pytest -q -p no:cacheprovider --durations=15 $(PYTEST_JOBS)

.PHONY: all deps deps-demo deps-rocm deps-fuzz configure build build-rocm demo test test-c \
        test-python test-slow check clear-times build-rocm-timed pip-check pip-check-steps test-sanitize test-asan test-tsan fuzz \
        fuzz-build fuzz-replay fuzz-corpus clean

all: build

# Installs only what is missing, so a set-up machine costs no network; without the
# packages' recommendations (clang-14's and llvm-15's llvm-*-dev alone are 560 MB that
# nothing here uses), so each needed package is named.
define apt_install
	@missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

deps-demo:
	$(call apt_install,$(DEMO_APT_PACKAGES))

deps:
	$(call apt_install,$(APT_PACKAGES) $(ORT_APT_PACKAGES))

deps-rocm:
	$(call apt_install,$(ROCM_APT_PACKAGES))

deps-fuzz: deps
	$(call apt_install,$(FUZZ_APT_PACKAGES))

# CMAKE_ARGS: more options for build/ (e.g. -DHIPDNN_WITH_ROCM=OFF, -DHIPDNN_CUDA_ARCHS=90).
CMAKE_ARGS ?=
CMAKE_CONFIGURE = cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON) \
	      -DHIPDNN_PACKAGE_DIR=$(CURDIR)/hipdnn $(CMAKE_LAUNCHER) $(VENDORS) $(CMAKE_ARGS)

# The demo configures once (without hipdnn-ep, which it does not use), and builds a GPU
# engine only for a GPU this machine has (its device node: /dev/nvidiactl, /dev/kfd), so
# that a toolkit installed without its GPU does not cost the demo minutes of device code;
# `make build` configures every time, with ORT_EP, WITH_CUDA and WITH_ROCM as given (a few
# seconds when nothing changed; CMAKE_ARGS, last, overrides them).
DEMO_WITH_CUDA = $(if $(wildcard /dev/nvidiactl),AUTO,OFF)
DEMO_WITH_ROCM = $(if $(wildcard /dev/kfd),AUTO,OFF)
WITH_CUDA ?= AUTO
WITH_ROCM ?= AUTO
$(BUILD)/CMakeCache.txt: VENDORS = -DHIPDNN_WITH_CUDA=$(DEMO_WITH_CUDA) -DHIPDNN_WITH_ROCM=$(DEMO_WITH_ROCM)
$(BUILD)/CMakeCache.txt:
	$(CMAKE_CONFIGURE) -DHIPDNN_ORT_EP=OFF

configure: VENDORS = -DHIPDNN_WITH_CUDA=$(WITH_CUDA) -DHIPDNN_WITH_ROCM=$(WITH_ROCM)
configure:
	$(CMAKE_CONFIGURE) -DHIPDNN_ORT_EP=$(ORT_EP)

build: deps configure
	$(TIMED) "build (cmake --build, all targets)" cmake --build $(BUILD) -j $(JOBS)

demo: deps-demo $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target hipdnn_runtime
	$(PYTHON) -m hipdnn demo

# The HIP engine for AMD GPUs, in its own folder: one arch by default (ROCM_ARCHS), the
# plugin alone.  No AMD GPU is lent here, so this checks that it compiles and links.
ROCM_BUILD ?= build-rocm
ROCM_ARCHS ?= gfx90a
build-rocm: deps-demo deps-rocm
	cmake -S . -B $(ROCM_BUILD) -DCMAKE_BUILD_TYPE=Release -DHIPDNN_WITH_CUDA=OFF \
	      -DHIPDNN_WITH_ROCM=ON -DHIPDNN_ROCM_ARCHS="$(ROCM_ARCHS)" -DHIPDNN_ROCM_EXTRA_ARCHS= \
	      -DHIPDNN_BUILD_TESTS=OFF -DHIPDNN_BUILD_PYTHON=OFF -DHIPDNN_ORT_EP=OFF \
	      -DHIPDNN_PACKAGE_DIR=$(CURDIR)/$(ROCM_BUILD)/pkg/hipdnn $(CMAKE_LAUNCHER)
	cmake --build $(ROCM_BUILD) -j $(JOBS) --target hipdnn_hip_rocm

# C tests run under pytest (tests/test_c_suite.py); ctest is the quick C-only loop.
test-c: build
	cd $(BUILD) && ctest --output-on-failure

# `pip install .` and `pip install -e .`, each into a fresh venv, offline: pip builds in
# isolation from Debian's setuptools/wheel wheels in /usr/share/python-wheels (the venv's
# pip.conf says so; the PIP_* variables win over it, so they are set too). The editable
# install is made from a copy of the tree (tracked and untracked files) so that it cannot
# disturb this checkout's own build; both are then used from outside the source tree.
PIP_OFFLINE = PIP_NO_INDEX=1 PIP_FIND_LINKS=/usr/share/python-wheels
PIP_CONF = printf '[global]\nno-index = true\nfind-links = /usr/share/python-wheels\n'
EDITABLE = $(BUILD)/pip-editable
# The packaging is what is checked here; the GPU plugins are built and tested by
# `make build`, through the same CMake install rules.
PIP_CMAKE_ARGS ?= -DHIPDNN_WITH_CUDA=OFF -DHIPDNN_WITH_ROCM=OFF $(CMAKE_LAUNCHER)
PIP_OFFLINE += HIPDNN_CMAKE_ARGS="$(PIP_CMAKE_ARGS)" HIPDNN_SETUP_BUILD_DIR=build-pip
pip-check: deps
	$(TIMED) "pip install . and pip install -e ." $(MAKE) --no-print-directory pip-check-steps

pip-check-steps:
	rm -rf $(BUILD)/pip-venv $(EDITABLE) build-pip
	$(PYTHON) -m venv --system-site-packages $(BUILD)/pip-venv
	$(PIP_CONF) > $(BUILD)/pip-venv/pip.conf
	cd $(BUILD) && $(PIP_OFFLINE) pip-venv/bin/pip install -q $(CURDIR)
	cd $(BUILD) && pip-venv/bin/python -m hipdnn info | tee pip-venv/info.txt
	grep -q reference_cpu $(BUILD)/pip-venv/info.txt
	cd $(BUILD) && pip-venv/bin/python -m hipdnn demo
	@echo "pip install . ok"
	mkdir -p $(EDITABLE)/src
	git -C $(CURDIR) ls-files -z --cached --others --exclude-standard \
	  | (cd $(CURDIR) && tar --null -T - -cf -) | tar -xf - -C $(EDITABLE)/src
	$(PYTHON) -m venv --system-site-packages $(EDITABLE)/venv
	$(PIP_CONF) > $(EDITABLE)/venv/pip.conf
	cd $(EDITABLE) && $(PIP_OFFLINE) venv/bin/pip install -q -e ./src
	cd $(EDITABLE) && venv/bin/python -c 'import hipdnn, os, sys; \
	  sys.exit(0 if hipdnn.__file__ == os.path.abspath("src/hipdnn/__init__.py") \
	           else "editable install imports " + hipdnn.__file__)'
	cd $(EDITABLE) && venv/bin/python -m hipdnn info | tee venv/info.txt
	grep -q reference_cpu $(EDITABLE)/venv/info.txt
	cd $(EDITABLE) && venv/bin/python -m hipdnn demo
	@echo "pip install -e . ok"

# Every test but those marked slow (subprocess-heavy, run by `make test-slow` and CI).
test-python: build
	HIPDNN_BUILD_DIR=$(CURDIR)/$(BUILD) $(TIMED) "pytest -m 'not slow'" $(PYTEST) -m "not slow" tests

test-slow: build
	HIPDNN_BUILD_DIR=$(CURDIR)/$(BUILD) $(TIMED) "pytest -m slow" $(PYTEST) -m slow tests

test: clear-times build pip-check test-python
	@$(TIMED) --summary

# What CI runs (.ci/run runs these as its stages).
check: clear-times test test-slow test-sanitize fuzz build-rocm-timed
	@$(TIMED) --summary

build-rocm-timed:
	$(TIMED) "build-rocm ($(ROCM_ARCHS))" $(MAKE) --no-print-directory build-rocm

clear-times:
	@rm -f $(TIMES)

# ---- sanitizers (docs/testing.md) ------------------------------------------------------
# Each sanitized build has its own folder and its own copy of the Python package
# (<build>/pkg/hipdnn), so the in-tree build is never replaced by an instrumented one.
# Reports are written to <build>/reports/ (log_path) as well as failing the process that
# made them: any file there fails the target, so a report in a child process whose exit
# status nobody reads still counts.
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
# Without the GPU plugins: no GPU here, so their device code never runs, and their host code
# is the emulated plugin's (tests/emulated), which is built and checked.  (Debian's
# libamdhip64, probed for a device at load, also leaks 792 bytes when it finds none, and
# cudart leaves exit handlers that TSan keeps past the dlclose of a plugin that declined.)
SAN_CMAKE = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHIPDNN_WITH_ROCM=OFF -DHIPDNN_WITH_CUDA=OFF \
            $(CMAKE_LAUNCHER)
# The interpreter is not instrumented: the ASan runtime is preloaded into it, and leak
# checking is left to the C tests (CPython and NumPy keep allocations for the process's life).
ASAN_RUNTIME = $(shell gcc -print-file-name=libasan.so)
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1:log_path=$(CURDIR)/$(ASAN_BUILD)/reports/asan \
           LSAN_OPTIONS=suppressions=$(CURDIR)/tools/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/$(ASAN_BUILD)/reports/ubsan
PY_ASAN_ENV = ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:log_path=$(CURDIR)/$(ASAN_BUILD)/reports/asan \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/$(ASAN_BUILD)/reports/ubsan \
              LD_PRELOAD=$(ASAN_RUNTIME) PYTHONMALLOC=malloc
TSAN_ENV = TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:log_path=$(CURDIR)/$(TSAN_BUILD)/reports/tsan

# Fails if a sanitizer wrote a report into $(1)/reports.
define no_reports
	@if [ -n "$$(ls -A $(1)/reports 2>/dev/null)" ]; then \
	  for f in $(1)/reports/*; do echo "== $$f"; head -60 "$$f"; done; \
	  echo "sanitizer reports in $(1)/reports"; exit 1; \
	else echo "$(1): no sanitizer reports"; fi
endef

test-sanitize:
	$(TIMED) "test-asan (ASan+UBSan: build, ctest, pytest)" $(MAKE) --no-print-directory test-asan
	$(TIMED) "test-tsan (TSan: build, ctest)" $(MAKE) --no-print-directory test-tsan

# ASan + UBSan: every target; ctest (leak checking on) and the whole pytest suite.
test-asan: deps
	mkdir -p $(ASAN_BUILD)/pkg/hipdnn
	rm -rf $(ASAN_BUILD)/reports $(ASAN_BUILD)/pkg/hipdnn/*.py $(ASAN_BUILD)/pkg/hipdnn/_pygraph \
	       $(ASAN_BUILD)/pkg/hipdnn/experimental $(ASAN_BUILD)/pkg/hipdnn/ops
	# the package's Python files, subpackages included (what `pip install .` ships:
	# pyproject.toml's packages; tests/test_public_api.py checks that list)
	cp hipdnn/*.py hipdnn/*.pyi hipdnn/py.typed $(ASAN_BUILD)/pkg/hipdnn/
	for d in _pygraph experimental experimental/ops ops; do \
	  mkdir -p $(ASAN_BUILD)/pkg/hipdnn/$$d && cp hipdnn/$$d/*.py $(ASAN_BUILD)/pkg/hipdnn/$$d/ || exit 1; \
	done
	cmake -S . -B $(ASAN_BUILD) $(SAN_CMAKE) -DHIPDNN_SANITIZE=address,undefined \
	      -DPython3_EXECUTABLE=$(PYTHON) -DHIPDNN_PACKAGE_DIR=$(CURDIR)/$(ASAN_BUILD)/pkg/hipdnn
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	@ldd $(ASAN_BUILD)/pkg/hipdnn/_C.abi3.so | grep -q libasan || \
	  { echo "$(ASAN_BUILD) is not instrumented"; exit 1; }
	mkdir -p $(ASAN_BUILD)/reports
	# Not test_fork: gcc 12's ASan allocator takes no lock around fork(), so a child forked
	# while the worker thread is inside malloc can hang in its own first malloc (the
	# runtime's, not ours: google/sanitizers#1814); make test runs it over glibc's malloc.
	cd $(ASAN_BUILD) && $(ASAN_ENV) ctest --output-on-failure -E '^test_fork$$'
	# From inside the package copy, so `import hipdnn` finds the instrumented one.  The C
	# tests ran once above, with leak checking; test_c_suite.py would run them again.  The
	# tests marked slow (run-time compilers over every kernel, notebooks, consumer builds)
	# or toolchain (NVRTC, hiprtc, ptxas, mypy, the docs' bash blocks) exercise outside tools rather than
	# our code; make test and make test-slow run them.
	cd $(ASAN_BUILD)/pkg && $(PY_ASAN_ENV) HIPDNN_BUILD_DIR=$(CURDIR)/$(ASAN_BUILD) \
	  HIPDNN_TEST_EMULATED_MARK="gpu and not large" HIPDNN_TEST_SANITIZE=address,undefined \
	  $(PYTEST) -m "not slow and not toolchain" --ignore=$(CURDIR)/tests/test_c_suite.py \
	  $(CURDIR)/tests
	$(call no_reports,$(ASAN_BUILD))

# TSan: the backend, the reference engine and every C test (the engine's threads, handles
# used from several threads at once).
test-tsan: deps
	rm -rf $(TSAN_BUILD)/reports
	cmake -S . -B $(TSAN_BUILD) $(SAN_CMAKE) -DHIPDNN_SANITIZE=thread -DHIPDNN_BUILD_PYTHON=OFF -DHIPDNN_ORT_EP=OFF \
	      -DHIPDNN_PACKAGE_DIR=$(CURDIR)/$(TSAN_BUILD)/pkg/hipdnn
	cmake --build $(TSAN_BUILD) -j $(JOBS)
	mkdir -p $(TSAN_BUILD)/reports
	# Not test_fork: TSan does not follow a fork of a threaded process (its child dies, or
	# runs unchecked, when it starts threads); the ASan build and make test run it.
	cd $(TSAN_BUILD) && $(TSAN_ENV) ctest --output-on-failure -E '^test_fork$$'
	$(call no_reports,$(TSAN_BUILD))

# ---- fuzzing (docs/testing.md) ----------------------------------------------------------
# libFuzzer targets built by Debian's clang with ASan + UBSan.  Without the GPU plugins:
# with no GPU they decline and are unloaded, and libFuzzer would then clear the coverage
# counters of a library no longer mapped.  `make fuzz` replays the
# corpus and then fuzzes each target for FUZZ_SECONDS; `make fuzz-replay` only replays.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 300

fuzz-build: deps-fuzz build
	mkdir -p $(FUZZ_BUILD)/pkg/hipdnn
	CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DHIPDNN_FUZZ=ON -DHIPDNN_BUILD_TESTS=OFF -DHIPDNN_BUILD_PYTHON=OFF \
	  -DHIPDNN_WITH_CUDA=OFF -DHIPDNN_WITH_ROCM=OFF -DHIPDNN_ORT_EP=OFF \
	  -DHIPDNN_PACKAGE_DIR=$(CURDIR)/$(FUZZ_BUILD)/pkg/hipdnn
	$(TIMED) "fuzz-build (clang, ASan+UBSan)" cmake --build $(FUZZ_BUILD) -j $(JOBS)
	# large inputs that are replayed but not checked in (the 10 000-node reversed chain)
	$(PYTHON) fuzz/make_corpus.py --replay-only $(FUZZ_BUILD)/replay

# The Python targets run hipdnn-ep's ort_run, the fake driver and the emulated engine of
# $(BUILD), which fuzz-build builds (the clang build has no ORT): HIPDNN_BUILD_DIR says so.
FUZZ_ENV = PYTHON=$(PYTHON) HIPDNN_BUILD_DIR=$(abspath $(BUILD))

fuzz: fuzz-build
	$(TIMED) "fuzz ($(FUZZ_SECONDS) s a target)" env FUZZ_SECONDS=$(FUZZ_SECONDS) $(FUZZ_ENV) fuzz/run.sh $(FUZZ_BUILD)

fuzz-replay: fuzz-build
	env FUZZ_SECONDS=0 $(FUZZ_ENV) fuzz/run.sh $(FUZZ_BUILD)

# Rewrites the checked-in seeds from the Python API (reproducers regress-* are kept).
fuzz-corpus: build
	$(PYTHON) fuzz/make_corpus.py

clean:
	rm -rf $(BUILD) build-* hipdnn/_C*.so hipdnn/lib hipdnn/include *.egg-info .mypy_cache
