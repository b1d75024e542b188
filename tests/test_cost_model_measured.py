"""cost_model's measured engine efficiencies (plugins/heuristic_cost/cost_model.c,
k_measured): on a device, each engine's share of the peak and bandwidth on the graph's class
(its largest node's op, 16-bit or fp32 inputs), as runs M24 / M25 timed every engine on an
H200, so that the default ranking puts first the engine that was fastest there.  The
plugin is called through its C ABI with the graph's own bytes (pygraph.serialize(), what
engines and heuristic plugins receive) and three device candidates at equal priority: the
order then comes from the model alone."""
import ctypes
import re
from pathlib import Path

import pytest

import hipdnn

dt = hipdnn.data_type
PACKAGE = Path(hipdnn.__file__).resolve().parent
COST = PACKAGE / "lib" / "hipdnn_plugins" / "heuristics" / "libhipdnn_heuristic_cost.so"
LEN = 256  # HIPDNN_HEURISTIC_EXPLANATION_LEN
DEVICE, HOST = 1, 0  # hipdnnMemorySpace_t
FALLBACK = 1  # HIPDNN_ENGINE_FLAG_FALLBACK
H200_FLOPS, H200_BW = 132 * 1.98e9 * 4096, 2 * 3.2e9 * 768  # what the backend reads on an H200 (16-bit)


class DeviceInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("memory_space", ctypes.c_int),
                ("device", ctypes.c_int32), ("device_name", ctypes.c_char * 128),
                ("arch", ctypes.c_char * 32), ("sm_count", ctypes.c_int32),
                ("peak_bytes_per_s", ctypes.c_double), ("peak_flops", ctypes.c_double)]


class Candidate(ctypes.Structure):
    _fields_ = [("engine_id", ctypes.c_uint64), ("engine_name", ctypes.c_char_p),
                ("memory_space", ctypes.c_int), ("priority", ctypes.c_int32),
                ("flags", ctypes.c_uint32), ("num_knobs", ctypes.c_int32),
                ("knobs", ctypes.POINTER(ctypes.c_int64))]


def rank(graph_bytes, engines, flops=H200_FLOPS):
    """[(engine, score, explanation)] best first, as cost_model ranks `engines` (names, or
    (name, memory space, flags)) for the graph on an sm_90 device."""
    if not COST.is_file():
        pytest.fail(f"build the cost_model plugin first ({COST})")
    lib = ctypes.CDLL(str(COST))
    info = DeviceInfo(ctypes.sizeof(DeviceInfo), DEVICE, 0, b"cuda:NVIDIA H200 sm_90", b"sm_90",
                      132, H200_BW, flops)
    specs = [(e, DEVICE, 0) if isinstance(e, str) else e for e in engines]
    cands = (Candidate * len(specs))(*[Candidate(i + 1, name.encode(), space, 50, flags, 0, None)
                                       for i, (name, space, flags) in enumerate(specs)])
    n = len(specs)
    order, score = (ctypes.c_uint32 * n)(), (ctypes.c_double * n)()
    text = ctypes.create_string_buffer(n * LEN)
    buf = (ctypes.c_uint8 * len(graph_bytes)).from_buffer_copy(graph_bytes)
    st = lib.hipdnnHeuristicPluginRank(buf, ctypes.c_size_t(len(graph_bytes)), ctypes.byref(info),
                                       cands, ctypes.c_uint32(n), order, score, text)
    assert st == 0
    lines = [text.raw[i * LEN:(i + 1) * LEN].split(b"\0")[0].decode() for i in range(n)]
    assert sorted(order) == list(range(n))
    return [(specs[i][0], score[i], lines[i]) for i in order]


def graph(io):
    return hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                          compute_data_type=dt.FLOAT, name="g")


def matmul(m, n, k, io=dt.BFLOAT16, epilogue=False):
    g = graph(io)
    y = g.matmul(g.tensor(name="a", dim=[1, m, k], data_type=io),
                 g.tensor(name="b", dim=[1, k, n], data_type=io), name="mm")
    if epilogue:
        y = g.gelu(g.add(y, g.tensor(name="bias", dim=[1, 1, n], data_type=io)), name="act")
    y.set_output(True).set_data_type(io)
    return g.serialize()


def conv(kind, io=dt.HALF, k=3):
    """ResNet-50's k x k layer at N 64, 128 channels, 28 x 28: fprop, dgrad or wgrad."""
    g = graph(io)
    x = g.tensor(name="x", dim=[64, 128, 28, 28], stride=[128 * 784, 1, 28 * 128, 128],
                 data_type=io)
    w = g.tensor(name="w", dim=[128, 128, k, k], stride=[128 * k * k, 1, 128 * k, 128],
                 data_type=io)
    dy = g.tensor(name="dy", dim=[64, 128, 28, 28], stride=[128 * 784, 1, 28 * 128, 128],
                  data_type=io)
    if kind == "fprop":
        y = g.conv_fprop(x, w, padding=[k // 2] * 2, stride=[1, 1], name="conv")
    elif kind == "dgrad":
        y = g.conv_dgrad(loss=dy, filter=w, padding=[1, 1], stride=[1, 1], name="conv")
        y.set_dim([64, 128, 28, 28])
    else:
        y = g.conv_wgrad(image=x, loss=dy, padding=[1, 1], stride=[1, 1], name="conv")
        y.set_dim([128, 128, 3, 3])
    y.set_output(True).set_data_type(io)
    return g.serialize()


def sdpa(b=4, hq=16, hkv=16, sq=4096, skv=4096, d=128):
    g = graph(dt.BFLOAT16)
    q = g.tensor(name="q", dim=[b, hq, sq, d], data_type=dt.BFLOAT16)
    k = g.tensor(name="k", dim=[b, hkv, skv, d], data_type=dt.BFLOAT16)
    v = g.tensor(name="v", dim=[b, hkv, skv, d], data_type=dt.BFLOAT16)
    o, _ = g.sdpa(q, k, v, generate_stats=False, attn_scale=d ** -0.5, name="sdpa")
    o.set_output(True).set_data_type(dt.BFLOAT16)
    return g.serialize()


ALL = ["hip", "blaslt", "cudnn"]


@pytest.mark.parametrize("case, want", [
    # the engines' order by their times in runs M24 / M25 (H200)
    (lambda: matmul(4096, 4096, 4096), ["blaslt", "cudnn", "hip"]),
    (lambda: matmul(16, 4096, 4096), ["hip", "blaslt", "cudnn"]),  # decode: memory-bound
    (lambda: matmul(1024, 3072, 768, dt.FLOAT), ["blaslt", "hip", "cudnn"]),
    (lambda: conv("fprop"), ["cudnn", "hip", "blaslt"]),
    (lambda: conv("fprop", k=1), ["cudnn", "hip", "blaslt"]),  # 1x1: memory-bound
    (lambda: conv("dgrad"), ["cudnn", "hip", "blaslt"]),
    (lambda: conv("wgrad"), ["cudnn", "hip", "blaslt"]),
    # exact fp32: hip a little ahead of cudnn; blaslt, never measured on convolutions,
    # ties with cudnn at the class's lowest share, and a tie keeps the given order
    (lambda: conv("fprop", dt.FLOAT), ["hip", "blaslt", "cudnn"]),
    (lambda: sdpa(), ["cudnn", "hip", "blaslt"]),
    (lambda: sdpa(b=64, hq=32, hkv=4, sq=1), ["cudnn", "hip", "blaslt"]),  # decode attention
], ids=["matmul_bf16_4096^3", "matmul_bf16_decode", "matmul_fp32", "conv_fprop_fp16",
        "conv_fprop_1x1_fp16",
        "conv_dgrad_fp16", "conv_wgrad_fp16", "conv_fprop_fp32", "sdpa_fwd", "sdpa_decode"])
def test_the_engine_measured_fastest_on_the_graphs_class_goes_first(case, want):
    got = rank(case(), ALL)
    assert [e for e, _, _ in got] == want, got
    assert "measured on an H200" in got[0][2], got[0]
    # blaslt runs no convolution or attention, cudnn no fp32 matmul: never measured there,
    # each is taken to be no faster than the slowest engine that was
    for engine, _, text in got:
        if "measured on an H200" not in text:
            assert engine in ("blaslt", "cudnn") and "not measured, the class's lowest" in text


def test_a_measured_engine_says_its_shares_and_the_estimate_follows_from_them():
    got = dict((e, (s, t)) for e, s, t in rank(matmul(4096, 4096, 4096), ["hip", "blaslt"]))
    flop = 2.0 * 4096 ** 3
    for engine, share in (("hip", 0.51), ("blaslt", 0.645)):
        score, text = got[engine]
        assert score == pytest.approx(flop / (H200_FLOPS * share) * 1e3, rel=1e-9)
        assert re.search(rf"x{share:.2g} compute, x0\.\d+ memory efficiency measured on an "
                         "H200", text), text


def test_a_class_nobody_measured_keeps_half_and_the_priority_order():
    """A layernorm: no engine's share is known, each gets half, the tie keeps the given
    order (the backend passes candidates in its priority order)."""
    g = graph(dt.FLOAT)
    x = g.tensor(name="x", dim=[64, 1024, 1, 1])
    sc = g.tensor(name="scale", dim=[1, 1024, 1, 1])
    bi = g.tensor(name="bias", dim=[1, 1024, 1, 1])
    y, _, _ = g.layernorm(hipdnn.norm_forward_phase.INFERENCE, x, sc, bi, epsilon=1e-5,
                          name="ln")
    y.set_output(True)
    for engines in (["hip", "cudnn"], ["cudnn", "hip"]):
        got = rank(g.serialize(), engines)
        assert [e for e, _, _ in got] == engines
        assert all("x0.5 efficiency" in t and "measured" not in t for _, _, t in got), got


def test_host_and_fallback_engines_take_no_device_share():
    """The table is for device engines: a host engine named like one, or a fallback one, is
    estimated as before (a twentieth for a fallback)."""
    got = rank(sdpa(b=1, hq=2, hkv=2, sq=128, skv=128, d=64),
               [("hip", HOST, 0), ("reference_cpu", HOST, FALLBACK), "cudnn"])
    assert got[0][0] == "cudnn"
    texts = dict((e, t) for e, _, t in got)
    assert "x0.5 efficiency" in texts["hip"] and "x0.05 efficiency" in texts["reference_cpu"]
