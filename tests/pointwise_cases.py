"""Every pointwise mode as the tests drive it: how a pygraph builds it, its float64
reference (references.py), the inputs it is meaningful on and the storage of its result.

One table serves the reference engine's tests (test_pointwise.py, test_numerics.py) and
the GPU engine's (test_gpu_pointwise.py), so a mode added to the library is added here
once and every engine is held to it.
"""
import math
from typing import Any, Callable, NamedTuple, Sequence, Tuple

import numpy as np

import references as ref
from tolerances import tolerance


class In(NamedTuple):
    """How one operand is drawn: |v| in [low, high) (signed or not), a BOOLEAN mask, or
    ("grid") a few values exact in every dtype, so that comparisons meet equal
    operands as often as unequal ones."""

    kind: str = "float"
    low: float = 0.1
    high: float = 4.0
    signed: bool = True


F = In()                                   # the general case
SMALL = In(low=0.1, high=1.0)              # gradients (dy)
POS = In(signed=False)                     # sqrt, log, rsqrt, pow's base
AWAY = In(low=0.5, high=2.0)               # divisors
TAN = In(low=0.05, high=1.2)               # tan away from its poles
MASK = In("mask")
GRID = In("grid")
GRID_VALUES = [-2.0, -1.0, -0.5, 0.5, 1.0, 2.0]


class Case(NamedTuple):
    build: Callable[..., Any]      # (g, *tensors in operand order) -> result tensor
    reference: Callable[..., Any]  # (*float64 values in operand order) -> float64 result
    inputs: Sequence[In]
    out: str = "same"              # the result's storage: the io dtype, "bool" or "i32"


def _bwd(method: str, **kw: Any) -> Callable[..., Any]:
    return lambda g, x, dy: getattr(g, method)(loss=dy, input=x, **kw)


CASES = {
    # arithmetic
    "add": Case(lambda g, a, b: g.add(a=a, b=b), ref.add, [F, F]),
    "sub": Case(lambda g, a, b: g.sub(a=a, b=b), ref.sub, [F, F]),
    "mul": Case(lambda g, a, b: g.mul(a=a, b=b), ref.mul, [F, F]),
    "div": Case(lambda g, a, b: g.div(a=a, b=b), ref.div, [F, AWAY]),
    "max": Case(lambda g, a, b: g.max(input0=a, input1=b), ref.ieee_maximum, [F, F]),
    "min": Case(lambda g, a, b: g.min(input0=a, input1=b), ref.ieee_minimum, [F, F]),
    "add_square": Case(lambda g, a, b: g.add_square(a=a, b=b), ref.add_square, [F, F]),
    "mod": Case(lambda g, a, b: g.mod(input0=a, input1=b), ref.fmod, [F, AWAY]),
    "pow": Case(lambda g, a, b: g.pow(input0=a, input1=b), ref.power,
                [In(low=0.5, high=2.0, signed=False), In(low=0.1, high=2.0)]),
    # one operand
    "identity": Case(lambda g, x: g.identity(input=x), ref.identity, [F]),
    "neg": Case(lambda g, x: g.neg(input=x), ref.neg, [F]),
    "abs": Case(lambda g, x: g.abs(input=x), ref.absolute, [F]),
    "ceil": Case(lambda g, x: g.ceil(input=x), ref.ceil, [F]),
    "floor": Case(lambda g, x: g.floor(input=x), ref.floor, [F]),
    "sqrt": Case(lambda g, x: g.sqrt(input=x), ref.sqrt, [POS]),
    "rsqrt": Case(lambda g, x: g.rsqrt(input=x), ref.rsqrt, [POS]),
    "reciprocal": Case(lambda g, x: g.reciprocal(input=x), ref.reciprocal, [F]),
    "exp": Case(lambda g, x: g.exp(input=x), ref.exp, [F]),
    "log": Case(lambda g, x: g.log(input=x), ref.log, [POS]),
    "sin": Case(lambda g, x: g.sin(input=x), ref.sin, [F]),
    "cos": Case(lambda g, x: g.cos(input=x), ref.cos, [F]),
    "tan": Case(lambda g, x: g.tan(input=x), ref.tan, [TAN]),
    "erf": Case(lambda g, x: g.erf(input=x), ref.erf, [F]),
    # activations
    "relu": Case(lambda g, x: g.relu(input=x), ref.relu, [F]),
    "relu_clipped": Case(
        lambda g, x: g.relu(input=x, negative_slope=0.125, lower_clip=-0.25, upper_clip=0.5),
        lambda v: ref.relu(v, lower_clip=-0.25, upper_clip=0.5, lower_clip_slope=0.125), [F]),
    "sigmoid": Case(lambda g, x: g.sigmoid(input=x), ref.sigmoid, [F]),
    "tanh": Case(lambda g, x: g.tanh(input=x), ref.tanh, [F]),
    "gelu": Case(lambda g, x: g.gelu(input=x), ref.gelu_erfc, [F]),
    "gelu_approx_tanh": Case(lambda g, x: g.gelu_approx_tanh(input=x), ref.gelu_approx_tanh,
                             [F]),
    "elu": Case(lambda g, x: g.elu(input=x), ref.elu, [F]),
    "elu_alpha": Case(lambda g, x: g.elu(input=x, elu_alpha=0.375),
                      lambda v: ref.elu(v, alpha=0.375), [F]),
    "softplus": Case(lambda g, x: g.softplus(input=x), ref.softplus, [F]),
    "softplus_beta": Case(lambda g, x: g.softplus(input=x, softplus_beta=-2.5),
                          lambda v: ref.softplus(v, beta=-2.5), [F]),
    "swish": Case(lambda g, x: g.swish(input=x), ref.swish, [F]),
    "swish_beta": Case(lambda g, x: g.swish(input=x, swish_beta=1.75),
                       lambda v: ref.swish(v, beta=1.75), [F]),
    # backward activations: operands x (the forward input), dy
    "relu_backward": Case(_bwd("relu_backward"), ref.relu_backward, [F, SMALL]),
    "relu_backward_clipped": Case(
        _bwd("relu_backward", negative_slope=0.125, lower_clip=-0.25, upper_clip=0.5),
        lambda x, dy: ref.relu_backward(x, dy, lower_clip=-0.25, upper_clip=0.5,
                                        lower_clip_slope=0.125), [F, SMALL]),
    "tanh_backward": Case(_bwd("tanh_backward"), ref.tanh_backward, [F, SMALL]),
    "sigmoid_backward": Case(_bwd("sigmoid_backward"), ref.sigmoid_backward, [F, SMALL]),
    "elu_backward": Case(_bwd("elu_backward", elu_alpha=0.375),
                         lambda x, dy: ref.elu_backward(x, dy, alpha=0.375), [F, SMALL]),
    "gelu_backward": Case(_bwd("gelu_backward"), ref.gelu_backward, [F, SMALL]),
    "gelu_approx_tanh_backward": Case(_bwd("gelu_approx_tanh_backward"),
                                      ref.gelu_approx_tanh_backward, [F, SMALL]),
    "softplus_backward": Case(_bwd("softplus_backward", softplus_beta=1.5),
                              lambda x, dy: ref.softplus_backward(x, dy, beta=1.5), [F, SMALL]),
    "swish_backward": Case(_bwd("swish_backward", swish_beta=1.25),
                           lambda x, dy: ref.swish_backward(x, dy, beta=1.25), [F, SMALL]),
    # comparisons and logic: BOOLEAN results
    **{f"cmp_{op}": Case(lambda g, a, b, op=op: getattr(g, f"cmp_{op}")(input=a, comparison=b),
                         ref.cmp(op), [GRID, GRID], "bool")
       for op in ("eq", "neq", "gt", "ge", "lt", "le")},
    "logical_and": Case(lambda g, a, b: g.logical_and(a=a, b=b), ref.logical_and,
                        [MASK, MASK], "bool"),
    "logical_or": Case(lambda g, a, b: g.logical_or(a=a, b=b), ref.logical_or, [MASK, MASK],
                       "bool"),
    "logical_not": Case(lambda g, a: g.logical_not(input=a), ref.logical_not, [MASK], "bool"),
    # selection and indices
    "binary_select": Case(lambda g, a, b, t: g.binary_select(input0=a, input1=b, mask=t),
                          ref.binary_select, [F, F, MASK]),
    "gen_index": Case(lambda g, x: g.gen_index(input=x, axis=1),
                      lambda v: ref.gen_index(v.shape, 1), [F]),
    "gen_index_int32": Case(lambda g, x: g.gen_index(input=x, axis=0),
                            lambda v: ref.gen_index(v.shape, 0), [F], "i32"),
}

# Every pygraph pointwise method has a case (the test of that is in test_pointwise.py).
ARITY = {name: len(case.inputs) for name, case in CASES.items()}


def make_inputs(nx, case: Case, shapes: Sequence[Sequence[int]], dtype: str,
                layouts: Sequence[str] = ()) -> list:
    """The operands of `case` with these shapes (and layouts), in `dtype` (masks: bool)."""
    ops = []
    for k, (spec, shape) in enumerate(zip(case.inputs, shapes)):
        layout = layouts[k] if k < len(layouts) else "packed"
        if spec.kind == "mask":
            ops.append(nx.mask(shape, layout))
        elif spec.kind == "grid":
            values = nx.rng.choice(GRID_VALUES, size=tuple(shape))
            ops.append(nx.input(shape, dtype, layout, values=values))
        else:
            ops.append(nx.input(shape, dtype, layout, low=spec.low, high=spec.high,
                                signed=spec.signed))
    return ops


def out_dtype(case: Case, dtype: str) -> str:
    return dtype if case.out == "same" else case.out


def out_tolerance(case: Case, dtype: str) -> float:
    """Comparisons, logic and indices are exact; the rest is held to pointwise's."""
    return tolerance("pointwise", dtype) if case.out == "same" else 0.0


def run_case(nx, mode: str, dtype: str, shapes: Sequence[Sequence[int]],
             layouts: Sequence[str] = (), y_layout: str = "packed") -> Tuple[Any, Any, list]:
    """Builds, runs and checks one node of `mode` (every element written, inputs
    unchanged: nx.execute); gives (got, want, inputs) as float64."""
    case = CASES[mode]
    ins = make_inputs(nx, case, shapes, dtype, layouts)
    g = nx.graph(dtype)
    y = case.build(g, *[op.bind(g, f"in{k}") for k, op in enumerate(ins)])
    want = np.asarray(case.reference(*[op.values for op in ins]), np.float64)
    out = nx.output(y, list(want.shape), out_dtype(case, dtype), y_layout)
    nx.execute(g, ins + [out])
    nx.assert_close(out, want, out_tolerance(case, dtype))
    return out.decoded(), want, ins


def shapes_for(mode: str, shape: Sequence[int], broadcast: bool) -> list:
    """Operand shapes: all `shape`, or (broadcast) the second a per-channel [1, C, 1, ...]
    and a third (binary_select's mask) [N, 1, ...] over the other dims."""
    n = ARITY[mode]
    shape = list(shape)
    if not broadcast or n == 1:
        return [shape] * n
    per_channel = [1, shape[1]] + [1] * (len(shape) - 2)
    rows = [shape[0], 1] + shape[2:]
    return [shape, per_channel, rows][:n]


NAN, INF = math.nan, math.inf
