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
