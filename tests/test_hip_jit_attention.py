"""The tensor-core attention forward (fa_kernels.h's fa_mma) as an sm_90 GPU would compile
it, on any machine with NVRTC and ptxas (test_hip_jit.py's way): planned on the host
emulation with HIPDNN_HIP_JIT_DUMP set, each kernel compiles without spills and within
its register bound, and the key loop's unmasked body exists and is short.

No disassembler ships with the toolkit here, so the cubin's SASS is read directly: 16-byte
instructions, the opcode in the low 12 bits (HMMA 0x23c, BRA 0x947, EXIT 0x94d, LDGSTS
0xfae) and a branch's target in 4-byte units, its low byte at bit 16 and the rest, signed,
from bit 34 (checked against nvcc's loops).  A steady iteration of the key loop is the
cheapest cycle of basic blocks through every HMMA and a whole tile's cp.async copies; its
length per HMMA is what Nsight Compute's instructions per mma.sync come to on the GPU
(about 13 before the unmasked body: issue-bound at 111 TFLOP/s, FA2 about 4)."""
import heapq
import re
import struct
import textwrap

import pytest

from test_hip_jit import (ARCHS, compile_ptx, dump_kernels, find_ptxas, gm_headers, nvrtc,
                          run_ptxas, spill_bytes)

GRAPH = textwrap.dedent('''
    import os
    import hipdnn
    hipdnn.set_engine_plugin_paths([{emulated!r}])
    dt = hipdnn.data_type

    def attn(io, d, dv, b, sq, causal):
        g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT)
        q = g.tensor(name="q", dim=[b, 4, sq, d]); k = g.tensor(name="k", dim=[b, 2, 70, d])
        v = g.tensor(name="v", dim=[b, 2, 70, dv])
        o, st = g.sdpa(q, k, v, attn_scale=0.125, use_causal_mask=causal, generate_stats=True)
        o.set_output(True); st.set_output(True).set_data_type(dt.FLOAT)
        g.set_preferred_engine("hip_emulated")
        g.build([hipdnn.heur_mode.A])
        assert g.get_engine_name(0) == "hip_emulated"

    attn(dt.BFLOAT16, 128, 128, 64, 300, False)  # 8 warps (the benchmark's kernel)
    attn(dt.HALF, 64, 64, 2, 40, True)            # 4 warps
    attn(dt.BFLOAT16, 256, 256, 2, 40, False)     # 32-key tiles
    attn(dt.HALF, 80, 48, 2, 40, True)            # rows of 10 and 6 pieces: checked copies
    os.environ["HIPDNN_HIP_FA_FAST"] = "0"        # every tile masked: the comparison kernel
    attn(dt.BFLOAT16, 128, 128, 64, 300, True)
''')

# (template arguments, registers at most on sm_90 / sm_80, instructions per HMMA at most
# in a steady sm_90 iteration or None, cp.async copies a tile); measured: 239, 183, 250,
# and 4.00, 6.42, 3.68 (before the unmasked body: 10.1, 15.7, 9.5; masked only 5.8)
KERNELS = {"2, 128, 128, 8, 64, true": (244, 4.6, 8), "1, 64, 64, 4, 64, true": (196, 7.0, 8),
           "2, 256, 256, 4, 32, true": (255, 4.8, 16), "1, 80, 48, 4, 64, true": (255, None, 8),
           "2, 128, 128, 8, 64, false": (255, None, 8)}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    out = dump_kernels(tmp_path_factory, "jit_attention", GRAPH)
    found = {}
    for src in sorted(out.glob("hipdnn_fa_mma_*.cu")):
        args = re.search(r"fa_mma<([^>]*)>", src.read_text()).group(1)
        found[args] = src
    assert sorted(found) == sorted(KERNELS), sorted(found)
    return out, found


def text_section(cubin):
    """The instructions (two 64-bit words each) of the cubin's one kernel."""
    data = cubin.read_bytes()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    size, count, names = struct.unpack_from("<HHH", data, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * size) for i in range(count)]
    texts = [s for s in secs
             if data[secs[names][4] + s[0]:].split(b"\0")[0].startswith(b".text.")]
    assert len(texts) == 1
    code = data[texts[0][4]:texts[0][4] + texts[0][5]]
    return [struct.unpack_from("<QQ", code, i) for i in range(0, len(code), 16)]


def steady_iteration(ins, copies):
    """(instructions, HMMAs) of the cheapest cycle through every HMMA block that also
    issues a whole tile's cp.async copies: the unmasked body where there is one."""
    op = [w0 & 0xfff for w0, _ in ins]
    jumps = {}
    for i, (w0, w1) in enumerate(ins):
        if op[i] == 0x947:
            hi = ((w0 | w1 << 64) >> 34) & ((1 << 48) - 1)
            units = ((w0 >> 16) & 0xff) | ((hi - (1 << 48) if hi >> 47 else hi) << 8)
            jumps[i] = (i + 1 + units // 4, (w0 >> 12) & 0xf == 7)  # target, unconditional
    starts = sorted({0} | {t for t, _ in jumps.values()} | {i + 1 for i in jumps} |
                    {i + 1 for i, o in enumerate(op) if o == 0x94d})
    starts = [s for s in starts if s < len(ins)]
    ends = starts[1:] + [len(ins)]
    at = {s: k for k, s in enumerate(starts)}
    succ = []
    for s, e in zip(starts, ends):
        t, always = jumps.get(e - 1, (None, False))
        last_exit = op[e - 1] == 0x94d and (ins[e - 1][0] >> 12) & 0xf == 7
        succ.append([at[x] for x in (t, None if always or last_exit else e) if x in at])
    size = [e - s for s, e in zip(starts, ends)]
    count = [lambda k, o=o: sum(op[x] == o for x in range(starts[k], ends[k]))
             for o in (0x23c, 0xfae)]  # HMMA, LDGSTS
    mma = [k for k in range(len(starts)) if count[0](k)]
    bit = {k: 1 << n for n, k in enumerate(mma)}
    first, every = mma[0], (1 << len(mma)) - 1
    seen, queue = set(), [(size[first], first, bit[first], min(copies, count[1](first)))]
    while queue:
        cost, k, got, cp = heapq.heappop(queue)
        if (k, got, cp) in seen:
            continue
        seen.add((k, got, cp))
        for n in succ[k]:
            if n == first and got == every and cp == copies:
                return cost, sum(count[0](b) for b in mma)
            if n != first:
                heapq.heappush(queue, (cost + size[n], n, got | bit.get(n, 0),
                                       min(copies, cp + count[1](n))))
    raise AssertionError("no steady iteration found: has the SASS encoding changed?")


@pytest.mark.toolchain
@pytest.mark.parametrize("arch", ARCHS)
def test_fa_mma_compiles_within_its_registers_with_a_short_unmasked_loop(sources, arch, tmp_path):
    lib, ptxas = nvrtc(), find_ptxas()
    if lib is None or ptxas is None:
        pytest.skip("no NVRTC or ptxas on this machine")
    out, found = sources
    headers = gm_headers(out)
    ex2, steady = {}, {}
    for args, src in found.items():
        rc, log, ptx = compile_ptx(lib, src.read_bytes(), headers, arch,
                                   name_expressions=["hipdnn_attention"])
        assert rc == 0, f"{args} for {arch}: {log}"
        ex2[args] = ptx.decode().count("ex2.approx.ftz.f32")
        ptx_file = tmp_path / f"{src.stem}.ptx"
        info = run_ptxas(ptxas, arch, ptx, ptx_file)
        assert all(a == 0 and b == 0 for a, b in spill_bytes(info)), f"{args}: {info}"
        regs = int(re.search(r"Used (\d+) registers", info).group(1))
        bound, per_mma, copies = KERNELS[args]
        assert regs <= bound, f"{args} for {arch}: {regs} registers"
        if arch == "sm_90":
            cost, mma = steady_iteration(text_section(ptx_file.with_suffix(".cubin")), copies)
            steady[args] = cost / mma
            assert per_mma is None or cost / mma <= per_mma, f"{args}: {cost} for {mma} HMMA"
    # the unmasked body is a second softmax: its ex2s, absent from the masked-only kernel
    fast, masked = "2, 128, 128, 8, 64, true", "2, 128, 128, 8, 64, false"
    assert ex2[fast] >= ex2[masked] + 32, ex2
    if steady:
        assert steady[masked] > 1.3 * steady[fast], steady
