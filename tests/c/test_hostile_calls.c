/* test_hostile_calls — C callers' mistakes that only C can make, each found by a fuzzer of
 * fuzz/ (its reproducer is in fuzz/corpus/) and each once undefined behaviour that
 * `make test-sanitize` reported:
 *   - a BOOLEAN attribute given a byte other than 0 or 1 (was loaded as a C bool);
 *   - DIMENSIONS / STRIDES with count 0 and values NULL (memcpy from NULL);
 *   - graph bytes at an address that is not 8-aligned (FlatBuffers read scalars in place);
 * and one found by review: a VARIANT_PACK's duplicate-uid check at finalize compared every
 * pair (2^16 uids took 7 s, 2^20 would take half an hour).
 * Each must behave as documented: a defined result or a status with a message. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"

static hipdnnHandle_t g_handle;

static void test_boolean_attributes_take_any_nonzero_byte_as_true(void) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t != NULL);
    const uint8_t bytes[] = {0, 1, 2, 255};
    for (size_t i = 0; i < sizeof(bytes); ++i) {
        bool got = !bytes[i];
        int64_t n = 0;
        CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1,
                                           &bytes[i]));
        CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1,
                                           &n, &got));
        CHECK_MSG(got == (bytes[i] != 0), "byte %u read back as %d", bytes[i], (int)got);
        CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1,
                                           &bytes[i]));
        CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1,
                                           &n, &got));
        CHECK_MSG(got == (bytes[i] != 0), "by-value byte %u read back as %d", bytes[i], (int)got);
    }
    gb_destroy(&t);
}

static void test_dims_and_strides_with_count_0_accept_null_values(void) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t != NULL);
    int64_t dims[2] = {3, 4}, n = -1;
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 2, dims));
    /* count 0 unsets them: values may be NULL */
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 0, NULL));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64, 0, NULL));
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 0, &n,
                                       NULL));
    CHECK_EQ_INT(n, 0);
    /* count > 0 with NULL is refused */
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 2,
                                           NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    gb_destroy(&t);
}

/* A small finalized graph's bytes (malloc'd), or NULL. */
static uint8_t* relu_graph_bytes(size_t* size) {
    int64_t dims[2] = {2, 3};
    hipdnnBackendDescriptor_t x = gb_tensor(1, "x", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t y = gb_tensor(2, "y", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0);
    hipdnnBackendDescriptor_t op = gb_pointwise("act", HIPDNN_POINTWISE_RELU_FWD, x, NULL, y);
    hipdnnBackendDescriptor_t g = op ? gb_graph(g_handle, "bytes", 1, &op) : NULL;
    uint8_t* data = NULL;
    *size = 0;
    if (g && CHECK_OK(hipdnnBackendFinalize(g)) &&
        CHECK_OK(hipdnnBackendGetSerializedBinaryGraph_ext(g, 0, size, NULL)) &&
        (data = malloc(*size)) &&
        !CHECK_OK(hipdnnBackendGetSerializedBinaryGraph_ext(g, *size, size, data))) {
        free(data);
        data = NULL;
    }
    gb_destroy(&g);
    gb_destroy(&op);
    gb_destroy(&x);
    gb_destroy(&y);
    return data;
}

static void test_graph_bytes_at_every_alignment_deserialize_the_same(void) {
    size_t size = 0;
    uint8_t* data = relu_graph_bytes(&size);
    REQUIRE(data != NULL);
    uint8_t* buf = malloc(size + 16);
    uint8_t* again = malloc(size);
    for (size_t off = 0; buf && again && off < 8; ++off) {
        memcpy(buf + off, data, size);
        hipdnnBackendDescriptor_t g = NULL;
        size_t n = 0;
        if (CHECK_OK(hipdnnBackendCreateAndDeserializeGraph_ext(&g, buf + off, size)) &&
            CHECK_OK(hipdnnBackendGetSerializedBinaryGraph_ext(g, size, &n, again)))
            CHECK_MSG(n == size && memcmp(again, data, size) == 0,
                      "bytes at offset %zu deserialize to another graph", off);
        gb_destroy(&g);
    }
    free(again);
    free(buf);
    free(data);
}

static double seconds_since(const struct timespec* t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static void test_variant_pack_of_a_million_uids_finalizes_quickly(void) {
    enum { N = 1 << 20 };
    int64_t* uids = malloc(N * sizeof(int64_t));
    void** ptrs = calloc(N, sizeof(void*));
    REQUIRE(uids && ptrs);
    for (int64_t i = 0; i < N; ++i) uids[i] = (i * 7919) % N; /* all distinct, shuffled */
    for (int dup = 0; dup < 2; ++dup) {
        if (dup) uids[N - 1] = uids[3]; /* the only duplicate, far from its twin */
        hipdnnBackendDescriptor_t vp = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
        struct timespec t0;
        if (!vp) break;
        CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                           HIPDNN_TYPE_INT64, N, uids));
        CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           HIPDNN_TYPE_VOID_PTR, N, ptrs));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        if (dup) {
            CHECK_STATUS(hipdnnBackendFinalize(vp), HIPDNN_STATUS_BAD_PARAM);
            char want[64];
            snprintf(want, sizeof(want), "uid %lld appears twice", (long long)uids[3]);
            CHECK_ERR_CONTAINS(want);
        } else {
            CHECK_OK(hipdnnBackendFinalize(vp));
        }
        /* linear-logarithmic: a fraction of a second even under sanitizers; pairwise took
         * half an hour */
        double s = seconds_since(&t0);
        CHECK_MSG(s < 20, "finalize of 2^20 uids took %.1f s", s);
        gb_destroy(&vp);
    }
    free(uids);
    free(ptrs);
}

int main(void) {
    unsetenv("HIPDNN_PLUGIN_DIR");
    setenv("HIPDNN_LOG_LEVEL", "off", 1);
    if (!CHECK_OK(hipdnnCreate(&g_handle))) return check_finish();
    RUN_TEST(test_boolean_attributes_take_any_nonzero_byte_as_true);
    RUN_TEST(test_dims_and_strides_with_count_0_accept_null_values);
    RUN_TEST(test_graph_bytes_at_every_alignment_deserialize_the_same);
    RUN_TEST(test_variant_pack_of_a_million_uids_finalizes_quickly);
    CHECK_OK(hipdnnDestroy(g_handle));
    return check_finish();
}
