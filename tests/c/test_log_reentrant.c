/* test_log_reentrant.c — a log callback may call any hipdnn function: create and destroy
 * handles, set the stream of the handle whose plugin is logging, replace the callback, set
 * the level, build and run plans (which log in turn).  Messages are delivered after the
 * backend's locks are released, so none of this deadlocks; replacing the callback waits
 * for the old one to return on other threads.  Each case runs in a child process of its
 * own, which SIGALRM ends if it deadlocks. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define CHECK_CHILD_TIMEOUT_S 60
#include "check.h"
#include "hipdnn/hipdnn.h"
#include "matmul_plan.h"

#define TP(name) HIPDNN_TEST_PLUGIN_DIR "/lib" name ".so"

/* What the reentrant callback did; it runs on the test's own thread. */
typedef struct {
    int calls, depth, max_depth;
    int create_failed, destroy_failed, set_failed, query_failed, stream_failed;
    int64_t engines;
    hipdnnHandle_t busy;     /* the handle whose plugin is logging, or NULL */
    int build_nested_plan;   /* once: build and run a plan from inside the callback */
    int nested_ok;
    int saw_nested_message;  /* a message logged by the callback's own plan, delivered */
} reentry;

static reentry g_re;

static void reentrant_callback(hipdnnLogLevel_t level, const char* message, void* user_data) {
    (void)level;
    reentry* r = user_data;
    ++r->calls;
    if (++r->depth > r->max_depth) r->max_depth = r->depth;
    if (r->depth > 1 && strstr(message, "execution context")) r->saw_nested_message = 1;
    if (r->depth == 1) {
        hipdnnHandle_t h = NULL;
        r->create_failed += hipdnnCreate(&h) != HIPDNN_STATUS_SUCCESS;
        int64_t n = -1;
        r->query_failed += hipdnnGetEngineCount_ext(&n) != HIPDNN_STATUS_SUCCESS;
        r->engines = n;
        r->destroy_failed += hipdnnDestroy(h) != HIPDNN_STATUS_SUCCESS;
        r->set_failed += hipdnnSetLogLevel_ext(HIPDNN_LOG_INFO) != HIPDNN_STATUS_SUCCESS;
        r->set_failed += hipdnnSetUserLogCallback_ext(reentrant_callback, r) != HIPDNN_STATUS_SUCCESS;
        if (r->busy) r->stream_failed += hipdnnSetStream(r->busy, NULL) != HIPDNN_STATUS_SUCCESS;
        if (r->build_nested_plan) {
            r->build_nested_plan = 0;
            hipdnnHandle_t h2 = NULL;
            mm_plan p;
            float c[4 * 5];
            if (hipdnnCreate(&h2) == HIPDNN_STATUS_SUCCESS && mm_build(&p, h2, 4, 3, 5, 7)) {
                r->nested_ok = mm_run(&p, h2, c) == HIPDNN_STATUS_SUCCESS && mm_bad(&p, c) == 0;
                mm_free(&p);
            }
            hipdnnDestroy(h2);
        }
    }
    --r->depth;
}

static void check_reentry(const reentry* r) {
    CHECK_EQ_INT(r->create_failed, 0);
    CHECK_EQ_INT(r->destroy_failed, 0);
    CHECK_EQ_INT(r->query_failed, 0);
    CHECK_EQ_INT(r->set_failed, 0);
    CHECK_EQ_INT(r->stream_failed, 0);
    CHECK_MSG(r->engines >= 1, "the callback saw %lld engines", (long long)r->engines);
}

/* Loading logs a skipped plugin while the registry's lock is held: the callback creates a
 * handle (which needs that lock) and replaces itself. */
static void test_callback_creates_a_handle_while_plugins_load(void) {
    memset(&g_re, 0, sizeof(g_re));
    REQUIRE_OK(hipdnnSetLogLevel_ext(HIPDNN_LOG_WARN));
    REQUIRE_OK(hipdnnSetUserLogCallback_ext(reentrant_callback, &g_re));
    const char* paths[1] = {TP("init_fails")};
    REQUIRE_OK(hipdnnSetEnginePluginPaths_ext(1, paths, HIPDNN_PLUGIN_LOADING_ADDITIVE));
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    CHECK_MSG(g_re.calls >= 1, "the skip of init_fails was not delivered");
    check_reentry(&g_re);
    CHECK_OK(hipdnnDestroy(h));
    CHECK_OK(hipdnnSetUserLogCallback_ext(NULL, NULL));
}

/* The plugin logs (info) while it builds an execution context, under the handle's lock:
 * the callback sets that handle's stream (which takes the lock), and builds and runs a
 * plan of its own, whose message reaches the callback nested inside itself. */
static void test_callback_uses_the_busy_handle_and_runs_a_plan(void) {
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    memset(&g_re, 0, sizeof(g_re));
    g_re.busy = h;
    g_re.build_nested_plan = 1;
    REQUIRE_OK(hipdnnSetLogLevel_ext(HIPDNN_LOG_INFO));
    REQUIRE_OK(hipdnnSetUserLogCallback_ext(reentrant_callback, &g_re));
    mm_plan p;
    float c[8 * 6];
    if (CHECK(mm_build(&p, h, 8, 5, 6, 3))) {
        CHECK_OK(mm_run(&p, h, c));
        CHECK_EQ_INT(mm_bad(&p, c), 0);
    }
    CHECK_OK(hipdnnSetUserLogCallback_ext(NULL, NULL));
    mm_free(&p);
    CHECK_MSG(g_re.calls >= 2, "%d messages delivered", g_re.calls);
    check_reentry(&g_re);
    CHECK_MSG(g_re.nested_ok, "the plan built inside the callback did not run right");
    CHECK_MSG(g_re.saw_nested_message && g_re.max_depth == 2,
              "the nested plan's message was not delivered inside the callback (depth %d)",
              g_re.max_depth);
    CHECK_OK(hipdnnDestroy(h));
}

/* ---- replacing the callback waits for the old one on other threads ------------------- */

static atomic_int g_inside, g_finished, g_entered;

static void slow_callback(hipdnnLogLevel_t level, const char* message, void* user_data) {
    (void)level, (void)message, (void)user_data;
    atomic_store(&g_inside, 1);
    atomic_fetch_add(&g_entered, 1);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&g_inside, 0);
    atomic_fetch_add(&g_finished, 1);
}

/* On another thread: finalizing a plan, whose plugin message goes to slow_callback. */
typedef struct {
    hipdnnHandle_t h;
    hipdnnBackendDescriptor_t cfg, plan;
    hipdnnStatus_t st;
} plan_job;

static void* finalize_plan(void* arg) {
    plan_job* job = arg;
    job->st = mm_plan_on(job->h, job->cfg, &job->plan);
    return NULL;
}

static void test_replacing_the_callback_waits_for_the_old_one(void) {
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    mm_plan p;
    plan_job job = {h, NULL, NULL, HIPDNN_STATUS_SUCCESS};
    pthread_t t;
    int started = 0;
    if (!CHECK(mm_build(&p, h, 2, 2, 2, 5)) || !CHECK((job.cfg = mm_first_config(p.graph)) != NULL))
        goto done;
    REQUIRE_OK(hipdnnSetLogLevel_ext(HIPDNN_LOG_INFO));
    REQUIRE_OK(hipdnnSetUserLogCallback_ext(slow_callback, NULL));
    started = CHECK(pthread_create(&t, NULL, finalize_plan, &job) == 0);
    if (!started) goto done;
    for (int i = 0; i < 2000 && !atomic_load(&g_inside); ++i) {
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!CHECK_MSG(atomic_load(&g_inside), "the plan's message never reached the callback"))
        goto done;
    CHECK_OK(hipdnnSetUserLogCallback_ext(NULL, NULL));
    /* returned: the old callback is not running and has finished */
    CHECK_EQ_INT(atomic_load(&g_inside), 0);
    CHECK_EQ_INT(atomic_load(&g_finished), atomic_load(&g_entered));
done:
    if (started) {
        pthread_join(t, NULL);
        CHECK_OK(job.st);
    }
    if (job.plan) CHECK_OK(hipdnnBackendDestroyDescriptor(job.plan));
    if (job.cfg) gb_destroy(&job.cfg);
    mm_free(&p);
    CHECK_OK(hipdnnSetUserLogCallback_ext(NULL, NULL));
    CHECK_OK(hipdnnDestroy(h));
}

int main(void) {
    check_run_in_child("callback_creates_a_handle_while_plugins_load",
                       test_callback_creates_a_handle_while_plugins_load);
    check_run_in_child("callback_uses_the_busy_handle_and_runs_a_plan",
                       test_callback_uses_the_busy_handle_and_runs_a_plan);
    check_run_in_child("replacing_the_callback_waits_for_the_old_one",
                       test_replacing_the_callback_waits_for_the_old_one);
    return check_finish();
}
