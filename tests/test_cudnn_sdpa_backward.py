"""The cudnn engine's sdpa_backward (plugins/cudnn/cudnn_sdpa_backward.c): the graph of
cuDNN backend operations cuDNN frontend builds for its sdpa_backward node, run on cuDNN
against the float64 reference at DESIGN tolerances (fp16 / bf16, scale as a constant or
given at execute, BSHD, causal masks at both alignments, sliding windows, bias, GQA / MQA,
head dims 64 and 128), its two fp32 workspace tensors, and what it declines and why.

s_kv is a multiple of 128 in the cases that run: up to cuDNN 9.15 cuDNN frontend adds a
padding mask of the full lengths otherwise, which the engine declines (tested over the
fake cuDNN playing 9.14).  The tests marked `gpu` run on cuDNN with an NVIDIA GPU, and in
CI over the fake CUDA driver and fake cuDNN (test_the_gpu_tests_pass_over_the_fake_libraries
runs this file there in a subprocess), whose attention-backward engine computes the
operation graph the engine makes in float64: it checks the translation (the op sequence,
uids, dims, strides and types of every tensor, the transposing reshapes, the workspace
tensors), not cuDNN's kernels.

On a GPU: HIPDNN_TEST_REQUIRE_GPU=1 python -m pytest -m gpu tests/test_cudnn_sdpa_backward.py
"""
import json
import subprocess
import sys
import textwrap

import pytest

import hipdnn
import test_gpu_sdpa_backward as bwd
from test_cudnn_plugin import (ENGINE, ENGINES, FAKE, PLUGIN, REPO, cd, fake_env,  # noqa: F401
                               gpu_tests_pass_over_the_fake_libraries, reason)  # (cd: fixture)

HALVES = ["fp16", "bf16"]
ALIGN = hipdnn.diagonal_alignment


class Case(bwd.Case):
    """An attention-backward problem at sizes cuDNN's engines take on every cuDNN 9.6+:
    s_kv a multiple of 128, head dim 64, an odd s_q."""

    def __init__(self, b=2, hq=2, sq=100, skv=128, d=64, **kw):
        super().__init__(b=b, hq=hq, sq=sq, skv=skv, d=d, **kw)


def run(cd, dtype, c, **kw):  # noqa: F811
    """sdpa_backward on cudnn, dq / dk / dv against the reference; cudnn's log."""
    log, _ = bwd.run(cd, dtype, c, engine=ENGINE, **kw)
    assert any("sdpa_backward 'attn_bwd', engine config 0 " in m for m in log), log
    return log


# ---- what runs -------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
def test_sdpa_backward(cd, dtype):  # noqa: F811
    run(cd, dtype, Case())


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
def test_head_dim_128(cd, dtype):  # noqa: F811
    run(cd, dtype, Case(sq=64, d=128))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("causal", ["top_left", "bottom_right"])
def test_causal(cd, dtype, causal):  # noqa: F811
    run(cd, dtype, Case(causal=causal == "top_left", causal_br=causal == "bottom_right"))


@pytest.mark.gpu
@pytest.mark.parametrize("align", [ALIGN.TOP_LEFT, ALIGN.BOTTOM_RIGHT], ids=["tl", "br"])
def test_sliding_window_with_causal_mask(cd, align):  # noqa: F811
    run(cd, "bf16", Case(left=32, right=0, align=align))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("bias", [[2, 2, 100, 128], [1, 2, 100, 128], [1, 1, 100, 128]],
                         ids=["full", "per_head", "shared"])
def test_additive_bias(cd, dtype, bias):  # noqa: F811
    run(cd, dtype, Case(bias=bias))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("heads", [(8, 2, 2), (4, 1, 1)], ids=["gqa", "mqa"])
def test_grouped_heads(cd, dtype, heads):  # noqa: F811
    # dk and dv summed over each group of query heads (a REDUCTION over cuDNN FE's full-head
    # gradients)
    hq, hk, hv = heads
    run(cd, dtype, Case(b=1, hq=hq, hk=hk, hv=hv, causal=True))


@pytest.mark.gpu
def test_bshd_layout_and_a_scale_given_at_execute(cd):  # noqa: F811
    run(cd, "fp16", Case(hq=3, sq=128, layout="bshd"), scale_as="by_value")


@pytest.mark.gpu
def test_the_workspace_holds_the_fp32_row_sums_and_dq_accumulator_then_the_plans(cd):  # noqa: F811
    c = Case(b=1, hq=2, sq=100, d=64)
    log = run(cd, "fp16", c)
    sums = -(-c.b * c.hq * c.sq * 4 // 256) * 256  # aligned to 256 bytes
    accumulator = c.b * c.hq * c.sq * c.d * 4
    plan = 1 << 20 if FAKE else 0  # the fake's best engine takes 1 MiB
    said = [m for m in log if "bytes of workspace" in m]
    assert said, log
    got = int(said[0].rsplit(", ", 1)[1].split()[0])
    assert got >= sums + accumulator + plan, (got, said)
    if FAKE:
        assert got == sums + accumulator + plan, (got, said)


# ---- what it declines, and why ---------------------------------------------------------------

def backward_graph(io=hipdnn.data_type.HALF, sq=8, skv=128, d=64, bias=False, lens=False,
                   **kw):
    g = hipdnn.pygraph(io_data_type=io, compute_data_type=hipdnn.data_type.FLOAT)
    if bias:
        kw["bias"] = g.tensor(name="bias", dim=[1, 2, sq, skv])
    if lens:
        kw["use_padding_mask"] = True
        kw["seq_len_q"], kw["seq_len_kv"] = (
            g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                     data_type=hipdnn.data_type.INT32) for n in ("seq_len_q", "seq_len_kv"))
    q = g.tensor(name="q", dim=[1, 2, sq, d])
    k = g.tensor(name="k", dim=[1, 2, skv, d])
    v = g.tensor(name="v", dim=[1, 2, skv, d])
    o, do = (g.tensor(name=n, dim=[1, 2, sq, d]) for n in ("o", "dO"))
    st = g.tensor(name="st", dim=[1, 2, sq, 1], data_type=hipdnn.data_type.FLOAT)
    for t in g.sdpa_backward(q, k, v, o, do, st, attn_scale=0.5, name="attn_bwd", **kw):
        t.set_output(True)
    return g


def dropout_graph():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.HALF,
                       compute_data_type=hipdnn.data_type.FLOAT)
    seed, offset = (g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1],
                             data_type=hipdnn.data_type.INT64) for n in ("seed", "offset"))
    q = g.tensor(name="q", dim=[1, 2, 8, 64])
    k = g.tensor(name="k", dim=[1, 2, 128, 64])
    st = g.tensor(name="st", dim=[1, 2, 8, 1], data_type=hipdnn.data_type.FLOAT)
    for t in g.sdpa_backward(q, k, k, q, q, st, attn_scale=0.5, name="attn_bwd",
                             dropout=(0.1, seed, offset)):
        t.set_output(True)
    return g


SAID = "sdpa_backward 'attn_bwd': "


@pytest.mark.gpu
@pytest.mark.parametrize("make,said", [
    (lambda: backward_graph(io=hipdnn.data_type.FLOAT),
     "'q' is float32; cuDNN's attention engines take fp16 or bf16"),
    (lambda: backward_graph(lens=True), "a padding mask; cudnn does not translate it"),
    (lambda: backward_graph(use_alibi_mask=True, use_causal_mask=True),
     "an ALiBi mask; cudnn does not translate it yet"),
    (dropout_graph, "dropout_probability is set; cudnn does not translate it yet"),
    (lambda: backward_graph(use_causal_mask_bottom_right=True, bias=True),
     "a bottom-right causal mask with a bias; cuDNN frontend refuses it"),
    (lambda: backward_graph(d=60), "head dims that are not multiples of 8 or are above 256; "
                                   "cuDNN frontend refuses it"),
    (lambda: backward_graph(d=264), "head dims that are not multiples of 8 or are above 256"),
    (lambda: backward_graph(sq=1, skv=1), "s_q = s_kv = 1; cuDNN frontend refuses it"),
], ids=["fp32", "padding", "alibi", "dropout", "bottom_right_and_bias", "head_dim_60",
        "head_dim_264", "one_query_one_key"])
def test_what_it_does_not_translate_is_declined_naming_the_node(cd, make, said):  # noqa: F811
    why = reason(make())
    assert why and why.startswith(f"{ENGINE}: {SAID}") and said in why, why


# ---- other cuDNN versions, over the fakes ------------------------------------------------------

VERSIONED = """
import hipdnn, json, sys
sys.path.insert(0, TESTS)
hipdnn.set_engine_plugin_paths([ENGINES + "/libhipdnn_reference_cpu.so", PLUGIN],
                               hipdnn.plugin_loading_mode.ABSOLUTE)
from test_cudnn_sdpa_backward import backward_graph
g = backward_graph(skv=SKV, use_causal_mask=True)
g.build([hipdnn.heur_mode.A])
print(json.dumps(dict(g.support_report()).get("cudnn")))
"""


def reason_on(version, skv):
    """cudnn's reason for a causal sdpa_backward of s_kv over the fake cuDNN of `version`."""
    code = (f"ENGINES = {str(ENGINES)!r}\nPLUGIN = {str(PLUGIN)!r}\nSKV = {skv}\n"
            f"TESTS = {str(REPO / 'tests')!r}\n" + textwrap.dedent(VERSIONED))
    proc = subprocess.run([sys.executable, "-c", code], env=fake_env(FAKE_CUDNN_VERSION=version),
                          capture_output=True, text=True, timeout=120, cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_up_to_cudnn_9_15_an_s_kv_not_a_multiple_of_128_is_declined():
    why = reason_on("91400", 100)
    assert why and why.startswith(f"{ENGINE}: {SAID}s_kv 100 is not a multiple of 128; up to "
                                  "cuDNN 9.15 cuDNN frontend then adds a padding mask"), why
    assert "(cuDNN 9.14.0 loaded; the hip engine runs it)" in why, why
    assert reason_on("91400", 128) is None  # a multiple of 128 runs there
    assert reason_on("91600", 100) is None  # and any s_kv from 9.16


def test_before_cudnn_9_6_it_is_declined():
    why = reason_on("90500", 128)
    assert why and why.startswith(f"{ENGINE}: {SAID}cuDNN 9.5.0 loaded; before 9.6 cuDNN's "
                                  "attention backward wants its dQ accumulator zeroed"), why


def test_cudnn_9_10_0_is_declined_as_cudnn_frontend_does():
    why = reason_on("91000", 128)
    assert why and "cuDNN 9.10.0 and 9.10.1 have known bugs in attention backward" in why, why


# ---- over the fakes, in CI ---------------------------------------------------------------------

def test_the_gpu_tests_pass_over_the_fake_libraries():
    gpu_tests_pass_over_the_fake_libraries(__file__)
