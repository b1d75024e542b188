/* The plugin ABI 1.1 entry points of the HIP engine: identity, the load-time device probe,
 * handles per device, applicability, execution contexts and EnqueueOpGraph. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "staged.h"

struct hipdnnEnginePluginHandle {
    int device;
    int sm_count;
    hipdnnStream_t stream;
    char reason[HIPE_MSG_LEN]; /* GetNotApplicableReason's answer, valid until the next call */
};

struct hipdnnEnginePluginExecutionContext {
    hipe_plan plan;
    bool fast;              /* the fast way, wherever the pointers are aligned (plan time) */
    hipe_jit_kernels jit;   /* the plan's own compiled kernels; generic NULL: interpreter */
    _Atomic(int) jit_ok;    /* cleared when a compiled kernel would not launch */
    _Atomic(unsigned) ran;  /* kernels run so far (bit per RAN_*), to log each first run */
    /* GetKernelInfo's answer: the one fused kernel, or a kernel a stage */
    uint32_t num_kernels;
    hipdnnPluginKernelInfo_t* kernels;
    uint32_t* all_nodes;    /* 0 .. n-1, the one fused kernel's nodes */
    char detail[HIPE_MSG_LEN];
};

static hipdnnPluginStatus_t fail(hipdnnPluginStatus_t st, const char* what) {
    return hipdnnSdkPluginFail(st, HIPE_ENGINE_NAME ": %s", what);
}

static uint64_t engine_id(void) { return hipdnnSdkFnv1a64(HIPE_ENGINE_NAME); }

/* ---- the device, probed once per process ---------------------------------------------- */

static pthread_once_t g_probe_once = PTHREAD_ONCE_INIT;
static bool g_have_device;
static int g_device_count;
static char g_no_device[HIPE_MSG_LEN];

static void probe(void) {
    char why[HIPE_MSG_LEN];
    g_have_device = hipe_probe(&g_device_count, why, sizeof(why));
    if (!g_have_device)
        hipdnnSdkFormat(g_no_device, sizeof(g_no_device), HIPE_ENGINE_NAME " (%s build): %s",
                        hipe_vendor(), why);
}

static bool have_device(void) {
    pthread_once(&g_probe_once, probe);
    if (!g_have_device) hipe_set_error("%s", g_no_device);
    return g_have_device;
}

/* ABI 1.1: minor 1 whatever minor hipdnn_plugin.h grows to. */
HIPDNN_SDK_PLUGIN_BASE(HIPE_ENGINE_NAME, HIPE_PLUGIN_VERSION, HIPDNN_PLUGIN_API_MAJOR, 1)

/* ---- engines and handles ------------------------------------------------------------ */

/* Called at load: without a device the plugin declines to load (NOT_SUPPORTED), so that
 * the other vendor's build of this engine, if present and usable, registers "hip". */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids,
                                                                            uint32_t max,
                                                                            uint32_t* num) {
    if (!num) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetAllEngineIds: NULL count");
    *num = 0;
    if (!have_device()) return HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED;
    *num = 1;
    if (ids && max >= 1) ids[0] = engine_id();
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateForDevice(
    hipdnnEnginePluginHandle_t* handle, const hipdnnPluginHandleInfo_t* info) {
    if (!handle || !info)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "CreateForDevice: NULL handle or info");
    *handle = NULL;
    if (!have_device()) return HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED;
    int device = info->struct_size >= sizeof(uint32_t) + sizeof(int32_t) ? info->device : 0;
    if (device < 0 || device >= g_device_count) {
        hipe_set_error(HIPE_ENGINE_NAME ": CreateForDevice: device %d does not exist (%d %s "
                       "device%s)", device, g_device_count, hipe_vendor(),
                       g_device_count == 1 ? "" : "s");
        return HIPDNN_PLUGIN_STATUS_INVALID_VALUE;
    }
    char why[HIPE_MSG_LEN];
    int sm = 0;
    if (!hipe_sm_count(device, &sm, why, sizeof(why))) {
        hipe_set_error(HIPE_ENGINE_NAME ": CreateForDevice: %s", why);
        return HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR;
    }
    struct hipdnnEnginePluginHandle* h = calloc(1, sizeof(*h));
    if (!h) return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateForDevice: out of memory");
    h->device = device;
    h->sm_count = sm > 0 ? sm : 1;
    *handle = h;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ABI 1.0's create: the calling thread's current device. */
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t
hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* handle) {
    hipdnnPluginHandleInfo_t info = {(uint32_t)sizeof(info), 0};
    char why[HIPE_MSG_LEN];
    if (have_device() && !hipe_get_device(&info.device, why, sizeof(why))) info.device = 0;
    return hipdnnEnginePluginCreateForDevice(handle, &info);
}

HIPDNN_SDK_PLUGIN_HANDLE_BASE(HIPE_ENGINE_NAME)

/* 0 in each: the engine's own choice (hip_engine.h, "knobs"). */
static const hipdnnPluginKnobInfo_t k_knobs[] = {
    {HIPE_KNOB_SPLIT_K, "split_k_slices", 0, 64, 0},
    {HIPE_KNOB_KERNEL_CFG, "kernel", 0, HIPE_KERNEL_CFGS - 1, 0},
    {HIPE_KNOB_TILE_M, "tile_m", 0, 128, 0},
    {HIPE_KNOB_TILE_N, "tile_n", 0, 256, 0},
    {HIPE_KNOB_TF32, "tf32", 0, 1, 0},
};
/* Which of each range builds a plan: split-k, the kernel and TF32 take every value; the
 * tile's rows and width only those the sm_90 kernel has (autotuning sweeps these; TF32 it
 * leaves to the user's config: hipdnn/_pygraph/autotune.py and ep/plan.c skip knob 20000). */
static const int64_t k_tile_m_values[] = {0, 64, 128};
static const int64_t k_tile_n_values[] = {0, 64, 128, 256};
static const hipdnnPluginKnobValues_t k_knob_values[] = {
    {1, 0, NULL},
    {1, 0, NULL},
    {64, 3, k_tile_m_values},
    {64, 4, k_tile_n_values},
    {1, 0, NULL},
};

static const hipdnnPluginEngineDetails_t k_details = {
    .struct_size = (uint32_t)sizeof(hipdnnPluginEngineDetails_t),
    .engine_id = 0, /* filled once */
    .name = HIPE_ENGINE_NAME,
    .memory_space = HIPE_MEMORY_SPACE,
    .priority = HIPE_PRIORITY,
    .flags = HIPDNN_ENGINE_FLAG_DETERMINISTIC | HIPDNN_ENGINE_FLAG_RUNTIME_COMPILATION,
    .num_knobs = (int32_t)(sizeof(k_knobs) / sizeof(k_knobs[0])),
    .knobs = k_knobs,
    .knob_values = k_knob_values,
    .notes = "GPU: matmul and convolution on tensor cores with their pointwise epilogue, "
             "norms, softmax and reductions a row a block, pointwise graphs fused into one "
             "kernel; kernels compiled when a plan is built; fp32 compute over "
             "fp32/fp16/bf16 storage",
};
static hipdnnPluginEngineDetails_t g_details;

static void fill_details(void) {
    g_details = k_details;
    g_details.engine_id = engine_id();
#ifdef HIPE_HOST_EMULATION
    /* Tests with a fake GPU driver run the emulation on "device" memory. */
    const char* m = getenv("HIPDNN_EMULATED_MEMORY");
    if (m && strcmp(m, "device") == 0) g_details.memory_space = HIPDNN_MEMORY_DEVICE;
#endif
}

static pthread_once_t g_details_once = PTHREAD_ONCE_INIT;

static const hipdnnPluginEngineDetails_t* engine_details(void) {
    pthread_once(&g_details_once, fill_details);
    return &g_details;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t handle, uint64_t id, const hipdnnPluginEngineDetails_t** details) {
    (void)handle; /* answered without one */
    if (!details) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetEngineDetails: NULL output");
    hipdnnPluginStatus_t st = hipdnnSdkPluginCheckEngine(HIPE_ENGINE_NAME, id, "GetEngineDetails");
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    *details = engine_details();
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t handle, const hipdnnPluginEngineDetails_t* details) {
    (void)handle;
    if (details && details != &g_details)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                    "DestroyEngineDetails: details not given out by this plugin");
    return HIPDNN_PLUGIN_STATUS_SUCCESS; /* static */
}

/* ---- graphs -------------------------------------------------------------------------- */

/* hipe_compile as a yes or no: the plan is thrown away. */
static bool compiles(void* ctx, const hipdnnSdkGraph* g, char* why, size_t len) {
    (void)ctx; /* any handle's device compiles the same */
    hipe_plan plan;
    const bool ok = hipe_compile(g, NULL, &plan, why, len);
    hipe_plan_free(&plan);
    return ok;
}

HIPDNN_SDK_PLUGIN_APPLICABILITY_BASE(HIPE_ENGINE_NAME, compiles)

/* Decodes config + graph and compiles; NULL context with the error set if not possible. */
static hipdnnPluginStatus_t prepare(hipdnnEnginePluginHandle_t handle, const uint8_t* cfg_bytes,
                                    size_t cfg_size, const uint8_t* graph, size_t graph_size,
                                    const char* fn, hipe_plan* plan) {
    if (!handle) {
        hipe_set_error(HIPE_ENGINE_NAME ": %s: NULL handle", fn);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    int64_t v[sizeof(k_knobs) / sizeof(k_knobs[0])];
    hipdnnPluginStatus_t st = hipdnnSdkPluginConfigKnobs(
        HIPE_ENGINE_NAME, cfg_bytes, cfg_size, fn, k_knobs, k_details.num_knobs, v);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    const hipe_knobs knobs = {.split_k = (int)v[0], .kernel_cfg = (int)v[1],
                              .tile_m = (int)v[2], .tile_n = (int)v[3], .tf32 = (int)v[4]};
    if (knobs.tile_m && knobs.tile_m != 64 && knobs.tile_m != 128) {
        hipe_set_error(HIPE_ENGINE_NAME ": %s: knob %d (TILE_M) = %d: takes 0 (the engine's "
                       "choice), 64 or 128", fn, HIPE_KNOB_TILE_M, knobs.tile_m);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    if (knobs.tile_n && knobs.tile_n != 64 && knobs.tile_n != 128 && knobs.tile_n != 256) {
        hipe_set_error(HIPE_ENGINE_NAME ": %s: knob %d (TILE_N) = %d: takes 0 (the engine's "
                       "choice), 64, 128 or 256", fn, HIPE_KNOB_TILE_N, knobs.tile_n);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    hipdnnSdkGraph* g = hipdnnSdkPluginDecodeGraph(HIPE_ENGINE_NAME, graph, graph_size, fn);
    if (!g) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    char err[HIPE_MSG_LEN];
    if (!hipe_compile(g, &knobs, plan, err, sizeof(err))) {
        hipe_set_error("%s", err);
        hipe_plan_free(plan);
        hipdnnSdkGraphFree(g);
        return HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED;
    }
    plan->graph = g;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* One fused kernel keeps its intermediates in registers; stages keep the values they pass
 * each other in the workspace. */
static size_t workspace_of(const hipe_plan* plan) {
    return plan->staged ? plan->staged->workspace : 0;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, size_t* workspace_size) {
    if (!workspace_size)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "GetWorkspaceSize: NULL output");
    hipe_plan plan;
    hipdnnPluginStatus_t st = prepare(handle, engine_config, config_size, graph, graph_size,
                                      "GetWorkspaceSize", &plan);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) return st;
    *workspace_size = workspace_of(&plan);
    hipe_plan_free(&plan);
    hipdnnSdkGraphFree(plan.graph);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* $HIPDNN_HIP_JIT_DUMP names a folder that receives each generated kernel source with
 * the headers it includes, so that tests can compile them where no GPU is. */
static void dump_file(const char* dir, const char* name, const char* text) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE* f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

void hipe_dump_source(const char* kind, const char* suffix, const char* src) {
    const char* dir = getenv("HIPDNN_HIP_JIT_DUMP");
    if (!dir || !*dir || !src) return;
    static atomic_int counter;
    char name[64];
    const char* const* texts;
    const char* const* names;
    int n;
    hipe_jit_headers(&texts, &names, &n);
    snprintf(name, sizeof(name), "hipdnn_%s_%d.%s", kind, atomic_fetch_add(&counter, 1), suffix);
    dump_file(dir, name, src);
    for (int i = 0; i < n; ++i) dump_file(dir, names[i], texts[i]);
}

/* ... and, once a process, the row-wise and pooling families' sources for each compiler
 * (hipdnn_rw.cu, hipdnn_rs.hip, ...) with kernels.txt: every kernel the plugin can ask
 * for, a line each ("rw rw_norm<1, 0, -1>"), listed by kernel_names.c.  The emulation
 * also "compiles" each, so a kernel it lacks is a line "# not emulated: <name>". */
static void dump_families_now(void) {
    const char* dir = getenv("HIPDNN_HIP_JIT_DUMP");
    if (!dir || !*dir) return;
    static const char* const family[HIPE_FAMILIES] = {"rw", "rs"};
    char name[64];
    for (int f = 0; f < HIPE_FAMILIES; ++f) {
        snprintf(name, sizeof(name), "hipdnn_%s.cu", family[f]);
        dump_file(dir, name, hipe_family_source(f, HIPE_RTC_CUDA));
        snprintf(name, sizeof(name), "hipdnn_%s.hip", family[f]);
        dump_file(dir, name, hipe_family_source(f, HIPE_RTC_HIP));
    }
    const int n = hipe_kernel_enumerate(NULL, 0);
    hipe_kernel_id* ids = n > 0 ? malloc((size_t)n * sizeof(*ids)) : NULL;
    char path[4096];
    snprintf(path, sizeof(path), "%s/kernels.txt", dir);
    FILE* out = ids && hipe_kernel_enumerate(ids, n) == n ? fopen(path, "w") : NULL;
    for (int i = 0; out && i < n; ++i) {
        char kname[HIPE_KERNEL_NAME_LEN];
        hipe_kernel_name(ids[i], kname, sizeof(kname));
        fprintf(out, "%s %s\n", family[hipe_kernel_family(ids[i])], kname);
#ifdef HIPE_HOST_EMULATION
        hipe_rtc_target t;
        void* image = NULL;
        char* lowered = NULL;
        size_t size = 0;
        char why[HIPE_MSG_LEN];
        if (!hipe_rtc_target_of(0, &t, why, sizeof(why)) ||
            !hipe_rtc_compile(&t, "", kname, &image, &size, &lowered, why, sizeof(why)))
            fprintf(out, "# not emulated: %s\n", kname);
        free(image);
        free(lowered);
#endif
    }
    if (out) fclose(out);
    free(ids);
}

static void dump_families(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, dump_families_now);
}

/* $HIPDNN_HIP_KERNEL: "fast" (the default) takes the fast way for plans whose tensors are
 * all contiguous, whenever their pointers are 16-byte aligned; "generic" never does, to
 * compare the two.  Read at plan time. */
static bool want_fast_way(void) {
    const char* k = getenv("HIPDNN_HIP_KERNEL");
    if (!k || !*k || strcmp(k, "fast") == 0) return true;
    if (strcmp(k, "generic") == 0) return false;
    hipe_log(HIPDNN_LOG_WARN, HIPE_ENGINE_NAME ": HIPDNN_HIP_KERNEL=%s is neither 'fast' nor "
             "'generic'; using 'fast'", k);
    return true;
}

/* A pointwise program's own kernels, compiled once at plan time; without them (no run-time
 * compiler, HIPDNN_HIP_JIT=0, a compile failure) the interpreting kernels run it.  `what`
 * names it in the log ("graph 'g'", "graph 'g', stage 2"). */
static void compile_kernel(hipdnnEnginePluginHandle_t handle, const hipe_plan* plan,
                           hipe_jit_kernels* jit, _Atomic(int)* jit_ok, bool* fast,
                           const char* what) {
    *fast = plan->fast && want_fast_way();
    const char* mode = getenv("HIPDNN_HIP_JIT");
    if (mode && strcmp(mode, "0") == 0) {
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": %s runs on the interpreting kernel%s: "
                 "HIPDNN_HIP_JIT=0", what, *fast ? " (fast way)" : "");
        return;
    }
    char* src = hipe_jit_source(plan, strcmp(hipe_vendor(), "ROCm") != 0, *fast);
    hipe_dump_source("pw", "cu", src);
    char why[HIPE_MSG_LEN] = "out of memory";
    if (src && hipe_jit_build(src, handle->device, jit, why, sizeof(why))) {
        atomic_store(jit_ok, 1);
        if (*fast)
            hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": %s: its own kernel is compiled (fast way: "
                     "%d vectors of %d a thread, %d blocks of %d resident an SM; generic where "
                     "pointers are not 16-byte aligned)", what, plan->fast_u, PW_VEC,
                     jit->fast_per_sm, PW_BLOCK);
        else
            hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": %s: its own kernel is compiled (generic "
                     "way%s)", what, plan->fast ? ": HIPDNN_HIP_KERNEL=generic" : "");
    } else {
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": %s runs on the interpreting kernel%s: %s",
                 what, *fast ? " (fast way)" : "", why);
    }
    free(src);
}

/* The plan's kernels: its own fused kernel, or each stage's: a pointwise stage's own
 * kernel (else the interpreter runs it); the row-wise or pooling kernel a stage runs with
 * 16-byte aligned pointers, which it must have (the support check declined the graph
 * where no run-time compiler is): false with the error set when it cannot be compiled. */
static bool compile_kernels(hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t c) {
    char what[HIPE_MSG_LEN];
    struct hipe_staged* s = c->plan.staged;
    dump_families();
    if (!s) {
        hipdnnSdkFormat(what, sizeof(what), "graph '%s'", c->plan.graph->name);
        compile_kernel(handle, &c->plan, &c->jit, &c->jit_ok, &c->fast, what);
        return true;
    }
    for (int k = 0; k < s->nstages; ++k) {
        hipe_stage* st = &s->stages[k];
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': stage %d of %d: %s",
                 c->plan.graph->name, k + 1, s->nstages, st->what);
        if (st->kind == HIPE_STAGE_POINTWISE) {
            hipdnnSdkFormat(what, sizeof(what), "graph '%s', stage %d", c->plan.graph->name, k + 1);
            compile_kernel(handle, &st->pw, &st->jit, &st->jit_ok, &st->fast, what);
            continue;
        }
        char why[HIPE_MSG_LEN] = "";
        if (st->kind == HIPE_STAGE_GEMM || st->kind == HIPE_STAGE_ATTENTION) {
            if (st->kind == HIPE_STAGE_GEMM ? !hipe_gm_prepare(&st->gm, handle->device, why, sizeof(why))
                                            : !hipe_fa_prepare(&st->fa, handle->device, why, sizeof(why))) {
                hipe_set_error(HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): %s",
                               c->plan.graph->name, k + 1, s->nstages, st->what, why);
                return false;
            }
            continue;
        }
        st->kernel_id = hipe_stage_planned_kernel(s, st);
        st->kernel = NULL;
        if (!st->kernel_id)
            hipdnnSdkFormat(why, sizeof(why), "internal: no %s kernel for its program",
                            st->kind == HIPE_STAGE_RESAMPLE ? "resample" : "row-wise");
        else if (!hipe_kernel_get(st->kernel_id, handle->device, &st->kernel, why, sizeof(why)))
            st->kernel = NULL;
        if (!st->kernel) {
            hipe_set_error(HIPE_ENGINE_NAME ": graph '%s': stage %d of %d (%s): %s",
                           c->plan.graph->name, k + 1, s->nstages, st->what, why);
            return false;
        }
    }
    return true;
}

static void destroy_context(hipdnnEnginePluginExecutionContext_t c) {
    hipe_plan_free(&c->plan);
    hipdnnSdkGraphFree(c->plan.graph);
    free(c->kernels);
    free(c->all_nodes);
    free(c);
}

/* The kernels the context launches, in order: the graph's one fused kernel, or each stage's
 * (staged.c lists the nodes of the graph given that each stage runs). */
static bool describe_kernels(hipdnnEnginePluginExecutionContext_t c) {
    const struct hipe_staged* s = c->plan.staged;
    const uint32_t n = s ? (uint32_t)s->nstages : 1;
    c->kernels = calloc(n ? n : 1, sizeof(*c->kernels));
    if (!c->kernels) return false;
    c->num_kernels = n;
    if (!s) {
        const int32_t nn = c->plan.graph->num_nodes;
        c->all_nodes = malloc((size_t)(nn > 0 ? nn : 1) * sizeof(uint32_t));
        if (!c->all_nodes) return false;
        for (int32_t i = 0; i < nn; ++i) c->all_nodes[i] = (uint32_t)i;
        int nin = 0; /* gen_index's coordinates are inputs without memory */
        for (int i = 0; i < c->plan.prog.nin; ++i) nin += c->plan.in_uid[i] != HIPDNN_NO_TENSOR;
        hipdnnSdkFormat(c->detail, sizeof(c->detail), "%d node%s fused: %d input%s read once, "
                        "%d output%s written once", (int)nn, nn == 1 ? "" : "s", nin,
                        nin == 1 ? "" : "s", c->plan.prog.nout, c->plan.prog.nout == 1 ? "" : "s");
        c->kernels[0] = (hipdnnPluginKernelInfo_t){(uint32_t)sizeof(hipdnnPluginKernelInfo_t),
                                                   "pointwise", c->detail, (uint32_t)nn,
                                                   c->all_nodes};
        return true;
    }
    for (uint32_t k = 0; k < n; ++k) {
        const hipe_stage* st = &s->stages[k];
        const char* kind = st->kind == HIPE_STAGE_ROWWISE    ? "row-wise"
                           : st->kind == HIPE_STAGE_GEMM     ? "matmul"
                           : st->kind == HIPE_STAGE_ATTENTION ? "attention"
                           : st->kind == HIPE_STAGE_RESAMPLE ? "resample"
                                                             : "pointwise";
        c->kernels[k] = (hipdnnPluginKernelInfo_t){(uint32_t)sizeof(hipdnnPluginKernelInfo_t),
                                                   kind, st->what, st->num_nodes,
                                                   s->nodes + st->nodes_at};
    }
    return true;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t handle, const uint8_t* engine_config, size_t config_size,
    const uint8_t* graph, size_t graph_size, hipdnnEnginePluginExecutionContext_t* ctx) {
    if (!ctx) return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "CreateExecutionContext: NULL output");
    *ctx = NULL;
    struct hipdnnEnginePluginExecutionContext* c = calloc(1, sizeof(*c));
    if (!c) return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateExecutionContext: out of memory");
    hipdnnPluginStatus_t st = prepare(handle, engine_config, config_size, graph, graph_size,
                                      "CreateExecutionContext", &c->plan);
    if (st != HIPDNN_PLUGIN_STATUS_SUCCESS) {
        free(c);
        return st;
    }
    char listing[HIPE_MSG_LEN];
    if (c->plan.staged) {
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s' (%d nodes) runs in %d stage%s, "
                 "%zu bytes of workspace", c->plan.graph->name, c->plan.graph->num_nodes,
                 c->plan.staged->nstages, c->plan.staged->nstages == 1 ? "" : "s",
                 c->plan.staged->workspace);
    } else {
        hipe_describe(&c->plan, listing, sizeof(listing));
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s' (%d nodes) fused: %s",
                 c->plan.graph->name, c->plan.graph->num_nodes, listing);
    }
    if (!compile_kernels(handle, c)) {
        destroy_context(c);
        return HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR;
    }
    if (!describe_kernels(c)) {
        destroy_context(c);
        return fail(HIPDNN_PLUGIN_STATUS_ALLOC_FAILED, "CreateExecutionContext: out of memory");
    }
    *ctx = c;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_SDK_PLUGIN_CONTEXT_BASE(HIPE_ENGINE_NAME, destroy_context)

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSizeFromExecutionContext(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    size_t* workspace_size) {
    if (!handle || !ctx || !workspace_size)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM,
                    "GetWorkspaceSizeFromExecutionContext: NULL handle, context or output");
    *workspace_size = workspace_of(&ctx->plan);
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* ---- running ------------------------------------------------------------------------- */

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, const hipdnnPluginDeviceBuffer_t* buffers, uint32_t num_buffers) {
    (void)handle;
    (void)ctx;
    (void)workspace;
    (void)buffers;
    (void)num_buffers;
    return fail(HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED,
                "ExecuteOpGraph (ABI 1.0) passes host memory; this device engine runs through "
                "EnqueueOpGraph (ABI 1.1)");
}

static const hipdnnPluginTensorBuffer_t* find_buffer(const hipdnnPluginTensorBuffer_t* b,
                                                     uint32_t n, int64_t uid) {
    for (uint32_t i = 0; i < n; ++i)
        if (b[i].uid == uid) return &b[i];
    return NULL;
}

static const hipdnnSdkTensor* tensor_of(const hipe_plan* plan, int64_t uid) {
    return hipdnnSdkGraphFindTensor(plan->graph, uid);
}

/* The device pointer of tensor uid, checked: present, and in device (or managed) memory. */
static hipdnnPluginStatus_t data_pointer(const hipe_plan* plan, const hipdnnPluginTensorBuffer_t* b,
                                         uint32_t n, int64_t uid, void** ptr) {
    const hipdnnPluginTensorBuffer_t* buf = find_buffer(b, n, uid);
    if (!buf || !buf->ptr) {
        const hipdnnSdkTensor* t = tensor_of(plan, uid);
        hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: tensor '%s' (uid %lld) has no pointer",
                       t ? t->name : "", (long long)uid);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    hipdnnMemorySpace_t want = engine_details()->memory_space;
    if (buf->memory_space != want && buf->memory_space != HIPDNN_MEMORY_MANAGED) {
        const hipdnnSdkTensor* t = tensor_of(plan, uid); /* named only when refused */
        hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: tensor '%s' (uid %lld) is in %s "
                       "memory; this engine needs %s memory", t ? t->name : "", (long long)uid,
                       buf->memory_space == HIPDNN_MEMORY_HOST ? "host" : "device",
                       want == HIPDNN_MEMORY_HOST ? "host" : "device");
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    *ptr = buf->ptr;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

/* The generic kernels: enough blocks to fill every SM several times over, the kernel
 * striding over the rest.  The fast ones: a block per tile up to 1024 blocks an SM (on an
 * H100, tensors up to about 5 * 10^8 elements), so that the hardware balances blocks as
 * they finish: on an H100 that reached 97% of copy bandwidth where 64 blocks an SM
 * striding over tiles reached 94%, and one resident wave 86%. */
bool hipe_pointwise_run(const hipe_plan* plan, pw_program* prog, const hipe_jit_kernels* jit,
                        _Atomic(int)* jit_ok, bool fast_way, int sm_count, void* stream,
                        unsigned* path, char* why, size_t len) {
    uintptr_t misaligned = 0;
    for (int i = 0; i < prog->nin; ++i)
        if (prog->in[i].contiguous) misaligned |= (uintptr_t)prog->in[i].ptr;
    for (int i = 0; i < prog->nout; ++i)
        if (prog->out[i].contiguous) misaligned |= (uintptr_t)prog->out[i].ptr;
    prog->aligned = (misaligned & 15u) == 0;
    const int64_t grid_cap = (int64_t)sm_count * 64;
    const int64_t fast_cap = (int64_t)sm_count * 1024;
    const bool fast = fast_way && prog->aligned;
    bool ok = false;
    if (jit->generic && atomic_load(jit_ok)) {
        *path = fast ? RAN_JIT_FAST : RAN_JIT_GENERIC;
        ok = fast ? hipe_jit_launch(jit->fast, prog, plan->fast_u, fast_cap, stream, why, len)
                  : hipe_jit_launch(jit->generic, prog, 0, grid_cap, stream, why, len);
        if (!ok) { /* the plan's kernel would not launch: the interpreter from now on */
            hipe_log(HIPDNN_LOG_WARN, HIPE_ENGINE_NAME ": %s; using the interpreting kernel", why);
            atomic_store(jit_ok, 0);
        }
    }
    if (!ok) {
        *path = fast ? RAN_FAST : RAN_GENERIC;
        ok = hipe_pointwise_launch(prog, plan->slots, fast, fast ? fast_cap : grid_cap, stream, why,
                                   len);
    }
    return ok;
}

/* Resolves a stage's tensor pointers for hipe_staged_enqueue. */
typedef struct {
    const hipe_plan* plan;
    const hipdnnPluginTensorBuffer_t* buffers;
    uint32_t num_buffers;
} pointers;

static hipdnnPluginStatus_t stage_pointer(void* ctx, int64_t uid, void** ptr) {
    const pointers* p = ctx;
    return data_pointer(p->plan, p->buffers, p->num_buffers, uid, ptr);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginEnqueueOpGraph(
    hipdnnEnginePluginHandle_t handle, hipdnnEnginePluginExecutionContext_t ctx,
    void* workspace, size_t workspace_size, const hipdnnPluginTensorBuffer_t* buffers,
    uint32_t num_buffers) {
    if (!handle || !ctx || !ctx->plan.graph)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "EnqueueOpGraph: NULL handle or context");
    if (num_buffers > 0 && !buffers)
        return fail(HIPDNN_PLUGIN_STATUS_BAD_PARAM, "EnqueueOpGraph: NULL buffers with a count");
    const hipe_plan* plan = &ctx->plan;
    char why[HIPE_MSG_LEN];
    int current = handle->device;
    if (!hipe_get_device(&current, why, sizeof(why)) ||
        (current != handle->device && !hipe_set_device(handle->device, why, sizeof(why)))) {
        hipe_set_error(HIPE_ENGINE_NAME ": graph '%s': %s", plan->graph->name, why);
        return HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED;
    }
    hipdnnPluginStatus_t st = HIPDNN_PLUGIN_STATUS_SUCCESS;
    char restore[HIPE_MSG_LEN];
    if (plan->staged) {
        pointers p = {plan, buffers, num_buffers};
        st = hipe_staged_enqueue(plan->graph, plan->staged, stage_pointer, &p, workspace,
                                 workspace_size, buffers, num_buffers, handle->device,
                                 handle->sm_count, handle->stream);
        if (current != handle->device) hipe_set_device(current, restore, sizeof(restore));
        return st;
    }
    pw_program prog = plan->prog; /* a copy on the stack: passed by value to the kernel */
    for (int i = 0; i < prog.nin; ++i)
        if (plan->in_uid[i] != HIPDNN_NO_TENSOR && /* gen_index's coordinates: no memory */
            (st = data_pointer(plan, buffers, num_buffers, plan->in_uid[i], &prog.in[i].ptr)))
            goto done;
    for (int i = 0; i < prog.nout; ++i)
        if ((st = data_pointer(plan, buffers, num_buffers, plan->out_uid[i], &prog.out[i].ptr)))
            goto done;
    for (int i = 0; i < plan->nscalars; ++i) { /* runtime scalars: host pointers, read now */
        if (plan->scalar_uid[i] < 0) continue;
        const hipdnnPluginTensorBuffer_t* b = find_buffer(buffers, num_buffers, plan->scalar_uid[i]);
        if (!b || !b->ptr) {
            const hipdnnSdkTensor* t = tensor_of(plan, plan->scalar_uid[i]);
            hipe_set_error(HIPE_ENGINE_NAME ": EnqueueOpGraph: by-value scalar '%s' (uid %lld) "
                           "has no pointer", t ? t->name : "", (long long)plan->scalar_uid[i]);
            st = HIPDNN_PLUGIN_STATUS_BAD_PARAM;
            goto done;
        }
        prog.scalar[i] = (float)hipdnnSdkLoadAsDouble(b->ptr, (hipdnnDataType_t)plan->scalar_dtype[i], 0);
    }
    unsigned path = 0;
    const bool ok = hipe_pointwise_run(plan, &prog, &ctx->jit, &ctx->jit_ok, ctx->fast,
                                       handle->sm_count, handle->stream, &path, why, sizeof(why));
    if (ok && !(atomic_load_explicit(&ctx->ran, memory_order_relaxed) & path) &&
        !(atomic_fetch_or(&ctx->ran, path) & path))
        hipe_log(HIPDNN_LOG_INFO, HIPE_ENGINE_NAME ": graph '%s': first run of the %s %s kernel%s",
                 plan->graph->name, path & (RAN_JIT_FAST | RAN_JIT_GENERIC) ? "compiled" : "interpreting",
                 path & (RAN_JIT_FAST | RAN_FAST) ? "fast" : "generic",
                 ctx->fast && !prog.aligned ? " (pointers not 16-byte aligned)" : "");
    if (!ok) {
        hipe_set_error(HIPE_ENGINE_NAME ": graph '%s': %s", plan->graph->name, why);
        st = HIPDNN_PLUGIN_STATUS_EXECUTION_FAILED;
    }
done:
    if (current != handle->device) hipe_set_device(current, restore, sizeof(restore));
    return st;
}
