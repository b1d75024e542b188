/* cost_model: a heuristic plugin (hipdnn_heuristic_plugin.h) that ranks engines by a
 * roofline estimate.  It is a model, not a measurement (autotuning measures):
 *   - work: FLOPs of each node from the decoded graph's dims (matmul 2MNK, convolutions
 *     2 * output elements * filter elements per output channel, attention 4 * B H S_q
 *     S_kv D forward and 2.5 times that backward, anything else one per output element)
 *     and bytes of the graph's non-virtual tensors, each read or written once;
 *   - machine: a device's bandwidth and peak as the backend read them from the device
 *     runtime (memory clock and bus width; SMs, clock and the arch's rate a clock), each
 *     where given, else a table by architecture (datasheet figures); the host's bandwidth
 *     measured once per host (a 16 MiB memcpy, kept in the cache folder for later
 *     processes) and its FLOP rate assumed, both overridable (HIPDNN_COST_HOST_GBPS,
 *     HIPDNN_COST_HOST_GFLOPS);
 *   - engine: what share of that peak and bandwidth it reaches on the graph's class (its
 *     largest node's op, 16-bit or wider inputs), measured on an H200 (k_measured below);
 *     a twentieth for a FALLBACK (reference) one.
 * Estimated time = max(FLOPs / (peak x compute eff.), bytes / (bandwidth x memory eff.)).
 * Engines whose memory space is where the graph's tensors are go first, then by estimate;
 * ties keep the backend's order (the engines' priorities).  An engine of negative priority asks to
 * be chosen only by name (the hip engine's host emulation): it goes last. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hipdnn/hipdnn_heuristic_plugin.h"
#include "hipdnn/hipdnn_sdk.h"

static _Thread_local char t_error[512];

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginGetApiVersion(uint32_t* major,
                                                                             uint32_t* minor) {
    if (!major || !minor) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    *major = HIPDNN_HEURISTIC_API_MAJOR;
    *minor = HIPDNN_HEURISTIC_API_MINOR;
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginGetName(const char** name) {
    if (!name) return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    *name = "cost_model";
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}

HIPDNN_PLUGIN_EXPORT void hipdnnHeuristicPluginGetLastErrorString(const char** message) {
    if (message) *message = t_error;
}

/* What the graph costs: its largest node named, FLOPs and bytes of the whole graph. */
typedef struct {
    double flop, bytes;
    bool low_precision; /* the main node's inputs are 16-bit or narrower */
    hipdnnOpKind_t op;  /* the main node's */
    char what[96];
} graph_cost;

/* What share of the device's peak FLOP rate (compute) and bandwidth (memory) each engine
 * reached on a class of graph: the main node's op, 16-bit (low) or fp32 inputs.  Measured
 * on an H200 (sm_90) by benchmarks/gpu_matmul_bench.py and gpu_attention_bench.py with
 * each engine preferred in turn (benchmarks/history: runs M24 and M25 at e0b4448, the hip
 * engine's attention compute from M26 at 77bc7dd): compute
 * is the geometric mean over the class's compute-bound cases of TFLOP/s over the peak the
 * backend reads (132 SMs at 1.98 GHz); memory, where a memory-bound case was timed (the
 * 16 x 4096 x 4096 decode matmul, the 1x1 convolution 256 -> 64 at 64 x 56 x 56, the B64
 * H32/4 decode attention), its bytes a second over the bandwidth (4.9 TB/s read from the
 * device), that case left out of the compute mean.  An engine not measured on a class is
 * taken to reach the class's lowest shares (no faster than the slowest engine measured),
 * and on a class nobody measured every engine half (then the priorities decide).  Other
 * GPUs are ranked with the same shares (the vendor libraries lead the hip engine wider on
 * older chips, whose hip kernels lack wgmma). */
typedef struct {
    const char* engine;
    hipdnnOpKind_t op;
    bool low;
    double compute, memory;
} measured_efficiency;

static const measured_efficiency k_measured[] = {
    {"hip", HIPDNN_OP_MATMUL, true, 0.51, 0.24},
    {"blaslt", HIPDNN_OP_MATMUL, true, 0.645, 0.21},
    {"cudnn", HIPDNN_OP_MATMUL, true, 0.626, 0.19},
    {"hip", HIPDNN_OP_MATMUL, false, 0.31, 0.5},
    {"blaslt", HIPDNN_OP_MATMUL, false, 0.53, 0.5},
    {"hip", HIPDNN_OP_CONV_FPROP, true, 0.134, 0.31},
    {"cudnn", HIPDNN_OP_CONV_FPROP, true, 0.374, 0.67},
    {"hip", HIPDNN_OP_CONV_FPROP, false, 0.199, 0.5},
    {"cudnn", HIPDNN_OP_CONV_FPROP, false, 0.194, 0.5},
    {"hip", HIPDNN_OP_CONV_DGRAD, true, 0.090, 0.5},
    {"cudnn", HIPDNN_OP_CONV_DGRAD, true, 0.352, 0.5},
    {"hip", HIPDNN_OP_CONV_WGRAD, true, 0.109, 0.5},
    {"cudnn", HIPDNN_OP_CONV_WGRAD, true, 0.323, 0.5},
    {"hip", HIPDNN_OP_SDPA_FWD, true, 0.22, 0.40},
    {"cudnn", HIPDNN_OP_SDPA_FWD, true, 0.611, 0.84},
    {"hip", HIPDNN_OP_SDPA_BWD, true, 0.093, 0.5},
    {"cudnn", HIPDNN_OP_SDPA_BWD, true, 0.482, 0.5},
};

/* The engine's measured shares for the graph's class, or NULL; *low_c / *low_m the
 * class's lowest measured shares (what an engine measured on other classes only is
 * assumed to reach: no faster than the slowest one measured), 0.5 where none is. */
static const measured_efficiency* measured(const char* engine, const graph_cost* c, double* low_c,
                                           double* low_m) {
    const measured_efficiency* found = NULL;
    *low_c = *low_m = 0.5;
    bool any = false;
    for (size_t i = 0; i < sizeof(k_measured) / sizeof(k_measured[0]); ++i) {
        const measured_efficiency* e = &k_measured[i];
        if (e->op != c->op || e->low != c->low_precision) continue;
        *low_c = any ? fmin(*low_c, e->compute) : e->compute;
        *low_m = any ? fmin(*low_m, e->memory) : e->memory;
        any = true;
        if (strcmp(e->engine, engine) == 0) found = e;
    }
    return found;
}

static double elems(const hipdnnSdkTensor* t) {
    return t ? (double)hipdnnSdkElementCount(t->ndim, t->dims) : 0.0;
}

static const hipdnnSdkTensor* port(const hipdnnSdkGraph* g, int64_t uid) {
    return hipdnnSdkGraphFindTensor(g, uid);
}

/* FLOPs of node n; its shape as text into what. */
static double node_flop(const hipdnnSdkGraph* g, const hipdnnSdkNode* n, char* what, size_t len) {
    const hipdnnSdkTensor* a = port(g, n->inputs[0]);
    const hipdnnSdkTensor* b = port(g, n->inputs[1]);
    const hipdnnSdkTensor* y = port(g, n->outputs[0]);
    const char* dt = a ? hipdnnSdkDataTypeName(a->data_type) : "?";
    char label[64];
    hipdnnSdkNodeLabel(n, label, sizeof(label));
    snprintf(what, len, "%s %s", label, dt);
    if (n->kind == HIPDNN_OP_MATMUL && a && y && a->ndim >= 2 && y->ndim >= 2) {
        double m = (double)y->dims[y->ndim - 2], nn = (double)y->dims[y->ndim - 1];
        double k = (double)a->dims[a->ndim - 1], batch = elems(y) / (m * nn > 0 ? m * nn : 1);
        snprintf(what, len, "matmul %.0fx%.0fx%.0f%s %s", m, nn, k, batch > 1 ? " batched" : "", dt);
        return 2.0 * elems(y) * k;
    }
    if ((n->kind == HIPDNN_OP_CONV_FPROP || n->kind == HIPDNN_OP_CONV_DGRAD) && b && b->ndim > 0 &&
        b->dims[0] > 0)
        return 2.0 * elems(n->kind == HIPDNN_OP_CONV_FPROP ? y : a) * elems(b) / (double)b->dims[0];
    if (n->kind == HIPDNN_OP_CONV_WGRAD && b && y && y->ndim > 0 && y->dims[0] > 0)
        return 2.0 * elems(b) * elems(y) / (double)y->dims[0];
    if ((n->kind == HIPDNN_OP_SDPA_FWD || n->kind == HIPDNN_OP_SDPA_BWD) && a && b && b->ndim == 4)
        return (n->kind == HIPDNN_OP_SDPA_FWD ? 4.0 : 10.0) * elems(a) * (double)b->dims[2];
    return elems(y);
}

static bool narrow(hipdnnDataType_t t) {
    return t == HIPDNN_DATA_HALF || t == HIPDNN_DATA_BFLOAT16 || t == HIPDNN_DATA_INT8 ||
           t == HIPDNN_DATA_FP8_E4M3 || t == HIPDNN_DATA_FP8_E5M2;
}

static void cost_of(const hipdnnSdkGraph* g, graph_cost* c) {
    memset(c, 0, sizeof(*c));
    double most = -1;
    for (int32_t i = 0; i < g->num_nodes; ++i) {
        char what[96];
        double f = node_flop(g, &g->nodes[i], what, sizeof(what));
        c->flop += f;
        if (f > most) {
            const hipdnnSdkTensor* a = port(g, g->nodes[i].inputs[0]);
            most = f;
            c->op = g->nodes[i].kind;
            snprintf(c->what, sizeof(c->what), "%s", what);
            c->low_precision = a && narrow(a->data_type);
        }
    }
    if (g->num_nodes > 1) {
        size_t used = strlen(c->what);
        snprintf(c->what + used, sizeof(c->what) - used, " +%d nodes", (int)g->num_nodes - 1);
    }
    for (int32_t i = 0; i < g->num_tensors; ++i) {
        const hipdnnSdkTensor* t = &g->tensors[i];
        if (!t->is_virtual && !t->is_by_value)
            c->bytes += elems(t) * (double)hipdnnSdkDataTypeSize(t->data_type);
    }
}

/* A device's datasheet figures by architecture: bandwidth, 16-bit tensor peak, fp32 peak. */
static const struct {
    const char* arch;
    double bytes_per_s, flops16, flops32;
} k_table[] = {
    {"sm_80", 2.0e12, 312e12, 19.5e12},  {"sm_89", 0.96e12, 330e12, 82e12},
    {"sm_90", 3.35e12, 989e12, 67e12},   {"gfx90a", 1.6e12, 383e12, 47.9e12},
    {"gfx942", 5.3e12, 1307e12, 163e12}, {"", 1.0e12, 100e12, 20e12}, /* unknown device */
};

static double g_host_bw; /* bytes/s */
static char g_host_bw_how[16];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The file that keeps the measured host bandwidth between processes:
 * <cache>/heuristics/host_bandwidth, <cache> as the plan cache's ($HIPDNN_CACHE_DIR, else
 * $XDG_CACHE_HOME/hipdnn, else ~/.cache/hipdnn); false with HIPDNN_CACHE=0 or no home.
 * make: create the folders (mode 0700). */
static bool bandwidth_file(char* path, size_t len, bool make) {
    const char* off = getenv("HIPDNN_CACHE");
    const char *dir = getenv("HIPDNN_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char* home = getenv("HOME");
    char root[3072];
    if (off && strcmp(off, "0") == 0) return false;
    if (dir && *dir) snprintf(root, sizeof(root), "%s", dir);
    else if (xdg && *xdg) snprintf(root, sizeof(root), "%s/hipdnn", xdg);
    else if (home && *home) snprintf(root, sizeof(root), "%s/.cache/hipdnn", home);
    else return false;
    if (make) {
        char parent[3072];
        snprintf(parent, sizeof(parent), "%s", root);
        for (char* p = parent + 1; *p; ++p) /* each missing folder on the way */
            if (*p == '/') {
                *p = '\0';
                mkdir(parent, 0700);
                *p = '/';
            }
        mkdir(root, 0700);
    }
    int n = snprintf(path, len, "%s/heuristics", root);
    if (make && n > 0 && (size_t)n < len) mkdir(path, 0700);
    n = snprintf(path, len, "%s/heuristics/host_bandwidth", root);
    return n > 0 && (size_t)n < len;
}

/* The bandwidth measured on this host by an earlier process, or 0. */
static double cached_bandwidth(const char* host) {
    char path[4096], line[3][256];
    if (!bandwidth_file(path, sizeof(path), false)) return 0;
    FILE* f = fopen(path, "r");
    if (!f) return 0;
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i) {
        ok = fgets(line[i], sizeof(line[i]), f) != NULL;
        if (ok) line[i][strcspn(line[i], "\n")] = '\0';
    }
    fclose(f);
    double v = ok ? atof(line[2]) : 0;
    ok = ok && strcmp(line[0], "hipdnn cost_model host bandwidth 1") == 0 &&
         strcmp(line[1], host) == 0 && v > 1e8 && v < 1e13;
    return ok ? v : 0; /* anything else is measured again and rewritten */
}

/* Writes it whole or not at all: a temporary file renamed over the old one. */
static void store_bandwidth(const char* host, double v) {
    char path[4096], tmp[4200];
    if (!bandwidth_file(path, sizeof(path), true)) return;
    snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
    FILE* f = fopen(tmp, "w");
    if (!f) return;
    bool ok = fprintf(f, "hipdnn cost_model host bandwidth 1\n%s\n%.6g\n", host, v) > 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}

static double measure_copy(void) {
    const size_t n = (size_t)16 << 20;
    char *src = malloc(n), *dst = malloc(n);
    double best = 0;
    if (src && dst) {
        memset(src, 1, n);
        memset(dst, 0, n);
        for (int r = 0; r < 3; ++r) {
            double t0 = now_s();
            memcpy(dst, src, n);
            double dt = now_s() - t0;
            if (dt > 0 && 2.0 * (double)n / dt > best) best = 2.0 * (double)n / dt;
        }
    }
    free(src);
    free(dst);
    return best;
}

/* The host's copy bandwidth (read + write), once a process: HIPDNN_COST_HOST_GBPS, else
 * what an earlier process on this host measured (the cache folder), else measured now (a
 * 16 MiB memcpy, some milliseconds) and kept there for the next process. */
static void measure_host(void) {
    const char* env = getenv("HIPDNN_COST_HOST_GBPS");
    if (env && atof(env) > 0) {
        g_host_bw = atof(env) * 1e9;
        snprintf(g_host_bw_how, sizeof(g_host_bw_how), "configured");
        return;
    }
    char host[256] = "?";
    if (gethostname(host, sizeof(host) - 1) != 0) snprintf(host, sizeof(host), "?");
    double best = cached_bandwidth(host);
    if (best > 0) {
        g_host_bw = best;
        snprintf(g_host_bw_how, sizeof(g_host_bw_how), "measured");
        return;
    }
    best = measure_copy();
    if (best > 0) store_bandwidth(host, best);
    g_host_bw = best > 0 ? best : 10e9;
    snprintf(g_host_bw_how, sizeof(g_host_bw_how), best > 0 ? "measured" : "assumed");
}

/* Peak FLOP/s and bytes/s for candidates in `space`; how they were found into how. */
static void machine(const hipdnnHeuristicDeviceInfo_t* d, hipdnnMemorySpace_t space, bool low,
                    double* flops, double* bw, char* how, size_t len) {
    if (space == HIPDNN_MEMORY_HOST) {
        pthread_once(&g_once, measure_host);
        const char* env = getenv("HIPDNN_COST_HOST_GFLOPS");
        bool set = env && atof(env) > 0;
        *flops = set ? atof(env) * 1e9 : 20e9;
        *bw = g_host_bw;
        snprintf(how, len, "host %.3g GB/s %s, %.3g GFLOP/s %s", *bw / 1e9, g_host_bw_how,
                 *flops / 1e9, set ? "configured" : "assumed");
        return;
    }
    size_t k = 0, last = sizeof(k_table) / sizeof(k_table[0]) - 1;
    while (k < last && strcmp(k_table[k].arch, d->arch) != 0) ++k;
    *flops = low ? k_table[k].flops16 : k_table[k].flops32;
    *bw = k_table[k].bytes_per_s;
    /* what the backend read from the device runtime wins over the table, figure by figure */
    const size_t end = offsetof(hipdnnHeuristicDeviceInfo_t, peak_flops) + sizeof(double);
    bool known = d->struct_size >= end;
    bool given_bw = known && d->peak_bytes_per_s > 0, given_flops = known && d->peak_flops > 0;
    if (given_bw) *bw = d->peak_bytes_per_s;
    if (given_flops) *flops = d->peak_flops;
    const char* table = k < last ? "table" : "guessed";
    char sms[32] = "";
    if (known && d->sm_count > 0) snprintf(sms, sizeof(sms), ", %d SMs", (int)d->sm_count);
    if (given_bw && given_flops)
        snprintf(how, len, "%s %.3g TB/s, %.3g TFLOP/s from the device%s",
                 d->arch[0] ? d->arch : "device", *bw / 1e12, *flops / 1e12, sms);
    else
        snprintf(how, len, "%s %.3g TB/s %s, %.3g TFLOP/s %s%s", d->arch[0] ? d->arch : "device",
                 *bw / 1e12, given_bw ? "from the device" : table, *flops / 1e12,
                 given_flops ? "from the device" : table, sms);
}

HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnHeuristicPluginRank(
    const uint8_t* graph, size_t graph_size, const hipdnnHeuristicDeviceInfo_t* device,
    const hipdnnHeuristicCandidate_t* cand, uint32_t n, uint32_t* order, double* score,
    char* explanations) {
    if (!graph || !device || (n && (!cand || !order || !score || !explanations))) {
        snprintf(t_error, sizeof(t_error), "cost_model: a NULL argument");
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    char err[256];
    hipdnnSdkGraph* g = hipdnnSdkGraphDecode(graph, graph_size, err, sizeof(err));
    if (!g) {
        snprintf(t_error, sizeof(t_error), "cost_model: the graph does not decode: %s", err);
        return HIPDNN_PLUGIN_STATUS_BAD_PARAM;
    }
    graph_cost c;
    cost_of(g, &c);
    hipdnnSdkGraphFree(g);
    for (uint32_t i = 0; i < n; ++i) {
        double flops, bw;
        char how[128];
        bool fallback = (cand[i].flags & HIPDNN_ENGINE_FLAG_FALLBACK) != 0;
        bool mismatch = cand[i].memory_space != device->memory_space;
        machine(device, cand[i].memory_space, c.low_precision, &flops, &bw, how, sizeof(how));
        /* a host engine's shares were not measured; the device table is for device engines */
        const bool device_engine = !fallback && cand[i].memory_space == HIPDNN_MEMORY_DEVICE;
        double ec = fallback ? 0.05 : 0.5, em = ec;
        const measured_efficiency* m =
            device_engine ? measured(cand[i].engine_name, &c, &ec, &em) : NULL;
        if (m) ec = m->compute, em = m->memory;
        double tc = c.flop / (flops * ec), tm = c.bytes / (bw * em);
        score[i] = fmax(tc, tm) * 1e3;
        char eff[112];
        if (m)
            snprintf(eff, sizeof(eff), "x%.2g compute, x%.2g memory efficiency measured on an H200",
                     ec, em);
        else if (device_engine && (ec != 0.5 || em != 0.5))
            snprintf(eff, sizeof(eff), "x%.2g compute, x%.2g memory efficiency: not measured, the "
                     "class's lowest", ec, em);
        else
            snprintf(eff, sizeof(eff), "x%.2g efficiency", ec);
        char line[640]; /* cut to the ABI's length below */
        snprintf(line, sizeof(line), "%s: %.2g FLOP, %.2g B; %s-bound; %s est. %.3g ms (roofline model: %s, %s"
                 "%s)", c.what, c.flop, c.bytes, tc > tm ? "compute" : "memory",
                 cand[i].engine_name, score[i], how, eff,
                 cand[i].priority < 0 ? "; negative priority: chosen only by name, ranked last"
                 : mismatch ? "; not where the tensors are, ranked after those that are" : "");
        size_t used = strlen(line);
        if (used >= HIPDNN_HEURISTIC_EXPLANATION_LEN) used = HIPDNN_HEURISTIC_EXPLANATION_LEN - 1;
        memcpy(explanations + (size_t)i * HIPDNN_HEURISTIC_EXPLANATION_LEN, line, used);
        explanations[(size_t)i * HIPDNN_HEURISTIC_EXPLANATION_LEN + used] = '\0';
        order[i] = i;
    }
    /* insertion sort, stable: engines of negative priority (chosen only by name) last,
     * then those where the tensors are first, then by estimate */
    for (uint32_t i = 1; i < n; ++i) {
        uint32_t v = order[i], k = i;
        int vm = 2 * (cand[v].priority < 0) + (cand[v].memory_space != device->memory_space);
        while (k > 0) {
            uint32_t u = order[k - 1];
            int um = 2 * (cand[u].priority < 0) + (cand[u].memory_space != device->memory_space);
            if (um < vm || (um == vm && score[u] <= score[v])) break;
            order[k] = u;
            --k;
        }
        order[k] = v;
    }
    return HIPDNN_PLUGIN_STATUS_SUCCESS;
}
