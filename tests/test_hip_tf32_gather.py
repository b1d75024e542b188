"""The sm_90 TF32 kernel's element gather (gm_wg_tf32_conv: NCHW x, or KCRS w) works out an
element's address by additions: its row's corner and the taps inside x once a tile (a mask
of bits, or coordinates where the filter's sizes add up to over 31), the stage's field
elements stepped 32 at a time by mixed-radix addition.  Its numerics need an sm_90 GPU
(tests/test_gpu_tf32.py) and the host emulation never runs it, so this compiles those
helpers (gm_kernels.h) for the host with the C++ compiler and holds every element they
give, over many geometries (1 to 3 spatial dims, strides, dilations, padding, true
convolutions, both orders of k, strided x, rows and k past the matrix), against
gm_conv_a_offset's decomposition by division, the one every other kernel's gather is
checked against."""
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.toolchain

HARNESS = r"""
#include <stdio.h>
#include <stdlib.h>
#include "emulate.h"
#include "gm_exec.h"
namespace {
struct dim1 { unsigned int x; };
dim1 blockIdx, threadIdx;
inline void __syncthreads() {}
}
#define __shared__ static
#include "gm_kernels.h"

static uint64_t rng = 88172645463325252ull;
static int64_t pick(int64_t lo, int64_t hi) {  // xorshift, inclusive
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return lo + (int64_t)(rng % (uint64_t)(hi - lo + 1));
}

// A random forward convolution's program, as gemm_program.c fills one (the fields the
// gather reads); x NCHW, or with its dims' strides padded.
static gm_program geometry() {
    gm_program g;
    memset(&g, 0, sizeof g);
    g.conv = GM_CONV_FPROP;
    g.nsp = (int32_t)pick(1, 3);
    g.flip = (int32_t)pick(0, 1);
    g.taps_inner = (int32_t)pick(0, 1);
    g.cin = pick(1, 9);
    const bool wide = pick(0, 3) == 0;  // filters whose sizes add up to over 31
    int64_t positions = 1, taps = 1, span = 1;
    for (int d = GM_MAX_SPATIAL - 1; d >= 0; --d) {
        if (d >= g.nsp) { g.xsp[d] = g.osp[d] = g.ker[d] = g.stride[d] = g.dil[d] = 1; continue; }
        g.ker[d] = wide && d == 0 ? pick(32, 40) : pick(1, g.nsp == 1 ? 12 : 5);
        g.dil[d] = pick(1, 2);
        g.stride[d] = pick(1, 3);
        g.pad[d] = pick(0, 3);
        g.xsp[d] = pick(1, 9) + (g.ker[d] - 1) * g.dil[d];
        const int64_t field = (g.ker[d] - 1) * g.dil[d] + 1;
        g.osp[d] = (g.xsp[d] + 2 * g.pad[d] - field) / g.stride[d] + 1;
        g.x_ssp[d] = span;
        span *= g.xsp[d] + pick(0, 2);
        positions *= g.osp[d];
        taps *= g.ker[d];
    }
    g.x_sc = span;
    g.x_sn = span * g.cin + pick(0, 5);
    g.m = pick(1, 3) * positions;
    g.k = g.cin * taps;
    return g;
}

int main() {
    long long checked = 0, masked = 0;
    for (int trial = 0; trial < 400; ++trial) {
        const gm_program g = geometry();
        uint32_t at[GM_MAX_SPATIAL];
        const bool mask = gm_conv_tap_bits(g, at);
        masked += mask;
        GmConvCol step;
        gm_conv_col_init(g, 32, step);
        const int64_t tiles = (g.m + 127) / 128 + 1;  // one tile past the last row
        for (int64_t tm = 0; tm < tiles; ++tm) {
            const int kt0 = (int)pick(0, (int)((g.k + 31) / 32));  // a split-k range's start
            const int kt1 = kt0 + (int)pick(1, 4);
            for (int tid = 0; tid < 128; tid += (int)pick(1, 9)) {
                const int64_t m = tm * 128 + tid;
                GmConvRows<1> row;
                gm_conv_row<GM_CONV_FPROP>(g, m, true, 0, row);
                const uint32_t bad = mask ? gm_conv_row_bad(g, row, at) : 0u;
                for (int lane = 0; lane < 32; ++lane) {
                    GmConvCol col;
                    gm_conv_col_init(g, (uint32_t)(kt0 * 32 + lane), col);
                    for (int kt = kt0; kt < kt1; ++kt) {
                        GmTapEntry e;
                        if (mask) gm_conv_tap_entry<true>(g, col, at, e);
                        else gm_conv_tap_entry<false>(g, col, at, e);
                        gm_conv_col_add(g, col, step);
                        const bool ok = mask ? gm_conv_tap_ok<true>(g, row, bad, e)
                                             : gm_conv_tap_ok<false>(g, row, bad, e);
                        const int64_t k = (int64_t)kt * 32 + lane;
                        int64_t want = 0;
                        const bool want_ok = gm_conv_a_offset(g, m, k, &want);
                        const int64_t got = row.base[0] + e.off;
                        if (ok != want_ok || (ok && got != want)) {
                            printf("trial %d m %lld k %lld: ok %d (%d), offset %lld (%lld)\n",
                                   trial, (long long)m, (long long)k, ok, want_ok,
                                   (long long)got, (long long)want);
                            return 1;
                        }
                        ++checked;
                    }
                }
            }
        }
    }
    printf("%lld %lld\n", checked, masked);
    return 0;
}
"""


def test_the_element_gather_addresses_every_element_as_gm_conv_a_offset(tmp_path):
    cxx = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    src = tmp_path / "gather.cpp"
    src.write_text(HARNESS)
    exe = tmp_path / "gather"
    subprocess.run([cxx, "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror",
                    "-Wno-unused-function", "-Wno-unused-variable",
                    f"-I{REPO / 'plugins' / 'hip'}", f"-I{REPO / 'csrc' / 'include'}",
                    str(src), "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    checked, masked = (int(v) for v in out.stdout.split())
    # both ways of telling the taps inside x ran, over many elements each
    assert checked > 100000 and 100 < masked < 400, out.stdout
