/* Threads: splits a range of independent work items over the machine's cores.
 *
 * Threads are created per call and joined before it returns: no pool outlives a call, so
 * unloading the plugin never races a worker, and a forked child has nothing to rebuild
 * (the backend's fork handler waits for calls in flight; a pool would need its own
 * pthread_atfork, see hipdnn_plugin.h).  The kernels that use this give each output
 * element to exactly one item and sum it in a fixed order, so results do not depend on
 * how many threads ran. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "reference_cpu.h"

static int g_threads = 1;
static pthread_once_t g_threads_once = PTHREAD_ONCE_INIT;

static void read_thread_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char* env = getenv("HIPDNN_CPU_THREADS");
    if (env && *env) {
        char* end = NULL;
        long v = strtol(env, &end, 10);
        if (end && *end == '\0' && v >= 1) n = v;
    }
    if (n < 1) n = 1;
    g_threads = n > REF_MAX_THREADS ? REF_MAX_THREADS : (int)n;
}

int ref_cpu_threads(void) {
    pthread_once(&g_threads_once, read_thread_count);
    return g_threads;
}

int ref_threads_for(double work, double min_per_thread) {
    int t = ref_cpu_threads();
    double fit = min_per_thread > 0 ? work / min_per_thread : (double)t;
    return fit < 1 ? 1 : (fit < t ? (int)fit : t);
}

/* Workers claim runs of `grain` items from a shared counter until none are left, so a
 * core that is busy with something else slows the call down instead of stalling it. */
typedef struct {
    ref_range_fn fn;
    void* ctx;
    int64_t n, grain;
    atomic_int_fast64_t next;
    atomic_int rc;
} team;

typedef struct {
    team* tm;
    int worker;
} member;

static void* run_member(void* p) {
    const member* me = p;
    team* tm = me->tm;
    while (atomic_load(&tm->rc) == 0) {
        int64_t b = atomic_fetch_add(&tm->next, tm->grain);
        if (b >= tm->n) break;
        int64_t e = tm->n - b < tm->grain ? tm->n : b + tm->grain;
        int rc = tm->fn(tm->ctx, b, e, me->worker);
        if (rc != 0) {
            int zero = 0;
            atomic_compare_exchange_strong(&tm->rc, &zero, rc);
        }
    }
    return NULL;
}

int ref_parallel_for(int64_t n, int64_t min_items, int threads, ref_range_fn fn, void* ctx) {
    if (n <= 0) return 0;
    if (min_items < 1) min_items = 1;
    int64_t t = threads < 1 ? 1 : (threads > REF_MAX_THREADS ? REF_MAX_THREADS : threads);
    if (t > n / min_items) t = n / min_items;
    if (t <= 1) return fn(ctx, 0, n, 0);

    team tm = {.fn = fn, .ctx = ctx, .n = n};
    /* About 8 claims per thread: balance at little cost in atomics. */
    tm.grain = n / (t * 8) > 0 ? n / (t * 8) : 1;
    atomic_init(&tm.next, 0);
    atomic_init(&tm.rc, 0);
    member members[REF_MAX_THREADS];
    pthread_t tids[REF_MAX_THREADS];
    bool started[REF_MAX_THREADS];
    for (int64_t i = 0; i < t; ++i) {
        members[i] = (member){&tm, (int)i};
        /* A thread that cannot start just leaves more items to the others: slower, not
         * wrong, and this thread always takes part. */
        started[i] = i > 0 && pthread_create(&tids[i], NULL, run_member, &members[i]) == 0;
    }
    run_member(&members[0]);
    for (int64_t i = 1; i < t; ++i)
        if (started[i]) pthread_join(tids[i], NULL);
    return atomic_load(&tm.rc);
}
