/* test_gemm_choice.c — the sm_90 matmul kernel's tile and split-k choice (plugins/hip/
 * gemm_choice.c, gemm_split.c) on an sm_90a target of 132 multiprocessors (an H200),
 * which no machine without one can reach through the engine: fp16 / bf16 matmuls of at
 * most 64 rows (an LLM's decode) take the 64-row tile, its width and k ranges from the
 * model; knob TILE_M (and $HIPDNN_HIP_WGMMA_BM) forces or forbids it; TILE_N picks its
 * width, 256 taking 128 rows; the declines name the knob; larger products keep the
 * 128-row tiles as before; forward convolutions and data gradients split k only when
 * asked. */
#include "check.h"
#include "../../plugins/hip/gemm_choice.c"
#include "../../plugins/hip/gemm_split.c"

/* The target and device the choice asks about: an sm_90 GPU of 132 multiprocessors. */
const char* hipe_vendor(void) { return "CUDA"; }

bool hipe_rtc_target_of(int device, hipe_rtc_target* t, char* why, size_t len) {
    (void)device;
    (void)why;
    (void)len;
    memset(t, 0, sizeof(*t));
    snprintf(t->arch, sizeof(t->arch), "sm_90a");
    return true;
}

bool hipe_sm_count(int device, int* count, char* why, size_t len) {
    (void)device;
    (void)why;
    (void)len;
    *count = 132;
    return true;
}

typedef struct {
    int ok;             /* hipe_gm_choose's answer */
    char why[512];      /* ... its reason where 0 */
    hipe_gm_kernel k;   /* the sm_90 kernel planned */
    int splits;         /* its k ranges */
} choice;

/* The plan of a batches x m x n x k matmul of `dt` (a [m, k] and b [k, n] row-major,
 * k contiguous in a, n in b; or b [n, k] with bk) under these knobs. */
static choice choose(int64_t batches, int64_t m, int64_t n, int64_t k, int dt, bool bk,
                     hipe_knobs knobs) {
    choice c;
    memset(&c, 0, sizeof(c));
    hipe_gm gm;
    memset(&gm, 0, sizeof(gm));
    gm_program* p = &gm.prog;
    p->batches = batches;
    p->m = m;
    p->n = n;
    p->k = k;
    p->a_dtype = p->b_dtype = dt;
    p->a_sk = 1;
    p->a_sm = k;
    p->b_sn = bk ? k : 1;
    p->b_sk = bk ? 1 : n;
    c.ok = hipe_gm_choose(&gm, true, false, &knobs, "node 'mm' (matmul)", c.why, sizeof(c.why));
    if (!c.ok) return c;
    gm.max_splits = hipe_gm_reserve_splits(p, knobs.split_k);
    if (!CHECK(hipe_gm_wgmma_kernel(&gm, 0, &c.k))) return c;
    gm.main = c.k;
    p->tiles_m = (int32_t)((m + c.k.bm - 1) / c.k.bm);
    p->tiles_n = (int32_t)((n + c.k.bn - 1) / c.k.bn);
    hipe_gm_plan_splits(&gm, 0);
    c.splits = p->splits;
    return c;
}

static const hipe_knobs k_none = {0};

static void test_decode_shapes_take_the_64_row_tile(void) {
    /* 16 x 4096 x 4096: 32 tiles of 64 x 128 in 4 ranges, 128 units for 132 blocks */
    choice c = choose(1, 16, 4096, 4096, PW_BF16, true, k_none);
    CHECK_EQ_INT(c.k.bm, 64);
    CHECK_EQ_INT(c.k.bn, 128);
    CHECK_EQ_INT(c.k.stages, 6);
    CHECK(c.k.persistent && c.k.grid == 132);
    CHECK_EQ_INT(c.splits, 4);
    for (int m = 1; m <= 64; m += 21) { /* 1, 22, 43, 64 */
        c = choose(1, m, 4096, 4096, PW_F16, false, k_none);
        CHECK_MSG(c.k.bm == 64, "m %d: %d rows", m, c.k.bm);
    }
    /* few columns: the narrow tile, k split as far as 4 steps a range */
    c = choose(1, 16, 256, 4096, PW_F16, true, k_none);
    CHECK(c.k.bm == 64 && c.k.bn == 64 && c.k.stages == 8);
    CHECK_EQ_INT(c.splits, 16);
    /* many: no split */
    c = choose(1, 16, 128256, 4096, PW_BF16, true, k_none);
    CHECK(c.k.bm == 64 && c.splits == 1);
    /* m counts per batch */
    c = choose(8, 16, 1024, 1024, PW_BF16, false, k_none);
    CHECK_EQ_INT(c.k.bm, 64);
}

static void test_larger_products_keep_128_rows(void) {
    choice c = choose(1, 65, 4096, 4096, PW_BF16, true, k_none);
    CHECK(c.k.bm == 128 && c.k.bn == 64 && c.splits == 2); /* as before the 64-row tile */
    c = choose(1, 4096, 4096, 4096, PW_BF16, true, k_none);
    CHECK(c.k.bm == 128 && c.k.bn == 256 && !c.k.persistent && c.splits == 1);
}

static void test_knobs_force_and_forbid_the_64_row_tile(void) {
    hipe_knobs kn = k_none;
    kn.tile_m = 128;
    choice c = choose(1, 16, 4096, 4096, PW_BF16, true, kn);
    CHECK_EQ_INT(c.k.bm, 128);
    kn.tile_m = 64;
    c = choose(1, 200, 4096, 4096, PW_BF16, true, kn);
    CHECK(c.k.bm == 64 && c.k.bn == 128);
    kn.tile_m = 0;
    kn.tile_n = 64;
    c = choose(1, 16, 4096, 4096, PW_BF16, true, kn);
    CHECK(c.k.bm == 64 && c.k.bn == 64 && c.k.stages == 8);
    kn.tile_n = 256; /* only 128 rows are 256 wide */
    c = choose(1, 16, 4096, 4096, PW_BF16, true, kn);
    CHECK(c.k.bm == 128 && c.k.bn == 256);
    kn.tile_n = 0;
    kn.split_k = 8;
    c = choose(1, 16, 4096, 4096, PW_BF16, true, kn);
    CHECK(c.k.bm == 64 && c.splits == 8);
    setenv("HIPDNN_HIP_WGMMA_BM", "128", 1);
    c = choose(1, 16, 4096, 4096, PW_BF16, true, k_none);
    CHECK_EQ_INT(c.k.bm, 128);
    kn = k_none;
    kn.tile_m = 64; /* the knob comes first */
    c = choose(1, 16, 4096, 4096, PW_BF16, true, kn);
    CHECK_EQ_INT(c.k.bm, 64);
    unsetenv("HIPDNN_HIP_WGMMA_BM");
}

static void test_the_tile_m_knob_declines_with_the_reason(void) {
    hipe_knobs kn = k_none;
    kn.tile_m = 64;
    kn.tile_n = 256;
    choice c = choose(1, 16, 4096, 4096, PW_BF16, true, kn);
    CHECK(!c.ok);
    CHECK_STR_CONTAINS(c.why, "node 'mm' (matmul): knob TILE_M = 64 with TILE_N = 256: the "
                              "sm_90 kernel's 64-row tile is 64 or 128 wide");
    kn.tile_n = 0;
    kn.tf32 = 1; /* fp32 read as TF32 keeps 128 rows */
    c = choose(1, 16, 512, 512, PW_F32, true, kn);
    CHECK(!c.ok);
    CHECK_STR_CONTAINS(c.why, "knob TILE_M = 64 asks for the sm_90 kernel's 64-row tile, "
                              "which runs fp16 / bf16 matmuls only (a TF32 matmul keeps 128 rows");
}

/* The k ranges hipe_gm_plan_splits gives the sm_90 kernel's 128 x 256 tile for a product
 * of `conv` kind (GM_CONV_*) under SPLIT_K knob `want`. */
static int planned_splits(int conv, int64_t m, int64_t n, int64_t k, int want) {
    hipe_gm gm;
    memset(&gm, 0, sizeof(gm));
    gm_program* p = &gm.prog;
    p->conv = conv;
    p->batches = 1;
    p->m = m;
    p->n = n;
    p->k = k;
    gm.main.kind = GM_WGMMA;
    gm.main.bm = 128;
    gm.main.bn = 256;
    p->tiles_m = (int32_t)((m + 127) / 128);
    p->tiles_n = (int32_t)((n + 255) / 256);
    gm.knobs.split_k = want;
    gm.max_splits = 64;
    hipe_gm_plan_splits(&gm, 0);
    return p->splits;
}

static void test_gathered_convolutions_split_only_when_asked(void) {
    /* ResNet-50's 256 x 14 x 14 3x3 layer at N 64 as the product: m 12544, n 256, k 2304.
     * As a matmul the model splits it (98 tiles for 132 multiprocessors); as a forward
     * convolution or a data gradient (a gathered) it stays whole, as the H200 measured */
    CHECK(planned_splits(GM_CONV_NONE, 12544, 256, 2304, 0) > 1);
    CHECK_EQ_INT(planned_splits(GM_CONV_FPROP, 12544, 256, 2304, 0), 1);
    CHECK_EQ_INT(planned_splits(GM_CONV_DGRAD, 12544, 256, 2304, 0), 1);
    CHECK_EQ_INT(planned_splits(GM_CONV_FPROP, 12544, 256, 2304, 3), 3); /* the knob */
    setenv("HIPDNN_HIP_SPLIT_K", "2", 1);
    CHECK_EQ_INT(planned_splits(GM_CONV_DGRAD, 12544, 256, 2304, 0), 2);
    unsetenv("HIPDNN_HIP_SPLIT_K");
    /* a weight gradient (k the batch's positions) still splits */
    CHECK(planned_splits(GM_CONV_WGRAD, 256, 2304, 12544, 0) > 1);
}

int main(void) {
    unsetenv("HIPDNN_HIP_WGMMA_BN");
    unsetenv("HIPDNN_HIP_WGMMA_BM");
    unsetenv("HIPDNN_HIP_SPLIT_K");
    RUN_TEST(test_decode_shapes_take_the_64_row_tile);
    RUN_TEST(test_larger_products_keep_128_rows);
    RUN_TEST(test_knobs_force_and_forbid_the_64_row_tile);
    RUN_TEST(test_the_tile_m_knob_declines_with_the_reason);
    RUN_TEST(test_gathered_convolutions_split_only_when_asked);
    return check_finish();
}
