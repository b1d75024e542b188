"""pygraph's attention family: ``sdpa`` and ``sdpa_backward`` (scaled dot-product
attention), with cuDNN frontend's keywords.  Both take the same masks, resolved as cuDNN
frontend resolves them in ``_sdpa_params``, ALiBi (use_alibi_mask) and dropout
(``dropout=(probability, seed, offset)``) included; what hipdnn does not support yet (a
dropout mask tensor, block masks, score modifiers) is recorded
on the node:
``validate()`` passes, as cuDNN frontend's does, and ``create_execution_plans()`` raises
FeatureNotSupportedError naming it (where cuDNN frontend code looks for a graph it cannot
run)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

import numpy as np

from ..enums import data_type, diagonal_alignment as _diagonal_alignment
from .args import _bool_arg
from .base import GraphBase
from .nodes import _Op

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Operand, Tensor


def _dropout_arg(dropout: Any, what: str) -> Optional[Tuple[float, Any, Any]]:
    """cuDNN frontend's ``dropout``: None, or (probability, seed, offset) with the
    probability a number in [0, 1) and seed, offset tensors of one int32 / int64 value (by
    value or in device memory); its other form, (mask, scale), is not supported yet (None
    back, the caller records it)."""
    if dropout is None:
        return None
    if not isinstance(dropout, tuple) or len(dropout) not in (2, 3):
        raise ValueError(f"{what}: dropout must be a tuple (probability, seed, offset) or "
                         f"(mask, scale), got {dropout!r}")
    if len(dropout) == 2:
        return None
    prob, seed, offset = dropout
    if isinstance(prob, bool) or not isinstance(prob, (int, float, np.integer, np.floating)) \
            or not 0.0 <= float(prob) < 1.0:
        raise ValueError(f"{what}: the dropout probability must be a number in [0, 1), got "
                         f"{prob!r}")
    if seed is None or offset is None:
        raise ValueError(f"{what}: dropout needs a seed and an offset tensor")
    return float(prob), seed, offset


def sdpa_cudnn_limits(op: _Op) -> Optional[str]:
    """What cuDNN frontend's validate() refuses in an attention node whose masks leave
    whole query rows without keys: bottom-right alignment, or a left bound, with
    s_q > s_kv and no padding mask.  Its tests' references are undefined there (NaN
    rows, or a zeroed query), and code written for cuDNN never builds such a graph, so
    pygraph refuses it too; slicing q to s_q <= s_kv or giving seq_len_q / seq_len_kv
    avoids it."""
    params = {attr: values for attr, _typ, values in op.params}

    def get(name: str) -> Any:
        return params.get(op.info.param(name).attr)

    if get("use_padding_mask"):
        return None
    ports = {port: t for port, _attr, t in op.inputs}
    s_q, s_kv = (ports[p].get_dim() for p in ("q", "k"))
    if len(s_q) != 4 or len(s_kv) != 4 or s_q[2] <= s_kv[2]:
        return None
    bottom_right = get("diagonal_alignment") == int(_diagonal_alignment.BOTTOM_RIGHT) \
        and get("right_bound") is not None
    if not bottom_right and get("left_bound") is None:
        return None
    what = "bottom-right causal mask" if bottom_right else "sliding window (left bound)"
    return (f"{op.op}: a {what} with s_q {s_q[2]} > s_kv {s_kv[2]} and no padding mask "
            "leaves query rows without keys; cuDNN frontend does not support it either "
            "(slice q to s_q <= s_kv, or use a padding mask)")


class SdpaOps(GraphBase):
    """pygraph's attention methods."""

    def _sdpa_params(self, op: _Op, what: str, use_padding_mask: bool, use_causal_mask: bool,
                     use_causal_mask_bottom_right: bool, sliding_window_length: Optional[int],
                     diagonal_alignment: Any, diagonal_band_left_bound: Optional[int],
                     diagonal_band_right_bound: Optional[int], use_alibi_mask: bool,
                     unsupported: Sequence[Tuple[str, Any]]) -> None:
        """The mask parameters both attention ops take, as cuDNN frontend resolves them:
        the causal flags are a right bound of 0 at their alignment, a sliding window is a
        left bound."""
        for arg, value in unsupported:
            if value is not None and value is not False:
                op.lacks.append(f"{what}: {arg} is not supported by hipdnn yet")
        causal = _bool_arg(use_causal_mask, f"{what}: use_causal_mask")
        causal_br = _bool_arg(use_causal_mask_bottom_right,
                              f"{what}: use_causal_mask_bottom_right")
        if causal and causal_br:
            raise ValueError(f"{what}: use_causal_mask and use_causal_mask_bottom_right cannot "
                             "both be true")
        if (causal or causal_br) and diagonal_band_right_bound is not None:
            raise ValueError(f"{what}: a causal mask and diagonal_band_right_bound cannot be "
                             "set at the same time")
        if sliding_window_length is not None and diagonal_band_left_bound is not None:
            raise ValueError(f"{what}: sliding_window_length and diagonal_band_left_bound "
                             "cannot be set at the same time")
        if isinstance(diagonal_alignment, bool) or \
                not isinstance(diagonal_alignment, (int, np.integer)) or \
                int(diagonal_alignment) not in (0, 1):
            raise ValueError(f"{what}: diagonal_alignment must be a hipdnn.diagonal_alignment, "
                             f"got {diagonal_alignment!r}")
        alignment = int(diagonal_alignment)
        right = diagonal_band_right_bound
        if causal or causal_br:
            right = 0
            alignment = int(_diagonal_alignment.BOTTOM_RIGHT if causal_br
                            else _diagonal_alignment.TOP_LEFT)
        left = sliding_window_length if sliding_window_length is not None \
            else diagonal_band_left_bound
        for arg, value, low in (("left bound (sliding_window_length)", left, 1),
                                ("diagonal_band_right_bound", right, 0)):
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, np.integer)) or value < low):
                raise ValueError(f"{what}: {arg} must be an int >= {low}, got {value!r}")
        self._param(op, "diagonal_alignment", alignment)
        if left is not None:
            self._param(op, "left_bound", int(left))
        if right is not None:
            self._param(op, "right_bound", int(right))
        if _bool_arg(use_padding_mask, f"{what}: use_padding_mask"):
            self._param(op, "use_padding_mask", True)
        if _bool_arg(use_alibi_mask, f"{what}: use_alibi_mask"):
            self._param(op, "use_alibi_mask", True)

    def sdpa(self, q: Tensor, k: Tensor, v: Tensor, is_inference: Optional[bool] = None,
             attn_scale: Optional[Operand] = None, bias: Optional[Tensor] = None,
             block_mask: Any = None, use_alibi_mask: bool = False,
             use_padding_mask: bool = False, seq_len_q: Optional[Tensor] = None,
             seq_len_kv: Optional[Tensor] = None, use_causal_mask: bool = False,
             use_causal_mask_bottom_right: bool = False,
             sliding_window_length: Optional[int] = None,
             diagonal_alignment: Any = _diagonal_alignment.TOP_LEFT,
             diagonal_band_left_bound: Optional[int] = None,
             diagonal_band_right_bound: Optional[int] = None, dropout: Any = None,
             rng_dump: Any = None, paged_attention_k_table: Any = None,
             paged_attention_v_table: Any = None, paged_attention_max_seq_len_kv: Any = None,
             compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None,
             score_mod: Any = None, generate_stats: Optional[bool] = None,
             implementation: Any = None, score_max: Any = None, score_sum_exp: Any = None,
             sink_token: Any = None, unfuse_fma: bool = False) -> List[Optional[Tensor]]:
        """[O, Stats]: scaled dot-product attention, O = softmax(q k^T * attn_scale + bias,
        masked) v per batch and query head, q [B, H_q, S_q, D], k [B, H_k, S_kv, D],
        v [B, H_v, S_kv, D_v] (BSHD and other layouts through strides; H_q a multiple of
        H_k and H_v: GQA, MQA).  Stats (generate_stats=True, or is_inference=False) is the
        log-sum-exp of each score row, [B, H_q, S_q, 1] float32, for sdpa_backward; else
        None.  Masks: causal (top-left or bottom-right), a sliding window or any band
        (diagonal_band_left_bound / right_bound at diagonal_alignment), padding through
        seq_len_q / seq_len_kv ([B, 1, 1, 1] int32), additive bias, ALiBi
        (use_alibi_mask: slope_h * (j - i) added to the scores, slopes as in
        docs/python_api.md).  Paged K / V caches: k and v [blocks, H, block_size, D] read
        through paged_attention_k_table / _v_table (int32 [B, 1, blocks a sequence, 1]:
        key j of sample b is row j % block_size of block table[b, 0, j // block_size]),
        S_kv = paged_attention_max_seq_len_kv.  A row that attends to nothing gives 0 and Stats -inf.
        dropout=(probability, seed, offset): kept p_ij scaled by 1 / (1 - probability), the
        rest 0, keep_ij by Philox4x32-10 of the seed and offset (one int32 / int64 each) at
        (b, h, i, j), Stats not dropped; rng_dump (float32 [B, H_q, S_q, S_kv]) gets keep_ij
        as 1.0 / 0.0; sdpa_backward given the same dropout draws the same mask.
        Bottom-right alignment or a left bound with S_q > S_kv needs a padding mask, as in
        cuDNN frontend.  A (mask, scale) dropout, block masks and score modifiers are not
        supported (create_execution_plans() raises FeatureNotSupportedError)."""
        what = "sdpa"
        if (generate_stats is None) == (is_inference is None):
            raise ValueError("sdpa: exactly one of generate_stats and is_inference must be set "
                             "(prefer generate_stats)")
        stats = _bool_arg(generate_stats, "sdpa: generate_stats") if generate_stats is not None \
            else not _bool_arg(is_inference, "sdpa: is_inference")
        op = self._op("sdpa", what, name, compute_data_type)
        drop = _dropout_arg(dropout, what)
        self._sdpa_params(op, what, use_padding_mask, use_causal_mask,
                          use_causal_mask_bottom_right, sliding_window_length,
                          diagonal_alignment, diagonal_band_left_bound,
                          diagonal_band_right_bound, use_alibi_mask,
                          [("block_mask", block_mask),
                           ("dropout (mask, scale)", dropout if drop is None else None),
                           ("score_mod", score_mod), ("score_max", score_max),
                           ("score_sum_exp", score_sum_exp), ("sink_token", sink_token)])
        max_kv = paged_attention_max_seq_len_kv
        if max_kv is not None:
            if isinstance(max_kv, bool) or not isinstance(max_kv, (int, np.integer)) or \
                    max_kv < 1:
                raise ValueError("sdpa: paged_attention_max_seq_len_kv must be an int >= 1, "
                                 f"got {max_kv!r}")
            self._param(op, "max_seq_len_kv", int(max_kv))
        if drop is not None:
            self._param(op, "dropout_probability", drop[0])
        if rng_dump is not None:
            if drop is None:
                raise ValueError("sdpa: rng_dump is the dropout mask; it needs "
                                 "dropout=(probability, seed, offset)")
            self._check_input(rng_dump, op, "rng_dump")
        outs = self._finish_all(op, [("q", q), ("k", k), ("v", v), ("attn_scale", attn_scale),
                                     ("bias", bias), ("seq_len_q", seq_len_q),
                                     ("seq_len_kv", seq_len_kv),
                                     ("page_table_k", paged_attention_k_table),
                                     ("page_table_v", paged_attention_v_table),
                                     ("seed", drop[1] if drop else None),
                                     ("offset", drop[2] if drop else None)],
                                ["o", "stats"] if stats else ["o"])
        if rng_dump is not None:  # the user's tensor: the mask is written there
            op.outputs.append(("rng_dump", op.info.output("rng_dump").attr, rng_dump))
        if stats:
            outs[1].set_data_type(data_type.FLOAT)
            return [outs[0], outs[1]]
        return [outs[0], None]

    def sdpa_backward(self, q: Tensor, k: Tensor, v: Tensor, o: Tensor, dO: Tensor,
                      stats: Tensor, attn_scale: Optional[Operand] = None,
                      bias: Optional[Tensor] = None, dBias: Any = None,
                      use_alibi_mask: bool = False, use_padding_mask: bool = False,
                      seq_len_q: Optional[Tensor] = None, seq_len_kv: Optional[Tensor] = None,
                      max_total_seq_len_q: Any = None, max_total_seq_len_kv: Any = None,
                      use_causal_mask: bool = False, use_causal_mask_bottom_right: bool = False,
                      sliding_window_length: Optional[int] = None,
                      diagonal_alignment: Any = _diagonal_alignment.TOP_LEFT,
                      diagonal_band_left_bound: Optional[int] = None,
                      diagonal_band_right_bound: Optional[int] = None, dropout: Any = None,
                      rng_dump: Any = None, use_deterministic_algorithm: bool = False,
                      compute_data_type: Optional[DataTypeLike] = None,
                      name: Optional[str] = None, score_mod: Any = None,
                      score_mod_bprop: Any = None, sink_token: Any = None,
                      dSink_token: Any = None) -> List[Tensor]:
        """[dQ, dK, dV] of sdpa's O given its gradient dO, the forward's inputs, O and
        Stats, and the same attn_scale, bias and masks; dK and dV sum over the query
        heads that share a key / value head.  dropout=(probability, seed, offset) as the
        forward's draws the forward's mask.  The reference engine's sums are in a fixed
        order, so use_deterministic_algorithm changes nothing."""
        what = "sdpa_backward"
        op = self._op("sdpa_backward", what, name, compute_data_type)
        drop = _dropout_arg(dropout, what)
        self._sdpa_params(op, what, use_padding_mask, use_causal_mask,
                          use_causal_mask_bottom_right, sliding_window_length,
                          diagonal_alignment, diagonal_band_left_bound,
                          diagonal_band_right_bound, use_alibi_mask,
                          [("dBias", dBias),
                           ("dropout (mask, scale)", dropout if drop is None else None), ("rng_dump", rng_dump),
                           ("score_mod", score_mod), ("score_mod_bprop", score_mod_bprop),
                           ("sink_token", sink_token), ("dSink_token", dSink_token)])
        _bool_arg(use_deterministic_algorithm, "sdpa_backward: use_deterministic_algorithm")
        for arg, value in (("max_total_seq_len_q", max_total_seq_len_q),
                           ("max_total_seq_len_kv", max_total_seq_len_kv)):
            # cuDNN's bound on a ragged batch's tokens (a workspace hint): checked, unused
            if value is not None and (isinstance(value, bool) or
                                      not isinstance(value, (int, np.integer)) or value < 1):
                raise ValueError(f"sdpa_backward: {arg} must be an int >= 1, got {value!r}")
        if drop is not None:
            self._param(op, "dropout_probability", drop[0])
        return self._finish_all(op, [("q", q), ("k", k), ("v", v), ("o", o), ("d_o", dO),
                                     ("stats", stats), ("attn_scale", attn_scale),
                                     ("bias", bias), ("seq_len_q", seq_len_q),
                                     ("seq_len_kv", seq_len_kv),
                                     ("seed", drop[1] if drop else None),
                                     ("offset", drop[2] if drop else None)],
                                ["dq", "dk", "dv"])
