# hipdnn: `make demo` and `make test` set up a fresh Debian 12 machine (apt), build, run.
# hipcc and libamdhip64-dev (Debian's HIP 5.2, about 15 s to install) build the HIP engine
# for AMD GPUs; nvcc, where installed (/usr/local/cuda), builds it for NVIDIA GPUs.
# Python is Debian's interpreter, whose packages (numpy, pytest) apt installs; a `python3`
# earlier on PATH (pyenv, conda) would lack them.
PYTHON ?= /usr/bin/python3
BUILD ?= build
JOBS ?= 2
APT_PACKAGES = cmake make gcc g++ python3 python3-dev python3-numpy python3-pytest \
               python3-setuptools python3-wheel python3-pip python3-venv \
               python3-setuptools-whl python3-wheel-whl python3-pip-whl \
               python3-mypy libflatbuffers-dev flatbuffers-compiler git \
               hipcc libamdhip64-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps build demo test test-c test-python pip-check clean

all: build

# Installs only what is missing, so a set-up machine costs no network.
deps:
	@missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$(PYTHON) \
	      -DHIPDNN_PACKAGE_DIR=$(CURDIR)/hipdnn

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(PYTHON) -m hipdnn demo

# C tests run under pytest too (tests/test_c_suite.py); ctest is the quick C-only loop.
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
pip-check: deps
	rm -rf $(BUILD)/pip-venv $(EDITABLE)
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

test-python: build
	HIPDNN_BUILD_DIR=$(CURDIR)/$(BUILD) $(PYTHON) -m pytest -q tests

test: build pip-check test-python

clean:
	rm -rf $(BUILD) build-* hipdnn/_C*.so hipdnn/lib hipdnn/include *.egg-info .mypy_cache
