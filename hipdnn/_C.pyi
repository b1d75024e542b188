"""Type stubs for hipdnn._C, the CPython binding of the backend C API (hipdnn.h).

Every integer constant of hipdnn.h (each enumerator, each #define HIPDNN_<NAME> <integer>)
is an int constant named as in C without the HIPDNN_ prefix
(HIPDNN_ATTR_TENSOR_DIMENSIONS -> ATTR_TENSOR_DIMENSIONS).  Their lines below, between the
GENERATED markers, are written by `/usr/bin/python3 tools/gen_python_constants.py`; the
rest of this file is hand-written.
"""
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, final

__version__: str

class HipdnnError(RuntimeError):
    status: int
    status_name: str

class InvalidGraphError(HipdnnError, ValueError): ...
class NotSupportedError(HipdnnError): ...

@final
class Handle:
    """A hipdnn handle: the stream engines run on."""
    destroyed: bool
    def __new__(cls) -> Handle: ...
    def set_stream(self, stream: Any) -> None: ...
    def get_stream(self) -> int: ...
    def destroy(self) -> None: ...

class DeviceArray:
    """Device memory allocated through the backend's device runtime."""
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]          # bytes
    element_strides: Tuple[int, ...]  # elements
    ndim: int
    size: int
    itemsize: int
    nbytes_spanned: int
    data_type: int
    data_ptr: int
    device: int
    memory_space: int
    base: Optional["DeviceArray"]
    __cuda_array_interface__: Dict[str, Any]
    def __init__(self, shape: Sequence[int], data_type: int,
                 strides: Optional[Sequence[int]] = ...) -> None: ...
    def as_strided(self, shape: Sequence[int], strides: Sequence[int],
                   offset: int = ...) -> "DeviceArray": ...
    def fill_bytes(self, value: int, /) -> None: ...
    def _copy_from_host(self, buffer: Any) -> None: ...
    def _copy_to_host(self, buffer: Any) -> None: ...
    def __dlpack__(self, *, stream: Optional[int] = ..., max_version: Optional[Tuple[int, int]] = ...,
                   dl_device: Optional[Tuple[int, int]] = ..., copy: Optional[bool] = ...) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

_Value = Union[int, float, bool, str, bytes, "Descriptor", Handle, None]

@final
class Descriptor:
    type: int
    type_name: str
    finalized: bool
    address: int
    def __new__(cls, type: int) -> Descriptor: ...
    def set(self, attr: int, type: int, values: Union[_Value, Sequence[_Value]]) -> None: ...
    def get(self, attr: int, type: int, count: Optional[int] = ...) -> Any: ...
    def finalize(self) -> None: ...

# (uid, name, data_type, dims, strides, is_output)
_PackTensor = Tuple[int, str, int, Tuple[int, ...], Tuple[int, ...], bool]

@final
class VariantPack:
    """What running a finalized EXECUTION_PLAN needs, read from the plan once."""
    plan: Descriptor
    uids: Tuple[int, ...]
    tensors: Tuple[_PackTensor, ...]
    workspace_size: int
    memory_space: int
    def __new__(cls, plan: Descriptor) -> VariantPack: ...
    def execute(self, handle: Handle, arrays: Union[Sequence[Any], Mapping[int, Any]],
                workspace: Optional[Any] = ...) -> None: ...
    def run_keyed(self, handle: Any, variant_pack: Any, keys: Tuple[Any, ...],
                  workspace: Any, /) -> bool: ...
    def autotune(self, handle: Handle, arrays: Union[Sequence[Any], Mapping[int, Any]],
                 workspace: Optional[Any], plans: List[Descriptor], warmup: int = ...,
                 repeat: int = ..., budget_ms: float = ..., store: bool = ...
                 ) -> Tuple[int, List[Tuple[int, int, float, float, int, str]]]: ...
    def record_graph(self, handle: Handle, arrays: Union[Sequence[Any], Mapping[int, Any]],
                     workspace: Optional[Any], graph: int, update: bool = ...) -> None: ...

def version() -> str: ...
def status_name(status: int) -> str: ...
def dtype_name(data_type: int) -> str: ...
def set_engine_plugin_paths(paths: Sequence[Union[str, bytes]], mode: int = ...) -> None: ...
def loaded_engine_plugin_paths() -> List[str]: ...
def skipped_engine_plugins() -> List[str]: ...
def heuristic_plugins() -> List[str]: ...
def engines() -> List[Tuple[int, str, str, int, int, int]]: ...
def plan_cache_info() -> Tuple[str, int, int]: ...
def plan_cache_clear() -> int: ...
def serialize(graph: Descriptor) -> bytes: ...
def deserialize(data: Union[bytes, bytearray, memoryview]) -> Descriptor: ...
def plan_kernels(plan: Descriptor) -> List[Tuple[str, str, List[int]]]: ...
def set_log_callback(callback: Optional[Callable[[int, str], Any]]) -> None: ...
def set_log_level(level: int) -> None: ...
def flush_log() -> None: ...
def device_runtime() -> Tuple[str, int, str]: ...
def device_synchronize() -> None: ...
def stream_synchronize(stream: Any) -> None: ...
def stream_is_capturing(stream: Any) -> int: ...
def pointer_memory_space(address: int) -> Tuple[int, int]: ...
def pointer_extent(address: int, nbytes: int) -> int: ...
def describe_array(obj: Any) -> Tuple[int, Tuple[int, ...], Tuple[int, ...], int, str, int,
                                      bool]: ...
def copy_value(obj: Any, buffer: Any, to_host: bool) -> None: ...
def log_message(level: int, message: str) -> None: ...

def op_table() -> List[Dict[str, Any]]:
    """The backend's table of operations: kind, name, descriptor_type, descriptor_name,
    inputs/outputs [(name, attr, is_optional, frontend_name, frontend_suffix)], attrs [(name,
    attr, type, kind, max_count, min, max, default)]; frontend_name is cuDNN frontend's keyword
    for the port (its name where the table has none), frontend_suffix that of the tensor
    name cuDNN frontend gives it ("<node>::<suffix>"), or None."""
    ...

# ---- constants (hipdnn.h enums and limits) ----
# BEGIN GENERATED: hipdnn.h constants, by tools/gen_python_constants.py; do not edit
# #define
VERSION_MAJOR: int
VERSION_MINOR: int
VERSION_PATCH: int
MAX_DIMS: int
MAX_SPATIAL: int
# hipdnnStatus_t
STATUS_SUCCESS: int
STATUS_NOT_INITIALIZED: int
STATUS_BAD_PARAM: int
STATUS_BAD_PARAM_NULL_POINTER: int
STATUS_BAD_PARAM_NOT_FINALIZED: int
STATUS_BAD_PARAM_OUT_OF_BOUND: int
STATUS_BAD_PARAM_SIZE_INSUFFICIENT: int
STATUS_BAD_PARAM_STREAM_MISMATCH: int
STATUS_NOT_SUPPORTED: int
STATUS_INTERNAL_ERROR: int
STATUS_ALLOC_FAILED: int
STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED: int
STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED: int
STATUS_EXECUTION_FAILED: int
STATUS_PLUGIN_ERROR: int
# hipdnnDataType_t
DATA_FLOAT: int
DATA_DOUBLE: int
DATA_HALF: int
DATA_INT8: int
DATA_INT32: int
DATA_UINT8: int
DATA_BFLOAT16: int
DATA_INT64: int
DATA_BOOLEAN: int
DATA_FP8_E4M3: int
DATA_FP8_E5M2: int
DATA_FP8_E8M0: int
DATA_FP4_E2M1: int
DATA_NOT_SET: int
# hipdnnPointwiseMode_t
POINTWISE_ADD: int
POINTWISE_MUL: int
POINTWISE_MIN: int
POINTWISE_MAX: int
POINTWISE_SQRT: int
POINTWISE_ADD_SQUARE: int
POINTWISE_DIV: int
POINTWISE_MOD: int
POINTWISE_POW: int
POINTWISE_SUB: int
POINTWISE_ABS: int
POINTWISE_CEIL: int
POINTWISE_COS: int
POINTWISE_EXP: int
POINTWISE_FLOOR: int
POINTWISE_LOG: int
POINTWISE_NEG: int
POINTWISE_RSQRT: int
POINTWISE_SIN: int
POINTWISE_TAN: int
POINTWISE_ERF: int
POINTWISE_IDENTITY: int
POINTWISE_RECIPROCAL: int
POINTWISE_ATAN2: int
POINTWISE_RELU_FWD: int
POINTWISE_TANH_FWD: int
POINTWISE_SIGMOID_FWD: int
POINTWISE_ELU_FWD: int
POINTWISE_GELU_FWD: int
POINTWISE_SOFTPLUS_FWD: int
POINTWISE_SWISH_FWD: int
POINTWISE_GELU_APPROX_TANH_FWD: int
POINTWISE_RELU_BWD: int
POINTWISE_TANH_BWD: int
POINTWISE_SIGMOID_BWD: int
POINTWISE_ELU_BWD: int
POINTWISE_GELU_BWD: int
POINTWISE_SOFTPLUS_BWD: int
POINTWISE_SWISH_BWD: int
POINTWISE_GELU_APPROX_TANH_BWD: int
POINTWISE_CMP_EQ: int
POINTWISE_CMP_NEQ: int
POINTWISE_CMP_GT: int
POINTWISE_CMP_GE: int
POINTWISE_CMP_LT: int
POINTWISE_CMP_LE: int
POINTWISE_LOGICAL_AND: int
POINTWISE_LOGICAL_OR: int
POINTWISE_LOGICAL_NOT: int
POINTWISE_GEN_INDEX: int
POINTWISE_BINARY_SELECT: int
# hipdnnReduceTensorOp_t
REDUCE_TENSOR_ADD: int
REDUCE_TENSOR_MUL: int
REDUCE_TENSOR_MIN: int
REDUCE_TENSOR_MAX: int
REDUCE_TENSOR_AMAX: int
REDUCE_TENSOR_AVG: int
REDUCE_TENSOR_NORM1: int
REDUCE_TENSOR_NORM2: int
REDUCE_TENSOR_MUL_NO_ZEROS: int
# hipdnnBackendNormMode_t
LAYER_NORM: int
INSTANCE_NORM: int
BATCH_NORM: int
GROUP_NORM: int
RMS_NORM: int
ADA_LAYER_NORM: int
# hipdnnBackendNormFwdPhase_t
NORM_FWD_INFERENCE: int
NORM_FWD_TRAINING: int
# hipdnnDiagonalAlignment_t
DIAGONAL_ALIGNMENT_TOP_LEFT: int
DIAGONAL_ALIGNMENT_BOTTOM_RIGHT: int
# hipdnnGenStatsMode_t
GENSTATS_SUM_SQSUM: int
# hipdnnResampleMode_t
RESAMPLE_NEAREST: int
RESAMPLE_BILINEAR: int
RESAMPLE_AVGPOOL: int
RESAMPLE_AVGPOOL_INCLUDE_PADDING: int
RESAMPLE_MAXPOOL: int
RESAMPLE_AVGPOOL_EXCLUDE_PADDING: int
# hipdnnPaddingMode_t
ZERO_PAD: int
NEG_INF_PAD: int
EDGE_VAL_PAD: int
# hipdnnReshapeMode_t
RESHAPE_VIEW_ONLY: int
RESHAPE_LOGICAL: int
# hipdnnConvolutionMode_t
CONVOLUTION: int
CROSS_CORRELATION: int
# hipdnnBackendHeurMode_t
HEUR_MODE_FALLBACK: int
HEUR_MODE_B: int
HEUR_MODE_A: int
# hipdnnMemorySpace_t
MEMORY_HOST: int
MEMORY_DEVICE: int
MEMORY_MANAGED: int
# hipdnnBackendDescriptorType_t
INVALID_TYPE: int
BACKEND_ENGINE_DESCRIPTOR: int
BACKEND_ENGINECFG_DESCRIPTOR: int
BACKEND_ENGINEHEUR_DESCRIPTOR: int
BACKEND_EXECUTION_PLAN_DESCRIPTOR: int
BACKEND_INTERMEDIATE_INFO_DESCRIPTOR: int
BACKEND_KNOB_CHOICE_DESCRIPTOR: int
BACKEND_KNOB_INFO_DESCRIPTOR: int
BACKEND_LAYOUT_INFO_DESCRIPTOR: int
BACKEND_OPERATION_GEN_STATS_DESCRIPTOR: int
BACKEND_OPERATIONGRAPH_DESCRIPTOR: int
BACKEND_VARIANT_PACK_DESCRIPTOR: int
BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR: int
BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR: int
BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR: int
BACKEND_OPERATION_POINTWISE_DESCRIPTOR: int
BACKEND_TENSOR_DESCRIPTOR: int
BACKEND_OPERATION_MATMUL_DESCRIPTOR: int
BACKEND_OPERATION_REDUCTION_DESCRIPTOR: int
BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR: int
BACKEND_OPERATION_RESAMPLE_BWD_DESCRIPTOR: int
BACKEND_OPERATION_CONCAT_DESCRIPTOR: int
BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR: int
BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR: int
BACKEND_OPERATION_RESHAPE_DESCRIPTOR: int
BACKEND_OPERATION_BATCHNORM_INFERENCE_DESCRIPTOR_EXT: int
BACKEND_OPERATION_SLICE_DESCRIPTOR_EXT: int
BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR_EXT: int
BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR_EXT: int
# hipdnnBackendAttributeType_t
TYPE_HANDLE: int
TYPE_DATA_TYPE: int
TYPE_BOOLEAN: int
TYPE_INT64: int
TYPE_FLOAT: int
TYPE_DOUBLE: int
TYPE_VOID_PTR: int
TYPE_HEUR_MODE: int
TYPE_BACKEND_DESCRIPTOR: int
TYPE_INT32: int
TYPE_CHAR: int
TYPE_POINTWISE_MODE_EXT: int
TYPE_CONVOLUTION_MODE_EXT: int
TYPE_UINT8_EXT: int
TYPE_REDUCTION_OPERATOR_TYPE_EXT: int
TYPE_NORM_MODE_EXT: int
TYPE_NORM_FWD_PHASE_EXT: int
TYPE_GENSTATS_MODE_EXT: int
TYPE_RESAMPLE_MODE_EXT: int
TYPE_PADDING_MODE_EXT: int
TYPE_RESHAPE_MODE_EXT: int
TYPE_DIAGONAL_ALIGNMENT_EXT: int
# hipdnnBackendAttributeName_t
ATTR_ENGINEHEUR_MODE: int
ATTR_ENGINEHEUR_OPERATION_GRAPH: int
ATTR_ENGINEHEUR_RESULTS: int
ATTR_ENGINECFG_ENGINE: int
ATTR_ENGINECFG_KNOB_CHOICES: int
ATTR_EXECUTION_PLAN_HANDLE: int
ATTR_EXECUTION_PLAN_ENGINE_CONFIG: int
ATTR_EXECUTION_PLAN_WORKSPACE_SIZE: int
ATTR_KNOB_CHOICE_KNOB_TYPE: int
ATTR_KNOB_CHOICE_KNOB_VALUE: int
ATTR_OPERATIONGRAPH_HANDLE: int
ATTR_OPERATIONGRAPH_OPS: int
ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT: int
ATTR_VARIANT_PACK_UNIQUE_IDS: int
ATTR_VARIANT_PACK_DATA_POINTERS: int
ATTR_VARIANT_PACK_WORKSPACE: int
ATTR_ENGINE_OPERATION_GRAPH: int
ATTR_ENGINE_GLOBAL_INDEX: int
ATTR_POINTWISE_MODE: int
ATTR_POINTWISE_RELU_LOWER_CLIP: int
ATTR_POINTWISE_RELU_UPPER_CLIP: int
ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE: int
ATTR_POINTWISE_ELU_ALPHA: int
ATTR_POINTWISE_SOFTPLUS_BETA: int
ATTR_POINTWISE_SWISH_BETA: int
ATTR_POINTWISE_AXIS: int
ATTR_CONVOLUTION_CONV_MODE: int
ATTR_CONVOLUTION_DILATIONS: int
ATTR_CONVOLUTION_FILTER_STRIDES: int
ATTR_CONVOLUTION_POST_PADDINGS: int
ATTR_CONVOLUTION_PRE_PADDINGS: int
ATTR_OPERATION_CONVOLUTION_FORWARD_W: int
ATTR_OPERATION_CONVOLUTION_FORWARD_X: int
ATTR_OPERATION_CONVOLUTION_FORWARD_Y: int
ATTR_OPERATION_CONVOLUTION_BWD_DATA_W: int
ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX: int
ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY: int
ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW: int
ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X: int
ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY: int
ATTR_OPERATION_POINTWISE_XDESC: int
ATTR_OPERATION_POINTWISE_BDESC: int
ATTR_OPERATION_POINTWISE_YDESC: int
ATTR_OPERATION_POINTWISE_DXDESC: int
ATTR_OPERATION_POINTWISE_DYDESC: int
ATTR_OPERATION_POINTWISE_TDESC: int
ATTR_TENSOR_BYTE_ALIGNMENT: int
ATTR_TENSOR_DATA_TYPE: int
ATTR_TENSOR_DIMENSIONS: int
ATTR_TENSOR_STRIDES: int
ATTR_TENSOR_UNIQUE_ID: int
ATTR_TENSOR_IS_VIRTUAL: int
ATTR_TENSOR_IS_BY_VALUE: int
ATTR_TENSOR_RAGGED_OFFSET_DESC: int
ATTR_OPERATION_MATMUL_ADESC: int
ATTR_OPERATION_MATMUL_BDESC: int
ATTR_OPERATION_MATMUL_CDESC: int
ATTR_REDUCTION_OPERATOR: int
ATTR_OPERATION_REDUCTION_XDESC: int
ATTR_OPERATION_REDUCTION_YDESC: int
ATTR_OPERATION_NORM_FWD_MODE: int
ATTR_OPERATION_NORM_FWD_PHASE: int
ATTR_OPERATION_NORM_FWD_XDESC: int
ATTR_OPERATION_NORM_FWD_MEAN_DESC: int
ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC: int
ATTR_OPERATION_NORM_FWD_SCALE_DESC: int
ATTR_OPERATION_NORM_FWD_BIAS_DESC: int
ATTR_OPERATION_NORM_FWD_EPSILON_DESC: int
ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC: int
ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC: int
ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC: int
ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC: int
ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC: int
ATTR_OPERATION_NORM_FWD_YDESC: int
ATTR_OPERATION_NORM_BWD_MODE: int
ATTR_OPERATION_NORM_BWD_XDESC: int
ATTR_OPERATION_NORM_BWD_MEAN_DESC: int
ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC: int
ATTR_OPERATION_NORM_BWD_DYDESC: int
ATTR_OPERATION_NORM_BWD_SCALE_DESC: int
ATTR_OPERATION_NORM_BWD_DSCALE_DESC: int
ATTR_OPERATION_NORM_BWD_DBIAS_DESC: int
ATTR_OPERATION_NORM_BWD_DXDESC: int
ATTR_OPERATION_GENSTATS_MODE: int
ATTR_OPERATION_GENSTATS_XDESC: int
ATTR_OPERATION_GENSTATS_SUMDESC: int
ATTR_OPERATION_GENSTATS_SQSUMDESC: int
ATTR_RESAMPLE_MODE: int
ATTR_RESAMPLE_POST_PADDINGS: int
ATTR_RESAMPLE_PRE_PADDINGS: int
ATTR_RESAMPLE_STRIDES: int
ATTR_RESAMPLE_WINDOW_DIMS: int
ATTR_RESAMPLE_PADDING_MODE: int
ATTR_OPERATION_RESAMPLE_FWD_XDESC: int
ATTR_OPERATION_RESAMPLE_FWD_YDESC: int
ATTR_OPERATION_RESAMPLE_FWD_IDXDESC: int
ATTR_OPERATION_RESAMPLE_BWD_DXDESC: int
ATTR_OPERATION_RESAMPLE_BWD_DYDESC: int
ATTR_OPERATION_RESAMPLE_BWD_IDXDESC: int
ATTR_OPERATION_RESAMPLE_BWD_XDESC: int
ATTR_OPERATION_RESAMPLE_BWD_YDESC: int
ATTR_OPERATION_RESHAPE_XDESC: int
ATTR_OPERATION_RESHAPE_YDESC: int
ATTR_OPERATION_CONCAT_AXIS: int
ATTR_OPERATION_CONCAT_INPLACE_INDEX: int
ATTR_OPERATION_CONCAT_OUTPUT_DESC: int
ATTR_TENSOR_VALUE_EXT: int
ATTR_TENSOR_NAME_EXT: int
ATTR_OPERATION_NAME_EXT: int
ATTR_OPERATION_COMPUTE_TYPE_EXT: int
ATTR_OPERATION_BN_INFERENCE_X_EXT: int
ATTR_OPERATION_BN_INFERENCE_MEAN_EXT: int
ATTR_OPERATION_BN_INFERENCE_INV_VARIANCE_EXT: int
ATTR_OPERATION_BN_INFERENCE_SCALE_EXT: int
ATTR_OPERATION_BN_INFERENCE_BIAS_EXT: int
ATTR_OPERATION_BN_INFERENCE_Y_EXT: int
ATTR_OPERATIONGRAPH_NAME_EXT: int
ATTR_OPERATIONGRAPH_TENSORS_EXT: int
ATTR_OPERATIONGRAPH_DESCRIPTION_EXT: int
ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT: int
ATTR_ENGINEHEUR_PREFERRED_ENGINE_EXT: int
ATTR_ENGINEHEUR_DESELECTED_ENGINES_EXT: int
ATTR_ENGINEHEUR_SUPPORT_REPORT_EXT: int
ATTR_ENGINE_ID_EXT: int
ATTR_ENGINE_NAME_EXT: int
ATTR_ENGINE_MEMORY_SPACE_EXT: int
ATTR_ENGINE_FLAGS_EXT: int
ATTR_ENGINE_KNOB_INFO_EXT: int
ATTR_ENGINE_KNOB_VALUES_EXT: int
ATTR_EXECUTION_PLAN_ENGINE_NAME_EXT: int
ATTR_EXECUTION_PLAN_MEMORY_SPACE_EXT: int
ATTR_VARIANT_PACK_MEMORY_SPACES_EXT: int
ATTR_OPERATION_NORM_FWD_ZERO_CENTERED_GAMMA_EXT: int
ATTR_OPERATION_SLICE_X_EXT: int
ATTR_OPERATION_SLICE_Y_EXT: int
ATTR_OPERATION_SLICE_START_EXT: int
ATTR_OPERATION_SLICE_LIMIT_EXT: int
ATTR_OPERATION_SLICE_STEP_EXT: int
ATTR_OPERATION_CONCAT_INPUT_0_EXT: int
ATTR_OPERATION_CONCAT_INPUT_1_EXT: int
ATTR_OPERATION_CONCAT_INPUT_2_EXT: int
ATTR_OPERATION_CONCAT_INPUT_3_EXT: int
ATTR_OPERATION_CONCAT_INPUT_4_EXT: int
ATTR_OPERATION_CONCAT_INPUT_5_EXT: int
ATTR_OPERATION_CONCAT_INPUT_6_EXT: int
ATTR_OPERATION_CONCAT_INPUT_7_EXT: int
ATTR_OPERATION_NORM_BWD_ZERO_CENTERED_GAMMA_EXT: int
ATTR_OPERATION_RESHAPE_MODE_EXT: int
ATTR_OPERATION_SDPA_FWD_Q_EXT: int
ATTR_OPERATION_SDPA_FWD_K_EXT: int
ATTR_OPERATION_SDPA_FWD_V_EXT: int
ATTR_OPERATION_SDPA_FWD_O_EXT: int
ATTR_OPERATION_SDPA_FWD_ATTN_SCALE_EXT: int
ATTR_OPERATION_SDPA_FWD_BIAS_EXT: int
ATTR_OPERATION_SDPA_FWD_SEQ_LEN_Q_EXT: int
ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KV_EXT: int
ATTR_OPERATION_SDPA_FWD_STATS_EXT: int
ATTR_OPERATION_SDPA_DIAGONAL_ALIGNMENT_EXT: int
ATTR_OPERATION_SDPA_LEFT_BOUND_EXT: int
ATTR_OPERATION_SDPA_RIGHT_BOUND_EXT: int
ATTR_OPERATION_SDPA_USE_PADDING_MASK_EXT: int
ATTR_OPERATION_SDPA_USE_ALIBI_MASK_EXT: int
ATTR_OPERATION_SDPA_MAX_SEQ_LEN_KV_EXT: int
ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_K_EXT: int
ATTR_OPERATION_SDPA_FWD_PAGE_TABLE_V_EXT: int
ATTR_OPERATION_SDPA_DROPOUT_PROBABILITY_EXT: int
ATTR_OPERATION_SDPA_FWD_SEED_EXT: int
ATTR_OPERATION_SDPA_FWD_OFFSET_EXT: int
ATTR_OPERATION_SDPA_FWD_RNG_DUMP_EXT: int
ATTR_OPERATION_SDPA_BWD_Q_EXT: int
ATTR_OPERATION_SDPA_BWD_K_EXT: int
ATTR_OPERATION_SDPA_BWD_V_EXT: int
ATTR_OPERATION_SDPA_BWD_O_EXT: int
ATTR_OPERATION_SDPA_BWD_DO_EXT: int
ATTR_OPERATION_SDPA_BWD_STATS_EXT: int
ATTR_OPERATION_SDPA_BWD_ATTN_SCALE_EXT: int
ATTR_OPERATION_SDPA_BWD_BIAS_EXT: int
ATTR_OPERATION_SDPA_BWD_SEQ_LEN_Q_EXT: int
ATTR_OPERATION_SDPA_BWD_SEQ_LEN_KV_EXT: int
ATTR_OPERATION_SDPA_BWD_DQ_EXT: int
ATTR_OPERATION_SDPA_BWD_DK_EXT: int
ATTR_OPERATION_SDPA_BWD_DV_EXT: int
ATTR_OPERATION_SDPA_BWD_SEED_EXT: int
ATTR_OPERATION_SDPA_BWD_OFFSET_EXT: int
# #define
MAX_PORTS: int
MAX_OP_ATTRS: int
MAX_ATTR_VALUES: int
# hipdnnOpAttrKind_ext_t
OP_ATTR_INT64: int
OP_ATTR_INT64_LIST: int
OP_ATTR_DOUBLE: int
OP_ATTR_ENUM: int
OP_ATTR_BOOLEAN: int
# #define
GRAPH_FORMAT_VERSION: int
GRAPH_FORMAT_VERSION_ATTENTION_EXT: int
# hipdnnPluginLoadingMode_t
PLUGIN_LOADING_ADDITIVE: int
PLUGIN_LOADING_ABSOLUTE: int
# hipdnnLogLevel_t
LOG_OFF: int
LOG_ERROR: int
LOG_WARN: int
LOG_INFO: int
# #define
AUTOTUNE_TIMER_HOST_CLOCK_EXT: int
AUTOTUNE_TIMER_EVENTS_EXT: int
ATTR_ENGINEHEUR_HEURISTIC_REPORT_EXT: int
ATTR_ENGINEHEUR_PLAN_CACHE_INDEX_EXT: int
ATTR_ENGINEHEUR_PARTIAL_COUNT_EXT: int
# END GENERATED
