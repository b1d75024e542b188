"""benchmarks/ort_model_bench.py without a GPU: the models it writes (tests/ort_models.py at
real widths: the architectures' parameter counts), the torch model it runs them with
(against ORT's CPU EP, where torch is installed), its attention patterns, its markdown
table as benchmarks/results.py files it, and the whole script on the small models over a
stand-in `onnxruntime` module whose sessions run tests/ort/ort_run, ONNX Runtime's C API
with the build's hipdnn-ep (its CPU device, and the fake GPU).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="python3-onnx is not installed")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import ort_model_bench as bench  # noqa: E402
import results  # noqa: E402
from ort_models import bert, resnet  # noqa: E402
from test_ort_ep import EP_LIB, ORT_RUN, fake_gpu_env, run  # noqa: E402

SCRIPT = REPO / "benchmarks" / "ort_model_bench.py"


def check(model, shape):
    """onnx.checker with shape inference over the model, its output declared `shape` (the
    builders leave it undeclared, which the checker refuses)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.output[0].CopyFrom(onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT,
                                                                  shape))
    onnx.checker.check_model(m, full_check=True)


def parameters(model, skip=r"^[mv]\d+$"):
    """The model's learned parameters: its initializers but batchnorm's running statistics
    (m<N>, v<N>) and the shape constants."""
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer
               if not re.match(skip, t.name) and t.data_type == onnx.TensorProto.FLOAT
               and len(t.dims) > 0)


@pytest.mark.parametrize("depth, count", [(18, 11_689_512), (50, 25_557_032)])
def test_the_resnets_have_torchvisions_parameter_count(depth, count):
    """torchvision's resnet18 and resnet50 (conv weights, batchnorm scale and bias, fc):
    the same stages, blocks, widths and strides."""
    m, _ = resnet(1, depth, (64, 128, 256, 512), 1000, batch=1, img=224)
    check(m, [1, 1000])
    assert parameters(m) == count
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    assert len(convs) == {18: 20, 50: 53}[depth]  # with the 1x1 downsampling convolutions


def test_a_bert_base_layer_has_bert_bases_parameter_count():
    """7,087,872 parameters a layer (Q, K, V, output projections, two LayerNorms, the
    3072-wide MLP), plus the embeddings and their LayerNorm."""
    m, _ = bert(3, "erf", b=1, s=128, d=768, heads=12, hidden=3072, vocab=10, layers=2)
    check(m, [1, 128, 768])
    assert parameters(m) == 10 * 768 + 128 * 768 + 2 * 768 + 2 * 7_087_872


@pytest.mark.parametrize("case, shape", [("resnet18_small", [2, 10]), ("resnet50_small", [2, 10]),
                                         ("bert_small", [2, 8, 32]), ("vit_small", [2, 10])])
def test_the_small_cases_are_valid_models_with_their_inputs(case, shape):
    c = {c.name: c for c in bench.all_cases(True)}[case]
    m = c.build()
    check(m, shape)
    feeds = c.feeds(np.random.default_rng(0))
    assert sorted(feeds) == sorted(i.name for i in m.graph.input)
    assert [c.name for c in bench.all_cases(False)] == [
        "resnet18_b1", "resnet18_b16", "resnet50_b1", "resnet50_b16", "bert_base_b8",
        "vit_b16_b8"]
    assert set(bench.DEFAULT_CASES.split(",")) <= {c.name for c in bench.all_cases(False)}


def nodes_of(model):
    return [(n.op_type, list(n.input), list(n.output),
             {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute})
            for n in model.graph.node]


def test_each_decomposed_attention_is_found_once_with_its_mask_and_scale():
    m, _ = bert(3, "erf", layers=3)
    scalars = {t.name: float(onnx.numpy_helper.to_array(t)) for t in m.graph.initializer
               if not t.dims}
    nodes = nodes_of(m)
    fused, skip = bench.attention_patterns(nodes, scalars)
    assert len(fused) == 3 and len(skip) == 3 * 4  # MatMul, Mul, Add, Softmax each
    for last, (q, kt, v, mask, scale) in fused.items():
        assert nodes[last][0] == "MatMul" and mask == "mask" and scale == pytest.approx(8 ** -0.5)
    # a softmax whose output is also read elsewhere stays as written
    soft = next(i for i, n in enumerate(nodes) if n[0] == "Softmax")
    nodes.append(("Relu", [nodes[soft][2][0]], ["extra"], {}))
    assert len(bench.attention_patterns(nodes, scalars)[0]) == 2


@pytest.mark.parametrize("sdpa", ["torch's", "stand-in"])
@pytest.mark.parametrize("case", [c.name for c in bench.all_cases(True)])
def test_the_torch_model_equals_ort_cpu(tmp_path, monkeypatch, case, sdpa):
    """The same graph and weights through torch (on the CPU here) and ORT's CPU EP; the
    attentions through F.scaled_dot_product_attention (torch 2.1's signature: k not
    transposed, an additive float mask, the scale), torch's own or (torch before 2.0, as
    Debian's) a stand-in with that signature."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not ORT_RUN.exists():
        pytest.skip(f"{ORT_RUN} is not built")
    calls = []

    def stand_in(q, k, v, attn_mask=None, scale=None):
        calls.append(attn_mask is not None)
        s = torch.matmul(q, k.transpose(-2, -1)) * scale
        return torch.matmul(torch.softmax(s if attn_mask is None else s + attn_mask, -1), v)
    if sdpa == "stand-in":
        monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", stand_in,
                            raising=False)
    c = {c.name: c for c in bench.all_cases(True)}[case]
    m = c.build()
    feeds = c.feeds(np.random.default_rng(1))
    want, _, _ = run(tmp_path, m, feeds, ep="cpu", opt="all")
    tm = bench.TorchModel(m, torch.device("cpu"))
    assert len(tm.fused) == (2 if case in ("bert_small", "vit_small") else 0)
    with torch.no_grad():
        got = tm({k: torch.from_numpy(v) for k, v in feeds.items()}).numpy()
    assert bench.rel_err(got, want["y"][0]) < 1e-5
    if sdpa == "stand-in":
        assert calls == {"bert_small": [True] * 2, "vit_small": [False] * 2}.get(case, [])


# ---- the markdown table and benchmarks/results.py ------------------------------------------

ROWS = [("ResNet-50, batch 16, 224x224", "hipdnn-ep GPU, device I/O (IOBinding)", 8.0, 2e-6,
         "122/122", "bound as 'cuda'"),
        ("ResNet-50, batch 16, 224x224", "hipdnn-ep GPU, host I/O", 12.5, 2e-6, "122/122",
         "session 1.0 s, first run 9.0 s; 1 fused node, ORT kept nothing"),
        ("ResNet-50, batch 16, 224x224", "ORT CPU EP", 400.0, 0.0, "", ""),
        ("ResNet-50, batch 16, 224x224", "torch eager", 10.0, 1e-6, "", ""),
        ("ResNet-50, batch 16, 224x224", "torch.compile", 6.0, 1e-6, "", "compiled in 40.0 s"),
        ("BERT-base encoder, 12 layers, batch 8, 128 tokens", "hipdnn-ep GPU, device I/O "
         "(IOBinding)", None, None, "", "failed: no | binding"),
        ("BERT-base encoder, 12 layers, batch 8, 128 tokens", "hipdnn-ep GPU, host I/O", 20.0,
         3e-6, "640/641", "1 fused node, ORT kept 1 Gather"),
        ("BERT-base encoder, 12 layers, batch 8, 128 tokens", "ORT CPU EP", 300.0, 0.0, "", ""),
        ("BERT-base encoder, 12 layers, batch 8, 128 tokens", "torch eager", 15.0, 1e-6, "", "")]


def test_the_model_table_parses_as_a_run_table_of_its_own_kind():
    lines = results.format_model_table(ROWS)
    assert lines[0] == "| " + " | ".join(results.MODEL_RUN_COLUMNS) + " |"
    assert lines[2] == ("| ResNet-50, batch 16, 224x224 | hipdnn-ep GPU, device I/O (IOBinding) "
                        "| 8.000 | 1.25x | 2.0e-06 | 122/122 | bound as 'cuda' |")
    (t,) = results.parse_tables("\n".join(lines))
    assert t.kind == "model" and len(t.rows) == len(ROWS)
    assert t.rows[5]["note"] == "failed: no / binding" and t.rows[5]["ms"] == ""


def test_a_models_standing_row_is_its_first_timed_hipdnn_ep_row():
    (t,) = results.parse_tables("\n".join(results.format_model_table(ROWS)))
    rows = results.model_rows(t.rows, "NVIDIA H200", "2026-12-01", "abc1234", None)
    assert [r.cells for r in rows] == [
        {"model": "ResNet-50, batch 16, 224x224", "hipdnn-ep": "GPU, device I/O (IOBinding)",
         "ms": "8.000", "took": "122/122", "ORT CPU ms": "400.000", "torch eager ms": "10.000",
         "vs eager": "1.25x", "torch.compile ms": "6.000", "vs torch.compile": "0.75x",
         "date": "2026-12-01", "commit": "`abc1234`"},
        {"model": "BERT-base encoder, 12 layers, batch 8, 128 tokens",
         "hipdnn-ep": "GPU, host I/O", "ms": "20.000", "took": "640/641",
         "ORT CPU ms": "300.000", "torch eager ms": "15.000", "vs eager": "0.75x",
         "torch.compile ms": "—", "vs torch.compile": "—", "date": "2026-12-01",
         "commit": "`abc1234`"}]
    assert rows[0].below() == ["torch.compile"] and rows[1].below() == ["torch eager"]


def test_model_runs_are_filed_as_a_series_of_their_own(tmp_path):
    (tmp_path / "history").mkdir()
    page = tmp_path / "RESULTS.md"
    page.write_text(f"# Benchmark results\n\n{results.BEGIN}\n{results.END}\n")
    table = results.format_model_table(ROWS)
    first = results.add_entry(results.model_run_entry(table, "NVIDIA H200", "2026-12-01",
                                                      "abc1234", "onnxruntime 1.30.0"), page)
    second = results.add_entry(results.model_run_entry(table[:4], "NVIDIA H200", "2026-12-02",
                                                       "bbbbbbb", "onnxruntime 1.30.0"), page)
    assert (first.name, second.name) == ("2026-12-01-001-gpu-h200-run-e1.md",
                                         "2026-12-02-002-gpu-h200-run-e2.md")
    runs = [results.Entry(Path(f"{n}.md"), {"name": n, "device": "NVIDIA H200"}, "")
            for n in ("run 28", "run M12", "run E2")]
    assert [results.next_name(runs, s) for s in ("", "M", "E")] == ["run 29", "run M13", "run E3"]
    text = page.read_text()
    assert results.CAPTION["model"] in text and "| model | hipdnn-ep | ms | took |" in text
    standing = {r.key: r for r in results.parse_standing(text)}
    assert standing[("ResNet-50, batch 16, 224x224",)].run[0] == "run E2"
    bert_row = standing[("BERT-base encoder, 12 layers, batch 8, 128 tokens",)]
    assert bert_row.run[0] == "run E1" and bert_row.note == "below torch eager: cause not recorded"
    assert results.stale(page) == []


# ---- the script, over a stand-in onnxruntime whose sessions run ort_run -------------------

STAND_IN = '''
import os, subprocess, tempfile
import numpy as np
__version__ = "0.0-stand-in"
RUNNER = os.environ["STAND_IN_ORT_RUN"]
LIB = []
class NS:
    def __init__(self, **kw):
        self.__dict__.update(kw)
class GraphOptimizationLevel:
    ORT_DISABLE_ALL, ORT_ENABLE_BASIC, ORT_ENABLE_EXTENDED, ORT_ENABLE_ALL = (
        "disable", "basic", "extended", "all")
def register_execution_provider_library(name, path):
    LIB.append(path)
def get_ep_devices():
    return [NS(ep_name="hipdnn", device=NS(type=k.upper()),
               ep_metadata={"hipdnn.device": k, "hipdnn.version": "stand-in"})
            for k in ("cpu", "gpu")]
class SessionOptions:
    def __init__(self):
        self.config, self.device, self.options = {}, None, {}
    def add_session_config_entry(self, key, value):
        self.config[key] = value
    def add_provider_for_devices(self, devices, options):
        self.device, self.options = devices[0].ep_metadata["hipdnn.device"], options
class InferenceSession:
    def __init__(self, data, sess_options=None, providers=None):
        self.dir = tempfile.mkdtemp()
        self.path = os.path.join(self.dir, "m.onnx")
        with open(self.path, "wb") as f:
            f.write(data)
        self.so, self.hipdnn, self.assigned = sess_options, providers is None, []
    def get_providers(self):
        return ["hipdnn", "CPUExecutionProvider"] if self.hipdnn else ["CPUExecutionProvider"]
    def disable_fallback(self):
        pass
    def get_outputs(self):
        return [NS(name="y")]
    def run(self, names, feeds):
        assert self.so.config["session.record_ep_graph_assignment_info"] == "1"
        cmd = [RUNNER, "--model", self.path, "--out-dir", self.dir, "--ep-lib", LIB[0],
               "--opt-level", self.so.graph_optimization_level,
               "--ep", "hipdnn" if self.hipdnn else "cpu"]
        if self.hipdnn:
            cmd += ["--device", self.so.device]
        for k, v in feeds.items():
            np.save(os.path.join(self.dir, k + ".npy"), v)
            cmd += ["--input", f"{k}={os.path.join(self.dir, k + '.npy')}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(p.stderr[-2000:])
        self.assigned = [ln.split(" ", 4)[1:] for ln in p.stdout.splitlines()
                         if ln.startswith("assigned ")]
        return [np.load(os.path.join(self.dir, "y.0.npy"))]
    def get_provider_graph_assignment_info(self):
        subs = {}
        for ep, sub, op, name in self.assigned:
            subs.setdefault((ep, sub), []).append(NS(op_type=op, name=name))
        return [NS(ep_name=ep, get_nodes=lambda n=nodes: n) for (ep, _), nodes in subs.items()]
'''


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_the_script_times_the_small_models_and_writes_a_run(tmp_path, device):
    """hipdnn-ep (through ort_run: its CPU device, or the fake GPU) and ORT's CPU EP on two
    small models; every node hipdnn-ep's but BERT's Gather; the entry it writes is filed."""
    if not ORT_RUN.exists():
        pytest.skip(f"{ORT_RUN} is not built (ONNX Runtime was not fetched)")
    env = fake_gpu_env() if device == "gpu" else dict(os.environ)
    (tmp_path / "fake" / "onnxruntime").mkdir(parents=True)
    (tmp_path / "fake" / "onnxruntime" / "__init__.py").write_text(STAND_IN)
    env.update(PYTHONPATH=str(tmp_path / "fake"), STAND_IN_ORT_RUN=str(ORT_RUN))
    md = tmp_path / "run.md"
    p = subprocess.run([sys.executable, str(SCRIPT), "--small", "--device", device,
                        "--models-list", "resnet18_small,bert_small", "--runs", "2",
                        "--warmup", "1", "--cpu-runs", "1", "--cpu-warmup", "0", "--no-torch",
                        "--ep-lib", str(EP_LIB), "--markdown", str(md), "--commit", "abc1234",
                        "--date", "2026-12-01"], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    (t,) = results.parse_tables(md.read_text())
    by = {(r["model"], r["implementation"]): r for r in t.rows}
    kind = device.upper()
    for model, kept in [("ResNet-18, batch 2, 32x32", 0), ("BERT encoder, 2 layers, batch 2, "
                                                          "8 tokens", 1)]:
        host = by[(model, f"hipdnn-ep {kind}, host I/O")]
        mine, total = map(int, host["hipdnn-ep took"].split("/"))
        assert total - mine == kept and float(host["ms"]) > 0, host
        assert float(host["err vs ORT CPU"]) < 1e-5, host
        assert ("ORT kept 1 Gather" if kept else "ORT kept nothing") in host["note"]
        assert float(by[(model, "ORT CPU EP")]["ms"]) > 0
        assert by[(model, "torch eager")]["note"] == "skipped: --no-torch"
        if device == "gpu":  # the device buffers need torch with CUDA
            assert by[(model, "hipdnn-ep GPU, device I/O (IOBinding)")]["note"].startswith(
                "skipped: needs torch with CUDA")
    assert "ResNet-18, batch 2, 32x32" in p.stdout and "| model | implementation |" in p.stdout
    (tmp_path / "history").mkdir()
    page = tmp_path / "RESULTS.md"
    page.write_text(f"# Benchmark results\n\n{results.BEGIN}\n{results.END}\n")
    results.add_entry(md.read_text(), page)
    rows = results.parse_standing(page.read_text())
    assert [r.cells["hipdnn-ep"] for r in rows] == [f"{kind}, host I/O"] * 2


def test_the_script_names_what_it_lacks(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT), "--models-list", "resnet7"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "unknown cases ['resnet7']" in p.stdout
    env = dict(os.environ, PYTHONPATH=str(tmp_path))  # no onnxruntime there
    (tmp_path / "onnxruntime.py").write_text("raise ImportError('stand-in: not installed')\n")
    p = subprocess.run([sys.executable, str(SCRIPT), "--small"], capture_output=True, text=True,
                       timeout=60, env=env)
    assert p.returncode == 2 and "the onnxruntime package does not import" in p.stdout


def test_device_buffers_are_bound_by_pointer_on_hipdnn_eps_device():
    """bind(): through ORT's C binding with OrtDevice.make("cuda", id, hipdnn-ep's vendor id),
    or through the public bind_input / bind_output with device type "cuda"."""
    calls = []

    class Recorder:
        def __getattr__(self, name):
            return lambda *a: calls.append((name,) + a)

    class Session:
        def io_binding(self):
            b = Recorder()
            b._iobinding = Recorder()
            return b

    class OrtDevice:
        @staticmethod
        def make(kind, ordinal, vendor):
            return type("D", (), {"_get_c_device": lambda self: ("c", kind, ordinal, vendor)})()

    class T:
        shape = (2, 3)

        def __init__(self, ptr):
            self.ptr = ptr

        def data_ptr(self):
            return self.ptr
    device = type("Dev", (), {"device": type("HW", (), {"vendor_id": 0x10de})()})()
    ort = type("Ort", (), {"OrtDevice": OrtDevice})
    tensors = {"x": (T(100), False), "y": (T(200), True)}
    dtypes = {"x": np.float32, "y": np.float32}
    bench.bind(ort, Session(), "vendor", device, 1, tensors, dtypes)
    bench.bind(ort, Session(), "cuda", device, 1, tensors, dtypes)
    c_dev = ("c", "cuda", 1, 0x10de)
    assert calls == [("bind_input", "x", c_dev, np.float32, [2, 3], 100),
                     ("bind_output", "y", c_dev, np.float32, [2, 3], 200),
                     ("bind_input", "x", "cuda", 1, np.float32, [2, 3], 100),
                     ("bind_output", "y", "cuda", 1, np.float32, [2, 3], 200)]
