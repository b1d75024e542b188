#!/usr/bin/env bash
# Replays every seed and reproducer of fuzz/corpus/<target>/ (and the large generated inputs
# of BUILD/replay/<target>/), then fuzzes each target for FUZZ_SECONDS (0: replay only).
# New inputs go to BUILD/work/<target>/, crashes to BUILD/crashes/; any crash, leak, timeout
# or sanitizer report fails the run and prints the reproducer and how to rerun it.
#   fuzz/run.sh BUILD            (make fuzz / make fuzz-replay call this)
# The Python targets (fuzz/fuzz_*.py: the Python layer, hipdnn-ep through ONNX Runtime, the
# variant pack) run with $PYTHON as `fuzz/T.py BUILD SECONDS`: exit status 1 and "FAIL:"
# lines on a finding, else a last line with the count of inputs.
# Environment: FUZZ_SECONDS (default 300 per target), FUZZ_TARGETS (default all),
# HIPDNN_BUILD_DIR (the ordinary build whose ort_run, libhipdnn_ep.so, fake driver and
# emulated engine the Python targets run, since BUILD has none of them; default build/;
# `make fuzz` passes make's BUILD).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-300}
PY_TARGETS=$(cd fuzz && ls fuzz_*.py | sed 's/\.py$//' | tr '\n' ' ')
TARGETS=${FUZZ_TARGETS:-"fuzz_graph_bytes fuzz_graph_structured fuzz_descriptor_calls $PY_TARGETS"}
for s in llvm-symbolizer-14 llvm-symbolizer; do
    if command -v "$s" >/dev/null; then export ASAN_SYMBOLIZER_PATH=$(command -v "$s"); break; fi
done
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export HIPDNN_LOG_LEVEL=off
mkdir -p "$BUILD/crashes" "$BUILD/logs"
failed=0

report() { # target, phase, log
    echo "FAIL: $1 ($2)"
    grep -E "ERROR|runtime error|fuzz invariant|SUMMARY|Test unit written|==[0-9]+==" "$3" | head -40
    local unit
    unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$3" | tail -1)
    [ -n "$unit" ] && echo "reproducer: $unit" && echo "rerun:      $BUILD/fuzz/$1 $unit"
    echo "full log:   $3"
    failed=1
}

export HIPDNN_BUILD_DIR=${HIPDNN_BUILD_DIR:-$PWD/build}
for t in $TARGETS; do
    if [ -f "fuzz/$t.py" ]; then # a Python target, over the in-tree package
        if ! PYTHONPATH=$PWD "${PYTHON:-/usr/bin/python3}" "fuzz/$t.py" "$BUILD" \
                "$FUZZ_SECONDS" >"$BUILD/logs/$t.fuzz" 2>&1; then
            echo "FAIL: $t"
            grep -A40 "^FAIL" "$BUILD/logs/$t.fuzz" | head -60
            failed=1
        else
            tail -1 "$BUILD/logs/$t.fuzz"
        fi
        continue
    fi
    exe=$BUILD/fuzz/$t
    # The reference engine alone: the vendor plugins (blaslt, cudnn) decline to load where
    # there is no driver and are closed again, and libFuzzer then clears the coverage
    # counters of an unmapped module (a SEGV in TracePC::ClearInlineCounters).
    ref="$(cd "$BUILD" && pwd)/pkg/hipdnn/lib/hipdnn_plugins/engines/libhipdnn_reference_cpu.so"
    if [ ! -x "$exe" ]; then
        echo "FAIL: $exe is not built (make fuzz builds it)"
        failed=1
        continue
    fi
    inputs=(fuzz/corpus/$t/*)
    if [ -d "$BUILD/replay/$t" ]; then inputs+=("$BUILD/replay/$t"/*); fi
    start=$SECONDS
    # Files named one by one run once each, at any size.
    if ! HIPDNN_PLUGIN_DIR=$ref "$exe" -timeout=120 -rss_limit_mb=4096 "${inputs[@]}" >"$BUILD/logs/$t.replay" 2>&1; then
        report "$t" "replaying ${#inputs[@]} inputs" "$BUILD/logs/$t.replay"
        continue
    fi
    echo "$t: replayed ${#inputs[@]} inputs in $((SECONDS - start)) s"
    [ "$FUZZ_SECONDS" -gt 0 ] || continue
    mkdir -p "$BUILD/work/$t"
    start=$SECONDS
    if ! HIPDNN_PLUGIN_DIR=$ref "$exe" -max_total_time="$FUZZ_SECONDS" -timeout=25 -rss_limit_mb=2048 -max_len=16384 \
            -artifact_prefix="$BUILD/crashes/$t-" -print_final_stats=1 \
            "$BUILD/work/$t" "fuzz/corpus/$t" >"$BUILD/logs/$t.fuzz" 2>&1; then
        report "$t" "fuzzing" "$BUILD/logs/$t.fuzz"
        continue
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$BUILD/logs/$t.fuzz")
    cov=$(grep -o 'cov: [0-9]*' "$BUILD/logs/$t.fuzz" | tail -1)
    echo "$t: fuzzed $((SECONDS - start)) s, ${runs:-?} inputs, $cov, no crash"
done
exit $failed
