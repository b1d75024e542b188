"""pygraph's pointwise op family: cuDNN frontend's methods, names and keywords.

Each method is one pointwise node (``_pointwise``); pygraph takes the methods from the
mixin ``PointwiseOps``.  Operands are tensors of the graph or Python floats (pass-by-value
scalars) and broadcast NumPy-style.  Which table port each
operand fills follows cuDNN's backend: forward modes take x (then b, then the mask t) and
give y; the ``_backward`` modes take x (the forward input, cuDNN frontend's ``input``) and
dy (``loss``) and give dx.  docs/python.md lists the definitions and special values.
"""
from __future__ import annotations

import inspect
import numbers
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import _ops
from .base import GraphBase

if TYPE_CHECKING:
    from ..pygraph import DataTypeLike, Operand, Tensor

# (table port, the method's keyword, value), in the order the method takes them.
Operands = Sequence[Tuple[str, str, Any]]


def operand_ports(mode_name: str) -> Tuple[str, ...]:
    """The table ports of a mode's operands in the order its method takes them: cuDNN
    frontend's _backward methods take loss (dy) before input (x)."""
    return ("dy", "x") if mode_name.endswith("_backward") else ("x", "b", "t")


def user_ports(mode: int) -> Dict[str, str]:
    """The keywords cuDNN frontend gives a mode's table ports (a deserialized node's
    listing uses them): the operand parameters of the method of the mode's name, so the
    method is the one place that names them."""
    name = _ops.POINTWISE_NAMES.get(mode, "")
    method = getattr(PointwiseOps, name, None)
    if method is None:
        return {}
    params = list(inspect.signature(method).parameters)[1:1 + _ops.POINTWISE_ARITY[name]]
    return dict(zip(operand_ports(name), params))


def _float(op: str, what: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"{op}: {what} must be a float, got {type(v).__name__}")
    return float(v)


def _params(op: str, given: Sequence[Tuple[str, str, Any]]) -> List[Tuple[str, float]]:
    """(table parameter, keyword, value) -> the parameters set (None: the default)."""
    return [(p, _float(op, what, v)) for p, what, v in given if v is not None]


def _node(g: "PointwiseOps", op: str, mode: str, operands: Operands,
          compute_data_type: Optional[DataTypeLike], name: Optional[str],
          params: Sequence[Tuple[str, Any]] = ()) -> Tensor:
    return g._pointwise(op, mode, operands, compute_data_type, name, params)


def _max_min(self: "PointwiseOps", op: str, input0: Optional[Operand], input1: Optional[Operand],
             a: Optional[Operand], b: Optional[Operand],
             compute_data_type: Optional[DataTypeLike], name: Optional[str]) -> Tensor:
    """max/min operands: cuDNN frontend's input0/input1, or a/b as the other ops."""
    if a is not None or b is not None:
        if input0 is not None or input1 is not None:
            raise TypeError(f"{op}: give input0 and input1, or a and b, not both")
        return _node(self, op, op, [("x", "a", a), ("b", "b", b)], compute_data_type, name)
    return _node(self, op, op, [("x", "input0", input0), ("b", "input1", input1)],
                 compute_data_type, name)


def _backward(self: "PointwiseOps", op: str, loss: Operand, input: Operand,
              compute_data_type: Optional[DataTypeLike], name: Optional[str],
              params: Sequence[Tuple[str, float]] = ()) -> Tensor:
    # cuDNN frontend's IN_0 is loss, IN_1 input: the order given here
    return _node(self, op, op, [("dy", "loss", loss), ("x", "input", input)], compute_data_type,
                 name, params)


class PointwiseOps(GraphBase):
    """pygraph's pointwise methods."""

    def _pointwise(self, opname: str, mode: str, operands: Sequence[Tuple[str, str, Any]],
                   compute_data_type: Optional[DataTypeLike], name: Optional[str],
                   params: Sequence[Tuple[str, Any]] = ()) -> Tensor:
        """One pointwise node of `mode` (an _ops.POINTWISE_MODES name), shown as `opname`:
        operands are (table port, the method's keyword, value) in the method's order,
        which names unnamed inputs IN_0, IN_1, ... as cuDNN frontend does; the result is
        y, or dx for the _backward modes (cuDNN's ports)."""
        op = self._op("pointwise", opname, name, compute_data_type)
        self._param(op, "mode", _ops.POINTWISE_MODES[mode])
        for pname, value in params:
            self._param(op, pname, value)
        out = "dx" if mode.endswith("_backward") else "y"
        op.suffixes = {port: f"IN_{i}" for i, (port, _u, _v) in enumerate(operands)}
        op.suffixes[out] = "OUT_0"
        y = self._finish(op, [(port, v) for port, _u, v in operands], out,
                         [user for _p, user, _v in operands])
        if mode.startswith(("cmp_", "logical_")):
            y._a["boolean_result"] = True
        return y

    # -- arithmetic --
    def add(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """a + b with NumPy broadcasting; b may be a Python float."""
        return _node(self, "add", "add", [("x", "a", a), ("b", "b", b)], compute_data_type, name)

    def sub(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """a - b with NumPy broadcasting."""
        return _node(self, "sub", "sub", [("x", "a", a), ("b", "b", b)], compute_data_type, name)

    def mul(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """a * b with NumPy broadcasting."""
        return _node(self, "mul", "mul", [("x", "a", a), ("b", "b", b)], compute_data_type, name)

    def div(self, a: Operand, b: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """a / b with NumPy broadcasting."""
        return _node(self, "div", "div", [("x", "a", a), ("b", "b", b)], compute_data_type, name)

    def add_square(self, a: Operand, b: Operand,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """a + b * b with NumPy broadcasting (cuDNN's ADD_SQUARE)."""
        return _node(self, "add_square", "add_square", [("x", "a", a), ("b", "b", b)],
                     compute_data_type, name)

    def bias(self, input: Operand, bias: Operand,
             compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """input + bias with NumPy broadcasting (cuDNN frontend's name for add)."""
        return _node(self, "bias", "add", [("x", "input", input), ("b", "bias", bias)],
                     compute_data_type, name)

    def scale(self, input: Operand, scale: Operand,
              compute_data_type: Optional[DataTypeLike] = None,
              name: Optional[str] = None) -> Tensor:
        """input * scale with NumPy broadcasting (cuDNN frontend's name for mul)."""
        return _node(self, "scale", "mul", [("x", "input", input), ("b", "scale", scale)],
                     compute_data_type, name)

    def max(self, input0: Optional[Operand] = None, input1: Optional[Operand] = None,
            compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None, *,
            a: Optional[Operand] = None, b: Optional[Operand] = None) -> Tensor:
        """Elementwise maximum (IEEE 754-2019: NaN wins, -0 < +0) with NumPy broadcasting;
        the operands are input0 and input1 (or a and b)."""
        return _max_min(self, "max", input0, input1, a, b, compute_data_type, name)

    def min(self, input0: Optional[Operand] = None, input1: Optional[Operand] = None,
            compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None, *,
            a: Optional[Operand] = None, b: Optional[Operand] = None) -> Tensor:
        """Elementwise minimum (IEEE 754-2019: NaN wins, -0 < +0) with NumPy broadcasting;
        the operands are input0 and input1 (or a and b)."""
        return _max_min(self, "min", input0, input1, a, b, compute_data_type, name)

    def mod(self, input0: Operand, input1: Operand,
            compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None) -> Tensor:
        """The floating-point remainder of input0 / input1, with input0's sign (C's fmod,
        NumPy's fmod): fmod(x, 0) and fmod(inf, y) are NaN, fmod(x, inf) is x."""
        return _node(self, "mod", "mod", [("x", "input0", input0), ("b", "input1", input1)],
                     compute_data_type, name)

    def pow(self, input0: Operand, input1: Operand,
            compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None) -> Tensor:
        """input0 to the power input1 (C's pow and its special cases: pow(x, 0) = 1,
        pow(1, y) = 1, a negative base to a non-integer power is NaN)."""
        return _node(self, "pow", "pow", [("x", "input0", input0), ("b", "input1", input1)],
                     compute_data_type, name)

    def sqrt(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """Square root (NaN below 0, sqrt(-0) = -0)."""
        return _node(self, "sqrt", "sqrt", [("x", "input", input)], compute_data_type, name)

    def rsqrt(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
              name: Optional[str] = None) -> Tensor:
        """1 / sqrt(input): rsqrt(+-0) = +-inf, rsqrt(inf) = 0, NaN below 0."""
        return _node(self, "rsqrt", "rsqrt", [("x", "input", input)], compute_data_type, name)

    def reciprocal(self, input: Operand,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """1 / input: reciprocal(+-0) = +-inf."""
        return _node(self, "reciprocal", "reciprocal", [("x", "input", input)], compute_data_type,
                     name)

    def abs(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """|input|."""
        return _node(self, "abs", "abs", [("x", "input", input)], compute_data_type, name)

    def neg(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """-input."""
        return _node(self, "neg", "neg", [("x", "input", input)], compute_data_type, name)

    def ceil(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """The smallest integer not below input (ceil(-0.5) = -0)."""
        return _node(self, "ceil", "ceil", [("x", "input", input)], compute_data_type, name)

    def floor(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
              name: Optional[str] = None) -> Tensor:
        """The largest integer not above input."""
        return _node(self, "floor", "floor", [("x", "input", input)], compute_data_type, name)

    def exp(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """e^input."""
        return _node(self, "exp", "exp", [("x", "input", input)], compute_data_type, name)

    def log(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """The natural logarithm: log(0) = -inf, NaN below 0."""
        return _node(self, "log", "log", [("x", "input", input)], compute_data_type, name)

    def sin(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """sin(input), input in radians."""
        return _node(self, "sin", "sin", [("x", "input", input)], compute_data_type, name)

    def cos(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """cos(input), input in radians."""
        return _node(self, "cos", "cos", [("x", "input", input)], compute_data_type, name)

    def tan(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """tan(input), input in radians."""
        return _node(self, "tan", "tan", [("x", "input", input)], compute_data_type, name)

    def erf(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None) -> Tensor:
        """The error function: erf(+-inf) = +-1."""
        return _node(self, "erf", "erf", [("x", "input", input)], compute_data_type, name)

    def identity(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                 name: Optional[str] = None) -> Tensor:
        """A copy of input (converting its data type if the output's differs)."""
        return _node(self, "identity", "identity", [("x", "input", input)], compute_data_type,
                     name)

    # -- activations --
    def sigmoid(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                name: Optional[str] = None) -> Tensor:
        """1 / (1 + exp(-input))."""
        return _node(self, "sigmoid", "sigmoid", [("x", "input", input)], compute_data_type, name)

    def tanh(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """tanh(input)."""
        return _node(self, "tanh", "tanh", [("x", "input", input)], compute_data_type, name)

    def gelu(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """input * (1 + erf(input / sqrt(2))) / 2 (the exact form)."""
        return _node(self, "gelu", "gelu", [("x", "input", input)], compute_data_type, name)

    def gelu_approx_tanh(self, input: Operand,
                         compute_data_type: Optional[DataTypeLike] = None,
                         name: Optional[str] = None) -> Tensor:
        """input * (1 + tanh(sqrt(2/pi) (input + 0.044715 input^3))) / 2, the tanh
        approximation of gelu."""
        return _node(self, "gelu_approx_tanh", "gelu_approx_tanh", [("x", "input", input)],
                     compute_data_type, name)

    def relu(self, input: Operand, negative_slope: Optional[float] = None,
             lower_clip: Optional[float] = None, upper_clip: Optional[float] = None,
             compute_data_type: Optional[DataTypeLike] = None,
             name: Optional[str] = None) -> Tensor:
        """max(x, lower_clip) (0 by default), capped at upper_clip; with negative_slope,
        values below lower_clip follow that slope (leaky relu)."""
        params = _params("relu", [("relu_lower_clip_slope", "negative_slope", negative_slope),
                                  ("relu_lower_clip", "lower_clip", lower_clip),
                                  ("relu_upper_clip", "upper_clip", upper_clip)])
        return _node(self, "relu", "relu", [("x", "input", input)], compute_data_type, name, params)

    def leaky_relu(self, input: Operand, negative_slope: float,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """x for x >= 0, negative_slope * x below (relu with a negative_slope)."""
        if negative_slope is None:
            raise TypeError("leaky_relu: negative_slope is required")
        params = _params("leaky_relu",
                         [("relu_lower_clip_slope", "negative_slope", negative_slope)])
        return _node(self, "leaky_relu", "relu", [("x", "input", input)], compute_data_type, name,
                     params)

    def elu(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
            name: Optional[str] = None, *, elu_alpha: Optional[float] = None) -> Tensor:
        """input for input > 0, elu_alpha * (exp(input) - 1) below (elu_alpha: 1 by default;
        cuDNN frontend's Python method has no keyword for it, its C++ set_elu_alpha does)."""
        params = _params("elu", [("elu_alpha", "elu_alpha", elu_alpha)])
        return _node(self, "elu", "elu", [("x", "input", input)], compute_data_type, name, params)

    def softplus(self, input: Operand, compute_data_type: Optional[DataTypeLike] = None,
                 name: Optional[str] = None, *, softplus_beta: Optional[float] = None) -> Tensor:
        """log(1 + exp(softplus_beta * input)) / softplus_beta (softplus_beta: 1 by default,
        finite and not 0; cuDNN frontend's C++ set_softplus_beta)."""
        params = _params("softplus", [("softplus_beta", "softplus_beta", softplus_beta)])
        return _node(self, "softplus", "softplus", [("x", "input", input)], compute_data_type, name,
                     params)

    def swish(self, input: Operand, swish_beta: Optional[float] = None,
              compute_data_type: Optional[DataTypeLike] = None,
              name: Optional[str] = None) -> Tensor:
        """input * sigmoid(swish_beta * input) (swish_beta: 1 by default, SiLU)."""
        params = _params("swish", [("swish_beta", "swish_beta", swish_beta)])
        return _node(self, "swish", "swish", [("x", "input", input)], compute_data_type, name,
                     params)

    # -- backward activations: dx = loss * f'(input) --
    def relu_backward(self, loss: Operand, input: Operand,
                      negative_slope: Optional[float] = None, lower_clip: Optional[float] = None,
                      upper_clip: Optional[float] = None,
                      compute_data_type: Optional[DataTypeLike] = None,
                      name: Optional[str] = None) -> Tensor:
        """The gradient through relu: loss where lower_clip < input < upper_clip,
        negative_slope * loss at or below lower_clip (exactly 0 without a slope), 0 at or
        above upper_clip."""
        params = _params("relu_backward",
                         [("relu_lower_clip_slope", "negative_slope", negative_slope),
                          ("relu_lower_clip", "lower_clip", lower_clip),
                          ("relu_upper_clip", "upper_clip", upper_clip)])
        return _backward(self, "relu_backward", loss, input, compute_data_type, name, params)

    def leaky_relu_backward(self, loss: Operand, input: Operand, negative_slope: float,
                            compute_data_type: Optional[DataTypeLike] = None,
                            name: Optional[str] = None) -> Tensor:
        """The gradient through leaky_relu: loss for input > 0, negative_slope * loss below."""
        if negative_slope is None:
            raise TypeError("leaky_relu_backward: negative_slope is required")
        params = _params("leaky_relu_backward",
                         [("relu_lower_clip_slope", "negative_slope", negative_slope)])
        return _node(self, "leaky_relu_backward", "relu_backward",
                     [("dy", "loss", loss), ("x", "input", input)], compute_data_type, name, params)

    def tanh_backward(self, loss: Operand, input: Operand,
                      compute_data_type: Optional[DataTypeLike] = None,
                      name: Optional[str] = None) -> Tensor:
        """loss * (1 - tanh(input)^2), input being tanh's input."""
        return _backward(self, "tanh_backward", loss, input, compute_data_type, name)

    def sigmoid_backward(self, loss: Operand, input: Operand,
                         compute_data_type: Optional[DataTypeLike] = None,
                         name: Optional[str] = None) -> Tensor:
        """loss * s * (1 - s), s = sigmoid(input)."""
        return _backward(self, "sigmoid_backward", loss, input, compute_data_type, name)

    def elu_backward(self, loss: Operand, input: Operand,
                     compute_data_type: Optional[DataTypeLike] = None, name: Optional[str] = None,
                     *, elu_alpha: Optional[float] = None) -> Tensor:
        """loss for input > 0, loss * elu_alpha * exp(input) below."""
        params = _params("elu_backward", [("elu_alpha", "elu_alpha", elu_alpha)])
        return _backward(self, "elu_backward", loss, input, compute_data_type, name, params)

    def gelu_backward(self, loss: Operand, input: Operand,
                      compute_data_type: Optional[DataTypeLike] = None,
                      name: Optional[str] = None) -> Tensor:
        """loss * (P(input) + input * phi(input)): exact gelu's derivative (P the normal CDF,
        phi its density)."""
        return _backward(self, "gelu_backward", loss, input, compute_data_type, name)

    def gelu_approx_tanh_backward(self, loss: Operand, input: Operand,
                                  compute_data_type: Optional[DataTypeLike] = None,
                                  name: Optional[str] = None) -> Tensor:
        """loss times the derivative of gelu_approx_tanh at input."""
        return _backward(self, "gelu_approx_tanh_backward", loss, input, compute_data_type, name)

    def softplus_backward(self, loss: Operand, input: Operand,
                          compute_data_type: Optional[DataTypeLike] = None,
                          name: Optional[str] = None, *,
                          softplus_beta: Optional[float] = None) -> Tensor:
        """loss * sigmoid(softplus_beta * input)."""
        params = _params("softplus_backward", [("softplus_beta", "softplus_beta", softplus_beta)])
        return _backward(self, "softplus_backward", loss, input, compute_data_type, name, params)

    def swish_backward(self, loss: Operand, input: Operand,
                       compute_data_type: Optional[DataTypeLike] = None,
                       swish_beta: Optional[float] = None, name: Optional[str] = None) -> Tensor:
        """loss * (s + b x s (1 - s)), s = sigmoid(b x), b = swish_beta (1 by default); the
        keywords in cuDNN frontend's order (compute_data_type before swish_beta)."""
        params = _params("swish_backward", [("swish_beta", "swish_beta", swish_beta)])
        return _backward(self, "swish_backward", loss, input, compute_data_type, name, params)

    # -- comparisons, logic, selection, indices --
    def cmp_eq(self, input: Operand, comparison: Operand,
               compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """1 where input == comparison, else 0 (NaN compares unequal to everything); a
        BOOLEAN output unless its data type is set."""
        return _node(self, "cmp_eq", "cmp_eq",
                     [("x", "input", input), ("b", "comparison", comparison)], compute_data_type,
                     name)

    def cmp_neq(self, input: Operand, comparison: Operand,
                compute_data_type: Optional[DataTypeLike] = None,
                name: Optional[str] = None) -> Tensor:
        """1 where input != comparison, else 0 (NaN compares unequal to everything); a
        BOOLEAN output unless its data type is set."""
        return _node(self, "cmp_neq", "cmp_neq",
                     [("x", "input", input), ("b", "comparison", comparison)], compute_data_type,
                     name)

    def cmp_gt(self, input: Operand, comparison: Operand,
               compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """1 where input > comparison, else 0 (NaN compares unequal to everything); a
        BOOLEAN output unless its data type is set."""
        return _node(self, "cmp_gt", "cmp_gt",
                     [("x", "input", input), ("b", "comparison", comparison)], compute_data_type,
                     name)

    def cmp_ge(self, input: Operand, comparison: Operand,
               compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """1 where input >= comparison, else 0 (NaN compares unequal to everything); a
        BOOLEAN output unless its data type is set."""
        return _node(self, "cmp_ge", "cmp_ge",
                     [("x", "input", input), ("b", "comparison", comparison)], compute_data_type,
                     name)

    def cmp_lt(self, input: Operand, comparison: Operand,
               compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """1 where input < comparison, else 0 (NaN compares unequal to everything); a
        BOOLEAN output unless its data type is set."""
        return _node(self, "cmp_lt", "cmp_lt",
                     [("x", "input", input), ("b", "comparison", comparison)], compute_data_type,
                     name)

    def cmp_le(self, input: Operand, comparison: Operand,
               compute_data_type: Optional[DataTypeLike] = None,
               name: Optional[str] = None) -> Tensor:
        """1 where input <= comparison, else 0 (NaN compares unequal to everything); a
        BOOLEAN output unless its data type is set."""
        return _node(self, "cmp_le", "cmp_le",
                     [("x", "input", input), ("b", "comparison", comparison)], compute_data_type,
                     name)

    def logical_and(self, a: Operand, b: Operand,
                    compute_data_type: Optional[DataTypeLike] = None,
                    name: Optional[str] = None) -> Tensor:
        """1 where a and b are both nonzero (NaN counts as nonzero), else 0; BOOLEAN output
        unless its data type is set."""
        return _node(self, "logical_and", "logical_and", [("x", "a", a), ("b", "b", b)],
                     compute_data_type, name)

    def logical_or(self, a: Operand, b: Operand,
                   compute_data_type: Optional[DataTypeLike] = None,
                   name: Optional[str] = None) -> Tensor:
        """1 where a or b is nonzero, else 0; BOOLEAN output unless its data type is set."""
        return _node(self, "logical_or", "logical_or", [("x", "a", a), ("b", "b", b)],
                     compute_data_type, name)

    def logical_not(self, input: Operand,
                    compute_data_type: Optional[DataTypeLike] = None,
                    name: Optional[str] = None) -> Tensor:
        """1 where input is 0, else 0; BOOLEAN output unless its data type is set."""
        return _node(self, "logical_not", "logical_not", [("x", "input", input)], compute_data_type,
                     name)

    def binary_select(self, input0: Operand, input1: Operand, mask: Operand,
                      compute_data_type: Optional[DataTypeLike] = None,
                      name: Optional[str] = None) -> Tensor:
        """input0 where mask is nonzero (true), else input1, all three broadcast together."""
        return _node(self, "binary_select", "binary_select",
                     [("x", "input0", input0), ("b", "input1", input1), ("t", "mask", mask)],
                     compute_data_type, name)

    def gen_index(self, input: Operand, axis: int,
                  compute_data_type: Optional[DataTypeLike] = None,
                  name: Optional[str] = None) -> Tensor:
        """Each element's index along `axis` of the output (shaped as input, whose values are
        not read).  Set the output's data type to INT32 or INT64 for integer indices (as
        cuDNN frontend's attention graphs do); a float type holds them exactly up to its
        precision (2^24 for float32)."""
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise TypeError(f"gen_index: axis must be an int, got {type(axis).__name__}")
        return _node(self, "gen_index", "gen_index", [("x", "input", input)], compute_data_type,
                     name, [("axis", int(axis))])

