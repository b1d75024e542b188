"""The sm_90 kernel reading fp32 as TF32 (the hip engine's tf32 knob), compiled as an sm_90
GPU would compile it, on any machine with NVRTC (test_hip_jit.py's way): two fp32 matmuls
with a bias + gelu epilogue, a K-major and b K-major (TMA) or N-major (copied transposed
by the producer warpgroup), and two convolutions + relu (x gathered: channels-last x
and KRSC w, NCHW x and KCRS w), planned on the host emulation with knob TF32 = 1 and
HIPDNN_HIP_JIT_DUMP set, write the wgmma kernel in each of its three tiles; each compiles
for sm_90a with wgmma's .tf32 kind (k8) in its PTX, and ptxas spills nothing and keeps
setmaxnreg.  Its numerics need an sm_90 GPU (tests/test_gpu_tf32.py)."""
import re
import textwrap

import pytest

from test_hip_jit import (compile_ptx, dump_kernels, find_ptxas, gm_headers, gm_sources, nvrtc,
                          run_ptxas, spill_bytes)

GRAPH = textwrap.dedent('''
    import hipdnn
    hipdnn.set_engine_plugin_paths([{emulated!r}])
    dt = hipdnn.data_type
    for b_stride in ([1, 136], [520, 1]):  # [N, K] in memory (k contiguous), [K, N]
        g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT)
        a = g.tensor(name="a", dim=[2, 300, 136])
        b = g.tensor(name="b", dim=[136, 520], stride=b_stride)
        bias = g.tensor(name="bias", dim=[1, 520])
        g.gelu(g.add(g.matmul(a, b), bias)).set_output(True)
        g.validate()
        g.build_operation_graph()
        engine = [e.name for e in hipdnn.engines()].index("hip_emulated")
        g.create_execution_plan(engine, {{20000: 1}})
        g.build_plans()
    # forward convolutions + relu, x gathered by the producer warpgroup: channels-last x
    # and KRSC w (16 bytes at a time), NCHW x and KCRS w (an element at a time)
    for x_stride, w_stride in (([12544, 1, 896, 64], [576, 1, 192, 64]),
                               ([12544, 196, 14, 1], [576, 9, 3, 1])):
        g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT)
        x = g.tensor(name="x", dim=[4, 64, 14, 14], stride=x_stride)
        w = g.tensor(name="w", dim=[96, 64, 3, 3], stride=w_stride)
        g.relu(g.conv_fprop(x, w, padding=[1, 1])).set_output(True)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plan(engine, {{20000: 1}})
        g.build_plans()
''')


@pytest.fixture(scope="module")
def tf32_dump(tmp_path_factory):
    return dump_kernels(tmp_path_factory, "jit_tf32", GRAPH)


def test_a_tf32_plan_writes_the_sm90_kernel_in_each_tile(tf32_dump):
    wg = [p.read_text() for p in gm_sources(tf32_dump, "cu")
          if p.name.startswith("hipdnn_gm_wgmma")]
    # PW_F32 (0), a K-major, b K-major or not, in the three tiles; the convolutions (1), x
    # in 16-byte chunks (AK true) or elements (false)
    for ak, bk, conv in (("true", "true", 0), ("true", "false", 0), ("true", "true", 1),
                         ("false", "true", 1)):
        for tile in ("64, 6, true", "128, 4, true", "256, 4, false"):
            assert len([t for t in wg
                        if f"gm_wgmma_tile<0, {ak}, {bk}, {tile}, {conv}, " in t]) == 1
    assert len(wg) == 12, wg


@pytest.mark.toolchain
def test_the_tf32_kernels_compile_with_nvrtc_without_spills(tf32_dump):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    headers = gm_headers(tf32_dump)
    ptxas = find_ptxas()
    srcs = [p for p in gm_sources(tf32_dump, "cu") if p.name.startswith("hipdnn_gm_wgmma")]
    assert len(srcs) == 12, srcs
    for src in srcs:
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, "sm_90a",
                                   name_expressions=["hipdnn_gemm"])
        assert rc == 0, f"{src.name}: {log}"
        text = ptx.decode(errors="replace")
        assert re.search(r"wgmma\.mma_async\.sync\.aligned\.m64n(64|128|256)k8\.f32\.tf32\.tf32",
                         text) and "cp.async.bulk.tensor" in text, src.name
        if not ptxas:
            continue
        info = run_ptxas(ptxas, "sm_90a", ptx, src.with_suffix(".ptx"))
        assert "C7508" not in info, f"{src.name}: setmaxnreg ignored: {info}"
        spills = spill_bytes(info)
        assert spills and all(a == 0 and b == 0 for a, b in spills), f"{src.name}: {info}"
