/* fake_gpu.h — running a C test again in a process that sees the fake CUDA driver
 * (tests/fake_cuda, built as HIPDNN_FAKE_CUDA_DIR/libcuda.so.1) instead of a GPU.
 *
 * The loader reads LD_LIBRARY_PATH when a process starts, so the test re-executes itself
 * with "--fake", that folder on the path, HIPDNN_DEVICE_RUNTIME=cuda and the HIP engine's
 * emulation on "device" memory (HIPDNN_EMULATED_MEMORY=device); the child's output goes
 * to ours and its exit status becomes one check. */
#ifndef HIPDNN_TEST_FAKE_GPU_H
#define HIPDNN_TEST_FAKE_GPU_H

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static inline int fake_gpu_is_child(int argc, char** argv) {
    return argc > 1 && strcmp(argv[1], "--fake") == 0;
}

static inline void fake_gpu_run_self(void) {
    if (getenv("HIPDNN_TEST_NO_FAKE")) return; /* a GPU machine's check (tools/gpu_check.sh) */
    fprintf(stdout, "-- again over the fake driver (%s)\n", HIPDNN_FAKE_CUDA_DIR);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        CHECK_MSG(0, "fork failed");
        return;
    }
    if (pid == 0) {
        const char* old = getenv("LD_LIBRARY_PATH");
        char path[4096];
        snprintf(path, sizeof(path), "%s%s%s", HIPDNN_FAKE_CUDA_DIR, old && *old ? ":" : "",
                 old ? old : "");
        setenv("LD_LIBRARY_PATH", path, 1);
        setenv("HIPDNN_DEVICE_RUNTIME", "cuda", 1);
        setenv("HIPDNN_EMULATED_MEMORY", "device", 1);
        char* args[] = {(char*)"self", (char*)"--fake", NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "the run over the fake driver failed (status %d)", status);
}

#endif
