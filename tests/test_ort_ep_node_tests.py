"""ONNX's own node tests (Debian's libonnx-testdata) for the ops hipdnn-ep claims past its
first slice, run by tests/ort/node_tests.py on the CPU device and over the fake GPU: every
test whose nodes hipdnn-ep claims must pass (no failure, no error), and each family must
have some test claimed (a family that stopped being claimed would pass vacuously).
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
}


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_node_tests_of_claimed_ops_pass(tmp_path, family, device):
    if RUNNER_MISSING or not ORT_RUN.exists():
        pytest.skip(RUNNER_MISSING or f"{ORT_RUN} is not built")
    if not DATA.is_dir():
        pytest.skip(f"{DATA}: no ONNX node tests (apt-get install libonnx-testdata)")
    if device == "gpu":
        fake_gpu_env()  # skips where the fake driver or the emulated engine is not built
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
