/* The public descriptor entry points and the attribute helpers every type uses. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"

static const hipdnnDescriptorClass* class_of(hipdnnBackendDescriptorType_t type) {
    switch ((int)type) {
    case HIPDNN_BACKEND_TENSOR_DESCRIPTOR: return &hipdnnTensorClass;
    case HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR: return &hipdnnGraphClass;
    case HIPDNN_BACKEND_ENGINEHEUR_DESCRIPTOR: return &hipdnnHeurClass;
    case HIPDNN_BACKEND_ENGINE_DESCRIPTOR: return &hipdnnEngineClass;
    case HIPDNN_BACKEND_ENGINECFG_DESCRIPTOR: return &hipdnnEngineCfgClass;
    case HIPDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: return &hipdnnPlanClass;
    case HIPDNN_BACKEND_VARIANT_PACK_DESCRIPTOR: return &hipdnnVariantPackClass;
    case HIPDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR: return &hipdnnKnobChoiceClass;
    default: /* every operation, from the op table */
        return hipdnnSdkOpInfoForDescriptor(type) ? &hipdnnOperationClass : NULL;
    }
}

const char* hipdnnDescriptorTypeName(hipdnnBackendDescriptorType_t type) {
    const hipdnnSdkOpInfo* op = hipdnnSdkOpInfoForDescriptor(type);
    if (op) return op->descriptor_name;
    const hipdnnDescriptorClass* c = class_of(type);
    return c ? c->name : "UNKNOWN";
}

const char* hipdnnDescriptorName(hipdnnBackendDescriptor_t d) {
    return hipdnnDescriptorTypeName(d->type);
}

hipdnnStatus_t hipdnnDescriptorNew(hipdnnBackendDescriptorType_t type,
                                   hipdnnBackendDescriptor_t* out) {
    const hipdnnDescriptorClass* cls = class_of(type);
    if (!cls)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "unknown or reserved descriptor type %d",
                          (int)type);
    /* the state right after the descriptor, in one allocation (a variant pack is made for
     * every call of some callers) */
    const size_t align = _Alignof(max_align_t);
    const size_t head = (sizeof(struct hipdnnBackendDescriptor) + align - 1) / align * align;
    hipdnnBackendDescriptor_t d = malloc(head + cls->state_size); /* not calloc: glibc's
                                                                     skips its thread cache */
    if (!d)
        return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory creating a %s descriptor",
                          cls->name);
    *d = (struct hipdnnBackendDescriptor){0};
    void* state = memset((char*)d + head, 0, cls->state_size);
    d->magic = HIPDNN_DESCRIPTOR_MAGIC;
    d->type = type;
    atomic_init(&d->refs, 1);
    d->cls = cls;
    d->state = state;
    if (cls->init) cls->init(d);
    *out = d;
    return HIPDNN_STATUS_SUCCESS;
}

void hipdnnDescriptorRetain(hipdnnBackendDescriptor_t d) {
    if (d) atomic_fetch_add(&d->refs, 1);
}

void hipdnnDescriptorRelease(hipdnnBackendDescriptor_t d) {
    if (!d) return;
    if (atomic_fetch_sub(&d->refs, 1) != 1) return;
    if (d->cls->destroy) d->cls->destroy(d);
    d->magic = 0;
    free(d);
}

hipdnnStatus_t hipdnnDescriptorCheck(hipdnnBackendDescriptor_t d, int type, const char* what) {
    if (!d) return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s: descriptor is NULL", what);
    if (d->magic != HIPDNN_DESCRIPTOR_MAGIC)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "%s: not a live hipdnn descriptor (destroyed or foreign pointer)", what);
    if (type >= 0 && d->type != (hipdnnBackendDescriptorType_t)type)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: expected a %s descriptor, got %s", what,
                          hipdnnDescriptorTypeName((hipdnnBackendDescriptorType_t)type),
                          hipdnnDescriptorName(d));
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendCreateDescriptor(hipdnnBackendDescriptorType_t type,
                                                           hipdnnBackendDescriptor_t* desc) {
    hipdnnClearError();
    if (!desc)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "hipdnnBackendCreateDescriptor: desc is NULL");
    *desc = NULL;
    return hipdnnDescriptorNew(type, desc);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendDestroyDescriptor(hipdnnBackendDescriptor_t desc) {
    hipdnnClearError();
    if (!desc) return HIPDNN_STATUS_SUCCESS;
    hipdnnStatus_t st = hipdnnDescriptorCheck(desc, -1, "hipdnnBackendDestroyDescriptor");
    if (st) return st;
    hipdnnDescriptorRelease(desc);
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetDescriptorType_ext(hipdnnBackendDescriptor_t desc,
                                                                hipdnnBackendDescriptorType_t* type) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnDescriptorCheck(desc, -1, "hipdnnBackendGetDescriptorType_ext");
    if (st) return st;
    if (!type)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "hipdnnBackendGetDescriptorType_ext: type is NULL");
    *type = desc->type;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetOpCount_ext(int64_t* count) {
    hipdnnClearError();
    if (!count)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetOpCount_ext: count is NULL");
    int32_t n = 0;
    hipdnnSdkOpTable(&n);
    *count = n;
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnGetOpInfo_ext(int64_t index, const hipdnnOpInfo_ext_t** info) {
    hipdnnClearError();
    if (!info)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "hipdnnGetOpInfo_ext: info is NULL");
    int32_t n = 0;
    const hipdnnSdkOpInfo* table = hipdnnSdkOpTable(&n);
    if (index < 0 || index >= n)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "hipdnnGetOpInfo_ext: index %lld, the table has %d ops",
                          (long long)index, (int)n);
    *info = &table[index];
    return HIPDNN_STATUS_SUCCESS;
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendSetAttribute(hipdnnBackendDescriptor_t desc,
                                                       hipdnnBackendAttributeName_t name,
                                                       hipdnnBackendAttributeType_t type,
                                                       int64_t count, const void* values) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnDescriptorCheck(desc, -1, "hipdnnBackendSetAttribute");
    if (st) return st;
    if (desc->finalized && !(desc->type == HIPDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR &&
                             name == HIPDNN_ATTR_OPERATIONGRAPH_HANDLE))
        return hipdnnFail(HIPDNN_STATUS_NOT_INITIALIZED,
                          "%s descriptor: attribute %d set after finalize; descriptors are "
                          "immutable once finalized",
                          hipdnnDescriptorName(desc), (int)name);
    if (count < 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: attribute %d: count %lld < 0",
                          hipdnnDescriptorName(desc), (int)name, (long long)count);
    if (count > 0 && !values)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "%s descriptor: attribute %d: values is NULL", hipdnnDescriptorName(desc),
                          (int)name);
    return desc->cls->set(desc, name, type, count, values);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendGetAttribute(hipdnnBackendDescriptor_t desc,
                                                       hipdnnBackendAttributeName_t name,
                                                       hipdnnBackendAttributeType_t type,
                                                       int64_t requested, int64_t* count,
                                                       void* values) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnDescriptorCheck(desc, -1, "hipdnnBackendGetAttribute");
    if (st) return st;
    if (!count)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "%s descriptor: attribute %d: count is NULL", hipdnnDescriptorName(desc),
                          (int)name);
    if (requested < 0)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: requested %lld < 0",
                          hipdnnDescriptorName(desc), (long long)requested);
    if (requested > 0 && !values)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER,
                          "%s descriptor: attribute %d: values is NULL", hipdnnDescriptorName(desc),
                          (int)name);
    return desc->cls->get(desc, name, type, requested, count, values);
}

HIPDNN_EXPORT hipdnnStatus_t hipdnnBackendFinalize(hipdnnBackendDescriptor_t desc) {
    hipdnnClearError();
    hipdnnStatus_t st = hipdnnDescriptorCheck(desc, -1, "hipdnnBackendFinalize");
    if (st) return st;
    if (desc->finalized)
        return hipdnnFail(HIPDNN_STATUS_NOT_INITIALIZED, "%s descriptor: already finalized",
                          hipdnnDescriptorName(desc));
    st = desc->cls->finalize(desc);
    if (st == HIPDNN_STATUS_SUCCESS) desc->finalized = true;
    return st;
}

/* ---- attribute helpers ------------------------------------------------------------ */

static const char* type_name(hipdnnBackendAttributeType_t t) {
    switch ((int)t) {
    case HIPDNN_TYPE_HANDLE: return "HANDLE";
    case HIPDNN_TYPE_DATA_TYPE: return "DATA_TYPE";
    case HIPDNN_TYPE_BOOLEAN: return "BOOLEAN";
    case HIPDNN_TYPE_INT64: return "INT64";
    case HIPDNN_TYPE_FLOAT: return "FLOAT";
    case HIPDNN_TYPE_DOUBLE: return "DOUBLE";
    case HIPDNN_TYPE_VOID_PTR: return "VOID_PTR";
    case HIPDNN_TYPE_HEUR_MODE: return "HEUR_MODE";
    case HIPDNN_TYPE_BACKEND_DESCRIPTOR: return "BACKEND_DESCRIPTOR";
    case HIPDNN_TYPE_INT32: return "INT32";
    case HIPDNN_TYPE_CHAR: return "CHAR";
    case HIPDNN_TYPE_POINTWISE_MODE_EXT: return "POINTWISE_MODE_EXT";
    case HIPDNN_TYPE_CONVOLUTION_MODE_EXT: return "CONVOLUTION_MODE_EXT";
    case HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT: return "REDUCTION_OPERATOR_TYPE_EXT";
    case HIPDNN_TYPE_NORM_MODE_EXT: return "NORM_MODE_EXT";
    case HIPDNN_TYPE_NORM_FWD_PHASE_EXT: return "NORM_FWD_PHASE_EXT";
    case HIPDNN_TYPE_RESAMPLE_MODE_EXT: return "RESAMPLE_MODE_EXT";
    case HIPDNN_TYPE_PADDING_MODE_EXT: return "PADDING_MODE_EXT";
    case HIPDNN_TYPE_RESHAPE_MODE_EXT: return "RESHAPE_MODE_EXT";
    case HIPDNN_TYPE_GENSTATS_MODE_EXT: return "GENSTATS_MODE_EXT";
    case HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT: return "DIAGONAL_ALIGNMENT_EXT";
    case HIPDNN_TYPE_UINT8_EXT: return "UINT8_EXT";
    default: return "UNKNOWN";
    }
}

hipdnnStatus_t hipdnnAttrExpect(const char* desc, const char* attr,
                                hipdnnBackendAttributeType_t want,
                                hipdnnBackendAttributeType_t got, int64_t count, int64_t min,
                                int64_t max, const void* values) {
    if (got != want)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: %s takes type %s, got %s", desc,
                          attr, type_name(want), type_name(got));
    if (count < min || count > max) {
        if (min == max)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "%s descriptor: %s takes %lld value(s), got %lld", desc, attr,
                              (long long)min, (long long)count);
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_OUT_OF_BOUND,
                          "%s descriptor: %s takes %lld to %lld values, got %lld", desc, attr,
                          (long long)min, (long long)max, (long long)count);
    }
    if (count > 0 && !values)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM_NULL_POINTER, "%s descriptor: %s: values is NULL",
                          desc, attr);
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnAttrReturn(const char* desc, const char* attr,
                                hipdnnBackendAttributeType_t want,
                                hipdnnBackendAttributeType_t got, int64_t requested,
                                int64_t* count, void* values, const void* src, int64_t n,
                                size_t elem_size) {
    if (got != want)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: %s has type %s, asked for %s",
                          desc, attr, type_name(want), type_name(got));
    *count = n;
    int64_t k = requested < n ? requested : n;
    if (k > 0) memcpy(values, src, (size_t)k * elem_size);
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnAttrReturnString(const char* desc, const char* attr,
                                      hipdnnBackendAttributeType_t got, int64_t requested,
                                      int64_t* count, void* values, const char* s) {
    if (got != HIPDNN_TYPE_CHAR)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: %s has type CHAR, asked for %s",
                          desc, attr, type_name(got));
    if (!s) s = "";
    int64_t n = (int64_t)strlen(s);
    *count = n;
    if (requested > 0) {
        int64_t k = requested < n ? requested : n;
        memcpy(values, s, (size_t)k);
        if (k < requested) ((char*)values)[k] = '\0';
    }
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnAttrSetDescriptor(const char* desc, const char* attr,
                                       hipdnnBackendDescriptorType_t want,
                                       hipdnnBackendAttributeType_t type, int64_t count,
                                       const void* values, hipdnnBackendDescriptor_t* slot) {
    hipdnnStatus_t st = hipdnnAttrExpect(desc, attr, HIPDNN_TYPE_BACKEND_DESCRIPTOR, type, count,
                                         1, 1, values);
    if (st) return st;
    hipdnnBackendDescriptor_t d = *(const hipdnnBackendDescriptor_t*)values;
    char what[128];
    snprintf(what, sizeof(what), "%s %s", desc, attr);
    if ((st = hipdnnDescriptorCheck(d, (int)want, what))) return st;
    hipdnnDescriptorRetain(d);
    hipdnnDescriptorRelease(*slot);
    *slot = d;
    return HIPDNN_STATUS_SUCCESS;
}

hipdnnStatus_t hipdnnAttrUnknown(const char* desc, hipdnnBackendAttributeName_t name) {
    return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: attribute %d does not belong to it",
                      desc, (int)name);
}

hipdnnStatus_t hipdnnAttrSetString(char** dst, int64_t count, const void* values) {
    char* s = malloc((size_t)count + 1);
    if (!s) return hipdnnFail(HIPDNN_STATUS_ALLOC_FAILED, "out of memory copying a name");
    if (count > 0) memcpy(s, values, (size_t)count);
    s[count] = '\0';
    /* A NUL inside the given count ends the string early; keep what precedes it. */
    free(*dst);
    *dst = s;
    return HIPDNN_STATUS_SUCCESS;
}
