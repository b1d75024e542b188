/* umbrella — drives libhipdnn_ort_bridge.so the way an umbrella EP drives one of its
 * backends: dlopen, then CreateEpFactories / ReleaseEpFactory through dlsym, with the real
 * OrtApiBase of libonnxruntime.so.1.  tests/test_ort_shim.py scripts it; ctest runs it
 * against the real hipdnn-ep.
 *
 *   umbrella BRIDGE STEP...
 *
 *   create          CreateEpFactories; its factories are kept, newest last
 *                   -> "create ok N PTR..." or "create error CODE MESSAGE"
 *   release         ReleaseEpFactory on the newest factory  -> "release ok PTR" / error
 *   release-oldest  ReleaseEpFactory on the oldest one
 *   release-bogus   ReleaseEpFactory on a pointer the bridge never gave
 *   ep              CreateEp on the newest factory with no devices (NULL, 0), then ReleaseEp
 *   name            -> "name NAME FILE": the newest factory's name and the file its code is in
 *   loaded=PATH     -> "loaded yes|no PATH": whether PATH is loaded in this process
 *   set=VAR=VALUE   setenv (an empty VALUE unsets)
 *   threads=T,N     T threads at once, each N times: create, ep if "ep" follows N
 *                   (threads=T,N,ep), release every factory it made -> "threads ok" / error
 *
 * A step written "!step" is expected to fail (loaded=: to say "no").  The exit status is 1
 * if any step's outcome was not the expected one (that line ends "UNEXPECTED"), else 0.
 * Messages are printed on one line, their newlines shown as " | ". */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxruntime_c_api.h"

static const OrtApi* ort;
static CreateEpApiFactoriesFn create_fn;
static ReleaseEpApiFactoryFn release_fn;

#define MAX_LIVE 256
static OrtEpFactory* live[MAX_LIVE];
static size_t n_live;

/* The status's code and message in `out` (one line), releasing it; "" for success. */
static bool failed(OrtStatus* st, char* out, size_t len) {
    out[0] = '\0';
    if (!st) return false;
    int n = snprintf(out, len, "%d ", (int)ort->GetErrorCode(st));
    for (const char* m = ort->GetErrorMessage(st); *m && n + 4 < (int)len; ++m) {
        if (*m == '\n') n += snprintf(out + n, len - (size_t)n, " | ");
        else out[n++] = *m, out[n] = '\0';
    }
    ort->ReleaseStatus(st);
    return true;
}

static OrtStatus* create_ep(OrtEpFactory* f) {
    OrtSessionOptions* so = NULL;
    OrtStatus* st = ort->CreateSessionOptions(&so);
    if (st) return st;
    OrtEp* ep = NULL;
    /* No devices at all: an umbrella that has not picked one yet calls it so. */
    st = f->CreateEp(f, NULL, NULL, 0, so, NULL, &ep);
    if (!st && !ep) st = ort->CreateStatus(ORT_FAIL, "CreateEp gave no OrtEp and no error");
    if (!st) f->ReleaseEp(f, ep);
    ort->ReleaseSessionOptions(so);
    return st;
}

/* ---- threads ------------------------------------------------------------------------- */

typedef struct {
    int iters;
    bool with_ep;
    pthread_barrier_t* start;
    char error[1024]; /* the first failure of this thread */
} worker;

static void* work(void* arg) {
    worker* w = arg;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < w->iters && !w->error[0]; ++i) {
        OrtEpFactory* f[8];
        size_t n = 0;
        char msg[960]; /* room for the prefix in w->error */
        if (failed(create_fn("hipdnn", OrtGetApiBase(), NULL, f, 8, &n), msg, sizeof(msg))) {
            snprintf(w->error, sizeof(w->error), "create: %s", msg);
            break;
        }
        if (!n) snprintf(w->error, sizeof(w->error), "create made no factory");
        if (n && w->with_ep && failed(create_ep(f[0]), msg, sizeof(msg)))
            snprintf(w->error, sizeof(w->error), "ep: %s", msg);
        for (size_t k = 0; k < n; ++k)
            if (failed(release_fn(f[k]), msg, sizeof(msg)) && !w->error[0])
                snprintf(w->error, sizeof(w->error), "release: %s", msg);
    }
    return NULL;
}

static bool run_threads(const char* spec, char* out, size_t len) {
    int t = 0, n = 0;
    char ep[8] = "";
    if (sscanf(spec, "%d,%d,%7s", &t, &n, ep) < 2 || t < 1 || t > 64 || n < 1) {
        snprintf(out, len, "bad spec %s", spec);
        return false;
    }
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)t);
    pthread_t tid[64];
    worker w[64];
    for (int i = 0; i < t; ++i) {
        w[i] = (worker){.iters = n, .with_ep = !strcmp(ep, "ep"), .start = &start};
        pthread_create(&tid[i], NULL, work, &w[i]);
    }
    bool ok = true;
    for (int i = 0; i < t; ++i) {
        pthread_join(tid[i], NULL);
        if (w[i].error[0] && ok) {
            snprintf(out, len, "thread %d: %s", i, w[i].error);
            ok = false;
        }
    }
    pthread_barrier_destroy(&start);
    if (ok) snprintf(out, len, "%d %d", t, n);
    return ok;
}

/* ---- steps --------------------------------------------------------------------------- */

/* Runs one step, prints its line; returns whether it succeeded. */
static bool step(const char* s) {
    char msg[8192];
    if (!strcmp(s, "create")) {
        OrtEpFactory* f[8] = {0};
        size_t n = 0;
        if (failed(create_fn("hipdnn", OrtGetApiBase(), NULL, f, 8, &n), msg, sizeof(msg))) {
            printf("create error %s", msg);
            return false;
        }
        printf("create ok %zu", n);
        for (size_t i = 0; i < n && n_live < MAX_LIVE; ++i) {
            printf(" %p", (void*)f[i]);
            live[n_live++] = f[i];
        }
        return true;
    }
    if (!strcmp(s, "release") || !strcmp(s, "release-oldest") || !strcmp(s, "release-bogus")) {
        static OrtEpFactory bogus;
        OrtEpFactory* f = &bogus;
        if (strcmp(s, "release-bogus")) {
            if (!n_live) {
                printf("%s error nothing to release", s);
                return false;
            }
            size_t i = strcmp(s, "release") ? 0 : n_live - 1;
            f = live[i];
            memmove(live + i, live + i + 1, (n_live - i - 1) * sizeof(*live));
            --n_live;
        }
        if (failed(release_fn(f), msg, sizeof(msg))) {
            printf("%s error %s", s, msg);
            /* Still the caller's to release: back where it was, newest last. */
            if (f != &bogus) live[n_live++] = f;
            return false;
        }
        printf("%s ok %p", s, (void*)f);
        return true;
    }
    if (!strcmp(s, "ep")) {
        if (!n_live || failed(create_ep(live[n_live - 1]), msg, sizeof(msg))) {
            printf("ep error %s", n_live ? msg : "no factory");
            return false;
        }
        printf("ep ok");
        return true;
    }
    if (!strcmp(s, "name")) {
        if (!n_live) {
            printf("name error no factory");
            return false;
        }
        OrtEpFactory* f = live[n_live - 1];
        Dl_info info = {0};
        void* code;
        memcpy(&code, &f->GetName, sizeof(code));
        printf("name %s %s", f->GetName(f),
               dladdr(code, &info) && info.dli_fname ? info.dli_fname : "?");
        return true;
    }
    if (!strncmp(s, "loaded=", 7)) {
        void* h = dlopen(s + 7, RTLD_NOW | RTLD_NOLOAD);
        if (h) dlclose(h); /* NOLOAD still counts a reference */
        printf("loaded %s %s", h ? "yes" : "no", s + 7);
        return h != NULL;
    }
    if (!strncmp(s, "set=", 4)) {
        char var[256];
        const char* eq = strchr(s + 4, '=');
        if (!eq || eq - (s + 4) >= (int)sizeof(var)) {
            printf("set error bad step %s", s);
            return false;
        }
        snprintf(var, sizeof(var), "%.*s", (int)(eq - (s + 4)), s + 4);
        if (eq[1]) setenv(var, eq + 1, 1);
        else unsetenv(var);
        printf("set %s", s + 4);
        return true;
    }
    if (!strncmp(s, "threads=", 8)) {
        bool ok = run_threads(s + 8, msg, sizeof(msg));
        printf("threads %s %s", ok ? "ok" : "error", msg);
        return ok;
    }
    printf("unknown step %s", s);
    return false;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: umbrella BRIDGE STEP...\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    ort = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (!ort) {
        printf("libonnxruntime serves no API version %d\n", ORT_API_VERSION);
        return 1;
    }
    /* As an umbrella loads its backends: local, so that one backend's symbols never
     * resolve another's. */
    void* bridge = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!bridge) {
        printf("dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    void* c = dlsym(bridge, "CreateEpFactories");
    void* r = dlsym(bridge, "ReleaseEpFactory");
    if (!c || !r) {
        printf("%s does not export CreateEpFactories and ReleaseEpFactory\n", argv[1]);
        return 1;
    }
    memcpy(&create_fn, &c, sizeof(c));
    memcpy(&release_fn, &r, sizeof(r));
    int bad = 0;
    for (int i = 2; i < argc; ++i) {
        bool expect_ok = argv[i][0] != '!';
        bool ok = step(argv[i] + !expect_ok);
        printf("%s\n", ok == expect_ok ? "" : " UNEXPECTED");
        bad += ok != expect_ok;
    }
    /* The bridge stays loaded: an umbrella unloads its backends only at its own end. */
    return bad ? 1 : 0;
}
