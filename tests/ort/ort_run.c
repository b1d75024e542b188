/* ort_run — runs an ONNX model through ONNX Runtime's C API, with hipdnn-ep registered as
 * a plugin EP or with ORT's CPU EP alone; inputs from .npy files, outputs to .npy files.
 * tests/test_ort_ep.py drives it (there is no onnxruntime Python package on CI).
 *
 *   ort_run --model M.onnx --out-dir DIR [--ep hipdnn|cpu] [--ep-lib PATH]
 *           [--device cpu|gpu] [--no-fallback] [--option KEY=VALUE]... [--log-level 0..4]
 *           [--opt-level disable|basic|extended|all] [--threads N] [--config KEY=VALUE]...
 *           --input NAME=FILE.npy...
 *
 * --config sets a session config entry (AddSessionConfigEntry: ep.context_enable, ...);
 * --option a provider option of hipdnn-ep (ep.hipdnn.KEY).
 *
 * --threads N makes each run N concurrent Run calls on the one session, whose outputs
 * must all be equal, bit for bit; the first thread's are written.
 *
 * --device picks which of hipdnn-ep's devices the session uses (the CPU by default); it
 * prints "device hipdnn TYPE vendor 0xVVVV metadata KEY=VALUE..." for the chosen one.
 * An input given k times makes k runs of one session (run i takes each input's i-th
 * file; one given once is reused), so a test can change the batch size between runs.
 * Outputs go to DIR/NAME.I.npy, and must be host memory; the inputs must be unchanged
 * after each run.  Before running it prints which EP each node was
 * assigned to, one line each: "assigned EP SUBGRAPH OP_TYPE NODE_NAME", where SUBGRAPH
 * numbers ORT's assigned subgraphs (a compiling EP's fused node is one subgraph).  Exit status 0 on
 * success, 1 with a message naming the failing step otherwise.  Tensors of the types in
 * npy_types (floats, integers, bool). */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxruntime_c_api.h"

#ifndef HIPDNN_EP_LIBRARY
#define HIPDNN_EP_LIBRARY "libhipdnn_ep.so"
#endif

static const OrtApi* ort;

static void die(const char* fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ort_run: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

/* A failed call: "STEP: [ONNXRuntimeError] : CODE : NAME : MESSAGE", as ORT's Python
 * errors read (ort_run.py prints those), so that a test sees the code either way. */
static void check(OrtStatus* st, const char* what) {
    static const char* const names[] = {
        "OK", "FAIL", "INVALID_ARGUMENT", "NO_SUCHFILE", "NO_MODEL", "ENGINE_ERROR",
        "RUNTIME_EXCEPTION", "INVALID_PROTOBUF", "MODEL_LOADED", "NOT_IMPLEMENTED",
        "INVALID_GRAPH", "EP_FAIL", "MODEL_LOAD_CANCELED", "MODEL_REQUIRES_COMPILATION",
        "NOT_FOUND"};
    if (!st) return;
    char msg[4096];
    OrtErrorCode code = ort->GetErrorCode(st);
    snprintf(msg, sizeof(msg), "%s", ort->GetErrorMessage(st));
    ort->ReleaseStatus(st);
    die("%s: [ONNXRuntimeError] : %d : %s : %s", what, (int)code,
        (unsigned)code < sizeof(names) / sizeof(names[0]) ? names[code] : "?", msg);
}

/* ---- .npy (format 1.0 / 2.0, little-endian, C order) ---------------------------------- */

typedef struct {
    ONNXTensorElementDataType type;
    int64_t shape[8];
    size_t rank;
    void* data;
    size_t bytes;
} array;

/* The element types read and written: .npy's descr (quoted, as in the header), ORT's type. */
typedef struct {
    const char* descr;
    ONNXTensorElementDataType type;
    size_t size;
} npy_type;

static const npy_type npy_types[] = {
    {"'<f4'", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, 4},
    {"'<f2'", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16, 2},
    {"'<f8'", ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE, 8},
    {"'<i8'", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, 8},
    {"'<i4'", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32, 4},
    {"'<i2'", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16, 2},
    {"'|i1'", ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8, 1},
    {"'|u1'", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8, 1},
    {"'<u2'", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, 2},
    {"'<u4'", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32, 4},
    {"'<u8'", ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, 8},
    {"'|b1'", ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL, 1},
};

static const npy_type* npy_type_of(ONNXTensorElementDataType type) {
    for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); ++i)
        if (npy_types[i].type == type) return &npy_types[i];
    return NULL;
}

static void npy_read(const char* path, array* a) {
    FILE* f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    unsigned char magic[8];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6)) die("%s: not a .npy file", path);
    size_t hlen = 0;
    if (magic[6] == 1) {
        unsigned char b[2];
        if (fread(b, 1, 2, f) != 2) die("%s: truncated header", path);
        hlen = (size_t)b[0] | (size_t)b[1] << 8;
    } else {
        unsigned char b[4];
        if (fread(b, 1, 4, f) != 4) die("%s: truncated header", path);
        hlen = (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 | (size_t)b[3] << 24;
    }
    char* h = calloc(hlen + 1, 1);
    if (!h || fread(h, 1, hlen, f) != hlen) die("%s: truncated header", path);
    if (strstr(h, "'fortran_order': True")) die("%s: Fortran order is not read", path);
    const npy_type* t = NULL;
    for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]) && !t; ++i)
        if (strstr(h, npy_types[i].descr)) t = &npy_types[i];
    if (!t) die("%s: an element type ort_run does not read (header %s)", path, h);
    a->type = t->type;
    size_t esize = t->size;
    const char* s = strstr(h, "'shape': (");
    if (!s) die("%s: no shape in header", path);
    s += strlen("'shape': (");
    a->rank = 0;
    size_t count = 1;
    while (*s && *s != ')') {
        char* end;
        long long d = strtoll(s, &end, 10);
        if (end == s) {
            ++s;
            continue;
        }
        if (a->rank == 8) die("%s: rank over 8", path);
        a->shape[a->rank++] = d;
        count *= (size_t)d;
        s = end;
    }
    free(h);
    a->bytes = count * esize;
    a->data = malloc(a->bytes ? a->bytes : 1);
    if (!a->data || fread(a->data, 1, a->bytes, f) != a->bytes) die("%s: truncated data", path);
    fclose(f);
}

static void npy_write(const char* path, ONNXTensorElementDataType type, const int64_t* shape,
                      size_t rank, const void* data, size_t bytes) {
    char dict[256];
    int n = snprintf(dict, sizeof(dict), "{'descr': %s, 'fortran_order': False, 'shape': (",
                     npy_type_of(type)->descr);
    for (size_t i = 0; i < rank; ++i)
        n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%lld,%s", (long long)shape[i],
                      i + 1 < rank ? " " : "");
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "), }");
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    FILE* f = fopen(path, "wb");
    if (!f) die("cannot write %s", path);
    unsigned short hlen = (unsigned short)((size_t)n + pad + 1);
    unsigned char head[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                              (unsigned char)(hlen >> 8)};
    fwrite(head, 1, 10, f);
    fwrite(dict, 1, (size_t)n, f);
    for (size_t i = 0; i < pad; ++i) fputc(' ', f);
    fputc('\n', f);
    /* an empty tensor's data may be NULL, which fwrite must not be given */
    if (bytes && fwrite(data, 1, bytes, f) != bytes) die("cannot write %s", path);
    fclose(f);
}

/* ---- concurrent runs ------------------------------------------------------------------ */

typedef struct {
    OrtSession* session;
    const char* const* in_names;
    const OrtValue* const* in_vals;
    size_t n_in;
    const char* const* out_names;
    size_t n_out;
    OrtValue** out_vals;
    OrtStatus* status;
} run_job;

static void* run_thread(void* arg) {
    run_job* j = arg;
    j->status = ort->Run(j->session, NULL, j->in_names, j->in_vals, j->n_in, j->out_names,
                         j->n_out, j->out_vals);
    return NULL;
}

/* Output o of two runs holds the same type, shape and bytes. */
static int same_output(OrtValue* a, OrtValue* b) {
    OrtTensorTypeAndShapeInfo *ia = NULL, *ib = NULL;
    check(ort->GetTensorTypeAndShape(a, &ia), "GetTensorTypeAndShape");
    check(ort->GetTensorTypeAndShape(b, &ib), "GetTensorTypeAndShape");
    size_t na = 0, nb = 0, ra = 0, rb = 0;
    int64_t sa[8], sb[8];
    ONNXTensorElementDataType ta, tb;
    check(ort->GetTensorElementType(ia, &ta), "GetTensorElementType");
    check(ort->GetTensorElementType(ib, &tb), "GetTensorElementType");
    check(ort->GetDimensionsCount(ia, &ra), "GetDimensionsCount");
    check(ort->GetDimensionsCount(ib, &rb), "GetDimensionsCount");
    int same = ta == tb && ra == rb && ra <= 8;
    if (same) {
        check(ort->GetDimensions(ia, sa, ra), "GetDimensions");
        check(ort->GetDimensions(ib, sb, rb), "GetDimensions");
        same = !memcmp(sa, sb, ra * sizeof(int64_t));
    }
    if (same) {
        check(ort->GetTensorSizeInBytes(a, &na), "GetTensorSizeInBytes");
        check(ort->GetTensorSizeInBytes(b, &nb), "GetTensorSizeInBytes");
        const void *da = NULL, *db = NULL;
        check(ort->GetTensorData(a, &da), "GetTensorData");
        check(ort->GetTensorData(b, &db), "GetTensorData");
        same = na == nb && !memcmp(da, db, na);
    }
    ort->ReleaseTensorTypeAndShapeInfo(ia);
    ort->ReleaseTensorTypeAndShapeInfo(ib);
    return same;
}

/* ---- arguments --------------------------------------------------------------------------- */

typedef struct {
    char* name;
    char* files[16];
    int n_files;
} input_arg;

int main(int argc, char** argv) {
    const char *model = NULL, *out_dir = NULL, *ep = "hipdnn", *ep_lib = HIPDNN_EP_LIBRARY;
    const char* device = "cpu";
    int no_fallback = 0, log_level = ORT_LOGGING_LEVEL_WARNING, threads = 1;
    GraphOptimizationLevel opt_level = ORT_ENABLE_ALL;
    const char* opt_keys[32];
    const char* opt_vals[32];
    size_t n_opts = 0;
    const char* cfg_keys[32];
    const char* cfg_vals[32];
    size_t n_cfgs = 0;
    input_arg inputs[32];
    int n_inputs = 0;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-fallback")) {
            no_fallback = 1;
            continue;
        }
        if (!v) die("%s needs a value", a);
        ++i;
        if (!strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--out-dir")) out_dir = v;
        else if (!strcmp(a, "--ep")) ep = v;
        else if (!strcmp(a, "--ep-lib")) ep_lib = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--log-level")) log_level = atoi(v);
        else if (!strcmp(a, "--threads")) {
            threads = atoi(v);
            if (threads < 1 || threads > 64) die("--threads %s: 1 to 64", v);
        }
        else if (!strcmp(a, "--opt-level")) {
            if (!strcmp(v, "disable")) opt_level = ORT_DISABLE_ALL;
            else if (!strcmp(v, "basic")) opt_level = ORT_ENABLE_BASIC;
            else if (!strcmp(v, "extended")) opt_level = ORT_ENABLE_EXTENDED;
            else if (!strcmp(v, "all")) opt_level = ORT_ENABLE_ALL;
            else die("--opt-level %s: disable, basic, extended or all", v);
        }
        else if (!strcmp(a, "--option") || !strcmp(a, "--input") || !strcmp(a, "--config")) {
            char* eq = strchr(argv[i], '=');
            if (!eq) die("%s %s: expected KEY=VALUE", a, v);
            *eq = '\0';
            if (!strcmp(a, "--config")) {
                if (n_cfgs == 32) die("too many config entries");
                cfg_keys[n_cfgs] = argv[i];
                cfg_vals[n_cfgs++] = eq + 1;
                continue;
            }
            if (!strcmp(a, "--option")) {
                if (n_opts == 32) die("too many options");
                opt_keys[n_opts] = argv[i];
                opt_vals[n_opts++] = eq + 1;
                continue;
            }
            int k = 0;
            while (k < n_inputs && strcmp(inputs[k].name, argv[i])) ++k;
            if (k == n_inputs) {
                if (n_inputs == 32) die("too many inputs");
                inputs[n_inputs].name = argv[i];
                inputs[n_inputs++].n_files = 0;
            }
            if (inputs[k].n_files == 16) die("input %s given over 16 times", argv[i]);
            inputs[k].files[inputs[k].n_files++] = eq + 1;
        } else {
            die("unknown argument %s", a);
        }
    }
    if (!model || !out_dir) die("usage: ort_run --model M.onnx --out-dir DIR [--ep hipdnn|cpu] ...");
    if (strcmp(ep, "hipdnn") && strcmp(ep, "cpu")) die("--ep %s: hipdnn or cpu", ep);
    if (strcmp(device, "cpu") && strcmp(device, "gpu")) die("--device %s: cpu or gpu", device);
    OrtHardwareDeviceType want = strcmp(device, "gpu") ? OrtHardwareDeviceType_CPU
                                                       : OrtHardwareDeviceType_GPU;

    ort = OrtGetApiBase()->GetApi(ORT_API_VERSION);
    if (!ort) die("this libonnxruntime does not serve API version %d", ORT_API_VERSION);
    OrtEnv* env = NULL;
    check(ort->CreateEnv((OrtLoggingLevel)log_level, "ort_run", &env), "CreateEnv");
    OrtSessionOptions* so = NULL;
    check(ort->CreateSessionOptions(&so), "CreateSessionOptions");
    check(ort->SetSessionLogSeverityLevel(so, log_level), "SetSessionLogSeverityLevel");
    check(ort->SetSessionGraphOptimizationLevel(so, opt_level), "SetSessionGraphOptimizationLevel");
    check(ort->AddSessionConfigEntry(so, "session.record_ep_graph_assignment_info", "1"),
          "record_ep_graph_assignment_info");
    if (no_fallback)
        check(ort->AddSessionConfigEntry(so, "session.disable_cpu_ep_fallback", "1"),
              "disable_cpu_ep_fallback");
    for (size_t c = 0; c < n_cfgs; ++c)
        check(ort->AddSessionConfigEntry(so, cfg_keys[c], cfg_vals[c]), "AddSessionConfigEntry");
    int registered = 0;
    if (!strcmp(ep, "hipdnn")) {
        check(ort->RegisterExecutionProviderLibrary(env, "hipdnn", ep_lib),
              "RegisterExecutionProviderLibrary");
        registered = 1;
        const OrtEpDevice* const* devices = NULL;
        size_t n_devices = 0;
        check(ort->GetEpDevices(env, &devices, &n_devices), "GetEpDevices");
        const OrtEpDevice* mine = NULL;
        for (size_t d = 0; d < n_devices && !mine; ++d)
            if (!strcmp(ort->EpDevice_EpName(devices[d]), "hipdnn") &&
                ort->HardwareDevice_Type(ort->EpDevice_Device(devices[d])) == want)
                mine = devices[d];
        if (!mine) die("%s registered but offers no %s device", ep_lib, device);
        const OrtHardwareDevice* hw = ort->EpDevice_Device(mine);
        printf("device hipdnn %s vendor 0x%04x metadata", device, ort->HardwareDevice_VendorId(hw));
        const char* const* keys = NULL;
        const char* const* vals = NULL;
        size_t n_kv = 0;
        ort->GetKeyValuePairs(ort->EpDevice_EpMetadata(mine), &keys, &vals, &n_kv);
        for (size_t k = 0; k < n_kv; ++k) printf(" %s=%s", keys[k], vals[k]);
        printf("\n");
        check(ort->SessionOptionsAppendExecutionProvider_V2(so, env, &mine, 1, opt_keys, opt_vals,
                                                            n_opts),
              "SessionOptionsAppendExecutionProvider_V2");
    }
    OrtSession* session = NULL;
    check(ort->CreateSession(env, model, so, &session), "CreateSession");

    const OrtEpAssignedSubgraph* const* subgraphs = NULL;
    size_t n_sub = 0;
    check(ort->Session_GetEpGraphAssignmentInfo(session, &subgraphs, &n_sub),
          "Session_GetEpGraphAssignmentInfo");
    for (size_t s = 0; s < n_sub; ++s) {
        const char* ep_name = NULL;
        const OrtEpAssignedNode* const* nodes = NULL;
        size_t nn = 0;
        check(ort->EpAssignedSubgraph_GetEpName(subgraphs[s], &ep_name), "EpAssignedSubgraph_GetEpName");
        check(ort->EpAssignedSubgraph_GetNodes(subgraphs[s], &nodes, &nn), "EpAssignedSubgraph_GetNodes");
        for (size_t k = 0; k < nn; ++k) {
            const char *name = NULL, *op = NULL;
            check(ort->EpAssignedNode_GetName(nodes[k], &name), "EpAssignedNode_GetName");
            check(ort->EpAssignedNode_GetOperatorType(nodes[k], &op), "EpAssignedNode_GetOperatorType");
            printf("assigned %s %zu %s %s\n", ep_name, s, op, name && name[0] ? name : "-");
        }
    }
    fflush(stdout);

    OrtAllocator* alloc = NULL;
    check(ort->GetAllocatorWithDefaultOptions(&alloc), "GetAllocatorWithDefaultOptions");
    size_t n_in = 0, n_out = 0;
    check(ort->SessionGetInputCount(session, &n_in), "SessionGetInputCount");
    check(ort->SessionGetOutputCount(session, &n_out), "SessionGetOutputCount");
    char** in_names = calloc(n_in + 1, sizeof(char*));
    char** out_names = calloc(n_out + 1, sizeof(char*));
    int* in_arg = calloc(n_in + 1, sizeof(int));
    int runs = 1;
    for (size_t i = 0; i < n_in; ++i) {
        check(ort->SessionGetInputName(session, i, alloc, &in_names[i]), "SessionGetInputName");
        in_arg[i] = -1;
        for (int k = 0; k < n_inputs; ++k)
            if (!strcmp(inputs[k].name, in_names[i])) in_arg[i] = k;
        if (in_arg[i] < 0) die("no --input for model input '%s'", in_names[i]);
        if (inputs[in_arg[i]].n_files > runs) runs = inputs[in_arg[i]].n_files;
    }
    for (size_t i = 0; i < n_out; ++i)
        check(ort->SessionGetOutputName(session, i, alloc, &out_names[i]), "SessionGetOutputName");
    OrtMemoryInfo* mem = NULL;
    check(ort->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &mem), "CreateCpuMemoryInfo");

    for (int r = 0; r < runs; ++r) {
        OrtValue** in_vals = calloc(n_in + 1, sizeof(OrtValue*));
        OrtValue** out_vals = calloc(n_out + 1, sizeof(OrtValue*));
        array* arrays = calloc(n_in + 1, sizeof(array));
        for (size_t i = 0; i < n_in; ++i) {
            const input_arg* ia = &inputs[in_arg[i]];
            npy_read(ia->files[r < ia->n_files ? r : ia->n_files - 1], &arrays[i]);
            check(ort->CreateTensorWithDataAsOrtValue(mem, arrays[i].data, arrays[i].bytes,
                                                      arrays[i].shape, arrays[i].rank,
                                                      arrays[i].type, &in_vals[i]),
                  "CreateTensorWithDataAsOrtValue");
        }
        run_job jobs[64];
        pthread_t tids[64];
        for (int t = 0; t < threads; ++t) {
            jobs[t] = (run_job){session, (const char* const*)in_names,
                                (const OrtValue* const*)in_vals, n_in,
                                (const char* const*)out_names, n_out,
                                t ? calloc(n_out + 1, sizeof(OrtValue*)) : out_vals, NULL};
            if (!jobs[t].out_vals) die("out of memory");
            if (threads > 1 && pthread_create(&tids[t], NULL, run_thread, &jobs[t]))
                die("pthread_create failed");
        }
        if (threads == 1) run_thread(&jobs[0]);
        for (int t = 0; threads > 1 && t < threads; ++t) pthread_join(tids[t], NULL);
        for (int t = 0; t < threads; ++t) check(jobs[t].status, "Run");
        for (int t = 1; t < threads; ++t) {
            for (size_t o = 0; o < n_out; ++o) {
                if (!same_output(out_vals[o], jobs[t].out_vals[o]))
                    die("run %d: thread %d's output %s differs from thread 0's", r, t, out_names[o]);
                ort->ReleaseValue(jobs[t].out_vals[o]);
            }
            free(jobs[t].out_vals);
        }
        for (size_t o = 0; o < n_out; ++o) {
            OrtTensorTypeAndShapeInfo* info = NULL;
            check(ort->GetTensorTypeAndShape(out_vals[o], &info), "GetTensorTypeAndShape");
            ONNXTensorElementDataType type;
            size_t rank = 0, count = 0;
            int64_t shape[8];
            check(ort->GetTensorElementType(info, &type), "GetTensorElementType");
            check(ort->GetDimensionsCount(info, &rank), "GetDimensionsCount");
            if (rank > 8) die("output %s has rank %zu", out_names[o], rank);
            check(ort->GetDimensions(info, shape, rank), "GetDimensions");
            check(ort->GetTensorShapeElementCount(info, &count), "GetTensorShapeElementCount");
            ort->ReleaseTensorTypeAndShapeInfo(info);
            const npy_type* nt = npy_type_of(type);
            size_t esize = nt ? nt->size : 0;
            if (!esize)
                die("output %s has element type %d", out_names[o], (int)type);
            /* the session copies results to the host (on a GPU, reading device memory
             * here would fault; over the tests' fake driver it would not, so say it) */
            const OrtMemoryInfo* where = NULL;
            check(ort->GetTensorMemoryInfo(out_vals[o], &where), "GetTensorMemoryInfo");
            OrtMemoryInfoDeviceType dt = OrtMemoryInfoDeviceType_CPU;
            ort->MemoryInfoGetDeviceType(where, &dt);
            if (dt != OrtMemoryInfoDeviceType_CPU)
                die("output %s is in memory of device type %d, not the host's", out_names[o], (int)dt);
            void* data = NULL;
            check(ort->GetTensorMutableData(out_vals[o], &data), "GetTensorMutableData");
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s.%d.npy", out_dir, out_names[o], r);
            npy_write(path, type, shape, rank, data, count * esize);
            ort->ReleaseValue(out_vals[o]);
        }
        for (size_t i = 0; i < n_in; ++i) {
            /* an EP must not write into the caller's inputs */
            const input_arg* ia = &inputs[in_arg[i]];
            array again;
            npy_read(ia->files[r < ia->n_files ? r : ia->n_files - 1], &again);
            if (again.bytes != arrays[i].bytes || memcmp(again.data, arrays[i].data, again.bytes))
                die("run %d changed input '%s'", r, in_names[i]);
            free(again.data);
            ort->ReleaseValue(in_vals[i]);
            free(arrays[i].data);
        }
        free(in_vals);
        free(out_vals);
        free(arrays);
    }
    printf("runs %d\n", runs);

    for (size_t i = 0; i < n_in; ++i) check(ort->AllocatorFree(alloc, in_names[i]), "AllocatorFree");
    for (size_t i = 0; i < n_out; ++i) check(ort->AllocatorFree(alloc, out_names[i]), "AllocatorFree");
    free(in_names);
    free(out_names);
    free(in_arg);
    ort->ReleaseMemoryInfo(mem);
    ort->ReleaseSession(session);
    ort->ReleaseSessionOptions(so);
    if (registered) check(ort->UnregisterExecutionProviderLibrary(env, "hipdnn"),
                          "UnregisterExecutionProviderLibrary");
    ort->ReleaseEnv(env);
    return 0;
}
