/* TENSOR descriptors.  Dims, strides and the data type may be left unset: finalizing the
 * operation graph infers them and keeps them in the graph (OPERATIONGRAPH TENSORS_EXT);
 * a TENSOR descriptor always reads back what its user set. */
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"

#define T(d) ((hipdnnTensorState*)(d)->state)

static void tensor_init(hipdnnBackendDescriptor_t d) {
    T(d)->t.data_type = HIPDNN_DATA_NOT_SET;
}

static void tensor_destroy(hipdnnBackendDescriptor_t d) {
    free(T(d)->t.name);
    hipdnnDescriptorRelease(T(d)->ragged);
}

/* RAGGED_OFFSET_DESC: another tensor (int32 / int64 [B + 1, 1, 1, 1]) saying where each
 * sample starts; the graph checks it against the sdpa node that reads this tensor. */
static hipdnnStatus_t set_ragged(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeType_t type,
                                 int64_t count, const void* v) {
    hipdnnTensorState* s = T(d);
    if (type == HIPDNN_TYPE_BACKEND_DESCRIPTOR && count == 0) { /* unset */
        hipdnnDescriptorRelease(s->ragged);
        s->ragged = NULL;
        return HIPDNN_STATUS_SUCCESS;
    }
    if (type == HIPDNN_TYPE_BACKEND_DESCRIPTOR && count == 1 && v &&
        *(const hipdnnBackendDescriptor_t*)v == d)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s': RAGGED_OFFSET_DESC is the "
                          "tensor itself", s->t.name ? s->t.name : "");
    return hipdnnAttrSetDescriptor("TENSOR", "RAGGED_OFFSET_DESC",
                                   HIPDNN_BACKEND_TENSOR_DESCRIPTOR, type, count, v, &s->ragged);
}

/* DIMENSIONS: up to HIPDNN_MAX_DIMS, each positive. */
static hipdnnStatus_t set_dims(hipdnnTensorState* s, hipdnnBackendAttributeType_t type,
                               int64_t count, const void* v) {
    hipdnnStatus_t st = hipdnnAttrExpect("TENSOR", "DIMENSIONS", HIPDNN_TYPE_INT64, type, count,
                                         0, HIPDNN_MAX_DIMS, v);
    if (st) return st;
    const int64_t* dims = v;
    for (int64_t i = 0; i < count; ++i)
        if (dims[i] <= 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "tensor '%s': dim %lld is %lld; dims must be positive",
                              s->t.name ? s->t.name : "", (long long)i, (long long)dims[i]);
    s->t.ndim = (int32_t)count;
    if (count) memcpy(s->t.dims, dims, (size_t)count * sizeof(int64_t)); /* dims may be NULL */
    return HIPDNN_STATUS_SUCCESS;
}

/* STRIDES: up to HIPDNN_MAX_DIMS, each positive; checked against the rank at finalize. */
static hipdnnStatus_t set_strides(hipdnnTensorState* s, hipdnnBackendAttributeType_t type,
                                  int64_t count, const void* v) {
    hipdnnStatus_t st = hipdnnAttrExpect("TENSOR", "STRIDES", HIPDNN_TYPE_INT64, type, count, 0,
                                         HIPDNN_MAX_DIMS, v);
    if (st) return st;
    const int64_t* strides = v;
    for (int64_t i = 0; i < count; ++i)
        if (strides[i] <= 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "tensor '%s': stride %lld is %lld; strides must be positive",
                              s->t.name ? s->t.name : "", (long long)i, (long long)strides[i]);
    if (count) memcpy(s->t.strides, strides, (size_t)count * sizeof(int64_t));
    s->has_strides = count > 0;
    s->num_strides = (int32_t)count;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t tensor_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                 hipdnnBackendAttributeType_t type, int64_t count,
                                 const void* v) {
    hipdnnTensorState* s = T(d);
    hipdnnStatus_t st;
    switch (name) {
    case HIPDNN_ATTR_TENSOR_UNIQUE_ID:
        if ((st = hipdnnAttrExpect("TENSOR", "UNIQUE_ID", HIPDNN_TYPE_INT64, type, count, 1, 1, v)))
            return st;
        s->t.uid = *(const int64_t*)v;
        s->has_uid = true;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_TENSOR_DATA_TYPE: {
        if ((st = hipdnnAttrExpect("TENSOR", "DATA_TYPE", HIPDNN_TYPE_DATA_TYPE, type, count, 1, 1,
                                   v)))
            return st;
        hipdnnDataType_t dt = *(const hipdnnDataType_t*)v;
        if (dt != HIPDNN_DATA_NOT_SET && hipdnnSdkDataTypeSize(dt) == 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "TENSOR descriptor: unknown data type %d",
                              (int)dt);
        s->t.data_type = dt;
        return HIPDNN_STATUS_SUCCESS;
    }
    case HIPDNN_ATTR_TENSOR_DIMENSIONS: return set_dims(s, type, count, v);
    case HIPDNN_ATTR_TENSOR_STRIDES: return set_strides(s, type, count, v);
    case HIPDNN_ATTR_TENSOR_IS_VIRTUAL:
        if ((st = hipdnnAttrExpect("TENSOR", "IS_VIRTUAL", HIPDNN_TYPE_BOOLEAN, type, count, 1, 1,
                                   v)))
            return st;
        /* a byte other than 0 and 1 is true, not undefined behaviour */
        s->t.is_virtual = *(const uint8_t*)v != 0;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_TENSOR_IS_BY_VALUE:
        if ((st = hipdnnAttrExpect("TENSOR", "IS_BY_VALUE", HIPDNN_TYPE_BOOLEAN, type, count, 1,
                                   1, v)))
            return st;
        s->t.is_by_value = *(const uint8_t*)v != 0;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_TENSOR_VALUE_EXT:
        if ((st = hipdnnAttrExpect("TENSOR", "VALUE", HIPDNN_TYPE_UINT8_EXT, type, count, 1, 8, v)))
            return st;
        memset(s->t.value, 0, sizeof(s->t.value));
        memcpy(s->t.value, v, (size_t)count);
        s->has_value = true;
        return HIPDNN_STATUS_SUCCESS;
    case HIPDNN_ATTR_TENSOR_NAME_EXT:
        if ((st = hipdnnAttrExpect("TENSOR", "NAME_EXT", HIPDNN_TYPE_CHAR, type, count, 0,
                                   INT32_MAX, v)))
            return st;
        return hipdnnAttrSetString(&s->t.name, count, v);
    case HIPDNN_ATTR_TENSOR_BYTE_ALIGNMENT:
        return hipdnnAttrExpect("TENSOR", "BYTE_ALIGNMENT", HIPDNN_TYPE_INT64, type, count, 1, 1,
                                v);
    case HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC: return set_ragged(d, type, count, v);
    default: return hipdnnAttrUnknown("TENSOR", name);
    }
}

static hipdnnStatus_t tensor_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                                 hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                                 void* v) {
    hipdnnTensorState* s = T(d);
    bool flag;
    int64_t rank = s->t.ndim;
    switch (name) {
    case HIPDNN_ATTR_TENSOR_UNIQUE_ID:
        return hipdnnAttrReturn("TENSOR", "UNIQUE_ID", HIPDNN_TYPE_INT64, type, req, count, v,
                                &s->t.uid, s->has_uid ? 1 : 0, sizeof(int64_t));
    case HIPDNN_ATTR_TENSOR_DATA_TYPE:
        return hipdnnAttrReturn("TENSOR", "DATA_TYPE", HIPDNN_TYPE_DATA_TYPE, type, req, count, v,
                                &s->t.data_type, 1, sizeof(hipdnnDataType_t));
    case HIPDNN_ATTR_TENSOR_DIMENSIONS:
        return hipdnnAttrReturn("TENSOR", "DIMENSIONS", HIPDNN_TYPE_INT64, type, req, count, v,
                                s->t.dims, rank, sizeof(int64_t));
    case HIPDNN_ATTR_TENSOR_STRIDES:
        return hipdnnAttrReturn("TENSOR", "STRIDES", HIPDNN_TYPE_INT64, type, req, count, v,
                                s->t.strides, s->has_strides ? rank : 0, sizeof(int64_t));
    case HIPDNN_ATTR_TENSOR_IS_VIRTUAL:
        flag = s->t.is_virtual;
        return hipdnnAttrReturn("TENSOR", "IS_VIRTUAL", HIPDNN_TYPE_BOOLEAN, type, req, count, v,
                                &flag, 1, sizeof(flag));
    case HIPDNN_ATTR_TENSOR_IS_BY_VALUE:
        flag = s->t.is_by_value;
        return hipdnnAttrReturn("TENSOR", "IS_BY_VALUE", HIPDNN_TYPE_BOOLEAN, type, req, count, v,
                                &flag, 1, sizeof(flag));
    case HIPDNN_ATTR_TENSOR_VALUE_EXT:
        return hipdnnAttrReturn("TENSOR", "VALUE", HIPDNN_TYPE_UINT8_EXT, type, req, count, v,
                                s->t.value, s->has_value ? (int64_t)hipdnnSdkDataTypeSize(s->t.data_type) : 0,
                                1);
    case HIPDNN_ATTR_TENSOR_NAME_EXT:
        return hipdnnAttrReturnString("TENSOR", "NAME_EXT", type, req, count, v, s->t.name);
    case HIPDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC:
        if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "TENSOR descriptor: RAGGED_OFFSET_DESC has type BACKEND_DESCRIPTOR");
        *count = s->ragged ? 1 : 0;
        if (req > 0 && s->ragged) { /* the caller gets its own reference */
            hipdnnDescriptorRetain(s->ragged);
            *(hipdnnBackendDescriptor_t*)v = s->ragged;
        }
        return HIPDNN_STATUS_SUCCESS;
    default: return hipdnnAttrUnknown("TENSOR", name);
    }
}

static hipdnnStatus_t tensor_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnTensorState* s = T(d);
    const char* nm = s->t.name ? s->t.name : "";
    if (!s->has_uid)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s': UNIQUE_ID is not set", nm);
    /* Strides without dims are fine on an op's output: the dims are inferred later. */
    if (s->has_strides && s->t.ndim > 0 && s->num_strides != s->t.ndim)
        return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                          "tensor '%s' (uid %lld): %d strides for %d dims", nm,
                          (long long)s->t.uid, (int)s->num_strides, (int)s->t.ndim);
    /* By-value without VALUE_EXT: a runtime scalar, given in the variant pack. */
    if (s->ragged) {
        hipdnnTensorState* r = s->ragged->state;
        if (r->ragged) /* checked first: offsets of offsets could loop back here */
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "tensor '%s' (uid %lld): its ragged "
                              "offset tensor '%s' has a ragged offset itself", nm,
                              (long long)s->t.uid, r->t.name ? r->t.name : "");
        hipdnnStatus_t st = hipdnnTensorClass.finalize(s->ragged);
        if (st) return st;
        s->t.has_ragged_offset = true;
        s->t.ragged_offset = r->t.uid;
    } else {
        s->t.has_ragged_offset = false;
    }
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnTensorClass = {
    "TENSOR", sizeof(hipdnnTensorState), tensor_init, tensor_destroy,
    tensor_set, tensor_get, tensor_finalize,
};
