"""The kernels the HIP engine compiles at run time (NVRTC) for each plan, checked on any
machine with NVRTC, GPU or not: graphs are planned on the engine's host emulation with
HIPDNN_HIP_JIT_DUMP set, which writes each plan's kernel source with the headers it
includes, and each is compiled here as plugins/hip/jit.hip compiles it (same options), for
sm_80 and sm_90; ptxas then reports its registers and spills, which must stay small.

The emulation runs the same per-instruction code (pw_exec.h) the generated kernels call
with constants, so its numeric tests cover these kernels' arithmetic too."""
import ctypes
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
JIT_OPTIONS = ["--std=c++17", "-DHIPDNN_HIP_JIT=1"]  # as jit.hip's compile()

GRAPHS = textwrap.dedent('''
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


def compile_ptx(lib, source, headers, arch):
    prog = ctypes.c_void_p()
    names = [n.encode() for n in headers]
    texts = [headers[n] for n in headers]
    arr = ctypes.c_char_p * len(names)
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source, b"hipdnn_pw_fused.cu",
                                  len(names), arr(*texts), arr(*names)) == 0
    opts = [f"--gpu-architecture={arch}".encode()] + [o.encode() for o in JIT_OPTIONS]
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


@pytest.fixture(scope="module")
def dumped(tmp_path_factory):
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    out = tmp_path_factory.mktemp("jit")
    env = dict(os.environ, HIPDNN_HIP_JIT_DUMP=str(out),
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("HIPDNN_PLUGIN_DIR", None)
    proc = subprocess.run([sys.executable, "-c", GRAPHS.format(emulated=str(EMULATED))],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
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


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_generated_kernels_compile_with_nvrtc_without_spills(dumped, arch):
    lib = nvrtc()
    if lib is None:
        pytest.skip("no NVRTC on this machine")
    sources, headers = dumped
    ptxas = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas"
                                      if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
    for src in sources:
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch)
        assert rc == 0, f"{src.name} for {arch}: {log}"
        if not ptxas:
            continue
        ptx_file = src.with_suffix(f".{arch}.ptx")
        ptx_file.write_bytes(ptx)
        info = subprocess.run([ptxas, f"-arch={arch}", "-v", str(ptx_file), "-o",
                               str(ptx_file.with_suffix(".cubin"))],
                              capture_output=True, text=True, timeout=120)
        assert info.returncode == 0, info.stderr
        spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", info.stderr)
        regs = [int(r) for r in re.findall(r"Used (\d+) registers", info.stderr)]
        # a few bytes may go to a math routine's call frame (tanhf on sm_80); the
        # register arrays never do
        assert spills and all(int(a) <= 16 and int(b) <= 16 for a, b in spills), \
            f"{src.name}: {info.stderr}"
        assert regs and max(regs) <= 128, f"{src.name}: {regs} registers"
