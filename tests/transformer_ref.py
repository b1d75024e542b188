"""A pre-layernorm transformer block in float64 NumPy, forward and backward, for
tests/test_gpu_transformer_block.py:

    h1 = x + (causal_attention(split(layernorm(x) @ w_qkv + b_qkv)) @ w_o + b_o)
    y  = h1 + (gelu(layernorm(h1) @ w_1 + b_1) @ w_2 + b_2)

Activations are [B*S, E] rows (E = H * D), q / k / v the three E-column blocks of the QKV
projection, head h in columns h*D .. h*D + D of its block.  backward() is the chain rule
written out by hand as the GPU graphs run it; gradient_check() holds it to central
differences of sum(y * dy), so the hand-written chain is autograd's.
"""
import numpy as np

import references as ref

EPS = 1e-5

PARAMS = ("ln1_scale", "ln1_bias", "w_qkv", "b_qkv", "w_o", "b_o",
          "ln2_scale", "ln2_bias", "w_1", "b_1", "w_2", "b_2")


def heads(rows, b, s, h, d):
    """[B*S, H*D] rows as [B, H, S, D] (a copy; the graphs take a strided view)."""
    return rows.reshape(b, s, h, d).transpose(0, 2, 1, 3)


def rows_of(bhsd):
    """[B, H, S, D] back to [B*S, H*D] rows."""
    b, h, s, d = bhsd.shape
    return bhsd.transpose(0, 2, 1, 3).reshape(b * s, h * d)


def layernorm(x, scale, bias):
    """(y, mean, inv_variance) over each row."""
    return ref.norm_forward("layer", x, scale, bias, EPS)


def layernorm_backward(x, dy, scale, mean, inv):
    return ref.norm_backward("layer", x, dy, scale, mean, inv)


def causal(s):
    """Each query attends to itself and the keys before it (a decoder's mask)."""
    return np.tril(np.ones((s, s), bool))[None, None]


def qkv_views(qkv, b, s, h, d):
    e = h * d
    return [heads(qkv[:, i * e:(i + 1) * e], b, s, h, d) for i in range(3)]


def forward(x, p, shape):
    """Every intermediate of the block (a dict), y among them; shape = (B, S, H, D)."""
    b, s, h, d = shape
    t = {"x": x}
    t["ln1"], t["mean1"], t["inv1"] = layernorm(x, p["ln1_scale"], p["ln1_bias"])
    t["qkv"] = t["ln1"] @ p["w_qkv"] + p["b_qkv"]
    q, k, v = qkv_views(t["qkv"], b, s, h, d)
    o, t["stats"] = ref.sdpa(q, k, v, d ** -0.5, None, causal(s))
    t["o"] = rows_of(o)
    t["h1"] = t["o"] @ p["w_o"] + p["b_o"] + x
    t["ln2"], t["mean2"], t["inv2"] = layernorm(t["h1"], p["ln2_scale"], p["ln2_bias"])
    t["a"] = t["ln2"] @ p["w_1"] + p["b_1"]
    t["g"] = ref.gelu(t["a"])
    t["y"] = t["g"] @ p["w_2"] + p["b_2"] + t["h1"]
    return t


def backward(t, p, dy, shape):
    """Gradients of sum(y * dy) with respect to x ("dx") and every parameter ("d" + name),
    and the intermediate gradients the graphs pass on."""
    b, s, h, d = shape
    r = {"dy": dy}
    r["dg"] = dy @ p["w_2"].T
    r["dw_2"], r["db_2"] = t["g"].T @ dy, dy.sum(axis=0, keepdims=True)
    r["da"] = ref.gelu_backward(t["a"], r["dg"])
    r["dw_1"], r["db_1"] = t["ln2"].T @ r["da"], r["da"].sum(axis=0, keepdims=True)
    r["dln2"] = r["da"] @ p["w_1"].T
    dh1_norm, r["dln2_scale"], r["dln2_bias"] = layernorm_backward(
        t["h1"], r["dln2"], p["ln2_scale"], t["mean2"], t["inv2"])
    r["dh1"] = dy + dh1_norm  # the residual's two paths
    r["do"] = r["dh1"] @ p["w_o"].T
    r["dw_o"], r["db_o"] = t["o"].T @ r["dh1"], r["dh1"].sum(axis=0, keepdims=True)
    q, k, v = qkv_views(t["qkv"], b, s, h, d)
    grads = ref.sdpa_backward(q, k, v, heads(t["o"], b, s, h, d), heads(r["do"], b, s, h, d),
                              t["stats"], d ** -0.5, None, causal(s))
    r["dqkv"] = np.concatenate([rows_of(g) for g in grads], axis=1)
    r["dw_qkv"] = t["ln1"].T @ r["dqkv"]
    r["db_qkv"] = r["dqkv"].sum(axis=0, keepdims=True)
    r["dln1"] = r["dqkv"] @ p["w_qkv"].T
    dx_norm, r["dln1_scale"], r["dln1_bias"] = layernorm_backward(
        t["x"], r["dln1"], p["ln1_scale"], t["mean1"], t["inv1"])
    r["dx"] = r["dh1"] + dx_norm
    return r


def gradient_check(x, p, dy, shape, rng, step=1e-5):
    """Central differences of L = sum(y * dy) along a random direction of x and every
    parameter against backward()'s gradients: their relative difference (about 1e-9 when
    the chain is right)."""
    grads = backward(forward(x, p, shape), p, dy, shape)
    names = ("x",) + PARAMS
    direction = {n: rng.standard_normal((x if n == "x" else p[n]).shape) for n in names}

    def loss(sign):
        xs = x + sign * step * direction["x"]
        ps = {n: p[n] + sign * step * direction[n] for n in PARAMS}
        return float(np.sum(forward(xs, ps, shape)["y"] * dy))

    numeric = (loss(1.0) - loss(-1.0)) / (2 * step)
    analytic = sum(float(np.sum(grads["d" + n] * direction[n])) for n in names)
    return abs(numeric - analytic) / max(abs(numeric), 1e-30)
