/* Backend descriptors: a common header (type, references, finalized flag) plus a
 * per-type state and a per-type table of functions.  Each descriptor type lives in its
 * own file (tensor.c, operation.c, graph.c, heuristics.c, engine.c, plan.c, execute.c). */
#ifndef HIPDNN_BACKEND_DESCRIPTOR_H
#define HIPDNN_BACKEND_DESCRIPTOR_H

#include <stdatomic.h>
#include <stdbool.h>

#include "hipdnn/hipdnn.h"
#include "hipdnn/hipdnn_sdk.h"

typedef struct hipdnnDescriptorClass {
    const char* name; /* "TENSOR" */
    size_t state_size;
    void (*init)(hipdnnBackendDescriptor_t d); /* may be NULL: state is zeroed */
    void (*destroy)(hipdnnBackendDescriptor_t d);
    hipdnnStatus_t (*set)(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                          hipdnnBackendAttributeType_t type, int64_t count, const void* values);
    hipdnnStatus_t (*get)(hipdnnBackendDescriptor_t d, hipdnnBackendAttributeName_t name,
                          hipdnnBackendAttributeType_t type, int64_t requested, int64_t* count,
                          void* values);
    hipdnnStatus_t (*finalize)(hipdnnBackendDescriptor_t d);
} hipdnnDescriptorClass;

#define HIPDNN_DESCRIPTOR_MAGIC 0x68646e44u /* "hdnD" */

struct hipdnnBackendDescriptor {
    uint32_t magic; /* catches freed or foreign pointers, best effort */
    hipdnnBackendDescriptorType_t type;
    atomic_int refs;
    bool finalized;
    const hipdnnDescriptorClass* cls;
    void* state;
};

/* The classes, one per file. */
extern const hipdnnDescriptorClass hipdnnTensorClass;
extern const hipdnnDescriptorClass hipdnnOperationClass; /* every op, by the op table */
extern const hipdnnDescriptorClass hipdnnGraphClass;
extern const hipdnnDescriptorClass hipdnnHeurClass;
extern const hipdnnDescriptorClass hipdnnEngineClass;
extern const hipdnnDescriptorClass hipdnnEngineCfgClass;
extern const hipdnnDescriptorClass hipdnnKnobChoiceClass;
extern const hipdnnDescriptorClass hipdnnPlanClass;
extern const hipdnnDescriptorClass hipdnnVariantPackClass;

/* Internal creation (status + message on failure). */
hipdnnStatus_t hipdnnDescriptorNew(hipdnnBackendDescriptorType_t type,
                                   hipdnnBackendDescriptor_t* out);
/* Takes / drops a reference.  Release frees the descriptor at zero. */
void hipdnnDescriptorRetain(hipdnnBackendDescriptor_t d);
void hipdnnDescriptorRelease(hipdnnBackendDescriptor_t d);
/* Checks that d is a live descriptor of `type` (any type if type < 0); message names
 * `what`. */
hipdnnStatus_t hipdnnDescriptorCheck(hipdnnBackendDescriptor_t d, int type, const char* what);
const char* hipdnnDescriptorTypeName(hipdnnBackendDescriptorType_t type);
/* "TENSOR", "OPERATION_POINTWISE", ... of a live descriptor. */
const char* hipdnnDescriptorName(hipdnnBackendDescriptor_t d);

/* ---- attribute helpers ------------------------------------------------------------ */

/* Checks the type and that min <= count <= max for a set. */
hipdnnStatus_t hipdnnAttrExpect(const char* desc, const char* attr,
                                hipdnnBackendAttributeType_t want,
                                hipdnnBackendAttributeType_t got, int64_t count, int64_t min,
                                int64_t max, const void* values);
/* Copies `n` elements of `elem_size` into values (up to requested) and sets *count. */
hipdnnStatus_t hipdnnAttrReturn(const char* desc, const char* attr,
                                hipdnnBackendAttributeType_t want,
                                hipdnnBackendAttributeType_t got, int64_t requested,
                                int64_t* count, void* values, const void* src, int64_t n,
                                size_t elem_size);
/* CHAR attributes: copies the string (NUL-terminated when room allows). */
hipdnnStatus_t hipdnnAttrReturnString(const char* desc, const char* attr,
                                      hipdnnBackendAttributeType_t got, int64_t requested,
                                      int64_t* count, void* values, const char* s);
/* Sets a descriptor-valued attribute: checks type and count, that the value is a live
 * descriptor of type `want`, then retains it and releases what *slot held. */
hipdnnStatus_t hipdnnAttrSetDescriptor(const char* desc, const char* attr,
                                       hipdnnBackendDescriptorType_t want,
                                       hipdnnBackendAttributeType_t type, int64_t count,
                                       const void* values, hipdnnBackendDescriptor_t* slot);
hipdnnStatus_t hipdnnAttrUnknown(const char* desc, hipdnnBackendAttributeName_t name);
/* Copies a CHAR attribute into a new malloc'd string (freeing *dst's old value). */
hipdnnStatus_t hipdnnAttrSetString(char** dst, int64_t count, const void* values);

/* ---- states shared between files ---------------------------------------------------- */

typedef struct {
    hipdnnSdkTensor t;
    bool has_uid;
    bool has_strides;
    int32_t num_strides;
    bool has_value;
    hipdnnBackendDescriptor_t ragged; /* RAGGED_OFFSET_DESC (a reference held), or NULL */
} hipdnnTensorState;

typedef struct {
    const hipdnnSdkOpInfo* info; /* the op's table entry */
    hipdnnSdkNode node;          /* parameters as set; ports are the descriptors below */
    hipdnnBackendDescriptor_t in[HIPDNN_MAX_PORTS];
    hipdnnBackendDescriptor_t out[HIPDNN_MAX_PORTS];
} hipdnnOperationState;

/* A new, finalized OPERATION_* descriptor for node `n` of a graph whose tensors are the
 * finalized TENSOR descriptors `tensors` (by tensor index, found through `map`); for
 * deserialized graphs. */
hipdnnStatus_t hipdnnOperationFromNode(const hipdnnSdkUidMap* map, const hipdnnSdkNode* n,
                                       hipdnnBackendDescriptor_t const* tensors,
                                       hipdnnBackendDescriptor_t* out);

typedef struct {
    hipdnnHandle_t handle;
    char* name;
    int64_t num_ops;
    hipdnnBackendDescriptor_t* ops;
    hipdnnSdkGraph* graph; /* after finalize: validated, inferred, topologically sorted */
    uint8_t* bytes;        /* after finalize: the graph encoded */
    size_t num_bytes;
    /* after finalize, by tensor index: the bytes its dims and strides reach, -1 past int64,
     * HIPDNN_SPAN_RAGGED (aliasing.h) for a ragged tensor (execute's extent and overlap
     * checks, every call) */
    int64_t* span_bytes;
} hipdnnGraphState;

typedef struct {
    hipdnnBackendDescriptor_t graph; /* OPERATIONGRAPH */
    int64_t engine_index;            /* into the registry */
    bool has_index;
} hipdnnEngineState;

typedef struct {
    hipdnnBackendDescriptor_t engine;
    int64_t num_knobs;
    hipdnnBackendDescriptor_t* knobs;
} hipdnnEngineCfgState;

typedef struct {
    int64_t knob_id;
    int64_t value;
} hipdnnKnobChoiceState;

#endif
