// jit.hip — compiling kernels at run time, loading and launching them: the vendor's side
// of kernel_cache.c (row-wise and pooling kernels, one template instantiation a compile)
// and of each pointwise plan's own kernels (jit_source.c).
//
// The compiler is opened at run time, never linked: NVRTC on NVIDIA (the CUDA toolkit's,
// or PyTorch's), compiled to a cubin for the device's architecture and loaded with
// cudaLibraryLoadData; hiprtc on AMD (libhiprtc.so, or libamdhip64.so, which holds it in
// HIP 5), compiled to a code object for the device's gcnArchName and loaded with
// hipModuleLoadData.  Both APIs have the same shape, so one table holds either.  Every
// failure is a message naming the call (and the compiler's log), never an abort.  The
// pointwise plans' own kernels are NVIDIA-only for now: on ROCm their interpreter runs.
#include "hip_compat.h"
#include "hip_engine.h"
#include "rtc_facts.h"

#if defined(HIPDNN_HIP_CUDA)
#include <cudaTypedefs.h> // the driver's types (CUtensorMap) and function pointer types
#endif

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace {

#if defined(HIPDNN_HIP_CUDA)
#define RTC_NAME "NVRTC"
#define RTC_PREFIX "nvrtc"
#define RTC_CODE "CUBIN" // nvrtcGetCUBIN: machine code for the device's architecture
#else
#define RTC_NAME "hiprtc"
#define RTC_PREFIX "hiprtc"
#define RTC_CODE "Code"
#endif

typedef int rtc_result; // nvrtcResult, hiprtcResult: 0 is success
typedef struct rtc_program_* rtc_program;

struct rtc_api {
    rtc_result (*create)(rtc_program*, const char*, const char*, int, const char* const*,
                         const char* const*);
    rtc_result (*add_name)(rtc_program, const char*);
    rtc_result (*compile)(rtc_program, int, const char* const*);
    rtc_result (*lowered)(rtc_program, const char*, const char**);
    rtc_result (*log_size)(rtc_program, size_t*);
    rtc_result (*log)(rtc_program, char*);
    rtc_result (*code_size)(rtc_program, size_t*);
    rtc_result (*code)(rtc_program, char*);
    rtc_result (*destroy)(rtc_program*);
    const char* (*error)(rtc_result);
    rtc_result (*version)(int*, int*);
#if defined(HIPDNN_HIP_CUDA)
    rtc_result (*ptx_size)(rtc_program, size_t*); // for GPUs newer than this NVRTC knows
    rtc_result (*ptx)(rtc_program, char*);
    int archs[64]; // the sm_XX it makes machine code for (nvrtcGetSupportedArchs), 0: unknown
    int narchs;
#endif
    bool ok;
    char why[768];
    char library[512];
    char compiler[96]; // "NVRTC 13.0"
};
rtc_api g_rtc;
pthread_once_t g_rtc_once = PTHREAD_ONCE_INIT;

#if defined(HIPDNN_HIP_CUDA)
// Loading a library enqueues nothing and never reaches a graph, so it is done in relaxed
// capture interaction: a kernel loaded while the application captures a graph in global
// mode on some stream (torch.cuda.graph around the first execute of a plan whose pointers
// want another kernel, issue 25) leaves that capture valid.
struct relaxed_capture {
    cudaStreamCaptureMode saved = cudaStreamCaptureModeRelaxed;
    bool swapped = cudaThreadExchangeStreamCaptureMode(&saved) == cudaSuccess;
    ~relaxed_capture() {
        if (swapped) (void)cudaThreadExchangeStreamCaptureMode(&saved);
    }
};
#endif

// NVRTC: the toolkit's (any version that makes cubins: 11.1 and newer) on the loader path,
// under $CUDA_HOME or /usr/local/cuda; one PyTorch loaded is found by its name too.
// hiprtc: ROCm 6's own library, else libamdhip64 (HIP 5), under $ROCM_PATH or /opt/rocm.
// The library opened (its name in g_rtc.library), or nullptr with g_rtc.why.
void* load_rtc_library() {
#if defined(HIPDNN_HIP_CUDA)
    const char* home = getenv("CUDA_HOME");
    const char* const tails[] = {"lib64/libnvrtc.so", "lib/libnvrtc.so"};
    const char* const names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2",
                                 "libnvrtc.so", "", "",
                                 "/usr/local/cuda/lib64/libnvrtc.so",
                                 "/usr/local/cuda/lib64/libnvrtc.so.13",
                                 "/usr/local/cuda/lib64/libnvrtc.so.12"};
    const int at_home = 4; // the two "" above
    const char* looked = "libnvrtc.so.13/.12/.so on the loader path, $CUDA_HOME or /usr/local/cuda";
#else
    const char* home = getenv("ROCM_PATH");
    const char* const tails[] = {"lib/libhiprtc.so", "lib/libamdhip64.so"};
    const char* const names[] = {"libhiprtc.so", "libhiprtc.so.6", "", "",
                                 "/opt/rocm/lib/libhiprtc.so", "libamdhip64.so",
                                 "libamdhip64.so.6", "libamdhip64.so.5",
                                 "/opt/rocm/lib/libamdhip64.so"};
    const int at_home = 2;
    const char* looked = "libhiprtc.so, or libamdhip64.so holding it, on the loader path, "
                         "$ROCM_PATH or /opt/rocm";
#endif
    char in_home[2][512] = {"", ""};
    if (home && *home)
        for (int i = 0; i < 2; ++i) snprintf(in_home[i], sizeof(in_home[i]), "%s/%s", home, tails[i]);
    void* lib = nullptr;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; ++i) {
        const char* n = (int)i == at_home ? in_home[0] : (int)i == at_home + 1 ? in_home[1] : names[i];
        if (!*n) continue;
        lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
        if (lib) snprintf(g_rtc.library, sizeof(g_rtc.library), "%s", n);
    }
    if (!lib) snprintf(g_rtc.why, sizeof(g_rtc.why), "no " RTC_NAME " was found (%s)", looked);
    return lib;
}

// The compiler's functions from `lib` into g_rtc; false (lib closed) with g_rtc.why.
bool bind_rtc(void* lib) {
    struct {
        void** slot;
        const char* name;
    } syms[] = {
        {(void**)&g_rtc.create, RTC_PREFIX "CreateProgram"},
        {(void**)&g_rtc.add_name, RTC_PREFIX "AddNameExpression"},
        {(void**)&g_rtc.compile, RTC_PREFIX "CompileProgram"},
        {(void**)&g_rtc.lowered, RTC_PREFIX "GetLoweredName"},
        {(void**)&g_rtc.log_size, RTC_PREFIX "GetProgramLogSize"},
        {(void**)&g_rtc.log, RTC_PREFIX "GetProgramLog"},
        {(void**)&g_rtc.code_size, RTC_PREFIX "Get" RTC_CODE "Size"},
        {(void**)&g_rtc.code, RTC_PREFIX "Get" RTC_CODE},
        {(void**)&g_rtc.destroy, RTC_PREFIX "DestroyProgram"},
        {(void**)&g_rtc.error, RTC_PREFIX "GetErrorString"},
        {(void**)&g_rtc.version, RTC_PREFIX "Version"},
    };
    for (auto& s : syms) {
        *s.slot = dlsym(lib, s.name);
        if (!*s.slot) {
            snprintf(g_rtc.why, sizeof(g_rtc.why), "no usable " RTC_NAME " was found (%s lacks %s)",
                     g_rtc.library, s.name);
            dlclose(lib);
            return false;
        }
    }
    return true;
}

// What else g_rtc keeps: the architectures NVRTC makes machine code for, PTX for newer
// ones, and the compiler's name and version for the cache key.
void describe_rtc(void* lib) {
#if defined(HIPDNN_HIP_CUDA)
    g_rtc.ptx_size = (rtc_result(*)(rtc_program, size_t*))dlsym(lib, "nvrtcGetPTXSize");
    g_rtc.ptx = (rtc_result(*)(rtc_program, char*))dlsym(lib, "nvrtcGetPTX");
    auto count = (rtc_result(*)(int*))dlsym(lib, "nvrtcGetNumSupportedArchs"); // 11.2 and newer
    auto list = (rtc_result(*)(int*))dlsym(lib, "nvrtcGetSupportedArchs");
    int n = 0;
    if (count && list && count(&n) == 0 && n > 0 && n <= 64 && list(g_rtc.archs) == 0) g_rtc.narchs = n;
#else
    (void)lib; // hiprtc has nothing more to find
#endif
    int major = 0, minor = 0;
    if (g_rtc.version(&major, &minor) != 0) major = minor = -1;
    snprintf(g_rtc.compiler, sizeof(g_rtc.compiler), RTC_NAME " %d.%d", major, minor);
#if !defined(HIPDNN_HIP_CUDA)
    int runtime = 0; // hiprtc's own version stays put across HIP releases: add the runtime's
    if (hipRuntimeGetVersion(&runtime) == hipSuccess) {
        const size_t n = strlen(g_rtc.compiler);
        snprintf(g_rtc.compiler + n, sizeof(g_rtc.compiler) - n, " (HIP %d)", runtime);
    }
#endif
}

// ---- what the compiler is, without loading it (rtc_facts.c) -------------------------------

hipe_rtc_facts g_loaded_facts; // the loaded compiler's (open_rtc)
hipe_rtc_facts g_disk_facts;   // the disk's, while still true
bool g_disk_ok;
pthread_once_t g_disk_once = PTHREAD_ONCE_INIT;

bool facts_path(char* path, size_t len) {
    char dir[4096], why[HIPE_MSG_LEN];
    return hipe_kernel_cache_dir(dir, sizeof(dir), why, sizeof(why)) &&
           snprintf(path, len, "%s/compiler.facts", dir) < (int)len;
}

void recall_facts() {
    char path[4200];
    g_disk_ok = facts_path(path, sizeof(path)) && hipe_rtc_facts_read(path, &g_disk_facts);
}

bool same_facts(const hipe_rtc_facts& a, const hipe_rtc_facts& b) {
    return strcmp(a.compiler, b.compiler) == 0 && strcmp(a.library, b.library) == 0 &&
           a.ptx == b.ptx && a.narchs == b.narchs &&
           memcmp(a.archs, b.archs, sizeof(int) * (size_t)a.narchs) == 0;
}

// The loaded compiler's facts into g_loaded_facts, and onto the disk where they differ.
void remember_facts() {
    hipe_rtc_facts& f = g_loaded_facts;
    snprintf(f.compiler, sizeof(f.compiler), "%s", g_rtc.compiler);
    Dl_info info;
    char real[PATH_MAX];
    const char* file = dladdr((void*)g_rtc.create, &info) && info.dli_fname ? info.dli_fname
                                                                           : g_rtc.library;
    const int w = snprintf(f.library, sizeof(f.library), "%s", realpath(file, real) ? real : file);
    if (w < 0 || w >= (int)sizeof(f.library)) return; // a path too long to keep: not kept
#if defined(HIPDNN_HIP_CUDA)
    f.narchs = g_rtc.narchs;
    memcpy(f.archs, g_rtc.archs, sizeof(int) * (size_t)g_rtc.narchs);
    f.ptx = g_rtc.ptx != nullptr;
#endif
    char path[4200], why[HIPE_MSG_LEN];
    hipe_rtc_facts now;
    if (!facts_path(path, sizeof(path)) || (hipe_rtc_facts_read(path, &now) && same_facts(now, f)))
        return;
    if (!hipe_rtc_facts_write(path, &f, why, sizeof(why)))
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": %s's facts not kept: %s", RTC_NAME, why);
}

void open_rtc() {
    void* lib = load_rtc_library();
    if (!lib || !bind_rtc(lib)) return;
    describe_rtc(lib);
    g_rtc.ok = true; // stays loaded for the life of the process
    remember_facts();
}

bool jit_off(char* why, size_t len) {
    const char* mode = getenv("HIPDNN_HIP_JIT");
    if (mode && strcmp(mode, "0") == 0) {
        snprintf(why, len, "HIPDNN_HIP_JIT=0 turns run-time compilation off");
        return true;
    }
    return false;
}

bool rtc_open(char* why, size_t len) {
    if (jit_off(why, len)) return false;
    pthread_once(&g_rtc_once, open_rtc);
    if (!g_rtc.ok) snprintf(why, len, "%s", g_rtc.why);
    return g_rtc.ok;
}

// The compiler's facts: the disk's while they hold (nothing loaded: a warm process needs
// the compiler only to key its kernels), else the compiler's, loaded now; nullptr with why.
const hipe_rtc_facts* rtc_facts(char* why, size_t len) {
    if (jit_off(why, len)) return nullptr;
    pthread_once(&g_disk_once, recall_facts);
    if (g_disk_ok) return &g_disk_facts;
    return rtc_open(why, len) ? &g_loaded_facts : nullptr;
}

// The compiler's log after a failure, on one line, at most `len` bytes.
void rtc_log(rtc_program prog, char* out, size_t len) {
    size_t n = 0;
    out[0] = '\0';
    if (g_rtc.log_size(prog, &n) != 0 || n <= 1) return;
    char* full = (char*)malloc(n);
    if (full && g_rtc.log(prog, full) == 0) snprintf(out, len, "%s", full);
    free(full);
    for (char* c = out; *c; ++c)
        if (*c == '\n' || *c == '\r') *c = ' ';
}

// Compiles `source` with `opts`, instantiating `name` when given (then *lowered gets its
// mangled name, malloc'd): the image (malloc'd) or NULL with `why`.  The compiler is loaded
// here, not by hipe_rtc_target_of, which the disk's facts may have answered without it.
void* rtc_compile(const char* source, const char* file, const char* name, const char* const* opts,
                  int nopts, size_t* size, char** lowered, char* why, size_t len) {
    if (lowered) *lowered = nullptr;
    if (!rtc_open(why, len)) return nullptr;
    const char* const* texts;
    const char* const* names;
    int nheaders;
    hipe_jit_headers(&texts, &names, &nheaders);
    rtc_program prog = nullptr;
    rtc_result r = g_rtc.create(&prog, source, file, nheaders, texts, names);
    if (r != 0) {
        snprintf(why, len, RTC_PREFIX "CreateProgram: %s", g_rtc.error(r));
        return nullptr;
    }
    char* image = nullptr;
    rtc_result (*code_size)(rtc_program, size_t*) = g_rtc.code_size;
    rtc_result (*code)(rtc_program, char*) = g_rtc.code;
    const char* call = RTC_PREFIX "AddNameExpression";
    if (name && (r = g_rtc.add_name(prog, name)) != 0) goto failed;
    call = RTC_PREFIX "CompileProgram";
    if ((r = g_rtc.compile(prog, nopts, opts)) != 0) {
        char log[400];
        rtc_log(prog, log, sizeof(log));
        snprintf(why, len, RTC_PREFIX "CompileProgram (%s, %s): %s: %s", g_rtc.library, opts[0],
                 g_rtc.error(r), log);
        g_rtc.destroy(&prog);
        return nullptr;
    }
    if (name) {
        const char* mangled = nullptr;
        call = RTC_PREFIX "GetLoweredName";
        if ((r = g_rtc.lowered(prog, name, &mangled)) != 0) goto failed;
        if (!mangled || !(*lowered = strdup(mangled))) {
            snprintf(why, len, "%s: %s", call, mangled ? "out of memory" : "no name");
            g_rtc.destroy(&prog); // the lowered name lives in the program
            return nullptr;
        }
    }
    call = RTC_PREFIX "Get" RTC_CODE;
#if defined(HIPDNN_HIP_CUDA)
    if (strncmp(opts[0], "--gpu-architecture=compute_", 27) == 0) { // PTX, for the driver
        call = "nvrtcGetPTX";
        code_size = g_rtc.ptx_size;
        code = g_rtc.ptx;
    }
#endif
    if ((r = code_size(prog, size)) != 0) goto failed;
    if (!(image = (char*)malloc(*size ? *size : 1))) {
        snprintf(why, len, "%s: out of memory for %zu bytes", call, *size);
    } else if ((r = code(prog, image)) != 0) {
        free(image);
        image = nullptr;
        goto failed;
    }
    g_rtc.destroy(&prog);
    if (!image && name) {
        free(*lowered);
        *lowered = nullptr;
    }
    return image;
failed:
    snprintf(why, len, "%s: %s", call, g_rtc.error(r));
    g_rtc.destroy(&prog);
    if (name && *lowered) {
        free(*lowered);
        *lowered = nullptr;
    }
    return nullptr;
}

void say(char* why, size_t len, const char* call, hipError_t e) {
    snprintf(why, len, "%s: %s: %s", call, hipGetErrorName(e), hipGetErrorString(e));
}

} // namespace

// ---- the vendor side of kernel_cache.c --------------------------------------------------------

extern "C" bool hipe_rtc_available(char* why, size_t len) { return rtc_facts(why, len) != nullptr; }

extern "C" bool hipe_rtc_target_of(int device, hipe_rtc_target* t, char* why, size_t len) {
    memset(t, 0, sizeof(*t));
    const hipe_rtc_facts* f = rtc_facts(why, len);
    if (!f) return false;
    snprintf(t->compiler, sizeof(t->compiler), "%s", f->compiler);
#if defined(HIPDNN_HIP_CUDA)
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, len, "cudaDeviceGetAttribute(compute capability, %d) failed", device);
        return false;
    }
    t->dialect = HIPE_RTC_CUDA;
    const int cc = major * 10 + minor;
    snprintf(t->arch, sizeof(t->arch), "sm_%d", cc);
    // Machine code where this NVRTC knows the GPU; for a newer GPU, PTX of the newest
    // architecture it knows, which the driver compiles on loading (as for the plugin's own
    // PTX): an older NVRTC then still serves.
    int target = f->narchs > 0 ? 0 : cc;
    for (int i = 0; i < f->narchs; ++i)
        if (f->archs[i] <= cc && f->archs[i] > target) target = f->archs[i];
    if (target == 0) {
        snprintf(why, len, "%s (%s) knows no architecture up to %s (its oldest: sm_%d)",
                 f->compiler, f->library, t->arch, f->archs[0]);
        return false;
    }
    // sm_90a on an sm_90 GPU: its machine code may use wgmma and setmaxnreg (gm_wgmma.h)
    const bool sm90a = target == 90 && cc == 90;
    if (sm90a) snprintf(t->arch, sizeof(t->arch), "sm_90a");
    snprintf(t->options, sizeof(t->options),
             "--gpu-architecture=%s_%d%s --std=c++17 -DHIPDNN_HIP_JIT=1",
             target == cc || !f->ptx ? "sm" : "compute", target, sm90a ? "a" : "");
    snprintf(t->scope, sizeof(t->scope), "%s", t->arch); // a library loads in every context
#else
    hipDeviceProp_t prop;
    const hipError_t e = hipGetDeviceProperties(&prop, device);
    if (e != hipSuccess) {
        (void)hipGetLastError();
        char call[64];
        snprintf(call, sizeof(call), "hipGetDeviceProperties(%d)", device);
        say(why, len, call, e);
        return false;
    }
    t->dialect = HIPE_RTC_HIP;
    snprintf(t->arch, sizeof(t->arch), "%s", prop.gcnArchName); // "gfx90a:sramecc+:xnack-"
    snprintf(t->options, sizeof(t->options), "--offload-arch=%s -std=c++17 -O3 -DHIPDNN_HIP_JIT=1",
             t->arch);
    snprintf(t->scope, sizeof(t->scope), "%s@%d", t->arch, device); // a module is the device's
#endif
    return true;
}

extern "C" bool hipe_rtc_compile(const hipe_rtc_target* t, const char* source, const char* name,
                                 void** image, size_t* size, char** lowered, char* why, size_t len) {
    *image = nullptr;
    *lowered = nullptr;
    // the options, split where target_of joined them (none holds a space)
    char opts_text[sizeof(t->options)];
    snprintf(opts_text, sizeof(opts_text), "%s", t->options);
    const char* opts[8];
    int nopts = 0;
    char* rest = nullptr;
    for (char* s = strtok_r(opts_text, " ", &rest); s && nopts < 8; s = strtok_r(nullptr, " ", &rest))
        opts[nopts++] = s;
    *image = rtc_compile(source, "hipdnn_kernels.cu", name, opts, nopts, size, lowered, why, len);
    return *image != nullptr;
}

extern "C" bool hipe_rtc_load(const hipe_rtc_target* t, int device, const void* image, size_t size,
                              const char* lowered, void** kernel, char* why, size_t len) {
    (void)t;
    (void)size;
    *kernel = nullptr;
#if defined(HIPDNN_HIP_CUDA)
    (void)device; // a library is loaded into each context as it is first used there
    cudaLibrary_t lib = nullptr;
    cudaKernel_t k = nullptr;
    relaxed_capture relaxed;
    cudaError_t e = cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
    const char* call = "cudaLibraryLoadData";
    if (e == cudaSuccess) {
        call = "cudaLibraryGetKernel";
        e = cudaLibraryGetKernel(&k, lib, lowered);
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        say(why, len, call, e);
        if (lib) cudaLibraryUnload(lib);
        return false;
    }
    // Into the current context now, while the plan is built, rather than at its first launch
    // (CUDA's lazy loading), which may come inside an application's capture (issue 25).
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, (const void*)k) != cudaSuccess) (void)cudaGetLastError();
    *kernel = (void*)k; // the library stays loaded for the life of the process
    return true;
#else
    int current = -1;
    hipError_t e = hipGetDevice(&current);
    const char* call = "hipGetDevice";
    hipModule_t module = nullptr;
    hipFunction_t fn = nullptr;
    if (e == hipSuccess && current != device) {
        call = "hipSetDevice";
        e = hipSetDevice(device);
    }
    if (e == hipSuccess) {
        call = "hipModuleLoadData";
        e = hipModuleLoadData(&module, image);
    }
    if (e == hipSuccess) {
        call = "hipModuleGetFunction";
        e = hipModuleGetFunction(&fn, module, lowered);
    }
    if (e != hipSuccess) {
        (void)hipGetLastError();
        say(why, len, call, e);
        if (module) (void)hipModuleUnload(module);
    }
    if (current >= 0 && current != device) (void)hipSetDevice(current);
    *kernel = (void*)fn; // the module stays loaded for the life of the process
    return e == hipSuccess;
#endif
}

extern "C" bool hipe_rtc_launch(void* kernel, int64_t blocks, int threads, const void* arg,
                                void* stream, char* why, size_t len) {
    void* args[] = {const_cast<void*>(arg)};
    (void)hipGetLastError(); // an earlier, unrelated failure must not be reported as ours
#if defined(HIPDNN_HIP_CUDA)
    cudaError_t e = cudaLaunchKernel((const void*)kernel, dim3((unsigned)blocks),
                                     dim3((unsigned)threads), args, 0, (cudaStream_t)stream);
    if (e == cudaSuccess) e = cudaGetLastError();
#else
    hipError_t e = hipModuleLaunchKernel((hipFunction_t)kernel, (unsigned)blocks, 1, 1,
                                         (unsigned)threads, 1, 1, 0, (hipStream_t)stream, args,
                                         nullptr);
    if (e == hipSuccess) e = hipGetLastError();
#endif
    if (e != hipSuccess) {
        snprintf(why, len, "kernel launch (%lld blocks of %d threads) failed: %s: %s",
                 (long long)blocks, threads, hipGetErrorName(e), hipGetErrorString(e));
        return false;
    }
    return true;
}

// A matmul kernel (gemm_program.c): its one argument the program, `smem` bytes of dynamic
// shared memory a block (over the default 48 KiB only once the kernel's limit is raised).
extern "C" bool hipe_gm_launch(void* kernel, const gm_program* prog, const gm_tma* tma,
                               int64_t blocks, int threads, int smem, void* stream, char* why,
                               size_t len) {
    void* args[] = {const_cast<gm_program*>(prog), const_cast<gm_tma*>(tma)};
    (void)hipGetLastError(); // an earlier, unrelated failure must not be reported as ours
    const char* call = "kernel launch";
#if defined(HIPDNN_HIP_CUDA)
    cudaError_t e = cudaSuccess;
    if (smem > 48 * 1024) {
        call = "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize)";
        e = cudaFuncSetAttribute((const void*)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem);
    }
    if (e == cudaSuccess) {
        call = "kernel launch";
        e = cudaLaunchKernel((const void*)kernel, dim3((unsigned)blocks), dim3((unsigned)threads),
                             args, (size_t)smem, (cudaStream_t)stream);
    }
    if (e == cudaSuccess) e = cudaGetLastError();
#else
    hipError_t e = hipModuleLaunchKernel((hipFunction_t)kernel, (unsigned)blocks, 1, 1,
                                         (unsigned)threads, 1, 1, (unsigned)smem,
                                         (hipStream_t)stream, args, nullptr);
    if (e == hipSuccess) e = hipGetLastError();
#endif
    if (e != hipSuccess) {
        snprintf(why, len, "%s (matmul: %lld blocks of %d threads, %d bytes of shared memory) "
                 "failed: %s: %s", call, (long long)blocks, threads, smem, hipGetErrorName(e),
                 hipGetErrorString(e));
        return false;
    }
    return true;
}

extern "C" bool hipe_fa_launch(void* kernel, const fa_program* prog, int64_t blocks, int threads,
                               int smem, void* stream, char* why, size_t len) {
    void* args[] = {const_cast<fa_program*>(prog)};
    (void)hipGetLastError(); // an earlier, unrelated failure must not be reported as ours
    const char* call = "kernel launch";
#if defined(HIPDNN_HIP_CUDA)
    cudaError_t e = cudaSuccess;
    if (smem > 48 * 1024) {
        call = "cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize)";
        e = cudaFuncSetAttribute((const void*)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 smem);
    }
    if (e == cudaSuccess) {
        call = "kernel launch";
        e = cudaLaunchKernel((const void*)kernel, dim3((unsigned)blocks), dim3((unsigned)threads),
                             args, (size_t)smem, (cudaStream_t)stream);
    }
    if (e == cudaSuccess) e = cudaGetLastError();
#else
    hipError_t e = hipModuleLaunchKernel((hipFunction_t)kernel, (unsigned)blocks, 1, 1,
                                         (unsigned)threads, 1, 1, (unsigned)smem,
                                         (hipStream_t)stream, args, nullptr);
    if (e == hipSuccess) e = hipGetLastError();
#endif
    if (e != hipSuccess) {
        snprintf(why, len, "%s (attention: %lld blocks of %d threads, %d bytes of shared memory) "
                 "failed: %s: %s", call, (long long)blocks, threads, smem, hipGetErrorName(e),
                 hipGetErrorString(e));
        return false;
    }
    return true;
}

#if defined(HIPDNN_HIP_CUDA)
// The driver's cuTensorMapEncodeTiled, found through the runtime once (the plugin links no
// libcuda): NULL where the driver has none.
static PFN_cuTensorMapEncodeTiled_v12000 g_encode_tiled;
static pthread_once_t g_encode_once = PTHREAD_ONCE_INIT;

static void find_encode_tiled() {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess)
        g_encode_tiled = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    (void)cudaGetLastError();
}
#endif

extern "C" bool hipe_gm_tensor_map(unsigned char* map, int dtype, const void* base,
                                   const uint64_t* dims, const uint64_t* strides,
                                   const uint32_t* box, char* why, size_t len) {
#if defined(HIPDNN_HIP_CUDA)
    static_assert(sizeof(CUtensorMap) == 128, "gm_tma holds a CUtensorMap in 128 bytes");
    pthread_once(&g_encode_once, find_encode_tiled);
    if (!g_encode_tiled) {
        snprintf(why, len, "the CUDA driver has no cuTensorMapEncodeTiled");
        return false;
    }
    const cuuint32_t ones[5] = {1, 1, 1, 1, 1};
    const CUtensorMapDataType type =
        dtype == PW_BF16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
        : dtype == PW_F32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 /* bits as they are: wgmma reads TF32 */
                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const CUresult r = g_encode_tiled(
        (CUtensorMap*)map, type, 5, const_cast<void*>(base), (const cuuint64_t*)dims, (const cuuint64_t*)strides,
        (const cuuint32_t*)box, ones, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        snprintf(why, len, "cuTensorMapEncodeTiled (dims %llu x %llu x %llu x %llu x %llu, box "
                 "%u x %u) failed: CUresult %d", (unsigned long long)dims[0],
                 (unsigned long long)dims[1], (unsigned long long)dims[2],
                 (unsigned long long)dims[3], (unsigned long long)dims[4], box[0], box[1], (int)r);
        return false;
    }
    return true;
#else
    (void)map, (void)dtype, (void)base, (void)dims, (void)strides, (void)box;
    snprintf(why, len, "no tensor memory accelerator on ROCm");
    return false;
#endif
}

// ---- each pointwise plan's own kernels ---------------------------------------------------------

#if defined(HIPDNN_HIP_CUDA)

namespace {

struct cached_kernel {
    char* source; // the key: the full source, architecture included
    hipe_jit_kernels kernels;
    cached_kernel* next;
};
pthread_mutex_t g_cache_lock = PTHREAD_MUTEX_INITIALIZER;
cached_kernel* g_cache;

// Blocks of `kernel` one multiprocessor holds at once (registers, threads): the plan's log
// says it, 0 where the runtime will not.
int blocks_per_sm(cudaKernel_t kernel) {
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void*)kernel, PW_BLOCK, 0) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        n = 0;
    }
    return n;
}

} // namespace

extern "C" bool hipe_jit_available(char* why, size_t len) { return rtc_open(why, len); }

extern "C" bool hipe_jit_build(const char* source, int device, hipe_jit_kernels* kernels,
                               char* why, size_t len) {
    memset(kernels, 0, sizeof(*kernels));
    hipe_rtc_target t;
    if (!hipe_rtc_target_of(device, &t, why, len)) return false;
    size_t klen = strlen(source) + 32;
    char* key = (char*)malloc(klen);
    if (!key) {
        snprintf(why, len, "out of memory");
        return false;
    }
    snprintf(key, klen, "%s\n%s", t.arch, source);
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
    // the disk cache's (a later process loads it, and needs no compiler), else compiled now;
    // one the driver will not load (a driver update?) is compiled again
    cudaLibrary_t lib = nullptr;
    cudaKernel_t generic = nullptr, fast = nullptr;
    cudaError_t e = cudaErrorInvalidValue;
    relaxed_capture relaxed;
    for (int again = 0; again < 2 && e != cudaSuccess; ++again) {
        void* image = nullptr;
        size_t size = 0;
        if (!hipe_kernel_image(&t, source, HIPE_JIT_KERNEL, again == 1, &image, &size, why, len)) {
            free(key);
            return false;
        }
        e = cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0);
        free(image);
        if (e != cudaSuccess) (void)cudaGetLastError();
    }
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

#else // AMD: the row-wise and pooling kernels above, but no pointwise plan kernels yet

extern "C" bool hipe_jit_available(char* why, size_t len) {
    snprintf(why, len, "the pointwise plans' own kernels are not built for ROCm yet: the "
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
