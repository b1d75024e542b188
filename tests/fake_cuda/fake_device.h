/* fake_device.h — what the fake vendor libraries (tests/fake_cublaslt, tests/fake_cudnn) ask
 * the fake driver (fake_cuda.c), found in the process as libcuda.so.1 (the plugin under
 * test opened it first): whether a context is current, and whether a pointer is its
 * "device" memory; and a slow handle for tests.  Included by each fake, its functions static there. */
#ifndef HIPDNN_TEST_FAKE_DEVICE_H
#define HIPDNN_TEST_FAKE_DEVICE_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

typedef int (*fake_attrs_fn)(unsigned, int*, void**, unsigned long long);
typedef int (*fake_current_fn)(void**);

static void* fake_driver(void) { return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); }

/* Whether the calling thread has a current context (the real libraries need one). */
static int fake_context_current(void) {
    void* lib = fake_driver();
    fake_current_fn get = lib ? (fake_current_fn)dlsym(lib, "cuCtxGetCurrent") : NULL;
    void* ctx = NULL;
    int ok = get && get(&ctx) == 0 && ctx;
    if (lib) dlclose(lib);
    return ok;
}

/* Sleeps the milliseconds $var names (none if unset): a library handle that takes as long
 * to make as a real one on a GPU, for tests of what overlaps (tests/test_engine_queries.py). */
static void fake_sleep_from(const char* var) {
    const char* v = getenv(var);
    const long ms = v && *v ? strtol(v, NULL, 10) : 0;
    if (ms <= 0) return;
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

/* 1: [p, p + bytes) is device memory inside one allocation; 0: host memory (or no
 * driver); -1: device memory past its allocation. */
static int fake_device_range(const void* p, size_t bytes) {
    void* lib = fake_driver();
    fake_attrs_fn attrs = lib ? (fake_attrs_fn)dlsym(lib, "cuPointerGetAttributes") : NULL;
    unsigned type = 0;
    unsigned long long start = 0;
    size_t size = 0;
    int which[3] = {2, 11, 12}; /* MEMORY_TYPE, RANGE_START_ADDR, RANGE_SIZE */
    void* data[3] = {&type, &start, &size};
    int r = attrs && attrs(3, which, data, (unsigned long long)(uintptr_t)p) == 0 && type == 2;
    if (r && !((uintptr_t)p >= start && (uintptr_t)p + bytes <= start + size)) r = -1;
    if (lib) dlclose(lib);
    return r;
}

#endif
