/* counting_backend.c - a stand-in for libhipdnn_backend.so that counts how often the
 * dynamic stubs ask for its version: it links the real backend, so every other entry
 * point the stubs look up in it resolves to the real one (dlsym searches a library's
 * dependencies too), and its hipdnnVersionString_ext sleeps, so that concurrent first
 * calls overlap inside the loader if the loader lets them. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <time.h>

#include <hipdnn/hipdnn.h>

#define STR2(x) #x
#define STR(x) STR2(x)

static atomic_int g_version_calls;

__attribute__((visibility("default"))) int counting_backend_version_calls(void) {
    return atomic_load(&g_version_calls);
}

const char* hipdnnVersionString_ext(void) {
    atomic_fetch_add(&g_version_calls, 1);
    struct timespec pause = {0, 300 * 1000 * 1000};
    nanosleep(&pause, NULL);
    return STR(HIPDNN_VERSION_MAJOR) "." STR(HIPDNN_VERSION_MINOR) "." STR(HIPDNN_VERSION_PATCH);
}
