"""float64 NumPy reference implementations of the ops under test.

Every function takes and returns float64 arrays in logical (NC...) order; layout and
storage dtype are the test harness's business, not the reference's.
"""
import itertools
import math

import numpy as np


# ---- convolution ----------------------------------------------------------------------

def conv_output_size(size, kernel, pre, post, stride, dilation):
    return (size + pre + post - dilation * (kernel - 1) - 1) // stride + 1


def conv_fprop(x, w, pre_padding, post_padding, stride, dilation, flip=False):
    """y[n, k, o...] = sum_{c, r...} x[n, g*Cg + c, o*stride + r*dilation - pre] * w[k, c, r...]

    x is [N, C, *S], w is [K, C/G, *R]; the group count G = C / w.shape[1] and output
    channel k belongs to group k // (K/G).  flip=True is true convolution (the filter is
    mirrored in every spatial dim), flip=False is cross-correlation.
    """
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    n, c = x.shape[:2]
    k, cg = w.shape[:2]
    groups = c // cg
    assert groups * cg == c and k % groups == 0, "bad grouping for the reference"
    spatial = x.ndim - 2
    if flip:
        w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * spatial]
    kernel = w.shape[2:]
    out = [conv_output_size(x.shape[2 + i], kernel[i], pre_padding[i], post_padding[i],
                            stride[i], dilation[i]) for i in range(spatial)]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pre_padding[i], post_padding[i]) for i in range(spatial)])
    kg = k // groups
    y = np.zeros((n, groups, kg) + tuple(out))
    wg = w.reshape((groups, kg, cg) + tuple(kernel))
    for r in itertools.product(*[range(kr) for kr in kernel]):
        window = tuple(slice(r[i] * dilation[i], r[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                             stride[i]) for i in range(spatial))
        xs = xp[(slice(None), slice(None)) + window].reshape((n, groups, cg) + tuple(out))
        wr = wg[(Ellipsis,) + r]  # [G, K/G, C/G]
        y += np.einsum("ngc...,gkc->ngk...", xs, wr)
    return y.reshape((n, k) + tuple(out))


# ---- matmul ---------------------------------------------------------------------------

def matmul(a, b):
    """Batched a @ b over the last two dims, batch dims broadcast as NumPy does."""
    return np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))


# ---- pointwise ------------------------------------------------------------------------

def add(a, b):
    return np.add(a, b, dtype=np.float64)


def sub(a, b):
    return np.subtract(a, b, dtype=np.float64)


def mul(a, b):
    return np.multiply(a, b, dtype=np.float64)


def div(a, b):
    return np.divide(a, b, dtype=np.float64)


def maximum(a, b):
    return np.maximum(np.asarray(a, np.float64), np.asarray(b, np.float64))


def minimum(a, b):
    return np.minimum(np.asarray(a, np.float64), np.asarray(b, np.float64))


def identity(x):
    return np.asarray(x, np.float64).copy()


def relu(x, lower_clip=0.0, upper_clip=math.inf, lower_clip_slope=0.0):
    """cuDNN / hipDNN RELU_FWD: below lower_clip the line of slope lower_clip_slope
    through (lower_clip, lower_clip); at or above upper_clip, upper_clip."""
    x = np.asarray(x, np.float64)
    below = lower_clip_slope * (x - lower_clip) + lower_clip
    return np.where(x <= lower_clip, below, np.where(x >= upper_clip, upper_clip, x))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))


def tanh(x):
    return np.tanh(np.asarray(x, np.float64))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    """Exact (erf) GELU."""
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


# ---- normalization --------------------------------------------------------------------

def batchnorm_inference(x, mean, inv_variance, scale, bias):
    """y = (x - mean) * inv_variance * scale + bias, statistics broadcast per channel."""
    f = lambda a: np.asarray(a, np.float64)  # noqa: E731
    return (f(x) - f(mean)) * f(inv_variance) * f(scale) + f(bias)
