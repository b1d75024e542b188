// jit.hip — compiling a graph's specialised kernel (jit_source.c) at plan time and
// launching it.  NVIDIA: NVRTC, opened at run time (the CUDA toolkit's, or PyTorch's),
// compiled to a cubin for the device's architecture and loaded with cudaLibraryLoadData.
// AMD: not yet (hiprtc), so the interpreter runs there.  Whatever fails, the caller falls
// back to the interpreter with the reason in the log; kernels are cached by source, so
// graphs of the same shape compile once per process.
#include "hip_compat.h"
#include "hip_engine.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HIPDNN_HIP_CUDA)

namespace {

struct cached_kernel {
    char* source; // the key: the full source, architecture included
    hipe_jit_kernels kernels;
    cached_kernel* next;
};
pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
cached_kernel* g_cache;

typedef int nvrtcResult;
typedef struct nvrtc_program* nvrtcProgram;

struct nvrtc_api {
    nvrtcResult (*create)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                          const char* const*);
    nvrtcResult (*compile)(nvrtcProgram, int, const char* const*);
    nvrtcResult (*log_size)(nvrtcProgram, size_t*);
    nvrtcResult (*log)(nvrtcProgram, char*);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t*);
    nvrtcResult (*cubin)(nvrtcProgram, char*);
    nvrtcResult (*destroy)(nvrtcProgram*);
    const char* (*error)(nvrtcResult);
    nvrtcResult (*version)(int*, int*);
    bool ok;
    char why[1024];
    char library[512];
};
nvrtc_api g_nvrtc;
pthread_once_t g_nvrtc_once = PTHREAD_ONCE_INIT;

// The toolkit's NVRTC (any version that makes cubins: 11.1 and newer), on the loader path,
// under $CUDA_HOME or /usr/local/cuda; one PyTorch loaded is found by its name too.
void open_nvrtc() {
    const char* home = getenv("CUDA_HOME");
    char in_home[2][512] = {"", ""};
    if (home && *home) {
        snprintf(in_home[0], sizeof(in_home[0]), "%s/lib64/libnvrtc.so", home);
        snprintf(in_home[1], sizeof(in_home[1]), "%s/lib/libnvrtc.so", home);
    }
    const char* const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                 "libnvrtc.so", in_home[0], in_home[1],
                                 "/usr/local/cuda/lib64/libnvrtc.so",
                                 "/usr/local/cuda/lib64/libnvrtc.so.13",
                                 "/usr/local/cuda/lib64/libnvrtc.so.12"};
    void* lib = nullptr;
    for (const char* n : names) {
        if (!*n) continue;
        lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            snprintf(g_nvrtc.library, sizeof(g_nvrtc.library), "%s", n);
            break;
        }
    }
    if (!lib) {
        snprintf(g_nvrtc.why, sizeof(g_nvrtc.why), "no NVRTC (libnvrtc.so.13/.12/.so on the "
                 "loader path, $CUDA_HOME or /usr/local/cuda)");
        return;
    }
    struct { void** slot; const char* name; } syms[] = {
        {(void**)&g_nvrtc.create, "nvrtcCreateProgram"},
        {(void**)&g_nvrtc.compile, "nvrtcCompileProgram"},
        {(void**)&g_nvrtc.log_size, "nvrtcGetProgramLogSize"},
        {(void**)&g_nvrtc.log, "nvrtcGetProgramLog"},
        {(void**)&g_nvrtc.cubin_size, "nvrtcGetCUBINSize"},
        {(void**)&g_nvrtc.cubin, "nvrtcGetCUBIN"},
        {(void**)&g_nvrtc.destroy, "nvrtcDestroyProgram"},
        {(void**)&g_nvrtc.error, "nvrtcGetErrorString"},
        {(void**)&g_nvrtc.version, "nvrtcVersion"},
    };
    for (auto& s : syms) {
        *s.slot = dlsym(lib, s.name);
        if (!*s.slot) {
            snprintf(g_nvrtc.why, sizeof(g_nvrtc.why), "%s lacks %s (too old an NVRTC)",
                     g_nvrtc.library, s.name);
            dlclose(lib);
            return;
        }
    }
    g_nvrtc.ok = true; // stays loaded for the life of the process
}

// Compiles `source` to a cubin for sm_<arch>; NULL with `why` on failure.
char* compile(const char* source, int arch, size_t* size, char* why, size_t len) {
    const char* const* texts;
    const char* const* names;
    int nheaders;
    hipe_jit_headers(&texts, &names, &nheaders);
    nvrtcProgram prog = nullptr;
    nvrtcResult r = g_nvrtc.create(&prog, source, "hipdnn_pw_fused.cu", nheaders, texts, names);
    if (r != 0) {
        snprintf(why, len, "nvrtcCreateProgram: %s", g_nvrtc.error(r));
        return nullptr;
    }
    char opt_arch[48];
    snprintf(opt_arch, sizeof(opt_arch), "--gpu-architecture=sm_%d", arch);
    const char* opts[] = {opt_arch, "--std=c++17", "-DHIPDNN_HIP_JIT=1"};
    r = g_nvrtc.compile(prog, 3, opts);
    char* image = nullptr;
    if (r != 0) {
        size_t n = 0;
        char log[400] = "";
        if (g_nvrtc.log_size(prog, &n) == 0 && n > 1) {
            char* full = (char*)malloc(n);
            if (full && g_nvrtc.log(prog, full) == 0) snprintf(log, sizeof(log), "%s", full);
            free(full);
            for (char* c = log; *c; ++c)
                if (*c == '\n') *c = ' ';
        }
        snprintf(why, len, "nvrtcCompileProgram (%s, sm_%d): %s: %s", g_nvrtc.library, arch,
                 g_nvrtc.error(r), log);
    } else if ((r = g_nvrtc.cubin_size(prog, size)) != 0 || !(image = (char*)malloc(*size)) ||
               (r = g_nvrtc.cubin(prog, image)) != 0) {
        snprintf(why, len, "nvrtcGetCUBIN: %s", r ? g_nvrtc.error(r) : "out of memory");
        free(image);
        image = nullptr;
    }
    g_nvrtc.destroy(&prog);
    return image;
}

} // namespace

extern "C" bool hipe_jit_available(char* why, size_t len) {
    pthread_once(&g_nvrtc_once, open_nvrtc);
    if (!g_nvrtc.ok) snprintf(why, len, "%s", g_nvrtc.why);
    return g_nvrtc.ok;
}

// Blocks of `kernel` one multiprocessor holds at once (registers, threads): the plan's log
// says it, 0 where the runtime will not.
static int blocks_per_sm(cudaKernel_t kernel) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void*)kernel, PW_BLOCK, 0) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
    }
    return n;
}

extern "C" bool hipe_jit_build(const char* source, int device, hipe_jit_kernels* kernels,
                               char* why, size_t len) {
    memset(kernels, 0, sizeof(*kernels));
    if (!hipe_jit_available(why, len)) return false;
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "cudaDeviceGetAttribute(compute capability, %d) failed", device);
        return false;
    }
    const int arch = major * 10 + minor;
    size_t klen = strlen(source) + 32;
    char* key = (char*)malloc(klen);
    if (!key) {
        snprintf(why, len, "out of memory");
        return false;
    }
    snprintf(key, klen, "sm_%d\n%s", arch, source);
    bool found = false;
    pthread_mutex_lock(&g_cache_lock);
    for (cached_kernel* c = g_cache; c && !found; c = c->next)
        if (strcmp(c->source, key) == 0) {
            *kernels = c->kernels;
            found = true;
        }
    pthread_mutex_unlock(&g_cache_lock);
    if (found) {
        free(key);
        return true;
    }
    size_t size = 0;
    char* image = compile(source, arch, &size, why, len);
    if (!image) {
        free(key);
        return false;
    }
    cudaLibrary_t lib = nullptr;
    cudaKernel_t generic = nullptr, fast = nullptr;
    cudaError_t e = cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
    free(image);
    if (e == cudaSuccess) e = cudaLibraryGetKernel(&generic, lib, HIPE_JIT_KERNEL);
    if (e == cudaSuccess && strstr(source, HIPE_JIT_FAST_KERNEL)) // written only when wanted
        e = cudaLibraryGetKernel(&fast, lib, HIPE_JIT_FAST_KERNEL);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "loading the compiled kernels: %s: %s", cudaGetErrorName(e),
                 cudaGetErrorString(e));
        if (lib) cudaLibraryUnload(lib);
        free(key);
        return false;
    }
    kernels->generic = (void*)generic;
    kernels->fast = (void*)fast;
    kernels->fast_per_sm = fast ? blocks_per_sm(fast) : 0;
    cached_kernel* c = (cached_kernel*)malloc(sizeof(*c));
    pthread_mutex_lock(&g_cache_lock);
    if (c) { // the library stays loaded for the life of the process, cached or not
        c->source = key;
        c->kernels = *kernels;
        c->next = g_cache;
        g_cache = c;
    } else {
        free(key);
    }
    pthread_mutex_unlock(&g_cache_lock);
    return true;
}

extern "C" bool hipe_jit_launch(void* kernel, const pw_program* prog, int fast_u,
                                int64_t grid_cap, void* stream, char* why, size_t len) {
    const int64_t dlast = prog->dims[prog->ndim - 1];
    const int64_t groups = (prog->n / dlast) * ((dlast + PW_VEC - 1) / PW_VEC);
    const int64_t tile = (int64_t)PW_BLOCK * fast_u;
    int64_t blocks = fast_u ? (prog->n / PW_VEC + tile - 1) / tile : (groups + PW_BLOCK - 1) / PW_BLOCK;
    if (blocks > grid_cap) blocks = grid_cap;
    if (blocks < 1) blocks = 1;
    void* args[] = {(void*)prog};
    (void)cudaGetLastError(); // an earlier, unrelated failure must not be reported as ours
    cudaError_t e = cudaLaunchKernel((const void*)kernel, dim3((unsigned)blocks), dim3(PW_BLOCK),
                                     args, 0, (cudaStream_t)stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(why, len, "compiled %s kernel launch (%lld blocks of %d threads) failed: %s: %s",
                 fast_u ? "fast" : "generic", (long long)blocks, PW_BLOCK, cudaGetErrorName(e),
                 cudaGetErrorString(e));
        return false;
    }
    return true;
}

#else // AMD

extern "C" bool hipe_jit_available(char* why, size_t len) {
    snprintf(why, len, "run-time compilation is not built for ROCm yet (hiprtc): the "
             "interpreting kernel runs");
    return false;
}

extern "C" bool hipe_jit_build(const char* source, int device, hipe_jit_kernels* kernels,
                               char* why, size_t len) {
    (void)source;
    (void)device;
    memset(kernels, 0, sizeof(*kernels));
    return hipe_jit_available(why, len);
}

extern "C" bool hipe_jit_launch(void* kernel, const pw_program* prog, int fast_u,
                                int64_t grid_cap, void* stream, char* why, size_t len) {
    (void)kernel;
    (void)prog;
    (void)fast_u;
    (void)grid_cap;
    (void)stream;
    snprintf(why, len, "no compiled kernels on ROCm");
    return false;
}

#endif
