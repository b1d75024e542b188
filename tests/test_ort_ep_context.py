"""hipdnn-ep's EPContext models (docs/onnxruntime.md, "EPContext models"): a session with
ep.context_enable=1 writes the model with each fused node as an EPContext node whose
payload is hipdnn's serialized graph and engine config; a fresh session loads it and runs
the plan with no lowering, on both devices (the CPU and the fake GPU), embedded
(ep.context_embed_mode=1) or in a side file (0).  A payload that is damaged, cut short,
missing, of another hipdnn-ep version or for the other device gives an error naming the
node and its file, and the runner exits normally (status 1, no crash)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_ort_ep import (FLOAT, ORT_RUN, ORT_RUN_PY, EP_LIB, RUNNER, fake_gpu_env, helper,  # noqa: F401
                         model, numpy_helper, rand, rng, run, runner_available)
from test_ort_ep_models import devices

TOL = dict(rtol=2e-4, atol=2e-5)


def conv_block(rng):
    """Conv + bias -> Relu -> LayerNormalization -> (Einsum on ORT) -> Sigmoid: two fused
    nodes around a node hipdnn-ep leaves to ORT, weights as initializers."""
    w, b = rand(rng, 4, 3, 3, 3), rand(rng, 4)
    sc, sh = rand(rng, 5), rand(rng, 5)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("LayerNormalization", ["r", "sc", "sh"], ["n"], axis=-1),
             helper.make_node("Einsum", ["n"], ["e"], equation="ij...->ij..."),
             helper.make_node("Sigmoid", ["e"], ["y"])]
    m = model(nodes, [("x", [2, 3, 5, 5])], [("y", [2, 4, 5, 5])],
              [("w", w), ("b", b), ("sc", sc), ("sh", sh)])
    return m, {"x": rand(rng, 2, 3, 5, 5)}


def ort(args, device="cpu", expect_ok=True):
    """The runner with these arguments (hipdnn-ep on `device`, ORT's log at INFO); returns
    (return code, stdout, stderr).  A crash (a signal) always fails the test."""
    cmd = [str(ORT_RUN)] if RUNNER == "c" else [sys.executable, str(ORT_RUN_PY),
                                                "--ep-lib", str(EP_LIB)]
    cmd += ["--device", device, "--opt-level", "disable", "--log-level", "1",
            "--option", "log_level=info"] + args
    real = os.environ.get("HIPDNN_TEST_NO_FAKE") == "1"  # a GPU machine: its real GPU
    env = fake_gpu_env() if device == "gpu" and not real else None
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode in (0, 1), f"runner crashed ({p.returncode}):\n{p.stderr[-3000:]}"
    if expect_ok:
        assert p.returncode == 0, f"{p.stdout}\n{p.stderr[-4000:]}"
    return p.returncode, p.stdout, p.stderr


def compile_model(tmp_path, m, feeds, device, embed):
    """Writes m and its inputs under tmp_path/<device>_<embed>/, runs it with
    ep.context_enable=1 and returns (folder, the context model's path, the output, log)."""
    work = tmp_path / f"{device}_{embed}"
    work.mkdir()
    import onnx
    onnx.save(m, str(work / "model.onnx"))
    args = ["--model", str(work / "model.onnx"), "--out-dir", str(work),
            "--config", "ep.context_enable=1", "--config", f"ep.context_embed_mode={embed}"]
    for name, a in feeds.items():
        np.save(work / f"{name}.npy", a)
        args += ["--input", f"{name}={work / (name + '.npy')}"]
    _, _, err = ort(args, device)
    out = np.load(work / "y.0.npy")
    return work, work / "model_ctx.onnx", out, err


def load(work, ctx, device, expect_ok=True):
    """Runs the context model in a fresh process; (return code, output or None, log)."""
    args = ["--model", str(ctx), "--out-dir", str(work), "--input", f"x={work / 'x.npy'}"]
    (work / "y.0.npy").unlink(missing_ok=True)
    rc, out, err = ort(args, device, expect_ok)
    return rc, (np.load(work / "y.0.npy") if rc == 0 else None), out, err


def epcontext_nodes(ctx):
    import onnx
    return [n for n in onnx.load(str(ctx)).graph.node if n.op_type == "EPContext"]


@pytest.mark.parametrize("embed", [1, 0])
@pytest.mark.parametrize("device", devices())
def test_a_compiled_model_reloads_without_lowering_and_gives_the_same_outputs(tmp_path, rng,
                                                                              device, embed):
    m, feeds = conv_block(rng)
    want, _, _ = run(tmp_path, m, feeds, ep="cpu")
    dev = device or "gpu"
    work, ctx, first, err = compile_model(tmp_path, m, feeds, dev, embed)
    assert len(re.findall(r"built at compile time for its EPContext node", err)) == 2, err[-3000:]
    np.testing.assert_allclose(first, want["y"][0], **TOL)
    nodes = epcontext_nodes(ctx)
    assert len(nodes) == 2
    for n in nodes:
        a = {x.name: x for x in n.attribute}
        assert n.domain == "com.microsoft" and a["source"].s == b"hipdnn"
        assert a["main_context"].i == 1 and a["embed_mode"].i == embed
        if embed:
            assert a["ep_cache_context"].s.startswith(b"HIPDNNEP")
        else:
            side = work / a["ep_cache_context"].s.decode()
            assert side.parent == work and side.read_bytes().startswith(b"HIPDNNEP")
    if device == "gpu":  # the fake GPU's plans are on the emulated HIP engine
        assert "on engine hip_emulated" in err, err[-3000:]
    rc, got, out, err = load(work, ctx, dev)
    # the same plans, so the same bits; and ORT's CPU EP's values within tolerance
    np.testing.assert_array_equal(got, first)
    np.testing.assert_allclose(got, want["y"][0], **TOL)
    assert len(re.findall(r"restored from EPContext node '[^']+' \((payload in the model|file)",
                          err)) == 2, err[-3000:]
    assert "plan 1 built" not in err and "built at compile time" not in err
    assert [line.split()[3] for line in out.splitlines() if line.startswith("assigned hipdnn")] \
        == ["EPContext", "EPContext"]


def fnv1a(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def reseal(payload):
    """The payload with its checksum made right again (a change that is not damage)."""
    body = payload[:-8]
    return body + fnv1a(body).to_bytes(8, "little")


def hostile(kind, payload):
    if kind == "bit flip":
        b = bytearray(payload)
        b[len(b) // 2] ^= 0x10
        return bytes(b)
    if kind == "truncated":
        return payload[: len(payload) * 2 // 3]
    if kind == "other version":
        n = int.from_bytes(payload[20:24], "little")
        return reseal(payload[:24] + b"9" * n + payload[24 + n:])
    if kind == "not a payload":
        return b"\x00" * 64
    raise ValueError(kind)


REASONS = {"bit flip": "checksum does not match", "truncated": "it is truncated",
           "other version": "it was written by hipdnn-ep 9", "not a payload":
           "not a hipdnn-ep EPContext payload", "missing": "No such file or directory"}


@pytest.mark.parametrize("kind,embed", [(k, e) for k in REASONS for e in (1, 0)
                                        if not (k == "missing" and e)])  # embedded: no file
def test_a_bad_payload_is_refused_naming_the_node_and_file(tmp_path, rng, kind, embed):
    import onnx
    m, feeds = conv_block(rng)
    work, ctx, _, _ = compile_model(tmp_path, m, feeds, "cpu", embed)
    cm = onnx.load(str(ctx))
    node = next(n for n in cm.graph.node if n.op_type == "EPContext")
    attr = next(a for a in node.attribute if a.name == "ep_cache_context")
    where = "payload in the model"
    if embed:
        attr.s = hostile(kind, attr.s)
        onnx.save(cm, str(ctx))
    else:
        side = work / attr.s.decode()
        where = f"file '{side}'"
        if kind == "missing":
            side.unlink()
        else:
            side.write_bytes(hostile(kind, side.read_bytes()))
    rc, _, _, err = load(work, ctx, "cpu", expect_ok=False)
    assert rc == 1
    msg = [line for line in err.splitlines() if "CreateSession" in line][-1]
    assert f"EPContext node '{node.name}' ({where}" in msg, msg
    assert REASONS[kind] in msg, msg


def test_a_side_file_path_leaving_the_model_folder_is_refused(tmp_path, rng):
    import onnx
    m, feeds = conv_block(rng)
    work, ctx, _, _ = compile_model(tmp_path, m, feeds, "cpu", 0)
    cm = onnx.load(str(ctx))
    node = next(n for n in cm.graph.node if n.op_type == "EPContext")
    attr = next(a for a in node.attribute if a.name == "ep_cache_context")
    (tmp_path / "outside.bin").write_bytes((work / attr.s.decode()).read_bytes())
    attr.s = b"../outside.bin"
    onnx.save(cm, str(ctx))
    rc, _, _, err = load(work, ctx, "cpu", expect_ok=False)
    assert rc == 1 and "a file inside the model's folder" in err, err[-2000:]


@pytest.mark.parametrize("made,used", [("cpu", "gpu"), ("gpu", "cpu")])
def test_a_payload_for_the_other_device_is_refused(tmp_path, rng, made, used):
    if "gpu" not in devices():
        pytest.skip("the fake GPU is not here (HIPDNN_TEST_NO_FAKE=1)")
    m, feeds = conv_block(rng)
    work, ctx, _, _ = compile_model(tmp_path, m, feeds, made, 1)
    rc, _, _, err = load(work, ctx, used, expect_ok=False)
    assert rc == 1
    want = (f"it was compiled for hipdnn-ep's {'CPU' if made == 'cpu' else 'GPU (cuda)'}; "
            f"this session uses its {'CPU' if used == 'cpu' else 'GPU (cuda)'}")
    assert want in err and "EPContext node '" in err, err[-2000:]


def test_a_symbolic_input_dim_cannot_be_compiled_into_a_plan(tmp_path, rng):
    m, feeds = conv_block(rng)
    m.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"  # symbolic batch
    work = tmp_path / "sym"
    work.mkdir()
    import onnx
    onnx.save(m, str(work / "model.onnx"))
    np.save(work / "x.npy", feeds["x"])
    rc, _, err = ort(["--model", str(work / "model.onnx"), "--out-dir", str(work),
                      "--config", "ep.context_enable=1", "--input", f"x={work / 'x.npy'}"],
                     expect_ok=False)
    assert rc == 1 and "holds a plan for fixed input shapes" in err and "'x'" in err, err[-2000:]


# ---- payloads made on purpose: a right checksum over a graph that reaches past ORT's buffers

class Payload:
    """An EPContext payload decoded (ep/context.c's format), to be changed and encoded."""

    def __init__(self, data):
        self.data, self.at = data, 0
        assert self.raw(8) == b"HIPDNNEP"
        self.format, _ = self.u(4), self.u(8)
        self.head = [self.s(), self.u(4), self.u(4), self.s(), self.s(), self.u(4), self.u(4)]
        self.inputs, self.outputs = self.io(), self.io()
        self.parts = []
        for _ in range(self.u(4)):
            engine = self.s()
            knobs = [(self.u(8), self.u(8)) for _ in range(self.u(4))]
            binds = [(self.u(8), self.u(4), self.u(4)) for _ in range(self.u(4))]
            self.parts.append({"engine": engine, "knobs": knobs, "bindings": binds,
                               "graph": self.raw(self.u(8))})
        assert self.at == len(data) - 8

    def raw(self, n):
        self.at += n
        return self.data[self.at - n:self.at]

    def u(self, n):
        return int.from_bytes(self.raw(n), "little")

    def s(self):
        return self.raw(self.u(4))

    def io(self):
        return [(self.s(), [self.u(8) for _ in range(self.u(4))]) for _ in range(self.u(4))]

    def encode(self):
        u4, u8 = (lambda v: v.to_bytes(4, "little")), (lambda v: v.to_bytes(8, "little"))
        s = lambda b: u4(len(b)) + b  # noqa: E731
        out = s(self.head[0]) + u4(self.head[1]) + u4(self.head[2]) + s(self.head[3]) + \
            s(self.head[4]) + u4(self.head[5]) + u4(self.head[6])
        for io in (self.inputs, self.outputs):
            out += u4(len(io)) + b"".join(s(n) + u4(len(d)) + b"".join(u8(x) for x in d)
                                          for n, d in io)
        out += u4(len(self.parts))
        for p in self.parts:
            out += s(p["engine"]) + u4(len(p["knobs"]))
            out += b"".join(u8(i) + u8(v) for i, v in p["knobs"])
            out += u4(len(p["bindings"])) + b"".join(u8(uid) + u4(k) + u4(i)
                                                     for uid, k, i in p["bindings"])
            out += u8(len(p["graph"])) + p["graph"]
        body = b"HIPDNNEP" + u4(self.format) + u8(len(out) + 28) + out
        return reseal(body + b"\0" * 8)


IN, OUT = 0, 1  # ep_bind_kind
X, R, Y = 1, 2, 3  # the uids of the graphs made here


def relu_sigmoid_graph(x_dim=(2, 3), x_stride=None, x_type=None, y_dim=(2, 3), y_stride=None,
                       r_dim=None):
    """x -> relu -> r (virtual) -> sigmoid -> y as hipdnn serializes it, uids X, R, Y: what
    hipdnn-ep makes of the model below, with the dims, strides and types given."""
    import hipdnn
    dt = hipdnn.data_type
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name="crafted")
    x = g.tensor(name="x", dim=list(x_dim), data_type=x_type or dt.FLOAT).set_uid(X)
    if x_stride:
        x.set_stride(list(x_stride))
    r = g.relu(input=x, name="relu").set_uid(R).set_name("r").set_dim(list(r_dim or y_dim))
    y = g.sigmoid(input=r, name="sig").set_uid(Y).set_output(True).set_name("y") \
        .set_dim(list(y_dim)).set_data_type(dt.FLOAT)
    if y_stride:
        y.set_stride(list(y_stride))
    g.validate()
    return g.serialize()


def overlapping_output_graph():
    """The graph with y's strides [1, 1], two elements at each address: hipdnn's validation
    refuses to make it, so it is made with strides [7, 1] and the 7 patched."""
    data = relu_sigmoid_graph(y_stride=(7, 1))
    seven = (7).to_bytes(8, "little")
    assert data.count(seven) == 1
    return data.replace(seven, (1).to_bytes(8, "little"))


def relu_sigmoid_context(tmp_path, rng):
    """The EPContext model (embedded) of x [2, 3] -> Relu -> Sigmoid -> y on the CPU."""
    m = model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Sigmoid", ["r"], ["y"])],
              [("x", [2, 3])], [("y", [2, 3])])
    return compile_model(tmp_path, m, {"x": rand(rng, 2, 3)}, "cpu", 1)


def with_payload(ctx, change):
    """Rewrites the context model's payload as change(Payload) leaves it; the node's name."""
    import onnx
    cm = onnx.load(str(ctx))
    node = next(n for n in cm.graph.node if n.op_type == "EPContext")
    attr = next(a for a in node.attribute if a.name == "ep_cache_context")
    p = Payload(attr.s)
    change(p)
    attr.s = p.encode()
    onnx.save(cm, str(ctx))
    return node.name


def crafted(graph=None, bindings=((X, IN, 0), (Y, OUT, 0)), shape=None):
    def change(p):
        assert len(p.parts) == 1
        p.parts[0]["graph"] = graph if graph is not None else relu_sigmoid_graph()
        p.parts[0]["bindings"] = list(bindings)
        if shape:
            p.inputs[0] = (p.inputs[0][0], list(shape))
            p.outputs[0] = (p.outputs[0][0], list(shape))
    return change


def test_a_payload_decoded_and_encoded_again_with_a_graph_made_here_runs(tmp_path, rng):
    """The control for the hostile payloads below: the same format, a graph made here with
    everything in bounds, loads and computes sigmoid(relu(x))."""
    work, ctx, first, _ = relu_sigmoid_context(tmp_path, rng)
    with_payload(ctx, lambda p: None)  # decoded and encoded: the same bytes work
    rc, got, _, err = load(work, ctx, "cpu")
    np.testing.assert_array_equal(got, first)
    with_payload(ctx, crafted())
    rc, got, _, err = load(work, ctx, "cpu")
    x = np.load(work / "x.npy").astype(np.float64)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-np.maximum(x, 0))), **TOL)
    assert "restored from EPContext node" in err


def f64():
    import hipdnn
    return hipdnn.data_type.DOUBLE


HOSTILE = {
    "bigger tensors": (dict(graph=lambda: relu_sigmoid_graph((4, 3), y_dim=(4, 3))),
                       "tensor 'x' (uid 1), bound to input 0 'x' [2, 3], reaches 12 elements "
                       "through its strides, and the buffer holds 6"),
    "strides past the buffer": (dict(graph=lambda: relu_sigmoid_graph(x_stride=(6, 1))),
                                "tensor 'x' (uid 1), bound to input 0 'x' [2, 3], reaches 9 "
                                "elements"),
    "another data type": (dict(graph=lambda: relu_sigmoid_graph(x_type=f64())),
                          "tensor 'x' (uid 1), bound to input 0 'x' [2, 3], has data type "
                          "float64 where the buffer holds float32"),
    # hipdnn's own validation of the bytes refuses it before hipdnn-ep's checks would
    "an output over itself": (dict(graph=overlapping_output_graph),
                              "tensor 'y' (uid 3), output of sigmoid 'sig': strides [1, 1] for "
                              "dims [2, 3] overlap or interleave"),
    "a smaller output": (dict(graph=lambda: relu_sigmoid_graph((1, 3), y_dim=(1, 3))),
                         "tensor 'y' (uid 3), bound to output 0 'y' [2, 3], has 3 elements "
                         "for an output of 6"),
    "a virtual tensor bound": (dict(bindings=[(X, IN, 0), (R, IN, 0), (Y, OUT, 0)]),
                               "tensor 'r' (uid 2), bound to input 0 'x' [2, 3], is virtual"),
    "a tensor bound twice": (dict(bindings=[(X, IN, 0), (X, IN, 0), (Y, OUT, 0)]),
                             "tensor 'x' (uid 1), bound to input 0 'x' [2, 3], is bound 2 times"),
    "an output bound twice": (dict(bindings=[(X, OUT, 0), (Y, OUT, 0)]),
                              "tensor 'y' (uid 3), bound to output 0 'y' [2, 3], is the second "
                              "tensor bound to it"),
    "an input written": (dict(bindings=[(Y, IN, 0), (X, OUT, 0)]),
                         "tensor 'y' (uid 3), bound to input 0 'x' [2, 3], is written by the "
                         "graph, and an input is only read"),
    "a tensor left unbound": (dict(bindings=[(Y, OUT, 0)]),
                              "tensor 'x' (uid 1) is not virtual, and no memory is bound to it"),
    "a uid of no tensor": (dict(bindings=[(X, IN, 0), (7, IN, 0), (Y, OUT, 0)]),
                           "part 0 binds uid 7, which names no tensor of its graph"),
    "shapes other than the model's": (
        dict(graph=lambda: relu_sigmoid_graph((4, 3), y_dim=(4, 3)), shape=(4, 3)),
        "its input 'x' has shape [4, 3], and the EPContext node's input in the model [2, 3]"),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_payload_whose_graph_reaches_past_orts_buffers_is_refused(tmp_path, rng, kind):
    args, reason = HOSTILE[kind]
    args = dict(args)
    if "graph" in args:
        args["graph"] = args["graph"]()
    work, ctx, _, _ = relu_sigmoid_context(tmp_path, rng)
    name = with_payload(ctx, crafted(**args))
    rc, _, _, err = load(work, ctx, "cpu", expect_ok=False)
    assert rc == 1, err[-2000:]
    msg = [line for line in err.splitlines() if "CreateSession" in line][-1]
    assert ": 10 : INVALID_GRAPH : " in msg, msg
    assert f"EPContext node '{name}' (payload in the model" in msg, msg
    assert reason in msg, msg


def test_a_run_with_other_shapes_than_the_payloads_is_refused(tmp_path, rng):
    """A context model whose input dims were made symbolic still runs only the recorded
    shapes: a run with another batch fails naming them, and the process goes on."""
    import onnx
    work, ctx, _, _ = relu_sigmoid_context(tmp_path, rng)
    cm = onnx.load(str(ctx))
    for v in list(cm.graph.input) + list(cm.graph.output):
        v.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(cm, str(ctx))
    np.save(work / "x.npy", rand(rng, 4, 3))
    rc, _, _, err = load(work, ctx, "cpu", expect_ok=False)
    assert rc == 1
    assert "made for inputs of shapes [2, 3]; this run gives [4, 3]" in err, err[-2000:]


@pytest.mark.parametrize("device", devices())
def test_every_lowering_passes_the_payload_checks(tmp_path, device):
    """What hipdnn-ep's own lowerings bind passes the checks on loading: views of inputs
    in other dims (broadcasts, Gemm's transposed operand, Transpose), attention's output
    through strides); reloaded bit for bit.  (The kernel's zero, under a reduction of an
    empty input, has no fixed-shape model to compile: ORT reads a 0 dim as symbolic.)"""
    from ort_models import bert, resnet, vit
    r = np.random.default_rng(9)
    mask = np.zeros((2, 1, 1, 8), np.float32)
    gemm_t = [helper.make_node("Gemm", ["a", "b"], ["g"], transA=1, transB=1),
              helper.make_node("ReduceSum", ["e"], ["s"], axes=[1], keepdims=0),
              helper.make_node("Add", ["g", "s"], ["y"])]
    cases = {
        "resnet": (resnet(seed=1)[0], {"x": r.standard_normal((2, 3, 32, 32)).astype(np.float32)}),
        "bert": (bert(seed=3, form="erf")[0],
                 {"ids": r.integers(0, 50, (2, 8)).astype(np.int64), "mask": mask}),
        "vit": (vit(seed=5)[0], {"x": r.standard_normal((2, 3, 16, 16)).astype(np.float32)}),
        "gemm_t": (model(gemm_t, [("a", [3, 2]), ("b", [4, 3]), ("e", [4, 5])], [("y", [2, 4])],
                         opset=11),
                   {"a": rand(r, 3, 2), "b": rand(r, 4, 3), "e": rand(r, 4, 5)}),
    }
    for name, (m, feeds) in cases.items():
        (tmp_path / name).mkdir()
        work, ctx, first, err = compile_model(tmp_path / name, m, feeds, device or "gpu", 1)
        args = ["--model", str(ctx), "--out-dir", str(work)]
        args += [a for k in feeds for a in ("--input", f"{k}={work / (k + '.npy')}")]
        _, _, err = ort(args, device or "gpu")
        np.testing.assert_array_equal(np.load(work / "y.0.npy"), first, err_msg=name)
        assert "restored from EPContext node" in err and "built on engine" not in err, name
