"""pygraph's normalization family: batchnorm_inference; the forward norms (layernorm,
adalayernorm, rmsnorm, instancenorm, batchnorm), one NORM_FORWARD node each, and their
backwards, one NORM_BACKWARD node each; and genstats (per-channel sums that feed a
batchnorm).  Names, keywords and result lists are cuDNN frontend's."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from .. import _C
from ..enums import norm_forward_phase
from .args import _bool_arg, _fe_enum
from .base import GraphBase

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Operand, Tensor


class NormOps(GraphBase):
    """pygraph's normalization methods."""

    def batchnorm_inference(self, input: Tensor, mean: Tensor, inv_variance: Tensor,
                            scale: Tensor, bias: Tensor,
                            compute_data_type: Optional[DataTypeLike] = None,
                            name: Optional[str] = None) -> Tensor:
        """y = (x - mean) * inv_variance * scale + bias; the per-channel tensors are
        shaped [1, C, 1, ...] (same rank as x)."""
        op = self._op("batchnorm_inference", "batchnorm_inference", name, compute_data_type)
        return self._finish(op, [("x", input), ("mean", mean), ("inv_variance", inv_variance),
                                 ("scale", scale), ("bias", bias)], "y")

    def _norm(self, what: str, mode: int, phase: Any, inputs: Sequence[Tuple[str, Any]],
              outs: Sequence[str], compute_data_type: Optional[DataTypeLike],
              name: Optional[str], zero_centered_gamma: bool) -> List[Tensor]:
        op = self._op("norm_forward", what, name, compute_data_type)
        self._param(op, "mode", mode)
        if phase is not None:
            fe_phase = _fe_enum(phase, norm_forward_phase, op.label(), "norm_forward_phase")
            self._param(op, "phase", fe_phase - 1)
        else:
            self._param(op, "phase", _C.NORM_FWD_TRAINING)
        if _bool_arg(zero_centered_gamma, f"{op.label()}: zero_centered_gamma"):
            self._param(op, "zero_centered_gamma", True)
        return self._finish_all(op, inputs, outs)

    def _training(self, phase: Any, what: str) -> bool:
        return _fe_enum(phase, norm_forward_phase, what, "norm_forward_phase") == \
            norm_forward_phase.TRAINING

    def layernorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor, bias: Tensor,
                  epsilon: Operand, compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None,
                  zero_centered_gamma: bool = False) -> List[Optional[Tensor]]:
        """[y, mean, inv_variance]: y = (x - mean) * inv_variance * scale + bias, the
        statistics over the dims scale spans (scale [1, D...] on x [N, D...]); mean and
        inv_variance are None in the INFERENCE phase.  Like every result they take the
        intermediate data type while virtual and io_data_type once marked as outputs, so
        give them FLOAT (set_data_type) as cuDNN frontend's samples do.  epsilon is a
        tensor or a float; with zero_centered_gamma, y uses scale + 1."""
        training = self._training(norm_forward_phase, "layernorm")
        outs = self._norm("layernorm", _C.LAYER_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "mean", "inv_variance"] if training else ["y"],
                          compute_data_type, name, zero_centered_gamma)
        return [outs[0], outs[1], outs[2]] if training else [outs[0], None, None]

    def adalayernorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor,
                     bias: Tensor, epsilon: Operand,
                     compute_data_type: Optional[DataTypeLike] = None,
                     name: Optional[str] = None) -> List[Optional[Tensor]]:
        """layernorm whose scale and bias are per sample ([N, 1.., D] on x [N, S.., D])."""
        training = self._training(norm_forward_phase, "adalayernorm")
        outs = self._norm("adalayernorm", _C.ADA_LAYER_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "mean", "inv_variance"] if training else ["y"],
                          compute_data_type, name, False)
        return [outs[0], outs[1], outs[2]] if training else [outs[0], None, None]

    def rmsnorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor,
                bias: Optional[Tensor] = None, epsilon: Optional[Operand] = None,
                compute_data_type: Optional[DataTypeLike] = None,
                name: Optional[str] = None,
                zero_centered_gamma: bool = False) -> List[Optional[Tensor]]:
        """[y, inv_variance]: y = x * inv_variance * scale (+ bias), inv_variance =
        1 / sqrt(mean(x^2) + epsilon) over the dims scale spans; inv_variance is None in the
        INFERENCE phase."""
        training = self._training(norm_forward_phase, "rmsnorm")
        if epsilon is None:
            raise TypeError("rmsnorm: epsilon is required")
        outs = self._norm("rmsnorm", _C.RMS_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "inv_variance"] if training else ["y"],
                          compute_data_type, name, zero_centered_gamma)
        return [outs[0], outs[1]] if training else [outs[0], None]

    def instancenorm(self, norm_forward_phase: Any, input: Tensor, scale: Tensor,
                     bias: Tensor, epsilon: Operand,
                     compute_data_type: Optional[DataTypeLike] = None,
                     name: Optional[str] = None) -> List[Optional[Tensor]]:
        """[y, mean, inv_variance]: statistics per sample and channel over the spatial dims
        of x [N, C, spatial...]; scale and bias are [1, C, 1...]."""
        training = self._training(norm_forward_phase, "instancenorm")
        outs = self._norm("instancenorm", _C.INSTANCE_NORM, norm_forward_phase,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon)],
                          ["y", "mean", "inv_variance"] if training else ["y"],
                          compute_data_type, name, False)
        return [outs[0], outs[1], outs[2]] if training else [outs[0], None, None]

    def batchnorm(self, input: Tensor, scale: Tensor, bias: Tensor,
                  in_running_mean: Optional[Tensor] = None,
                  in_running_var: Optional[Tensor] = None,
                  epsilon: Optional[Operand] = None, momentum: Optional[Operand] = None,
                  peer_stats: Sequence[Tensor] = (),
                  compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None) -> List[Optional[Tensor]]:
        """Training batchnorm: [y, mean, inv_variance, next_running_mean,
        next_running_var], statistics per channel over batch and spatial dims; the running
        statistics (given with momentum) are updated as
        next = (1 - momentum) * running + momentum * batch statistic (variance unbiased);
        without them the last two are None.  peer_stats (multi-GPU) are not supported."""
        if peer_stats:
            raise ValueError("batchnorm: peer_stats (statistics shared across GPUs) are not "
                             "supported")
        if epsilon is None:
            raise TypeError("batchnorm: epsilon is required")
        running = in_running_mean is not None or in_running_var is not None or \
            momentum is not None
        outs = self._norm("batchnorm", _C.BATCH_NORM, None,
                          [("x", input), ("scale", scale), ("bias", bias),
                           ("epsilon", epsilon), ("exp_avg_factor", momentum),
                           ("input_running_mean", in_running_mean),
                           ("input_running_var", in_running_var)],
                          ["y", "mean", "inv_variance"] +
                          (["output_running_mean", "output_running_var"] if running else []),
                          compute_data_type, name, False)
        return outs + [None, None] if not running else list(outs)

    def _norm_backward(self, what: str, mode: int, inputs: Sequence[Tuple[str, Any]],
                       outs: Sequence[str], compute_data_type: Optional[DataTypeLike],
                       name: Optional[str], zero_centered_gamma: bool) -> List[Tensor]:
        op = self._op("norm_backward", what, name, compute_data_type)
        self._param(op, "mode", mode)
        if _bool_arg(zero_centered_gamma, f"{op.label()}: zero_centered_gamma"):
            self._param(op, "zero_centered_gamma", True)
        if mode == _C.RMS_NORM:  # cuDNN frontend's names for rmsnorm's gradients
            op.suffixes = {"dx": "DX", "dscale": "Dscale", "dbias": "Dbias"}
        return self._finish_all(op, inputs, outs)

    def layernorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                           inv_variance: Tensor,
                           compute_data_type: Optional[DataTypeLike] = None,
                           name: Optional[str] = None,
                           zero_centered_gamma: bool = False) -> List[Tensor]:
        """[dx, dscale, dbias] of layernorm's y given its gradient `grad`, the forward's
        input and scale, and the mean and inv_variance its TRAINING phase saved.  dscale
        and dbias are summed over the dims scale broadcasts on; with zero_centered_gamma
        (scale stored minus one, as in the forward) dscale is with respect to the stored
        value."""
        return self._norm_backward(
            "layernorm_backward", _C.LAYER_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, zero_centered_gamma)

    def adalayernorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                              inv_variance: Tensor,
                              compute_data_type: Optional[DataTypeLike] = None,
                              name: Optional[str] = None) -> List[Tensor]:
        """[dx, dscale, dbias] of adalayernorm (per-sample scale and bias)."""
        return self._norm_backward(
            "adalayernorm_backward", _C.ADA_LAYER_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, False)

    def rmsnorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor,
                         inv_variance: Tensor, has_dbias: bool,
                         compute_data_type: Optional[DataTypeLike] = None,
                         name: Optional[str] = None,
                         zero_centered_gamma: bool = False) -> List[Optional[Tensor]]:
        """[dx, dscale, dbias] of rmsnorm; dbias (for an rmsnorm with a bias) only with
        has_dbias, else None."""
        dbias = _bool_arg(has_dbias, "rmsnorm_backward: has_dbias")
        outs = self._norm_backward(
            "rmsnorm_backward", _C.RMS_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("inv_variance", inv_variance)],
            ["dx", "dscale", "dbias"] if dbias else ["dx", "dscale"],
            compute_data_type, name, zero_centered_gamma)
        return list(outs) if dbias else [outs[0], outs[1], None]

    def instancenorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor,
                              mean: Optional[Tensor] = None,
                              inv_variance: Optional[Tensor] = None,
                              compute_data_type: Optional[DataTypeLike] = None,
                              name: Optional[str] = None) -> List[Tensor]:
        """[dx, dscale, dbias] of instancenorm.  mean and inv_variance (the forward's
        saved statistics, [N, C, 1...]) are needed here: hipdnn does not recompute them."""
        if mean is None or inv_variance is None:
            raise ValueError("instancenorm_backward: give mean and inv_variance (the "
                             "statistics instancenorm's TRAINING phase returns); hipdnn does "
                             "not recompute them")
        return self._norm_backward(
            "instancenorm_backward", _C.INSTANCE_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, False)

    def batchnorm_backward(self, grad: Tensor, input: Tensor, scale: Tensor, mean: Tensor,
                           inv_variance: Tensor, peer_stats: Sequence[Tensor] = (),
                           compute_data_type: Optional[DataTypeLike] = None,
                           name: Optional[str] = None) -> List[Tensor]:
        """[dx, dscale, dbias] of training batchnorm, from the mean and inv_variance it
        saved ([1, C, 1...]); dscale and dbias are per channel.  peer_stats (multi-GPU)
        are not supported."""
        if peer_stats:
            raise ValueError("batchnorm_backward: peer_stats (statistics shared across GPUs) "
                             "are not supported")
        return self._norm_backward(
            "batchnorm_backward", _C.BATCH_NORM,
            [("x", input), ("dy", grad), ("scale", scale), ("mean", mean),
             ("inv_variance", inv_variance)], ["dx", "dscale", "dbias"],
            compute_data_type, name, False)

    def genstats(self, input: Tensor, compute_data_type: Optional[DataTypeLike] = None,
                 name: Optional[str] = None) -> List[Tensor]:
        """[sum, sq_sum]: per channel (dim 1) sums of input and of its squares, shaped
        [1, C, 1...] (set FLOAT on them, as on any statistic); cuDNN fuses it after a
        convolution to feed a batchnorm."""
        op = self._op("genstats", "genstats", name, compute_data_type)
        return self._finish_all(op, [("x", input)], ["sum", "sq_sum"])
