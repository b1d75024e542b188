"""The kernels the HIP engine compiles at run time (NVRTC, hiprtc), checked on any machine
with the compiler, GPU or not: graphs are planned on the engine's host emulation with
HIPDNN_HIP_JIT_DUMP set, which writes each plan's kernel source with the headers it
includes, and each is compiled here as plugins/hip/jit.hip compiles it (same options), for
sm_90 (and sm_80 with HIPDNN_TEST_NVRTC_FULL=1, as on the GPU machine); ptxas then reports
its registers and spills, which must stay small.

The same dump holds the row-wise and pooling families' sources (for NVRTC and for hiprtc)
and kernels.txt, every kernel the engine's choice (kernel_names.c) can name, listed by
running that choice: each compiles here, PTX only for NVRTC (compute_90), a code object
for gfx90a with hiprtc (no GPU needed for either).  All of them take minutes (marked
slow); one of each template runs always.

The emulation runs the same per-instruction code (pw_exec.h, rw_exec.h, rs_exec.h) the
compiled kernels run, so its numeric tests cover these kernels' arithmetic too."""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
JIT_OPTIONS = ["--std=c++17", "-DHIPDNN_HIP_JIT=1"]  # as jit.hip's compile()

GRAPHS = textwrap.dedent('''
    import os
    import numpy as np, hipdnn
    hipdnn.set_engine_plugin_paths([{emulated!r}])
    dt = hipdnn.data_type

    def build(io, make, inter=dt.FLOAT):
        g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=inter,
                           compute_data_type=dt.FLOAT)
        make(g)
        g.set_preferred_engine("hip_emulated")
        g.build([hipdnn.heur_mode.A])
        assert g.get_engine_name(0) == "hip_emulated"

    def bench(g):  # gelu(a * b + a) + b
        a = g.tensor(name="a", dim=[1 << 20]); b = g.tensor(name="b", dim=[1 << 20])
        g.add(a=g.gelu(input=g.add(a=g.mul(a=a, b=b), b=a)), b=b).set_output(True)

    def chain(g):  # scale, shift, leaky relu, clip by a constant, tanh
        x = g.tensor(name="x", dim=[4, 8, 6, 6]); s = g.tensor(name="s", dim=[1, 8, 1, 1])
        t = g.relu(input=g.add(a=g.mul(a=x, b=s), b=0.5), negative_slope=0.1,
                   upper_clip=6.0)
        g.tanh(input=g.max(a=t, b=-0.25)).set_output(True)

    def strided(g):  # broadcast operand, transposed output, a second output
        x = g.tensor(name="x", dim=[5, 7]); b = g.tensor(name="b", dim=[1, 7])
        t = g.sub(a=b, b=x); t.set_output(True)
        y = g.sigmoid(input=g.div(a=t, b=x)); y.set_output(True).set_stride([1, 5])

    def wide(g):  # eight inputs: the widest kernel
        xs = [g.tensor(name=f"x{{i}}", dim=[3, 33]) for i in range(8)]
        acc = xs[0]
        for x in xs[1:]:
            acc = g.min(a=g.add(a=acc, b=x), b=x)
        acc.set_output(True)

    def square(g):  # mul(t, t), reversed operands
        x = g.tensor(name="x", dim=[9])
        t = g.add(a=x, b=1.0)
        g.div(a=g.sub(a=3.0, b=g.mul(a=t, b=t)), b=t).set_output(True)

    def batchnorm(g):  # batchnorm inference then gelu
        x = g.tensor(name="x", dim=[2, 16, 7, 7])
        st = [g.tensor(name=n, dim=[1, 16, 1, 1]) for n in ("m", "v", "s", "b")]
        g.gelu(input=g.batchnorm_inference(x, *st)).set_output(True)

    def modes(g):  # cmp -> select (a BOOLEAN output too), sin, softplus, pow, erf, mod, swish
        x = g.tensor(name="x", dim=[6, 40]); y = g.tensor(name="y", dim=[6, 40])
        m = g.cmp_gt(input=x, comparison=y); m.set_output(True)
        s = g.binary_select(input0=g.sin(input=x), input1=g.softplus(input=y), mask=m)
        t = g.pow(input0=g.abs(input=s), input1=g.erf(input=x))
        g.add(a=g.mod(input0=t, input1=1.5), b=g.swish(input=x, swish_beta=1.5)).set_output(True)

    def backward(g):  # every backward mode, chained through dy, and gen_index into int32
        x = g.tensor(name="x", dim=[5, 24]); dy = g.tensor(name="dy", dim=[5, 24])
        acc = g.relu_backward(loss=dy, input=x, negative_slope=0.1)
        for m in ("tanh", "sigmoid", "elu", "gelu", "gelu_approx_tanh", "softplus", "swish"):
            acc = getattr(g, m + "_backward")(loss=acc, input=x)
        acc.set_output(True)
        g.gen_index(input=x, axis=1).set_output(True).set_data_type(dt.INT32)

    build(dt.BFLOAT16, bench)
    build(dt.HALF, batchnorm)
    build(dt.HALF, chain, inter=dt.HALF)
    build(dt.FLOAT, strided)
    build(dt.FLOAT, wide)
    build(dt.BFLOAT16, square, inter=dt.BFLOAT16)
    build(dt.FLOAT, bench)
    build(dt.FLOAT, modes)
    build(dt.HALF, backward)

    # matmul and convolution kernels (hipdnn_gm_*): after the pointwise ones, whose numbers
    # the tests above rely on
    def mm_gelu(g):  # tensor cores: bias + gelu epilogue, b transposed
        a = g.tensor(name="a", dim=[64, 96]); b = g.tensor(name="b", dim=[96, 40], stride=[1, 96])
        bias = g.tensor(name="bias", dim=[1, 40])
        g.gelu(g.add(g.matmul(a, b), bias)).set_output(True)
    def conv_relu(g):  # tensor cores, a convolution's gathered x: NHWC, 3x3
        x = g.tensor(name="x", dim=[2, 16, 8, 8], stride=[1024, 1, 128, 16])
        w = g.tensor(name="w", dim=[24, 16, 3, 3], stride=[144, 1, 48, 16])
        g.relu(g.conv_fprop(x, w, padding=[1, 1])).set_output(True)
    def mm_fp32(g):  # the general kernel: batched, broadcast, exact fp32
        a = g.tensor(name="a", dim=[3, 5, 7]); b = g.tensor(name="b", dim=[7, 9])
        g.matmul(a, b).set_output(True)

    def mm_gelu_bwd(g):  # tensor cores: a training graph's dx = gelu_backward(dy @ w^T, a)
        dy = g.tensor(name="dy", dim=[64, 96]); wt = g.tensor(name="wt", dim=[96, 40], stride=[1, 96])
        a = g.tensor(name="a", dim=[64, 40])
        g.gelu_backward(loss=g.matmul(dy, wt), input=a).set_output(True)

    def mm_fp32_tiled(g):  # the fp32 register-tiled kernel, 128 x 128: bias + gelu, b transposed
        a = g.tensor(name="a", dim=[1024, 768]); b = g.tensor(name="b", dim=[768, 3072], stride=[1, 768])
        bias = g.tensor(name="bias", dim=[1, 3072])
        g.gelu(g.add(g.matmul(a, b), bias)).set_output(True)
    def conv_fp32_nchw(g):  # ... a convolution, NCHW x gathered, KCRS w (the taps innermost)
        x = g.tensor(name="x", dim=[16, 256, 14, 14]); w = g.tensor(name="w", dim=[256, 256, 3, 3])
        g.relu(g.conv_fprop(x, w, padding=[1, 1])).set_output(True)

    build(dt.HALF, mm_gelu)
    build(dt.BFLOAT16, conv_relu)
    build(dt.FLOAT, mm_fp32)
    build(dt.BFLOAT16, mm_gelu_bwd)
    os.environ["HIPDNN_HIP_WGMMA_BN"] = "128"  # the model's tile is 128 x 64: the knob's too
    build(dt.FLOAT, mm_fp32_tiled)
    del os.environ["HIPDNN_HIP_WGMMA_BN"]
    build(dt.FLOAT, conv_fp32_nchw)

    # attention kernels (hipdnn_fa_*): tensor cores for head dims 64, 128 (8 warps too:
    # enough query tiles), 256 and 80 / 48; the general kernel for fp32
    def attn(d, dv, b=2, sq=40, causal=False, bias=False, pad=False):
        def make(g):
            q = g.tensor(name="q", dim=[b, 4, sq, d]); k = g.tensor(name="k", dim=[b, 2, 50, d])
            v = g.tensor(name="v", dim=[b, 2, 50, dv])
            kw = {{}}
            if bias:
                kw["bias"] = g.tensor(name="bias", dim=[1, 4, sq, 50])
            if pad:
                kw.update(use_padding_mask=True,
                          seq_len_q=g.tensor(name="lq", dim=[b, 1, 1, 1], data_type=dt.INT32),
                          seq_len_kv=g.tensor(name="lk", dim=[b, 1, 1, 1], data_type=dt.INT64))
            o, st = g.sdpa(q, k, v, attn_scale=0.125, use_causal_mask=causal,
                           generate_stats=True, **kw)
            o.set_output(True); st.set_output(True).set_data_type(dt.FLOAT)
        return make

    build(dt.HALF, attn(64, 64, causal=True))
    build(dt.BFLOAT16, attn(128, 128, bias=True, pad=True))
    build(dt.HALF, attn(128, 128, b=64, sq=300, causal=True))
    build(dt.BFLOAT16, attn(256, 256))
    build(dt.HALF, attn(80, 48))
    build(dt.FLOAT, attn(72, 72, causal=True, bias=True))

    # attention backward kernels (hipdnn_fab_dq_*, hipdnn_fab_dkv_*): tensor cores for head
    # dims 64 and 128, the general kernels for 256 and for fp32 with H_k != H_v
    def attn_bwd(d, hk=2, hv=2, causal=False, bias=False, pad=False):
        def make(g):
            b, sq, skv = 2, 40, 50
            q = g.tensor(name="q", dim=[b, 4, sq, d]); k = g.tensor(name="k", dim=[b, hk, skv, d])
            v = g.tensor(name="v", dim=[b, hv, skv, d])
            o = g.tensor(name="o", dim=[b, 4, sq, d]); do = g.tensor(name="do", dim=[b, 4, sq, d])
            st = g.tensor(name="st", dim=[b, 4, sq, 1], data_type=dt.FLOAT)
            kw = {{}}
            if bias:
                kw["bias"] = g.tensor(name="bias", dim=[1, 4, sq, skv])
            if pad:
                kw.update(use_padding_mask=True,
                          seq_len_q=g.tensor(name="lq", dim=[b, 1, 1, 1], data_type=dt.INT32),
                          seq_len_kv=g.tensor(name="lk", dim=[b, 1, 1, 1], data_type=dt.INT64))
            for t in g.sdpa_backward(q, k, v, o, do, st, attn_scale=0.125,
                                     use_causal_mask=causal, **kw):
                t.set_output(True)
        return make

    build(dt.HALF, attn_bwd(64, causal=True))
    build(dt.BFLOAT16, attn_bwd(128, bias=True, pad=True))
    build(dt.BFLOAT16, attn_bwd(256))
    build(dt.FLOAT, attn_bwd(72, hk=1, hv=2, causal=True, bias=True))

    # the attention decode path (hipdnn_fd_*): a split kernel of 1, 2 and 4 warps (GQA 8 and
    # 4, MQA), head dims 64, 128 and 256 (key tiles of 32), and a combine kernel a head dim
    def decode(d, hq, hk, sq, causal=False, bias=False, pad=False):
        def make(g):
            b, skv = 2, 4096
            q = g.tensor(name="q", dim=[b, hq, sq, d]); k = g.tensor(name="k", dim=[b, hk, skv, d])
            v = g.tensor(name="v", dim=[b, hk, skv, d])
            kw = {{}}
            if bias:
                kw["bias"] = g.tensor(name="bias", dim=[1, hq, sq, skv])
            if pad:
                kw.update(use_padding_mask=True,
                          seq_len_q=g.tensor(name="lq", dim=[b, 1, 1, 1], data_type=dt.INT32),
                          seq_len_kv=g.tensor(name="lk", dim=[b, 1, 1, 1], data_type=dt.INT32))
            o, st = g.sdpa(q, k, v, attn_scale=0.125, use_causal_mask_bottom_right=causal,
                           generate_stats=True, **kw)
            o.set_output(True); st.set_output(True).set_data_type(dt.FLOAT)
        return make

    build(dt.BFLOAT16, decode(128, 32, 4, 1))
    build(dt.HALF, decode(64, 16, 2, 4, causal=True, bias=True, pad=True))
    build(dt.BFLOAT16, decode(128, 16, 1, 4))
    build(dt.BFLOAT16, decode(256, 8, 2, 2))
''')


def nvrtc():
    for name in ("libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "lib64", "libnvrtc.so")):
            return ctypes.CDLL(os.path.join(home, "lib64", "libnvrtc.so"))
    return None


def compile_ptx(lib, source, headers, arch, name_expressions=(), extra=()):
    prog = ctypes.c_void_p()
    names = [n.encode() for n in headers]
    texts = [headers[n] for n in headers]
    arr = ctypes.c_char_p * len(names)
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"hipdnn_pw_fused.cu",
                                  len(names), arr(*texts), arr(*names)) == 0
    for expr in name_expressions:
        assert lib.nvrtcAddNameExpression(prog, expr.encode()) == 0, expr
    opts = [f"--gpu-architecture={arch}".encode()] + [o.encode() for o in [*JIT_OPTIONS, *extra]]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(max(n.value, 1))
    lib.nvrtcGetProgramLog(prog, log)
    ptx = None
    if rc == 0:
        lib.nvrtcGetPTXSize(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetPTX(prog, buf)
        ptx = buf.value
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode("utf-8", "replace"), ptx


def dump_kernels(tmp_path_factory, name, script):
    """Runs `script` (a template of {emulated}) in a child process on the emulated engine
    with HIPDNN_HIP_JIT_DUMP set: the folder its plans' kernel sources were written to."""
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    out = tmp_path_factory.mktemp(name)
    env = dict(os.environ, HIPDNN_HIP_JIT_DUMP=str(out),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("HIPDNN_PLUGIN_DIR", None)
    proc = subprocess.run([sys.executable, "-c", script.format(emulated=str(EMULATED))],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def dump_dir(tmp_path_factory):
    return dump_kernels(tmp_path_factory, "jit", GRAPHS)


@pytest.fixture(scope="module")
def dumped(dump_dir):
    out = dump_dir
    sources = sorted(out.glob("hipdnn_pw_*.cu"))
    assert len(sources) == 9, sorted(p.name for p in out.iterdir())
    headers = {n: (out / n).read_bytes() for n in ("pw_program.h", "pw_exec.h")}
    return sources, headers


def test_each_plan_writes_a_kernel_that_calls_the_interpreters_steps(dumped):
    sources, _ = dumped
    bench = sources[0].read_text()
    # both ways: generic, and fast (the benchmark's tensors are contiguous)
    assert "extern \"C\" __global__" in bench and "hipdnn_pw_fused" in bench
    assert "pw_generic_thread<2, hipdnn_program>" in bench
    assert "hipdnn_pw_fast" in bench and "pw_fast_thread<2, 4, hipdnn_program>" in bench
    # gelu(a * b + a) + b: get a, mul b, add a, gelu, add b, store; nothing else; two bf16
    # inputs, contiguous, as constants
    assert bench.count("pw_instr_step<S>") == 6
    assert "return 2; }" in bench  # nin
    assert "in_dtype(const pw_program&, int i) { return i == 0 ? 2 : i == 1 ? 2 : 0; }" in bench
    # a strided plan gets the generic kernel only
    strided = sources[3].read_text()
    assert "hipdnn_pw_fused" in strided and "hipdnn_pw_fast" not in strided
    # two fp32 inputs: 4 vectors a thread too (256 bytes in flight); eight: 1
    bench32 = sources[6].read_text()
    assert "pw_fast_thread<2, 4, hipdnn_program>" in bench32
    wide = sources[4].read_text()
    assert "pw_fast_thread<8, 1, hipdnn_program>" in wide
    # binary_select is one SELECT instruction (opcode 6); gen_index reads coordinates
    # (storage type 6, PW_INDEX) and stores int32 (4)
    assert "pw_instr{6, " in sources[7].read_text()
    backward = sources[8].read_text()
    assert "in_dtype(const pw_program&, int i) { return i == 0 ? 1 : i == 1 ? 1 : i == 2 ? 6" \
        in backward


# The spill checks for sm_90 everywhere; sm_80's (its registers differ, its kernels are the
# same code) where HIPDNN_TEST_NVRTC_FULL=1, as tools/gpu_check.sh sets on the GPU machine's
# 16 cores: in CI's make test they took about 60 CPU-s.
ARCHS = ["sm_90"] + (["sm_80"] if os.environ.get("HIPDNN_TEST_NVRTC_FULL") == "1" else [])


def find_ptxas():
    """ptxas on PATH or in /usr/local/cuda/bin, else None (the spill checks are skipped)."""
    return shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas"
                                     if os.path.exists("/usr/local/cuda/bin/ptxas") else None)


def run_ptxas(ptxas, arch, ptx, ptx_file, timeout=300):
    """ptxas -v over ptx (written to ptx_file): its report (stderr); fails if it fails."""
    ptx_file.write_bytes(ptx)
    info = subprocess.run([ptxas, f"-arch={arch}", "-v", str(ptx_file), "-o",
                           str(ptx_file.with_suffix(".cubin"))],
                          capture_output=True, text=True, timeout=timeout)
    assert info.returncode == 0, info.stderr
    return info.stderr


def spill_bytes(report):
    """(spill stores, spill loads) in bytes of each function in a ptxas -v report."""
    return [(int(a), int(b))
            for a, b in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)]


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHS)
def test_generated_kernels_compile_with_nvrtc_without_spills(dumped, arch):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    sources, headers = dumped
    ptxas = find_ptxas()
    for src in sources:
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch)
        assert rc == 0, f"{src.name} for {arch}: {log}"
        if not ptxas:
            continue
        info = run_ptxas(ptxas, arch, ptx, src.with_suffix(f".{arch}.ptx"), timeout=120)
        spills = spill_bytes(info)
        regs = [int(r) for r in re.findall(r"Used (\d+) registers", info)]
        # a few bytes may go to a math routine's call frame (tanhf on sm_80); the
        # register arrays never do
        assert spills and all(a <= 16 and b <= 16 for a, b in spills), f"{src.name}: {info}"
        assert regs and max(regs) <= 128, f"{src.name}: {regs} registers"


# ---- matmul and convolution kernels -----------------------------------------------------------

def gm_sources(dump_dir, suffix):
    return sorted(dump_dir.glob(f"hipdnn_gm_*.{suffix}"))


def gm_headers(dump_dir):
    return {p.name: p.read_bytes() for p in dump_dir.glob("*.h")}


def test_each_matmul_and_convolution_plan_writes_its_kernel(dump_dir):
    cu = [p.read_text() for p in gm_sources(dump_dir, "cu")]
    # each plan's kernel (6), and the sm_90 kernels (3 tiles of 128 rows) of the three on
    # tensor cores, the two matmuls in the 2 tiles of 64 rows too (the convolution keeps
    # 128); for hiprtc each plan's general kernel, the two fp32 register-tiled ones, and
    # AMD's matrix-core kernel of the two fp16 / bf16 matmuls
    assert len(cu) == 19 and len(gm_sources(dump_dir, "hip")) == 10, sorted(
        p.name for p in dump_dir.iterdir())
    for tile, bm in (("64, 6, true", 128), ("128, 4, true", 128), ("256, 4, false", 128),
                     ("128, 6, true", 64), ("64, 8, true", 64)):  # BN, stages, persistent
        mine = [t for t in cu if f"gm_wgmma_tile<1, true, true, {tile}, 0, {bm}, " in t]
        assert len(mine) == 1 and f"__launch_bounds__(GM_WG_THREADS({bm}), 1)" in mine[0], cu
    assert [t for t in cu if "gm_wgmma_tile<2, true, true, 256, 4, false, 1, 128, " in t], cu  # conv
    assert not [t for t in cu if re.search(r"gm_wgmma_tile<\d, \w+, \w+, \d+, \d+, \w+, 1, 64, ",
                                           t)], cu
    # bf16 matmul, gelu_backward's epilogue (its saved input read in the epilogue)
    bwd = [t for t in cu if re.search(r"gm_wgmma_tile<2, true, true, \d+, \d+, \w+, 0, ", t)]
    assert len(bwd) == 5, cu
    mma = [t for t in cu if "gm_mma<" in t]
    assert len(mma) == 3 and any(", 1, 2, hipdnn_program>" in t for t in mma), mma  # conv
    assert any("gm_simt<0, 0, 2, hipdnn_program>" in t for t in cu), cu
    sgemm = [t for t in cu if "gm_sgemm<" in t]
    assert len(sgemm) == 2 and any("gm_sgemm<128, 128, true, true, 0, " in t for t in sgemm) \
        and any(re.search(r"gm_sgemm<\d+, \d+, false, true, 1, ", t) for t in sgemm), sgemm


@pytest.mark.toolchain
def test_matmul_and_convolution_kernels_compile_with_nvrtc_without_spills(dump_dir):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    headers = gm_headers(dump_dir)
    ptxas = find_ptxas()
    for src in gm_sources(dump_dir, "cu"):
        # the sm_90 kernel's wgmma and setmaxnreg exist only in sm_90a (jit.hip's target there)
        arch = "sm_90a" if src.name.startswith("hipdnn_gm_wgmma") else "sm_90"
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch,
                                   name_expressions=["hipdnn_gemm"])
        assert rc == 0, f"{src.name}: {log}"
        if arch == "sm_90a":
            text = ptx.decode(errors="replace")
            assert "wgmma.mma_async" in text and "cp.async.bulk.tensor" in text, src.name
        if not ptxas:
            continue
        info = run_ptxas(ptxas, arch, ptx, src.with_suffix(".ptx"))
        assert "C7508" not in info, f"{src.name}: setmaxnreg ignored: {info}"
        spills = spill_bytes(info)
        assert spills and all(a == 0 and b == 0 for a, b in spills), f"{src.name}: {info}"
        if src.name.startswith("hipdnn_gm_sgemm"):  # two blocks of 256 threads a multiprocessor
            regs = [int(r) for r in re.findall(r"Used (\d+) registers", info)]
            assert regs and max(regs) <= 128, f"{src.name}: {info}"


@pytest.mark.toolchain
def test_general_matmul_kernels_compile_with_hiprtc_for_gfx90a(dump_dir):
    lib = hiprtc()
    if lib is None:
        pytest.skip("no hiprtc on this machine")
    headers = gm_headers(dump_dir)
    for src in gm_sources(dump_dir, "hip"):
        rc, log, lowered, size = compile_hiprtc(lib, src.read_bytes(), headers, ["hipdnn_gemm"])
        assert rc == 0 and size > 0 and all(lowered), f"{src.name}: {log}"


@pytest.mark.toolchain
def test_mfma_matmul_kernels_compile_with_hiprtc_for_gfx90a(dump_dir):
    # AMD's matrix-core kernel (gm_mfma.h) of each fp16 / bf16 matmul plan, as a ROCm build's
    # hiprtc compiles it: a code object, no warnings (no AMD GPU runs it here)
    lib = hiprtc()
    if lib is None:
        pytest.skip("no hiprtc on this machine")
    headers = gm_headers(dump_dir)
    sources = sorted(dump_dir.glob("hipdnn_gm_mfma_*.hip"))
    assert len(sources) == 2, sources  # the fp16 matmul, the bf16 one with gelu_backward
    for src in sources:
        rc, log, lowered, size = compile_hiprtc(lib, src.read_bytes(), headers, ["hipdnn_gemm"])
        assert rc == 0 and size > 0 and all(lowered), f"{src.name}: {log}"
        assert "warning" not in log, f"{src.name}: {log}"


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ["gfx90a", "gfx940"])
def test_mfma_matmul_kernels_compile_with_hipcc(dump_dir, tmp_path, arch):
    # The same sources through hipcc to assembly (Debian's HIP 5.2 hiprtc aborts on any
    # gfx940 target): hip_runtime.h's integer types in place of hiprtc's prelude's, -Wall
    # -Wextra without a warning, the instruction there (gfx940 names it
    # v_mfma_f32_32x32x8_f16 / _bf16), no scratch (no spills)
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        pytest.skip("no hipcc on this machine")
    for f in dump_dir.glob("*.h"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    for src in sorted(dump_dir.glob("hipdnn_gm_mfma_*.hip")):
        text = "".join(line for line in src.read_text().splitlines(True)
                       if not re.match(r"typedef [\w ]+ u?int\d+_t;$", line))
        dst = tmp_path / src.name
        dst.write_text(text)
        run = subprocess.run([hipcc, "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only",
                              "-O3", "-std=c++17", "-DHIPDNN_HIP_JIT=1", "-include",
                              "hip/hip_runtime.h", "-Wall", "-Wextra", "-S", str(dst), "-o", "-"],
                             capture_output=True, text=True, timeout=600)
        warnings = [l for l in run.stderr.splitlines()  # not the driver's on hipcc's -l, -L
                    if "warning" in l and "[-Wunused-command-line-argument]" not in l]
        assert run.returncode == 0 and not warnings, f"{src.name}: {run.stderr}"
        bf16 = "gm_mfma<2," in text
        op = ("v_mfma_f32_32x32x8bf16_1k" if bf16 else "v_mfma_f32_32x32x8f16") \
            if arch == "gfx90a" else "v_mfma_f32_32x32x8_bf16" if bf16 else "v_mfma_f32_32x32x8_f16"
        assert re.search(rf"\b{op}\b", run.stdout), f"{src.name}: no {op}"
        assert "; ScratchSize: 0" in run.stdout, f"{src.name}: spills"


# ---- attention kernels --------------------------------------------------------------------------

def fa_sources(dump_dir, suffix):
    return sorted(dump_dir.glob(f"hipdnn_fa_*.{suffix}"))


def test_each_attention_plan_writes_its_kernel(dump_dir):
    cu = [p.read_text() for p in fa_sources(dump_dir, "cu")]
    # each plan's kernel (6); every plan's general kernel for hiprtc
    assert len(cu) == 6 and len(fa_sources(dump_dir, "hip")) == 6, sorted(
        p.name for p in dump_dir.iterdir())
    for args in ("1, 64, 64, 4, 64", "2, 128, 128, 4, 64", "1, 128, 128, 8, 64",
                 "2, 256, 256, 4, 32", "1, 80, 48, 4, 64"):
        assert [t for t in cu if f"fa_mma<{args}, true>" in t], (args, cu)  # unmasked tiles
    assert [t for t in cu if "fa_simt<72, 72, 0, 0, 0>" in t], cu


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHS)
def test_attention_kernels_compile_with_nvrtc_without_spills(dump_dir, arch):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    headers = gm_headers(dump_dir)
    ptxas = find_ptxas()
    for src in fa_sources(dump_dir, "cu"):
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch,
                                   name_expressions=["hipdnn_attention"])
        assert rc == 0, f"{src.name} for {arch}: {log}"
        text = ptx.decode(errors="replace")
        if "fa_mma<" in src.read_text():
            assert "mma.sync.aligned.m16n8k16" in text and "ldmatrix" in text, src.name
            assert "cp.async" in text, src.name
        if not ptxas:
            continue
        info = run_ptxas(ptxas, arch, ptx, src.with_suffix(f".{arch}.ptx"))
        spills = spill_bytes(info)
        assert spills and all(a == 0 and b == 0 for a, b in spills), f"{src.name}: {info}"


@pytest.mark.toolchain
def test_general_attention_kernels_compile_with_hiprtc_for_gfx90a(dump_dir):
    lib = hiprtc()
    if lib is None:
        pytest.skip("no hiprtc on this machine")
    headers = gm_headers(dump_dir)
    for src in fa_sources(dump_dir, "hip"):
        rc, log, lowered, size = compile_hiprtc(lib, src.read_bytes(), headers,
                                                ["hipdnn_attention"])
        assert rc == 0 and size > 0 and all(lowered), f"{src.name}: {log}"


# ---- attention backward kernels ----------------------------------------------------------------

def fab_sources(dump_dir, suffix):
    return sorted(dump_dir.glob(f"hipdnn_fab_*.{suffix}"))


def test_each_attention_backward_plan_writes_its_two_kernels(dump_dir):
    cu = [p.read_text() for p in fab_sources(dump_dir, "cu")]
    assert len(cu) == 8 and len(fab_sources(dump_dir, "hip")) == 8, sorted(
        p.name for p in dump_dir.iterdir())
    for part in ("dq", "dkv"):
        for args in ("1, 64, 64, 4, 64", "2, 128, 128, 4, 32"):
            assert [t for t in cu if f"fa_bwd_{part}_mma<{args}>" in t], (part, args)
        assert [t for t in cu if f"fa_bwd_{part}_simt<256, 256, 2, 2, 2, 2>" in t], part
        assert [t for t in cu if f"fa_bwd_{part}_simt<72, 72, 0, 0, 0, 0>" in t], part


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHS)
def test_attention_backward_kernels_compile_with_nvrtc_without_spills(dump_dir, arch):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    headers = gm_headers(dump_dir)
    ptxas = find_ptxas()
    for src in fab_sources(dump_dir, "cu"):
        entry = "hipdnn_attention_dq" if "_dq_" in src.name else "hipdnn_attention_dkv"
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch, name_expressions=[entry])
        assert rc == 0, f"{src.name} for {arch}: {log}"
        if "_mma<" in src.read_text():
            text = ptx.decode(errors="replace")
            assert "mma.sync.aligned.m16n8k16" in text and "ldmatrix" in text, src.name
            assert "cp.async" in text, src.name
        if not ptxas:
            continue
        info = run_ptxas(ptxas, arch, ptx, src.with_suffix(f".{arch}.ptx"))
        spills = spill_bytes(info)
        assert spills and all(a == 0 and b == 0 for a, b in spills), f"{src.name}: {info}"


@pytest.mark.toolchain
def test_general_attention_backward_kernels_compile_with_hiprtc_for_gfx90a(dump_dir):
    lib = hiprtc()
    if lib is None:
        pytest.skip("no hiprtc on this machine")
    headers = gm_headers(dump_dir)
    for src in fab_sources(dump_dir, "hip"):
        entry = "hipdnn_attention_dq" if "_dq_" in src.name else "hipdnn_attention_dkv"
        rc, log, lowered, size = compile_hiprtc(lib, src.read_bytes(), headers, [entry])
        assert rc == 0 and size > 0 and all(lowered), f"{src.name}: {log}"


# ---- attention decode kernels ------------------------------------------------------------------

def fd_sources(dump_dir, part):
    return sorted(dump_dir.glob(f"hipdnn_fd_{part}_*.cu"))


def test_each_decode_plan_writes_its_split_and_combine_kernels(dump_dir):
    split = [p.read_text() for p in fd_sources(dump_dir, "split")]
    combine = [p.read_text() for p in fd_sources(dump_dir, "combine")]
    # the first plan takes one range on the emulation's single multiprocessor: no combine
    assert len(split) == 4 and len(combine) == 3, sorted(p.name for p in dump_dir.iterdir())
    for args in ("2, 128, 128, 1, 64", "1, 64, 64, 2, 64", "2, 128, 128, 4, 64",
                 "2, 256, 256, 1, 32"):
        assert [t for t in split if f"fd_split_mma<{args}>" in t], (args, split)
    for dv in (64, 128, 256):
        assert [t for t in combine if f"fd_combine<{dv}>" in t], (dv, combine)


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHS)
def test_decode_kernels_compile_with_nvrtc_without_spills(dump_dir, arch):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    headers = gm_headers(dump_dir)
    ptxas = find_ptxas()
    for src in fd_sources(dump_dir, "split") + fd_sources(dump_dir, "combine"):
        entry = "hipdnn_attention_split" if "_split_" in src.name else "hipdnn_attention_combine"
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch, name_expressions=[entry])
        assert rc == 0, f"{src.name} for {arch}: {log}"
        if "_split_" in src.name:
            text = ptx.decode(errors="replace")
            assert "mma.sync.aligned.m16n8k16" in text and "ldmatrix" in text, src.name
            assert "cp.async" in text, src.name
        if not ptxas:
            continue
        info = run_ptxas(ptxas, arch, ptx, src.with_suffix(f".{arch}.ptx"))
        spills = spill_bytes(info)
        assert spills and all(a == 0 and b == 0 for a, b in spills), f"{src.name}: {info}"


# ---- the row-wise and pooling kernels: every one the engine can ask for ----------------------

HEADERS = ("pw_program.h", "pw_exec.h", "rw_program.h", "rw_exec.h", "rw_exec_reduce.h",
           "rw_exec_softmax.h", "rw_exec_norm.h", "rw_exec_norm_bwd.h", "rw_kernels.h",
           "rs_program.h", "rs_exec.h", "rs_kernels.h")
HIPRTC_OPTIONS = ["--offload-arch=gfx90a", "-std=c++17", "-O3", "-DHIPDNN_HIP_JIT=1"]  # jit.hip's


@pytest.fixture(scope="module")
def kernels(dump_dir):
    """{"rw": [names], "rs": [names]} of kernels.txt, and the family files' folder."""
    lines = (dump_dir / "kernels.txt").read_text().splitlines()
    assert not [l for l in lines if l.startswith("#")], [l for l in lines if l.startswith("#")]
    out = {}
    for line in lines:
        family, name = line.split(" ", 1)
        out.setdefault(family, []).append(name)
    return out


def one_per_template(names):
    firsts = {}
    for n in names:
        firsts.setdefault(n.split("<")[0], n)
    return list(firsts.values())


def family_sources(dump_dir, suffix):
    headers = {n: (dump_dir / n).read_bytes() for n in HEADERS}
    return {f: (dump_dir / f"hipdnn_{f}.{suffix}").read_bytes() for f in ("rw", "rs")}, headers


def test_the_kernel_list_is_what_the_choice_can_name_and_the_emulation_runs_each(kernels):
    # kernels.txt comes from running kernel_names.c over every value of what it reads; the
    # emulated plugin marks a kernel it cannot run ("# not emulated"): none
    rw, rs = kernels["rw"], kernels["rs"]
    assert len(rw) == len(set(rw)) == 120 and len(rs) == len(set(rs)) == 6, (len(rw), len(rs))
    assert {n.split("<")[0] for n in rw} == {
        "rw_reduce_rows", "rw_reduce_cols", "rw_softmax", "rw_norm", "rw_norm_bwd",
        "rw_norm_bwd_packed", "rw_norm_packed"}
    assert sorted(rs) == [f"rs_{d}_kernel<{n}>" for d in ("backward", "forward") for n in (1, 2, 3)]
    assert "rw_norm_packed<4, 2, 32, true, 2>" in rw and "rw_norm<1, 8, -1>" in rw
    # a norm backward's epilogue (dx + a residual): the general way, 0 to 2 vectors a thread
    assert sorted(n for n in rw if n.startswith("rw_norm_bwd<") and n.endswith(", 8>")) == [
        f"rw_norm_bwd<{v}, -1, 8>" for v in (0, 1, 2)], rw


def nvrtc_compiles(lib, dump_dir, kernels, pick, programs, extra=()):
    sources, headers = family_sources(dump_dir, "cu")
    started = time.monotonic()
    for family, names in kernels.items():
        names = pick(names)
        k = programs if family == "rw" else 1
        for part in (names[i::k] for i in range(k)):  # a few programs, many kernels each
            rc, log, ptx = compile_ptx(lib, sources[family], headers, "compute_90", part, extra)
            assert rc == 0 and ptx is not None and (ptx or extra), f"{family} {part[:3]}...: {log}"
    return time.monotonic() - started


@pytest.mark.toolchain
def test_one_kernel_of_each_template_compiles_with_nvrtc(dump_dir, kernels):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    nvrtc_compiles(lib, dump_dir, kernels, one_per_template, 1)


# Each of the two every-kernel tests in halves (every other kernel), so that xdist's workers
# share them: whole, the two landed on one worker and held make test-slow at 300 s.
HALVES = [0, 1]
# NVRTC's front end (templates instantiated, every static_assert and type checked) takes
# about 1 s for every kernel; NVVM's code generation took 240 CPU-s here, for code that
# one_per_template above already takes through NVVM and ptxas per template.  So CI checks
# every instantiation in the front end; tools/gpu_check.sh (16 cores) sets
# HIPDNN_TEST_NVRTC_FULL=1 and generates every kernel's PTX.
FRONT_END_ONLY = [] if os.environ.get("HIPDNN_TEST_NVRTC_FULL") == "1" else ["-fdevice-syntax-only"]


@pytest.mark.slow
@pytest.mark.parametrize("half", HALVES)
def test_every_row_wise_and_pooling_kernel_compiles_with_nvrtc(dump_dir, kernels, half):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    seconds = nvrtc_compiles(lib, dump_dir, kernels, lambda names: names[half::2], 2,
                             FRONT_END_ONLY)
    print(f"half {half} of {sum(map(len, kernels.values()))} kernels compiled by NVRTC "
          f"({'front end' if FRONT_END_ONLY else 'PTX'}) in {seconds:.0f} s")


def hiprtc():
    """libhiprtc.so (ROCm 6), or libamdhip64.so, which holds hiprtc in HIP 5: as jit.hip
    opens it."""
    for name in ("libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so", "libamdhip64.so.6",
                 "libamdhip64.so.5"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        if hasattr(lib, "hiprtcCreateProgram"):
            return lib
    return None


def compile_hiprtc(lib, source, headers, name_expressions, options=None):
    prog = ctypes.c_void_p()
    names = [n.encode() for n in headers]
    arr = ctypes.c_char_p * len(names)
    assert lib.hiprtcCreateProgram(ctypes.byref(prog), source, b"hipdnn_kernels.cu", len(names),
                                   arr(*[headers[n] for n in headers]), arr(*names)) == 0
    for expr in name_expressions:
        assert lib.hiprtcAddNameExpression(prog, expr.encode()) == 0, expr
    opts = [o.encode() for o in (options or HIPRTC_OPTIONS)]
    rc = lib.hiprtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t()
    lib.hiprtcGetProgramLogSize(prog, ctypes.byref(n))
    log = ctypes.create_string_buffer(max(n.value, 1))
    lib.hiprtcGetProgramLog(prog, log)
    lowered = []
    size = 0
    if rc == 0:
        for expr in name_expressions:
            low = ctypes.c_char_p()
            assert lib.hiprtcGetLoweredName(prog, expr.encode(), ctypes.byref(low)) == 0, expr
            lowered.append(low.value)
        lib.hiprtcGetCodeSize(prog, ctypes.byref(n))
        size = n.value
    lib.hiprtcDestroyProgram(ctypes.byref(prog))
    return rc, log.value.decode("utf-8", "replace"), lowered, size


def hiprtc_compiles(lib, dump_dir, kernels, pick, programs):
    sources, headers = family_sources(dump_dir, "hip")
    started = time.monotonic()
    for family, names in kernels.items():
        names = pick(names)
        k = programs if family == "rw" else 1
        for part in (names[i::k] for i in range(k)):
            rc, log, lowered, size = compile_hiprtc(lib, sources[family], headers, part)
            assert rc == 0 and size > 0, f"{family} kernels {part[:3]}...: {log}"
            assert all(lowered), part
    return time.monotonic() - started


@pytest.mark.toolchain
def test_one_kernel_of_each_template_compiles_with_hiprtc_for_gfx90a(dump_dir, kernels):
    # a code object for gfx90a, no GPU needed; 12 s on two cores (25 s when busy)
    lib = hiprtc()
    if lib is None:
        pytest.skip("no hiprtc on this machine")
    hiprtc_compiles(lib, dump_dir, kernels, one_per_template, 1)


@pytest.mark.slow
@pytest.mark.parametrize("half", HALVES)
def test_every_row_wise_and_pooling_kernel_compiles_with_hiprtc_for_gfx90a(dump_dir, kernels,
                                                                           half):
    lib = hiprtc()
    if lib is None:
        pytest.skip("no hiprtc on this machine")
    # 140 s whole
    seconds = hiprtc_compiles(lib, dump_dir, kernels, lambda names: names[half::2], 2)
    print(f"half {half} of {sum(map(len, kernels.values()))} kernels compiled by hiprtc in "
          f"{seconds:.0f} s")
