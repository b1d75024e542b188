"""Whole models through hipdnn-ep (issue 30, item 6): ResNet-18/50, a BERT-base encoder and
ViT-B/16, in fp32, timed through onnxruntime's Python API with hipdnn-ep on its GPU device
against ORT's CPU EP and PyTorch on the GPU, the same weights in each.

    LD_LIBRARY_PATH=$PWD/hipdnn/lib python3 benchmarks/ort_model_bench.py
        [--models-list resnet50_b1,bert_base_b8 | all] [--small] [--device gpu|cpu]
        [--runs 20] [--warmup 3] [--cpu-runs 3] [--compile] [--tf32] [--no-torch]
        [--budget SECONDS] [--ep-lib PATH] [--ep-option KEY=VALUE]... [--opt-level all]
        [--markdown FILE] [--commit C] [--date D] [--list]

The models are tests/ort_models.py's builders at real widths (--list names them; --small
swaps in the tests' widths, which run anywhere in seconds), written with the `onnx`
package (the GPU machine's Python has it; Debian's python3-onnx here) with random weights
from a fixed seed, as initializers: ORT folds BatchNormalization into Conv and hands
hipdnn-ep the weights as a normal model's.  Every session uses ORT's default graph
optimizations (level `all`, --opt-level) and its default threads.

Rows of each model (the median wall time of --runs calls after --warmup, each call
synchronous):
  hipdnn-ep GPU, device I/O (IOBinding)  inputs and output in CUDA memory PyTorch allocated,
                                         bound by pointer with IOBinding as ORT's OrtDevice
                                         of hipdnn-ep's vendor id (the memory hipdnn-ep
                                         registers), else as device type "cuda"; as PyTorch's
                                         rows get theirs; only with torch and CUDA; where ORT
                                         refuses both, the row says why
  hipdnn-ep GPU, host I/O                NumPy in, NumPy out, as a plain session.run: ORT
                                         copies through hipdnn-ep's data transfer
  ORT CPU EP                             the reference every other row's output is compared
                                         with (--cpu-runs, --cpu-warmup: it is slow)
  torch eager                            the ONNX graph run node by node by torch on the GPU
                                         (F.conv2d, F.batch_norm in inference, ...; attention
                                         as F.scaled_dot_product_attention, as PyTorch models
                                         run it), TF32 off for matmuls and cuDNN: hipdnn's
                                         fp32 products are exact fp32 (docs/gpu.md), so this
                                         is the like-for-like anchor
  torch eager, TF32 (--tf32)             the same with TF32 allowed (PyTorch's cuDNN default)
  hipdnn-ep ..., TF32 (--tf32)           hipdnn-ep's rows again with ep.hipdnn.use_tf32=1
                                         (fp32 MatMul / Gemm with k-contiguous weights on the
                                         sm_90 kernel's TF32; the rest exact), held to
                                         TF32_WRONG_ABOVE
  torch.compile (--compile)              the same function under torch.compile, TF32 off;
                                         its compile time in the note
Columns: "vs torch eager" is torch eager's time over the row's (above 1: faster);
"err vs ORT CPU" is max |out - ref| / max |ref| against ORT's CPU EP; a row above 1e-3
(fp32 over these depths gives near 1e-6) or with a non-finite output is WRONG and left
untimed; "hipdnn-ep took" the model's nodes (ORT's Memcpy nodes not counted) in
hipdnn-ep's fused nodes, from get_provider_graph_assignment_info after ORT's rewrites.  The
host-I/O row's note gives session creation and the first run (plans built, kernels
compiled) and what ORT kept.

--budget S skips the models left once S seconds have passed (the rows say so); the
markdown file is rewritten after each model, so a run cut short keeps what it measured.
--markdown FILE writes the run as a history entry (benchmarks/results.py), which
`python3 benchmarks/results.py add FILE` files in benchmarks/history/ as the next run E.
Exit status 0 when every model ran (rows may still say WRONG or failed), 2 when the
`onnx` or `onnxruntime` package, or hipdnn-ep's device, is missing.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import gc
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests"))
import results as bench_results  # noqa: E402  benchmarks/results.py

try:
    from onnx import helper, numpy_helper

    import ort_models  # tests/ort_models.py
    ONNX_MISSING = None
except ImportError as e:
    ONNX_MISSING = (f"the onnx package does not import ({e}): it writes the models "
                    "(pip install onnx, or apt-get install python3-onnx)")

try:
    import torch
except ImportError:  # the PyTorch rows need it; the others do not
    torch = None

DEFAULT_EP_LIB = REPO / "hipdnn" / "lib" / "libhipdnn_ep.so"
OPT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
              "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}
WRONG_ABOVE = 1e-3
TF32_WRONG_ABOVE = 1e-2  # hipdnn-ep's TF32 rows: inputs with 10 mantissa bits, over the depth
TF32_IMPL = ", TF32 (ep.hipdnn.use_tf32=1)"
HOST_IO = "hipdnn-ep {device}, host I/O"
DEVICE_IO = "hipdnn-ep {device}, device I/O (IOBinding)"


# ---- the models --------------------------------------------------------------------------

@dataclass
class Case:
    name: str                               # what --models-list says
    label: str                              # the table's model column
    build: Callable[[], object]             # () -> onnx.ModelProto
    feeds: Callable[[np.random.Generator], Dict[str, np.ndarray]]


def image(b, img):
    return lambda rng: {"x": rng.standard_normal((b, 3, img, img)).astype(np.float32)}


def tokens(b, s, vocab):
    def make(rng):
        mask = np.zeros((b, 1, 1, s), np.float32)
        mask[b // 2:, ..., s - s // 4:] = -1e4  # half the sequences a quarter shorter
        return {"ids": rng.integers(0, vocab, (b, s)).astype(np.int64), "mask": mask}
    return make


def resnet_case(depth, b, img=224, widths=(64, 128, 256, 512), classes=1000, name=None):
    return Case(name or f"resnet{depth}_b{b}", f"ResNet-{depth}, batch {b}, {img}x{img}",
                lambda: ort_models.resnet(1, depth, widths, classes, b, img)[0], image(b, img))


def bert_case(b, s, d, heads, hidden, vocab, layers, name):
    return Case(name, f"BERT{'-base' if d == 768 else ''} encoder, {layers} layers, "
                      f"batch {b}, {s} tokens",
                lambda: ort_models.bert(3, "erf", b, s, d, heads, hidden, vocab, layers)[0],
                tokens(b, s, vocab))


def vit_case(b, img, patch, d, heads, hidden, classes, layers, name):
    return Case(name, f"ViT{'-B/16' if d == 768 else ''}, {layers} layers, batch {b}, "
                      f"{img}x{img}",
                lambda: ort_models.vit(5, b, img, patch, d, heads, hidden, classes, layers)[0],
                image(b, img))


def all_cases(small: bool) -> List[Case]:
    """Real widths, or (small) the tests' widths with 2 transformer layers."""
    if small:
        w = dict(widths=(8, 16, 32, 64), classes=10, img=32)
        return [resnet_case(18, 2, name="resnet18_small", **w),
                resnet_case(50, 2, name="resnet50_small", **w),
                bert_case(2, 8, 32, 4, 64, 50, 2, "bert_small"),
                vit_case(2, 16, 4, 32, 4, 64, 10, 2, "vit_small")]
    return [resnet_case(18, 1), resnet_case(18, 16), resnet_case(50, 1), resnet_case(50, 16),
            bert_case(8, 128, 768, 12, 3072, 30522, 12, "bert_base_b8"),
            vit_case(8, 224, 16, 768, 12, 3072, 1000, 12, "vit_b16_b8")]


DEFAULT_CASES = "resnet50_b1,resnet50_b16,bert_base_b8,vit_b16_b8"


# ---- timing and checks -----------------------------------------------------------------------

def median_ms(fn: Callable[[], object], warmup: int, runs: int,
              sync: Callable[[], None] = lambda: None) -> float:
    """The median wall time of `runs` calls of fn (each followed by sync) after `warmup`."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def rel_err(got: np.ndarray, ref: np.ndarray) -> float:
    """max |got - ref| / max |ref|: inf where the shapes differ or got is not finite."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    if got.shape != ref.shape or not np.all(np.isfinite(got)):
        return float("inf")
    return float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))


def checked(label, impl, ms, err, took="", note="", limit=WRONG_ABOVE) -> bench_results.ModelResult:
    """A row; untimed and WRONG where its error (over limit) says the output is not the
    model's."""
    if err is not None and not err <= limit:
        return (label, impl, None, err, took, f"WRONG: error {err:.1e} vs ORT CPU "
                                              f"(over {limit:g}); {note}".rstrip("; "))
    return (label, impl, ms, err, took, note)


def failed(label, impl, e: BaseException) -> bench_results.ModelResult:
    text = " ".join(str(e).split()) or type(e).__name__
    return (label, impl, None, None, "", f"failed: {text[:300]}")


# ---- ONNX Runtime --------------------------------------------------------------------------

def session_options(ort, args):
    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, OPT_LEVELS[args.opt_level])
    so.log_severity_level = 3
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    return so


def hipdnn_device(ort, kind: str):
    """hipdnn-ep's OrtEpDevice of that kind ("gpu" or "cpu"), by the metadata it sets."""
    mine = [d for d in ort.get_ep_devices() if d.ep_name == "hipdnn"]
    of_kind = [d for d in mine if dict(d.ep_metadata).get("hipdnn.device") == kind]
    if not of_kind:
        raise RuntimeError(f"hipdnn-ep offers no {kind} device (it offers "
                           f"{[dict(d.ep_metadata).get('hipdnn.device') for d in mine]}; "
                           "its info log says why: --ep-option log_level=info)")
    return of_kind[0]


def hipdnn_session(ort, data: bytes, device, args):
    so = session_options(ort, args)
    so.add_provider_for_devices([device], dict(args.ep_option))
    session = ort.InferenceSession(data, sess_options=so)
    session.disable_fallback()  # a failed run must fail, not rerun on the CPU EP
    if "hipdnn" not in session.get_providers():
        raise RuntimeError(f"hipdnn is not among the session's providers "
                           f"{session.get_providers()} (onnxruntime fell back)")
    return session


def took(session) -> Tuple[str, str]:
    """("N/M", "K fused nodes; ORT kept ...") from the session's node assignment."""
    if not hasattr(session, "get_provider_graph_assignment_info"):
        return "?", "no get_provider_graph_assignment_info in this onnxruntime"
    mine, total, kept, fused = 0, 0, collections.Counter(), set()
    for i, sub in enumerate(session.get_provider_graph_assignment_info()):
        for node in sub.get_nodes():
            if node.op_type.startswith("Memcpy"):
                continue
            total += 1
            if sub.ep_name == "hipdnn":
                mine += 1
                fused.add(i)
            else:
                kept[node.op_type] += 1
    kept_text = ", ".join(f"{n} {op}" for op, n in sorted(kept.items())) or "nothing"
    plural = "s" * (len(fused) != 1)
    return f"{mine}/{total}", f"{len(fused)} fused node{plural}, ORT kept {kept_text}"


def ort_cpu_rows(ort, case, data, feeds, args):
    """ORT's CPU EP: its row and its output, the reference."""
    so = session_options(ort, args)
    session = ort.InferenceSession(data, sess_options=so, providers=["CPUExecutionProvider"])
    ref = session.run(None, feeds)[0]

    def run():
        session.run(None, feeds)
    ms = median_ms(run, args.cpu_warmup, args.cpu_runs)
    return [checked(case.label, "ORT CPU EP", ms, rel_err(ref, ref))], ref


def hipdnn_rows(ort, case, data, feeds, ref, device, args):
    """hipdnn-ep on its device: device I/O (where torch has CUDA), then host I/O."""
    kind = "GPU" if args.device == "gpu" else "CPU"
    t0 = time.perf_counter()
    session = hipdnn_session(ort, data, device, args)
    t1 = time.perf_counter()
    out = session.run(None, feeds)[0]
    t2 = time.perf_counter()
    n_took, assignment = took(session)
    note = f"session {t1 - t0:.1f} s, first run {t2 - t1:.1f} s; {assignment}"
    err = rel_err(out, ref)

    def run():
        session.run(None, feeds)
    host_ms = median_ms(run, args.warmup, args.runs)
    limit = TF32_WRONG_ABOVE if args.use_tf32 else WRONG_ABOVE
    suffix = TF32_IMPL if args.use_tf32 else ""
    host = checked(case.label, HOST_IO.format(device=kind) + suffix, host_ms, err, n_took, note,
                   limit)
    if args.profile:
        profile(run, args.profile)
    rows = [host]
    if args.device == "gpu":
        try:
            rows.insert(0, iobinding_row(ort, session, case, feeds, ref, device, n_took,
                                         args))
        except Exception as e:  # the binding or its run: reported in the row
            rows.insert(0, failed(case.label, DEVICE_IO.format(device=kind) + suffix, e))
    session = None  # released before the PyTorch rows run
    return rows


def profile(run, top: int) -> None:
    """The GPU kernels of one run, by their total time (torch.profiler: CUPTI sees every
    kernel of the process, hipdnn-ep's too), the top ones printed."""
    if torch is None or not torch.cuda.is_available():
        log("  profile: needs torch with CUDA")
        return
    from torch.profiler import ProfilerActivity
    with torch.profiler.profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0)
        if us > 0:
            rows.append((us, e.count, e.key))
    total = sum(r[0] for r in rows) or 1.0
    rows.sort(reverse=True)
    log(f"  profile of one run: {len(rows)} kernels, {total / 1e3:.3f} ms on the GPU")
    for us, count, name in rows[:top]:
        log(f"    {us / 1e3:8.3f} ms {100 * us / total:5.1f} % x{count:<4} {name[:110]}")


def bind(ort, session, how, device, ordinal, tensors, dtypes):
    """An IOBinding of torch tensors {name: (tensor, is_output)} by pointer.  how "vendor":
    through the C binding with ORT's OrtDevice of hipdnn-ep's device's vendor id (the
    memory hipdnn-ep registers); "cuda": the public bind_input/bind_output, device type
    "cuda" (its vendor as that onnxruntime derives it)."""
    binding = session.io_binding()
    c_dev = None
    if how == "vendor":
        c_dev = ort.OrtDevice.make("cuda", ordinal, device.device.vendor_id)._get_c_device()
    for name, (t, is_output) in tensors.items():
        where = (c_dev,) if c_dev is not None else ("cuda", ordinal)
        target = binding._iobinding if c_dev is not None else binding
        fn = target.bind_output if is_output else target.bind_input
        fn(name, *where, dtypes[name], list(t.shape), t.data_ptr())
    return binding


def iobinding_row(ort, session, case, feeds, ref, device, n_took, args):
    """The session run on CUDA tensors torch allocated, bound by pointer: the first way of
    binding them that ORT takes and that gives the model's output."""
    impl = DEVICE_IO.format(device="GPU") + (TF32_IMPL if args.use_tf32 else "")
    limit = TF32_WRONG_ABOVE if args.use_tf32 else WRONG_ABOVE
    if torch is None or not torch.cuda.is_available():
        return (case.label, impl, None, None, n_took, "skipped: needs torch with CUDA for "
                                                     "the device buffers")
    ordinal = int(dict(device.ep_metadata).get("hipdnn.device_id", 0))
    dev = torch.device("cuda", ordinal)
    out_name = session.get_outputs()[0].name
    y = torch.empty(ref.shape, dtype=torch.float32, device=dev)
    tensors = {k: (torch.from_numpy(v).to(dev), False) for k, v in feeds.items()}
    tensors[out_name] = (y, True)
    dtypes = {k: v.dtype.type for k, v in feeds.items()}
    dtypes[out_name] = np.float32
    tried = []
    for how in ("vendor", "cuda"):
        try:
            binding = bind(ort, session, how, device, ordinal, tensors, dtypes)
            y.fill_(float("nan"))
            session.run_with_iobinding(binding)
            torch.cuda.synchronize(dev)
            err = rel_err(y.cpu().numpy(), ref)
            if err <= limit:
                break
            tried.append(f"bound as {how!r}: output error {err:.1e}")
        except Exception as e:  # the next way, or the row says why
            tried.append(f"bound as {how!r}: {' '.join(str(e).split())[:200]}")
    else:
        return (case.label, impl, None, None, n_took, "failed: " + "; ".join(tried))

    def run():
        session.run_with_iobinding(binding)
    ms = median_ms(run, args.warmup, args.runs, lambda: torch.cuda.synchronize(dev))
    note = f"bound as {how!r}" + (f" (first {tried[0]})" if tried else "")
    return checked(case.label, impl, ms, err, n_took, note, limit)


# ---- PyTorch ------------------------------------------------------------------------------

def attention_patterns(nodes, scalars):
    """The decomposed attentions of an ONNX graph (MatMul(q, kt) -> Mul by a constant scale
    -> [Add a mask] -> Softmax(-1) -> MatMul(., v), each value read once), which the torch
    model runs as one scaled_dot_product_attention.  nodes: (op, inputs, outputs, attrs).
    Returns ({index of the last MatMul: (q, kt, v, mask or None, scale)}, indices skipped)."""
    producer = {o: i for i, n in enumerate(nodes) for o in n[2]}
    uses = collections.Counter(name for n in nodes for name in n[1])
    readers = collections.defaultdict(list)
    for i, n in enumerate(nodes):
        for name in n[1]:
            readers[name].append(i)

    def made_by(name, op):
        i = producer.get(name)
        return i if i is not None and nodes[i][0] == op and uses[name] == 1 else None
    fused, skip = {}, set()
    for i, (op, ins, outs, attrs) in enumerate(nodes):
        if op != "Softmax" or attrs.get("axis", -1) not in (-1, 3) or uses[outs[0]] != 1:
            continue
        last = readers[outs[0]][0]
        if nodes[last][0] != "MatMul" or nodes[last][1][0] != outs[0]:
            continue
        chain, mask, scores = [i], None, ins[0]
        add = made_by(scores, "Add")
        if add is not None:
            scores, mask = nodes[add][1]
            chain.append(add)
        mul = made_by(scores, "Mul")
        if mul is None or nodes[mul][1][1] not in scalars:
            continue
        mm = made_by(nodes[mul][1][0], "MatMul")
        if mm is None:
            continue
        q, kt = nodes[mm][1]
        fused[last] = (q, kt, nodes[last][1][1], mask, scalars[nodes[mul][1][1]])
        skip.update(chain + [mul, mm])
    return fused, skip


class TorchModel:
    """An ONNX graph run node by node with torch on `device`, its initializers as tensors
    there: the same model, the same weights.  Called with {input name: tensor}.  Each node
    becomes one torch call, chosen once here, so that a call costs what a hand-written
    module's does."""

    def __init__(self, model, device):
        arrays = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.ints = {k: [int(v) for v in a.reshape(-1)] for k, a in arrays.items()
                     if a.dtype == np.int64}
        scalars = {k: float(a) for k, a in arrays.items() if a.ndim == 0 and a.dtype != np.int64}
        self.weights = {k: torch.from_numpy(np.array(a)).to(device) for k, a in arrays.items()}
        nodes = [(n.op_type, list(n.input), list(n.output),
                  {a.name: helper.get_attribute_value(a) for a in n.attribute})
                 for n in model.graph.node]
        self.output = model.graph.output[0].name
        self.fused, skip = attention_patterns(nodes, scalars)
        self.steps = []
        for i, (op, ins, outs, attrs) in enumerate(nodes):
            if i in self.fused:
                q, kt, v, mask, scale = self.fused[i]
                self.steps.append((self.sdpa(scale, mask is not None),
                                   [q, kt, v] + ([mask] if mask else []), outs[0]))
            elif i not in skip:
                self.steps.append((self.node(op, ins, attrs), ins, outs[0]))

    def __call__(self, feeds):
        env = dict(self.weights)
        env.update(feeds)
        for fn, ins, out in self.steps:
            env[out] = fn(*[env[n] for n in ins])
        return env[self.output]

    @staticmethod
    def sdpa(scale, masked):
        F = torch.nn.functional
        if hasattr(F, "scaled_dot_product_attention"):
            return lambda q, kt, v, mask=None: F.scaled_dot_product_attention(
                q, kt.transpose(-2, -1), v, attn_mask=mask, scale=scale)

        def decomposed(q, kt, v, mask=None):  # torch before 2.0
            s = torch.matmul(q, kt) * scale
            return torch.matmul(torch.softmax(s if mask is None else s + mask, -1), v)
        return decomposed

    def node(self, op, names, a):
        """The torch function of one node (its inputs as arguments)."""
        F = torch.nn.functional
        pads = a.get("pads", [0, 0, 0, 0])
        if op in ("Conv", "MaxPool") and pads[:2] != pads[2:]:
            raise ValueError(f"{op}: asymmetric pads {pads}")
        if op == "Reshape":
            shape = self.ints[names[1]]
            return lambda x, _: x.reshape([x.shape[i] if d == 0 else d
                                           for i, d in enumerate(shape)])
        if op == "Gemm" and (a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0
                             or a.get("transA", 0)):
            raise ValueError(f"Gemm: alpha, beta or transA {a}")
        if (op == "Flatten" and a.get("axis", 1) != 1) or (op == "Gather" and a.get("axis", 0)):
            raise ValueError(f"{op} {a}")
        ops = {
            "Conv": lambda x, w, b=None: F.conv2d(x, w, b, a.get("strides", 1), pads[:2],
                                                  a.get("dilations", 1), a.get("group", 1)),
            "MaxPool": lambda x: F.max_pool2d(x, a["kernel_shape"], a.get("strides", 1), pads[:2]),
            "BatchNormalization": lambda x, s, b, m, v: F.batch_norm(
                x, m, v, s, b, False, 0.0, a.get("epsilon", 1e-5)),
            "LayerNormalization": lambda x, g, b=None: F.layer_norm(
                x, x.shape[a.get("axis", -1) % x.dim():], g, b, a.get("epsilon", 1e-5)),
            "Gemm": lambda x, w, c=None: F.linear(x, w if a.get("transB", 0) else w.t(), c),
            "Relu": torch.relu, "Erf": torch.erf, "MatMul": torch.matmul,
            "Add": lambda x, y: x + y, "Mul": lambda x, y: x * y, "Div": lambda x, y: x / y,
            "GlobalAveragePool": lambda x: x.mean((2, 3), keepdim=True),
            "Flatten": lambda x: x.flatten(1),
            "Transpose": lambda x: x.permute(a["perm"]),
            "Softmax": lambda x: torch.softmax(x, a.get("axis", -1)),
            "Gather": lambda t, i: t[i],
            "ReduceMean": lambda x: x.mean(a["axes"], keepdim=bool(a.get("keepdims", 1))),
            "Gelu": lambda x: F.gelu(x, approximate=a.get("approximate", b"none").decode()),
        }
        if op not in ops:
            raise ValueError(f"the torch model does not run {op}")
        return ops[op]


def set_tf32(on: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def torch_rows(case, model, feeds, ref, args):
    """torch eager (TF32 off), with --tf32 eager with TF32 on, with --compile torch.compile."""
    if args.no_torch or torch is None:
        why = "--no-torch" if args.no_torch else "torch is not installed"
        return [(case.label, "torch eager", None, None, "", f"skipped: {why}")]
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    where = "" if cuda else ", CPU"  # never the GPU anchor of a standing row
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    rows = []
    try:
        fn = TorchModel(model, dev)
        xs = {k: torch.from_numpy(v).to(dev) for k, v in feeds.items()}
        variants = [("torch eager", False, fn)]
        if args.tf32:
            variants.append(("torch eager, TF32", True, fn))
        if args.compile:
            variants.append(("torch.compile", False, None))
        with torch.no_grad():
            for impl, tf32, f in variants:
                set_tf32(tf32)
                try:
                    t0 = time.perf_counter()
                    f = f or torch.compile(fn.__call__)
                    out = f(xs)
                    sync()
                    note = (f"compiled in {time.perf_counter() - t0:.1f} s"
                            if impl == "torch.compile" else "")
                    err = rel_err(out.float().cpu().numpy(), ref)
                    ms = median_ms(lambda: f(xs), args.warmup, args.runs, sync)
                    rows.append((case.label, impl + where, ms, err, "", "TF32: error not "
                                 "checked") if tf32 else checked(case.label, impl + where, ms,
                                                                 err, "", note))
                except Exception as e:  # this variant's failure, reported in its row
                    rows.append(failed(case.label, impl + where, e))
    finally:
        set_tf32(saved[0])
        torch.backends.cudnn.allow_tf32 = saved[1]
    return rows


# ---- a run ---------------------------------------------------------------------------------

def log(text: str) -> None:
    print(text, flush=True)


def show(row: bench_results.ModelResult) -> str:
    label, impl, ms, err, n_took, note = row
    timed = f"{ms:10.3f} ms" if ms else " " * 13
    err_text = f"err {err:.1e}" if err is not None else ""
    return f"  {impl:<42} {timed}  {err_text:<12} {n_took:<9} {note}".rstrip()


def run_case(ort, case: Case, device, args) -> List[bench_results.ModelResult]:
    """One model's rows: hipdnn-ep's, then the ORT CPU EP's, then PyTorch's."""
    t0 = time.perf_counter()
    model = case.build()
    data = model.SerializeToString()
    feeds = case.feeds(np.random.default_rng(11))
    log(f"{case.label} ({case.name}): {len(model.graph.node)} nodes, "
        f"{len(data) / 2**20:.1f} MiB, written in {time.perf_counter() - t0:.1f} s")
    try:
        cpu, ref = ort_cpu_rows(ort, case, data, feeds, args)
    except Exception as e:  # without the reference no other row can be checked
        return [failed(case.label, "ORT CPU EP", e)]
    hip = []
    for tf32 in (False, True) if args.tf32 else (False,):
        # --tf32: hipdnn-ep's rows again with ep.hipdnn.use_tf32=1
        run_args = argparse.Namespace(**vars(args))
        run_args.use_tf32 = tf32
        if tf32:
            run_args.ep_option = list(args.ep_option) + [("use_tf32", "1")]
            run_args.profile = 0
        try:
            hip += hipdnn_rows(ort, case, data, feeds, ref, device, run_args)
        except Exception as e:  # the session or its run: reported in the row
            hip.append(failed(case.label, HOST_IO.format(device=args.device.upper()) +
                              (TF32_IMPL if tf32 else ""), e))
    rows = hip + cpu + torch_rows(case, model, feeds, ref, args)
    for row in rows:
        log(show(row))
    log(f"  ({time.perf_counter() - t0:.1f} s)")
    del model, data
    gc.collect()
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
    return rows


def device_name(args) -> str:
    if args.device == "cpu":
        return "CPU (hipdnn-ep's CPU device)"
    if torch is not None and torch.cuda.is_available():
        return torch.cuda.get_device_name()
    return "GPU"


def report(rows, args, argv, versions: str, preamble: str, final: bool) -> None:
    """The table (printed at the end); with --markdown the history entry, each time."""
    table = bench_results.format_model_table(rows)
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    if final:
        log(f"\n{device_name(args)}, {date}, {versions}\n")
        log("\n".join(table))
    if args.markdown:
        command = " ".join(argv if argv is not None else sys.argv[1:])
        entry = bench_results.model_run_entry(
            table, device_name(args), date, args.commit or bench_results.git_commit(), versions,
            preamble=f"`ort_model_bench.py {command}`: {preamble}")
        Path(args.markdown).write_text(entry, encoding="utf-8")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models-list", default="",
                   help=f"comma-separated case names, or all (default {DEFAULT_CASES}; with "
                        "--small every small case); --list names them")
    p.add_argument("--small", action="store_true", help="the tests' widths: seconds anywhere")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--device", choices=["gpu", "cpu"], default="gpu", help="hipdnn-ep's device")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--cpu-runs", type=int, default=3, help="timed runs of ORT's CPU EP")
    p.add_argument("--cpu-warmup", type=int, default=1)
    p.add_argument("--compile", action="store_true", help="a torch.compile row")
    p.add_argument("--tf32", action="store_true", help="a torch eager row with TF32 on, and "
                   "hipdnn-ep's rows with ep.hipdnn.use_tf32=1")
    p.add_argument("--no-torch", action="store_true", help="no PyTorch rows")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="print the N GPU kernels that take longest in one hipdnn-ep run")
    p.add_argument("--budget", type=float, default=0.0,
                   help="skip the models left after this many seconds (0: none)")
    p.add_argument("--ep-lib", type=Path, default=DEFAULT_EP_LIB)
    p.add_argument("--ep-option", action="append", default=[], metavar="KEY=VALUE",
                   help="a hipdnn-ep option (docs/onnxruntime.md, Options)")
    p.add_argument("--opt-level", choices=list(OPT_LEVELS), default="all")
    p.add_argument("--markdown", metavar="FILE", help="also write the run as a history entry")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse)")
    p.add_argument("--date", help="YYYY-MM-DD (default: today, UTC)")
    args = p.parse_args(argv)
    options = []
    for kv in args.ep_option:
        key, eq, value = kv.partition("=")
        if not eq:
            p.error(f"--ep-option {kv}: expected KEY=VALUE")
        options.append((key, value))
    args.ep_option = options
    args.ep_lib = args.ep_lib.resolve()  # ORT reads a relative path from its own folder
    if args.runs < 1 or args.cpu_runs < 1 or args.warmup < 0 or args.cpu_warmup < 0:
        p.error("--runs and --cpu-runs must be 1 or more, the warm-ups 0 or more")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    cases = {c.name: c for c in all_cases(args.small)}
    if args.list:
        for c in cases.values():
            default = "  (default)" if c.name in DEFAULT_CASES.split(",") else ""
            log(f"{c.name:<16} {c.label}{default}")
        return 0
    wanted = args.models_list or (",".join(cases) if args.small else DEFAULT_CASES)
    names = list(cases) if wanted == "all" else [n for n in wanted.split(",") if n]
    unknown = [n for n in names if n not in cases]
    if unknown or not names:
        log(f"ort_model_bench: unknown cases {unknown or wanted!r}; these are: {', '.join(cases)}")
        return 2
    if ONNX_MISSING:
        log(f"ort_model_bench: {ONNX_MISSING}")
        return 2
    try:
        import onnxruntime as ort
    except ImportError as e:
        log(f"ort_model_bench: the onnxruntime package does not import ({e})")
        return 2
    if not hasattr(ort, "register_execution_provider_library"):
        log(f"ort_model_bench: onnxruntime {ort.__version__} has no plugin-EP API (1.24 or later)")
        return 2
    try:
        ort.register_execution_provider_library("hipdnn", str(args.ep_lib))
        device = hipdnn_device(ort, args.device)
    except Exception as e:  # no library, or no device of that kind
        log(f"ort_model_bench: hipdnn-ep ({args.ep_lib}): {e}")
        return 2
    versions = f"onnxruntime {ort.__version__}" + (f", torch {torch.__version__}" if torch else "")
    preamble = (f"hipdnn {dict(device.ep_metadata).get('hipdnn.version', '?')}; median of "
                f"{args.runs} runs after {args.warmup} (ORT CPU EP: {args.cpu_runs} after "
                f"{args.cpu_warmup}); ORT graph optimizations `{args.opt_level}`.")
    rows: List[bench_results.ModelResult] = []
    start = time.perf_counter()
    for name in names:
        case = cases[name]
        if args.budget and time.perf_counter() - start > args.budget:
            rows.append((case.label, HOST_IO.format(device=args.device.upper()), None, None, "",
                         f"skipped: --budget {args.budget:g} s spent"))
        else:
            rows += run_case(ort, case, device, args)
        report(rows, args, argv, versions, preamble, final=name == names[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
