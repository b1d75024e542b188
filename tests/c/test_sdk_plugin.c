/* The SDK's shared plugin plumbing (hipdnn_sdk_plugin.h) and reasons to decline
 * (hipdnnSdkDecline), called directly: what every engine plugin's entry points now rely on.
 * The plugins themselves are driven through the loader by the other tests. */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "hipdnn/hipdnn_sdk.h"
#include "hipdnn/hipdnn_sdk_plugin.h"

#define ENGINE "sdk_test_engine"

static void test_decline_is_one_bounded_line(void) {
    char why[64];
    CHECK(!hipdnnSdkDecline(why, sizeof(why), "eng", "node '%s': %d", "a\nb\tc\rd", 3));
    CHECK_MSG(strcmp(why, "eng: node 'a b c d': 3") == 0, "\"%s\"", why);
    CHECK(!hipdnnSdkDecline(why, sizeof(why), NULL, "no prefix"));
    CHECK_MSG(strcmp(why, "no prefix") == 0, "\"%s\"", why);
    /* Cut at len - 1, terminated, nothing written past it, the prefix cut too. */
    char small[9];
    memset(small, 'x', sizeof(small));
    hipdnnSdkDecline(small, 6, "engine_name", "%s", "detail");
    CHECK_MSG(strcmp(small, "engin") == 0 && small[6] == 'x', "\"%.6s\"", small);
    memset(small, 'x', sizeof(small));
    hipdnnSdkDecline(small, 8, "ab", "%s", "0123456789");
    CHECK_MSG(strcmp(small, "ab: 012") == 0 && small[8] == 'x', "\"%.8s\"", small);
    CHECK(!hipdnnSdkDecline(NULL, 0, "eng", "nothing written"));
}

static void* set_other_error(void* arg) {
    (void)arg;
    hipdnnSdkPluginSetError("other thread");
    return NULL;
}

static char g_logged[256];
static int g_log_level = -1;
static void capture_log(int level, const char* message) {
    g_log_level = level;
    snprintf(g_logged, sizeof(g_logged), "%s", message);
}

static void test_diagnostics(void) {
    CHECK_EQ_INT(hipdnnSdkPluginFail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "out of %s", "memory"),
                 HIPDNN_PLUGIN_STATUS_ALLOC_FAILED);
    CHECK_MSG(strcmp(hipdnnSdkPluginLastError(), "out of memory") == 0, "\"%s\"",
              hipdnnSdkPluginLastError());
    pthread_t t; /* the last error is the calling thread's */
    REQUIRE(pthread_create(&t, NULL, set_other_error, NULL) == 0);
    pthread_join(t, NULL);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), "out of memory");
    hipdnnSdkPluginLog(HIPDNN_LOG_INFO, "dropped: no callback yet");
    hipdnnSdkPluginSetLogCallback(capture_log);
    hipdnnSdkPluginLog(HIPDNN_LOG_WARN, "line %d", 7);
    CHECK_EQ_INT(g_log_level, HIPDNN_LOG_WARN);
    CHECK_MSG(strcmp(g_logged, "line 7") == 0, "\"%s\"", g_logged);
    hipdnnSdkPluginSetLogCallback(NULL);
}

static void test_base_answers(void) {
    uint32_t major = 0, minor = 0;
    CHECK_EQ_INT(hipdnnSdkPluginAnswerVersion(ENGINE, 1, 1, &major, &minor),
                 HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK(major == 1 && minor == 1);
    CHECK_EQ_INT(hipdnnSdkPluginAnswerVersion(ENGINE, 1, 1, NULL, &minor),
                 HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), ENGINE ": GetApiVersion: NULL output");
    const char* s = NULL;
    CHECK_EQ_INT(hipdnnSdkPluginAnswerString(ENGINE, "GetVersion", "1.2.3", &s),
                 HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK(s && strcmp(s, "1.2.3") == 0);
    CHECK_EQ_INT(hipdnnSdkPluginAnswerString(ENGINE, "GetName", ENGINE, NULL),
                 HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), ENGINE ": GetName: NULL output");
    hipdnnPluginType_t type = HIPDNN_PLUGIN_TYPE_BENCHMARK;
    CHECK_EQ_INT(hipdnnSdkPluginAnswerType(ENGINE, &type), HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK_EQ_INT(type, HIPDNN_PLUGIN_TYPE_ENGINE);
    CHECK_EQ_INT(hipdnnSdkPluginAnswerType(ENGINE, NULL), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
}

static hipdnnPluginStatus_t check_config(uint64_t id, int nknobs) {
    hipdnnSdkKnobChoice knob = {7, 1};
    hipdnnSdkEngineConfig cfg = {id, nknobs, nknobs ? &knob : NULL};
    uint8_t* bytes = NULL;
    size_t size = 0;
    if (hipdnnSdkEngineConfigEncode(&cfg, &bytes, &size) != 0) return (hipdnnPluginStatus_t)-1;
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckConfig(ENGINE, bytes, size, "Fn");
    free(bytes);
    return st;
}

/* Knob choices against an engine's table: each value, its default when not chosen. */
static hipdnnPluginStatus_t config_knobs(const hipdnnSdkKnobChoice* choice, int n, int64_t* v) {
    static const hipdnnPluginKnobInfo_t table[] = {{9, "split", 0, 64, 0}, {27, "tile", 0, 256, 128}};
    hipdnnSdkEngineConfig cfg = {hipdnnSdkFnv1a64(ENGINE), n, (hipdnnSdkKnobChoice*)choice};
    uint8_t* bytes = NULL;
    size_t size = 0;
    if (hipdnnSdkEngineConfigEncode(&cfg, &bytes, &size) != 0) return (hipdnnPluginStatus_t)-1;
    hipdnnPluginStatus_t st = hipdnnSdkPluginConfigKnobs(ENGINE, bytes, size, "Fn", table, 2, v);
    free(bytes);
    return st;
}

static void test_config_knobs(void) {
    int64_t v[2] = {-1, -1};
    const hipdnnSdkKnobChoice split = {9, 5}, big = {9, 65}, other = {26, 1};
    const hipdnnSdkKnobChoice twice[2] = {{27, 64}, {27, 256}};
    CHECK_EQ_INT(config_knobs(&split, 1, v), HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK_MSG(v[0] == 5 && v[1] == 128, "values %lld %lld", (long long)v[0], (long long)v[1]);
    CHECK_EQ_INT(config_knobs(NULL, 0, v), HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK_MSG(v[0] == 0 && v[1] == 128, "defaults %lld %lld", (long long)v[0], (long long)v[1]);
    CHECK_EQ_INT(config_knobs(&big, 1, v), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), "knob 9 = 65: out of the knob's range");
    CHECK_EQ_INT(config_knobs(&other, 1, v), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), "knob 26 = 1: the engine has no such knob");
    CHECK_EQ_INT(config_knobs(twice, 2, v), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), "knob 27 = 256: chosen twice");
}

static void test_engine_and_config_checks(void) {
    const uint64_t id = hipdnnSdkFnv1a64(ENGINE);
    CHECK_EQ_INT(hipdnnSdkPluginCheckEngine(ENGINE, id, "Fn"), HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK_EQ_INT(hipdnnSdkPluginCheckEngine(ENGINE, id ^ 1, "Fn"), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), ENGINE ": Fn: unknown engine id");
    CHECK_EQ_INT(check_config(id, 0), HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK_EQ_INT(check_config(id ^ 1, 0), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_EQ_INT(check_config(id, 1), HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), ENGINE ": Fn: knob 7 = 1: the engine has no knobs");
    const uint8_t junk[5] = {1, 2, 3, 4, 5};
    CHECK_EQ_INT(hipdnnSdkPluginCheckConfig(ENGINE, junk, sizeof(junk), "Fn"),
                 HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), ENGINE ": Fn: ");
}

/* A support check that declines graphs of more than one node. */
static bool one_node_only(void* ctx, const hipdnnSdkGraph* g, char* why, size_t len) {
    (void)ctx;
    return g->num_nodes == 1 ||
           hipdnnSdkDecline(why, len, ENGINE, "%d nodes, one at most", (int)g->num_nodes);
}

/* y = relu(x), count times over (x -> relu -> t1 -> relu -> ...). */
static void relu_chain(int count, uint8_t** bytes, size_t* size) {
    hipdnnSdkTensor t[3];
    hipdnnSdkNode n[2];
    memset(t, 0, sizeof(t));
    for (int i = 0; i <= count; ++i) {
        t[i].uid = i + 1;
        t[i].name = (char*)(i == 0 ? "x" : i == count ? "y" : "t");
        t[i].data_type = HIPDNN_DATA_FLOAT;
        t[i].ndim = 1;
        t[i].dims[0] = 4;
        t[i].strides[0] = 1;
        t[i].is_virtual = i > 0 && i < count;
    }
    for (int i = 0; i < count; ++i) {
        hipdnnSdkNodeInit(&n[i], HIPDNN_OP_POINTWISE);
        n[i].name = (char*)(i == 0 ? "relu0" : "relu1");
        n[i].compute_type = HIPDNN_DATA_FLOAT;
        n[i].attrs[HIPDNN_PW_MODE].i[0] = HIPDNN_POINTWISE_RELU_FWD;
        n[i].attrs[HIPDNN_PW_MODE].count = 1;
        n[i].inputs[HIPDNN_PW_X] = i + 1;
        n[i].outputs[HIPDNN_PW_Y] = i + 2;
    }
    hipdnnSdkGraph g = {(char*)"chain", count + 1, t, count, n};
    if (hipdnnSdkGraphEncode(&g, bytes, size) != 0) *bytes = NULL;
}

static void test_applicable_and_reason(void) {
    uint8_t *one = NULL, *two = NULL;
    size_t one_size = 0, two_size = 0;
    relu_chain(1, &one, &one_size);
    relu_chain(2, &two, &two_size);
    REQUIRE(one && two);
    bool yes = false;
    CHECK_EQ_INT(hipdnnSdkPluginApplicable(ENGINE, one, one_size, one_node_only, NULL, &yes),
                 HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK(yes);
    CHECK_EQ_INT(hipdnnSdkPluginApplicable(ENGINE, two, two_size, one_node_only, NULL, &yes),
                 HIPDNN_PLUGIN_STATUS_SUCCESS);
    CHECK(!yes);
    const uint8_t junk[5] = {1, 2, 3, 4, 5};
    CHECK_EQ_INT(hipdnnSdkPluginApplicable(ENGINE, junk, sizeof(junk), one_node_only, NULL, &yes),
                 HIPDNN_PLUGIN_STATUS_BAD_PARAM);
    CHECK_STR_CONTAINS(hipdnnSdkPluginLastError(), ENGINE ": GetApplicableEngineIds: ");
    char reason[128];
    hipdnnSdkPluginReason(ENGINE, one, one_size, one_node_only, NULL, reason, sizeof(reason));
    CHECK_MSG(strcmp(reason, ENGINE ": applicable (no reason to decline)") == 0, "%s", reason);
    hipdnnSdkPluginReason(ENGINE, two, two_size, one_node_only, NULL, reason, sizeof(reason));
    CHECK_MSG(strcmp(reason, ENGINE ": 2 nodes, one at most") == 0, "%s", reason);
    hipdnnSdkPluginReason(ENGINE, junk, sizeof(junk), one_node_only, NULL, reason, sizeof(reason));
    CHECK_STR_CONTAINS(reason, ENGINE ": ");
    free(one);
    free(two);
}

/* The one table of data types: every type's name and size, the rest unknown. */
static void test_data_type_table(void) {
    static const struct {
        hipdnnDataType_t t;
        const char* name;
        size_t size;
    } want[] = {{HIPDNN_DATA_FLOAT, "float32", 4}, {HIPDNN_DATA_DOUBLE, "float64", 8},
                {HIPDNN_DATA_HALF, "float16", 2},  {HIPDNN_DATA_BFLOAT16, "bfloat16", 2},
                {HIPDNN_DATA_INT8, "int8", 1},     {HIPDNN_DATA_INT32, "int32", 4},
                {HIPDNN_DATA_INT64, "int64", 8},   {HIPDNN_DATA_UINT8, "uint8", 1},
                {HIPDNN_DATA_BOOLEAN, "bool", 1},  {HIPDNN_DATA_NOT_SET, "not_set", 0}};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); ++i) {
        CHECK_MSG(strcmp(hipdnnSdkDataTypeName(want[i].t), want[i].name) == 0, "%s",
                  want[i].name);
        CHECK_EQ_INT(hipdnnSdkDataTypeSize(want[i].t), want[i].size);
    }
    CHECK(strcmp(hipdnnSdkDataTypeName((hipdnnDataType_t)5), "unknown") == 0);
    CHECK_EQ_INT(hipdnnSdkDataTypeSize((hipdnnDataType_t)5), 0);
}

/* A tensor's span: the one overflow-checked sum the backend and _C share. */
static void test_span_elements(void) {
    int64_t span = -1;
    const int64_t dims[3] = {2, 3, 4}, packed[3] = {12, 4, 1}, padded[3] = {100, 10, 2};
    CHECK(hipdnnSdkSpanElements(3, dims, packed, &span) && span == 24);
    CHECK(hipdnnSdkSpanElements(3, dims, padded, &span) && span == 1 + 100 + 20 + 6);
    CHECK(hipdnnSdkSpanElements(0, dims, packed, &span) && span == 1);
    const int64_t empty[3] = {2, 0, 4}, negative[3] = {12, -4, 1};
    CHECK(hipdnnSdkSpanElements(3, empty, packed, &span) && span == 0);
    CHECK(!hipdnnSdkSpanElements(3, dims, negative, &span));
    const int64_t big[2] = {INT64_C(1) << 35, (INT64_C(1) << 35) + 1};
    const int64_t huge[2] = {(INT64_C(1) << 35) + 1, 1};
    CHECK(!hipdnnSdkSpanElements(2, big, huge, &span)); /* (2^35)(2^35 + 1) passes int64 */
}

int main(void) {
    RUN_TEST(test_decline_is_one_bounded_line);
    RUN_TEST(test_diagnostics);
    RUN_TEST(test_base_answers);
    RUN_TEST(test_engine_and_config_checks);
    RUN_TEST(test_config_knobs);
    RUN_TEST(test_applicable_and_reason);
    RUN_TEST(test_data_type_table);
    RUN_TEST(test_span_elements);
    return check_finish();
}
