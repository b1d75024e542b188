/* fake_calls.c — how many times each entry point of the fake driver was called, for tests
 * that bound the driver calls of a steady-state execute (tests/test_execute_driver_calls.py):
 *   long fakeCudaCallCount(const char* name)    that entry point's calls; NULL: all of them
 *   int fakeCudaCallList(char* buf, size_t len)  "cuA=2 cuB=1" of those called (its length)
 *   void fakeCudaCallReset(void)                 every count back to 0
 * Test-only symbols, like fakeCudaLaunch; a real driver has none of them. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "fake_calls.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_NAMES 128

static struct {
    const char* name;
    atomic_long n;
} g_calls[MAX_NAMES];
static atomic_int g_used; /* entries [0, g_used) have their name set */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

void fake_called(const char* name) {
    int used = atomic_load(&g_used);
    for (int i = 0; i < used; ++i)
        if (g_calls[i].name == name) {
            atomic_fetch_add(&g_calls[i].n, 1);
            return;
        }
    pthread_mutex_lock(&g_lock);
    used = atomic_load(&g_used);
    int i = 0;
    while (i < used && g_calls[i].name != name) ++i;
    if (i == used && used < MAX_NAMES) {
        g_calls[i].name = name;
        atomic_store(&g_used, used + 1);
    }
    if (i < MAX_NAMES) atomic_fetch_add(&g_calls[i].n, 1);
    pthread_mutex_unlock(&g_lock);
}

EXPORT long fakeCudaCallCount(const char* name) {
    long total = 0;
    int used = atomic_load(&g_used);
    for (int i = 0; i < used; ++i)
        if (!name || strcmp(g_calls[i].name, name) == 0) total += atomic_load(&g_calls[i].n);
    return total;
}

EXPORT int fakeCudaCallList(char* buf, size_t len) {
    size_t at = 0;
    int used = atomic_load(&g_used);
    if (len) buf[0] = '\0';
    for (int i = 0; i < used; ++i) {
        long n = atomic_load(&g_calls[i].n);
        if (!n) continue;
        int w = snprintf(buf + (at < len ? at : len), at < len ? len - at : 0, "%s%s=%ld",
                         at ? " " : "", g_calls[i].name, n);
        if (w > 0) at += (size_t)w;
    }
    return (int)at;
}

EXPORT void fakeCudaCallReset(void) {
    int used = atomic_load(&g_used);
    for (int i = 0; i < used; ++i) atomic_store(&g_calls[i].n, 0);
}
