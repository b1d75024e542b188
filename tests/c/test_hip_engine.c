/* test_hip_engine.c — the HIP engine through the backend C API, on device memory:
 * y = relu(a * b + c) over mixed storage types (a fp32, b fp16, c bf16 broadcast per
 * column, y bf16), checked against a float64 reference computed here, with the output
 * poisoned first and the inputs checked unchanged; a runtime by-value scalar; execution on
 * a stream of our own; and the backend refusing host pointers for it, naming the tensor.
 *
 * Runs on the "hip" engine where a GPU is present, and always once more over the fake
 * CUDA driver on the engine's host emulation ("hip_emulated"), so CI checks this path too.
 * Without either, the GPU part is skipped with the loader's reason. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_gpu.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"

static const char* g_engine = "hip";
static hipdnnHandle_t g_handle;

enum { R = 5, C = 67, N = R * C };
enum { UID_A = 1, UID_B = 2, UID_C = 3, UID_Y = 4, UID_X = 5, UID_K = 6, UID_Z = 7 };

/* ---- building and planning ----------------------------------------------------------------- */

static hipdnnBackendDescriptor_t graph_of(const char* name, int n, hipdnnBackendDescriptor_t* ops) {
    hipdnnBackendDescriptor_t g = gb_graph(g_handle, name, n, ops);
    if (g && !CHECK_OK(hipdnnBackendFinalize(g))) gb_destroy(&g);
    return g;
}

/* The plan of the engine under test for a finalized graph. */
static hipdnnBackendDescriptor_t plan_on_engine(hipdnnBackendDescriptor_t graph) {
    hipdnnBackendDescriptor_t heur = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
    hipdnnBackendDescriptor_t cfg = NULL, plan = NULL;
    int64_t n = 0;
    int ok = heur &&
             CHECK_OK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE,
                                                HIPDNN_TYPE_HEUR_MODE, 1, &mode)) &&
             gb_set_desc(heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph) &&
             gb_set_name(heur, HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT, g_engine) &&
             CHECK_OK(hipdnnBackendFinalize(heur)) &&
             CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                                HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg)) &&
             CHECK(n >= 1 && cfg);
    if (ok) {
        plan = gb_new(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        ok = plan &&
             CHECK_OK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                HIPDNN_TYPE_HANDLE, 1, &g_handle)) &&
             gb_set_desc(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg) &&
             CHECK_OK(hipdnnBackendFinalize(plan));
        char* name = ok ? gb_get_string(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT) : NULL;
        ok = ok && CHECK_MSG(name && strcmp(name, g_engine) == 0, "plan engine %s, want %s",
                             name ? name : "?", g_engine);
        free(name);
        if (!ok) gb_destroy(&plan);
    }
    if (cfg) hipdnnBackendDestroyDescriptor(cfg);
    gb_destroy(&heur);
    return plan;
}

static hipdnnBackendDescriptor_t pack_of(int n, const int64_t* uids, void** ptrs,
                                         const int64_t* spaces) {
    hipdnnBackendDescriptor_t vp = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    void* ws = NULL;
    int ok = vp &&
             CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                                HIPDNN_TYPE_INT64, n, uids)) &&
             CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                                HIPDNN_TYPE_VOID_PTR, n, ptrs)) &&
             CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                                HIPDNN_TYPE_VOID_PTR, 1, &ws)) &&
             (!spaces || CHECK_OK(hipdnnBackendSetAttribute(
                             vp, HIPDNN_ATTR_VARIANT_PACK_MEMORY_SPACES_EXT, HIPDNN_TYPE_INT64,
                             n, spaces))) &&
             CHECK_OK(hipdnnBackendFinalize(vp));
    if (!ok) gb_destroy(&vp);
    return vp;
}

/* ---- y = relu(a * b + c) ------------------------------------------------------------------ */

typedef struct {
    hipdnnBackendDescriptor_t graph, plan;
    float a[N];
    uint16_t b[N], c[C], y[N]; /* fp16, bf16, bf16 */
    void *da, *db, *dc, *dy;
} fma_case;

static void fma_free(fma_case* f) {
    gb_destroy(&f->plan);
    gb_destroy(&f->graph);
    hipdnnDeviceFree_ext(f->da);
    hipdnnDeviceFree_ext(f->db);
    hipdnnDeviceFree_ext(f->dc);
    hipdnnDeviceFree_ext(f->dy);
}

static int fma_build(fma_case* f) {
    memset(f, 0, sizeof(*f));
    int64_t dims[2] = {R, C}, cdims[2] = {1, C};
    hipdnnBackendDescriptor_t a = gb_tensor(UID_A, "a", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t b = gb_tensor(UID_B, "b", HIPDNN_DATA_HALF, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t c = gb_tensor(UID_C, "c", HIPDNN_DATA_BFLOAT16, 2, cdims, NULL, 0);
    hipdnnBackendDescriptor_t t1 = gb_tensor(10, "ab", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 1);
    hipdnnBackendDescriptor_t t2 = gb_tensor(11, "abc", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 1);
    hipdnnBackendDescriptor_t y = gb_tensor(UID_Y, "y", HIPDNN_DATA_BFLOAT16, 0, NULL, NULL, 0);
    hipdnnBackendDescriptor_t ops[3] = {
        gb_pointwise("mul", HIPDNN_POINTWISE_MUL, a, b, t1),
        gb_pointwise("add", HIPDNN_POINTWISE_ADD, t1, c, t2),
        gb_pointwise("relu", HIPDNN_POINTWISE_RELU_FWD, t2, NULL, y)};
    if (ops[0] && ops[1] && ops[2]) f->graph = graph_of("fma_relu", 3, ops);
    if (f->graph) f->plan = plan_on_engine(f->graph);
    for (int i = 0; i < 3; ++i) gb_destroy(&ops[i]);
    gb_destroy(&a);
    gb_destroy(&b);
    gb_destroy(&c);
    gb_destroy(&t1);
    gb_destroy(&t2);
    gb_destroy(&y);
    if (!f->plan) return 0;
    for (int i = 0; i < N; ++i) {
        f->a[i] = (float)sin(0.37 * i) * 3.0f;
        f->b[i] = hipdnnSdkFloatToHalf((float)cos(0.11 * i) * 2.0f);
    }
    for (int j = 0; j < C; ++j) f->c[j] = hipdnnSdkFloatToBfloat16((float)(j % 7) * 0.25f - 0.75f);
    int ok = CHECK_OK(hipdnnDeviceMalloc_ext(&f->da, sizeof(f->a))) &&
             CHECK_OK(hipdnnDeviceMalloc_ext(&f->db, sizeof(f->b))) &&
             CHECK_OK(hipdnnDeviceMalloc_ext(&f->dc, sizeof(f->c))) &&
             CHECK_OK(hipdnnDeviceMalloc_ext(&f->dy, sizeof(f->y))) &&
             CHECK_OK(hipdnnDeviceMemcpy_ext(f->da, f->a, sizeof(f->a))) &&
             CHECK_OK(hipdnnDeviceMemcpy_ext(f->db, f->b, sizeof(f->b))) &&
             CHECK_OK(hipdnnDeviceMemcpy_ext(f->dc, f->c, sizeof(f->c))) &&
             CHECK_OK(hipdnnDeviceMemset_ext(f->dy, 0xFF, sizeof(f->y))); /* NaN poison */
    return ok;
}

/* Output against float64, inputs unchanged on the device. */
static void fma_check(fma_case* f, const char* what) {
    float a[N];
    uint16_t b[N], c[C];
    if (!CHECK_OK(hipdnnDeviceMemcpy_ext(f->y, f->dy, sizeof(f->y))) ||
        !CHECK_OK(hipdnnDeviceMemcpy_ext(a, f->da, sizeof(a))) ||
        !CHECK_OK(hipdnnDeviceMemcpy_ext(b, f->db, sizeof(b))) ||
        !CHECK_OK(hipdnnDeviceMemcpy_ext(c, f->dc, sizeof(c))))
        return;
    int bad = 0, first = -1;
    for (int i = 0; i < N; ++i) {
        double want = (double)f->a[i] * hipdnnSdkHalfToFloat(f->b[i]) +
                      hipdnnSdkBfloat16ToFloat(f->c[i % C]);
        want = want > 0 ? want : 0;
        double got = hipdnnSdkBfloat16ToFloat(f->y[i]);
        if (!(fabs(got - want) <= 1e-2 + 1e-2 * fabs(want))) { /* bf16 pointwise tolerance */
            ++bad;
            if (first < 0) first = i;
        }
    }
    CHECK_MSG(bad == 0, "%s: %d of %d elements off (first at %d: got %g)", what, bad, N, first,
              first >= 0 ? hipdnnSdkBfloat16ToFloat(f->y[first]) : 0.0);
    CHECK_MSG(memcmp(a, f->a, sizeof(a)) == 0 && memcmp(b, f->b, sizeof(b)) == 0 &&
                  memcmp(c, f->c, sizeof(c)) == 0,
              "%s: an input changed", what);
}

static void test_mixed_storage_graph_on_device_memory(void) {
    fma_case* f = calloc(1, sizeof(*f));
    REQUIRE(f);
    if (fma_build(f)) {
        int64_t uids[4] = {UID_A, UID_B, UID_C, UID_Y};
        void* ptrs[4] = {f->da, f->db, f->dc, f->dy};
        hipdnnBackendDescriptor_t vp = pack_of(4, uids, ptrs, NULL); /* spaces probed */
        if (vp && CHECK_OK(hipdnnBackendExecute(g_handle, f->plan, vp)) &&
            CHECK_OK(hipdnnDeviceSynchronize_ext()))
            fma_check(f, "probed spaces");
        gb_destroy(&vp);
        int64_t spaces[4] = {HIPDNN_MEMORY_DEVICE, HIPDNN_MEMORY_DEVICE, HIPDNN_MEMORY_DEVICE,
                             HIPDNN_MEMORY_DEVICE};
        CHECK_OK(hipdnnDeviceMemset_ext(f->dy, 0xFF, sizeof(f->y)));
        vp = pack_of(4, uids, ptrs, spaces);
        if (vp && CHECK_OK(hipdnnBackendExecute(g_handle, f->plan, vp)) &&
            CHECK_OK(hipdnnDeviceSynchronize_ext()))
            fma_check(f, "declared spaces");
        gb_destroy(&vp);
    }
    fma_free(f);
    free(f);
}

static void test_execute_on_a_stream_of_our_own(void) {
    fma_case* f = calloc(1, sizeof(*f));
    hipdnnStream_t s = NULL;
    REQUIRE(f);
    if (fma_build(f) && CHECK_OK(hipdnnStreamCreate_ext(&s))) {
        hipdnnHandle_t h = NULL;
        if (CHECK_OK(hipdnnCreate(&h)) && CHECK_OK(hipdnnSetStream(h, s))) {
            int64_t uids[4] = {UID_A, UID_B, UID_C, UID_Y};
            void* ptrs[4] = {f->da, f->db, f->dc, f->dy};
            hipdnnBackendDescriptor_t vp = pack_of(4, uids, ptrs, NULL);
            /* the plan was built on g_handle; it runs on any handle of its device */
            if (vp && CHECK_OK(hipdnnBackendExecute(h, f->plan, vp)) &&
                CHECK_OK(hipdnnStreamSynchronize_ext(s)))
                fma_check(f, "own stream");
            gb_destroy(&vp);
        }
        CHECK_OK(hipdnnDestroy(h));
        CHECK_OK(hipdnnStreamDestroy_ext(s));
    }
    fma_free(f);
    free(f);
}

static void test_host_pointers_are_refused_naming_the_tensor(void) {
    fma_case* f = calloc(1, sizeof(*f));
    REQUIRE(f);
    if (fma_build(f)) {
        int64_t uids[4] = {UID_A, UID_B, UID_C, UID_Y};
        void* ptrs[4] = {f->da, f->b, f->dc, f->dy}; /* b: host memory */
        hipdnnBackendDescriptor_t vp = pack_of(4, uids, ptrs, NULL);
        char want[160];
        snprintf(want, sizeof(want), "tensor 'b' (uid 2) is in host memory but %s needs device "
                 "memory", g_engine);
        if (vp) {
            CHECK_STATUS(hipdnnBackendExecute(g_handle, f->plan, vp), HIPDNN_STATUS_BAD_PARAM);
            CHECK_ERR_CONTAINS(want);
        }
        gb_destroy(&vp);
        /* declared device memory that the runtime knows to be host memory */
        int64_t spaces[4] = {HIPDNN_MEMORY_DEVICE, HIPDNN_MEMORY_DEVICE, HIPDNN_MEMORY_DEVICE,
                             HIPDNN_MEMORY_DEVICE};
        vp = pack_of(4, uids, ptrs, spaces);
        if (vp) {
            CHECK_STATUS(hipdnnBackendExecute(g_handle, f->plan, vp), HIPDNN_STATUS_BAD_PARAM);
            CHECK_ERR_CONTAINS("tensor 'b' (uid 2) is declared device memory but the");
            CHECK_ERR_CONTAINS("reports host memory");
        }
        gb_destroy(&vp);
    }
    fma_free(f);
    free(f);
}

/* z = x * k, k a by-value scalar given at execute time as a host pointer. */
static void test_runtime_by_value_scalar(void) {
    int64_t dims[1] = {37}, one[1] = {1};
    hipdnnBackendDescriptor_t x = gb_tensor(UID_X, "x", HIPDNN_DATA_FLOAT, 1, dims, NULL, 0);
    hipdnnBackendDescriptor_t z = gb_tensor(UID_Z, "z", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0);
    hipdnnBackendDescriptor_t k = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    bool yes = true, no = false;
    hipdnnDataType_t f32 = HIPDNN_DATA_FLOAT;
    int64_t kuid = UID_K;
    int ok = k &&
             CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64,
                                                1, &kuid)) &&
             gb_set_name(k, HIPDNN_ATTR_TENSOR_NAME_EXT, "k") &&
             CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_TENSOR_DATA_TYPE,
                                                HIPDNN_TYPE_DATA_TYPE, 1, &f32)) &&
             CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_TENSOR_DIMENSIONS,
                                                HIPDNN_TYPE_INT64, 1, one)) &&
             CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_TENSOR_IS_VIRTUAL,
                                                HIPDNN_TYPE_BOOLEAN, 1, &no)) &&
             CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_TENSOR_IS_BY_VALUE,
                                                HIPDNN_TYPE_BOOLEAN, 1, &yes)) &&
             CHECK_OK(hipdnnBackendFinalize(k));
    hipdnnBackendDescriptor_t op = ok ? gb_pointwise("scale", HIPDNN_POINTWISE_MUL, x, k, z) : NULL;
    hipdnnBackendDescriptor_t graph = op ? graph_of("scaled", 1, &op) : NULL;
    hipdnnBackendDescriptor_t plan = graph ? plan_on_engine(graph) : NULL;
    float hx[37], hz[37];
    void *dx = NULL, *dz = NULL;
    for (int i = 0; i < 37; ++i) hx[i] = (float)i - 18.0f;
    if (plan && CHECK_OK(hipdnnDeviceMalloc_ext(&dx, sizeof(hx))) &&
        CHECK_OK(hipdnnDeviceMalloc_ext(&dz, sizeof(hz))) &&
        CHECK_OK(hipdnnDeviceMemcpy_ext(dx, hx, sizeof(hx)))) {
        for (int round = 0; round < 2; ++round) {
            float kv = round ? -0.75f : 2.5f; /* read when enqueued: may change after */
            int64_t uids[3] = {UID_X, UID_K, UID_Z};
            void* ptrs[3] = {dx, &kv, dz};
            hipdnnBackendDescriptor_t vp = pack_of(3, uids, ptrs, NULL);
            if (vp && CHECK_OK(hipdnnBackendExecute(g_handle, plan, vp))) {
                kv = 1e9f;
                CHECK_OK(hipdnnDeviceMemcpy_ext(hz, dz, sizeof(hz)));
                int bad = 0;
                for (int i = 0; i < 37; ++i) bad += hz[i] != hx[i] * (round ? -0.75f : 2.5f);
                CHECK_MSG(bad == 0, "round %d: %d elements off", round, bad);
            }
            gb_destroy(&vp);
        }
    }
    hipdnnDeviceFree_ext(dx);
    hipdnnDeviceFree_ext(dz);
    gb_destroy(&plan);
    gb_destroy(&graph);
    gb_destroy(&op);
    gb_destroy(&k);
    gb_destroy(&x);
    gb_destroy(&z);
}

/* ---- main ------------------------------------------------------------------------------ */

static int engine_loaded(void) {
    int64_t n = 0;
    if (hipdnnGetEngineCount_ext(&n) != HIPDNN_STATUS_SUCCESS) return 0;
    for (int64_t i = 0; i < n; ++i) {
        hipdnnEngineInfo_ext_t info;
        if (hipdnnGetEngineInfo_ext(i, &info) == HIPDNN_STATUS_SUCCESS &&
            strcmp(info.name, g_engine) == 0)
            return 1;
    }
    return 0;
}

static void print_skip_reasons(void) {
    size_t num = 0, len = 0;
    if (hipdnnGetSkippedEnginePlugins_ext(&num, NULL, &len) != HIPDNN_STATUS_SUCCESS) return;
    char** entries = calloc(num + 1, sizeof(char*));
    for (size_t i = 0; entries && i < num; ++i) entries[i] = calloc(len + 1, 1);
    if (entries && hipdnnGetSkippedEnginePlugins_ext(&num, entries, &len) == HIPDNN_STATUS_SUCCESS)
        for (size_t i = 0; i < num; ++i) fprintf(stdout, "   skipped plugin %s\n", entries[i]);
    for (size_t i = 0; entries && i < num; ++i) free(entries[i]);
    free(entries);
}

int main(int argc, char** argv) {
    int fake = fake_gpu_is_child(argc, argv);
    if (fake) {
        const char* paths[1] = {HIPDNN_EMULATED_PLUGIN};
        g_engine = "hip_emulated";
        if (!CHECK_OK(hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ADDITIVE)))
            return check_finish();
    }
    if (CHECK_OK(hipdnnCreate(&g_handle)) && engine_loaded()) {
        fprintf(stdout, "engine under test: %s\n", g_engine);
        RUN_TEST(test_mixed_storage_graph_on_device_memory);
        RUN_TEST(test_execute_on_a_stream_of_our_own);
        RUN_TEST(test_host_pointers_are_refused_naming_the_tensor);
        RUN_TEST(test_runtime_by_value_scalar);
    } else {
        fprintf(stdout, "SKIP: no '%s' engine loaded (no GPU here?)\n", g_engine);
        print_skip_reasons();
        CHECK(!fake); /* the emulation must always load */
        /* tools/gpu_check.sh: on the GPU machine, a skip is a failure */
        CHECK_MSG(!getenv("HIPDNN_TEST_REQUIRE_GPU"), "HIPDNN_TEST_REQUIRE_GPU is set");
    }
    CHECK_OK(hipdnnDestroy(g_handle));
    if (!fake) fake_gpu_run_self();
    return check_finish();
}
