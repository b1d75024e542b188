/* test_fork.c — fork() while another thread runs hipdnn, as data loaders and
 * multiprocessing do.  The child must get working locks and handles: the handle that was
 * executing, new handles, the plan that was running, new plans, the log callback.  Every
 * child has an alarm and the parent waits for it with a deadline, so a child that hangs
 * fails the test instead of hanging it; each scenario runs in a process of its own. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHECK_CHILD_TIMEOUT_S 240
#include "check.h"
#include "hipdnn/hipdnn.h"
#include "matmul_plan.h"

#define FORKS 24
#define GRANDCHILD_TIMEOUT_S 30

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
    nanosleep(&ts, NULL);
}

static void sleep_ms(int ms) { sleep_us(ms * 1000L); }

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Waits for pid up to timeout_s; kills it past that.  Its exit status, or -1 if it hung,
 * or 128 + signal if a signal ended it. */
static int wait_with_deadline(pid_t pid, double timeout_s) {
    double end = now_s() + timeout_s;
    int ws = 0;
    for (;;) {
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid) break;
        if (r < 0) return -2;
        if (now_s() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &ws, 0);
            return -1;
        }
        sleep_ms(5);
    }
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* ---- forks while a thread executes big plans ----------------------------------------- */

static mm_plan g_big;   /* 320 x 320 x 320: long enough that forks land inside a run */
static mm_plan g_small; /* built in the parent, run by the children through new handles */
static hipdnnBackendDescriptor_t g_small_cfg; /* its engine config, for new plans */
static hipdnnHandle_t g_busy;
static atomic_int g_stop, g_executing, g_runs, g_worker_bad;

static void* worker(void* arg) {
    (void)arg;
    float* c = malloc((size_t)(g_big.m * g_big.n) * sizeof(float));
    while (c && !atomic_load(&g_stop)) {
        atomic_store(&g_executing, 1);
        hipdnnStatus_t st = mm_run(&g_big, g_busy, c);
        atomic_store(&g_executing, 0);
        if (st != HIPDNN_STATUS_SUCCESS || mm_bad(&g_big, c)) atomic_fetch_add(&g_worker_bad, 1);
        atomic_fetch_add(&g_runs, 1);
    }
    free(c);
    return NULL;
}

/* In the child: what each step gave, as bits of the exit status. */
static int child_work(void) {
    alarm(GRANDCHILD_TIMEOUT_S);
    int bad = 0;
    float* c = malloc((size_t)(g_big.m * g_big.n) * sizeof(float));
    float s[16 * 12];
    if (!c) return 64;
    /* the handle that was executing, the plan it was running */
    if (mm_run(&g_big, g_busy, c) != HIPDNN_STATUS_SUCCESS || mm_bad(&g_big, c)) bad |= 1;
    /* a new handle: the existing plans run through it */
    hipdnnHandle_t h = NULL;
    if (hipdnnCreate(&h) != HIPDNN_STATUS_SUCCESS) {
        bad |= 2;
    } else {
        if (mm_run(&g_small, h, s) != HIPDNN_STATUS_SUCCESS || mm_bad(&g_small, s)) bad |= 4;
        /* a new plan of an existing graph, on the new handle */
        hipdnnBackendDescriptor_t plan = NULL;
        if (mm_plan_on(h, g_small_cfg, &plan) != HIPDNN_STATUS_SUCCESS) {
            bad |= 8;
        } else {
            mm_plan p = g_small;
            p.plan = plan;
            if (mm_run(&p, h, s) != HIPDNN_STATUS_SUCCESS || mm_bad(&p, s)) bad |= 16;
        }
        if (plan) hipdnnBackendDestroyDescriptor(plan);
        if (hipdnnDestroy(h) != HIPDNN_STATUS_SUCCESS) bad |= 32;
    }
    /* the logger: replacing the callback does not wait for a parent thread's */
    if (hipdnnSetUserLogCallback_ext(NULL, NULL) != HIPDNN_STATUS_SUCCESS) bad |= 32;
    free(c);
    return bad;
}

static void test_forks_during_execution(void) {
    REQUIRE_OK(hipdnnCreate(&g_busy));
    if (!CHECK(mm_build(&g_big, g_busy, 320, 320, 320, 11)) ||
        !CHECK(mm_build(&g_small, g_busy, 16, 9, 12, 13)) ||
        !CHECK((g_small_cfg = mm_first_config(g_small.graph)) != NULL))
        return;
    /* how long one run takes, to fork at points spread over the first half of one */
    float* c = malloc((size_t)(g_big.m * g_big.n) * sizeof(float));
    REQUIRE(c != NULL);
    double t_run = now_s();
    CHECK_OK(mm_run(&g_big, g_busy, c));
    t_run = now_s() - t_run;
    CHECK_EQ_INT(mm_bad(&g_big, c), 0);
    free(c);
    long half_us = (long)(t_run * 0.5e6) + 1;
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, worker, NULL) == 0);
    int during = 0, ok = 0, hung = 0;
    unsigned seed = 12345;
    double t0 = now_s();
    for (int i = 0; i < FORKS; ++i) {
        /* land inside a run, at a different point each time */
        for (int w = 0; w < 2000 && !atomic_load(&g_executing); ++w) sleep_ms(1);
        seed = seed * 1103515245u + 12345u;
        sleep_us((long)((seed >> 8) % (unsigned)half_us));
        during += atomic_load(&g_executing);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(child_work());
        if (!CHECK_MSG(pid > 0, "fork failed")) break;
        int rc = wait_with_deadline(pid, GRANDCHILD_TIMEOUT_S + 10);
        if (rc == 0) ++ok;
        else if (rc == -1 || rc == 128 + SIGALRM) ++hung;
        CHECK_MSG(rc == 0, "child %d: %s %d", i, rc < 0 ? "hung" : rc >= 128 ? "signal" : "failed steps",
                  rc < 0 ? rc : rc >= 128 ? rc - 128 : rc);
    }
    atomic_store(&g_stop, 1);
    pthread_join(t, NULL);
    printf("   %d forks in %.1f s, %d while the worker executed (a run takes %.1f ms), %d "
           "children right, %d hung; the worker ran %d plans\n", FORKS, now_s() - t0, during,
           t_run * 1e3, ok, hung, atomic_load(&g_runs));
    CHECK_EQ_INT(ok, FORKS);
    /* the test is about forks inside a run: most must have been */
    CHECK_MSG(during >= FORKS / 2, "only %d of %d forks landed while the worker executed",
              during, FORKS);
    CHECK_EQ_INT(atomic_load(&g_worker_bad), 0);
    CHECK(atomic_load(&g_runs) > 0);
    /* and the parent goes on as before */
    float s[16 * 12];
    CHECK_OK(mm_run(&g_small, g_busy, s));
    CHECK_EQ_INT(mm_bad(&g_small, s), 0);
    gb_destroy(&g_small_cfg);
    mm_free(&g_big);
    mm_free(&g_small);
    CHECK_OK(hipdnnDestroy(g_busy));
}

/* ---- forks while another thread loads the plugins ------------------------------------- */

static atomic_int g_created;

static void* create_first_handle(void* arg) {
    hipdnnHandle_t* h = arg;
    atomic_store(&g_created, hipdnnCreate(h) == HIPDNN_STATUS_SUCCESS ? 1 : -1);
    return NULL;
}

static int child_creates_and_runs(void) {
    alarm(GRANDCHILD_TIMEOUT_S);
    hipdnnHandle_t h = NULL;
    if (hipdnnCreate(&h) != HIPDNN_STATUS_SUCCESS) return 1;
    int64_t n = 0;
    int bad = hipdnnGetEngineCount_ext(&n) != HIPDNN_STATUS_SUCCESS || n < 1;
    return bad | (hipdnnDestroy(h) != HIPDNN_STATUS_SUCCESS) << 1;
}

static void test_forks_while_plugins_load(void) {
    hipdnnHandle_t h = NULL;
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, create_first_handle, &h) == 0);
    int ok = 0;
    for (int i = 0; i < 8; ++i) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) _exit(child_creates_and_runs());
        if (!CHECK(pid > 0)) break;
        int rc = wait_with_deadline(pid, GRANDCHILD_TIMEOUT_S + 10);
        ok += rc == 0;
        CHECK_MSG(rc == 0, "child %d gave %d (-1: hung)", i, rc);
    }
    pthread_join(t, NULL);
    CHECK_EQ_INT(atomic_load(&g_created), 1);
    CHECK_EQ_INT(ok, 8);
    if (h) CHECK_OK(hipdnnDestroy(h));
}

/* ---- a fork while a log callback runs on another thread -------------------------------- */

static atomic_int g_in_callback;

static void slow_callback(hipdnnLogLevel_t level, const char* message, void* user_data) {
    (void)level, (void)message, (void)user_data;
    atomic_store(&g_in_callback, 1);
    sleep_ms(400);
    atomic_store(&g_in_callback, 0);
}

typedef struct {
    hipdnnHandle_t h;
    hipdnnBackendDescriptor_t cfg, plan;
} plan_job;

static void* finalize_plan(void* arg) {
    plan_job* job = arg;
    mm_plan_on(job->h, job->cfg, &job->plan); /* logs an info line: slow_callback */
    return NULL;
}

static int child_after_callback_fork(plan_job* job) {
    alarm(GRANDCHILD_TIMEOUT_S);
    /* the parent's callback is in flight on a thread the child does not have */
    if (hipdnnSetUserLogCallback_ext(NULL, NULL) != HIPDNN_STATUS_SUCCESS) return 1;
    hipdnnSetLogLevel_ext(HIPDNN_LOG_WARN); /* the plan's info line: not for stderr */
    hipdnnBackendDescriptor_t plan = NULL;
    if (mm_plan_on(job->h, job->cfg, &plan) != HIPDNN_STATUS_SUCCESS) return 2;
    hipdnnBackendDestroyDescriptor(plan);
    return 0;
}

static void test_fork_while_a_log_callback_runs(void) {
    hipdnnHandle_t h = NULL;
    REQUIRE_OK(hipdnnCreate(&h));
    mm_plan p;
    plan_job job = {h, NULL, NULL};
    if (CHECK(mm_build(&p, h, 3, 3, 3, 17)) && CHECK((job.cfg = mm_first_config(p.graph)))) {
        CHECK_OK(hipdnnSetLogLevel_ext(HIPDNN_LOG_INFO));
        CHECK_OK(hipdnnSetUserLogCallback_ext(slow_callback, NULL));
        pthread_t t;
        if (CHECK(pthread_create(&t, NULL, finalize_plan, &job) == 0)) {
            for (int w = 0; w < 2000 && !atomic_load(&g_in_callback); ++w) sleep_ms(1);
            CHECK_MSG(atomic_load(&g_in_callback), "the callback never ran");
            fflush(stdout);
            pid_t pid = fork();
            if (pid == 0) _exit(child_after_callback_fork(&job));
            if (CHECK(pid > 0))
                CHECK_EQ_INT(wait_with_deadline(pid, GRANDCHILD_TIMEOUT_S + 10), 0);
            pthread_join(t, NULL);
        }
        CHECK_OK(hipdnnSetUserLogCallback_ext(NULL, NULL));
        CHECK(job.plan != NULL);
    }
    if (job.plan) hipdnnBackendDestroyDescriptor(job.plan);
    if (job.cfg) gb_destroy(&job.cfg);
    mm_free(&p);
    CHECK_OK(hipdnnDestroy(h));
}

int main(void) {
    check_run_in_child("forks_during_execution", test_forks_during_execution);
    check_run_in_child("forks_while_plugins_load", test_forks_while_plugins_load);
    check_run_in_child("fork_while_a_log_callback_runs", test_fork_while_a_log_callback_runs);
    return check_finish();
}
