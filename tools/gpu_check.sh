#!/usr/bin/env bash
# tools/gpu_check.sh — the one command for a GPU machine, run from the repository root of a
# checkout whose build was carried over (build/, hipdnn/lib/, hipdnn/include/,
# hipdnn/_C.abi3.so; the extension is abi3, so any Python >= 3.11 imports it):
#
#     bash tools/gpu_check.sh            # logs under $OUT (default /tmp/hipdnn_gpu_check)
#
# It prints the GPUs, checks that the HIP engine loads and runs, runs the Python GPU tests
# (pytest -m gpu), the run-time kernels' NVRTC/ptxas spill checks for sm_80 and sm_90
# (pytest -m toolchain tests/test_hip_jit.py), hipdnn-ep's model suite (tests/test_ort_ep.py) through onnxruntime's
# Python API on its CPU device and again on its GPU device (HIPDNN_ORT_RUNNER=python, then
# with HIPDNN_ORT_DEVICE=gpu; skipped, saying why, where onnxruntime is absent), the C GPU
# tests, the demo and the benchmark (first), and prints the benchmark table last.  Exit
# status: 0 only if every step passed.  About 5 to 10 minutes.
set -u
cd "$(dirname "$0")/.." || exit 2
OUT="${OUT:-/tmp/hipdnn_gpu_check}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
# The carried C tests may have been linked under another path: find the backend here.
export LD_LIBRARY_PATH="$PWD/hipdnn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export HIPDNN_BUILD_DIR="$PWD/build"
export HIPDNN_TEST_NO_FAKE=1     # the fake-driver re-runs belong to CI, not to this machine
export HIPDNN_TEST_NVRTC_FULL=1  # every run-time kernel through NVVM too (CI: the front end)
export HIPDNN_TEST_REQUIRE_GPU=1 # here a GPU test that would skip fails instead
declare -A RESULT
ORDER=()
# GPU_CHECK_STEPS="pytest_gpu bench ...": only those steps (a call's time limit may not
# hold them all); default every step.
STEPS=" ${GPU_CHECK_STEPS:-} "
step() { # name, command...: runs it with its output to the screen and $OUT/<name>.txt
    local name="$1"
    shift
    if [ "$STEPS" != "  " ] && [[ "$STEPS" != *" $name "* ]]; then return 0; fi
    echo
    echo "==== $name ===="
    "$@" 2>&1 | tee "$OUT/$name.txt"
    local rc=${PIPESTATUS[0]}
    RESULT[$name]=$rc
    ORDER+=("$name")
    echo "---- $name: exit status $rc"
}

step gpus bash -c 'nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader' \
    || true
step info timeout 120 "$PY" -m hipdnn info
step engine timeout 120 "$PY" - <<'PYEOF'
import numpy as np, hipdnn
rt = hipdnn.device_runtime()
print(f"device runtime: {rt.name}, {rt.device_count} device(s) {rt.reason}")
names = [e.name for e in hipdnn.engines()]
print("engines:", ", ".join(names))
for path, reason in hipdnn.skipped_engine_plugins():
    print(f"skipped: {path}: {reason}")
x = np.linspace(-3, 3, 1000, dtype=np.float32)
logs = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: logs.append(msg))
with hipdnn.Graph(name="engine_check") as g:
    g.gelu(g.mul(x, x))
got = g(x)
hipdnn._C.flush_log()
hipdnn.set_log_callback(None)
hipdnn.set_log_level("warn")
for m in logs:
    if "fused:" in m or "kernel" in m:
        print("log:", m)
ref = np.vectorize(lambda v: 0.5 * v * (1 + __import__("math").erf(v / 2 ** 0.5)))(x.astype(np.float64) ** 2)
err = float(np.max(np.abs(got - ref) / (1e-5 + 1e-5 * np.abs(ref))))
print(f"gelu(x * x) over 1000 floats ran on engine '{g.engine_name}'; worst error {err:.3f} of the tolerance")
assert "hip" in names, "the hip engine did not load (see 'skipped' above)"
assert g.engine_name == "hip", f"expected the hip engine, got {g.engine_name}"
assert err <= 1.0, "result out of tolerance"
print("OK")
PYEOF
# The benchmark first: on a machine lent for a few minutes its table matters most.
step bench timeout 480 "$PY" benchmarks/gpu_bench.py --markdown "$OUT/bench_run.md"
# Over pytest-xdist's workers where it is installed: the GPU suite (about 2 000 tests) took
# over 420 s in one process on an H200 and 54 s over 12 workers.
XDIST=()
"$PY" -c "import xdist" 2>/dev/null && XDIST=(-n "${GPU_CHECK_WORKERS:-12}")
step pytest_gpu timeout 420 "$PY" -m pytest -m gpu -q -rfEs "${XDIST[@]}" -p no:cacheprovider tests
# The NVRTC/ptxas spill checks for sm_80 as well as sm_90 (CI checks sm_90's only).
step toolchain timeout 300 "$PY" -m pytest -m toolchain -q -rfEs "${XDIST[@]}" -p no:cacheprovider tests/test_hip_jit.py
step ort_python timeout 400 env HIPDNN_ORT_RUNNER=python "$PY" -m pytest -q -rs -p no:cacheprovider tests/test_ort_ep.py
step ort_python_gpu timeout 400 env HIPDNN_ORT_RUNNER=python HIPDNN_ORT_DEVICE=gpu "$PY" -m pytest -q -rs -p no:cacheprovider tests/test_ort_ep.py
step c_device_runtime timeout 120 build/tests/c/test_device_runtime
step c_hip_engine timeout 120 build/tests/c/test_hip_engine
step demo timeout 180 "$PY" -m hipdnn demo

echo
echo "==== summary (logs in $OUT) ===="
status=0
for name in "${ORDER[@]}"; do
    rc=${RESULT[$name]}
    [ "$name" = gpus ] || [ "$rc" = 0 ] || status=1
    printf '  %-18s %s\n' "$name" "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit status $rc)")"
done
for name in pytest_gpu ort_python ort_python_gpu; do
    [ -f "$OUT/$name.txt" ] && grep -E "passed|failed|skipped" "$OUT/$name.txt" | tail -1 | sed "s/^/  $name: /"
done
if [ -f "$OUT/bench.txt" ]; then
    echo
    echo "==== benchmark table ===="
    sed -n '/^device: /,$p' "$OUT/bench.txt"
fi
exit $status
