/* staged_graph.h — cutting a graph into stages (staged.c) as its files see it: the graph's
 * structure and the groups of nodes that become stages.
 *
 *   staged.c         the engine's entry, the stages in order, the workspace, each stage's
 *                    nodes of the graph given
 *   staged_graph.c   the graph's structure: who writes and reads each tensor; sub-graphs
 *   staged_groups.c  grouping the nodes, and compiling each group into its stage(s)
 *   staged_run.c     the kernel each stage runs, and enqueueing the stages */
#ifndef HIPDNN_HIP_STAGED_GRAPH_H
#define HIPDNN_HIP_STAGED_GRAPH_H

#include "staged.h"

/* What a group of nodes becomes: one stage (two for a reduction cut into parts). */
enum { G_POINTWISE = 0, G_SOFTMAX, G_NORM, G_REDUCTION, G_RESAMPLE, G_NORM_BWD, G_GEMM,
       G_ATTENTION, G_KINDS };

typedef struct {
    const hipdnnSdkGraph* g;
    hipdnnSdkUidMap map;
    int32_t* producer; /* per tensor: the node writing it, -1 none */
    int32_t* readers;  /* per tensor: reads by nodes */
    int32_t* group;    /* per node: its group, -1 none yet */
    int32_t* gkind;    /* per group */
    int ngroups;
    const hipdnnSdkNode* softmax[HIPE_MAX_STAGES][5]; /* per softmax group, its nodes */
    int32_t* gsoftmax; /* per group: index into softmax, -1 */
    bool* in;          /* scratch: nodes of a candidate stage */
    const hipe_knobs* knobs; /* the engine config's */
    const hipe_alias* alias; /* the rewritten graph's views (lower.c) */
    int nalias;
    char* why;
    size_t len;
} parts;

/* ---- the graph's structure (staged_graph.c) -------------------------------------------- */

/* The index of tensor uid, -1 for none. */
int32_t stg_tidx(const parts* s, int64_t uid);
/* The input ports of n's op. */
int stg_num_inputs(const hipdnnSdkNode* n);
/* "node 'r' (reduction)", in buf. */
const char* stg_label(const hipdnnSdkNode* n, char* buf, size_t len);
/* Checks every node's op and tensors and fills producer and readers; false with the
 * reason. */
bool stg_structure(parts* s);
bool stg_reads(const hipdnnSdkNode* n, int64_t uid);
/* Whether node n reads memory that a node of group grp writes under another name: a view
 * of a tensor the group makes, a tensor the group writes through a view, or a view over
 * the same memory as one.  One fused kernel cannot take both (the writer's values may
 * stay in registers, or be stored by another thread). */
bool stg_reads_aliased(const parts* s, const hipdnnSdkNode* n, int grp);
bool stg_same_dims(const hipdnnSdkTensor* a, const hipdnnSdkTensor* b);
/* Whether virtual tensor t crosses the boundary of the node set `in` (written on one side,
 * read on the other). */
bool stg_crosses(const parts* s, const bool* in, int32_t t);
/* A copy of the graph with the nodes of `in` only, every virtual tensor crossing into or
 * out of them made real and packed; NULL when out of memory. */
hipdnnSdkGraph* stg_subgraph(const parts* s, const bool* in);

/* ---- groups (staged_groups.c) ------------------------------------------------------------ */

/* Puts every node in a group; false with the reason. */
bool stg_form_groups(parts* s);
/* The stage(s) of group grp into st (room for two); how many, 0 with the reason.  A split
 * reduction's parts need *parts_bytes of workspace under uid parts_uid. */
int stg_compile_group(parts* s, int grp, hipe_stage* st, size_t* parts_bytes, int64_t parts_uid);

#endif /* HIPDNN_HIP_STAGED_GRAPH_H */
