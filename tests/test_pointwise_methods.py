"""pygraph's pointwise methods match the SDK's table of modes (csrc/sdk/op_table.c, which
hipdnn/_ops.py's POINTWISE_MODES and POINTWISE_ARITY are generated from).

The methods stay written out, one per mode, so that help(), IDEs and mypy see their
signatures and docstrings; this test is what keeps them one with the table: a method per
mode, named as the mode, taking the mode's operands first under cuDNN frontend's keywords,
building a node of that mode with each operand in the port cuDNN's backend gives it.
"""
import inspect

import pytest

import hipdnn
from hipdnn import _ops
from hipdnn._pygraph.pointwise import PointwiseOps, operand_ports, user_ports

# Methods that are another mode under cuDNN frontend's other name, with a fixed parameter.
ALIASES = {"bias": "add", "scale": "mul", "leaky_relu": "relu",
           "leaky_relu_backward": "relu_backward"}
# Arguments a method needs besides its operands.
EXTRA = {"gen_index": {"axis": 1}, "leaky_relu": {"negative_slope": 0.1},
         "leaky_relu_backward": {"negative_slope": 0.1}}
INFO = _ops.OPS["pointwise"]


def _public_methods():
    return [n for n, v in vars(PointwiseOps).items()
            if not n.startswith("_") and inspect.isfunction(v)]


def test_every_public_method_is_a_mode_of_the_table_or_a_named_alias():
    assert sorted(_public_methods()) == sorted([*_ops.POINTWISE_MODES, *ALIASES])
    assert set(ALIASES.values()) <= set(_ops.POINTWISE_MODES)


@pytest.mark.parametrize("method", sorted([*_ops.POINTWISE_MODES, *ALIASES]))
def test_the_method_builds_its_mode_with_its_operands_in_the_modes_ports(method):
    mode = ALIASES.get(method, method)
    arity = _ops.POINTWISE_ARITY[mode]
    fn = getattr(PointwiseOps, method)
    assert (fn.__doc__ or "").strip(), f"{method} has no docstring"
    params = list(inspect.signature(fn).parameters.values())[1:]
    keywords = [p.name for p in params[:arity]]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params[:arity])
    assert {"compute_data_type", "name"} <= {p.name for p in params}

    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    operands = [g.tensor(name=f"t{i}", dim=[2, 3], stride=[3, 1]) for i in range(arity)]
    getattr(g, method)(*operands, **EXTRA.get(method, {}))
    op = g._ops[-1]
    assert op.op == method and op.info.name == "pointwise"
    assert (INFO.param("mode").attr, INFO.param("mode").type,
            _ops.POINTWISE_MODES[mode]) in op.params
    ports = operand_ports(mode)[:arity]
    assert [(user, attr, t) for user, attr, t in op.inputs] == \
        [(k, INFO.input(p).attr, t) for k, p, t in zip(keywords, ports, operands)]
    out = "dx" if mode.endswith("_backward") else "y"
    assert [attr for _u, attr, _t in op.outputs] == [INFO.output(out).attr]
    if method == mode:  # a deserialized node's listing names its ports as the method does
        assert user_ports(_ops.POINTWISE_MODES[mode]) == dict(zip(ports, keywords))
    assert callable(getattr(hipdnn.Graph, method))
