/* test_device_runtime.c — the backend's device runtime (hipdnn.h "device runtime"):
 *   - without a GPU runtime: every call gives NOT_SUPPORTED with a message naming each
 *     library tried, pointer queries say host memory, HIPDNN_DEVICE_RUNTIME=cuda tries
 *     only libcuda (and says so), a bogus value tries both;
 *   - with a runtime (a real GPU, or the fake CUDA driver this test re-runs itself over):
 *     allocation, copies both ways and device to device, memset, streams, events,
 *     pointer kinds, devices, NULL arguments, and the driver's own errors passed on. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fake_gpu.h"
#include "hipdnn/hipdnn.h"

static int g_fake; /* running over the fake driver */

/* ---- no runtime --------------------------------------------------------------------- */

static void test_every_call_says_there_is_no_runtime(void) {
    const char* name = "unset";
    int count = -1;
    CHECK_STATUS(hipdnnGetDeviceRuntime_ext(&name, &count), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_CONTAINS("no GPU runtime with a device");
    CHECK_ERR_CONTAINS("hip:");
    CHECK_ERR_CONTAINS("cuda:");
    CHECK(strcmp(name, "none") == 0);
    CHECK_EQ_INT(count, 0);
    void* p = (void*)1;
    CHECK_STATUS(hipdnnDeviceMalloc_ext(&p, 64), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_CONTAINS("hipdnnDeviceMalloc_ext: no GPU runtime with a device");
    char host[16];
    CHECK_STATUS(hipdnnDeviceMemcpy_ext(host, host + 8, 8), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(hipdnnDeviceMemset_ext(host, 0, 8), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(hipdnnDeviceSynchronize_ext(), HIPDNN_STATUS_NOT_SUPPORTED);
    hipdnnStream_t s = NULL;
    CHECK_STATUS(hipdnnStreamCreate_ext(&s), HIPDNN_STATUS_NOT_SUPPORTED);
    hipdnnEvent_t e = NULL;
    CHECK_STATUS(hipdnnEventCreate_ext(&e), HIPDNN_STATUS_NOT_SUPPORTED);
    int dev = -5;
    CHECK_STATUS(hipdnnDeviceGet_ext(&dev), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_STATUS(hipdnnDeviceSet_ext(0), HIPDNN_STATUS_NOT_SUPPORTED);
    /* no-ops and pointer queries still succeed: without a runtime all memory is host */
    CHECK_OK(hipdnnDeviceFree_ext(NULL));
    CHECK_OK(hipdnnStreamDestroy_ext(NULL));
    CHECK_OK(hipdnnEventDestroy_ext(NULL));
    hipdnnMemorySpace_t space = HIPDNN_MEMORY_DEVICE;
    CHECK_OK(hipdnnPointerGetMemorySpace_ext(host, &space, &dev));
    CHECK_EQ_INT(space, HIPDNN_MEMORY_HOST);
    CHECK_EQ_INT(dev, -1);
}

/* Each forced choice is made in a fresh process (the runtime is resolved once).  On a
 * machine with that GPU the forced runtime is simply the one used. */
static int forced_runtime_found(const char* want) {
    const char* name = NULL;
    if (hipdnnGetDeviceRuntime_ext(&name, NULL) != HIPDNN_STATUS_SUCCESS) return 0;
    CHECK(strcmp(name, want) == 0);
    return 1;
}

static void forced_cuda_names_what_it_searched(void) {
    setenv("HIPDNN_DEVICE_RUNTIME", "cuda", 1);
    if (forced_runtime_found("cuda")) return;
    CHECK_STATUS(hipdnnGetDeviceRuntime_ext(NULL, NULL), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_CONTAINS("HIPDNN_DEVICE_RUNTIME=cuda allows only that runtime");
    CHECK_ERR_CONTAINS("libcuda.so.1");
    CHECK_MSG(strstr(check_last_error, "hip: ") == NULL, "hip was tried: %s", check_last_error);
}

static void forced_hip_names_what_it_searched(void) {
    setenv("HIPDNN_DEVICE_RUNTIME", "hip", 1);
    if (forced_runtime_found("hip")) return;
    CHECK_STATUS(hipdnnGetDeviceRuntime_ext(NULL, NULL), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_CONTAINS("libamdhip64");
    CHECK_MSG(strstr(check_last_error, "cuda: ") == NULL, "cuda was tried: %s",
              check_last_error);
}

static void bogus_runtime_name_tries_both(void) {
    setenv("HIPDNN_DEVICE_RUNTIME", "opencl", 1);
    if (hipdnnGetDeviceRuntime_ext(NULL, NULL) == HIPDNN_STATUS_SUCCESS) return;
    CHECK_STATUS(hipdnnGetDeviceRuntime_ext(NULL, NULL), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_CONTAINS("hip:");
    CHECK_ERR_CONTAINS("cuda:");
}

/* ---- with a runtime ------------------------------------------------------------------ */

static void test_runtime_reports_itself(void) {
    const char* name = NULL;
    int count = 0;
    REQUIRE_OK(hipdnnGetDeviceRuntime_ext(&name, &count));
    CHECK(name && (strcmp(name, "cuda") == 0 || strcmp(name, "hip") == 0));
    CHECK(count >= 1);
    int dev = -1;
    CHECK_OK(hipdnnDeviceGet_ext(&dev));
    CHECK(dev >= 0 && dev < count);
    CHECK_OK(hipdnnDeviceSet_ext(dev));
    CHECK_STATUS(hipdnnDeviceSet_ext(count), HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
    CHECK_ERR_CONTAINS("does not exist");
    CHECK_STATUS(hipdnnDeviceSet_ext(-1), HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND);
    CHECK_STATUS(hipdnnDeviceGet_ext(NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
}

static void test_copies_and_memset_round_trip(void) {
    enum { N = 1 << 16 };
    uint8_t* host = malloc(N);
    uint8_t* back = malloc(N);
    void *a = NULL, *b = NULL;
    REQUIRE(host && back);
    for (int i = 0; i < N; ++i) host[i] = (uint8_t)(i * 7 + 3);
    if (CHECK_OK(hipdnnDeviceMalloc_ext(&a, N)) && CHECK_OK(hipdnnDeviceMalloc_ext(&b, N))) {
        CHECK(a && b && a != b);
        CHECK_OK(hipdnnDeviceMemcpy_ext(a, host, N));        /* host -> device */
        CHECK_OK(hipdnnDeviceMemcpy_ext(b, a, N));           /* device -> device */
        memset(back, 0, N);
        CHECK_OK(hipdnnDeviceMemcpy_ext(back, b, N));        /* device -> host */
        CHECK(memcmp(back, host, N) == 0);
        CHECK_OK(hipdnnDeviceMemset_ext((char*)b + 100, 0x5A, 1000));
        CHECK_OK(hipdnnDeviceMemcpy_ext(back, b, N));
        int ok = 1;
        for (int i = 0; i < N; ++i)
            ok &= back[i] == (i >= 100 && i < 1100 ? 0x5A : host[i]);
        CHECK_MSG(ok, "memset wrote outside [100, 1100) or not all of it");
        CHECK_OK(hipdnnDeviceMemcpy_ext(a, host, 0)); /* zero bytes: nothing to do */
    }
    CHECK_OK(hipdnnDeviceFree_ext(a));
    CHECK_OK(hipdnnDeviceFree_ext(b));
    free(host);
    free(back);
}

static void test_streams_and_events(void) {
    enum { N = 4096 };
    hipdnnStream_t s = NULL;
    hipdnnEvent_t e0 = NULL, e1 = NULL;
    void* d = NULL;
    uint8_t host[N], back[N];
    for (int i = 0; i < N; ++i) host[i] = (uint8_t)(255 - i);
    REQUIRE_OK(hipdnnStreamCreate_ext(&s));
    CHECK(s != NULL);
    if (CHECK_OK(hipdnnEventCreate_ext(&e0)) && CHECK_OK(hipdnnEventCreate_ext(&e1)) &&
        CHECK_OK(hipdnnDeviceMalloc_ext(&d, N))) {
        CHECK_OK(hipdnnEventRecord_ext(e0, s));
        CHECK_OK(hipdnnDeviceMemcpyAsync_ext(d, host, N, s));
        CHECK_OK(hipdnnDeviceMemsetAsync_ext(d, 0x11, 16, s));
        CHECK_OK(hipdnnDeviceMemcpyAsync_ext(back, d, N, s));
        CHECK_OK(hipdnnEventRecord_ext(e1, s));
        CHECK_OK(hipdnnStreamWaitEvent_ext(NULL, e1)); /* the default stream after s */
        CHECK_OK(hipdnnEventSynchronize_ext(e1));
        CHECK_OK(hipdnnStreamSynchronize_ext(s));
        int ok = 1;
        for (int i = 0; i < N; ++i) ok &= back[i] == (i < 16 ? 0x11 : host[i]);
        CHECK_MSG(ok, "stream-ordered copies and memset gave the wrong bytes");
        float ms = -1.0f;
        CHECK_OK(hipdnnEventElapsedTime_ext(&ms, e0, e1));
        CHECK(ms >= 0.0f);
        CHECK_OK(hipdnnDeviceSynchronize_ext());
    }
    CHECK_STATUS(hipdnnEventRecord_ext(NULL, s), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnEventElapsedTime_ext(NULL, e0, e1), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_OK(hipdnnDeviceFree_ext(d));
    CHECK_OK(hipdnnEventDestroy_ext(e0));
    CHECK_OK(hipdnnEventDestroy_ext(e1));
    CHECK_OK(hipdnnStreamDestroy_ext(s));
}

static void test_pointer_kinds(void) {
    void* d = NULL;
    REQUIRE_OK(hipdnnDeviceMalloc_ext(&d, 256));
    hipdnnMemorySpace_t space = HIPDNN_MEMORY_HOST;
    int dev = -7, cur = -1;
    CHECK_OK(hipdnnDeviceGet_ext(&cur));
    CHECK_OK(hipdnnPointerGetMemorySpace_ext(d, &space, &dev));
    CHECK_EQ_INT(space, HIPDNN_MEMORY_DEVICE);
    CHECK_EQ_INT(dev, cur);
    CHECK_OK(hipdnnPointerGetMemorySpace_ext((char*)d + 255, &space, NULL)); /* interior */
    CHECK_EQ_INT(space, HIPDNN_MEMORY_DEVICE);
    int on_stack = 0;
    void* on_heap = malloc(64);
    CHECK_OK(hipdnnPointerGetMemorySpace_ext(&on_stack, &space, &dev));
    CHECK_EQ_INT(space, HIPDNN_MEMORY_HOST);
    CHECK_EQ_INT(dev, -1);
    CHECK_OK(hipdnnPointerGetMemorySpace_ext(on_heap, &space, NULL));
    CHECK_EQ_INT(space, HIPDNN_MEMORY_HOST);
    CHECK_OK(hipdnnPointerGetMemorySpace_ext(NULL, &space, NULL));
    CHECK_EQ_INT(space, HIPDNN_MEMORY_HOST);
    free(on_heap);
    CHECK_OK(hipdnnDeviceFree_ext(d));
}

static void test_null_arguments_and_zero_sizes(void) {
    void* p = (void*)1;
    CHECK_STATUS(hipdnnDeviceMalloc_ext(NULL, 16), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_OK(hipdnnDeviceMalloc_ext(&p, 0));
    CHECK(p == NULL);
    CHECK_STATUS(hipdnnDeviceMemcpy_ext(NULL, &p, 8), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_ERR_CONTAINS("dst is NULL");
    CHECK_STATUS(hipdnnDeviceMemset_ext(NULL, 0, 8), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnStreamCreate_ext(NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
    CHECK_STATUS(hipdnnEventCreate_ext(NULL), HIPDNN_STATUS_BAD_PARAM_NULL_POINTER);
}

/* The fake driver's failures come back with the call and the driver's words. */
static void test_driver_errors_are_passed_on(void) {
    setenv("FAKE_CUDA_OOM", "1", 1);
    void* p = NULL;
    CHECK_STATUS(hipdnnDeviceMalloc_ext(&p, 1024),
                 HIPDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED);
    CHECK_ERR_CONTAINS("cuMemAlloc_v2 (1024 bytes): CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
    unsetenv("FAKE_CUDA_OOM");
    CHECK_STATUS(hipdnnDeviceFree_ext((void*)(uintptr_t)0x1000), HIPDNN_STATUS_EXECUTION_FAILED);
    CHECK_ERR_CONTAINS("cuMemFree_v2");
    CHECK_ERR_CONTAINS("CUDA_ERROR_INVALID_VALUE");
}

static void fake_driver_without_devices(void) {
    setenv("FAKE_CUDA_NO_DEVICE", "1", 1);
    CHECK_STATUS(hipdnnGetDeviceRuntime_ext(NULL, NULL), HIPDNN_STATUS_NOT_SUPPORTED);
    CHECK_ERR_CONTAINS("cuda: libcuda.so.1");
    CHECK_ERR_CONTAINS("CUDA_ERROR_NO_DEVICE");
}

int main(int argc, char** argv) {
    g_fake = fake_gpu_is_child(argc, argv);
    /* children first: each resolves the runtime afresh (the parent resolves it once) */
    if (g_fake) {
        check_run_in_child("fake_driver_without_devices", fake_driver_without_devices);
    } else if (!getenv("HIPDNN_DEVICE_RUNTIME")) {
        check_run_in_child("forced_cuda_names_what_it_searched", forced_cuda_names_what_it_searched);
        check_run_in_child("forced_hip_names_what_it_searched", forced_hip_names_what_it_searched);
        check_run_in_child("bogus_runtime_name_tries_both", bogus_runtime_name_tries_both);
    }
    const char* name = "none";
    int have = hipdnnGetDeviceRuntime_ext(&name, NULL) == HIPDNN_STATUS_SUCCESS;
    if (!have && !g_fake) {
        RUN_TEST(test_every_call_says_there_is_no_runtime);
    } else {
        fprintf(stdout, "device runtime: %s%s\n", name, g_fake ? " (fake driver)" : "");
        RUN_TEST(test_runtime_reports_itself);
        RUN_TEST(test_copies_and_memset_round_trip);
        RUN_TEST(test_streams_and_events);
        RUN_TEST(test_pointer_kinds);
        RUN_TEST(test_null_arguments_and_zero_sizes);
        if (g_fake) RUN_TEST(test_driver_errors_are_passed_on);
    }
    if (!g_fake) fake_gpu_run_self();
    return check_finish();
}
