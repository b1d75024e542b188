"""A transformer block's forward and backward pass, built with hipdnn.pygraph as a cuDNN
frontend user builds it, every graph run by the GPU engine (no reference-engine fallback),
against float64 NumPy (tests/transformer_ref.py) at DESIGN tolerances.

Forward, seven graphs (pre-layernorm block, activations [B*S, E] rows, E = H * D):
  ln1     layernorm(x), training (mean, inv_variance saved)
  qkv     ln1 @ w_qkv + b_qkv                       (one [B*S, 3E] buffer)
  attn    causal sdpa(q, k, v), stats saved; q, k, v [B, H, S, D] strided views of the qkv
          buffer (no copies), o written through a [B, H, S, D] view of a [B*S, E] buffer
  proj    h1 = o @ w_o + b_o + x                    (the residual in the epilogue)
  ln2     layernorm(h1), training
  fc1     a = ln2 @ w_1 + b_1 and g = gelu(a)       (a saved for gelu's backward)
  fc2     y = g @ w_2 + b_2 + h1
Backward from dy, seven graphs, each output of autograd's chain rule (transformer_ref.
backward, itself held to central differences):
  fc2_bwd   da = gelu_backward(dy @ w_2^T, a), dw_2 = g^T @ dy, db_2 = sum(dy)
  fc1_bwd   dln2 = da @ w_1^T, dw_1 = ln2^T @ da, db_1 = sum(da)
  ln2_bwd   dh1 = dy + layernorm_backward(dln2).dx, dscale, dbias
  proj_bwd  do = dh1 @ w_o^T, dw_o = o^T @ dh1, db_o = sum(dh1)
  attn_bwd  dq, dk, dv = sdpa_backward(...) written through views of one [B*S, 3E] buffer
  qkv_bwd   dln1 = dqkv @ w_qkv^T, dw_qkv = ln1^T @ dqkv, db_qkv = sum(dqkv)
  ln1_bwd   dx = dh1 + layernorm_backward(dln1).dx, dscale, dbias
The weight gradients' A^T operands are transposed views (strides) of the activations.
Each graph is planned on the GPU engine alone (its decline reason fails the test), and its
log shows each stage it ran: the products and attention on tensor cores for fp16 / bf16.
(gelu_backward after the dx product runs in that product's epilogue: fc2_bwd is three
stages, the dx product with its epilogue, the dw product and the db reduction; the
residual add after each layernorm_backward runs in the norm's row kernel.)

Buffers live on the device from start to end and pass between the graphs; each is NaN
poison (with a poisoned guard band either side) until its graph writes it.  Each graph's
outputs are checked against float64 from the values its inputs held (that stage's
tolerance), the final results (y, dx, every parameter's gradient) against the float64 chain
from the inputs alone (the stages' tolerances summed along the chain, as
test_gpu_matmul.py::test_transformer_mlp sums its two), and at the end every buffer still
holds what was written to it (no graph wrote to its inputs, nor outside its outputs).
The buffers are hipdnn.DeviceArray and, on a GPU with PyTorch, torch CUDA tensors run on
torch's current stream.  CI runs this file on the engine's host emulation
(tests/test_gpu_emulated.py); the larger size runs on a GPU only (about 140 s emulated).
"""
import numpy as np
import pytest

import hipdnn
import references as ref
import transformer_ref as tr
from conftest import GPU_ENGINE, STORAGES, _same_bits, assert_close, logged
from tolerances import tolerance

pytestmark = pytest.mark.gpu

GUARD = 64  # poisoned elements either side of every buffer
DEVICE_ENGINES = {GPU_ENGINE, "cudnn", "blaslt"}  # never the reference engine
FP32_UNIT = 2.0 ** -24


def packed(dims):
    """Row-major strides of dims, in elements."""
    out, acc = [], 1
    for d in reversed(dims):
        out.insert(0, acc)
        acc *= d
    return out


class ArrayMemory:
    """Buffers as hipdnn.DeviceArray, run on the graph's handle (conftest.DeviceNumerics's
    way)."""

    handle = None

    def put(self, host, storage):
        return hipdnn.DeviceArray.from_numpy(host, data_type=storage.data_type)

    def view(self, dev, dims, strides, offset):
        return dev.as_strided(dims, strides, offset)

    def get(self, dev, storage):
        return dev.numpy()

    def workspace(self, size):
        ws = hipdnn.DeviceArray.empty([size], np.uint8)
        ws.fill_bytes(0xA5)  # garbage, not zeros
        return ws


class TorchMemory:
    """Buffers as torch CUDA tensors from torch's allocator, every graph run on torch's
    current stream through a handle (cuDNN frontend's samples' way)."""

    def __init__(self, torch):
        self.torch = torch
        self.handle = hipdnn.Handle()
        self.handle.set_stream(torch.cuda.current_stream())
        self.types = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

    def _ints(self, itemsize):
        return {2: (np.int16, self.torch.int16), 4: (np.int32, self.torch.int32)}[itemsize]

    def put(self, host, storage):
        np_int, _ = self._ints(host.itemsize)
        raw = self.torch.from_numpy(host.view(np_int)).to("cuda")
        return raw.view(self.types[storage.name])

    def view(self, dev, dims, strides, offset):
        return dev.as_strided(dims, strides, offset)

    def get(self, dev, storage):
        _, torch_int = self._ints(dev.element_size())
        return dev.view(torch_int).cpu().numpy().view(storage.np_dtype)  # on the same stream

    def workspace(self, size):
        return self.torch.full((size,), 0xA5, dtype=self.torch.uint8, device="cuda")


class Buffer:
    """One device allocation holding a packed array between two guard bands of poison."""

    def __init__(self, memory, name, shape, dtype, values=None):
        self.memory, self.name, self.shape = memory, name, tuple(shape)
        self.storage = STORAGES[dtype]
        self.size = int(np.prod(shape))
        base = self.storage.full((self.size + 2 * GUARD,))
        if values is not None:
            base[GUARD:GUARD + self.size] = self.storage.encode(values).reshape(-1)
        self.device = memory.put(base, self.storage)
        self.bits = self.values = None
        if values is not None:
            self.settle()

    def view(self, dims=None, strides=None, offset=0):
        dims = list(self.shape) if dims is None else list(dims)
        return self.memory.view(self.device, dims, strides or packed(dims), GUARD + offset)

    def host(self):
        return self.memory.get(self.device, self.storage)

    def settle(self):
        """Reads back what was written: the guards still poison, every element written
        (finite; assert_close says where not); keeps the bits and the float64 values."""
        host = self.host()
        guards = np.concatenate([host[:GUARD], host[-GUARD:]])
        assert _same_bits(guards, self.storage.full(guards.shape)), (
            f"{self.name}: written outside its view")
        self.bits = host
        self.values = self.storage.decode(host[GUARD:GUARD + self.size].reshape(self.shape))

    def assert_unchanged(self):
        assert _same_bits(self.host(), self.bits), f"{self.name} changed after it was written"


class Stage:
    """One graph: its tensors bound to views of Buffers, built on the GPU engine alone."""

    def __init__(self, block, name):
        self.block, self.name = block, name
        self.g = block.gpu.graph(block.dtype, name=name)
        self.pack, self.outputs = {}, []

    def input(self, buf, name, dims=None, strides=None, offset=0):
        dims = list(buf.shape) if dims is None else list(dims)
        t = self.g.tensor(name=name, dim=dims, stride=strides or packed(dims),
                          data_type=buf.storage.data_type)
        self.pack[t] = buf.view(dims, strides, offset)
        return t

    def output(self, t, buf, dims=None, strides=None, offset=0):
        dims = list(buf.shape) if dims is None else list(dims)
        t.set_output(True).set_data_type(buf.storage.data_type)
        t.set_dim(dims).set_stride(strides or packed(dims))
        self.pack[t] = buf.view(dims, strides, offset)
        if buf not in self.outputs:
            self.outputs.append(buf)

    def run(self):
        """Plans on the GPU engine (failing with its decline reason if it declines), or on
        the default ranking's first engine when the block has none (which must be a device
        engine), runs with a poisoned workspace, reads the outputs back; the engine's log
        lines."""
        g, engine = self.g, self.block.engine
        if engine:
            g.set_preferred_engine(engine)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([hipdnn.heur_mode.A])
        if engine:
            why = dict(g.support_report()).get(engine, "not loaded")
            if why is not None:
                pytest.fail(f"graph {self.name!r}: {engine} declines it: {why}")
        g.check_support()
        g.build_plans()
        chosen = g.get_engine_name()
        assert chosen == (engine or chosen) and chosen in DEVICE_ENGINES, chosen
        self.block.engines[self.name] = chosen
        memory = self.block.memory
        size = g.get_workspace_size()
        workspace = memory.workspace(size) if size else None
        log = logged(lambda: g.execute(self.pack, workspace, handle=memory.handle))
        others = [m for m in log if not m.startswith(chosen + ":")
                  and m.split(":", 1)[0] in {e.name for e in hipdnn.engines()}]
        assert not others, f"graph {self.name!r}: another engine ran: {others}"
        for buf in self.outputs:
            buf.settle()
        self.block.logs[self.name] = [m for m in log if m.startswith(chosen + ":")]


def expect(buf, want, tol, k=0, magnitude=0.0):
    """DESIGN's |got - want| <= tol + tol |want|, plus what fp32 accumulation of k terms of
    this magnitude may lose (test_gpu_matmul.assert_product_close)."""
    got = buf.values
    assert got.shape == want.shape, f"{buf.name}: shape {got.shape}, reference {want.shape}"
    bound = tol + tol * np.abs(want) + 2.0 * k * FP32_UNIT * np.asarray(magnitude)
    err = np.abs(got - want)
    if not (err <= bound).all():  # the usual report (unwritten poison too), slack left out
        assert_close(got, want, tol, buf.name)
        bad = np.unravel_index(int(np.argmax(err - bound)), err.shape)
        pytest.fail(f"{buf.name}: |diff| {err[bad]:.3g} > {bound[bad]:.3g} at {bad}")


def tol(ops, dtype):
    """The loosest of these ops' tolerances (a fused graph's, tolerances.graph_tolerance)."""
    return max(tolerance(op, dtype) for op in ops)


# The stages along the chain from the inputs to y, and on to every gradient: the final
# results are held to the sum of their tolerances.
FORWARD = [["layernorm"], ["matmul", "pointwise"], ["sdpa"], ["matmul", "pointwise"],
           ["layernorm"], ["matmul", "pointwise"], ["matmul", "pointwise"]]
BACKWARD = [["matmul", "pointwise"], ["matmul", "reduction"], ["norm_backward", "pointwise"],
            ["matmul", "reduction"], ["sdpa"], ["matmul", "reduction"],
            ["norm_backward", "pointwise"]]


class Block:
    """The block's buffers on the device, its fourteen graphs, and their checks."""

    def __init__(self, gpu, memory, dtype, b, s, h, d, m, engine=GPU_ENGINE):
        self.gpu, self.memory, self.dtype, self.shape = gpu, memory, dtype, (b, s, h, d)
        self.e, self.rows, self.m = h * d, b * s, m
        self.engine = engine  # None: each graph on the default ranking's first engine
        self.buf, self.logs, self.engines = {}, {}, {}
        e, rows, r = self.e, self.rows, gpu.random
        self.new("x", [rows, e], values=r([rows, e]))
        for n in (1, 2):
            self.new(f"ln{n}_scale", [1, e], values=r([1, e], 0.5, 1.5, signed=False))
            self.new(f"ln{n}_bias", [1, e], values=r([1, e], 0.05, 0.5))
        for w, (k, n) in {"qkv": (e, 3 * e), "o": (e, e), "1": (e, m), "2": (m, e)}.items():
            fan = (32 / k) ** 0.5  # as initialisation scales them: activations stay near 1
            self.new(f"w_{w}", [k, n], values=r([k, n], 0.05 * fan, 0.3 * fan))
            self.new(f"b_{w}", [1, n], values=r([1, n], 0.05, 0.5))
        self.new("dy", [rows, e], values=r([rows, e]))

    def new(self, name, shape, dtype=None, values=None):
        self.buf[name] = Buffer(self.memory, name, shape, dtype or self.dtype, values)
        return self.buf[name]

    def v(self, name):
        return self.buf[name].values

    # ---- forward ----------------------------------------------------------------------

    def layernorm(self, n, x, out):
        st = Stage(self, f"ln{n}")
        y, mean, inv = st.g.layernorm(
            hipdnn.norm_forward_phase.TRAINING, st.input(self.buf[x], x),
            st.input(self.buf[f"ln{n}_scale"], "scale"), st.input(self.buf[f"ln{n}_bias"], "bias"),
            tr.EPS, name=f"ln{n}")
        st.output(y, self.new(out, [self.rows, self.e]))
        st.output(mean, self.new(f"mean{n}", [self.rows, 1], "fp32"))
        st.output(inv, self.new(f"inv{n}", [self.rows, 1], "fp32"))
        st.run()
        want = tr.layernorm(self.v(x), self.v(f"ln{n}_scale"), self.v(f"ln{n}_bias"))
        for name, w, dtype in zip((out, f"mean{n}", f"inv{n}"), want, (self.dtype, "fp32", "fp32")):
            expect(self.buf[name], w, tolerance("layernorm", dtype))

    def linear(self, tag, a, w, out, residual=None, gelu_out=None):
        """out = a @ w + b (+ residual); gelu_out = gelu(out) too: one matmul and its
        epilogue."""
        st = Stage(self, tag)
        bias = "b_" + w[2:]
        y = st.g.bias(st.g.matmul(st.input(self.buf[a], a), st.input(self.buf[w], w), name=tag),
                      st.input(self.buf[bias], bias))
        want = self.v(a) @ self.v(w) + self.v(bias)
        if residual:
            y = st.g.add(y, st.input(self.buf[residual], residual))
            want = want + self.v(residual)
        n = self.buf[w].shape[1]
        st.output(y, self.new(out, [self.rows, n]))
        if gelu_out:
            st.output(st.g.gelu(y, name=tag + "_gelu"), self.new(gelu_out, [self.rows, n]))
        st.run()
        k, magnitude = self.buf[a].shape[1], np.abs(self.v(a)) @ np.abs(self.v(w))
        t = tol(["matmul", "pointwise"], self.dtype)
        expect(self.buf[out], want, t, k, magnitude)
        if gelu_out:
            expect(self.buf[gelu_out], ref.gelu(want), t, k, magnitude)

    def heads(self, buf, offset=0):
        """(dims, strides, offset) of a [B, H, S, D] view of buf's [B*S, n*E] rows from
        column offset on: attention's operands in the projections' buffers, no copies."""
        b, s, h, d = self.shape
        cols = buf.shape[1]
        return [b, h, s, d], [s * cols, d, cols, 1], offset

    def attention(self):
        b, s, h, d = self.shape
        st = Stage(self, "attn")
        q, k, v = (st.input(self.buf["qkv"], n, *self.heads(self.buf["qkv"], i * self.e))
                   for i, n in enumerate("qkv"))
        o, stats = st.g.sdpa(q, k, v, attn_scale=d ** -0.5, use_causal_mask=True,
                             generate_stats=True, name="attn")
        o_buf = self.new("o", [self.rows, self.e])
        st.output(o, o_buf, *self.heads(o_buf))
        st.output(stats, self.new("stats", [b, h, s, 1], "fp32"))
        st.run()
        want_o, want_stats = ref.sdpa(*tr.qkv_views(self.v("qkv"), *self.shape),
                                      float(np.float32(d ** -0.5)), None, tr.causal(s))
        expect(o_buf, tr.rows_of(want_o), tolerance("sdpa", self.dtype))
        expect(self.buf["stats"], want_stats, tolerance("sdpa", "fp32"))

    def forward(self):
        self.layernorm(1, "x", "ln1")
        self.linear("qkv", "ln1", "w_qkv", "qkv")
        self.attention()
        self.linear("proj", "o", "w_o", "h1", residual="x")
        self.layernorm(2, "h1", "ln2")
        self.linear("fc1", "ln2", "w_1", "a", gelu_out="g")
        self.linear("fc2", "g", "w_2", "y", residual="h1")

    # ---- backward ---------------------------------------------------------------------

    def linear_backward(self, tag, dout, w, a, da, gelu_at=None):
        """da = dout @ w^T (then gelu_backward at gelu_at's values), dw = a^T @ dout and
        db = dout's column sums: w^T and a^T are transposed views."""
        st = Stage(self, tag)
        kin, kout = self.buf[w].shape
        dout_t = st.input(self.buf[dout], dout)
        dx = st.g.matmul(dout_t, st.input(self.buf[w], w + "_t", [kout, kin], [1, kout]),
                         name=tag + "_dx")
        D, W, A = self.v(dout), self.v(w), self.v(a)
        want = D @ W.T
        if gelu_at:
            dx = st.g.gelu_backward(dx, st.input(self.buf[gelu_at], gelu_at), name=tag + "_gelu")
            want = ref.gelu_backward(self.v(gelu_at), want)
        st.output(dx, self.new(da, [self.rows, kin]))
        dw = st.g.matmul(st.input(self.buf[a], a + "_t", [kin, self.rows], [1, kin]), dout_t,
                         name=tag + "_dw")
        st.output(dw, self.new("d" + w, [kin, kout]))
        db = st.g.reduction(dout_t, hipdnn.reduction_mode.ADD, name=tag + "_db")
        st.output(db, self.new("db" + w[1:], [1, kout]))
        st.run()
        expect(self.buf[da], want, tol(["matmul", "pointwise"], self.dtype), kout,
               np.abs(D) @ np.abs(W).T)
        expect(self.buf["d" + w], A.T @ D, tolerance("matmul", self.dtype), self.rows,
               np.abs(A).T @ np.abs(D))
        expect(self.buf["db" + w[1:]], D.sum(axis=0, keepdims=True),
               tolerance("reduction", self.dtype), self.rows, np.abs(D).sum(axis=0, keepdims=True))

    def layernorm_backward(self, n, x, dln, residual, dx):
        """dx = residual + layernorm_backward(dln).dx, and the norm's dscale and dbias."""
        st = Stage(self, f"ln{n}_bwd")
        names = (dln, x, f"ln{n}_scale", f"mean{n}", f"inv{n}")
        grads = st.g.layernorm_backward(*(st.input(self.buf[k], k) for k in names),
                                        name=f"ln{n}_bwd")
        st.output(st.g.add(grads[0], st.input(self.buf[residual], residual), name=f"ln{n}_res"),
                  self.new(dx, [self.rows, self.e]))
        st.output(grads[1], self.new(f"dln{n}_scale", [1, self.e]))
        st.output(grads[2], self.new(f"dln{n}_bias", [1, self.e]))
        st.run()
        values = {k: self.v(k) for k in names}
        want = tr.layernorm_backward(values[x], values[dln], *(values[k] for k in names[2:]))
        expect(self.buf[dx], self.v(residual) + want[0],
               tol(["norm_backward", "pointwise"], self.dtype))
        expect(self.buf[f"dln{n}_scale"], want[1], tolerance("norm_backward", self.dtype))
        expect(self.buf[f"dln{n}_bias"], want[2], tolerance("norm_backward", self.dtype))

    def attention_backward(self):
        b, s, h, d = self.shape
        st = Stage(self, "attn_bwd")
        qkv = self.buf["qkv"]
        ins = [st.input(qkv, n, *self.heads(qkv, i * self.e)) for i, n in enumerate("qkv")]
        ins += [st.input(self.buf[n], n, *self.heads(self.buf[n])) for n in ("o", "do")]
        ins.append(st.input(self.buf["stats"], "stats"))
        grads = st.g.sdpa_backward(*ins, attn_scale=d ** -0.5, use_causal_mask=True,
                                   name="attn_bwd")
        dqkv = self.new("dqkv", [self.rows, 3 * self.e])
        for i, (t, n) in enumerate(zip(grads, ("dq", "dk", "dv"))):
            st.output(t, dqkv, *self.heads(dqkv, i * self.e))
        st.run()
        want = ref.sdpa_backward(*tr.qkv_views(self.v("qkv"), *self.shape),
                                 tr.heads(self.v("o"), *self.shape),
                                 tr.heads(self.v("do"), *self.shape), self.v("stats"),
                                 float(np.float32(d ** -0.5)), None, tr.causal(s))
        expect(dqkv, np.concatenate([tr.rows_of(w) for w in want], axis=1),
               tolerance("sdpa", self.dtype))

    def backward(self):
        self.linear_backward("fc2_bwd", "dy", "w_2", "g", "da", gelu_at="a")
        self.linear_backward("fc1_bwd", "da", "w_1", "ln2", "dln2")
        self.layernorm_backward(2, "h1", "dln2", "dy", "dh1")
        self.linear_backward("proj_bwd", "dh1", "w_o", "o", "do")
        self.attention_backward()
        self.linear_backward("qkv_bwd", "dqkv", "w_qkv", "ln1", "dln1")
        self.layernorm_backward(1, "x", "dln1", "dh1", "dx")

    # ---- the whole chain ----------------------------------------------------------------

    def check_chain(self):
        """y, dx and every parameter's gradient against float64 from the inputs alone; the
        largest error as a fraction of its bound."""
        p = {n: self.v(n) for n in tr.PARAMS}
        t = tr.forward(self.v("x"), p, self.shape)
        r = tr.backward(t, p, self.v("dy"), self.shape)
        fwd = sum(tol(ops, self.dtype) for ops in FORWARD)
        bwd = fwd + sum(tol(ops, self.dtype) for ops in BACKWARD)
        worst = 0.0
        for name in ["y", "dx"] + ["d" + n for n in tr.PARAMS]:
            want = t["y"] if name == "y" else r[name]
            bound = fwd if name == "y" else bwd
            expect(self.buf[name], want, bound)
            err = np.abs(self.v(name) - want) / (bound + bound * np.abs(want))
            worst = max(worst, float(err.max()))
        return worst


SIZES = [pytest.param((2, 32, 2, 16, 64), id="B2_S32_H2_D16_mlp64"),
         pytest.param((2, 512, 8, 64, 2048), id="B2_S512_H8_D64_mlp2048",
                      marks=[pytest.mark.large,
                             pytest.mark.skipif(GPU_ENGINE != "hip",
                                                reason="a real GPU's size, not the emulation's")])]


def torch_cuda():
    torch = pytest.importorskip("torch")
    if GPU_ENGINE != "hip" or not torch.cuda.is_available():
        pytest.skip("PyTorch has no GPU here")
    return torch


STAGES = ["ln1", "qkv", "attn", "proj", "ln2", "fc1", "fc2",
          "fc2_bwd", "fc1_bwd", "ln2_bwd", "proj_bwd", "attn_bwd", "qkv_bwd", "ln1_bwd"]


@pytest.mark.parametrize("memory", ["DeviceArray", "torch"])
@pytest.mark.parametrize("size", SIZES)
def test_transformer_block_forward_and_backward(gpu, dtype, size, memory):
    block = Block(gpu, TorchMemory(torch_cuda()) if memory == "torch" else ArrayMemory(),
                  dtype, *size)
    block.forward()
    block.backward()
    assert list(block.logs) == STAGES
    for name, log in block.logs.items():
        stages = [m for m in log if ": stage " in m]
        assert stages and all(f"graph '{name}'" in m for m in stages), (name, log)
        # the products and attention on tensor cores with 16-bit inputs: the transposed and
        # head-strided views taken as they are
        products = [m for m in stages if "matmul '" in m or "sdpa" in m]
        assert all(("on tensor cores" in m) == (dtype != "fp32") for m in products), log
    fc2_bwd = [m for m in block.logs["fc2_bwd"] if ": stage " in m]  # their first runs
    # dx with its epilogue, dw, db; a db over many rows is summed in parts, one more stage
    stages = 4 if any("parts combined" in m for m in fc2_bwd) else 3
    assert all(f" of {stages} " in m for m in fc2_bwd) and any(
        "matmul 'fc2_bwd_dx'" in m and "with its pointwise epilogue" in m for m in fc2_bwd), fc2_bwd
    for n in (1, 2):
        ln = [m for m in block.logs[f"ln{n}_bwd"] if ": stage " in m]
        assert not any("pointwise node" in m for m in ln) and any(
            f"layernorm_backward 'ln{n}_bwd'" in m and "with its pointwise epilogue" in m
            for m in ln), ln
    worst = block.check_chain()
    print(f"{dtype} {size}: the chain's largest error {worst:.3f} of its bound")
    for buf in block.buf.values():
        buf.assert_unchanged()


@pytest.mark.skipif(GPU_ENGINE != "hip", reason="the vendor engines need a real GPU")
@pytest.mark.parametrize("size", SIZES)
def test_transformer_block_on_the_fastest_engine_for_each_graph(gpu, dtype, size):
    """The same block on torch CUDA tensors with no engine chosen: each graph runs on the
    default ranking's first engine (cost_model's measured shares: attention on cudnn,
    plain products on blaslt, the norms and the fused backward products on hip, on an
    H200), and the chain still matches float64."""
    block = Block(gpu, TorchMemory(torch_cuda()), dtype, *size, engine=None)
    block.forward()
    block.backward()
    assert list(block.logs) == STAGES
    print(f"{dtype} {size}: " + ", ".join(f"{k} {v}" for k, v in block.engines.items()))
    loaded = {e.name for e in hipdnn.engines()}
    # at S 512 the attention is compute-bound, where cudnn measured 5-6x the hip engine's
    # (the small block's is memory-bound, where no engine's backward share was measured)
    if "cudnn" in loaded and dtype != "fp32" and size[1] >= 512:
        assert block.engines["attn"] == block.engines["attn_bwd"] == "cudnn", block.engines
    block.check_chain()
    for buf in block.buf.values():
        buf.assert_unchanged()


@pytest.mark.parametrize("size", [(2, 32, 2, 16, 64), (1, 24, 3, 8, 40)])
def test_the_float64_backward_is_autograds(rng, size):
    # the chain rule the backward graphs follow (transformer_ref.backward) against central
    # differences of sum(y * dy) in float64: no GPU needed
    b, s, h, d, m = size
    e = h * d
    shapes = {"ln1_scale": (1, e), "ln1_bias": (1, e), "w_qkv": (e, 3 * e), "b_qkv": (1, 3 * e),
              "w_o": (e, e), "b_o": (1, e), "ln2_scale": (1, e), "ln2_bias": (1, e),
              "w_1": (e, m), "b_1": (1, m), "w_2": (m, e), "b_2": (1, e)}
    p = {n: rng.uniform(-1, 1, shape) * (shape[0] ** -0.5 if n[0] == "w" else 1.0)
         for n, shape in shapes.items()}
    x, dy = rng.uniform(-1, 1, (b * s, e)), rng.uniform(-1, 1, (b * s, e))
    assert tr.gradient_check(x, p, dy, (b, s, h, d), rng) < 1e-6
