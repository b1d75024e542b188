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


def conv_fprop(x, w, pre_padding, post_padding, stride, dilation, flip=False,
               dtype=np.float64):
    """y[n, k, o...] = sum_{c, r...} x[n, g*Cg + c, o*stride + r*dilation - pre] * w[k, c, r...]

    x is [N, C, *S], w is [K, C/G, *R]; the group count G = C / w.shape[1] and output
    channel k belongs to group k // (K/G).  flip=True is true convolution (the filter is
    mirrored in every spatial dim), flip=False is cross-correlation.  dtype: the
    arithmetic's type (np.int64 for exact integer sums).
    """
    x = np.asarray(x, dtype)
    w = np.asarray(w, dtype)
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
    y = np.zeros((n, groups, kg) + tuple(out), dtype)
    wg = w.reshape((groups, kg, cg) + tuple(kernel))
    for r in itertools.product(*[range(kr) for kr in kernel]):
        window = tuple(slice(r[i] * dilation[i], r[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                             stride[i]) for i in range(spatial))
        xs = xp[(slice(None), slice(None)) + window].reshape((n, groups, cg) + tuple(out))
        wr = wg[(Ellipsis,) + r]  # [G, K/G, C/G]
        y += np.einsum("ngc...,gkc->ngk...", xs, wr)
    return y.reshape((n, k) + tuple(out))


def _conv_windows(x_shape, w_shape, pre_padding, post_padding, stride, dilation):
    """(out dims, padded image dims, [(tap, window of the padded image)]) of conv_fprop."""
    spatial = len(x_shape) - 2
    kernel = w_shape[2:]
    out = [conv_output_size(x_shape[2 + i], kernel[i], pre_padding[i], post_padding[i],
                            stride[i], dilation[i]) for i in range(spatial)]
    padded = [x_shape[2 + i] + pre_padding[i] + post_padding[i] for i in range(spatial)]
    taps = []
    for r in itertools.product(*[range(kr) for kr in kernel]):
        taps.append((r, tuple(slice(r[i] * dilation[i],
                                    r[i] * dilation[i] + stride[i] * (out[i] - 1) + 1,
                                    stride[i]) for i in range(spatial))))
    return out, padded, taps


def conv_dgrad(dy, w, x_shape, pre_padding, post_padding, stride, dilation, flip=False):
    """dx: the adjoint of conv_fprop in x, sum over (k, tap) of w[k, c, tap] * dy[n, k, o]
    at the image position o*stride + tap*dilation - pre (the padding's share dropped)."""
    dy = np.asarray(dy, np.float64)
    w = np.asarray(w, np.float64)
    n, c = x_shape[:2]
    k, cg = w.shape[:2]
    groups = c // cg
    spatial = len(x_shape) - 2
    if flip:
        w = w[(slice(None), slice(None)) + (slice(None, None, -1),) * spatial]
    out, padded, taps = _conv_windows(x_shape, w.shape, pre_padding, post_padding, stride,
                                      dilation)
    kg = k // groups
    dyg = dy.reshape((n, groups, kg) + tuple(out))
    wg = w.reshape((groups, kg, cg) + tuple(w.shape[2:]))
    dxp = np.zeros((n, groups, cg) + tuple(padded))
    for r, window in taps:
        dxp[(slice(None),) * 3 + window] += np.einsum("ngk...,gkc->ngc...", dyg,
                                                      wg[(Ellipsis,) + r])
    inner = tuple(slice(pre_padding[i], pre_padding[i] + x_shape[2 + i]) for i in range(spatial))
    return dxp[(slice(None),) * 3 + inner].reshape(tuple(x_shape))


def conv_wgrad(x, dy, w_shape, pre_padding, post_padding, stride, dilation, flip=False):
    """dw: the adjoint of conv_fprop in w, sum over (n, o) of dy[n, k, o] * x at
    o*stride + tap*dilation - pre (0 in the padding)."""
    x = np.asarray(x, np.float64)
    dy = np.asarray(dy, np.float64)
    n, c = x.shape[:2]
    k, cg = w_shape[:2]
    groups = c // cg
    spatial = x.ndim - 2
    out, _padded, taps = _conv_windows(x.shape, w_shape, pre_padding, post_padding, stride,
                                       dilation)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pre_padding[i], post_padding[i]) for i in range(spatial)])
    kg = k // groups
    dyg = dy.reshape((n, groups, kg) + tuple(out))
    dw = np.zeros((groups, kg, cg) + tuple(w_shape[2:]))
    for r, window in taps:
        xs = xp[(slice(None), slice(None)) + window].reshape((n, groups, cg) + tuple(out))
        dw[(Ellipsis,) + r] = np.einsum("ngcp,ngkp->gkc", xs.reshape(n, groups, cg, -1),
                                        dyg.reshape(n, groups, kg, -1))
    dw = dw.reshape(tuple(w_shape))
    if flip:
        dw = dw[(slice(None), slice(None)) + (slice(None, None, -1),) * spatial]
    return dw


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


def exp(x):
    return np.exp(np.asarray(x, np.float64))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x):
    """Exact (erf) GELU."""
    x = np.asarray(x, np.float64)
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _f(x):
    return np.asarray(x, np.float64)


def add_square(a, b):
    with np.errstate(invalid="ignore"):
        return _f(a) + _f(b) * _f(b)


def fmod(a, b):
    """C's fmod: the remainder with the sign of a (cuDNN's MOD)."""
    with np.errstate(invalid="ignore"):
        return np.fmod(_f(a), _f(b))


def power(a, b):
    with np.errstate(all="ignore"):
        return np.power(_f(a), _f(b))


def _unary(fn):
    def f(x):
        with np.errstate(all="ignore"):
            return fn(_f(x))
    return f


sqrt = _unary(np.sqrt)
rsqrt = _unary(lambda x: 1.0 / np.sqrt(x))
reciprocal = _unary(lambda x: 1.0 / x)
absolute = _unary(np.abs)
neg = _unary(np.negative)
ceil = _unary(np.ceil)
floor = _unary(np.floor)
log = _unary(np.log)
sin = _unary(np.sin)
cos = _unary(np.cos)
tan = _unary(np.tan)
erf = _unary(np.vectorize(math.erf, otypes=[np.float64]))


def elu(x, alpha=1.0):
    x = _f(x)
    return np.where(x > 0, x, alpha * np.expm1(x))


def softplus(x, beta=1.0):
    """log(1 + exp(beta x)) / beta, without overflow (np.logaddexp(0, beta x))."""
    return np.logaddexp(0.0, beta * _f(x)) / beta


def _x_times_sigmoid(x, z):
    """x * sigmoid(z) = x / (1 + exp(-z)), a zero of x's sign where exp(-z) overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        d = 1.0 + np.exp(-z)
        return np.where(np.isinf(d), np.copysign(0.0, x), x / d)


def swish(x, beta=1.0):
    x = _f(x)
    return _x_times_sigmoid(x, beta * x)


GELU_C = 0.044715
SQRT_2_PI = math.sqrt(2.0 / math.pi)


def _gelu_tanh_u(x):
    with np.errstate(over="ignore", invalid="ignore"):
        return SQRT_2_PI * (x + GELU_C * (x * x * x))


def gelu_approx_tanh(x):
    """x (1 + tanh(u)) / 2 = x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3): the
    sigmoid form does not cancel for negative x."""
    x = _f(x)
    return _x_times_sigmoid(x, 2.0 * _gelu_tanh_u(x))


def gelu_approx_tanh_textbook(x):
    x = _f(x)
    return 0.5 * x * (1.0 + np.tanh(_gelu_tanh_u(x)))


# Backward modes: dx = dy * f'(x), in forms that do not cancel; NaN in x gives NaN.

def relu_backward(x, dy, lower_clip=0.0, upper_clip=math.inf, lower_clip_slope=0.0):
    """dy where lower_clip < x < upper_clip; lower_clip_slope * dy at or below lower_clip
    (exactly 0 without a slope, even for an infinite dy); 0 at or above a finite
    upper_clip (+inf, the default, clips nothing)."""
    x, dy = np.broadcast_arrays(_f(x), _f(dy))
    below = np.zeros_like(dy) if lower_clip_slope == 0 else lower_clip_slope * dy
    clipped = (x >= upper_clip) & (upper_clip != math.inf)  # +inf: no upper clip
    r = np.where(x <= lower_clip, below, np.where(clipped, 0.0, dy))
    return np.where(np.isnan(x), x, r)


def _bell(e):
    """e / (1 + e)^2: sigmoid'(x) with e = exp(-|x|), tanh'(x) / 4 with e = exp(-2|x|)."""
    return e / ((1.0 + e) * (1.0 + e))


def tanh_backward(x, dy):
    with np.errstate(invalid="ignore"):
        return _f(dy) * (4.0 * _bell(np.exp(-2.0 * np.abs(_f(x)))))


def sigmoid_backward(x, dy):
    with np.errstate(invalid="ignore"):
        return _f(dy) * _bell(np.exp(-np.abs(_f(x))))


def elu_backward(x, dy, alpha=1.0):
    x, dy = np.broadcast_arrays(_f(x), _f(dy))
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, dy, dy * (alpha * np.exp(x)))


def gelu_backward(x, dy):
    x = _f(x)
    cdf = 0.5 * _erfc(-x / math.sqrt(2.0))
    with np.errstate(invalid="ignore"):
        pdf = np.exp(-0.5 * (x * x)) / math.sqrt(2.0 * math.pi)
        return _f(dy) * (cdf + np.where(pdf == 0.0, 0.0, x * pdf))


def softplus_backward(x, dy, beta=1.0):
    with np.errstate(over="ignore", invalid="ignore"):
        return _f(dy) / (1.0 + np.exp(-beta * _f(x)))


def swish_backward(x, dy, beta=1.0):
    """dy * (s + z s (1 - s)), z = beta x, s = sigmoid(z); s and 1 - s from exp(-|z|)."""
    z = beta * _f(x)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(-np.abs(z))
        p = 1.0 / (1.0 + e)
        s = np.where(z >= 0, p, e * p)
        q = np.where(z >= 0, e * p, p)
        zq = np.where(q == 0.0, 0.0, z * q)
        return _f(dy) * np.where(s == 0.0, 0.0, s * (1.0 + zq))


def gelu_approx_tanh_backward(x, dy):
    """dy * (sigmoid(2u) + x sqrt(2/pi) (1 + 3 * 0.044715 x^2) (1 - tanh(u)^2) / 2)."""
    x = _f(x)
    u2 = 2.0 * _gelu_tanh_u(x)
    with np.errstate(over="ignore", invalid="ignore"):
        sig = 1.0 / (1.0 + np.exp(-u2))
        e = np.exp(-np.abs(u2))
        slope = x * (SQRT_2_PI * (1.0 + 3.0 * GELU_C * (x * x)))
        t = np.where(e == 0.0, 0.0, slope * (2.0 * _bell(e)))
        return _f(dy) * (sig + t)


# Textbook forms of the derivatives, for checking the stable ones above where both hold.
TEXTBOOK_BACKWARD = {
    "tanh_backward": lambda x, dy: dy * (1.0 - np.tanh(x) ** 2),
    "sigmoid_backward": lambda x, dy: dy * sigmoid(x) * (1.0 - sigmoid(x)),
    "gelu_backward": lambda x, dy: dy * (0.5 * (1.0 + _erf_v(x / math.sqrt(2.0))) +
                                         x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)),
    "softplus_backward": lambda x, dy: dy * sigmoid(x),
    "swish_backward": lambda x, dy: dy * (sigmoid(x) + x * sigmoid(x) * (1.0 - sigmoid(x))),
    "gelu_approx_tanh_backward": lambda x, dy: dy * (
        0.5 * (1.0 + np.tanh(_gelu_tanh_u(x))) + 0.5 * x * (1.0 - np.tanh(_gelu_tanh_u(x)) ** 2)
        * SQRT_2_PI * (1.0 + 3.0 * GELU_C * x * x)),
}


def _truth(v):
    """A value as a condition: nonzero (NaN included) is true."""
    return _f(v) != 0


def cmp(op):
    """The comparison cmp_<op> as 1.0 / 0.0 (NaN compares unequal)."""
    fn = {"eq": np.equal, "neq": np.not_equal, "gt": np.greater, "ge": np.greater_equal,
          "lt": np.less, "le": np.less_equal}[op]
    return lambda a, b: fn(_f(a), _f(b)).astype(np.float64)


def logical_and(a, b):
    return (_truth(a) & _truth(b)).astype(np.float64)


def logical_or(a, b):
    return (_truth(a) | _truth(b)).astype(np.float64)


def logical_not(a):
    return (~_truth(a)).astype(np.float64)


def binary_select(x, b, t):
    """x where t is nonzero, else b (all three broadcast)."""
    return np.where(_truth(t), _f(x), _f(b))


def gen_index(shape, axis):
    """Each element's coordinate along `axis` of `shape`."""
    idx = np.arange(shape[axis], dtype=np.float64).reshape(
        [-1 if i == axis else 1 for i in range(len(shape))])
    return np.broadcast_to(idx, shape).copy()


# ---- normalization --------------------------------------------------------------------

def batchnorm_inference(x, mean, inv_variance, scale, bias):
    """y = (x - mean) * inv_variance * scale + bias, statistics broadcast per channel."""
    f = lambda a: np.asarray(a, np.float64)  # noqa: E731
    return (f(x) - f(mean)) * f(inv_variance) * f(scale) + f(bias)


def gelu_erfc(x):
    """The same exact GELU as `gelu`, written x * erfc(-x / sqrt(2)) / 2 so that it stays
    accurate in the far negative tail, where 1 + erf(x / sqrt(2)) cancels (below about
    x = -5 the erf form loses relative accuracy; by x = -8 it has none left).  Where the
    normal CDF underflows to 0 (x below about -38.5, and -inf) the result is -0, not the
    NaN of -inf * 0."""
    x = np.asarray(x, np.float64)
    cdf = 0.5 * _erfc(-x / math.sqrt(2.0))
    with np.errstate(invalid="ignore"):
        return np.where(cdf == 0.0, -0.0, x * cdf)


_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_erf_v = np.vectorize(math.erf, otypes=[np.float64])


def ieee_maximum(a, b):
    """IEEE 754-2019 maximum: NaN if either is NaN (as np.maximum), and +0 above -0
    whatever the operand order (np.maximum returns one of two equal zeros by position)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a), b, a), np.maximum(a, b))


def ieee_minimum(a, b):
    """IEEE 754-2019 minimum: NaN if either is NaN, and -0 below +0."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    zeros = (a == 0) & (b == 0)
    return np.where(zeros, np.where(np.signbit(a), a, b), np.minimum(a, b))


# ---- reduction ------------------------------------------------------------------------

REDUCTION_MODES = ("add", "mul", "min", "max", "amax", "avg", "norm1", "norm2",
                   "mul_no_zeros")


def reduction(x, mode, axes):
    """cuDNN's reduction operators over `axes` (dims kept, as 1): add, mul, min, max,
    amax = max |x|, avg, norm1 = sum |x|, norm2 = sqrt(sum x^2), mul_no_zeros = the product
    of the nonzero values (1 if there are none).  min / max / amax propagate NaN (NumPy's
    rule).  axes=() reduces nothing: each value on its own (amax |x|, norm2 |x|, ...)."""
    x = np.asarray(x, np.float64)
    kw = {"axis": tuple(axes), "keepdims": True}
    if mode == "add":
        return np.sum(x, **kw)
    if mode == "mul":
        return np.prod(x, **kw)
    if mode == "min":
        return np.min(x, **kw)
    if mode == "max":
        return np.max(x, **kw)
    if mode == "amax":
        return np.max(np.abs(x), **kw)
    if mode == "avg":
        return np.mean(x, **kw)
    if mode == "norm1":
        return np.sum(np.abs(x), **kw)
    if mode == "norm2":
        return np.sqrt(np.sum(x * x, **kw))
    if mode == "mul_no_zeros":
        return np.prod(np.where(x == 0, 1.0, x), **kw)
    raise ValueError(f"unknown reduction mode {mode!r}")


# ---- norm_forward ---------------------------------------------------------------------

def norm_axes(mode, x_shape, scale_shape):
    """The axes a norm_forward mode normalizes over: layer, rms and ada_layer the axes from
    1 on where scale spans x; instance the axes from 2 on; batch every axis but 1."""
    n = len(x_shape)
    if mode == "batch":
        return tuple(i for i in range(n) if i != 1)
    if mode == "instance":
        return tuple(range(2, n))
    return tuple(i for i in range(1, n) if scale_shape[i] == x_shape[i])


def norm_forward(mode, x, scale, bias, epsilon, zero_centered_gamma=False):
    """(y, mean, inv_variance) of norm_forward in float64: statistics over norm_axes,
    var biased (divided by the count), inv_variance = 1 / sqrt(var + epsilon),
    y = (x - mean) * inv_variance * scale + bias (rms: x * inv_variance * scale + bias,
    var = mean(x^2), and mean is None); scale + 1 with zero_centered_gamma; bias None
    for none."""
    x = np.asarray(x, np.float64)
    scale = np.asarray(scale, np.float64)
    axes = norm_axes(mode, x.shape, scale.shape)
    gamma = scale + 1.0 if zero_centered_gamma else scale
    if mode == "rms":
        mean = None
        var = np.mean(x * x, axis=axes, keepdims=True)
        centered = x
    else:
        mean = np.mean(x, axis=axes, keepdims=True)
        centered = x - mean
        var = np.mean(centered * centered, axis=axes, keepdims=True)
    inv_variance = 1.0 / np.sqrt(var + epsilon)
    y = centered * inv_variance * gamma
    if bias is not None:
        y = y + np.asarray(bias, np.float64)
    return y, mean, inv_variance


def norm_backward(mode, x, dy, scale, mean, inv_variance, zero_centered_gamma=False):
    """(dx, dscale, dbias) of norm_forward's y in float64, from the saved statistics as
    given: xhat = (x - mean) * inv_variance (rms: x * inv_variance), dxhat = dy * gamma,
    dx = inv_variance * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) over norm_axes
    (rms without the mean(dxhat) term); dscale = sum(dy * xhat) and dbias = sum(dy) over
    the axes where scale has 1."""
    x, dy, scale, inv = (np.asarray(a, np.float64) for a in (x, dy, scale, inv_variance))
    axes = norm_axes(mode, x.shape, scale.shape)
    xhat = x * inv if mode == "rms" else (x - np.asarray(mean, np.float64)) * inv
    dxhat = dy * (scale + 1.0 if zero_centered_gamma else scale)
    inner = dxhat - xhat * np.mean(dxhat * xhat, axis=axes, keepdims=True)
    if mode != "rms":
        inner = inner - np.mean(dxhat, axis=axes, keepdims=True)
    param_axes = tuple(i for i, d in enumerate(scale.shape) if d == 1)
    return (inv * inner, np.sum(dy * xhat, axis=param_axes, keepdims=True),
            np.sum(dy, axis=param_axes, keepdims=True))


def genstats(x):
    """(sum, sq_sum) per channel (dim 1) in float64, shaped [1, C, 1, ...]."""
    x = np.asarray(x, np.float64)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    return np.sum(x, axis=axes, keepdims=True), np.sum(x * x, axis=axes, keepdims=True)


def sdpa_mask(b, sq, skv, len_q=None, len_kv=None, left=None, right=None,
              bottom_right=False):
    """[B, 1, S_q, S_kv] booleans: True where query i of sample b may see key j (cuDNN
    frontend's rules: padding, then the band i + shift - left < j <= i + shift + right,
    shift = L_kv - L_q when bottom-right aligned)."""
    allowed = np.zeros((b, 1, sq, skv), bool)
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    for n in range(b):
        lq = sq if len_q is None else min(max(int(len_q[n]), 0), sq)
        lk = skv if len_kv is None else min(max(int(len_kv[n]), 0), skv)
        shift = lk - lq if bottom_right else 0
        ok = (i < lq) & (j < lk)
        if right is not None:
            ok &= j <= i + shift + right
        if left is not None:
            ok &= j > i + shift - left
        allowed[n, 0] = ok
    return allowed


def alibi_slopes(hq):
    """ALiBi's slope per query head (Press et al.; cuDNN frontend's test_mhas): n the
    largest power of two <= hq, the first n heads 2^(-8 / n) to the powers 1..n, the rest
    the odd powers of 2^(-4 / n)."""
    n = 2 ** int(np.floor(np.log2(hq)))
    m = 2.0 ** (-8.0 / n * np.arange(1, n + 1))
    if n < hq:
        m = np.concatenate([m, 2.0 ** (-4.0 / n * np.arange(1, 2 * (hq - n), 2))])
    return m


def alibi_bias(hq, sq, skv):
    """[1, hq, sq, skv] float64: slope_h * (j - i)."""
    dist = np.arange(skv)[None, :] - np.arange(sq)[:, None]
    return alibi_slopes(hq)[None, :, None, None] * dist[None, None].astype(np.float64)


def _expand_heads(t, hq):
    return np.repeat(np.asarray(t, np.float64), hq // t.shape[1], axis=1)


def philox4x32_10(ctr, key):
    """Philox4x32-10 (Salmon et al. 2011) on uint32 arrays: ctr [4, ...], key [2, ...];
    the four output words.  An independent port of plugins/hip/philox.h, checked against
    Random123's known answers."""
    m0, m1, w0, w1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
    mask = np.uint64(0xFFFFFFFF)
    c = [np.asarray(x, np.uint64) for x in ctr]
    k0, k1 = (np.asarray(x, np.uint64) for x in key)
    for _ in range(10):
        p0, p1 = np.uint64(m0) * c[0], np.uint64(m1) * c[2]
        c = [((p1 >> np.uint64(32)) ^ c[1] ^ k0) & mask, p1 & mask,
             ((p0 >> np.uint64(32)) ^ c[3] ^ k1) & mask, p0 & mask]
        k0, k1 = (k0 + np.uint64(w0)) & mask, (k1 + np.uint64(w1)) & mask
    return [x.astype(np.uint32) for x in c]


def dropout_keep(seed, offset, prob, shape):
    """Attention dropout's mask of [B, H_q, S_q, S_kv] (plugins/hip/philox.h's rule):
    counter (j // 4, i, h, b + offset's low word), key (seed's low word, its high word +
    offset's high word), lane j % 4; kept where the word is >= floor(prob * 2^32)."""
    b, h, i, j = np.meshgrid(*(np.arange(n, dtype=np.uint64) for n in shape), indexing="ij")
    seed, offset = int(seed) & (2**64 - 1), int(offset) & (2**64 - 1)
    lo = np.uint64(0xFFFFFFFF)
    ctr = [j >> np.uint64(2), i & lo, h & lo, (b + np.uint64(offset & 0xFFFFFFFF)) & lo]
    key = [np.full(b.shape, seed & 0xFFFFFFFF, np.uint64),
           np.full(b.shape, ((seed >> 32) + (offset >> 32)) & 0xFFFFFFFF, np.uint64)]
    words = philox4x32_10(ctr, key)
    lane = (j & np.uint64(3)).astype(np.int64)
    u = np.choose(lane, words)
    return u >= np.uint32(min(int(prob * 2**32), 2**32 - 1))


def sdpa(q, k, v, scale=1.0, bias=None, allowed=None, dropout=None):
    """(o, stats) of scaled dot-product attention in float64: k and v heads repeated for
    GQA / MQA, s = scale q k^T + bias, masked where `allowed` is False; a row with no
    allowed key gives o = 0 and stats = -inf.  dropout=(probability, keep): o takes
    p * keep / (1 - probability) (test_mhas's rule), the stats do not."""
    q = np.asarray(q, np.float64)
    hq = q.shape[1]
    k, v = _expand_heads(k, hq), _expand_heads(v, hq)
    s = scale * np.einsum("bhqd,bhkd->bhqk", q, k)
    if bias is not None:
        s = s + np.asarray(bias, np.float64)
    if allowed is None:
        allowed = np.ones((1, 1) + s.shape[2:], bool)
    allowed = np.broadcast_to(allowed, s.shape)
    s = np.where(allowed, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    empty = ~np.isfinite(m)
    m = np.where(empty, 0.0, m)
    e = np.where(allowed, np.exp(s - m), 0.0)
    total = np.sum(e, axis=-1, keepdims=True)
    p = np.where(empty, 0.0, e / np.where(empty, 1.0, total))
    stats = np.where(empty, -np.inf, m + np.log(np.where(empty, 1.0, total)))
    if dropout is not None:
        p = p * dropout[1] / (1.0 - dropout[0])
    return np.einsum("bhqk,bhkd->bhqd", p, v), stats


def sdpa_backward(q, k, v, o, do, stats, scale=1.0, bias=None, allowed=None, dropout=None):
    """(dq, dk, dv) in float64 from the forward's o and stats: p = exp(s - stats),
    ds = p (do v^T z - rowsum(do o)), dq = scale ds k, dk = scale ds^T q, dv = (p z)^T do,
    dk / dv summed over the query heads of each key / value head; z = keep / (1 - prob)
    with dropout=(prob, keep), else 1."""
    q, o, do, stats = (np.asarray(a, np.float64) for a in (q, o, do, stats))
    hq, hk, hv = q.shape[1], k.shape[1], v.shape[1]
    ke, ve = _expand_heads(k, hq), _expand_heads(v, hq)
    s = scale * np.einsum("bhqd,bhkd->bhqk", q, ke)
    if bias is not None:
        s = s + np.asarray(bias, np.float64)
    if allowed is None:
        allowed = np.ones((1, 1) + s.shape[2:], bool)
    allowed = np.broadcast_to(allowed, s.shape) & np.isfinite(stats)
    p = np.where(allowed, np.exp(np.where(allowed, s - stats, 0.0)), 0.0)
    z = 1.0 if dropout is None else dropout[1] / (1.0 - dropout[0])
    dp = np.einsum("bhqd,bhkd->bhqk", do, ve) * z
    delta = np.sum(do * o, axis=-1, keepdims=True)
    ds = p * (dp - delta)
    dq = scale * np.einsum("bhqk,bhkd->bhqd", ds, ke)
    dk = scale * np.einsum("bhqk,bhqd->bhkd", ds, q)
    dv = np.einsum("bhqk,bhqd->bhkd", p * z, do)
    b, skv = dk.shape[0], dk.shape[2]
    dk = dk.reshape(b, hk, hq // hk, skv, -1).sum(axis=2)
    dv = dv.reshape(b, hv, hq // hv, skv, -1).sum(axis=2)
    return dq, dk, dv


def running_stats(x, running_mean, running_var, momentum):
    """Batchnorm's running statistics after one training step (cuDNN, PyTorch):
    next = (1 - momentum) * running + momentum * batch statistic, the variance unbiased."""
    x = np.asarray(x, np.float64)
    axes = norm_axes("batch", x.shape, None)
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.var(x, axis=axes, keepdims=True, ddof=1)
    f = lambda a: np.asarray(a, np.float64)  # noqa: E731
    return ((1 - momentum) * f(running_mean) + momentum * mean,
            (1 - momentum) * f(running_var) + momentum * var)


# ---- rounding to storage dtypes -------------------------------------------------------

_U = np.uint64


def _round_float64_bits(values, frac, emin, emax, quiet_bit):
    """float64 values rounded once, to nearest with ties to even, into a binary format of
    `frac` fraction bits and normal exponents emin..emax, working on the float64 bits (no
    detour through float32, which would round twice).  Returns uint16 bit patterns:
    overflow gives infinity, below half the smallest subnormal gives a zero of the same
    sign, NaN a quiet NaN of the same sign."""
    x = np.asarray(values, np.float64)
    bits = np.ascontiguousarray(x).view(np.uint64)
    sign = (bits >> _U(48)) & _U(0x8000)
    mag = bits & _U(0x7FFF_FFFF_FFFF_FFFF)
    e = (mag >> _U(52)).astype(np.int64) - 1023
    m = (mag & _U((1 << 52) - 1)) | _U(1 << 52)
    # Subnormal results lose one more bit per binade below emin; past 53 all is rounding.
    shift = np.clip(52 - frac + np.maximum(emin - e, 0), 1, 63).astype(np.uint64)
    r = (np.maximum(e - emin, 0).astype(np.uint64) << _U(frac)) * (e >= emin) + (m >> shift)
    rest = m & ((_U(1) << shift) - _U(1))
    half = _U(1) << (shift - _U(1))
    r = r + ((rest > half) | ((rest == half) & ((r & _U(1)) == _U(1)))).astype(np.uint64)
    inf = _U((emax - emin + 2) << frac)
    r = np.where(e > emax, inf, np.where(e < emin - frac - 1, _U(0), r))
    r = np.where(np.isnan(x), inf | _U(quiet_bit), r)
    return (r | sign).astype(np.uint16).reshape(x.shape)


def float16_bits(values):
    """IEEE binary16 bit patterns of float64 values, rounded once (nearest, ties to even).
    Agrees with NumPy's float64 -> float16 cast, which also rounds from the float64."""
    return _round_float64_bits(values, 10, -14, 15, 0x200)


def bfloat16_bits(values):
    """bfloat16 bit patterns of float64 values, rounded once (nearest, ties to even)."""
    return _round_float64_bits(values, 7, -126, 127, 0x40)


def bfloat16_values(bits):
    """float64 values of bfloat16 bit patterns (exact)."""
    wide = np.asarray(bits, np.uint16).astype(np.uint32) << np.uint32(16)
    return wide.view(np.float32).astype(np.float64)


def round_to(values, dtype):
    """float64 values rounded once to storage dtype "fp32", "fp16", "bf16" or "fp64", given
    back as float64: what an engine that computes in float64 must store."""
    x = np.asarray(values, np.float64)
    with np.errstate(over="ignore"):  # overflow to infinity is part of rounding
        if dtype == "fp32":
            return x.astype(np.float32).astype(np.float64)
        if dtype == "fp16":
            return x.astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        return bfloat16_values(bfloat16_bits(x))
    assert dtype == "fp64", dtype
    return x.copy()


def pool_output_size(size, window, stride, pre, post, ceil=False):
    """Pooled size of one spatial dim: rounded down (cuDNN frontend), or up (ceil mode)
    while the last window still starts inside the input or its pre padding."""
    span = size + pre + post - window
    if not ceil:
        return span // stride + 1
    out = -(-span // stride) + 1
    return out if (out - 1) * stride < size + pre else span // stride + 1


def _pool_windows(in_dims, out_dims, window, stride, pre, post):
    """Per output position o: (o, start, end of existing positions, lo, hi of x's part)."""
    for o in itertools.product(*(range(d) for d in out_dims)):
        start = [o[i] * stride[i] - pre[i] for i in range(len(o))]
        end = [min(start[i] + window[i], in_dims[i] + post[i]) for i in range(len(o))]
        lo = [max(s, 0) for s in start]
        hi = [min(start[i] + window[i], in_dims[i]) for i in range(len(o))]
        yield o, start, end, lo, hi


def _window_candidates(x, start, end, lo, hi, window, zero_pad):
    """[N, C, K] values of a window's candidates in row-major window order (padding as 0
    under zero_pad, left out otherwise), and each one's row-major window position."""
    box = [range(s, e) for s, e in zip(start, end)] if zero_pad else \
        [range(a, b) for a, b in zip(lo, hi)]
    vals, pos = [], []
    for p in itertools.product(*box):
        inside = all(0 <= p[i] < x.shape[2 + i] for i in range(len(p)))
        vals.append(x[(slice(None), slice(None)) + tuple(p)] if inside
                    else np.zeros(x.shape[:2]))
        pos.append(int(np.ravel_multi_index([p[i] - start[i] for i in range(len(p))], window)))
    return np.stack(vals, axis=-1), np.array(pos)


def resample_fwd(x, mode, window, stride, pre, post, zero_pad, out_dims=None):
    """(y, index) of pooling x [N, C, spatial...] in float64, written plainly: mode "max"
    (first maximum in row-major window order, NaN beats numbers: np.argmax's rule; index =
    its row-major window position), "avg_include" (sum / existing window positions) or
    "avg_exclude" (sum / positions inside x).  out_dims: the pooled spatial dims (default
    rounded down)."""
    x = np.asarray(x, np.float64)
    spatial = x.shape[2:]
    if out_dims is None:
        out_dims = [pool_output_size(spatial[i], window[i], stride[i], pre[i], post[i])
                    for i in range(len(spatial))]
    y = np.zeros(x.shape[:2] + tuple(out_dims))
    index = np.zeros(y.shape, np.int64)
    for o, start, end, lo, hi in _pool_windows(spatial, out_dims, window, stride, pre, post):
        at = (slice(None), slice(None)) + o
        if mode == "max":
            vals, pos = _window_candidates(x, start, end, lo, hi, window, zero_pad)
            k = np.argmax(vals, axis=-1)
            y[at] = np.take_along_axis(vals, k[..., None], -1)[..., 0]
            index[at] = pos[k]
        else:
            part = x[(slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))]
            count = math.prod((e - s) if mode == "avg_include" else (b - a)
                              for s, e, a, b in zip(start, end, lo, hi))
            y[at] = part.sum(axis=tuple(range(2, x.ndim))) / count
    return y, index


def resample_bwd(dy, x_shape, mode, window, stride, pre, post, index=None):
    """dx of resample_fwd in float64: dy routed to each window's maximum (`index`, the
    forward's) or spread over the window's x positions with the average's weight."""
    dy = np.asarray(dy, np.float64)
    dx = np.zeros(x_shape)
    spatial = x_shape[2:]
    for o, start, end, lo, hi in _pool_windows(spatial, dy.shape[2:], window, stride, pre, post):
        g = dy[(slice(None), slice(None)) + o]
        if mode == "max":
            for n, c in itertools.product(range(x_shape[0]), range(x_shape[1])):
                p = np.unravel_index(int(index[(n, c) + o]), window)
                p = tuple(p[i] + start[i] for i in range(len(p)))
                if all(0 <= p[i] < spatial[i] for i in range(len(p))):
                    dx[(n, c) + p] += g[n, c]
        else:
            count = math.prod((e - s) if mode == "avg_include" else (b - a)
                              for s, e, a, b in zip(start, end, lo, hi))
            box = (slice(None), slice(None)) + tuple(slice(a, b) for a, b in zip(lo, hi))
            dx[box] += (g / count)[(...,) + (None,) * len(spatial)]
    return dx
