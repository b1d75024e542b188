"""Enums named as cuDNN frontend names them (``cudnn.data_type`` ...), valued as hipdnn.h.

They are ``IntEnum`` so that they compare equal to the C values and can be passed
wherever an int is expected.
"""
from __future__ import annotations

import enum

from . import _C

__all__ = [
    "data_type",
    "heur_mode",
    "build_plan_policy",
    "convolution_mode",
    "pointwise_mode",
    "memory_space",
    "plugin_loading_mode",
    "log_level",
]


class data_type(enum.IntEnum):
    """Element types (hipdnnDataType_t; values follow cuDNN's cudnnDataType_t)."""

    FLOAT = _C.DATA_FLOAT
    DOUBLE = _C.DATA_DOUBLE
    HALF = _C.DATA_HALF
    INT8 = _C.DATA_INT8
    INT32 = _C.DATA_INT32
    UINT8 = _C.DATA_UINT8
    BFLOAT16 = _C.DATA_BFLOAT16
    INT64 = _C.DATA_INT64
    BOOLEAN = _C.DATA_BOOLEAN
    NOT_SET = _C.DATA_NOT_SET


class heur_mode(enum.IntEnum):
    """How engines are ranked (hipdnnBackendHeurMode_t)."""

    A = _C.HEUR_MODE_A
    B = _C.HEUR_MODE_B
    FALLBACK = _C.HEUR_MODE_FALLBACK


class build_plan_policy(enum.IntEnum):
    """``build_plans``: the first config that builds, or every one that does."""

    HEURISTICS_CHOICE = 0
    ALL = 1


class convolution_mode(enum.IntEnum):
    """Cross-correlation (what deep-learning frameworks call convolution) or true
    convolution (the filter flipped)."""

    CROSS_CORRELATION = _C.CROSS_CORRELATION
    CONVOLUTION = _C.CONVOLUTION


class pointwise_mode(enum.IntEnum):
    """Pointwise operations (hipdnnPointwiseMode_t; values follow cuDNN's)."""

    ADD = _C.POINTWISE_ADD
    SUB = _C.POINTWISE_SUB
    MUL = _C.POINTWISE_MUL
    DIV = _C.POINTWISE_DIV
    MAX = _C.POINTWISE_MAX
    MIN = _C.POINTWISE_MIN
    IDENTITY = _C.POINTWISE_IDENTITY
    RELU_FWD = _C.POINTWISE_RELU_FWD
    SIGMOID_FWD = _C.POINTWISE_SIGMOID_FWD
    TANH_FWD = _C.POINTWISE_TANH_FWD
    GELU_FWD = _C.POINTWISE_GELU_FWD


class memory_space(enum.IntEnum):
    """Where an engine expects its arrays: host memory, device memory, or managed memory (both)."""

    HOST = _C.MEMORY_HOST
    DEVICE = _C.MEMORY_DEVICE
    MANAGED = _C.MEMORY_MANAGED


class plugin_loading_mode(enum.IntEnum):
    """set_engine_plugin_paths: search the paths as well as the default folder, or only them."""

    ADDITIVE = _C.PLUGIN_LOADING_ADDITIVE
    ABSOLUTE = _C.PLUGIN_LOADING_ABSOLUTE


class log_level(enum.IntEnum):
    """How much the backend logs, from nothing (OFF) to every message (INFO)."""

    OFF = _C.LOG_OFF
    ERROR = _C.LOG_ERROR
    WARN = _C.LOG_WARN
    INFO = _C.LOG_INFO
