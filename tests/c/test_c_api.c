/* test_c_api.c — the backend C API (hipdnn.h) end to end: handles, every descriptor type,
 * attribute rules and their errors, graph validation messages, heuristics, plans, variant
 * packs, and execution of conv -> add -> relu on host arrays checked against a naive
 * float64 reference computed here.  Plugins come from the default folder (reference_cpu). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "graph_builder.h"
#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"
#include "log_capture.h"

static hipdnnHandle_t g_handle;

/* ---- random data ------------------------------------------------------------------------ */

static uint64_t g_rng;

static double rng_uniform(void) { /* [-1, 1), never exactly 0 in practice */
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return ((double)(g_rng >> 11) / 9007199254740992.0) * 2.0 - 1.0;
}

static float* random_floats(int64_t n) {
    float* a = malloc((size_t)n * sizeof(float));
    if (!a) return NULL;
    for (int64_t i = 0; i < n; ++i) {
        double v = rng_uniform();
        a[i] = (float)(v == 0.0 ? 0.5 : v);
    }
    return a;
}

/* ---- status strings, version ------------------------------------------------------------- */

static void test_error_strings_name_every_status(void) {
    /* hipDNN's numbering, then hipdnn's own */
    static const struct {
        hipdnnStatus_t status;
        int value;
        const char* name;
    } k[] = {
        {HIPDNN_STATUS_SUCCESS, 0, "HIPDNN_STATUS_SUCCESS"},
        {HIPDNN_STATUS_NOT_INITIALIZED, 1, "HIPDNN_STATUS_NOT_INITIALIZED"},
        {HIPDNN_STATUS_BAD_PARAM, 2, "HIPDNN_STATUS_BAD_PARAM"},
        {HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, 3, "HIPDNN_STATUS_BAD_PARAM_NULL_POINTER"},
        {HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED, 4, "HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED"},
        {HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, 5, "HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND"},
        {HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, 6, "HIPDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT"},
        {HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH, 7, "HIPDNN_STATUS_BAD_PARAM_STREAM_MISMATCH"},
        {HIPDNN_STATUS_NOT_SUPPORTED, 8, "HIPDNN_STATUS_NOT_SUPPORTED"},
        {HIPDNN_STATUS_INTERNAL_ERROR, 9, "HIPDNN_STATUS_INTERNAL_ERROR"},
        {HIPDNN_STATUS_ALLOC_FAILED, 10, "HIPDNN_STATUS_ALLOC_FAILED"},
        {HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, 11,
         "HIPDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED"},
        {HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, 12,
         "HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED"},
        {HIPDNN_STATUS_EXECUTION_FAILED, 13, "HIPDNN_STATUS_EXECUTION_FAILED"},
        {HIPDNN_STATUS_PLUGIN_ERROR, 14, "HIPDNN_STATUS_PLUGIN_ERROR"},   /* hipDNN's number */
        {HIPDNN_STATUS_PLUGIN_ERROR_EXT, 14, "HIPDNN_STATUS_PLUGIN_ERROR"}, /* the old name */
    };
    for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); ++i) {
        const char* got = hipdnnGetErrorString(k[i].status);
        CHECK_MSG((int)k[i].status == k[i].value, "%s is %d, want %d", k[i].name,
                  (int)k[i].status, k[i].value);
        CHECK_MSG(got && strcmp(got, k[i].name) == 0, "status %d: got \"%s\", want \"%s\"",
                  k[i].value, got ? got : "(NULL)", k[i].name);
    }
    const char* unknown = hipdnnGetErrorString((hipdnnStatus_t)999);
    CHECK(unknown != NULL && unknown[0] != '\0');
}

static void test_version_string(void) {
    char want[32];
    snprintf(want, sizeof(want), "%d.%d.%d", HIPDNN_VERSION_MAJOR, HIPDNN_VERSION_MINOR,
             HIPDNN_VERSION_PATCH);
    const char* v = hipdnnVersionString_ext();
    CHECK_MSG(v && strcmp(v, want) == 0, "version \"%s\", want \"%s\"", v ? v : "(NULL)", want);
}

/* ---- handle --------------------------------------------------------------------------------- */

static void test_handle_lifecycle(void) {
    CHECK_STATUS(hipdnnCreate(NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_ERR_NONEMPTY();
    CHECK_OK(hipdnnDestroy(NULL)); /* destroying NULL is a no-op */

    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    CHECK(h != NULL);
    hipdnnStream_t s = (hipdnnStream_t)0x1;
    CHECK_OK(hipdnnGetStream(h, &s));
    CHECK(s == NULL); /* the default stream until one is set */
    CHECK_OK(hipdnnSetStream(h, NULL));
    CHECK_STATUS(hipdnnGetStream(h, NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnGetStream(NULL, &s), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnSetStream(NULL, NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    /* A second handle shares the registry loaded by the first. */
    hipdnnHandle_t h2 = NULL;
    CHECK_OK(hipdnnCreate(&h2));
    CHECK(h2 != NULL && h2 != h);
    CHECK_OK(hipdnnDestroy(h2));
    CHECK_OK(hipdnnDestroy(h));
}

/* ---- tensor descriptors ------------------------------------------------------------------- */

static void test_tensor_attributes_round_trip(void) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t);
    int64_t uid = 42, dims[4] = {2, 3, 4, 5}, strides[4] = {60, 1, 15, 3};
    hipdnnDataType_t dt = HIPDNN_DATA_HALF;
    bool yes = true;
    const char* name = "activations";
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &dt));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 4, dims));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64, 4, strides));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1, &yes));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR,
                                       (int64_t)strlen(name), name));
    int64_t align = 16;
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT, HIPDNN_TYPE_INT64, 1,
                                       &align));
    CHECK_OK(hipdnnBackendFinalize(t));

    int64_t count = -1, got[8];
    /* count query with requested = 0 */
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 0,
                                       &count, NULL));
    CHECK_EQ_INT(count, 4);
    /* a partial read fills only what was asked for but reports all that exist */
    for (int i = 0; i < 8; ++i) got[i] = -7;
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 2,
                                       &count, got));
    CHECK_EQ_INT(count, 4);
    CHECK(got[0] == 2 && got[1] == 3 && got[2] == -7);
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 8,
                                       &count, got));
    CHECK(count == 4 && memcmp(got, dims, sizeof(dims)) == 0);
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_STRIDES, HIPDNN_TYPE_INT64, 8,
                                       &count, got));
    CHECK(count == 4 && memcmp(got, strides, sizeof(strides)) == 0);
    int64_t uid_back = 0;
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                       &count, &uid_back));
    CHECK(count == 1 && uid_back == 42);
    hipdnnDataType_t dt_back = HIPDNN_DATA_NOT_SET;
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1,
                                       &count, &dt_back));
    CHECK(dt_back == HIPDNN_DATA_HALF);
    bool virt = false;
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_TYPE_BOOLEAN, 1,
                                       &count, &virt));
    CHECK(virt == 1);
    char* name_back = gb_get_string(t, HIPDNN_ATTR_TENSOR_NAME_EXT);
    CHECK(name_back && strcmp(name_back, name) == 0);
    free(name_back);
    /* a CHAR read with less room than the string: *count is still the full length */
    char small[4] = {'#', '#', '#', '#'};
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_TYPE_CHAR, 3,
                                       &count, small));
    CHECK(count == (int64_t)strlen(name) && memcmp(small, "act", 3) == 0 && small[3] == '#');

    /* immutable once finalized (hipDNN: NOT_INITIALIZED) */
    int64_t other = 43;
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                           &other),
                 HIPDNN_STATUS_NOT_INITIALIZED);
    CHECK_ERR_NONEMPTY();
    CHECK_STATUS(hipdnnBackendFinalize(t), HIPDNN_STATUS_NOT_INITIALIZED);
    gb_destroy(&t);
}

static void test_tensor_by_value_scalar(void) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t);
    int64_t uid = 9, dims[1] = {1};
    hipdnnDataType_t dt = HIPDNN_DATA_FLOAT;
    bool yes = true;
    float value = 0.375f;
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE, 1, &dt));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 1, dims));
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1,
                                       &yes));
    /* without VALUE_EXT it is a runtime scalar: VALUE_EXT reads back empty */
    hipdnnBackendDescriptor_t rt = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(rt);
    CHECK_OK(hipdnnBackendSetAttribute(rt, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid));
    CHECK_OK(hipdnnBackendSetAttribute(rt, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN, 1,
                                       &yes));
    CHECK_OK(hipdnnBackendFinalize(rt));
    int64_t n_rt = -1;
    CHECK_OK(hipdnnBackendGetAttribute(rt, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT, 0,
                                       &n_rt, NULL));
    CHECK_EQ_INT(n_rt, 0);
    gb_destroy(&rt);
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT,
                                       (int64_t)sizeof(value), &value));
    CHECK_OK(hipdnnBackendFinalize(t));
    uint8_t bytes[8] = {0};
    int64_t count = -1;
    CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_VALUE_EXT, HIPDNN_TYPE_UINT8_EXT, 8, &count,
                                       bytes));
    CHECK_EQ_INT(count, sizeof(float));
    float back;
    memcpy(&back, bytes, sizeof(back));
    CHECK(back == value);
    gb_destroy(&t);
}

static void test_tensor_without_uid_does_not_finalize(void) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t);
    int64_t dims[2] = {3, 3};
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 2, dims));
    CHECK_STATUS(hipdnnBackendFinalize(t), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("UNIQUE_ID");
    gb_destroy(&t);
}

/* ---- attribute errors ---------------------------------------------------------------------- */

static void test_wrong_attribute_type_count_or_name(void) {
    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t);
    double d = 1.0;
    int64_t two[2] = {1, 2}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    hipdnnPointwiseMode_t relu = HIPDNN_POINTWISE_RELU_FWD;

    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_DOUBLE, 1,
                                           &d),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("UNIQUE_ID");
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 2,
                                           two),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("UNIQUE_ID");
    /* an attribute of another descriptor type */
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_POINTWISE_MODE,
                                           HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &relu),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("TENSOR");
    /* no such attribute at all */
    CHECK_STATUS(hipdnnBackendSetAttribute(t, (hipdnnBackendAttributeName_t)9999,
                                           HIPDNN_TYPE_INT64, 1, two),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    /* more dims than HIPDNN_MAX_DIMS: a count out of bounds */
    hipdnnStatus_t st = hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS,
                                                  HIPDNN_TYPE_INT64, 9, nine);
    check_note_call(st);
    CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM || st == HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
              "9 dims gave %s", hipdnnGetErrorString(st));
    CHECK_ERR_CONTAINS("DIMENSIONS");
    /* bad values */
    int64_t bad_dims[2] = {3, 0};
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 2,
                                           bad_dims),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    hipdnnDataType_t bogus = (hipdnnDataType_t)77;
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE,
                                           1, &bogus),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    /* getting with the wrong type */
    int64_t uid = 5, count = 0;
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid));
    CHECK_STATUS(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_DOUBLE, 1,
                                           &count, &d),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("UNIQUE_ID");
    CHECK_STATUS(hipdnnBackendGetAttribute(t, (hipdnnBackendAttributeName_t)9999,
                                           HIPDNN_TYPE_INT64, 1, &count, &uid),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    /* a negative count */
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, -1,
                                           &uid),
                 HIPDNN_STATUS_BAD_PARAM);
    /* an op port given a non-tensor descriptor */
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    hipdnnBackendDescriptor_t heur = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    CHECK_STATUS(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC,
                                           HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &heur),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("TENSOR");
    /* unknown descriptor type */
    hipdnnBackendDescriptor_t none = NULL;
    CHECK_STATUS(hipdnnBackendCreateDescriptor((hipdnnBackendDescriptorType_t)99, &none),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK(none == NULL);
    gb_destroy(&heur);
    gb_destroy(&op);
    gb_destroy(&t);
}

static void test_null_pointers(void) {
    int64_t uid = 1, count = 0;
    CHECK_STATUS(hipdnnBackendCreateDescriptor(HIPDNN_BACKEND_TENSOR_DESCRIPTOR, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_ERR_NONEMPTY();
    CHECK_STATUS(hipdnnBackendSetAttribute(NULL, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64,
                                           1, &uid),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnBackendGetAttribute(NULL, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64,
                                           1, &count, &uid),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnBackendFinalize(NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_OK(hipdnnBackendDestroyDescriptor(NULL)); /* a no-op */
    CHECK_STATUS(hipdnnBackendExecute(NULL, NULL, NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);

    hipdnnBackendDescriptor_t t = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(t);
    CHECK_STATUS(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                           NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_ERR_NONEMPTY();
    CHECK_OK(hipdnnBackendSetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1, &uid));
    CHECK_STATUS(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                           NULL, &uid),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                           &count, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    /* an op port set to a NULL descriptor */
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    hipdnnBackendDescriptor_t nothing = NULL;
    CHECK_STATUS(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_OPERATION_MATMUL_ADESC,
                                           HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &nothing),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    gb_destroy(&op);
    gb_destroy(&t);

    size_t n = 0, len = 0;
    int64_t engines = 0;
    CHECK_STATUS(hipdnnGetEngineCount_ext(NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_OK(hipdnnGetEngineCount_ext(&engines));
    CHECK_STATUS(hipdnnGetEngineInfo_ext(0, NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnGetLoadedEnginePluginPaths_ext(NULL, NULL, &len),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnGetLoadedEnginePluginPaths_ext(&n, NULL, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnBackendGetSerializedBinaryGraph_ext(NULL, 0, &n, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnBackendCreateAndDeserializeGraph_ext(NULL, (const uint8_t*)"x", 1),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
}

/* ---- operation descriptors ----------------------------------------------------------------- */

static int64_t uid_of(hipdnnBackendDescriptor_t t) {
    int64_t uid = -1, count = 0;
    if (!CHECK_OK(hipdnnBackendGetAttribute(t, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                            &count, &uid)))
        return -1;
    return uid;
}

/* Gets a descriptor-valued attribute (a new reference) and returns its tensor uid. */
static int64_t port_uid(hipdnnBackendDescriptor_t op, hipdnnBackendAttributeName_t attr) {
    hipdnnBackendDescriptor_t t = NULL;
    int64_t count = -1;
    if (!CHECK_OK(hipdnnBackendGetAttribute(op, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                            NULL)) ||
        !CHECK_EQ_INT(count, 1))
        return -1;
    if (!CHECK_OK(hipdnnBackendGetAttribute(op, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                            &t)))
        return -1;
    int64_t uid = uid_of(t);
    gb_destroy(&t);
    return uid;
}

static void test_conv_descriptor(void) {
    int64_t xd[4] = {1, 2, 5, 5}, wd[4] = {3, 2, 3, 3};
    hipdnnBackendDescriptor_t x = gb_tensor(11, "x", HIPDNN_DATA_FLOAT, 4, xd, NULL, 0);
    hipdnnBackendDescriptor_t w = gb_tensor(12, "w", HIPDNN_DATA_FLOAT, 4, wd, NULL, 0);
    hipdnnBackendDescriptor_t y = gb_tensor(13, "y", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0);
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    REQUIRE(x && w && y && op);
    /* ports not set yet: finalize names the missing one */
    CHECK_STATUS(hipdnnBackendFinalize(op), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    int64_t pre[2] = {1, 0}, post[2] = {2, 1}, stride[2] = {2, 1}, dil[2] = {1, 2}, three[3] = {1, 1, 1};
    hipdnnConvolutionMode_t mode = HIPDNN_CONVOLUTION;
    CHECK(gb_op_common(op, "convA"));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, HIPDNN_TYPE_INT64,
                                       2, pre));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS, HIPDNN_TYPE_INT64,
                                       2, post));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                       HIPDNN_TYPE_INT64, 2, stride));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_DILATIONS, HIPDNN_TYPE_INT64, 2,
                                       dil));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
                                       HIPDNN_TYPE_CONVOLUTION_MODE_EXT, 1, &mode));
    /* spatial arrays must agree in length */
    CHECK_STATUS(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_DILATIONS,
                                           HIPDNN_TYPE_INT64, 3, three),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    int64_t zero_stride[2] = {0, 1};
    CHECK_STATUS(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                           HIPDNN_TYPE_INT64, 2, zero_stride),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    CHECK_OK(hipdnnBackendFinalize(op));

    int64_t got[6], count = -1;
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, HIPDNN_TYPE_INT64,
                                       0, &count, NULL));
    CHECK_EQ_INT(count, 2);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, HIPDNN_TYPE_INT64,
                                       6, &count, got));
    CHECK(count == 2 && got[0] == 1 && got[1] == 0);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS, HIPDNN_TYPE_INT64,
                                       6, &count, got));
    CHECK(count == 2 && got[0] == 2 && got[1] == 1);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                       HIPDNN_TYPE_INT64, 6, &count, got));
    CHECK(count == 2 && got[0] == 2 && got[1] == 1);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_CONVOLUTION_DILATIONS, HIPDNN_TYPE_INT64, 6,
                                       &count, got));
    CHECK(count == 2 && got[0] == 1 && got[1] == 2);
    hipdnnConvolutionMode_t mode_back = HIPDNN_CROSS_CORRELATION;
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_CONVOLUTION_CONV_MODE,
                                       HIPDNN_TYPE_CONVOLUTION_MODE_EXT, 1, &count, &mode_back));
    CHECK(mode_back == HIPDNN_CONVOLUTION);
    hipdnnDataType_t ct = HIPDNN_DATA_NOT_SET;
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT,
                                       HIPDNN_TYPE_DATA_TYPE, 1, &count, &ct));
    CHECK(ct == HIPDNN_DATA_FLOAT);
    char* nm = gb_get_string(op, HIPDNN_ATTR_OPERATION_NAME_EXT);
    CHECK(nm && strcmp(nm, "convA") == 0);
    free(nm);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X), 11);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W), 12);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y), 13);
    /* pointwise attributes do not belong to a conv */
    hipdnnPointwiseMode_t pm = HIPDNN_POINTWISE_ADD;
    hipdnnBackendDescriptor_t op2 = gb_new(HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    CHECK_STATUS(hipdnnBackendSetAttribute(op2, HIPDNN_ATTR_POINTWISE_MODE,
                                           HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &pm),
                 HIPDNN_STATUS_BAD_PARAM);
    gb_destroy(&op2);
    /* the tensors stay alive while the op references them */
    gb_destroy(&x);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X), 11);
    gb_destroy(&op);
    gb_destroy(&w);
    gb_destroy(&y);
}

static void test_matmul_descriptor(void) {
    int64_t ad[3] = {2, 4, 5}, bd[3] = {2, 5, 3};
    hipdnnBackendDescriptor_t a = gb_tensor(21, "a", HIPDNN_DATA_FLOAT, 3, ad, NULL, 0);
    hipdnnBackendDescriptor_t b = gb_tensor(22, "b", HIPDNN_DATA_FLOAT, 3, bd, NULL, 0);
    hipdnnBackendDescriptor_t c = gb_tensor(23, "c", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0);
    REQUIRE(a && b && c);
    hipdnnBackendDescriptor_t op = gb_matmul("fc", a, b, c);
    REQUIRE(op);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_MATMUL_ADESC), 21);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_MATMUL_BDESC), 22);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_MATMUL_CDESC), 23);
    /* a conv attribute does not belong to a matmul */
    hipdnnBackendDescriptor_t m2 = gb_new(HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    int64_t pad[2] = {0, 0};
    CHECK_STATUS(hipdnnBackendSetAttribute(m2, HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                                           HIPDNN_TYPE_INT64, 2, pad),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    /* missing B: finalize refuses, naming the port */
    CHECK(gb_set_desc(m2, HIPDNN_ATTR_OPERATION_MATMUL_ADESC, a));
    CHECK(gb_set_desc(m2, HIPDNN_ATTR_OPERATION_MATMUL_CDESC, c));
    CHECK_STATUS(hipdnnBackendFinalize(m2), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    gb_destroy(&m2);
    gb_destroy(&op);
    gb_destroy(&a);
    gb_destroy(&b);
    gb_destroy(&c);
}

static void test_pointwise_descriptor(void) {
    int64_t d[2] = {3, 4};
    hipdnnBackendDescriptor_t x = gb_tensor(31, "x", HIPDNN_DATA_FLOAT, 2, d, NULL, 0);
    hipdnnBackendDescriptor_t b = gb_tensor(32, "b", HIPDNN_DATA_FLOAT, 2, d, NULL, 0);
    hipdnnBackendDescriptor_t y = gb_tensor(33, "y", HIPDNN_DATA_FLOAT, 2, d, NULL, 0);
    REQUIRE(x && b && y);
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    REQUIRE(op);
    hipdnnPointwiseMode_t mode = HIPDNN_POINTWISE_RELU_FWD;
    double lo = 0.5, hi = 6.0, slope = 0.01;
    CHECK(gb_op_common(op, "leaky"));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
    /* no mode yet */
    CHECK_STATUS(hipdnnBackendFinalize(op), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("leaky");
    hipdnnPointwiseMode_t bogus = (hipdnnPointwiseMode_t)1234;
    CHECK_STATUS(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE,
                                           HIPDNN_TYPE_POINTWISE_MODE_EXT, 1, &bogus),
                 HIPDNN_STATUS_BAD_PARAM);
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_TYPE_POINTWISE_MODE_EXT,
                                       1, &mode));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP,
                                       HIPDNN_TYPE_DOUBLE, 1, &lo));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP,
                                       HIPDNN_TYPE_DOUBLE, 1, &hi));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
                                       HIPDNN_TYPE_DOUBLE, 1, &slope));
    float f = 1.0f;
    CHECK_STATUS(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP,
                                           HIPDNN_TYPE_FLOAT, 1, &f),
                 HIPDNN_STATUS_BAD_PARAM);
    /* relu takes one input: a B input is refused at finalize */
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, b));
    CHECK_STATUS(hipdnnBackendFinalize(op), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("leaky");
    gb_destroy(&op);

    op = gb_new(HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    REQUIRE(op);
    CHECK(gb_op_common(op, "leaky"));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_TYPE_POINTWISE_MODE_EXT,
                                       1, &mode));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP,
                                       HIPDNN_TYPE_DOUBLE, 1, &lo));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP,
                                       HIPDNN_TYPE_DOUBLE, 1, &hi));
    CHECK_OK(hipdnnBackendSetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
                                       HIPDNN_TYPE_DOUBLE, 1, &slope));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, x));
    CHECK(gb_set_desc(op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
    CHECK_OK(hipdnnBackendFinalize(op));
    int64_t count = 0;
    hipdnnPointwiseMode_t mode_back = HIPDNN_POINTWISE_ADD;
    double v = 0;
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_TYPE_POINTWISE_MODE_EXT,
                                       1, &count, &mode_back));
    CHECK(count == 1 && mode_back == HIPDNN_POINTWISE_RELU_FWD);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP,
                                       HIPDNN_TYPE_DOUBLE, 1, &count, &v));
    CHECK(v == lo);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP,
                                       HIPDNN_TYPE_DOUBLE, 1, &count, &v));
    CHECK(v == hi);
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
                                       HIPDNN_TYPE_DOUBLE, 1, &count, &v));
    CHECK(v == slope);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_POINTWISE_XDESC), 31);
    CHECK_EQ_INT(port_uid(op, HIPDNN_ATTR_OPERATION_POINTWISE_YDESC), 33);
    /* B is unset: the count query says 0 */
    CHECK_OK(hipdnnBackendGetAttribute(op, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));
    CHECK_EQ_INT(count, 0);
    gb_destroy(&op);
    gb_destroy(&x);
    gb_destroy(&b);
    gb_destroy(&y);
}

static void test_batchnorm_inference_descriptor(void) {
    int64_t xd[4] = {2, 3, 4, 4}, cd[4] = {1, 3, 1, 1};
    hipdnnBackendDescriptor_t t[6];
    const char* names[6] = {"x", "mean", "inv_var", "scale", "bias", "y"};
    hipdnnBackendAttributeName_t attrs[6] = {
        HIPDNN_ATTR_OPERATION_BN_INFERENCE_X_EXT,     HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN_EXT,
        HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE_EXT, HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE_EXT,
        HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS_EXT,  HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y_EXT};
    for (int i = 0; i < 6; ++i)
        t[i] = gb_tensor(41 + i, names[i], HIPDNN_DATA_FLOAT, 4, (i == 0 || i == 5) ? xd : cd,
                         NULL, 0);
    hipdnnBackendDescriptor_t op = gb_new(HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT);
    REQUIRE(op);
    CHECK(gb_op_common(op, "bn1"));
    for (int i = 0; i < 5; ++i) CHECK(gb_set_desc(op, attrs[i], t[i]));
    /* Y missing */
    CHECK_STATUS(hipdnnBackendFinalize(op), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_CONTAINS("bn1");
    CHECK(gb_set_desc(op, attrs[5], t[5]));
    CHECK_OK(hipdnnBackendFinalize(op));
    for (int i = 0; i < 6; ++i) CHECK_EQ_INT(port_uid(op, attrs[i]), 41 + i);
    gb_destroy(&op);
    for (int i = 0; i < 6; ++i) gb_destroy(&t[i]);
}

static void test_knob_choice_descriptor(void) {
    hipdnnBackendDescriptor_t k = gb_new(HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    REQUIRE(k);
    int64_t type = 3, value = 17, got = 0, count = 0;
    CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_TYPE_INT64, 1,
                                       &type));
    CHECK_OK(hipdnnBackendSetAttribute(k, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, HIPDNN_TYPE_INT64, 1,
                                       &value));
    CHECK_OK(hipdnnBackendFinalize(k));
    CHECK_OK(hipdnnBackendGetAttribute(k, HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_TYPE_INT64, 1,
                                       &count, &got));
    CHECK(count == 1 && got == 3);
    CHECK_OK(hipdnnBackendGetAttribute(k, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, HIPDNN_TYPE_INT64, 1,
                                       &count, &got));
    CHECK(count == 1 && got == 17);
    gb_destroy(&k);
}

/* ---- invalid graphs: finalize says what and where ------------------------------------------ */

/* Finalizes a graph of `n` ops that must be refused with BAD_PARAM and a message holding
 * one of the names (NULL-terminated list) and, if not NULL, `also`. */
static void expect_graph_refused(const char* what, int n, hipdnnBackendDescriptor_t* ops,
                                 const char* const* names, const char* also) {
    for (int i = 0; i < n; ++i)
        if (!CHECK_MSG(ops[i] != NULL, "%s: op %d was not built", what, i)) return;
    hipdnnBackendDescriptor_t g = gb_graph(g_handle, what, n, ops);
    if (!CHECK(g != NULL)) return;
    CHECK_STATUS(hipdnnBackendFinalize(g), HIPDNN_STATUS_BAD_PARAM);
    int named = 0;
    for (const char* const* p = names; *p; ++p)
        if (strstr(check_last_error, *p)) named = 1;
    CHECK_MSG(named, "%s: message \"%s\" names none of the nodes/tensors involved", what,
              check_last_error);
    if (also) CHECK_ERR_CONTAINS(also);
    /* a refused graph gives no bytes */
    size_t size = 0;
    CHECK_STATUS(hipdnnBackendGetSerializedBinaryGraph_ext(g, 0, &size, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
    gb_destroy(&g);
}

static void destroy_all(hipdnnBackendDescriptor_t* d, int n) {
    for (int i = 0; i < n; ++i) gb_destroy(&d[i]);
}

static void test_refuses_conv_weight_channels_not_dividing_image(void) {
    int64_t xd[4] = {1, 8, 5, 5}, wd[4] = {4, 3, 3, 3}, pad[2] = {1, 1}, one[2] = {1, 1};
    hipdnnBackendDescriptor_t t[3] = {
        gb_tensor(1, "img", HIPDNN_DATA_FLOAT, 4, xd, NULL, 0),
        gb_tensor(2, "filt", HIPDNN_DATA_FLOAT, 4, wd, NULL, 0),
        gb_tensor(3, "out", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0)};
    hipdnnBackendDescriptor_t op = gb_conv("conv_bad_c", t[0], t[1], t[2], pad, one, one);
    const char* names[] = {"conv_bad_c", NULL};
    expect_graph_refused("conv_channels", 1, &op, names, NULL);
    gb_destroy(&op);
    destroy_all(t, 3);
}

static void test_refuses_matmul_inner_dim_mismatch(void) {
    int64_t ad[3] = {1, 4, 5}, bd[3] = {1, 6, 7};
    hipdnnBackendDescriptor_t t[3] = {gb_tensor(1, "lhs", HIPDNN_DATA_FLOAT, 3, ad, NULL, 0),
                                      gb_tensor(2, "rhs", HIPDNN_DATA_FLOAT, 3, bd, NULL, 0),
                                      gb_tensor(3, "prod", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0)};
    hipdnnBackendDescriptor_t op = gb_matmul("fc_bad", t[0], t[1], t[2]);
    const char* names[] = {"fc_bad", NULL};
    expect_graph_refused("matmul_inner", 1, &op, names, NULL);
    gb_destroy(&op);
    destroy_all(t, 3);
}

static void test_refuses_non_broadcastable_pointwise(void) {
    int64_t ad[3] = {2, 3, 4}, bd[3] = {2, 5, 4};
    hipdnnBackendDescriptor_t t[3] = {gb_tensor(1, "p", HIPDNN_DATA_FLOAT, 3, ad, NULL, 0),
                                      gb_tensor(2, "q", HIPDNN_DATA_FLOAT, 3, bd, NULL, 0),
                                      gb_tensor(3, "r", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0)};
    hipdnnBackendDescriptor_t op = gb_pointwise("add_bad", HIPDNN_POINTWISE_ADD, t[0], t[1], t[2]);
    const char* names[] = {"add_bad", NULL};
    expect_graph_refused("broadcast", 1, &op, names, NULL);
    gb_destroy(&op);
    destroy_all(t, 3);
}

static void test_refuses_duplicate_uid(void) {
    int64_t d[2] = {3, 4};
    hipdnnBackendDescriptor_t t[3] = {gb_tensor(7, "dup_a", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(7, "dup_b", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(8, "sum", HIPDNN_DATA_FLOAT, 2, d, NULL, 0)};
    hipdnnBackendDescriptor_t op = gb_pointwise("add_dups", HIPDNN_POINTWISE_ADD, t[0], t[1], t[2]);
    const char* names[] = {"dup_a", "dup_b", "uid 7", NULL};
    expect_graph_refused("duplicate_uid", 1, &op, names, NULL);
    gb_destroy(&op);
    destroy_all(t, 3);
}

static void test_refuses_cycle(void) {
    int64_t d[2] = {3, 4};
    hipdnnBackendDescriptor_t t[4] = {gb_tensor(1, "cin", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(2, "cyc_t1", HIPDNN_DATA_FLOAT, 2, d, NULL, 1),
                                      gb_tensor(3, "cyc_t2", HIPDNN_DATA_FLOAT, 2, d, NULL, 1),
                                      gb_tensor(4, "cout", HIPDNN_DATA_FLOAT, 2, d, NULL, 0)};
    hipdnnBackendDescriptor_t ops[3] = {
        gb_pointwise("cyc_add", HIPDNN_POINTWISE_ADD, t[0], t[2], t[1]), /* t1 = cin + t2 */
        gb_pointwise("cyc_relu", HIPDNN_POINTWISE_RELU_FWD, t[1], NULL, t[2]), /* t2 = relu(t1) */
        gb_pointwise("cyc_out", HIPDNN_POINTWISE_RELU_FWD, t[1], NULL, t[3])};
    const char* names[] = {"cyc_", NULL};
    expect_graph_refused("cycle", 3, ops, names, "cycl");
    destroy_all(ops, 3);
    destroy_all(t, 4);
}

static void test_refuses_input_neither_supplied_nor_produced(void) {
    int64_t d[2] = {3, 4};
    hipdnnBackendDescriptor_t t[2] = {gb_tensor(1, "ghost", HIPDNN_DATA_FLOAT, 2, d, NULL, 1),
                                      gb_tensor(2, "haunted", HIPDNN_DATA_FLOAT, 2, d, NULL, 0)};
    hipdnnBackendDescriptor_t op = gb_pointwise("uses_ghost", HIPDNN_POINTWISE_RELU_FWD, t[0], NULL,
                                                t[1]);
    const char* names[] = {"ghost", NULL};
    expect_graph_refused("dangling_input", 1, &op, names, NULL);
    gb_destroy(&op);
    destroy_all(t, 2);
}

static void test_refuses_two_components(void) {
    int64_t d[2] = {3, 4};
    hipdnnBackendDescriptor_t t[4] = {gb_tensor(1, "left_in", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(2, "left_out", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(3, "right_in", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(4, "right_out", HIPDNN_DATA_FLOAT, 2, d, NULL, 0)};
    hipdnnBackendDescriptor_t ops[2] = {
        gb_pointwise("left_relu", HIPDNN_POINTWISE_RELU_FWD, t[0], NULL, t[1]),
        gb_pointwise("right_relu", HIPDNN_POINTWISE_RELU_FWD, t[2], NULL, t[3])};
    const char* names[] = {"left_", "right_", NULL};
    expect_graph_refused("two_components", 2, ops, names, NULL);
    destroy_all(ops, 2);
    destroy_all(t, 4);
}

static void test_refuses_tensor_produced_twice(void) {
    int64_t d[2] = {3, 4};
    hipdnnBackendDescriptor_t t[3] = {gb_tensor(1, "src", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(2, "src2", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                      gb_tensor(3, "twice_out", HIPDNN_DATA_FLOAT, 2, d, NULL, 0)};
    hipdnnBackendDescriptor_t ops[2] = {
        gb_pointwise("writer1", HIPDNN_POINTWISE_RELU_FWD, t[0], NULL, t[2]),
        gb_pointwise("writer2", HIPDNN_POINTWISE_ADD, t[0], t[1], t[2])};
    const char* names[] = {"twice_out", "writer1", "writer2", NULL};
    expect_graph_refused("produced_twice", 2, ops, names, NULL);
    destroy_all(ops, 2);
    destroy_all(t, 3);
}

static void test_refuses_output_strides_that_overlap(void) {
    int64_t d[2] = {2, 3}, overlap[2] = {1, 1}, interleave[2] = {2, 2};
    const int64_t* bad[2] = {overlap, interleave};
    for (int k = 0; k < 2; ++k) {
        hipdnnBackendDescriptor_t t[2] = {gb_tensor(1, "src", HIPDNN_DATA_FLOAT, 2, d, NULL, 0),
                                          gb_tensor(2, "dst_alias", HIPDNN_DATA_FLOAT, 2, d,
                                                    bad[k], 0)};
        hipdnnBackendDescriptor_t op = gb_pointwise("relu_alias", HIPDNN_POINTWISE_RELU_FWD, t[0],
                                                    NULL, t[1]);
        const char* names[] = {"dst_alias", NULL};
        expect_graph_refused("output_overlap", 1, &op, names, "overlap");
        gb_destroy(&op);
        destroy_all(t, 2);
    }
}

/* An input may alias (every row reads one buffer); its output then gets packed strides. */
static void test_aliasing_input_gives_a_packed_output(void) {
    int64_t d[2] = {2, 3}, alias[2] = {1, 1}, packed[2] = {3, 1}, got[HIPDNN_MAX_DIMS];
    hipdnnBackendDescriptor_t t[2] = {gb_tensor(1, "rows", HIPDNN_DATA_FLOAT, 2, d, alias, 0),
                                      gb_tensor(2, "out", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0)};
    hipdnnBackendDescriptor_t op = gb_pointwise("copy", HIPDNN_POINTWISE_IDENTITY, t[0], NULL, t[1]);
    hipdnnBackendDescriptor_t g = gb_graph(g_handle, "alias_in", 1, &op);
    if (CHECK(g != NULL) && CHECK_OK(hipdnnBackendFinalize(g)) &&
        CHECK(gb_inferred_strides(g, 2, got) == 2))
        CHECK_MSG(got[0] == packed[0] && got[1] == packed[1], "out strides [%lld, %lld]",
                  (long long)got[0], (long long)got[1]);
    gb_destroy(&g);
    gb_destroy(&op);
    destroy_all(t, 2);
}

/* cuDNN frontend's rule: a pointwise output shaped as an input takes that input's strides
 * (gaps included), the first input that fits, through virtual tensors too; a virtual one
 * itself stays packed (engines lay those out). */
static void test_pointwise_output_takes_same_shape_input_strides(void) {
    int64_t d[2] = {4, 3}, row[2] = {1, 3}, gapped[2] = {10, 2}, got[HIPDNN_MAX_DIMS];
    hipdnnBackendDescriptor_t t[5] = {
        gb_tensor(1, "bcast", HIPDNN_DATA_FLOAT, 2, row, NULL, 0),
        gb_tensor(2, "view", HIPDNN_DATA_FLOAT, 2, d, gapped, 0),
        gb_tensor(3, "sum", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0),
        gb_tensor(4, "mid", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 1),
        gb_tensor(5, "act", HIPDNN_DATA_FLOAT, 0, NULL, NULL, 0)};
    /* sum = bcast + view: x does not have the output's shape, b does */
    hipdnnBackendDescriptor_t ops[3] = {
        gb_pointwise("add_view", HIPDNN_POINTWISE_ADD, t[0], t[1], t[2]),
        gb_pointwise("copy_mid", HIPDNN_POINTWISE_IDENTITY, t[1], NULL, t[3]),
        gb_pointwise("relu_act", HIPDNN_POINTWISE_RELU_FWD, t[3], NULL, t[4])};
    hipdnnBackendDescriptor_t g = gb_graph(g_handle, "strides_rule", 3, ops);
    if (CHECK(g != NULL) && CHECK_OK(hipdnnBackendFinalize(g))) {
        if (CHECK(gb_inferred_strides(g, 3, got) == 2))
            CHECK_MSG(got[0] == 10 && got[1] == 2, "sum strides [%lld, %lld], want [10, 2]",
                      (long long)got[0], (long long)got[1]);
        if (CHECK(gb_inferred_strides(g, 4, got) == 2))
            CHECK_MSG(got[0] == 3 && got[1] == 1, "virtual mid strides [%lld, %lld], want "
                      "packed", (long long)got[0], (long long)got[1]);
        if (CHECK(gb_inferred_strides(g, 5, got) == 2)) /* view's, carried through mid */
            CHECK_MSG(got[0] == 10 && got[1] == 2, "act strides [%lld, %lld], want [10, 2]",
                      (long long)got[0], (long long)got[1]);
    }
    gb_destroy(&g);
    destroy_all(ops, 3);
    destroy_all(t, 5);
}

static void test_refuses_empty_graph(void) {
    hipdnnBackendDescriptor_t g = gb_new(HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    REQUIRE(g);
    CHECK_OK(hipdnnBackendSetAttribute(g, HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_TYPE_HANDLE, 1,
                                       &g_handle));
    CHECK_STATUS(hipdnnBackendFinalize(g), HIPDNN_STATUS_BAD_PARAM);
    CHECK_ERR_NONEMPTY();
    gb_destroy(&g);
}

/* ---- conv -> add -> relu, executed ---------------------------------------------------------- */

/* Element (n, c, h, w) of a 4-D tensor with the given strides. */
static int64_t at4(const int64_t* st, int64_t n, int64_t c, int64_t h, int64_t w) {
    return n * st[0] + c * st[1] + h * st[2] + w * st[3];
}

/* y = relu(conv(x, w) + bias) in float64, y laid out as its descriptor says. */
static void reference_conv_add_relu(const car_graph* g, const float* x, const float* w,
                                    const float* bias, double* y) {
    int64_t ws[4];
    const int64_t* ys = g->y_strides;
    hipdnnSdkPackedStrides(4, g->w_dims, ws);
    int64_t groups = g->c / g->wc, k_per_group = g->k / groups;
    for (int64_t n = 0; n < g->n; ++n)
        for (int64_t k = 0; k < g->k; ++k) {
            int64_t c0 = (k / k_per_group) * g->wc;
            for (int64_t oh = 0; oh < g->ho; ++oh)
                for (int64_t ow = 0; ow < g->wo; ++ow) {
                    double acc = 0.0;
                    for (int64_t c = 0; c < g->wc; ++c)
                        for (int64_t r = 0; r < g->r; ++r)
                            for (int64_t s = 0; s < g->s; ++s) {
                                int64_t ih = oh * g->stride[0] - g->pad[0] + r * g->dilation[0];
                                int64_t iw = ow * g->stride[1] - g->pad[1] + s * g->dilation[1];
                                if (ih < 0 || ih >= g->h || iw < 0 || iw >= g->w) continue;
                                acc += (double)x[at4(g->x_strides, n, c0 + c, ih, iw)] *
                                       (double)w[at4(ws, k, c, r, s)];
                            }
                    acc += (double)bias[k];
                    y[at4(ys, n, k, oh, ow)] = acc > 0.0 ? acc : 0.0;
                }
        }
}

typedef struct {
    int64_t nx, nw, nb, ny;
    float *x, *w, *b, *y;
    float *x0, *w0, *b0; /* copies: inputs must be unchanged by a run */
    double* ref;
} car_data;

static void car_data_free(car_data* d) {
    free(d->x), free(d->w), free(d->b), free(d->y);
    free(d->x0), free(d->w0), free(d->b0), free(d->ref);
    memset(d, 0, sizeof(*d));
}

static int car_data_make(car_data* d, const car_graph* g) {
    memset(d, 0, sizeof(*d));
    d->nx = hipdnnSdkElementCount(4, g->x_dims);
    d->nw = hipdnnSdkElementCount(4, g->w_dims);
    d->nb = g->k;
    d->ny = hipdnnSdkElementCount(4, g->y_dims);
    d->x = random_floats(d->nx), d->w = random_floats(d->nw), d->b = random_floats(d->nb);
    d->y = malloc((size_t)d->ny * sizeof(float));
    d->x0 = malloc((size_t)d->nx * sizeof(float));
    d->w0 = malloc((size_t)d->nw * sizeof(float));
    d->b0 = malloc((size_t)d->nb * sizeof(float));
    d->ref = malloc((size_t)d->ny * sizeof(double));
    if (!d->x || !d->w || !d->b || !d->y || !d->x0 || !d->w0 || !d->b0 || !d->ref) return 0;
    memcpy(d->x0, d->x, (size_t)d->nx * sizeof(float));
    memcpy(d->w0, d->w, (size_t)d->nw * sizeof(float));
    memcpy(d->b0, d->b, (size_t)d->nb * sizeof(float));
    reference_conv_add_relu(g, d->x, d->w, d->b, d->ref);
    return 1;
}

static void poison(float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = NAN;
}

/* Every element written and within the conv fprop fp32 tolerance (docs/architecture.md,
 * "Tolerances"). */
static void check_against_reference(const car_data* d, const char* what) {
    const double tol = 1e-5;
    int64_t bad = 0, first = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < d->ny; ++i) {
        double got = d->y[i], want = d->ref[i], err = fabs(got - want);
        if (!(err <= tol + tol * fabs(want))) {
            if (first < 0) first = i;
            ++bad;
        }
        if (err > worst || isnan(got)) worst = isnan(got) ? INFINITY : err;
    }
    CHECK_MSG(bad == 0, "%s: %lld of %lld elements off (first at %lld: got %g, want %g), worst %g",
              what, (long long)bad, (long long)d->ny, (long long)first,
              first >= 0 ? (double)d->y[first] : 0.0, first >= 0 ? d->ref[first] : 0.0, worst);
    CHECK_MSG(memcmp(d->x, d->x0, (size_t)d->nx * sizeof(float)) == 0, "%s: x was modified", what);
    CHECK_MSG(memcmp(d->w, d->w0, (size_t)d->nw * sizeof(float)) == 0, "%s: w was modified", what);
    CHECK_MSG(memcmp(d->b, d->b0, (size_t)d->nb * sizeof(float)) == 0, "%s: bias was modified",
              what);
}

/* A finalized VARIANT_PACK over the given uids/pointers. */
static hipdnnBackendDescriptor_t make_variant_pack(int n, const int64_t* uids, void** ptrs,
                                                   void* workspace) {
    hipdnnBackendDescriptor_t vp = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    if (!vp) return NULL;
    int ok = CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                                HIPDNN_TYPE_INT64, n, uids)) &&
             CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                                HIPDNN_TYPE_VOID_PTR, n, ptrs)) &&
             CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                                HIPDNN_TYPE_VOID_PTR, 1, &workspace)) &&
             CHECK_OK(hipdnnBackendFinalize(vp));
    if (!ok) gb_destroy(&vp);
    return vp;
}

static hipdnnBackendDescriptor_t make_plan(hipdnnBackendDescriptor_t cfg) {
    hipdnnBackendDescriptor_t plan = gb_new(HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (!plan) return NULL;
    int ok = CHECK_OK(hipdnnBackendSetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                                HIPDNN_TYPE_HANDLE, 1, &g_handle)) &&
             gb_set_desc(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg) &&
             CHECK_OK(hipdnnBackendFinalize(plan));
    if (!ok) gb_destroy(&plan);
    return plan;
}

/* Runs a plan on the data; 1 if execute succeeded. */
static int run_plan(hipdnnBackendDescriptor_t plan, car_data* d, const char* what) {
    int64_t ws_size = -1, count = 0;
    if (!CHECK_OK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            HIPDNN_TYPE_INT64, 1, &count, &ws_size)) ||
        !CHECK(ws_size >= 0))
        return 0;
    void* ws = ws_size > 0 ? malloc((size_t)ws_size) : NULL;
    int64_t uids[4] = {CAR_X, CAR_W, CAR_BIAS, CAR_Y};
    void* ptrs[4] = {d->x, d->w, d->b, d->y};
    hipdnnBackendDescriptor_t vp = make_variant_pack(4, uids, ptrs, ws);
    poison(d->y, d->ny);
    int ok = vp && CHECK_OK(hipdnnBackendExecute(g_handle, plan, vp));
    if (ok) check_against_reference(d, what);
    gb_destroy(&vp);
    free(ws);
    return ok;
}

static void check_inferred_tensors(const car_graph* g) {
    /* y was given dims and no strides: hipdnn.h says an output follows its main input's
     * layout, and x is channels-last, so y is [n, k, ho, wo] packed as NHWC */
    int64_t want[4] = {g->ho * g->wo * g->k, 1, g->wo * g->k, g->k};
    CHECK_MSG(memcmp(g->y_strides, want, sizeof(want)) == 0,
              "non-virtual y [%lld, %lld, %lld, %lld] with no strides set got strides "
              "[%lld, %lld, %lld, %lld], not channels-last like x",
              (long long)g->y_dims[0], (long long)g->y_dims[1], (long long)g->y_dims[2],
              (long long)g->y_dims[3], (long long)g->y_strides[0], (long long)g->y_strides[1],
              (long long)g->y_strides[2], (long long)g->y_strides[3]);
    /* the user's descriptors keep what the user set: nothing is written back */
    int64_t dims[8], count = -1;
    hipdnnDataType_t dt = HIPDNN_DATA_FLOAT;
    CHECK_OK(hipdnnBackendGetAttribute(g->conv_out, HIPDNN_ATTR_TENSOR_DIMENSIONS,
                                       HIPDNN_TYPE_INT64, 8, &count, dims));
    CHECK_EQ_INT(count, 0);
    CHECK_OK(hipdnnBackendGetAttribute(g->add_out, HIPDNN_ATTR_TENSOR_DATA_TYPE,
                                       HIPDNN_TYPE_DATA_TYPE, 1, &count, &dt));
    CHECK(dt == HIPDNN_DATA_NOT_SET);

    /* and listed by TENSORS_EXT as new descriptors */
    CHECK_OK(hipdnnBackendGetAttribute(g->graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL));
    if (!CHECK_EQ_INT(count, 6)) return;
    hipdnnBackendDescriptor_t ts[6] = {0};
    CHECK_OK(hipdnnBackendGetAttribute(g->graph, HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 6, &count, ts));
    int seen = 0;
    for (int i = 0; i < 6; ++i) {
        if (!CHECK(ts[i] != NULL)) continue;
        int64_t uid = uid_of(ts[i]);
        if (uid >= 1 && uid <= 6) seen |= 1 << uid;
        if (uid == CAR_ADD) {
            CHECK_OK(hipdnnBackendGetAttribute(ts[i], HIPDNN_ATTR_TENSOR_DIMENSIONS,
                                               HIPDNN_TYPE_INT64, 8, &count, dims));
            CHECK(count == 4 && memcmp(dims, g->y_dims, sizeof(g->y_dims)) == 0);
            int64_t strides[8];
            CHECK_OK(hipdnnBackendGetAttribute(ts[i], HIPDNN_ATTR_TENSOR_STRIDES,
                                               HIPDNN_TYPE_INT64, 8, &count, strides));
            CHECK(count == 4 && strides[0] > 0 && strides[1] > 0 && strides[2] > 0 &&
                  strides[3] > 0);
            bool virt = false;
            CHECK_OK(hipdnnBackendGetAttribute(ts[i], HIPDNN_ATTR_TENSOR_IS_VIRTUAL,
                                               HIPDNN_TYPE_BOOLEAN, 1, &count, &virt));
            CHECK(virt == 1);
        }
        gb_destroy(&ts[i]);
    }
    CHECK_EQ_INT(seen, 0x7e);
}

static void check_graph_queries(const car_graph* g) {
    int64_t engines = -1, count = 0, global = -1;
    CHECK_OK(hipdnnGetEngineCount_ext(&engines));
    CHECK(engines >= 1);
    CHECK_OK(hipdnnBackendGetAttribute(g->graph, HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT,
                                       HIPDNN_TYPE_INT64, 1, &count, &global));
    CHECK_EQ_INT(global, engines);
    char* desc = gb_get_string(g->graph, HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT);
    CHECK_STR_CONTAINS(desc, "conv1");
    CHECK_STR_CONTAINS(desc, "bias_add");
    CHECK_STR_CONTAINS(desc, "relu1");
    free(desc);
    char* name = gb_get_string(g->graph, HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT);
    CHECK(name && strcmp(name, "conv_add_relu") == 0);
    free(name);
    /* a finalized graph is immutable */
    CHECK_STATUS(hipdnnBackendSetAttribute(g->graph, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
                                           HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->conv),
                 HIPDNN_STATUS_NOT_INITIALIZED);
}

/* The engine of a config: name, id and global index. */
static int engine_of(hipdnnBackendDescriptor_t cfg, char* name, size_t name_len, int64_t* index) {
    hipdnnBackendDescriptor_t eng = NULL;
    int64_t count = 0, id = 0;
    if (!CHECK_OK(hipdnnBackendGetAttribute(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE,
                                            HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &eng)) ||
        !CHECK(eng != NULL))
        return 0;
    char* nm = gb_get_string(eng, HIPDNN_ATTR_ENGINE_NAME_EXT);
    snprintf(name, name_len, "%s", nm ? nm : "");
    free(nm);
    CHECK_OK(hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_ID_EXT, HIPDNN_TYPE_INT64, 1,
                                       &count, &id));
    CHECK_MSG((uint64_t)id == hipdnnSdkFnv1a64(name), "engine '%s' id %llx is not FNV-1a of its name",
              name, (unsigned long long)id);
    CHECK_OK(hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX, HIPDNN_TYPE_INT64, 1,
                                       &count, index));
    int64_t mem = -1;
    CHECK_OK(hipdnnBackendGetAttribute(eng, HIPDNN_ATTR_ENGINE_MEMORY_SPACE_EXT,
                                       HIPDNN_TYPE_INT64, 1, &count, &mem));
    CHECK(mem == HIPDNN_MEMORY_HOST || mem == HIPDNN_MEMORY_DEVICE);
    hipdnnEngineInfo_ext_t info;
    memset(&info, 0, sizeof(info));
    CHECK_OK(hipdnnGetEngineInfo_ext(*index, &info));
    CHECK_MSG(strcmp(info.name, name) == 0 && info.engine_id == (uint64_t)id,
              "engine info %lld is '%s', the config's engine is '%s'", (long long)*index,
              info.name, name);
    gb_destroy(&eng);
    return 1;
}

static void test_conv_add_relu_executes(int64_t groups) {
    car_graph g;
    car_data d;
    memset(&d, 0, sizeof(d));
    if (!CHECK(car_build(&g, g_handle, groups))) goto done;
    check_inferred_tensors(&g);
    check_graph_queries(&g);
    if (!CHECK(car_data_make(&d, &g))) goto done;

    /* heuristics: ranked configs */
    hipdnnBackendDescriptor_t heur = gb_heur(g.graph, HIPDNN_HEUR_MODE_A);
    if (!heur) goto done;
    int64_t n = -1;
    CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL));
    if (!CHECK(n >= 1)) {
        char* report = gb_get_string(heur, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT);
        printf("   support report:\n%s\n", report ? report : "(none)");
        free(report);
        gb_destroy(&heur);
        goto done;
    }
    hipdnnBackendDescriptor_t* cfgs = calloc((size_t)n, sizeof(*cfgs));
    int64_t got = 0;
    CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs));
    CHECK_EQ_INT(got, n);
    char engine_name[128] = "";
    int64_t engine_index = -1;
    if (cfgs[0] && engine_of(cfgs[0], engine_name, sizeof(engine_name), &engine_index)) {
        hipdnnBackendDescriptor_t plan = make_plan(cfgs[0]);
        if (plan) {
            char* pname = gb_get_string(plan, HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT);
            CHECK(pname && strcmp(pname, engine_name) == 0);
            free(pname);
            int64_t mem = -1, count = 0;
            CHECK_OK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT,
                                               HIPDNN_TYPE_INT64, 1, &count, &mem));
            if (CHECK_MSG(mem == HIPDNN_MEMORY_HOST, "top engine '%s' is not a host engine",
                          engine_name)) {
                run_plan(plan, &d, "heuristic plan");
                /* a second run on fresh poison gives the same answer */
                run_plan(plan, &d, "heuristic plan, second run");
            }
            gb_destroy(&plan);
        }
        /* ENGINE + ENGINECFG built by hand for the same engine */
        hipdnnBackendDescriptor_t eng = gb_new(HIPDNN_BACKEND_ENGINE_DESCRIPTOR);
        hipdnnBackendDescriptor_t cfg = gb_new(HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        if (eng && cfg && gb_set_desc(eng, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, g.graph) &&
            CHECK_OK(hipdnnBackendSetAttribute(eng, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                               HIPDNN_TYPE_INT64, 1, &engine_index)) &&
            CHECK_OK(hipdnnBackendFinalize(eng)) &&
            gb_set_desc(cfg, HIPDNN_ATTR_ENGINECFG_ENGINE, eng) &&
            CHECK_OK(hipdnnBackendFinalize(cfg))) {
            hipdnnBackendDescriptor_t plan2 = make_plan(cfg);
            if (plan2) run_plan(plan2, &d, "hand-built config");
            gb_destroy(&plan2);
        }
        /* an engine index out of range */
        hipdnnBackendDescriptor_t bad = gb_new(HIPDNN_BACKEND_ENGINE_DESCRIPTOR);
        int64_t far = 1000000;
        if (bad) {
            hipdnnStatus_t st = hipdnnBackendSetAttribute(bad, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                          HIPDNN_TYPE_INT64, 1, &far);
            if (st == HIPDNN_STATUS_SUCCESS) {
                gb_set_desc(bad, HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, g.graph);
                st = hipdnnBackendFinalize(bad);
            }
            check_note_call(st);
            CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM || st == HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                      "engine index %lld gave %s", (long long)far, hipdnnGetErrorString(st));
            CHECK_ERR_NONEMPTY();
        }
        gb_destroy(&bad);
        gb_destroy(&cfg);
        gb_destroy(&eng);
    }
    for (int64_t i = 0; i < n; ++i) gb_destroy(&cfgs[i]);
    free(cfgs);
    gb_destroy(&heur);
done:
    car_data_free(&d);
    car_destroy(&g);
}

static void test_conv_add_relu_executes_dense(void) { test_conv_add_relu_executes(1); }
static void test_conv_add_relu_executes_grouped(void) { test_conv_add_relu_executes(2); }

/* Variant packs must name every non-virtual tensor, and only the graph's. */
static void test_variant_pack_errors(void) {
    car_graph g;
    car_data d;
    memset(&d, 0, sizeof(d));
    hipdnnBackendDescriptor_t heur = NULL, plan = NULL, vp = NULL;
    hipdnnBackendDescriptor_t cfg = NULL;
    if (!CHECK(car_build(&g, g_handle, 1)) || !CHECK(car_data_make(&d, &g))) goto done;
    heur = gb_heur(g.graph, HIPDNN_HEUR_MODE_A);
    int64_t count = 0;
    if (!heur || !CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                                     HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                                                     &cfg)) ||
        !CHECK(count >= 1 && cfg))
        goto done;
    plan = make_plan(cfg);
    if (!plan) goto done;
    int64_t ws_size = 0;
    CHECK_OK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                       HIPDNN_TYPE_INT64, 1, &count, &ws_size));
    void* ws = ws_size > 0 ? malloc((size_t)ws_size) : NULL;

    /* bias missing */
    int64_t uids3[3] = {CAR_X, CAR_W, CAR_Y};
    void* ptrs3[3] = {d.x, d.w, d.y};
    vp = make_variant_pack(3, uids3, ptrs3, ws);
    if (vp) {
        CHECK_STATUS(hipdnnBackendExecute(g_handle, plan, vp), HIPDNN_STATUS_BAD_PARAM);
        CHECK_ERR_CONTAINS("bias");
    }
    gb_destroy(&vp);
    /* a NULL pointer for y */
    int64_t uids4[4] = {CAR_X, CAR_W, CAR_BIAS, CAR_Y};
    void* ptrs4[4] = {d.x, d.w, d.b, NULL};
    vp = make_variant_pack(4, uids4, ptrs4, ws);
    if (vp) {
        hipdnnStatus_t st = hipdnnBackendExecute(g_handle, plan, vp);
        check_note_call(st);
        CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM || st == HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                  "NULL data pointer gave %s", hipdnnGetErrorString(st));
        CHECK_ERR_CONTAINS("'y'");
    }
    gb_destroy(&vp);
    /* a uid the graph does not have */
    int64_t uids5[5] = {CAR_X, CAR_W, CAR_BIAS, CAR_Y, 999};
    void* ptrs5[5] = {d.x, d.w, d.b, d.y, d.y};
    vp = make_variant_pack(5, uids5, ptrs5, ws);
    if (vp) {
        CHECK_STATUS(hipdnnBackendExecute(g_handle, plan, vp), HIPDNN_STATUS_BAD_PARAM);
        CHECK_ERR_CONTAINS("999");
    }
    gb_destroy(&vp);
    /* ids and pointers of different lengths */
    vp = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    if (vp) {
        CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                           HIPDNN_TYPE_INT64, 4, uids4));
        CHECK_OK(hipdnnBackendSetAttribute(vp, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           HIPDNN_TYPE_VOID_PTR, 3, ptrs3));
        /* unfinalized: execute refuses it */
        CHECK_STATUS(hipdnnBackendExecute(g_handle, plan, vp),
                     HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED);
        CHECK_STATUS(hipdnnBackendFinalize(vp), HIPDNN_STATUS_BAD_PARAM);
        CHECK_ERR_NONEMPTY();
    }
    gb_destroy(&vp);
    /* the pack in the plan's slot and the other way round */
    vp = make_variant_pack(4, uids4, (void*[]){d.x, d.w, d.b, d.y}, ws);
    if (vp) {
        CHECK_STATUS(hipdnnBackendExecute(g_handle, vp, plan), HIPDNN_STATUS_BAD_PARAM);
        CHECK_STATUS(hipdnnBackendExecute(NULL, plan, vp), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    }
    gb_destroy(&vp);
    free(ws);
done:
    gb_destroy(&cfg);
    gb_destroy(&plan);
    gb_destroy(&heur);
    car_data_free(&d);
    car_destroy(&g);
}

/* An unfinalized graph cannot be asked for engines. */
static void test_heuristics_need_finalized_graph(void) {
    int64_t dd[2] = {3, 4};
    hipdnnBackendDescriptor_t a = gb_tensor(1, "a", HIPDNN_DATA_FLOAT, 2, dd, NULL, 0);
    hipdnnBackendDescriptor_t b = gb_tensor(2, "b", HIPDNN_DATA_FLOAT, 2, dd, NULL, 0);
    hipdnnBackendDescriptor_t op = gb_pointwise("r", HIPDNN_POINTWISE_RELU_FWD, a, NULL, b);
    hipdnnBackendDescriptor_t g = gb_graph(g_handle, "unfinalized", 1, &op);
    hipdnnBackendDescriptor_t heur = gb_new(HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    if (g && heur) {
        hipdnnBackendHeurMode_t mode = HIPDNN_HEUR_MODE_A;
        CHECK_OK(hipdnnBackendSetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_TYPE_HEUR_MODE,
                                           1, &mode));
        hipdnnStatus_t st = hipdnnBackendSetAttribute(
            heur, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
        if (st == HIPDNN_STATUS_SUCCESS) st = hipdnnBackendFinalize(heur);
        check_note_call(st);
        CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                  "heuristics over an unfinalized graph gave %s", hipdnnGetErrorString(st));
        int64_t n = 0;
        hipdnnBackendDescriptor_t cfg = NULL;
        st = hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                       HIPDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &cfg);
        CHECK_MSG(st == HIPDNN_STATUS_BAD_PARAM_NOT_FINALIZED,
                  "results of an unfinalized ENGINEHEUR gave %s", hipdnnGetErrorString(st));
    }
    gb_destroy(&heur);
    gb_destroy(&g);
    gb_destroy(&op);
    gb_destroy(&a);
    gb_destroy(&b);
}

static void test_log_callback_received_messages(void) {
    /* The callback was set at info level before the first handle: loading the plugins
     * and running graphs must have produced at least one line. */
    int n = log_capture_count();
    CHECK_MSG(n > 0, "the log callback received %d messages", n);
    log_capture_stop();
    CHECK_OK(hipdnnSetLogLevel_ext(HIPDNN_LOG_WARN));
    CHECK_STATUS(hipdnnSetLogLevel_ext((hipdnnLogLevel_t)42), HIPDNN_STATUS_BAD_PARAM);
}


/* ---- the core's seams ---------------------------------------------------------------- */

static void test_last_error_read_clears_and_peek_keeps(void) {
    CHECK_STATUS(hipdnnBackendCreateDescriptor((hipdnnBackendDescriptorType_t)9999, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    const char* peek = hipdnnPeekLastErrorString_ext();
    CHECK(peek[0] != '\0');
    CHECK(hipdnnPeekLastErrorString_ext()[0] != '\0'); /* peeking twice keeps it */
    char buf[256] = "#";
    hipdnnGetLastErrorString(buf, sizeof(buf));
    CHECK_STR_CONTAINS(buf, "NULL");
    CHECK(hipdnnPeekLastErrorString_ext()[0] == '\0'); /* reading cleared it */
    char small[4];
    CHECK_STATUS(hipdnnBackendCreateDescriptor((hipdnnBackendDescriptorType_t)9999, NULL),
                 HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    hipdnnGetLastErrorString(small, sizeof(small)); /* truncated, terminated */
    CHECK(strlen(small) == 3);
    hipdnnGetLastErrorString(NULL, 0); /* no crash */
}

static void test_op_table_describes_every_operation_descriptor(void) {
    int64_t n = 0;
    CHECK_OK(hipdnnGetOpCount_ext(&n));
    CHECK(n >= 4);
    int32_t last_kind = 0;
    for (int64_t i = 0; i < n; ++i) {
        const hipdnnOpInfo_ext_t* op = NULL;
        if (!CHECK_OK(hipdnnGetOpInfo_ext(i, &op))) continue;
        /* kinds ascend in table order (graph.fbs's union tags); reserved ones are skipped */
        CHECK(op->kind > last_kind);
        last_kind = op->kind;
        hipdnnBackendDescriptor_t d = NULL;
        CHECK_OK(hipdnnBackendCreateDescriptor(op->descriptor_type, &d));
        hipdnnBackendDescriptorType_t type = HIPDNN_INVALID_TYPE;
        CHECK_OK(hipdnnBackendGetDescriptorType_ext(d, &type));
        CHECK_EQ_INT(type, op->descriptor_type);
        for (int32_t a = 0; a < op->num_attrs; ++a) { /* every parameter reads back */
            int64_t count = -1;
            CHECK_OK(hipdnnBackendGetAttribute(d, op->attrs[a].attr, op->attrs[a].type, 0, &count,
                                               NULL));
        }
        gb_destroy(&d);
    }
    const hipdnnOpInfo_ext_t* op = NULL;
    CHECK_STATUS(hipdnnGetOpInfo_ext(n, &op), HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
    CHECK_STATUS(hipdnnGetOpInfo_ext(0, NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
}

/* A graph keeps its handle alive: engines check support on it after the user let go. */
static void test_graph_keeps_its_handle(void) {
    hipdnnHandle_t h2 = NULL;
    if (!CHECK_OK(hipdnnCreate(&h2))) return;
    int64_t dims[1] = {5};
    hipdnnBackendDescriptor_t x = gb_tensor(1, "x", HIPDNN_DATA_FLOAT, 1, dims, NULL, 0);
    hipdnnBackendDescriptor_t y = gb_tensor(2, "y", HIPDNN_DATA_FLOAT, 1, dims, NULL, 0);
    hipdnnBackendDescriptor_t op = gb_pointwise("copy", HIPDNN_POINTWISE_IDENTITY, x, NULL, y);
    hipdnnBackendDescriptor_t graph = op ? gb_graph(h2, "kept", 1, &op) : NULL;
    CHECK_OK(hipdnnDestroy(h2));
    if (graph && CHECK_OK(hipdnnBackendFinalize(graph))) {
        hipdnnBackendDescriptor_t heur = gb_heur(graph, HIPDNN_HEUR_MODE_A);
        CHECK(heur != NULL);
        gb_destroy(&heur);
    }
    gb_destroy(&graph);
    gb_destroy(&op);
    gb_destroy(&x);
    gb_destroy(&y);
}

static void test_engines_are_ordered_by_name(void) {
    int64_t n = 0;
    CHECK_OK(hipdnnGetEngineCount_ext(&n));
    hipdnnEngineInfo_ext_t prev, cur;
    for (int64_t i = 0; i < n; ++i) {
        CHECK_OK(hipdnnGetEngineInfo_ext(i, &cur));
        if (i > 0) CHECK(strcmp(prev.name, cur.name) < 0);
        prev = cur;
    }
}

/* y = x * alpha with alpha given at execute time (a by-value tensor with no VALUE_EXT). */
static void test_runtime_by_value_scalar(void) {
    int64_t dims[2] = {3, 4}, one[1] = {1};
    hipdnnBackendDescriptor_t x = gb_tensor(1, "x", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t y = gb_tensor(3, "y", HIPDNN_DATA_FLOAT, 2, dims, NULL, 0);
    hipdnnBackendDescriptor_t alpha = gb_new(HIPDNN_BACKEND_TENSOR_DESCRIPTOR);
    int64_t uid = 2;
    hipdnnDataType_t dt = HIPDNN_DATA_FLOAT;
    bool yes = true;
    REQUIRE(x && y && alpha);
    CHECK_OK(hipdnnBackendSetAttribute(alpha, HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_TYPE_INT64, 1,
                                       &uid));
    CHECK_OK(hipdnnBackendSetAttribute(alpha, HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_TYPE_DATA_TYPE,
                                       1, &dt));
    CHECK_OK(hipdnnBackendSetAttribute(alpha, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_TYPE_INT64, 1,
                                       one));
    CHECK_OK(hipdnnBackendSetAttribute(alpha, HIPDNN_ATTR_TENSOR_IS_BY_VALUE, HIPDNN_TYPE_BOOLEAN,
                                       1, &yes));
    CHECK_OK(hipdnnBackendFinalize(alpha));
    hipdnnBackendDescriptor_t mul = gb_pointwise("scale", HIPDNN_POINTWISE_MUL, x, alpha, y);
    hipdnnBackendDescriptor_t graph = mul ? gb_graph(g_handle, "runtime_scalar", 1, &mul) : NULL;
    hipdnnBackendDescriptor_t heur = NULL, plan = NULL, cfg = NULL;
    void* ws = NULL;
    if (!graph || !CHECK_OK(hipdnnBackendFinalize(graph))) goto done;
    heur = gb_heur(graph, HIPDNN_HEUR_MODE_A);
    int64_t n = 0;
    hipdnnBackendDescriptor_t cfgs[8] = {NULL};
    if (!heur || !CHECK_OK(hipdnnBackendGetAttribute(heur, HIPDNN_ATTR_ENGINEHEUR_RESULTS,
                                                     HIPDNN_TYPE_BACKEND_DESCRIPTOR, 8, &n, cfgs)))
        goto done;
    /* host pointers: the reference engine's config (a GPU engine may come first) */
    for (int64_t i = 0; i < n && i < 8; ++i) {
        char name[64];
        int64_t index = 0;
        if (!cfg && engine_of(cfgs[i], name, sizeof(name), &index) &&
            strcmp(name, "reference_cpu") == 0)
            cfg = cfgs[i];
        else
            gb_destroy(&cfgs[i]);
    }
    if (!CHECK_MSG(cfg != NULL, "no reference_cpu config among %lld", (long long)n)) goto done;
    plan = make_plan(cfg);
    if (!plan) goto done;
    float xs[12], ys[12];
    for (int i = 0; i < 12; ++i) {
        xs[i] = 0.25f * (float)(i + 1) - 1.0f;
        ys[i] = NAN;
    }
    /* The engine keeps each execution's tensor table and block buffers there. */
    int64_t ws_size = 0;
    CHECK_OK(hipdnnBackendGetAttribute(plan, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                       HIPDNN_TYPE_INT64, 1, &n, &ws_size));
    ws = malloc(ws_size > 0 ? (size_t)ws_size : 1);
    if (!CHECK(ws)) goto done;
    for (int round = 0; round < 2; ++round) {
        float a = round ? -3.5f : 2.0f; /* a new value each run, same plan */
        int64_t uids[3] = {1, 2, 3};
        void* ptrs[3] = {xs, &a, ys};
        hipdnnBackendDescriptor_t pack = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
        CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                           HIPDNN_TYPE_INT64, 3, uids));
        CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           HIPDNN_TYPE_VOID_PTR, 3, ptrs));
        CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                           HIPDNN_TYPE_VOID_PTR, 1, &ws));
        CHECK_OK(hipdnnBackendFinalize(pack));
        CHECK_OK(hipdnnBackendExecute(g_handle, plan, pack));
        for (int i = 0; i < 12; ++i)
            CHECK_MSG(ys[i] == xs[i] * a, "y[%d] = %g, want %g", i, ys[i], xs[i] * a);
        gb_destroy(&pack);
    }
    /* the scalar's pointer is required like any other */
    {
        int64_t uids[2] = {1, 3};
        void* ptrs[2] = {xs, ys};
        hipdnnBackendDescriptor_t pack = gb_new(HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
        CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                           HIPDNN_TYPE_INT64, 2, uids));
        CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                           HIPDNN_TYPE_VOID_PTR, 2, ptrs));
        CHECK_OK(hipdnnBackendSetAttribute(pack, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                           HIPDNN_TYPE_VOID_PTR, 1, &ws));
        CHECK_OK(hipdnnBackendFinalize(pack));
        CHECK_STATUS(hipdnnBackendExecute(g_handle, plan, pack), HIPDNN_STATUS_BAD_PARAM);
        CHECK_ERR_CONTAINS("uid 2");
        gb_destroy(&pack);
    }
done:
    free(ws);
    gb_destroy(&plan);
    gb_destroy(&cfg);
    gb_destroy(&heur);
    gb_destroy(&graph);
    gb_destroy(&mul);
    gb_destroy(&alpha);
    gb_destroy(&x);
    gb_destroy(&y);
}

int main(void) {
    unsetenv("HIPDNN_PLUGIN_DIR"); /* the default folder: the shipped engines */
    const char* seed = getenv("HIPDNN_TEST_SEED");
    g_rng = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    printf("seed %llu (set HIPDNN_TEST_SEED to repeat)\n", (unsigned long long)g_rng);
    if (!CHECK_OK(log_capture_start(HIPDNN_LOG_INFO))) return check_finish();

    RUN_TEST(test_error_strings_name_every_status);
    RUN_TEST(test_version_string);
    RUN_TEST(test_handle_lifecycle);
    if (!CHECK_OK(hipdnnCreate(&g_handle))) return check_finish();
    RUN_TEST(test_tensor_attributes_round_trip);
    RUN_TEST(test_tensor_by_value_scalar);
    RUN_TEST(test_tensor_without_uid_does_not_finalize);
    RUN_TEST(test_wrong_attribute_type_count_or_name);
    RUN_TEST(test_null_pointers);
    RUN_TEST(test_conv_descriptor);
    RUN_TEST(test_matmul_descriptor);
    RUN_TEST(test_pointwise_descriptor);
    RUN_TEST(test_batchnorm_inference_descriptor);
    RUN_TEST(test_knob_choice_descriptor);
    RUN_TEST(test_refuses_conv_weight_channels_not_dividing_image);
    RUN_TEST(test_refuses_matmul_inner_dim_mismatch);
    RUN_TEST(test_refuses_non_broadcastable_pointwise);
    RUN_TEST(test_refuses_duplicate_uid);
    RUN_TEST(test_refuses_cycle);
    RUN_TEST(test_refuses_input_neither_supplied_nor_produced);
    RUN_TEST(test_refuses_two_components);
    RUN_TEST(test_refuses_tensor_produced_twice);
    RUN_TEST(test_refuses_empty_graph);
    RUN_TEST(test_refuses_output_strides_that_overlap);
    RUN_TEST(test_aliasing_input_gives_a_packed_output);
    RUN_TEST(test_pointwise_output_takes_same_shape_input_strides);
    RUN_TEST(test_heuristics_need_finalized_graph);
    RUN_TEST(test_conv_add_relu_executes_dense);
    RUN_TEST(test_conv_add_relu_executes_grouped);
    RUN_TEST(test_variant_pack_errors);
    RUN_TEST(test_last_error_read_clears_and_peek_keeps);
    RUN_TEST(test_op_table_describes_every_operation_descriptor);
    RUN_TEST(test_engines_are_ordered_by_name);
    RUN_TEST(test_graph_keeps_its_handle);
    RUN_TEST(test_runtime_by_value_scalar);
    RUN_TEST(test_log_callback_received_messages);
    CHECK_OK(hipdnnDestroy(g_handle));
    return check_finish();
}
