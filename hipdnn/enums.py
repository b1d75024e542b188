"""Enums named as cuDNN frontend names them (``cudnn.data_type`` ...), valued as hipdnn.h.

They are ``IntEnum`` so that they compare equal to the C values and can be passed
wherever an int is expected; ``str()`` and ``format()`` give ``"data_type.HALF"``, as
cuDNN frontend's (pybind11) enums do (its tests' parameter ids are made of them).

Where a class is the image of one C enum, its members between ``# BEGIN GENERATED: <C
enum> less <prefix>`` and ``# END GENERATED`` are written from hipdnn.h by
``/usr/bin/python3 tools/gen_python_constants.py``: one per enumerator in header order,
less the ``but`` names the line gives (tests/test_generated_sources.py checks they are
current).  Members outside the markers are hand-written, as are ``heur_mode`` and
``convolution_mode`` entirely: their member order is cuDNN frontend's, not hipdnn.h's.
"""
from __future__ import annotations

import enum

from . import _C


class _CEnum(enum.IntEnum):
    """An IntEnum that prints as ``class.MEMBER`` (pybind11's enums' str), not as its
    number."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

__all__ = [
    "data_type",
    "heur_mode",
    "build_plan_policy",
    "convolution_mode",
    "pointwise_mode",
    "memory_space",
    "plugin_loading_mode",
    "log_level",
    "norm_forward_phase",
    "reduction_mode",
    "diagonal_alignment",
    "attention_implementation",
    "knob_type",
    "behavior_note",
    "numerical_note",
    "resample_mode",
    "padding_mode",
    "reshape_mode",
]


class data_type(_CEnum):
    """Element types (hipdnnDataType_t; values follow cuDNN's cudnnDataType_t)."""

    # BEGIN GENERATED: hipdnnDataType_t less HIPDNN_DATA_
    FLOAT = _C.DATA_FLOAT
    DOUBLE = _C.DATA_DOUBLE
    HALF = _C.DATA_HALF
    INT8 = _C.DATA_INT8
    INT32 = _C.DATA_INT32
    UINT8 = _C.DATA_UINT8
    BFLOAT16 = _C.DATA_BFLOAT16
    INT64 = _C.DATA_INT64
    BOOLEAN = _C.DATA_BOOLEAN
    FP8_E4M3 = _C.DATA_FP8_E4M3
    FP8_E5M2 = _C.DATA_FP8_E5M2
    FP8_E8M0 = _C.DATA_FP8_E8M0
    FP4_E2M1 = _C.DATA_FP4_E2M1
    NOT_SET = _C.DATA_NOT_SET
    # END GENERATED


class heur_mode(_CEnum):
    """How engines are ranked (hipdnnBackendHeurMode_t).  ``OPENSOURCE`` is cuDNN
    frontend's mode for its open-source engines; every hipdnn engine is open source, so it
    ranks as ``A`` (it has no backend value of its own)."""

    # Hand-written: the order is cuDNN frontend's, not hipdnn.h's
    # (tests/test_generated_sources.py checks every enumerator is here).
    A = _C.HEUR_MODE_A
    B = _C.HEUR_MODE_B
    FALLBACK = _C.HEUR_MODE_FALLBACK
    OPENSOURCE = 4


class build_plan_policy(_CEnum):
    """``build_plans``: the first config that builds, or every one that does."""

    HEURISTICS_CHOICE = 0
    ALL = 1


class convolution_mode(_CEnum):
    """Cross-correlation (what deep-learning frameworks call convolution) or true
    convolution (the filter flipped)."""

    # Hand-written, in cuDNN frontend's order, as heur_mode.
    CROSS_CORRELATION = _C.CROSS_CORRELATION
    CONVOLUTION = _C.CONVOLUTION


class pointwise_mode(_CEnum):
    """Pointwise operations (hipdnnPointwiseMode_t; names and values follow cuDNN's)."""

    # BEGIN GENERATED: hipdnnPointwiseMode_t less HIPDNN_POINTWISE_, but ATAN2
    ADD = _C.POINTWISE_ADD
    MUL = _C.POINTWISE_MUL
    MIN = _C.POINTWISE_MIN
    MAX = _C.POINTWISE_MAX
    SQRT = _C.POINTWISE_SQRT
    ADD_SQUARE = _C.POINTWISE_ADD_SQUARE
    DIV = _C.POINTWISE_DIV
    MOD = _C.POINTWISE_MOD
    POW = _C.POINTWISE_POW
    SUB = _C.POINTWISE_SUB
    ABS = _C.POINTWISE_ABS
    CEIL = _C.POINTWISE_CEIL
    COS = _C.POINTWISE_COS
    EXP = _C.POINTWISE_EXP
    FLOOR = _C.POINTWISE_FLOOR
    LOG = _C.POINTWISE_LOG
    NEG = _C.POINTWISE_NEG
    RSQRT = _C.POINTWISE_RSQRT
    SIN = _C.POINTWISE_SIN
    TAN = _C.POINTWISE_TAN
    ERF = _C.POINTWISE_ERF
    IDENTITY = _C.POINTWISE_IDENTITY
    RECIPROCAL = _C.POINTWISE_RECIPROCAL
    RELU_FWD = _C.POINTWISE_RELU_FWD
    TANH_FWD = _C.POINTWISE_TANH_FWD
    SIGMOID_FWD = _C.POINTWISE_SIGMOID_FWD
    ELU_FWD = _C.POINTWISE_ELU_FWD
    GELU_FWD = _C.POINTWISE_GELU_FWD
    SOFTPLUS_FWD = _C.POINTWISE_SOFTPLUS_FWD
    SWISH_FWD = _C.POINTWISE_SWISH_FWD
    GELU_APPROX_TANH_FWD = _C.POINTWISE_GELU_APPROX_TANH_FWD
    RELU_BWD = _C.POINTWISE_RELU_BWD
    TANH_BWD = _C.POINTWISE_TANH_BWD
    SIGMOID_BWD = _C.POINTWISE_SIGMOID_BWD
    ELU_BWD = _C.POINTWISE_ELU_BWD
    GELU_BWD = _C.POINTWISE_GELU_BWD
    SOFTPLUS_BWD = _C.POINTWISE_SOFTPLUS_BWD
    SWISH_BWD = _C.POINTWISE_SWISH_BWD
    GELU_APPROX_TANH_BWD = _C.POINTWISE_GELU_APPROX_TANH_BWD
    CMP_EQ = _C.POINTWISE_CMP_EQ
    CMP_NEQ = _C.POINTWISE_CMP_NEQ
    CMP_GT = _C.POINTWISE_CMP_GT
    CMP_GE = _C.POINTWISE_CMP_GE
    CMP_LT = _C.POINTWISE_CMP_LT
    CMP_LE = _C.POINTWISE_CMP_LE
    LOGICAL_AND = _C.POINTWISE_LOGICAL_AND
    LOGICAL_OR = _C.POINTWISE_LOGICAL_OR
    LOGICAL_NOT = _C.POINTWISE_LOGICAL_NOT
    GEN_INDEX = _C.POINTWISE_GEN_INDEX
    BINARY_SELECT = _C.POINTWISE_BINARY_SELECT
    # END GENERATED


class memory_space(_CEnum):
    """Where an engine expects its arrays: host memory, device memory, or managed memory (both)."""

    # BEGIN GENERATED: hipdnnMemorySpace_t less HIPDNN_MEMORY_
    HOST = _C.MEMORY_HOST
    DEVICE = _C.MEMORY_DEVICE
    MANAGED = _C.MEMORY_MANAGED
    # END GENERATED


class plugin_loading_mode(_CEnum):
    """set_engine_plugin_paths: search the paths as well as (ADDITIVE) or instead of
    (ABSOLUTE) the default folder."""

    # BEGIN GENERATED: hipdnnPluginLoadingMode_t less HIPDNN_PLUGIN_LOADING_
    ADDITIVE = _C.PLUGIN_LOADING_ADDITIVE
    ABSOLUTE = _C.PLUGIN_LOADING_ABSOLUTE
    # END GENERATED


class log_level(_CEnum):
    """How much the backend logs, from nothing (OFF) to every message (INFO)."""

    # BEGIN GENERATED: hipdnnLogLevel_t less HIPDNN_LOG_
    OFF = _C.LOG_OFF
    ERROR = _C.LOG_ERROR
    WARN = _C.LOG_WARN
    INFO = _C.LOG_INFO
    # END GENERATED


class diagonal_alignment(_CEnum):
    """Where an attention mask's diagonal starts (hipdnnDiagonalAlignment_t, valued as
    cuDNN frontend's DiagonalAlignment_t)."""

    # BEGIN GENERATED: hipdnnDiagonalAlignment_t less HIPDNN_DIAGONAL_ALIGNMENT_
    TOP_LEFT = _C.DIAGONAL_ALIGNMENT_TOP_LEFT
    BOTTOM_RIGHT = _C.DIAGONAL_ALIGNMENT_BOTTOM_RIGHT
    # END GENERATED


# ---- names cuDNN frontend code uses -----------------------------------------------------
# Valued as cuDNN frontend's own enums.  hipdnn has no operation that takes most of them
# yet (norms, reductions, attention); they exist so that code naming them imports and
# reaches the point where a missing operation is reported by name.


class norm_forward_phase(_CEnum):
    """Normalization phase (cuDNN frontend's NormFwdPhase_t)."""

    NOT_SET = 0
    INFERENCE = 1
    TRAINING = 2


class reduction_mode(_CEnum):
    """Reduction kinds (cuDNN frontend's ReductionMode_t)."""

    NOT_SET = 0
    ADD = 1
    MUL = 2
    MIN = 3
    MAX = 4
    AMAX = 5
    AVG = 6
    NORM1 = 7
    NORM2 = 8
    MUL_NO_ZEROS = 9


class attention_implementation(_CEnum):
    """Attention implementation choice (cuDNN frontend's AttentionImplementation_t)."""

    AUTO = 0
    COMPOSITE = 1
    UNIFIED = 2


class knob_type(_CEnum):
    """Engine knob kinds (cuDNN frontend's KnobType_t).  A knob choice passes its type's
    value to the engine as the knob id."""

    NOT_SET = 0
    SWIZZLE = 1
    TILE_SIZE = 2
    EDGE = 3
    MULTIPLY = 4
    SPLIT_K_BUF = 5
    TILEK = 6
    STAGES = 7
    REDUCTION_MODE = 8
    SPLIT_K_SLC = 9
    IDX_MODE = 10
    SPECFILT = 11
    KERNEL_CFG = 12
    WORKSPACE = 13
    TILE_CGA_M = 14
    TILE_CGA_N = 15
    BLOCK_SIZE = 16
    OCCUPANCY = 17
    ARRAY_SIZE_PER_THREAD = 18
    SPLIT_COLS = 19
    TILE_ROWS = 20
    TILE_COLS = 21
    LOAD_SIZE = 22
    CTA_COUNT = 23
    STREAM_K = 24
    SPLIT_P_SLC = 25
    TILE_M = 26
    TILE_N = 27
    WARP_SPEC_CFG = 28


class behavior_note(_CEnum):
    """Behaviour notes of an engine config (cuDNN frontend's BehaviorNote_t).  The ``hip``
    engine's configs have RUNTIME_COMPILATION (their kernels are compiled when a plan is
    built); no hipdnn engine needs reordered filters."""

    NOT_SET = 0
    RUNTIME_COMPILATION = 1
    REQUIRES_FILTER_INT8x32_REORDER = 2
    REQUIRES_BIAS_INT8x32_REORDER = 3
    SUPPORTS_CUDA_GRAPH_NATIVE_API = 4
    CUBLASLT_DEPENDENCY = 5


class numerical_note(_CEnum):
    """Numerical notes of an engine config (cuDNN frontend's NumericalNote_t)."""

    NOT_SET = 0
    TENSOR_CORE = 1
    DOWN_CONVERT_INPUTS = 2
    REDUCED_PRECISION_REDUCTION = 3
    FFT = 4
    NONDETERMINISTIC = 5
    WINOGRAD = 6
    WINOGRAD_TILE_4x4 = 7
    WINOGRAD_TILE_6x6 = 8
    WINOGRAD_TILE_13x13 = 9
    STRICT_NAN_PROP = 10


class resample_mode(_CEnum):
    """What a resample window computes (cuDNN frontend's ResampleMode_t).  ``AVGPOOL`` is
    cuDNN's backend name for ``AVGPOOL_INCLUDE_PADDING``.  hipdnn runs the pooling modes;
    NEAREST and BILINEAR are declined."""

    NOT_SET = 0
    AVGPOOL_EXCLUDE_PADDING = 1
    AVGPOOL_INCLUDE_PADDING = 2
    AVGPOOL = 2
    BILINEAR = 3
    NEAREST = 4
    MAXPOOL = 5


class padding_mode(_CEnum):
    """What a resample window reads in the padding (cuDNN frontend's PaddingMode_t):
    ``ZERO_PAD`` zeros, ``NEG_INF_PAD`` nothing a maximum could pick, ``EDGE_VAL_PAD``
    the nearest edge value (for NEAREST / BILINEAR; declined)."""

    NOT_SET = 0
    EDGE_VAL_PAD = 1
    NEG_INF_PAD = 2
    ZERO_PAD = 3


class reshape_mode(_CEnum):
    """How reshape maps its input onto its output (cuDNN frontend's ReshapeMode_t):
    ``VIEW_ONLY`` re-describes the same memory, ``LOGICAL`` keeps row-major logical order
    (NumPy's reshape)."""

    VIEW_ONLY = 1
    LOGICAL = 2
