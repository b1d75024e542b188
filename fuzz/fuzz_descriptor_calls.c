/* fuzz_descriptor_calls — the fuzzer's bytes as a program of descriptor-API calls on a
 * pool of live descriptors: create any type (reserved and unknown ones too), set any
 * attribute with any type, count and values, get with any type and room, finalize,
 * serialize, deserialize, execute, destroy.  Every call must return a status (with a
 * message when it fails); nothing may crash, and once the pool is destroyed nothing may
 * leak (LeakSanitizer checks each input).
 *
 * The program only breaks the API's rules where the API promises to check them (NULL
 * pointers, wrong types, counts, finalization, descriptor kinds).  It never passes a
 * destroyed descriptor or a buffer shorter than the count it states, and it executes only
 * with variant packs it builds from the plan itself, since those are the caller's side of
 * the contract.
 *
 * Program, one instruction after another (fuzz/make_corpus.py writes seeds):
 *   0 CREATE  type:u8 (index into k_types; 255: raw u32 follows)
 *   1 DESTROY d:u8
 *   2 SET     d:u8 attr:u8 type:u8 count:u8 values...   (u8 fields: 255 = raw u32 follows)
 *   3 GET     d:u8 attr:u8 type:u8 requested:u8 flags:u8
 *   4 FINALIZE d:u8
 *   5 SERIALIZE d:u8 capacity:u16
 *   6 DESERIALIZE length:u16 bytes...
 *   7 EXECUTE plan:u8 pack:u8 handle:u8
 *   8 RUN     d:u8    (a finalized plan: runs it with buffers built from its graph)
 * Descriptor operands index the pool (255 or an empty pool: NULL).  SET values: per
 * value, a pool index for BACKEND_DESCRIPTOR, a u8 for HANDLE (even: the handle, odd:
 * NULL), raw bytes of the type's size otherwise. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"

#define POOL 32
#define VALUES_BYTES 4096

typedef struct {
    hipdnnBackendDescriptor_t d;
    hipdnnBackendDescriptorType_t type;
    bool finalized; /* only tracked for what this program created or deserialized */
} slot;

typedef struct {
    fz_reader r;
    slot pool[POOL];
    int n;
} program;

static const int32_t k_types[] = {
    HIPDNN_BACKEND_TENSOR_DESCRIPTOR,
    HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
    HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
    HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
    HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT,
    HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
    HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
    HIPDNN_BACKEND_ENGINE_DESCRIPTOR,
    HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR,
    HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
    HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
    HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR,
    HIPDNN_INVALID_TYPE,
    HIPDNN_BACKEND_INTERMEDIATE_INFO_DESCRIPTOR,
    HIPDNN_BACKEND_KNOB_INFO_DESCRIPTOR,
    HIPDNN_BACKEND_LAYOUT_INFO_DESCRIPTOR,
    HIPDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR,
    -1,
    9999,
};

static const int32_t k_attrs[] = {
    HIPDNN_ATTR_ENGINEHEUR_MODE, HIPDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
    HIPDNN_ATTR_ENGINEHEUR_RESULTS, HIPDNN_ATTR_ENGINECFG_ENGINE,
    HIPDNN_ATTR_ENGINECFG_KNOB_CHOICES, HIPDNN_ATTR_EXECUTION_PLAN_HANDLE,
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, HIPDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
    HIPDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, HIPDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
    HIPDNN_ATTR_OPERATIONGRAPH_HANDLE, HIPDNN_ATTR_OPERATIONGRAPH_OPS,
    HIPDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, HIPDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
    HIPDNN_ATTR_VARIANT_PACK_DATA_POINTERS, HIPDNN_ATTR_VARIANT_PACK_WORKSPACE,
    HIPDNN_ATTR_ENGINE_OPERATION_GRAPH, HIPDNN_ATTR_ENGINE_GLOBAL_INDEX,
    HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP,
    HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
    HIPDNN_ATTR_CONVOLUTION_CONV_MODE, HIPDNN_ATTR_CONVOLUTION_DILATIONS,
    HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES, HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS,
    HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
    HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
    HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, HIPDNN_ATTR_OPERATION_POINTWISE_BDESC,
    HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
    HIPDNN_ATTR_TENSOR_DATA_TYPE, HIPDNN_ATTR_TENSOR_DIMENSIONS, HIPDNN_ATTR_TENSOR_STRIDES,
    HIPDNN_ATTR_TENSOR_UNIQUE_ID, HIPDNN_ATTR_TENSOR_IS_VIRTUAL, HIPDNN_ATTR_TENSOR_IS_BY_VALUE,
    HIPDNN_ATTR_OPERATION_MATMUL_ADESC, HIPDNN_ATTR_OPERATION_MATMUL_BDESC,
    HIPDNN_ATTR_OPERATION_MATMUL_CDESC, HIPDNN_ATTR_TENSOR_VALUE_EXT,
    HIPDNN_ATTR_TENSOR_NAME_EXT, HIPDNN_ATTR_OPERATION_NAME_EXT,
    HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT, HIPDNN_ATTR_OPERATION_BN_INFERENCE_X_EXT,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN_EXT,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE_EXT,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE_EXT, HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS_EXT,
    HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y_EXT, HIPDNN_ATTR_OPERATIONGRAPH_NAME_EXT,
    HIPDNN_ATTR_OPERATIONGRAPH_TENSORS_EXT, HIPDNN_ATTR_OPERATIONGRAPH_DESCRIPTION_EXT,
    HIPDNN_ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT, HIPDNN_ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT,
    HIPDNN_ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT, HIPDNN_ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT,
    HIPDNN_ATTR_ENGINE_ID_EXT, HIPDNN_ATTR_ENGINE_NAME_EXT, HIPDNN_ATTR_ENGINE_MEMORY_SPACE_EXT,
    HIPDNN_ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT, HIPDNN_ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT,
    HIPDNN_ATTR_VARIANT_PACK_MEMORY_SPACES_EXT,
};

static const int32_t k_attr_types[] = {
    HIPDNN_TYPE_HANDLE, HIPDNN_TYPE_DATA_TYPE, HIPDNN_TYPE_BOOLEAN, HIPDNN_TYPE_INT64,
    HIPDNN_TYPE_FLOAT, HIPDNN_TYPE_DOUBLE, HIPDNN_TYPE_VOID_PTR, HIPDNN_TYPE_HEUR_MODE,
    HIPDNN_TYPE_BACKEND_DESCRIPTOR, HIPDNN_TYPE_INT32, HIPDNN_TYPE_CHAR,
    HIPDNN_TYPE_POINTWISE_MODE_EXT, HIPDNN_TYPE_CONVOLUTION_MODE_EXT, HIPDNN_TYPE_UINT8_EXT,
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A u8 index into `table`, or (255) a raw u32. */
static int32_t pick(fz_reader* r, const int32_t* table, size_t n) {
    uint8_t k = fz_u8(r);
    return k == 255 ? (int32_t)fz_u32(r) : table[k % n];
}

static int64_t pick_count(fz_reader* r) {
    uint8_t k = fz_u8(r);
    return k == 255 ? (int64_t)(int32_t)fz_u32(r) : k;
}

static hipdnnBackendDescriptor_t pick_desc(program* p, int* index) {
    uint8_t k = fz_u8(&p->r);
    if (k == 255 || p->n == 0) {
        if (index) *index = -1;
        return NULL;
    }
    if (index) *index = k % p->n;
    return p->pool[k % p->n].d;
}

/* Size of one value of an attribute type as C callers pass it. */
static size_t value_size(int32_t type) {
    switch (type) {
    case HIPDNN_TYPE_HANDLE:
    case HIPDNN_TYPE_VOID_PTR:
    case HIPDNN_TYPE_BACKEND_DESCRIPTOR: return sizeof(void*);
    case HIPDNN_TYPE_INT64:
    case HIPDNN_TYPE_DOUBLE: return 8;
    case HIPDNN_TYPE_BOOLEAN:
    case HIPDNN_TYPE_CHAR:
    case HIPDNN_TYPE_UINT8_EXT: return 1;
    default: return 4; /* C enums, float, int32; and anything unknown */
    }
}

/* Adds a descriptor the program owns; past POOL it is destroyed at once. */
static void adopt(program* p, hipdnnBackendDescriptor_t d, bool finalized) {
    if (!d) return;
    if (p->n == POOL) {
        if (hipdnnBackendDestroyDescriptor(d)) fz_fail("destroy of a live descriptor");
        return;
    }
    hipdnnBackendDescriptorType_t type;
    if (hipdnnBackendGetDescriptorType_ext(d, &type)) fz_fail("type of a live descriptor");
    p->pool[p->n++] = (slot){d, type, finalized};
}

static void drop(program* p, int i) {
    if (hipdnnBackendDestroyDescriptor(p->pool[i].d)) fz_fail("destroy of a live descriptor");
    p->pool[i] = p->pool[--p->n];
}

static void checked(hipdnnStatus_t st, const char* call) {
    if (st != HIPDNN_STATUS_SUCCESS && hipdnnPeekLastErrorString_ext()[0] == '\0')
        fz_fail("%s failed with %s but left no message", call, hipdnnGetErrorString(st));
}

static void op_set(program* p) {
    int di;
    hipdnnBackendDescriptor_t d = pick_desc(p, &di);
    int32_t attr = pick(&p->r, k_attrs, COUNT_OF(k_attrs));
    int32_t type = pick(&p->r, k_attr_types, COUNT_OF(k_attr_types));
    int64_t count = pick_count(&p->r);
    static _Alignas(16) uint8_t values[VALUES_BYTES];
    size_t esize = value_size(type);
    if (count > (int64_t)(VALUES_BYTES / esize)) count = (int64_t)(VALUES_BYTES / esize);
    for (int64_t i = 0; i < count; ++i) {
        uint8_t* v = values + (size_t)i * esize;
        if (type == HIPDNN_TYPE_BACKEND_DESCRIPTOR) {
            hipdnnBackendDescriptor_t x = pick_desc(p, NULL);
            memcpy(v, &x, sizeof(x));
        } else if (type == HIPDNN_TYPE_HANDLE) {
            hipdnnHandle_t h = fz_u8(&p->r) & 1 ? NULL : fz_handle();
            memcpy(v, &h, sizeof(h));
        } else {
            for (size_t b = 0; b < esize; ++b) v[b] = fz_u8(&p->r);
        }
    }
    const void* vp = fz_u8(&p->r) == 0 ? NULL : values;
    checked(hipdnnBackendSetAttribute(d, (hipdnnBackendAttributeName_t)attr,
                                      (hipdnnBackendAttributeType_t)type, count, vp),
            "SetAttribute");
}

static void op_get(program* p) {
    hipdnnBackendDescriptor_t d = pick_desc(p, NULL);
    int32_t attr = pick(&p->r, k_attrs, COUNT_OF(k_attrs));
    int32_t type = pick(&p->r, k_attr_types, COUNT_OF(k_attr_types));
    int64_t requested = pick_count(&p->r);
    uint8_t flags = fz_u8(&p->r);
    static _Alignas(16) uint8_t values[VALUES_BYTES];
    size_t esize = value_size(type);
    if (requested > (int64_t)(VALUES_BYTES / esize)) requested = (int64_t)(VALUES_BYTES / esize);
    memset(values, 0, sizeof(values));
    int64_t count = -7;
    hipdnnStatus_t st = hipdnnBackendGetAttribute(
        d, (hipdnnBackendAttributeName_t)attr, (hipdnnBackendAttributeType_t)type, requested,
        flags & 1 ? NULL : &count, flags & 2 ? NULL : values);
    checked(st, "GetAttribute");
    if (st != HIPDNN_STATUS_SUCCESS) return;
    if (count < 0) fz_fail("GetAttribute succeeded with count %lld", (long long)count);
    if (type == HIPDNN_TYPE_BACKEND_DESCRIPTOR) {
        /* each descriptor written is a reference the caller owns */
        int64_t got = count < requested ? count : requested;
        for (int64_t i = 0; i < got; ++i) {
            hipdnnBackendDescriptor_t x;
            memcpy(&x, values + (size_t)i * sizeof(x), sizeof(x));
            if (!x) fz_fail("GetAttribute %d wrote a NULL descriptor", (int)attr);
            adopt(p, x, false);
        }
    }
}

static void op_serialize(program* p) {
    hipdnnBackendDescriptor_t d = pick_desc(p, NULL);
    size_t capacity = fz_u16(&p->r), size = 0;
    uint8_t* buf = malloc(capacity + 1);
    if (!buf) fz_fail("out of memory");
    hipdnnStatus_t st = hipdnnBackendGetSerializedBinaryGraph_ext(d, capacity, &size,
                                                                  capacity ? buf : NULL);
    checked(st, "GetSerializedBinaryGraph");
    if (st == HIPDNN_STATUS_SUCCESS && capacity && size > capacity)
        fz_fail("serialize wrote %zu bytes into %zu", size, capacity);
    free(buf);
}

static void op_deserialize(program* p) {
    size_t len = fz_u16(&p->r);
    if (len > p->r.n) len = p->r.n;
    /* its own allocation, so ASan sees reads past the end */
    uint8_t* bytes = malloc(len + 1);
    if (!bytes) fz_fail("out of memory");
    memcpy(bytes, p->r.p, len);
    p->r.p += len;
    p->r.n -= len;
    hipdnnBackendDescriptor_t g = NULL;
    hipdnnStatus_t st = hipdnnBackendCreateAndDeserializeGraph_ext(&g, bytes, len);
    checked(st, "CreateAndDeserializeGraph");
    if (st == HIPDNN_STATUS_SUCCESS) adopt(p, g, true);
    free(bytes);
}

static void op_execute(program* p) {
    int pi, vi;
    hipdnnBackendDescriptor_t plan = pick_desc(p, &pi), pack = pick_desc(p, &vi);
    hipdnnHandle_t h = fz_u8(&p->r) & 1 ? NULL : fz_handle();
    /* A finalized plan with a finalized pack of this program's pointers would run on
     * memory the program never sized: that pairing is RUN's job. */
    if (pi >= 0 && vi >= 0 && p->pool[pi].type == HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
        p->pool[pi].finalized && p->pool[vi].type == HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR &&
        p->pool[vi].finalized)
        return;
    checked(hipdnnBackendExecute(h, plan, pack), "Execute");
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fz_handle();
    program p;
    memset(&p, 0, sizeof(p));
    p.r = (fz_reader){data, size};
    for (int steps = 0; p.r.n > 0 && steps < 512; ++steps) {
        int i;
        switch (fz_u8(&p.r) % 9) {
        case 0: {
            int32_t type = pick(&p.r, k_types, COUNT_OF(k_types));
            hipdnnBackendDescriptor_t d = NULL;
            hipdnnStatus_t st =
                hipdnnBackendCreateDescriptor((hipdnnBackendDescriptorType_t)type, &d);
            checked(st, "CreateDescriptor");
            if (st == HIPDNN_STATUS_SUCCESS) adopt(&p, d, false);
            else if (d) fz_fail("a failed create returned a descriptor");
            break;
        }
        case 1:
            pick_desc(&p, &i);
            if (i >= 0) drop(&p, i);
            break;
        case 2: op_set(&p); break;
        case 3: op_get(&p); break;
        case 4: {
            hipdnnBackendDescriptor_t d = pick_desc(&p, &i);
            hipdnnStatus_t st = hipdnnBackendFinalize(d);
            checked(st, "Finalize");
            if (st == HIPDNN_STATUS_SUCCESS && i >= 0) p.pool[i].finalized = true;
            break;
        }
        case 5: op_serialize(&p); break;
        case 6: op_deserialize(&p); break;
        case 7: op_execute(&p); break;
        case 8:
            pick_desc(&p, &i);
            if (i >= 0 && p.pool[i].type == HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
                p.pool[i].finalized)
                fz_run_plan(p.pool[i].d, size);
            break;
        }
    }
    while (p.n > 0) drop(&p, p.n - 1);
    return 0;
}
