/* The table of operations: for each op its descriptor type, its ports (in node order)
 * and its parameters with C API attribute, type, range and default.  The backend's
 * descriptors, validation and FlatBuffers codec, the Python layer (through
 * hipdnnGetOpInfo_ext) and the plugins all read this table; graph.fbs holds one table
 * per op whose fields are the ports then the parameters, in this order. */
#include <math.h>
#include <stddef.h>

#include "hipdnn/hipdnn_sdk.h"

#define IN(n, a) {n, a, 0, NULL, NULL}
#define OPT(n, a) {n, a, 1, NULL, NULL}
/* Ports cuDNN frontend names otherwise: its keyword kw (NULL: n) and the suffix sfx of
 * the tensor it gives a node left unnamed, "<node>::<sfx>" (NULL: none; pygraph then
 * names an output "<node>::<KEYWORD>"). */
#define IN_FE(n, a, kw, sfx) {n, a, 0, kw, sfx}
#define OPT_FE(n, a, kw, sfx) {n, a, 1, kw, sfx}
#define SPATIAL(n, a, lo, def)                                                                 \
    {n, a, HIPDNN_TYPE_INT64, HIPDNN_OP_ATTR_INT64_LIST, HIPDNN_MAX_SPATIAL, lo, INT64_C(1) << 40, def}
#define CLIP(n, a, def) {n, a, HIPDNN_TYPE_DOUBLE, HIPDNN_OP_ATTR_DOUBLE, 1, 0, 0, def}

/* The convolution parameters, shared by conv_fprop, conv_dgrad and conv_wgrad. */
#define CONV_PARAMS                                                                            \
    {SPATIAL("pre_padding", HIPDNN_ATTR_CONVOLUTION_PRE_PADDINGS, 0, 0),                       \
     SPATIAL("post_padding", HIPDNN_ATTR_CONVOLUTION_POST_PADDINGS, 0, 0),                     \
     SPATIAL("stride", HIPDNN_ATTR_CONVOLUTION_FILTER_STRIDES, 1, 1),                          \
     SPATIAL("dilation", HIPDNN_ATTR_CONVOLUTION_DILATIONS, 1, 1),                             \
     {"conv_mode", HIPDNN_ATTR_CONVOLUTION_CONV_MODE, HIPDNN_TYPE_CONVOLUTION_MODE_EXT,        \
      HIPDNN_OP_ATTR_ENUM, 1, 0, 1, HIPDNN_CROSS_CORRELATION}}

/* The resample parameters, shared by resample_fwd and resample_bwd: mode and padding
 * mode required (default -1), window required (its default 0 stands for "not set"). */
#define RESAMPLE_PARAMS                                                                        \
    {{"mode", HIPDNN_ATTR_RESAMPLE_MODE, HIPDNN_TYPE_RESAMPLE_MODE_EXT, HIPDNN_OP_ATTR_ENUM, 1, \
      0, 4, -1},                                                                               \
     {"padding_mode", HIPDNN_ATTR_RESAMPLE_PADDING_MODE, HIPDNN_TYPE_PADDING_MODE_EXT,         \
      HIPDNN_OP_ATTR_ENUM, 1, 0, 2, -1},                                                       \
     SPATIAL("window", HIPDNN_ATTR_RESAMPLE_WINDOW_DIMS, 1, 0),                                \
     SPATIAL("stride", HIPDNN_ATTR_RESAMPLE_STRIDES, 1, 1),                                    \
     SPATIAL("pre_padding", HIPDNN_ATTR_RESAMPLE_PRE_PADDINGS, 0, 0),                          \
     SPATIAL("post_padding", HIPDNN_ATTR_RESAMPLE_POST_PADDINGS, 0, 0)}
/* The attention mask parameters, shared by sdpa_fwd and sdpa_bwd. */
#define SDPA_PARAMS                                                                            \
    {{"diagonal_alignment", HIPDNN_ATTR_OPERATION_SDPA_DIAGONAL_ALIGNMENT_EXT,                 \
      HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT, HIPDNN_OP_ATTR_ENUM, 1, 0, 1,                        \
      HIPDNN_DIAGONAL_ALIGNMENT_TOP_LEFT},                                                     \
     {"left_bound", HIPDNN_ATTR_OPERATION_SDPA_LEFT_BOUND_EXT, HIPDNN_TYPE_INT64,              \
      HIPDNN_OP_ATTR_INT64, 1, 0, INT64_C(1) << 40, 0},                                        \
     {"right_bound", HIPDNN_ATTR_OPERATION_SDPA_RIGHT_BOUND_EXT, HIPDNN_TYPE_INT64,            \
      HIPDNN_OP_ATTR_INT64, 1, -1, INT64_C(1) << 40, -1},                                      \
     {"use_padding_mask", HIPDNN_ATTR_OPERATION_SDPA_USE_PADDING_MASK_EXT, HIPDNN_TYPE_BOOLEAN, \
      HIPDNN_OP_ATTR_BOOLEAN, 1, 0, 1, 0},                                                     \
     {"use_alibi_mask", HIPDNN_ATTR_OPERATION_SDPA_USE_ALIBI_MASK_EXT, HIPDNN_TYPE_BOOLEAN,     \
      HIPDNN_OP_ATTR_BOOLEAN, 1, 0, 1, 0},                                                     \
     {"max_seq_len_kv", HIPDNN_ATTR_OPERATION_SDPA_MAX_SEQ_LEN_KV_EXT, HIPDNN_TYPE_INT64,       \
      HIPDNN_OP_ATTR_INT64, 1, 0, INT64_C(1) << 40, 0},                                        \
     {"dropout_probability", HIPDNN_ATTR_OPERATION_SDPA_DROPOUT_PROBABILITY_EXT,               \
      HIPDNN_TYPE_DOUBLE, HIPDNN_OP_ATTR_DOUBLE, 1, 0, 0, 0}}

static const hipdnnSdkOpInfo k_ops[] = {
    {
        .kind = HIPDNN_OP_CONV_FPROP,
        .name = "conv_fprop",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
        .descriptor_name = "OPERATION_CONVOLUTION_FORWARD",
        .num_inputs = 2,
        .num_outputs = 1,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, "image", NULL),
                   IN_FE("w", HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, "weight", NULL)},
        .outputs = {IN_FE("y", HIPDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, NULL, "Y")},
        .num_attrs = 5,
        .attrs = CONV_PARAMS,
    },
    {
        .kind = HIPDNN_OP_MATMUL,
        .name = "matmul",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
        .descriptor_name = "OPERATION_MATMUL",
        .num_inputs = 2,
        .num_outputs = 1,
        .inputs = {IN_FE("a", HIPDNN_ATTR_OPERATION_MATMUL_ADESC, "A", "A"),
                   IN_FE("b", HIPDNN_ATTR_OPERATION_MATMUL_BDESC, "B", "B")},
        .outputs = {IN_FE("c", HIPDNN_ATTR_OPERATION_MATMUL_CDESC, "C", "C")},
        .num_attrs = 0,
    },
    {
        .kind = HIPDNN_OP_POINTWISE,
        .name = "pointwise",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
        .descriptor_name = "OPERATION_POINTWISE",
        /* Which ports a mode uses: hipdnnSdkPointwisePortsOf (cuDNN's backend layout). */
        .num_inputs = 4,
        .num_outputs = 2,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_POINTWISE_XDESC, "a", "IN_0"),
                   OPT_FE("b", HIPDNN_ATTR_OPERATION_POINTWISE_BDESC, NULL, "IN_1"),
                   OPT("dy", HIPDNN_ATTR_OPERATION_POINTWISE_DYDESC),
                   OPT("t", HIPDNN_ATTR_OPERATION_POINTWISE_TDESC)},
        .outputs = {OPT_FE("y", HIPDNN_ATTR_OPERATION_POINTWISE_YDESC, NULL, "OUT_0"),
                    OPT("dx", HIPDNN_ATTR_OPERATION_POINTWISE_DXDESC)},
        .num_attrs = 8,
        /* mode: required (the default -1 is no mode) */
        .attrs = {{"mode", HIPDNN_ATTR_POINTWISE_MODE, HIPDNN_TYPE_POINTWISE_MODE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 1000, -1},
                  CLIP("relu_lower_clip", HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, 0),
                  CLIP("relu_upper_clip", HIPDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, INFINITY),
                  CLIP("relu_lower_clip_slope", HIPDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, 0),
                  CLIP("elu_alpha", HIPDNN_ATTR_POINTWISE_ELU_ALPHA, 1),
                  CLIP("softplus_beta", HIPDNN_ATTR_POINTWISE_SOFTPLUS_BETA, 1),
                  CLIP("swish_beta", HIPDNN_ATTR_POINTWISE_SWISH_BETA, 1),
                  {"axis", HIPDNN_ATTR_POINTWISE_AXIS, HIPDNN_TYPE_INT64, HIPDNN_OP_ATTR_INT64, 1,
                   0, HIPDNN_MAX_DIMS - 1, 0}},
    },
    {
        .kind = HIPDNN_OP_BATCHNORM_INFERENCE,
        .name = "batchnorm_inference",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT,
        .descriptor_name = "OPERATION_BATCHNORM_INFERENCE_EXT",
        .num_inputs = 5,
        .num_outputs = 1,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_BN_INFERENCE_X_EXT, "input", NULL),
                   IN("mean", HIPDNN_ATTR_OPERATION_BN_INFERENCE_MEAN_EXT),
                   IN("inv_variance", HIPDNN_ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE_EXT),
                   IN("scale", HIPDNN_ATTR_OPERATION_BN_INFERENCE_SCALE_EXT),
                   IN("bias", HIPDNN_ATTR_OPERATION_BN_INFERENCE_BIAS_EXT)},
        .outputs = {IN_FE("y", HIPDNN_ATTR_OPERATION_BN_INFERENCE_Y_EXT, NULL, "Y")},
        .num_attrs = 0,
    },
    {
        .kind = HIPDNN_OP_REDUCTION,
        .name = "reduction",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
        .descriptor_name = "OPERATION_REDUCTION",
        .num_inputs = 1,
        .num_outputs = 1,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_REDUCTION_XDESC, "input", NULL)},
        .outputs = {IN_FE("y", HIPDNN_ATTR_OPERATION_REDUCTION_YDESC, NULL, "Y")},
        .num_attrs = 1,
        /* mode: required (the default -1 is no mode) */
        .attrs = {{"mode", HIPDNN_ATTR_REDUCTION_OPERATOR, HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 8, -1}},
    },
    {
        .kind = HIPDNN_OP_NORM_FORWARD,
        .name = "norm_forward",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR,
        .descriptor_name = "OPERATION_NORM_FORWARD",
        .num_inputs = 7,
        .num_outputs = 5,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_NORM_FWD_XDESC, "input", NULL),
                   IN("scale", HIPDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC),
                   OPT("bias", HIPDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC),
                   IN("epsilon", HIPDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC),
                   OPT_FE("exp_avg_factor", HIPDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC,
                          "momentum", NULL),
                   OPT_FE("input_running_mean",
                          HIPDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC,
                          "in_running_mean", NULL),
                   OPT_FE("input_running_var",
                          HIPDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC,
                          "in_running_var", NULL)},
        .outputs = {IN_FE("y", HIPDNN_ATTR_OPERATION_NORM_FWD_YDESC, NULL, "Y"),
                    OPT_FE("mean", HIPDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, NULL, "MEAN"),
                    OPT_FE("inv_variance", HIPDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, NULL,
                           "INV_VARIANCE"),
                    OPT_FE("output_running_mean",
                           HIPDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC,
                           "next_running_mean", "NEXT_RUNNING_MEAN"),
                    OPT_FE("output_running_var",
                           HIPDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC,
                           "next_running_var", "NEXT_RUNNING_VAR")},
        .num_attrs = 3,
        /* mode and phase: required */
        .attrs = {{"mode", HIPDNN_ATTR_OPERATION_NORM_FWD_MODE, HIPDNN_TYPE_NORM_MODE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 5, -1},
                  {"phase", HIPDNN_ATTR_OPERATION_NORM_FWD_PHASE, HIPDNN_TYPE_NORM_FWD_PHASE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 1, -1},
                  {"zero_centered_gamma", HIPDNN_ATTR_OPERATION_NORM_FWD_ZERO_CENTERED_GAMMA_EXT,
                   HIPDNN_TYPE_BOOLEAN, HIPDNN_OP_ATTR_BOOLEAN, 1, 0, 1, 0}},
    },
    {
        .kind = HIPDNN_OP_CONV_DGRAD,
        .name = "conv_dgrad",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
        .descriptor_name = "OPERATION_CONVOLUTION_BACKWARD_DATA",
        .num_inputs = 2,
        .num_outputs = 1,
        .inputs = {IN_FE("dy", HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, "loss", NULL),
                   IN_FE("w", HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, "filter", NULL)},
        .outputs = {IN_FE("dx", HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, NULL, "DX")},
        .num_attrs = 5,
        .attrs = CONV_PARAMS,
    },
    {
        .kind = HIPDNN_OP_CONV_WGRAD,
        .name = "conv_wgrad",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
        .descriptor_name = "OPERATION_CONVOLUTION_BACKWARD_FILTER",
        .num_inputs = 2,
        .num_outputs = 1,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, "image", NULL),
                   IN_FE("dy", HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, "loss", NULL)},
        .outputs = {IN_FE("dw", HIPDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, NULL, "DW")},
        .num_attrs = 5,
        .attrs = CONV_PARAMS,
    },
    {
        .kind = HIPDNN_OP_SLICE,
        .name = "slice",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_SLICE_DESCRIPTOR_EXT,
        .descriptor_name = "OPERATION_SLICE_EXT",
        .num_inputs = 1,
        .num_outputs = 1,
        .inputs = {IN("x", HIPDNN_ATTR_OPERATION_SLICE_X_EXT)},
        .outputs = {IN("y", HIPDNN_ATTR_OPERATION_SLICE_Y_EXT)},
        .num_attrs = 3,
        /* limit's default 0 stands for "not set" (a limit is at least 1) */
        .attrs = {{"start", HIPDNN_ATTR_OPERATION_SLICE_START_EXT, HIPDNN_TYPE_INT64,
                   HIPDNN_OP_ATTR_INT64_LIST, HIPDNN_MAX_DIMS, 0, INT64_C(1) << 40, 0},
                  {"limit", HIPDNN_ATTR_OPERATION_SLICE_LIMIT_EXT, HIPDNN_TYPE_INT64,
                   HIPDNN_OP_ATTR_INT64_LIST, HIPDNN_MAX_DIMS, 1, INT64_C(1) << 40, 0},
                  {"step", HIPDNN_ATTR_OPERATION_SLICE_STEP_EXT, HIPDNN_TYPE_INT64,
                   HIPDNN_OP_ATTR_INT64_LIST, HIPDNN_MAX_DIMS, 1, INT64_C(1) << 40, 1}},
    },
    {
        .kind = HIPDNN_OP_CONCATENATE,
        .name = "concatenate",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR,
        .descriptor_name = "OPERATION_CONCAT",
        .num_inputs = 8,
        .num_outputs = 1,
        .inputs = {IN("x0", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_0_EXT),
                   IN("x1", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_1_EXT),
                   OPT("x2", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_2_EXT),
                   OPT("x3", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_3_EXT),
                   OPT("x4", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_4_EXT),
                   OPT("x5", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_5_EXT),
                   OPT("x6", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_6_EXT),
                   OPT("x7", HIPDNN_ATTR_OPERATION_CONCAT_INPUT_7_EXT)},
        .outputs = {IN("y", HIPDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC)},
        .num_attrs = 2,
        .attrs = {{"axis", HIPDNN_ATTR_OPERATION_CONCAT_AXIS, HIPDNN_TYPE_INT64,
                   HIPDNN_OP_ATTR_INT64, 1, 0, HIPDNN_MAX_DIMS - 1, 0},
                  {"in_place_index", HIPDNN_ATTR_OPERATION_CONCAT_INPLACE_INDEX,
                   HIPDNN_TYPE_INT64, HIPDNN_OP_ATTR_INT64, 1, -1, 7, -1}},
    },
    {
        .kind = HIPDNN_OP_NORM_BACKWARD,
        .name = "norm_backward",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR,
        .descriptor_name = "OPERATION_NORM_BACKWARD",
        .num_inputs = 5,
        .num_outputs = 3,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_NORM_BWD_XDESC, "input", NULL),
                   IN_FE("dy", HIPDNN_ATTR_OPERATION_NORM_BWD_DYDESC, "grad", NULL),
                   IN("scale", HIPDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC),
                   OPT("mean", HIPDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC),
                   IN("inv_variance", HIPDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC)},
        .outputs = {IN_FE("dx", HIPDNN_ATTR_OPERATION_NORM_BWD_DXDESC, NULL, "DX"),
                    OPT_FE("dscale", HIPDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, NULL, "DSCALE"),
                    OPT_FE("dbias", HIPDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, NULL, "DBIAS")},
        .num_attrs = 2,
        /* mode: required */
        .attrs = {{"mode", HIPDNN_ATTR_OPERATION_NORM_BWD_MODE, HIPDNN_TYPE_NORM_MODE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 5, -1},
                  {"zero_centered_gamma", HIPDNN_ATTR_OPERATION_NORM_BWD_ZERO_CENTERED_GAMMA_EXT,
                   HIPDNN_TYPE_BOOLEAN, HIPDNN_OP_ATTR_BOOLEAN, 1, 0, 1, 0}},
    },
    {
        .kind = HIPDNN_OP_GENSTATS,
        .name = "genstats",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR,
        .descriptor_name = "OPERATION_GEN_STATS",
        .num_inputs = 1,
        .num_outputs = 2,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_GENSTATS_XDESC, "input", NULL)},
        .outputs = {IN_FE("sum", HIPDNN_ATTR_OPERATION_GENSTATS_SUMDESC, NULL, "SUM"),
                    IN_FE("sq_sum", HIPDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, NULL, "SQ_SUM")},
        .num_attrs = 1,
        .attrs = {{"mode", HIPDNN_ATTR_OPERATION_GENSTATS_MODE, HIPDNN_TYPE_GENSTATS_MODE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 0, HIPDNN_GENSTATS_SUM_SQSUM}},
    },
    {
        .kind = HIPDNN_OP_RESAMPLE_FWD,
        .name = "resample_fwd",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR,
        .descriptor_name = "OPERATION_RESAMPLE_FWD",
        .num_inputs = 1,
        .num_outputs = 2,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, "input", NULL)},
        .outputs = {IN_FE("y", HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, NULL, "Y"),
                    OPT_FE("idx", HIPDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC, "index", "Index")},
        .num_attrs = 6,
        .attrs = RESAMPLE_PARAMS,
    },
    {
        .kind = HIPDNN_OP_RESAMPLE_BWD,
        .name = "resample_bwd",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR,
        .descriptor_name = "OPERATION_RESAMPLE_BWD",
        .num_inputs = 4,
        .num_outputs = 1,
        .inputs = {IN_FE("dy", HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_DYDESC, "grad", NULL),
                   OPT_FE("x", HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_XDESC, "input", NULL),
                   OPT_FE("y", HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_YDESC, "output", NULL),
                   OPT_FE("idx", HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_IDXDESC, "index", NULL)},
        .outputs = {IN_FE("dx", HIPDNN_ATTR_OPERATION_RESAMPLE_BWD_DXDESC, NULL, "DX")},
        .num_attrs = 6,
        .attrs = RESAMPLE_PARAMS,
    },
    {
        .kind = HIPDNN_OP_RESHAPE,
        .name = "reshape",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR,
        .descriptor_name = "OPERATION_RESHAPE",
        .num_inputs = 1,
        .num_outputs = 1,
        .inputs = {IN_FE("x", HIPDNN_ATTR_OPERATION_RESHAPE_XDESC, "input", NULL)},
        .outputs = {IN_FE("y", HIPDNN_ATTR_OPERATION_RESHAPE_YDESC, NULL, "Y")},
        .num_attrs = 1,
        .attrs = {{"mode", HIPDNN_ATTR_OPERATION_RESHAPE_MODE_EXT, HIPDNN_TYPE_RESHAPE_MODE_EXT,
                   HIPDNN_OP_ATTR_ENUM, 1, 0, 1, HIPDNN_RESHAPE_VIEW_ONLY}},
    },
    {
        .kind = HIPDNN_OP_SDPA_FWD,
        .name = "sdpa",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR_EXT,
        .descriptor_name = "OPERATION_SDPA_FWD_EXT",
        .num_inputs = 11,
        .num_outputs = 3,
        .inputs = {IN("q", HIPDNN_ATTR_OPERATION_SDPA_FWD_Q_EXT),
                   IN("k", HIPDNN_ATTR_OPERATION_SDPA_FWD_K_EXT),
                   IN("v", HIPDNN_ATTR_OPERATION_SDPA_FWD_V_EXT),
                   OPT("attn_scale", HIPDNN_ATTR_OPERATION_SDPA_FWD_ATTN_SCALE_EXT),
                   OPT("bias", HIPDNN_ATTR_OPERATION_SDPA_FWD_BIAS_EXT),
                   OPT("seq_len_q", HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_Q_EXT),
                   OPT("seq_len_kv", HIPDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KV_EXT),
                   OPT("page_table_k", HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_K_EXT),
                   OPT("page_table_v", HIPDNN_ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_V_EXT),
                   OPT("seed", HIPDNN_ATTR_OPERATION_SDPA_FWD_SEED_EXT),
                   OPT("offset", HIPDNN_ATTR_OPERATION_SDPA_FWD_OFFSET_EXT)},
        .outputs = {IN_FE("o", HIPDNN_ATTR_OPERATION_SDPA_FWD_O_EXT, NULL, "O"),
                    OPT_FE("stats", HIPDNN_ATTR_OPERATION_SDPA_FWD_STATS_EXT, NULL, "Stats"),
                    OPT("rng_dump", HIPDNN_ATTR_OPERATION_SDPA_FWD_RNG_DUMP_EXT)},
        .num_attrs = 7,
        .attrs = SDPA_PARAMS,
    },
    {
        .kind = HIPDNN_OP_SDPA_BWD,
        .name = "sdpa_backward",
        .descriptor_type = HIPDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT,
        .descriptor_name = "OPERATION_SDPA_BWD_EXT",
        .num_inputs = 12,
        .num_outputs = 3,
        .inputs = {IN("q", HIPDNN_ATTR_OPERATION_SDPA_BWD_Q_EXT),
                   IN("k", HIPDNN_ATTR_OPERATION_SDPA_BWD_K_EXT),
                   IN("v", HIPDNN_ATTR_OPERATION_SDPA_BWD_V_EXT),
                   IN("o", HIPDNN_ATTR_OPERATION_SDPA_BWD_O_EXT),
                   IN_FE("d_o", HIPDNN_ATTR_OPERATION_SDPA_BWD_DO_EXT, "dO", NULL),
                   IN("stats", HIPDNN_ATTR_OPERATION_SDPA_BWD_STATS_EXT),
                   OPT("attn_scale", HIPDNN_ATTR_OPERATION_SDPA_BWD_ATTN_SCALE_EXT),
                   OPT("bias", HIPDNN_ATTR_OPERATION_SDPA_BWD_BIAS_EXT),
                   OPT("seq_len_q", HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_Q_EXT),
                   OPT("seq_len_kv", HIPDNN_ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KV_EXT),
                   OPT("seed", HIPDNN_ATTR_OPERATION_SDPA_BWD_SEED_EXT),
                   OPT("offset", HIPDNN_ATTR_OPERATION_SDPA_BWD_OFFSET_EXT)},
        .outputs = {IN_FE("dq", HIPDNN_ATTR_OPERATION_SDPA_BWD_DQ_EXT, "dQ", "dQ"),
                    IN_FE("dk", HIPDNN_ATTR_OPERATION_SDPA_BWD_DK_EXT, "dK", "dK"),
                    IN_FE("dv", HIPDNN_ATTR_OPERATION_SDPA_BWD_DV_EXT, "dV", "dV")},
        .num_attrs = 7,
        .attrs = SDPA_PARAMS,
    },
};

#define NUM_OPS ((int32_t)(sizeof(k_ops) / sizeof(k_ops[0])))

const hipdnnSdkOpInfo* hipdnnSdkOpTable(int32_t* count) {
    *count = NUM_OPS;
    return k_ops;
}

const hipdnnSdkOpInfo* hipdnnSdkOpInfoGet(hipdnnOpKind_t kind) {
    /* Kinds ascend in table order and are graph.fbs's union tags; a kind may be skipped
     * (reserved for an op that is not here yet), so look it up. */
    for (int32_t i = 0; i < NUM_OPS && (int32_t)k_ops[i].kind <= (int32_t)kind; ++i)
        if ((int32_t)k_ops[i].kind == (int32_t)kind) return &k_ops[i];
    return NULL;
}

const hipdnnSdkOpInfo* hipdnnSdkOpInfoForDescriptor(hipdnnBackendDescriptorType_t type) {
    for (int32_t i = 0; i < NUM_OPS; ++i)
        if (k_ops[i].descriptor_type == type) return &k_ops[i];
    return NULL;
}

/* Every mode of hipdnnPointwiseMode_t but ATAN2 (which cuDNN frontend does not expose
 * either): its name (cuDNN frontend's method), its operand count and what kind it is. */
enum { PW_FWD = 0, PW_BWD = 1, PW_BOOL = 2 };
static const struct {
    hipdnnPointwiseMode_t mode;
    const char* name;
    int arity;
    int kind;
} k_pointwise[] = {
    {HIPDNN_POINTWISE_ADD, "add", 2, PW_FWD},
    {HIPDNN_POINTWISE_MUL, "mul", 2, PW_FWD},
    {HIPDNN_POINTWISE_MIN, "min", 2, PW_FWD},
    {HIPDNN_POINTWISE_MAX, "max", 2, PW_FWD},
    {HIPDNN_POINTWISE_SQRT, "sqrt", 1, PW_FWD},
    {HIPDNN_POINTWISE_ADD_SQUARE, "add_square", 2, PW_FWD},
    {HIPDNN_POINTWISE_DIV, "div", 2, PW_FWD},
    {HIPDNN_POINTWISE_MOD, "mod", 2, PW_FWD},
    {HIPDNN_POINTWISE_POW, "pow", 2, PW_FWD},
    {HIPDNN_POINTWISE_SUB, "sub", 2, PW_FWD},
    {HIPDNN_POINTWISE_ABS, "abs", 1, PW_FWD},
    {HIPDNN_POINTWISE_CEIL, "ceil", 1, PW_FWD},
    {HIPDNN_POINTWISE_COS, "cos", 1, PW_FWD},
    {HIPDNN_POINTWISE_EXP, "exp", 1, PW_FWD},
    {HIPDNN_POINTWISE_FLOOR, "floor", 1, PW_FWD},
    {HIPDNN_POINTWISE_LOG, "log", 1, PW_FWD},
    {HIPDNN_POINTWISE_NEG, "neg", 1, PW_FWD},
    {HIPDNN_POINTWISE_RSQRT, "rsqrt", 1, PW_FWD},
    {HIPDNN_POINTWISE_SIN, "sin", 1, PW_FWD},
    {HIPDNN_POINTWISE_TAN, "tan", 1, PW_FWD},
    {HIPDNN_POINTWISE_ERF, "erf", 1, PW_FWD},
    {HIPDNN_POINTWISE_IDENTITY, "identity", 1, PW_FWD},
    {HIPDNN_POINTWISE_RECIPROCAL, "reciprocal", 1, PW_FWD},
    {HIPDNN_POINTWISE_RELU_FWD, "relu", 1, PW_FWD},
    {HIPDNN_POINTWISE_TANH_FWD, "tanh", 1, PW_FWD},
    {HIPDNN_POINTWISE_SIGMOID_FWD, "sigmoid", 1, PW_FWD},
    {HIPDNN_POINTWISE_ELU_FWD, "elu", 1, PW_FWD},
    {HIPDNN_POINTWISE_GELU_FWD, "gelu", 1, PW_FWD},
    {HIPDNN_POINTWISE_SOFTPLUS_FWD, "softplus", 1, PW_FWD},
    {HIPDNN_POINTWISE_SWISH_FWD, "swish", 1, PW_FWD},
    {HIPDNN_POINTWISE_GELU_APPROX_TANH_FWD, "gelu_approx_tanh", 1, PW_FWD},
    {HIPDNN_POINTWISE_RELU_BWD, "relu_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_TANH_BWD, "tanh_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_SIGMOID_BWD, "sigmoid_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_ELU_BWD, "elu_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_GELU_BWD, "gelu_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_SOFTPLUS_BWD, "softplus_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_SWISH_BWD, "swish_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_GELU_APPROX_TANH_BWD, "gelu_approx_tanh_backward", 2, PW_BWD},
    {HIPDNN_POINTWISE_CMP_EQ, "cmp_eq", 2, PW_BOOL},
    {HIPDNN_POINTWISE_CMP_NEQ, "cmp_neq", 2, PW_BOOL},
    {HIPDNN_POINTWISE_CMP_GT, "cmp_gt", 2, PW_BOOL},
    {HIPDNN_POINTWISE_CMP_GE, "cmp_ge", 2, PW_BOOL},
    {HIPDNN_POINTWISE_CMP_LT, "cmp_lt", 2, PW_BOOL},
    {HIPDNN_POINTWISE_CMP_LE, "cmp_le", 2, PW_BOOL},
    {HIPDNN_POINTWISE_LOGICAL_AND, "logical_and", 2, PW_BOOL},
    {HIPDNN_POINTWISE_LOGICAL_OR, "logical_or", 2, PW_BOOL},
    {HIPDNN_POINTWISE_LOGICAL_NOT, "logical_not", 1, PW_BOOL},
    {HIPDNN_POINTWISE_GEN_INDEX, "gen_index", 1, PW_FWD},
    {HIPDNN_POINTWISE_BINARY_SELECT, "binary_select", 3, PW_FWD},
};

#define NUM_PW_MODES (sizeof(k_pointwise) / sizeof(k_pointwise[0]))

static int pw_find(hipdnnPointwiseMode_t mode) {
    for (size_t i = 0; i < NUM_PW_MODES; ++i)
        if (k_pointwise[i].mode == mode) return (int)i;
    return -1;
}

const char* hipdnnSdkPointwiseModeName(hipdnnPointwiseMode_t mode) {
    int i = pw_find(mode);
    return i >= 0 ? k_pointwise[i].name : NULL;
}

int hipdnnSdkPointwiseArity(hipdnnPointwiseMode_t mode) {
    int i = pw_find(mode);
    return i >= 0 ? k_pointwise[i].arity : 0;
}

bool hipdnnSdkPointwiseIsBackward(hipdnnPointwiseMode_t mode) {
    int i = pw_find(mode);
    return i >= 0 && k_pointwise[i].kind == PW_BWD;
}

bool hipdnnSdkPointwiseIsLogical(hipdnnPointwiseMode_t mode) {
    int i = pw_find(mode);
    return i >= 0 && k_pointwise[i].kind == PW_BOOL;
}

bool hipdnnSdkPointwisePortsOf(hipdnnPointwiseMode_t mode, hipdnnSdkPointwisePorts* ports) {
    int i = pw_find(mode);
    ports->arity = i >= 0 ? k_pointwise[i].arity : 0;
    if (i >= 0 && k_pointwise[i].kind == PW_BWD) { /* cuDNN: x and dy in, dx out */
        ports->inputs[0] = HIPDNN_PW_X;
        ports->inputs[1] = HIPDNN_PW_DY;
        ports->inputs[2] = -1;
        ports->output = HIPDNN_PW_DX;
    } else {
        ports->inputs[0] = HIPDNN_PW_X;
        ports->inputs[1] = ports->arity >= 2 ? HIPDNN_PW_B : -1;
        ports->inputs[2] = ports->arity >= 3 ? HIPDNN_PW_T : -1;
        ports->output = HIPDNN_PW_Y;
    }
    return i >= 0;
}

int64_t hipdnnSdkPointwiseOperand(const hipdnnSdkNode* n, int k) {
    hipdnnSdkPointwisePorts p;
    if (!hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &p) || k < 0 || k >= p.arity)
        return HIPDNN_NO_TENSOR;
    return n->inputs[p.inputs[k]];
}

int64_t hipdnnSdkPointwiseOutput(const hipdnnSdkNode* n) {
    hipdnnSdkPointwisePorts p;
    if (!hipdnnSdkPointwisePortsOf(hipdnnSdkNodeMode(n), &p)) return HIPDNN_NO_TENSOR;
    return n->outputs[p.output];
}

bool hipdnnSdkPointwiseCheckPorts(hipdnnPointwiseMode_t mode, unsigned in_set, unsigned out_set,
                                  const char* label, char* err, size_t len) {
    hipdnnSdkPointwisePorts p;
    const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(HIPDNN_OP_POINTWISE);
    if (!hipdnnSdkPointwisePortsOf(mode, &p)) {
        hipdnnSdkFormat(err, len, "%s: pointwise mode %d is not set or unknown", label, (int)mode);
        return false;
    }
    unsigned want_in = 0;
    for (int k = 0; k < p.arity; ++k) want_in |= 1u << p.inputs[k];
    const char* mname = hipdnnSdkPointwiseModeName(mode);
    for (int q = 0; q < info->num_inputs; ++q) {
        bool want = (want_in >> q) & 1u, set = (in_set >> q) & 1u;
        if (want && !set) {
            hipdnnSdkFormat(err, len, "%s: input '%s' is not set (%s takes %d input%s)", label,
                            info->inputs[q].name, mname, p.arity, p.arity > 1 ? "s" : "");
            return false;
        }
        if (set && !want) {
            hipdnnSdkFormat(err, len, "%s: input '%s' is set but %s does not use it", label,
                            info->inputs[q].name, mname);
            return false;
        }
    }
    for (int q = 0; q < info->num_outputs; ++q) {
        bool want = q == p.output, set = (out_set >> q) & 1u;
        if (want && !set) {
            hipdnnSdkFormat(err, len, "%s: output '%s' is not set", label, info->outputs[q].name);
            return false;
        }
        if (set && !want) {
            hipdnnSdkFormat(err, len, "%s: output '%s' is set but %s writes '%s'", label,
                            info->outputs[q].name, mname, info->outputs[p.output].name);
            return false;
        }
    }
    return true;
}

/* graph.fbs numbered each op's fields inputs, outputs, parameters when format 2 came
 * out; the schema is append-only, so ports added since follow the parameters, inputs
 * then outputs: pointwise's dy and t, then dx; sdpa's page tables, seed and offset, then
 * rng_dump; sdpa_backward's seed and offset.  (Attention's parameters since format 2,
 * max_seq_len_kv and dropout_probability, came before any of its bytes with late ports
 * were released: they sit with the parameters.) */
static void format2_ports(const hipdnnSdkOpInfo* info, int* inputs, int* outputs) {
    const bool pw = info->kind == HIPDNN_OP_POINTWISE;
    const bool fwd = info->kind == HIPDNN_OP_SDPA_FWD, bwd = info->kind == HIPDNN_OP_SDPA_BWD;
    *inputs = pw ? 2 : fwd ? 7 : bwd ? 10 : info->num_inputs;
    *outputs = pw ? 1 : fwd ? 2 : info->num_outputs;
}

int hipdnnSdkOpFieldIndex(const hipdnnSdkOpInfo* info, hipdnnSdkFieldKind what, int index) {
    int ni, no;
    format2_ports(info, &ni, &no);
    int params = ni + no, late = params + info->num_attrs;
    switch (what) {
    case HIPDNN_SDK_FIELD_INPUT: return index < ni ? index : late + (index - ni);
    case HIPDNN_SDK_FIELD_OUTPUT:
        return index < no ? ni + index : late + (info->num_inputs - ni) + (index - no);
    default: return params + index;
    }
}

bool hipdnnSdkEnumValid(hipdnnBackendAttributeType_t type, int64_t v) {
    switch (type) {
    case HIPDNN_TYPE_DATA_TYPE:
        return v == HIPDNN_DATA_NOT_SET || hipdnnSdkDataTypeSize((hipdnnDataType_t)v) > 0;
    case HIPDNN_TYPE_POINTWISE_MODE_EXT:
        return v >= 0 && v <= 1000 && hipdnnSdkPointwiseModeName((hipdnnPointwiseMode_t)v);
    case HIPDNN_TYPE_CONVOLUTION_MODE_EXT:
        return v == HIPDNN_CONVOLUTION || v == HIPDNN_CROSS_CORRELATION;
    case HIPDNN_TYPE_REDUCTION_OPERATOR_TYPE_EXT:
        return v >= HIPDNN_REDUCE_TENSOR_ADD && v <= HIPDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    case HIPDNN_TYPE_NORM_MODE_EXT: return v >= HIPDNN_LAYER_NORM && v <= HIPDNN_ADA_LAYER_NORM;
    case HIPDNN_TYPE_NORM_FWD_PHASE_EXT:
        return v == HIPDNN_NORM_FWD_INFERENCE || v == HIPDNN_NORM_FWD_TRAINING;
    case HIPDNN_TYPE_GENSTATS_MODE_EXT: return v == HIPDNN_GENSTATS_SUM_SQSUM;
    case HIPDNN_TYPE_RESAMPLE_MODE_EXT:
        return v >= HIPDNN_RESAMPLE_NEAREST && v <= HIPDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
    case HIPDNN_TYPE_PADDING_MODE_EXT: return v >= HIPDNN_ZERO_PAD && v <= HIPDNN_EDGE_VAL_PAD;
    case HIPDNN_TYPE_RESHAPE_MODE_EXT:
        return v == HIPDNN_RESHAPE_VIEW_ONLY || v == HIPDNN_RESHAPE_LOGICAL;
    case HIPDNN_TYPE_DIAGONAL_ALIGNMENT_EXT:
        return v == HIPDNN_DIAGONAL_ALIGNMENT_TOP_LEFT ||
               v == HIPDNN_DIAGONAL_ALIGNMENT_BOTTOM_RIGHT;
    case HIPDNN_TYPE_HEUR_MODE:
        return v == HIPDNN_HEUR_MODE_A || v == HIPDNN_HEUR_MODE_B ||
               v == HIPDNN_HEUR_MODE_FALLBACK;
    default: return false;
    }
}

const char* hipdnnSdkReductionModeName(int64_t mode) {
    static const char* const names[] = {"add",  "mul",   "min",   "max",         "amax",
                                        "avg",  "norm1", "norm2", "mul_no_zeros"};
    return mode >= 0 && mode <= 8 ? names[mode] : NULL;
}

const char* hipdnnSdkNormModeName(int64_t mode) {
    static const char* const names[] = {"layernorm", "instancenorm", "batchnorm",
                                        "groupnorm", "rmsnorm",      "adalayernorm"};
    return mode >= 0 && mode <= 5 ? names[mode] : NULL;
}

const char* hipdnnSdkNormBackwardName(int64_t mode) {
    static const char* const names[] = {"layernorm_backward", "instancenorm_backward",
                                        "batchnorm_backward", "groupnorm_backward",
                                        "rmsnorm_backward",   "adalayernorm_backward"};
    return mode >= 0 && mode <= 5 ? names[mode] : NULL;
}

const char* hipdnnSdkNodeLabel(const hipdnnSdkNode* n, char* buf, size_t len) {
    const char* op = NULL;
    if (n->kind == HIPDNN_OP_POINTWISE) op = hipdnnSdkPointwiseModeName(hipdnnSdkNodeMode(n));
    if (n->kind == HIPDNN_OP_NORM_FORWARD) op = hipdnnSdkNormModeName(n->attrs[0].i[0]);
    if (n->kind == HIPDNN_OP_NORM_BACKWARD) op = hipdnnSdkNormBackwardName(n->attrs[0].i[0]);
    if (!op) {
        const hipdnnSdkOpInfo* info = hipdnnSdkOpInfoGet(n->kind);
        op = info ? info->name : "unknown-op";
    }
    hipdnnSdkFormat(buf, len, "%s '%s'", op, n->name ? n->name : "");
    return buf;
}
