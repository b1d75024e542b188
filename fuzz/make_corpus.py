"""Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/) from the Python API.

  /usr/bin/python3 fuzz/make_corpus.py                    # rewrites the seeds (make fuzz-corpus)
  /usr/bin/python3 fuzz/make_corpus.py --replay-only DIR   # writes only DIR/<target>/: large
                                                          # inputs replayed, not checked in

fuzz_graph_bytes gets serialized graphs of every op, data type and layout the reference
engine runs, plus a reversed chain (nodes listed last first, bug 8); the replay-only inputs
are the 10 000-node reversed chain (1.6 MB).  fuzz_descriptor_calls gets programs (the instruction set in
fuzz_descriptor_calls.c) that build, plan and run small graphs.  fuzz_graph_structured
starts from a few byte strings; its generator finds valid graphs quickly from any bytes.

Seeds are deterministic: running this twice writes the same files.  Reproducers of fixed
bugs (regress-*) are kept in the same folders by hand and never rewritten here.
"""
import argparse
import os
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))  # chain_graph, shared with the tests

import hipdnn  # noqa: E402
from hipdnn import _C, _ops  # noqa: E402
from chain_graph import reversed_chain_bytes  # noqa: E402

dt = hipdnn.data_type
CORPUS = HERE / "corpus"


def save(folder, name, data):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(bytes(data))


# ---- graphs through pygraph --------------------------------------------------------------

def graph(io=dt.FLOAT, name="seed"):
    return hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                          compute_data_type=dt.FLOAT, name=name)


def conv_bias_relu():
    g = graph(name="cbr")
    x = g.tensor(name="x", dim=[2, 3, 6, 6])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    b = g.tensor(name="b", dim=[1, 4, 1, 1])
    y = g.relu(input=g.mul(a=g.add(a=g.conv_fprop(image=x, weight=w, padding=[1, 1]), b=b),
                           b=0.5))
    y.set_output(True)
    return g


def conv_nhwc_groups_fp16():
    g = graph(dt.HALF, "conv_nhwc")
    x = g.tensor(name="x", dim=[1, 4, 7, 5], stride=[140, 1, 20, 4])
    w = g.tensor(name="w", dim=[6, 2, 3, 2])
    y = g.conv_fprop(image=x, weight=w, pre_padding=[1, 0], post_padding=[2, 1], stride=[2, 1],
                     dilation=[1, 2])
    y.set_output(True)
    return g


def conv_3d_bf16():
    g = graph(dt.BFLOAT16, "conv3d")
    x = g.tensor(name="x", dim=[1, 2, 4, 4, 3])
    w = g.tensor(name="w", dim=[2, 2, 2, 2, 2])
    g.conv_fprop(image=x, weight=w, padding=[1, 0, 1],
                 convolution_mode=hipdnn.convolution_mode.CONVOLUTION).set_output(True)
    return g


def conv_1d_double():
    g = graph(dt.DOUBLE, "conv1d")
    x = g.tensor(name="x", dim=[2, 3, 9])
    w = g.tensor(name="w", dim=[3, 3, 4])
    g.tanh(input=g.conv_fprop(image=x, weight=w, stride=[3])).set_output(True)
    return g


def matmul_broadcast_gelu():
    g = graph(name="mm")
    a = g.tensor(name="a", dim=[2, 1, 3, 5])
    b = g.tensor(name="b", dim=[1, 4, 5, 2], stride=[40, 10, 1, 5])
    g.gelu(input=g.matmul(A=a, B=b)).set_output(True)
    return g


def matmul_fp16_sigmoid():
    g = graph(dt.HALF, "mm16")
    a = g.tensor(name="a", dim=[7, 9])
    b = g.tensor(name="b", dim=[9, 3])
    g.sigmoid(input=g.matmul(A=a, B=b)).set_output(True)
    return g


def batchnorm_relu():
    g = graph(name="bn")
    x = g.tensor(name="x", dim=[2, 3, 4, 4])
    p = [g.tensor(name=n, dim=[1, 3, 1, 1]) for n in ("mean", "inv_var", "scale", "bias")]
    g.relu(input=g.batchnorm_inference(x, *p), negative_slope=0.1, upper_clip=6.0) \
        .set_output(True)
    return g


def pointwise_every_mode(io):
    g = graph(io, "pointwise")
    x = g.tensor(name="x", dim=[2, 3, 4])
    b = g.tensor(name="b", dim=[1, 3, 1])
    c = g.tensor(name="c", dim=[4])
    t = g.add(a=x, b=b)
    t = g.sub(a=t, b=c)
    t = g.mul(a=t, b=2.0)
    t = g.div(a=t, b=b)
    t = g.max(a=t, b=x)
    t = g.min(a=t, b=3.0)
    t = g.identity(input=g.gelu(input=g.tanh(input=g.sigmoid(input=g.relu(input=t)))))
    t.set_output(True)
    return g


def pointwise_later_modes(io):
    """The modes and ports added after the first twelve: dy / dx, the mask t, BOOLEAN
    tensors, gen_index, and the parameters elu_alpha, softplus_beta and swish_beta."""
    g = graph(io, "pointwise_later")
    x = g.tensor(name="x", dim=[2, 3, 4])
    dy = g.tensor(name="dy", dim=[1, 3, 1])
    m = g.cmp_ge(input=x, comparison=0.0)
    t = g.binary_select(input0=g.swish_backward(loss=dy, input=x, swish_beta=1.5),
                        input1=g.elu(input=x, elu_alpha=0.5), mask=m)
    t = g.add_square(a=t, b=g.softplus(input=x, softplus_beta=2.0))
    t = g.pow(input0=g.abs(input=t), input1=g.gen_index(input=x, axis=2))
    g.logical_not(input=m).set_output(True)
    t.set_output(True)
    return g


def two_outputs():
    g = graph(name="two")
    x = g.tensor(name="x", dim=[3, 4])
    y1 = g.relu(input=x)
    y1.set_output(True)
    g.tanh(input=y1).set_output(True)
    return g


def runtime_scalar_bytes():
    """y = x * s with s a by-value scalar given at execute time (through _C: pygraph's
    scalars are constants)."""
    def tensor(uid, dims, virtual=False, by_value=False):
        t = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
        t.set(_C.ATTR_TENSOR_UNIQUE_ID, _C.TYPE_INT64, uid)
        t.set(_C.ATTR_TENSOR_DATA_TYPE, _C.TYPE_DATA_TYPE, _C.DATA_FLOAT)
        t.set(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, dims)
        t.set(_C.ATTR_TENSOR_IS_VIRTUAL, _C.TYPE_BOOLEAN, virtual)
        t.set(_C.ATTR_TENSOR_IS_BY_VALUE, _C.TYPE_BOOLEAN, by_value)
        t.finalize()
        return t
    pw = _ops.OPS["pointwise"]
    x, s, y = tensor(1, [4, 4]), tensor(2, [1], by_value=True), tensor(3, [4, 4])
    op = _C.Descriptor(pw.descriptor_type)
    op.set(pw.param("mode").attr, pw.param("mode").type, _C.POINTWISE_MUL)
    op.set(pw.input("x").attr, _C.TYPE_BACKEND_DESCRIPTOR, x)
    op.set(pw.input("b").attr, _C.TYPE_BACKEND_DESCRIPTOR, s)
    op.set(pw.output("y").attr, _C.TYPE_BACKEND_DESCRIPTOR, y)
    op.finalize()
    g = _C.Descriptor(_C.BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, hipdnn.default_handle())
    g.set(_C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR, [op])
    g.finalize()
    return _C.serialize(g)


def maxpool_index_backward():
    g = graph(name="pool")
    x = g.tensor(name="x", dim=[2, 3, 7, 6], stride=[126, 1, 18, 3])
    dy = g.tensor(name="dy", dim=[2, 3, 4, 3])
    kw = dict(window=[3, 2], stride=[2, 2], pre_padding=[1, 0], post_padding=[1, 1])
    y, index = g.resample(x, hipdnn.resample_mode.MAXPOOL, generate_index=True, **kw)
    y.set_output(True)
    dx = g.resample_backward(dy, hipdnn.resample_mode.MAXPOOL, index=index, **kw)
    dx.set_output(True).set_dim([2, 3, 7, 6])
    return g


def avgpool_3d_reshape():
    g = graph(dt.HALF, "avg3d")
    x = g.tensor(name="x", dim=[1, 2, 5, 6, 4])
    y, _ = g.resample(x, hipdnn.resample_mode.AVGPOOL_EXCLUDE_PADDING, window=[2, 3, 2],
                      stride=[2, 1, 2], pre_padding=[1, 1, 0], post_padding=[0, 1, 1])
    r = g.reshape(y, reshape_mode=hipdnn.reshape_mode.LOGICAL)
    r.set_dim([2, 36]).set_output(True)
    return g


def int8_conv():
    g = hipdnn.pygraph(io_data_type=dt.INT8, compute_data_type=dt.INT32, name="int8")
    y = g.conv_fprop(g.tensor(name="x", dim=[1, 4, 5, 5]), g.tensor(name="w", dim=[2, 4, 3, 3]),
                     padding=[1, 1])
    y.set_output(True).set_data_type(dt.INT32)
    return g


def layernorm_train_step():
    """layernorm forward (statistics virtual) and its backward, plus genstats of dx."""
    g = graph(name="ln_step")
    x = g.tensor(name="x", dim=[2, 5, 16])
    s = g.tensor(name="s", dim=[1, 1, 16])
    b = g.tensor(name="b", dim=[1, 1, 16])
    dy = g.tensor(name="dy", dim=[2, 5, 16])
    y, mean, inv = g.layernorm(hipdnn.norm_forward_phase.TRAINING, x, s, b, 1e-5)
    dx, dscale, dbias = g.layernorm_backward(dy, x, s, mean, inv)
    for t in [y, dscale, dbias] + g.genstats(dx):
        t.set_output(True)
    return g


def attention_train_step():
    """sdpa with GQA, a bottom-right causal window and padding, then its backward."""
    g = graph(dt.HALF, "attn_step")
    q = g.tensor(name="q", dim=[2, 4, 6, 8], stride=[192, 8, 32, 1])
    k = g.tensor(name="k", dim=[2, 2, 7, 8])
    v = g.tensor(name="v", dim=[2, 2, 7, 8])
    lq = g.tensor(name="lq", dim=[2, 1, 1, 1], data_type=dt.INT32)
    lk = g.tensor(name="lk", dim=[2, 1, 1, 1], data_type=dt.INT32)
    kw = dict(use_padding_mask=True, seq_len_q=lq, seq_len_kv=lk,
              use_causal_mask_bottom_right=True, sliding_window_length=3)
    o, stats = g.sdpa(q, k, v, attn_scale=0.35, generate_stats=True, **kw)
    do = g.tensor(name="do", dim=[2, 4, 6, 8])
    o.set_output(True)
    for t in g.sdpa_backward(q, k, v, o, do, stats, attn_scale=0.35, **kw):
        t.set_output(True)
    return g


GRAPHS = {
    "conv_bias_relu": conv_bias_relu,
    "conv_nhwc_groups_fp16": conv_nhwc_groups_fp16,
    "conv_3d_bf16": conv_3d_bf16,
    "conv_1d_double": conv_1d_double,
    "matmul_broadcast_gelu": matmul_broadcast_gelu,
    "matmul_fp16_sigmoid": matmul_fp16_sigmoid,
    "batchnorm_relu": batchnorm_relu,
    "pointwise_fp32": lambda: pointwise_every_mode(dt.FLOAT),
    "pointwise_bf16": lambda: pointwise_every_mode(dt.BFLOAT16),
    "pointwise_later_fp16": lambda: pointwise_later_modes(dt.HALF),
    "two_outputs": two_outputs,
    "maxpool_index_backward": maxpool_index_backward,
    "avgpool_3d_reshape": avgpool_3d_reshape,
    "int8_conv": int8_conv,
    "layernorm_train_step": lambda: layernorm_train_step(),
    "attention_train_step": lambda: attention_train_step(),
}


def graph_bytes_seeds():
    out = {}
    for name, make in GRAPHS.items():
        out[name] = make().serialize()
    out["runtime_scalar"] = runtime_scalar_bytes()
    out["reversed_chain_40"] = reversed_chain_bytes(40)
    return out


# ---- descriptor-call programs (see fuzz_descriptor_calls.c) -------------------------------

class Program:
    """Emits instructions; descriptors are named by their pool index (creation order, as
    long as nothing is destroyed)."""

    def __init__(self):
        self.b = bytearray()
        self.n = 0

    def _raw(self, v):  # a u8 table field given as a raw u32
        self.b += bytes([255]) + struct.pack("<I", v & 0xFFFFFFFF)

    def create(self, type_):
        self.b += bytes([0])
        self._raw(type_)
        self.n += 1
        return self.n - 1

    def set(self, d, attr, type_, values):
        values = values if isinstance(values, (list, tuple)) else [values]
        self.b += bytes([2, d])
        self._raw(attr)
        self._raw(type_)
        self.b += bytes([len(values)])
        for v in values:
            if type_ == _C.TYPE_BACKEND_DESCRIPTOR:
                self.b += bytes([v])
            elif type_ == _C.TYPE_HANDLE:
                self.b += bytes([0])  # even: the fuzzer's handle
            elif type_ in (_C.TYPE_INT64,):
                self.b += struct.pack("<q", v)
            elif type_ == _C.TYPE_DOUBLE:
                self.b += struct.pack("<d", v)
            elif type_ in (_C.TYPE_BOOLEAN, _C.TYPE_CHAR, _C.TYPE_UINT8_EXT):
                self.b += bytes([v])
            else:  # C enums
                self.b += struct.pack("<i", v)
        self.b += bytes([1])  # values pointer not NULL

    def get(self, d, attr, type_, requested, adopts=0):
        self.b += bytes([3, d])
        self._raw(attr)
        self._raw(type_)
        self.b += bytes([requested, 0])
        self.n += adopts
        return self.n - adopts

    def finalize(self, d):
        self.b += bytes([4, d])

    def serialize(self, d, capacity):
        self.b += bytes([5, d]) + struct.pack("<H", capacity)

    def deserialize(self, data):
        self.b += bytes([6]) + struct.pack("<H", len(data)) + data
        self.n += 1
        return self.n - 1

    def execute(self, plan, pack):
        self.b += bytes([7, plan, pack, 0])

    def run(self, plan):
        self.b += bytes([8, plan])

    def tensor(self, uid, dims=None, dtype=_C.DATA_FLOAT, virtual=False):
        t = self.create(_C.BACKEND_TENSOR_DESCRIPTOR)
        self.set(t, _C.ATTR_TENSOR_UNIQUE_ID, _C.TYPE_INT64, uid)
        self.set(t, _C.ATTR_TENSOR_DATA_TYPE, _C.TYPE_DATA_TYPE, dtype)
        if dims:
            self.set(t, _C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, dims)
        self.set(t, _C.ATTR_TENSOR_IS_VIRTUAL, _C.TYPE_BOOLEAN, int(virtual))
        self.finalize(t)
        return t

    def op(self, name, ports, params=()):
        info = _ops.OPS[name]
        d = self.create(info.descriptor_type)
        for pname, value in params:
            p = info.param(pname)
            self.set(d, p.attr, p.type, value)
        for port, t in ports.items():
            attr = (info.input(port) if port in [i.name for i in info.inputs]
                    else info.output(port)).attr
            self.set(d, attr, _C.TYPE_BACKEND_DESCRIPTOR, t)
        self.set(d, _C.ATTR_OPERATION_COMPUTE_TYPE_EXT, _C.TYPE_DATA_TYPE, _C.DATA_FLOAT)
        self.finalize(d)
        return d

    def graph_plan_run(self, ops):
        g = self.create(_C.BACKEND_OPERATIONGRAPH_DESCRIPTOR)
        self.set(g, _C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, 0)
        self.set(g, _C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR, ops)
        self.finalize(g)
        h = self.create(_C.BACKEND_ENGINEHEUR_DESCRIPTOR)
        self.set(h, _C.ATTR_ENGINEHEUR_MODE, _C.TYPE_HEUR_MODE, _C.HEUR_MODE_A)
        self.set(h, _C.ATTR_ENGINEHEUR_OPERATION_GRAPH, _C.TYPE_BACKEND_DESCRIPTOR, g)
        self.finalize(h)
        cfg = self.get(h, _C.ATTR_ENGINEHEUR_RESULTS, _C.TYPE_BACKEND_DESCRIPTOR, 1, adopts=1)
        plan = self.create(_C.BACKEND_EXECUTION_PLAN_DESCRIPTOR)
        self.set(plan, _C.ATTR_EXECUTION_PLAN_HANDLE, _C.TYPE_HANDLE, 0)
        self.set(plan, _C.ATTR_EXECUTION_PLAN_ENGINE_CONFIG, _C.TYPE_BACKEND_DESCRIPTOR, cfg)
        self.finalize(plan)
        self.run(plan)
        return g, plan


def descriptor_programs():
    mode = ("mode", None)
    out = {}

    p = Program()
    x, y = p.tensor(1, [2, 3]), p.tensor(2)
    relu = p.op("pointwise", {"x": x, "y": y}, [(mode[0], _C.POINTWISE_RELU_FWD)])
    g, plan = p.graph_plan_run([relu])
    p.get(g, _C.ATTR_OPERATIONGRAPH_DESCRIPTION_EXT, _C.TYPE_CHAR, 200)
    p.get(g, _C.ATTR_OPERATIONGRAPH_TENSORS_EXT, _C.TYPE_BACKEND_DESCRIPTOR, 4, adopts=2)
    p.serialize(g, 4096)
    pack = p.create(_C.BACKEND_VARIANT_PACK_DESCRIPTOR)
    p.set(pack, _C.ATTR_VARIANT_PACK_UNIQUE_IDS, _C.TYPE_INT64, [1, 2])
    p.execute(plan, pack)  # not finalized: refused
    out["relu_plan_run"] = p.b

    p = Program()
    x, dy, dx = p.tensor(1, [2, 3]), p.tensor(2, [1, 3]), p.tensor(3)
    bwd = p.op("pointwise", {"x": x, "dy": dy, "dx": dx},
               [(mode[0], _C.POINTWISE_SOFTPLUS_BWD), ("softplus_beta", 0.5)])
    p.graph_plan_run([bwd])
    out["softplus_backward_plan_run"] = p.b

    p = Program()
    x, w, y = p.tensor(1, [1, 2, 5, 5]), p.tensor(2, [3, 2, 3, 3]), p.tensor(3)
    conv = p.op("conv_fprop", {"x": x, "w": w, "y": y},
                [("pre_padding", [1, 1]), ("post_padding", [1, 1]), ("stride", [2, 1]),
                 ("dilation", [1, 1]), ("conv_mode", _C.CROSS_CORRELATION)])
    p.graph_plan_run([conv])
    out["conv_plan_run"] = p.b

    p = Program()
    a, b, c, d = p.tensor(1, [3, 4]), p.tensor(2, [4, 5]), p.tensor(3, virtual=True), p.tensor(4)
    mm = p.op("matmul", {"a": a, "b": b, "c": c})
    act = p.op("pointwise", {"x": c, "y": d}, [(mode[0], _C.POINTWISE_TANH_FWD)])
    p.graph_plan_run([act, mm])
    out["matmul_tanh_plan_run"] = p.b

    p = Program()
    x = p.tensor(1, [2, 3, 2, 2])
    stats = [p.tensor(2 + i, [1, 3, 1, 1]) for i in range(4)]
    y = p.tensor(6)
    bn = p.op("batchnorm_inference",
              dict(zip(["x", "mean", "inv_variance", "scale", "bias", "y"], [x, *stats, y])))
    p.graph_plan_run([bn])
    out["batchnorm_plan_run"] = p.b

    p = Program()
    g2 = p.deserialize(conv_bias_relu().serialize())
    p.get(g2, _C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR, 8, adopts=4)
    p.set(g2, _C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, 0)
    h = p.create(_C.BACKEND_ENGINEHEUR_DESCRIPTOR)
    p.set(h, _C.ATTR_ENGINEHEUR_MODE, _C.TYPE_HEUR_MODE, _C.HEUR_MODE_FALLBACK)
    p.set(h, _C.ATTR_ENGINEHEUR_OPERATION_GRAPH, _C.TYPE_BACKEND_DESCRIPTOR, g2)
    p.finalize(h)
    p.get(h, _C.ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT, _C.TYPE_CHAR, 250)
    out["deserialized_heuristics"] = p.b

    p = Program()
    k = p.create(_C.BACKEND_KNOB_CHOICE_DESCRIPTOR)
    p.set(k, _C.ATTR_KNOB_CHOICE_KNOB_TYPE, _C.TYPE_INT64, 3)
    p.set(k, _C.ATTR_KNOB_CHOICE_KNOB_VALUE, _C.TYPE_INT64, -1)
    p.finalize(k)
    e = p.create(_C.BACKEND_ENGINE_DESCRIPTOR)
    p.set(e, _C.ATTR_ENGINE_GLOBAL_INDEX, _C.TYPE_INT64, 0)
    cfg = p.create(_C.BACKEND_ENGINECFG_DESCRIPTOR)
    p.set(cfg, _C.ATTR_ENGINECFG_ENGINE, _C.TYPE_BACKEND_DESCRIPTOR, e)
    p.set(cfg, _C.ATTR_ENGINECFG_KNOB_CHOICES, _C.TYPE_BACKEND_DESCRIPTOR, [k, k])
    p.finalize(e)  # no graph: refused
    p.finalize(cfg)
    out["engine_knobs"] = p.b
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replay-only", type=Path, metavar="DIR",
                    help="write only the large replay-only inputs, under DIR/<target>/")
    args = ap.parse_args()
    if args.replay_only:
        save(args.replay_only / "fuzz_graph_bytes", "reversed_chain_10000.hdng",
             reversed_chain_bytes(10000))
        return
    for name, data in graph_bytes_seeds().items():
        save(CORPUS / "fuzz_graph_bytes", f"{name}.hdng", data)
    for name, data in descriptor_programs().items():
        save(CORPUS / "fuzz_descriptor_calls", f"{name}.prog", data)
    for i, n in enumerate((16, 64, 256, 1024)):
        # deterministic bytes for the generator: its choices are read front to back
        state = 0x9E3779B9 + i
        data = bytearray()
        for _ in range(n):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            data.append(state >> 16 & 0xFF)
        save(CORPUS / "fuzz_graph_structured", f"lcg_{n}.bin", data)
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    print(f"corpus: {sum(1 for f in CORPUS.rglob('*') if f.is_file())} files, {total} bytes")


if __name__ == "__main__":
    main()
