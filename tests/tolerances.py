"""Default tolerances, atol = rtol, per op and storage dtype (docs/architecture.md, "Tolerances").

An element passes when ``abs(out - ref) <= tol + tol * abs(ref)``, with ``ref``
computed in float64 from the same (rounded) input values that were fed in.
"""

# op -> (fp32, fp16, bf16)
_TABLE = {
    "conv_fprop": (1e-5, 1e-2, 5e-2),
    "conv_dgrad": (2e-4, 2e-2, 1e-1),
    "conv_wgrad": (2e-4, 2e-2, 1e-1),
    "matmul": (1e-5, 1e-2, 2e-2),
    "pointwise": (1e-5, 1e-3, 1e-2),
    "batchnorm": (2e-4, 5e-3, 1e-2),
    "layernorm": (1e-4, 1e-2, 3e-2),
    "rmsnorm": (1e-4, 1e-2, 3e-2),
    # the same statistics and formula as layernorm, over other axes
    "instancenorm": (1e-4, 1e-2, 3e-2),
    "adalayernorm": (1e-4, 1e-2, 3e-2),
    # dx, dscale, dbias: float64 sums, each output rounded once
    "norm_backward": (1e-4, 1e-2, 3e-2),
    "genstats": (1e-5, 1e-2, 5e-2),
    "sdpa": (1e-4, 2e-2, 3e-2),
    "reduction": (1e-5, 1e-2, 5e-2),
    # float64 sums of the window, each output rounded once (max: one of the inputs)
    "resample": (1e-6, 1e-3, 1e-2),
    "resample_backward": (1e-6, 1e-3, 1e-2),
}
_COLUMN = {"fp32": 0, "fp16": 1, "bf16": 2}

# float64 storage (the reference engine's): computed and stored in float64, so only the
# order of summation separates it from the reference.
FP64 = 1e-12


def tolerance(op, dtype):
    """Tolerance of one op ("conv_fprop", "pointwise", ...) for "fp32", "fp16", "bf16" or
    "fp64"."""
    if dtype == "fp64":
        return FP64
    return _TABLE[op][_COLUMN[dtype]]


def graph_tolerance(ops, dtype):
    """A fused graph is held to the loosest tolerance among its ops (intermediates are fp32)."""
    return max(tolerance(op, dtype) for op in ops)

# fp32 read as TF32 (a matmul's tf32 knob): each input keeps 10 mantissa bits, off by at
# most this much relative to itself (truncated; half of it rounded), so a product by twice
# this and a dot by 2 * TF32_UNIT * (|a| @ |b|) beyond fp32 accumulation (tests/test_gpu_tf32.py).
TF32_UNIT = 2.0 ** -10

# Storage dtypes the numeric suite covers (fp32 compute throughout).
DTYPES = ("fp32", "fp16", "bf16")
