"""hipdnn-ep's data-movement ops (docs/onnxruntime.md, "What it claims"): Transpose,
Concat, Slice, Split, Squeeze, Unsqueeze, Expand and Where, and Gemm with a scalar bias.
Each model is claimed whole (CPU fallback off) and must equal ORT's CPU EP and a NumPy
reference exactly (nothing is computed but Where's choice, Gemm aside); the forms
hipdnn's graph cannot express (steps below 1, starts that are not constants) stay with
ORT, with the reason in hipdnn-ep's log.  The runner and helpers are tests/test_ort_ep.py's.
"""
import numpy as np
import pytest
from onnx import TensorProto

from test_ort_ep import (FLOAT, helper, model, numpy_helper, rand,  # noqa: F401
                         rng, run, runner_available)  # rng, runner_available: fixtures
from test_ort_ep_ops import claimed_whole, declined

EXACT = dict(rtol=0, atol=0)


def i64(*v):
    return np.array(v, np.int64)


# ---- Transpose ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,perm", [((3, 4), None), ((2, 3, 4), (1, 0, 2)),
                                        ((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 1, 3)),
                                        ((2, 1, 3, 4, 2), (4, 3, 2, 1, 0))])
def test_transpose_of_an_input(tmp_path, rng, shape, perm):
    kw = {} if perm is None else {"perm": list(perm)}
    m = model([helper.make_node("Transpose", ["x"], ["y"], name="t", **kw)],
              [("x", list(shape))], [("y", None)])
    x = rand(rng, *shape)
    claimed_whole(tmp_path, m, {"x": x}, {"y": np.transpose(x, perm)}, tol=EXACT)


def test_transposes_of_computed_values_chain_in_one_fused_node(tmp_path, rng):
    """relu -> transpose -> transpose (a virtual value transposed again) -> add; the first
    transpose's result is also an output, and a MatMul reads the second."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Transpose", ["r"], ["t1"], name="t1", perm=[2, 0, 1]),
             helper.make_node("Transpose", ["t1"], ["t2"], name="t2", perm=[0, 2, 1]),
             helper.make_node("Add", ["t2", "b"], ["y"], name="add"),
             helper.make_node("MatMul", ["t2", "w"], ["z"], name="mm")]
    b, w = rand(rng, 2), rand(rng, 2, 5)
    m = model(nodes, [("x", [2, 3, 4])], [("y", None), ("t1", None), ("z", None)],
              [("b", b), ("w", w)])
    x = rand(rng, 2, 3, 4)
    t1 = np.transpose(np.maximum(x, 0), (2, 0, 1))
    t2 = np.transpose(t1, (0, 2, 1)).astype(np.float64)
    claimed_whole(tmp_path, m, {"x": x}, {"t1": t1, "y": t2 + b, "z": t2 @ w},
                  tol=dict(rtol=1e-5, atol=1e-6))


# ---- Concat -------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,axis", [([(2, 3)], 0), ([(2, 3), (4, 3)], 0),
                                         ([(2, 3, 4), (2, 1, 4), (2, 5, 4)], 1),
                                         ([(2, 3, 1), (2, 3, 2), (2, 3, 3), (2, 3, 1),
                                           (2, 3, 2)], -1)])
def test_concat_of_inputs(tmp_path, rng, shapes, axis):
    names = [f"x{i}" for i in range(len(shapes))]
    xs = [rand(rng, *s) for s in shapes]
    m = model([helper.make_node("Concat", names, ["y"], name="cat", axis=axis)],
              [(n, list(s)) for n, s in zip(names, shapes)], [("y", None)])
    claimed_whole(tmp_path, m, dict(zip(names, xs)), {"y": np.concatenate(xs, axis=axis)},
                  tol=EXACT)


def test_concat_of_inputs_and_computed_values(tmp_path, rng):
    nodes = [helper.make_node("Neg", ["a"], ["na"], name="neg"),
             helper.make_node("Concat", ["na", "b", "w", "na"], ["c"], name="cat", axis=0),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    w = rand(rng, 1, 4)
    m = model(nodes, [("a", [2, 4]), ("b", [3, 4])], [("y", None)], [("w", w)])
    a, b = rand(rng, 2, 4), rand(rng, 3, 4)
    want = np.maximum(np.concatenate([-a, b, w, -a]), 0)
    claimed_whole(tmp_path, m, {"a": a, "b": b}, {"y": want}, tol=EXACT)


def test_float16_concat_of_an_input_and_a_computed_value(tmp_path, rng):
    """hipdnn joins one data type: the HALF input and the FLOAT value computed inside the
    graph are both brought to FLOAT first."""
    nodes = [helper.make_node("Sigmoid", ["a"], ["s"], name="sig"),
             helper.make_node("Concat", ["s", "b"], ["y"], name="cat", axis=1)]
    m16 = model(nodes, [("a", [2, 3]), ("b", [2, 2])], [("y", None)], elem=TensorProto.FLOAT16)
    m32 = model(nodes, [("a", [2, 3]), ("b", [2, 2])], [("y", None)])
    a, b = rand(rng, 2, 3), rand(rng, 2, 2)
    got, assigned, _ = run(tmp_path, m16, {"a": a.astype(np.float16), "b": b.astype(np.float16)},
                           no_fallback=True, device="cpu")
    want, _, _ = run(tmp_path, m32, {"a": a.astype(np.float16).astype(np.float32),
                                     "b": b.astype(np.float16).astype(np.float32)}, ep="cpu")
    assert {x[0] for x in assigned} == {"hipdnn"}, assigned
    assert got["y"][0].dtype == np.float16
    np.testing.assert_allclose(got["y"][0].astype(np.float32), want["y"][0], rtol=1e-3, atol=1e-3)


# ---- Slice --------------------------------------------------------------------------------

SLICES = [
    # x shape, starts, ends, axes (None: absent), steps (None: absent), NumPy index
    ((5, 6), [1, 2], [4, 5], None, None, np.s_[1:4, 2:5]),
    ((5, 6), [1], [-1], [1], None, np.s_[:, 1:-1]),
    ((5, 6, 4), [0, -3], [2**62, 100], [-1, 1], [2, 1], np.s_[:, -3:, 0::2]),
    ((7, 3), [-100, 0], [6, 3], [0, 1], [3, 2], np.s_[0:6:3, 0:3:2]),
    ((4, 5), [1], [2], [0], None, np.s_[1:2]),
]


@pytest.mark.parametrize("shape,starts,ends,axes,steps,idx", SLICES)
def test_slice_with_constant_lists(tmp_path, rng, shape, starts, ends, axes, steps, idx):
    ins, inits = ["x", "st", "en"], [("st", i64(*starts)), ("en", i64(*ends))]
    if axes is not None or steps is not None:
        ins.append("ax" if axes is not None else "")
        if axes is not None:
            inits.append(("ax", i64(*axes)))
    if steps is not None:
        ins.append("sp")
        inits.append(("sp", i64(*steps)))
    nodes = [helper.make_node("Slice", ins, ["s"], name="slice"),
             helper.make_node("Abs", ["s"], ["y"], name="abs")]
    m = model(nodes, [("x", list(shape))], [("y", None)], inits, opset=13)
    x = rand(rng, *shape)
    claimed_whole(tmp_path, m, {"x": x}, {"y": np.abs(x[idx])}, tol=EXACT)


def test_slice_attributes_before_opset_10(tmp_path, rng):
    node = helper.make_node("Slice", ["x"], ["y"], name="slice", starts=[1, -2], ends=[3, 100],
                            axes=[0, 2])
    m = model([node], [("x", [4, 2, 5])], [("y", None)], opset=9)
    x = rand(rng, 4, 2, 5)
    claimed_whole(tmp_path, m, {"x": x}, {"y": x[1:3, :, -2:]}, tol=EXACT)


def test_an_empty_slice_between_computed_values(tmp_path, rng):
    """starts past the end: an empty slice, concatenated with the rest (the empty input
    adds nothing)."""
    nodes = [helper.make_node("Slice", ["x", "st", "en", "ax"], ["e"], name="slice"),
             helper.make_node("Concat", ["e", "x"], ["y"], name="cat", axis=1)]
    m = model(nodes, [("x", [3, 4])], [("y", None)],
              [("st", i64(5)), ("en", i64(9)), ("ax", i64(1))], opset=13)
    x = rand(rng, 3, 4)
    claimed_whole(tmp_path, m, {"x": x}, {"y": x}, tol=EXACT)


def test_slice_forms_hipdnn_lacks_stay_with_ort(tmp_path, rng):
    m = model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="slice")],
              [("x", [4, 5])], [("y", None)],
              [("st", i64(-1)), ("en", i64(-100)), ("ax", i64(0)), ("sp", i64(-1))], opset=13)
    declined(tmp_path, m, {"x": rand(rng, 4, 5)}, "steps[0] is -1; hipdnn-ep takes positive steps")
    g = helper.make_graph(
        [helper.make_node("Slice", ["x", "st", "en"], ["y"], name="slice")], "t",
        [helper.make_tensor_value_info("x", FLOAT, [4, 5]),
         helper.make_tensor_value_info("st", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("en", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    declined(tmp_path, m, {"x": rand(rng, 4, 5), "st": i64(1), "en": i64(3)},
             "starts 'st' is not a constant int64 initializer")


# ---- Split --------------------------------------------------------------------------------

def split_model(n_out, opset, split=None, attrs=None, shape=(6, 4), used=None):
    outs = [f"y{k}" for k in range(n_out)]
    ins, inits = ["x"], []
    if split is not None and opset >= 13:
        ins.append("split")
        inits.append(("split", i64(*split)))
    kw = dict(attrs or {})
    if split is not None and opset < 13:
        kw["split"] = list(split)
    nodes = [helper.make_node("Split", ins, outs, name="split", **kw)]
    graph_outs = [o for k, o in enumerate(outs) if used is None or k in used]
    nodes += [helper.make_node("Neg", [o], [f"n{o}"], name=f"neg{o}") for o in graph_outs]
    return model(nodes, [("x", list(shape))], [(f"n{o}", None) for o in graph_outs], inits,
                 opset=opset)


@pytest.mark.parametrize("n_out,opset,split,attrs,shape,sizes,axis", [
    (3, 13, None, {}, (6, 4), [2, 2, 2], 0),
    (2, 13, [1, 3], dict(axis=-1), (6, 4), [1, 3], 1),
    (3, 11, [2, 0, 4], {}, (6, 4), [2, 0, 4], 0),
    (3, 18, None, dict(num_outputs=3, axis=1), (2, 7), [3, 3, 1], 1),
])
def test_split(tmp_path, rng, n_out, opset, split, attrs, shape, sizes, axis):
    m = split_model(n_out, opset, split, attrs, shape)
    x = rand(rng, *shape)
    parts = np.split(x, np.cumsum(sizes)[:-1], axis=axis)
    claimed_whole(tmp_path, m, {"x": x}, {f"ny{k}": -p for k, p in enumerate(parts)}, tol=EXACT)


def test_split_output_nobody_reads_is_not_made(tmp_path, rng):
    m = split_model(3, 13, used=[1])
    x = rand(rng, 6, 4)
    claimed_whole(tmp_path, m, {"x": x}, {"ny1": -x[2:4]}, tol=EXACT)


# ---- Squeeze, Unsqueeze ---------------------------------------------------------------------

@pytest.mark.parametrize("op,opset,axes,shape,ref", [
    ("Squeeze", 13, [1, -1], (3, 1, 4, 1), lambda x: x.reshape(3, 4)),
    ("Squeeze", 13, None, (1, 3, 1, 4), lambda x: x.reshape(3, 4)),
    ("Squeeze", 11, [0], (1, 3, 4), lambda x: x.reshape(3, 4)),
    ("Unsqueeze", 13, [0, -1], (3, 4), lambda x: x.reshape(1, 3, 4, 1)),
    ("Unsqueeze", 13, [2, 1], (3, 4), lambda x: x.reshape(3, 1, 1, 4)),
    ("Unsqueeze", 11, [1], (3, 4), lambda x: x.reshape(3, 1, 4)),
])
def test_squeeze_and_unsqueeze_after_a_computed_value(tmp_path, rng, op, opset, axes, shape, ref):
    ins, inits, kw = ["t"], [], {}
    if axes is not None and opset >= 13:
        ins.append("axes")
        inits.append(("axes", i64(*axes)))
    elif axes is not None:
        kw["axes"] = axes
    nodes = [helper.make_node("Tanh", ["x"], ["t"], name="tanh"),
             helper.make_node(op, ins, ["y"], name="sq", **kw)]
    m = model(nodes, [("x", list(shape))], [("y", None)], inits, opset=opset)
    x = rand(rng, *shape)
    claimed_whole(tmp_path, m, {"x": x}, {"y": ref(np.tanh(x.astype(np.float64)))})


# ---- Where, Gemm's scalar bias -------------------------------------------------------------

@pytest.mark.parametrize("cs,xs,ys", [((3, 4), (3, 4), (3, 4)), ((4,), (3, 1), (1,)),
                                      ((2, 1, 4), (3, 4), (2, 3, 1))])
def test_where_broadcasts_condition_and_values(tmp_path, rng, cs, xs, ys):
    nodes = [helper.make_node("Where", ["c", "x", "y"], ["w"], name="where"),
             helper.make_node("Neg", ["w"], ["z"], name="neg")]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("c", TensorProto.BOOL, cs),
                                       helper.make_tensor_value_info("x", FLOAT, xs),
                                       helper.make_tensor_value_info("y", FLOAT, ys)],
                          [helper.make_tensor_value_info("z", FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    m.ir_version = 8
    c = rng.random(cs) < 0.5
    x, y = rand(rng, *xs), rand(rng, *ys)
    claimed_whole(tmp_path, m, {"c": c, "x": x, "y": y}, {"z": -np.where(c, x, y)}, tol=EXACT)


def test_gemm_with_a_scalar_bias(tmp_path, rng):
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm", alpha=0.5, beta=2.0)
    c = np.array(0.75, np.float32)
    m = model([node], [("a", [3, 5])], [("y", None)], [("b", rand(rng, 5, 4)), ("c", c)])
    b = numpy_helper.to_array(m.graph.initializer[0]).astype(np.float64)
    a = rand(rng, 3, 5)
    claimed_whole(tmp_path, m, {"a": a}, {"y": 0.5 * (a.astype(np.float64) @ b) + 2.0 * 0.75})


# ---- Expand -------------------------------------------------------------------------------

@pytest.mark.parametrize("xs,shape", [((3, 1), (3, 4)), ((4,), (2, 3, 4)), ((2, 1, 3), (1, 4, 1)),
                                      ((3, 4), (1,))])
def test_expand_broadcasts_both_ways(tmp_path, rng, xs, shape):
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Expand", ["r", "shape"], ["y"], name="expand")]
    m = model(nodes, [("x", list(xs))], [("y", None)], [("shape", i64(*shape))], opset=13)
    x = rand(rng, *xs)
    want = np.maximum(x, 0) * np.ones(shape, np.float32)
    claimed_whole(tmp_path, m, {"x": x}, {"y": want}, tol=EXACT)
