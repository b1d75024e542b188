/* OPERATION_* descriptors, all of them: one class driven by the op table.  A port
 * attribute takes a TENSOR descriptor; a parameter attribute is checked against its
 * entry's type, count and range and stored in the node's attribute slot. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "descriptor.h"
#include "error.h"

#define OP(d) ((hipdnnOperationState*)(d)->state)

static const char* node_name(const hipdnnOperationState* s) {
    return s->node.name ? s->node.name : "";
}

static void op_init(hipdnnBackendDescriptor_t d) {
    hipdnnOperationState* s = OP(d);
    s->info = hipdnnSdkOpInfoForDescriptor(d->type);
    hipdnnSdkNodeInit(&s->node, (hipdnnOpKind_t)s->info->kind);
}

static void op_destroy(hipdnnBackendDescriptor_t d) {
    hipdnnOperationState* s = OP(d);
    for (int i = 0; i < HIPDNN_MAX_PORTS; ++i) {
        hipdnnDescriptorRelease(s->in[i]);
        hipdnnDescriptorRelease(s->out[i]);
    }
    free(s->node.name);
}

/* The slot of a port attribute: &in[i] or &out[i]; NULL if `name` is no port. */
static hipdnnBackendDescriptor_t* port_slot(hipdnnOperationState* s,
                                            hipdnnBackendAttributeName_t name,
                                            const char** port) {
    for (int i = 0; i < s->info->num_inputs; ++i)
        if (s->info->inputs[i].attr == name) {
            *port = s->info->inputs[i].name;
            return &s->in[i];
        }
    for (int i = 0; i < s->info->num_outputs; ++i)
        if (s->info->outputs[i].attr == name) {
            *port = s->info->outputs[i].name;
            return &s->out[i];
        }
    return NULL;
}

static int attr_slot(const hipdnnSdkOpInfo* info, hipdnnBackendAttributeName_t name) {
    for (int a = 0; a < info->num_attrs; ++a)
        if (info->attrs[a].attr == name) return a;
    return -1;
}

/* Size of one C value of an enum or scalar attribute type. */
static size_t c_size(hipdnnBackendAttributeType_t t) {
    switch ((int)t) {
    case HIPDNN_TYPE_INT64: return sizeof(int64_t);
    case HIPDNN_TYPE_DOUBLE: return sizeof(double);
    case HIPDNN_TYPE_BOOLEAN: return sizeof(bool);
    default: return sizeof(int32_t); /* C enums */
    }
}

static hipdnnStatus_t set_param(hipdnnOperationState* s, int a,
                                hipdnnBackendAttributeType_t type, int64_t count,
                                const void* v) {
    const hipdnnOpAttrInfo_ext_t* ai = &s->info->attrs[a];
    const char* dn = s->info->descriptor_name;
    hipdnnStatus_t st = hipdnnAttrExpect(dn, ai->name, ai->type, type, count, 1, ai->max_count, v);
    if (st) return st;
    /* An op's list parameters run over the same dims (conv: one value per spatial dim), so
     * every list set must have the same length. */
    if (ai->kind == HIPDNN_OP_ATTR_INT64_LIST)
        for (int o = 0; o < s->info->num_attrs; ++o)
            if (o != a && s->info->attrs[o].kind == HIPDNN_OP_ATTR_INT64_LIST &&
                s->node.attrs[o].count != 0 && s->node.attrs[o].count != count)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                  "%s '%s': %s has %lld values but %s has %d", s->info->name,
                                  node_name(s), ai->name, (long long)count,
                                  s->info->attrs[o].name, (int)s->node.attrs[o].count);
    hipdnnSdkAttrValue val = {0};
    val.count = (int32_t)count;
    for (int64_t k = 0; k < count; ++k) {
        const uint8_t* p = (const uint8_t*)v + (size_t)k * c_size(ai->type);
        int64_t x = 0;
        switch (ai->kind) {
        case HIPDNN_OP_ATTR_DOUBLE:
            memcpy(&val.d, p, sizeof(double));
            if (isnan(val.d))
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s '%s': %s is NaN", s->info->name,
                                  node_name(s), ai->name);
            continue;
        case HIPDNN_OP_ATTR_BOOLEAN: x = *p != 0; break; /* any byte, as tensor.c */
        case HIPDNN_OP_ATTR_ENUM: {
            int32_t e;
            memcpy(&e, p, sizeof(e));
            x = e;
            if (!hipdnnSdkEnumValid(ai->type, x))
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: unknown %s value %d",
                                  dn, ai->name, (int)e);
            break;
        }
        default:
            memcpy(&x, p, sizeof(x));
            if (x < ai->min_value || x > ai->max_value)
                return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                                  "%s '%s': %s[%lld] = %lld; must be in [%lld, %lld]",
                                  s->info->name, node_name(s), ai->name, (long long)k,
                                  (long long)x, (long long)ai->min_value,
                                  (long long)ai->max_value);
            break;
        }
        val.i[k] = x;
    }
    /* Values beyond count keep their defaults, so readers of i[k] always see one. */
    for (int k = (int)count; k < HIPDNN_MAX_ATTR_VALUES; ++k) val.i[k] = s->node.attrs[a].i[k];
    s->node.attrs[a] = val;
    return HIPDNN_STATUS_SUCCESS;
}

static hipdnnStatus_t op_set(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                             hipdnnBackendAttributeType_t type, int64_t count, const void* v) {
    hipdnnOperationState* s = OP(d);
    const char* dn = s->info->descriptor_name;
    hipdnnStatus_t st;
    const char* port = NULL;
    hipdnnBackendDescriptor_t* slot = port_slot(s, name, &port);
    if (slot)
        return hipdnnAttrSetDescriptor(dn, port, HIPDNN_BACKEND_TENSOR_DESCRIPTOR, type, count, v,
                                       slot);
    int a = attr_slot(s->info, name);
    if (a >= 0) return set_param(s, a, type, count, v);
    switch (name) {
    case HIPDNN_ATTR_OPERATION_NAME_EXT:
        if ((st = hipdnnAttrExpect(dn, "NAME_EXT", HIPDNN_TYPE_CHAR, type, count, 0, INT32_MAX, v)))
            return st;
        return hipdnnAttrSetString(&s->node.name, count, v);
    case HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT: {
        if ((st = hipdnnAttrExpect(dn, "COMPUTE_TYPE_EXT", HIPDNN_TYPE_DATA_TYPE, type, count, 1, 1,
                                   v)))
            return st;
        hipdnnDataType_t ct = *(const hipdnnDataType_t*)v;
        if (!hipdnnSdkEnumValid(HIPDNN_TYPE_DATA_TYPE, ct))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s descriptor: unknown compute type %d", dn,
                              (int)ct);
        s->node.compute_type = ct;
        return HIPDNN_STATUS_SUCCESS;
    }
    default: return hipdnnAttrUnknown(dn, name);
    }
}

static hipdnnStatus_t get_param(const hipdnnOperationState* s, int a,
                                hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                                void* v) {
    const hipdnnOpAttrInfo_ext_t* ai = &s->info->attrs[a];
    const hipdnnSdkAttrValue* val = &s->node.attrs[a];
    const char* dn = s->info->descriptor_name;
    /* What the user set; a scalar never set reads as its default. */
    int64_t n = ai->kind == HIPDNN_OP_ATTR_INT64_LIST ? val->count : 1;
    if (ai->kind == HIPDNN_OP_ATTR_ENUM && val->count == 0 && val->i[0] < 0) n = 0; /* required */
    switch (ai->kind) {
    case HIPDNN_OP_ATTR_DOUBLE:
        return hipdnnAttrReturn(dn, ai->name, ai->type, type, req, count, v, &val->d, n,
                                sizeof(double));
    case HIPDNN_OP_ATTR_BOOLEAN: {
        bool b = val->i[0] != 0;
        return hipdnnAttrReturn(dn, ai->name, ai->type, type, req, count, v, &b, n, sizeof(b));
    }
    case HIPDNN_OP_ATTR_ENUM: {
        int32_t e = (int32_t)val->i[0];
        return hipdnnAttrReturn(dn, ai->name, ai->type, type, req, count, v, &e, n, sizeof(e));
    }
    default:
        return hipdnnAttrReturn(dn, ai->name, ai->type, type, req, count, v, val->i, n,
                                sizeof(int64_t));
    }
}

static hipdnnStatus_t op_get(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                             hipdnnBackendAttributeType_t type, int64_t req, int64_t* count,
                             void* v) {
    hipdnnOperationState* s = OP(d);
    const char* dn = s->info->descriptor_name;
    const char* port = NULL;
    hipdnnBackendDescriptor_t* slot = port_slot(s, name, &port);
    if (slot) {
        if (type != HIPDNN_TYPE_BACKEND_DESCRIPTOR)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM,
                              "%s descriptor: %s has type BACKEND_DESCRIPTOR", dn, port);
        *count = *slot ? 1 : 0;
        if (req > 0 && *slot) { /* the caller gets its own reference */
            hipdnnDescriptorRetain(*slot);
            *(hipdnnBackendDescriptor_t*)v = *slot;
        }
        return HIPDNN_STATUS_SUCCESS;
    }
    int a = attr_slot(s->info, name);
    if (a >= 0) return get_param(s, a, type, req, count, v);
    switch (name) {
    case HIPDNN_ATTR_OPERATION_NAME_EXT:
        return hipdnnAttrReturnString(dn, "NAME_EXT", type, req, count, v, s->node.name);
    case HIPDNN_ATTR_OPERATION_COMPUTE_TYPE_EXT:
        return hipdnnAttrReturn(dn, "COMPUTE_TYPE_EXT", HIPDNN_TYPE_DATA_TYPE, type, req, count, v,
                                &s->node.compute_type, 1, sizeof(hipdnnDataType_t));
    default: return hipdnnAttrUnknown(dn, name);
    }
}

/* Checks that the required ports and parameters are set; the graph does the rest. */
static hipdnnStatus_t op_finalize(hipdnnBackendDescriptor_t d) {
    hipdnnOperationState* s = OP(d);
    const hipdnnSdkOpInfo* info = s->info;
    for (int a = 0; a < info->num_attrs; ++a)
        if (info->attrs[a].kind == HIPDNN_OP_ATTR_ENUM && s->node.attrs[a].count == 0 &&
            s->node.attrs[a].i[0] < 0)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s '%s': %s is not set", info->name,
                              node_name(s), info->attrs[a].name);
    char label[160];
    hipdnnSdkNodeLabel(&s->node, label, sizeof(label));
    for (int i = 0; i < info->num_inputs; ++i)
        if (!s->in[i] && !info->inputs[i].is_optional)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: input '%s' is not set", label,
                              info->inputs[i].name);
    for (int i = 0; i < info->num_outputs; ++i)
        if (!s->out[i] && !info->outputs[i].is_optional)
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s: output '%s' is not set", label,
                              info->outputs[i].name);
    if (info->kind == HIPDNN_OP_POINTWISE) { /* each mode its own ports (cuDNN's layout) */
        unsigned in_set = 0, out_set = 0;
        for (int i = 0; i < info->num_inputs; ++i) in_set |= s->in[i] ? 1u << i : 0u;
        for (int i = 0; i < info->num_outputs; ++i) out_set |= s->out[i] ? 1u << i : 0u;
        char err[512];
        if (!hipdnnSdkPointwiseCheckPorts(hipdnnSdkNodeMode(&s->node), in_set, out_set, label,
                                          err, sizeof(err)))
            return hipdnnFail(HIPDNN_STATUS_BAD_PARAM, "%s", err);
    }
    return HIPDNN_STATUS_SUCCESS;
}

const hipdnnDescriptorClass hipdnnOperationClass = {
    "OPERATION", sizeof(hipdnnOperationState), op_init, op_destroy, op_set, op_get, op_finalize,
};

hipdnnStatus_t hipdnnOperationFromNode(const hipdnnSdkUidMap* map, const hipdnnSdkNode* n,
                                       hipdnnBackendDescriptor_t const* tensors,
                                       hipdnnBackendDescriptor_t* out) {
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
    hipdnnStatus_t st = hipdnnDescriptorNew(info->descriptor_type, out);
    if (st) return st;
    hipdnnOperationState* s = OP(*out);
    s->node = *n;
    s->node.name = NULL;
    if ((st = hipdnnAttrSetString(&s->node.name, (int64_t)strlen(n->name), n->name))) goto fail;
    for (int p = 0; p < HIPDNN_MAX_PORTS; ++p)
        for (int io = 0; io < 2; ++io) {
            int64_t uid = io ? n->outputs[p] : n->inputs[p];
            if (uid == HIPDNN_NO_TENSOR) continue;
            hipdnnBackendDescriptor_t td = tensors[hipdnnSdkUidMapFind(map, uid)];
            hipdnnDescriptorRetain(td);
            (io ? s->out : s->in)[p] = td;
        }
    (*out)->finalized = true;
    return HIPDNN_STATUS_SUCCESS;
fail:
    hipdnnDescriptorRelease(*out);
    *out = NULL;
    return st;
}
