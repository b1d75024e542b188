"""ONNX's own node tests (Debian's libonnx-testdata) run by tests/ort/node_tests.py on the
CPU device and over the fake GPU.  For the ops hipdnn-ep claims past its first slice, by
family: every test whose nodes hipdnn-ep claims must pass (no failure, no error), and each
family must have some test claimed (a family that stopped being claimed would pass
vacuously).  The whole suite: every claimed test must pass on each device, and the per-op
table of docs/onnxruntime.md must be what the suite gives today (it fails, with the
difference and the command that refreshes it, when it is stale).
Skipped, saying why, without the test data, python3-onnx or ort_run.
"""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "ort"))

from test_ort_ep import ORT_RUN, RUNNER_MISSING, fake_gpu_env  # noqa: E402

DATA = Path(os.environ.get("ONNX_NODE_TESTS", "/usr/share/libonnx-testdata/data/node"))

# a process per ONNX test (34 s over two workers): with the other subprocess-heavy tests in
# make test-slow, and so not again under ASan
pytestmark = pytest.mark.slow

# family: (test-name regex, the op types that must be claimed somewhere in it)
FAMILIES = {
    "pool": (r"^test_(max|average|globalaverage|globalmax)pool",
             {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}),
    "layernorm": (r"^test_layer_normalization", {"LayerNormalization"}),
    "softmax": (r"^test_(log)?softmax", {"Softmax", "LogSoftmax"}),
    "unary": (r"^test_(erf|sqrt|exp|log|neg|abs|reciprocal|floor|ceil|sin|cos|identity)(_|$)",
              {"Erf", "Sqrt", "Exp", "Log", "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Sin",
               "Cos", "Identity"}),
    "elementwise": (r"^test_(cast|pow|min|max|sum|mean|clip|leakyrelu|hardsigmoid|hardswish)"
                    r"(_|$)", {"Cast", "Pow", "Min", "Max", "Sum", "Mean", "Clip", "LeakyRelu",
                              "HardSigmoid", "HardSwish"}),
    "reduce": (r"^test_reduce_(prod|l1|l2)", {"ReduceProd", "ReduceL1", "ReduceL2"}),
    # ONNX's Slice and Squeeze tests give starts / axes as graph inputs, which hipdnn-ep
    # leaves to ORT (they are not constants); its loss-function tests claim them
    "movement": (r"^test_(transpose|concat|split|slice|squeeze|unsqueeze|where)(_|$)",
                 {"Transpose", "Concat", "Split", "Unsqueeze", "Where"}),
    "gemm": (r"^test_gemm_", {"Gemm"}),
}


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_node_tests_of_claimed_ops_pass(tmp_path, family, device):
    need_suite(device)
    import json

    import node_tests
    out = tmp_path / "results.json"
    pattern, ops = FAMILIES[family]
    node_tests.main(["--build", str(ORT_RUN.parents[2]), "--device", device,
                     "--filter", pattern, "--json", str(out), "--jobs", "2"])
    results = json.loads(out.read_text())
    bad = [f"{t['name']} {t['status']}: {t['detail']}" for t in results["tests"]
           if t["claimed"] and t["status"] in ("failed", "error")]
    assert not bad, "\n".join(bad)
    assert ops <= set(results["per_op"]), f"never claimed: {ops - set(results['per_op'])}"


def need_suite(device):
    """Skips, saying why, without ort_run, the test data or (gpu) the fake driver and the
    emulated engine."""
    if RUNNER_MISSING or not ORT_RUN.exists():
        pytest.skip(RUNNER_MISSING or f"{ORT_RUN} is not built")
    if not DATA.is_dir():
        pytest.skip(f"{DATA}: no ONNX node tests (apt-get install libonnx-testdata)")
    if device == "gpu":
        fake_gpu_env()


_SUITE = {}  # device -> the whole suite's results, run once per process


def whole_suite(device):
    import argparse

    import node_tests
    need_suite(device)
    if device not in _SUITE:
        args = argparse.Namespace(build=ORT_RUN.parents[2], data=DATA, filter="", jobs=2,
                                  device=device)
        _SUITE[device] = node_tests.run_suite(args, device)
    return _SUITE[device]


# One worker runs the suite's tests (make's --dist loadgroup), so the table below reads
# the results _SUITE keeps instead of running the whole suite again on the other worker.
SUITE_GROUP = pytest.mark.xdist_group("onnx_node_suite")


@SUITE_GROUP
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_every_claimed_node_test_passes(device):
    bad = [f"{name} {status} [{' '.join(claimed)}]: {detail}"
           for name, status, detail, claimed, _ops in whole_suite(device)
           if claimed and status in ("failed", "error")]
    assert not bad, f"{len(bad)} claimed tests fail:\n" + "\n".join(bad)


@SUITE_GROUP
def test_the_per_op_table_in_the_docs_is_current():
    import difflib

    import node_tests
    doc = REPO / "docs" / "onnxruntime.md"
    now = node_tests.table({d: whole_suite(d) for d in ("cpu", "gpu")})
    have = node_tests.doc_block(doc.read_text(encoding="utf-8")) or ""
    if have != now:
        diff = "".join(difflib.unified_diff(have.splitlines(True), now.splitlines(True),
                                            "docs/onnxruntime.md (checked in)", "the suite now"))
        pytest.fail(f"docs/onnxruntime.md's node-test table is stale; refresh it from the "
                    f"checkout's root with\n  {node_tests.DOC_COMMAND}\n\n{diff}")
