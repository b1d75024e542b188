"""Helpers of the cuDNN-frontend compatibility tests (tests/test_cudnn_compat_*.py).

Those tests are written as cuDNN frontend's Python tests are (``import hipdnn as cudnn``,
graphs built with its names and steps), with NumPy arrays where they have torch tensors,
and check results against float64 references with the project's tolerances.
"""
import contextlib

import numpy as np

import hipdnn as cudnn
from tolerances import tolerance

BF16_NAN = np.uint16(0x7FC0)


def rand(rng, shape, dtype=np.float32):
    """Random values in +-[0.25, 1] (never zero, never tiny) in `dtype`; for "bf16" the
    uint16 bit patterns of bfloat16 values."""
    v = rng.uniform(0.25, 1.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    if dtype == "bf16":
        return cudnn.bfloat16.from_float(v)
    return v.astype(dtype)


def values(a, bf16=False):
    """The float64 values an array holds (bf16: its bit patterns decoded)."""
    a = np.asarray(a)
    if bf16 or a.dtype == np.uint16:
        return cudnn.bfloat16.to_float(a).astype(np.float64)
    return a.astype(np.float64)


def poison(a):
    """Fills an output array with NaN (bf16: a NaN bit pattern) before a run."""
    a[...] = BF16_NAN if a.dtype == np.uint16 else np.nan
    return a


def channels_last(a):
    """The same NCHW values laid out NHWC in memory (torch's channels_last)."""
    return np.ascontiguousarray(np.moveaxis(a, 1, -1)).transpose(0, a.ndim - 1,
                                                                  *range(1, a.ndim - 1))


def tol_for(op, a):
    """The tolerance of `op` for the storage type of array `a` (docs/architecture.md,
    "Tolerances")."""
    kind = {np.dtype(np.float32): "fp32", np.dtype(np.float16): "fp16",
            np.dtype(np.uint16): "bf16"}[np.asarray(a).dtype]
    return tolerance(op, kind)


def assert_close(got, ref, tol, what="output"):
    """Every element finite and |got - ref| <= tol + tol * |ref| (got decoded from its
    storage type)."""
    g = values(got)
    assert g.shape == np.shape(ref), f"{what}: shape {g.shape}, expected {np.shape(ref)}"
    assert np.all(np.isfinite(g)), f"{what}: {np.count_nonzero(~np.isfinite(g))} elements " \
                                   "not finite (unwritten?)"
    err = np.abs(g - ref)
    bound = tol + tol * np.abs(ref)
    bad = err > bound
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} elements off; worst "
                           f"{err.max():.3g} against bound {bound[np.unravel_index(err.argmax(), err.shape)]:.3g}")


@contextlib.contextmanager
def unchanged(*arrays):
    """Checks that the arrays hold the same bytes after the block."""
    def raw(a):  # the bytes of each element, whatever the layout (NaN compares equal)
        a = np.ascontiguousarray(a)
        return a.view(np.uint8).reshape(a.shape + (a.itemsize,))

    before = [raw(a).copy() for a in arrays]
    yield
    for i, (a, b) in enumerate(zip(arrays, before)):
        assert np.array_equal(raw(a), b), f"input {i} was modified"


def conv2d_ref(x, w, padding=(0, 0), stride=(1, 1)):
    """float64 cross-correlation of NCHW x with KCRS w."""
    import references as ref
    pad = list(padding)
    return ref.conv_fprop(values(x), values(w), pad, pad, list(stride), [1, 1])
