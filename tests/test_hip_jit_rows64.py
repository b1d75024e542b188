"""The sm_90 kernel's 64-row tile (matmuls of at most 64 rows: an LLM's decode), compiled as
an sm_90 GPU would compile it, on any machine with NVRTC (test_hip_jit.py's way): fp16 and
bf16 matmuls of 1 to 64 rows, b with n or k contiguous, a with k or m contiguous, batched
and not, each with an epilogue of another family (none, bias + gelu, a residual add with the
product kept, a backward activation reading its saved input, swish, bias + relu), planned
on the host emulation with HIPDNN_HIP_JIT_DUMP set, write the wgmma kernel in each of its
five tiles (128 x 256, 128 x 128, 128 x 64, 64 x 128, 64 x 64).  Each compiles for sm_90a
with wgmma of its width in its PTX; ptxas spills nothing; the 64-row tiles run 256 threads
without setmaxnreg, their consumers' barrier 128 threads, the 128-row ones keep theirs.
Split-k is a branch of the same kernel (the launch's g.splits), so each compiled kernel
holds both ways.  Their numerics need an sm_90 GPU (tests/test_gpu_matmul.py, "64-row")."""
import re
import textwrap

import pytest

from test_hip_jit import (compile_ptx, dump_kernels, find_ptxas, gm_headers, gm_sources, nvrtc,
                          run_ptxas, spill_bytes)

GRAPH = textwrap.dedent('''
    import hipdnn
    hipdnn.set_engine_plugin_paths([{emulated!r}])
    dt = hipdnn.data_type

    def build(io, make):
        g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT)
        make(g)
        g.set_preferred_engine("hip_emulated")
        g.build([hipdnn.heur_mode.A])

    def decode(g):  # 16 x 4096 x 4096, b [K, N] (n contiguous), the product alone
        a = g.tensor(name="a", dim=[16, 4096]); b = g.tensor(name="b", dim=[4096, 4096])
        g.matmul(a, b).set_output(True)
    def linear_gelu(g):  # b as nn.Linear's [N, K] (k contiguous), bias + gelu
        a = g.tensor(name="a", dim=[16, 512]); b = g.tensor(name="b", dim=[512, 1000], stride=[1, 512])
        bias = g.tensor(name="bias", dim=[1, 1000])
        g.gelu(g.add(g.matmul(a, b), bias)).set_output(True)
    def residual_kept(g):  # batched, the product an output too, + a residual, relu
        a = g.tensor(name="a", dim=[2, 33, 256]); b = g.tensor(name="b", dim=[256, 72], stride=[1, 256])
        r = g.tensor(name="r", dim=[2, 33, 72])
        c = g.matmul(a, b)
        c.set_output(True)
        g.relu(g.add(c, r)).set_output(True)
    def backward(g):  # dx = gelu_backward(dy @ w^T, a): the saved input read in the epilogue
        dy = g.tensor(name="dy", dim=[64, 96]); wt = g.tensor(name="wt", dim=[96, 40], stride=[1, 96])
        a = g.tensor(name="a", dim=[64, 40])
        g.gelu_backward(loss=g.matmul(dy, wt), input=a).set_output(True)
    def a_transposed(g):  # a [M, K] with m contiguous (wgmma's transposed a), swish
        a = g.tensor(name="a", dim=[16, 520], stride=[1, 16]); b = g.tensor(name="b", dim=[520, 264])
        g.swish(g.matmul(a, b)).set_output(True)
    def one_row(g):  # m = 1, b k contiguous, bias + relu
        a = g.tensor(name="a", dim=[1, 4096]); b = g.tensor(name="b", dim=[4096, 1024], stride=[1, 4096])
        bias = g.tensor(name="bias", dim=[1, 1024])
        g.relu(g.add(g.matmul(a, b), bias)).set_output(True)

    build(dt.HALF, decode)
    build(dt.BFLOAT16, linear_gelu)
    build(dt.HALF, residual_kept)
    build(dt.BFLOAT16, backward)
    build(dt.BFLOAT16, a_transposed)
    build(dt.HALF, one_row)
''')

# (DT: PW_F16 1, PW_BF16 2; AK; BK) of each plan above, in order
PLANS = [(1, "true", "false"), (2, "true", "true"), (1, "true", "true"), (2, "true", "true"),
         (2, "false", "false"), (1, "true", "true")]
# (BN, STAGES, PERSIST, BM): the sm_90 kernel's tiles (gemm_choice.c's k_wg_tiles)
TILES = [(256, 4, "false", 128), (128, 4, "true", 128), (64, 6, "true", 128),
         (128, 6, "true", 64), (64, 8, "true", 64)]
CALL = re.compile(r"gm_wgmma_tile<(\d), (\w+), (\w+), (\d+), (\d+), (\w+), (\d), (\d+), (\d+), ")


@pytest.fixture(scope="module")
def rows64_dump(tmp_path_factory):
    return dump_kernels(tmp_path_factory, "jit_rows64", GRAPH)


def wgmma_sources(dump):
    """(path, (DT, AK, BK, BN, STAGES, PERSIST, CONV, BM, S)) of each sm_90 kernel dumped."""
    out = []
    for p in gm_sources(dump, "cu"):
        if p.name.startswith("hipdnn_gm_wgmma"):
            m = CALL.search(p.read_text())
            assert m, p.name
            g = m.groups()
            out.append((p, (int(g[0]), g[1], g[2], int(g[3]), int(g[4]), g[5], int(g[6]),
                            int(g[7]), int(g[8]))))
    return out


def test_each_small_matmul_writes_the_sm90_kernel_in_every_tile(rows64_dump):
    got = sorted(call[:6] + call[7:8] for _, call in wgmma_sources(rows64_dump))
    want = sorted((dt, ak, bk, bn, st, pe, bm) for dt, ak, bk in PLANS for bn, st, pe, bm in TILES)
    assert got == want
    for path, call in wgmma_sources(rows64_dump):
        assert call[6] == 0, path.name  # matmuls: no convolution
        assert f"__launch_bounds__(GM_WG_THREADS({call[7]}), 1)" in path.read_text(), path.name


@pytest.mark.slow  # 30 kernels through NVRTC and ptxas: about a minute on 2 cores
@pytest.mark.toolchain
def test_the_64_and_128_row_tiles_compile_with_nvrtc_without_spills(rows64_dump):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    headers = gm_headers(rows64_dump)
    ptxas = find_ptxas()
    srcs = wgmma_sources(rows64_dump)
    assert len(srcs) == len(PLANS) * len(TILES), srcs
    registers = {}
    for src, (dt, ak, bk, bn, stages, persist, conv, bm, slots) in srcs:
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, "sm_90a",
                                   name_expressions=["hipdnn_gemm"])
        assert rc == 0, f"{src.name}: {log}"
        text = ptx.decode(errors="replace")
        kind = {1: "f16", 2: "bf16"}[dt]
        assert f"wgmma.mma_async.sync.aligned.m64n{bn}k16.f32.{kind}.{kind}" in text, src.name
        assert "cp.async.bulk.tensor" in text, src.name
        # the consumers' named barrier: BM / 64 warpgroups; setmaxnreg for 128 rows only
        assert re.search(rf"bar(rier)?\.sync(\.aligned)?\s+1,\s*{2 * bm};", text), src.name
        assert ("setmaxnreg" in text) == (bm == 128), src.name
        if not ptxas:
            continue
        info = run_ptxas(ptxas, "sm_90a", ptx, src.with_suffix(".ptx"))
        assert "C7508" not in info, f"{src.name}: setmaxnreg ignored: {info}"
        spills = spill_bytes(info)
        assert spills and all(a == 0 and b == 0 for a, b in spills), f"{src.name}: {info}"
        regs = [int(r) for r in re.findall(r"Used (\d+) registers", info)]
        assert regs and max(regs) <= 255, f"{src.name}: {info}"
        registers.setdefault((bm, bn), set()).update(regs)
    print("registers by tile (BM, BN):", {k: sorted(v) for k, v in sorted(registers.items())})
