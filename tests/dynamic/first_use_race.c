/* first_use_race.c - two threads make their first hipdnn call at the same moment, through
 * the dynamic stubs; the backend must be loaded (and its version asked) once.
 * Run with HIPDNN_BACKEND_PATH naming counting_backend.so; prints each thread's status,
 * and how often the stubs asked for the version. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hipdnn/hipdnn.h>

static pthread_barrier_t g_start;

static void* first_call(void* out) {
    int64_t count = -1;
    pthread_barrier_wait(&g_start);
    hipdnnStatus_t st = hipdnnGetOpCount_ext(&count);
    *(int*)out = st == HIPDNN_STATUS_SUCCESS && count > 0 ? 0 : (int)st + 1;
    return NULL;
}

int main(void) {
    pthread_t threads[2];
    int results[2] = {-1, -1};
    pthread_barrier_init(&g_start, NULL, 2);
    for (int i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, first_call, &results[i]);
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    printf("thread0 %d\nthread1 %d\n", results[0], results[1]);

    const char* path = getenv("HIPDNN_BACKEND_PATH");
    void* lib = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*calls)(void) = NULL;
    void* sym = lib ? dlsym(lib, "counting_backend_version_calls") : NULL;
    memcpy(&calls, &sym, sizeof(calls)); /* POSIX: object and function pointers agree */
    printf("version_calls %d\n", calls ? calls() : -1);
    return 0;
}
