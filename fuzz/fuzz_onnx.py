"""fuzz_onnx — hipdnn-ep through ONNX Runtime on mutated small ONNX models (issue 26).

hipdnn-ep promises three things a fuzzer can hold it to: a node it claims never fails at
Run on an input ORT's CPU EP accepts; attribute values the backend would refuse are
caught in GetCapability (the node declined there, left to ORT); bad input never crashes
the process.  This runs the seeds of fuzz/corpus/fuzz_onnx/ (small models of what
ep/op_table.c claims, written by ``--write-seeds``) and then mutations of them, structure
aware on the ModelProto: attribute values (0, -1, 2^40, 2^62, lists of the wrong length,
dropped, retyped), input and initializer shapes (0, 1, another rank, symbolic dims fed as
0..3 at run time), data types (the whole model in float16 or int64, one tensor retyped),
initializer contents (NaN, inf, wrong size, made inputs), opsets, nodes dropped, duplicated,
rewired, swapped or grafted onto an input or output, and some raw byte mutations of the
serialized model.  Models hipdnn-ep ran join the seeds as parents of later mutations.

Each model runs through tests/ort/ort_run (ORT's C API; there is no onnxruntime Python
package here) twice, at once: with ORT's CPU EP alone and with hipdnn-ep on its CPU device
(the reference engine, CPU fallback on), at times as two runs of one session with other
symbolic dims, or three concurrent Run calls.  A finding is: the hipdnn run killed by a signal,
hung (past TIMEOUT while the CPU run finished) or with a sanitizer report; the CPU run
passing and the hipdnn run failing; both passing with outputs of other shapes or dtypes,
or values outside |d| <= tol * (|ref| + max(1, max |ref|)) where the CPU output is finite
(tol 1e-3 in float32, 2e-2 in float16; values only when the model's data is tame, no
NaN, inf or |x| > 1e3).  A CPU run that fails means ORT rejects the model: hipdnn may fail
too.  Not compared either: a reduction over a negative axis fed an empty input, which ORT
1.30's CPU EP leaves unreduced.  The model, its inputs and both runs' stderr go to
BUILD/crashes/fuzz_onnx-<n>/; once fixed, its model joins the seeds as
fuzz/corpus/fuzz_onnx/regress-<what>.onnx, its metadata saying how it ran when that
mattered (fuzz_dims, fuzz_more_runs for later runs of the session, fuzz_threads, fuzz_opt).

    /usr/bin/python3 fuzz/fuzz_onnx.py BUILD SECONDS [SEED] [--keep-going] [--verbose]
                    (fuzz/run.sh runs it; SECONDS 0: the seeds only; --keep-going: every
                    finding until SECONDS, not the first; --verbose: each model's outcome)
    /usr/bin/python3 fuzz/fuzz_onnx.py --check DIR            (a reproducer, judged again)
    /usr/bin/python3 fuzz/fuzz_onnx.py --write-seeds          (rewrites the seeds)

The runner and the EP library come from the build of HIPDNN_BUILD_DIR (default build/ at
the repository root; BUILD, the fuzz build, has no ORT; `make fuzz` passes its own
$(BUILD)): build/tests/ort/ort_run and hipdnn/lib/libhipdnn_ep.so, which `make build
ORT_EP=ON` makes.  Exit status 1 on a finding or when they are missing, else 0 with the
count of models.
"""
from __future__ import annotations

import copy
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

try:
    import onnx
    from onnx import AttributeProto, TensorProto, helper, numpy_helper
except ImportError as e:  # the CI image's python3-onnx; say so rather than pass
    print(f"FAIL: fuzz_onnx: {e}: the onnx package builds and mutates the models "
          "(apt-get install python3-onnx, for /usr/bin/python3)")
    sys.exit(1)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = HERE / "corpus" / "fuzz_onnx"
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
ORT_RUN = BUILD_DIR / "tests" / "ort" / "ort_run"
TIMEOUT = 60            # seconds per ort_run; the models are tiny, so a hang is a finding
MEM_LIMIT = 4 << 30     # address space per ort_run: a 2^40-element output fails, not swaps
FLOAT, FLOAT16, INT64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64
NP_TYPE = {FLOAT: np.float32, FLOAT16: np.float16, INT64: np.int64}
TOL = {FLOAT: 1e-3, FLOAT16: 2e-2}
POOL = 200             # mutation parents kept: the seeds and the models hipdnn-ep ran
TAME = 1e3              # data beyond this (or not finite): outputs compared by shape only
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:")


def ep_library() -> Path:
    """libhipdnn_ep.so of the build's package folder (its CMakeCache), else the tree's."""
    cache = BUILD_DIR / "CMakeCache.txt"
    if cache.is_file():
        m = re.search(r"^HIPDNN_PACKAGE_DIR:PATH=(.*)$", cache.read_text(), re.M)
        if m and (Path(m.group(1)) / "lib" / "libhipdnn_ep.so").is_file():
            return Path(m.group(1)) / "lib" / "libhipdnn_ep.so"
    return REPO / "hipdnn" / "lib" / "libhipdnn_ep.so"


# ---- seeds ------------------------------------------------------------------------------

def make_model(nodes, inputs, outputs, inits=(), opset=17, ms=False, elem=FLOAT, dims=""):
    """inputs / outputs: (name, shape) pairs (shape None: unknown; a str dim: symbolic).
    dims: "N=0,S=1", the run-time values of symbolic dims (kept in the model's metadata)."""
    graph = helper.make_graph(
        nodes, "fuzz",
        [helper.make_tensor_value_info(n, elem, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, elem, s) for n, s in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid("com.microsoft", 1)]
                                                 if ms else [])
    m = helper.make_model(graph, opset_imports=opsets, producer_name="fuzz_onnx")
    m.ir_version = 8
    if dims:
        helper.set_model_props(m, {"fuzz_dims": dims})
    return m


def seeds() -> dict[str, onnx.ModelProto]:
    """The seed models, by file name: tiny shapes of each op and pattern hipdnn-ep claims."""
    r = np.random.default_rng(26)

    def w(*shape, low=-1.0, high=1.0):
        return r.uniform(low, high, size=shape).astype(np.float32)

    N = helper.make_node
    s = {}
    s["conv2d_bias_relu"] = make_model(
        [N("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1], strides=[1, 2]),
         N("Relu", ["c"], ["y"])],
        [("x", [1, 2, 5, 5])], [("y", None)], [("W", w(3, 2, 3, 3)), ("B", w(3))])
    s["conv1d_group_dilated"] = make_model(
        [N("Conv", ["x", "W"], ["y"], group=2, strides=[2], dilations=[2], pads=[1, 0])],
        [("x", [1, 4, 9])], [("y", None)], [("W", w(4, 2, 3))])
    s["conv3d_same_add"] = make_model(
        [N("Conv", ["x", "W"], ["c"], auto_pad="SAME_UPPER", kernel_shape=[2, 2, 2]),
         N("Add", ["c", "a"], ["y"])],
        [("x", [1, 2, 3, 4, 4]), ("a", [2, 1, 1, 1])], [("y", None)], [("W", w(2, 2, 2, 2, 2))])
    s["conv_transpose"] = make_model(
        [N("ConvTranspose", ["x", "W", "B"], ["c"], strides=[2, 2], pads=[1, 0, 0, 1],
           output_padding=[1, 0]),
         N("Sigmoid", ["c"], ["y"])],
        [("x", [1, 2, 3, 3])], [("y", None)], [("W", w(2, 3, 3, 2)), ("B", w(3))])
    s["conv_batchnorm_relu_dynamic"] = make_model(
        [N("Conv", ["x", "W"], ["c"], auto_pad="SAME_LOWER"),
         N("BatchNormalization", ["c", "sc", "bi", "mu", "var"], ["n"], epsilon=1e-3),
         N("Relu", ["n"], ["y"])],
        [("x", ["N", 2, 4, 4])], [("y", None)],
        [("W", w(3, 2, 3, 3)), ("sc", w(3)), ("bi", w(3)), ("mu", w(3)),
         ("var", w(3, low=0.5, high=1.5))], dims="N=2")
    s["gemm_trans_sigmoid"] = make_model(
        [N("Gemm", ["a", "B", "C"], ["g"], transA=1, transB=1, alpha=0.5, beta=2.0),
         N("Sigmoid", ["g"], ["y"])],
        [("a", [4, 3])], [("y", None)], [("B", w(5, 4)), ("C", w(5))])
    s["matmul_add_tanh"] = make_model(
        [N("MatMul", ["x", "W"], ["h"]), N("Add", ["h", "b"], ["a"]), N("Tanh", ["a"], ["t"]),
         N("MatMul", ["t", "k"], ["y"])],
        [("x", [2, 3, 4]), ("k", [2, 5, 2])], [("y", None)], [("W", w(4, 5)), ("b", w(5))])
    s["layernorm_gelu_softmax"] = make_model(
        [N("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
         N("Gelu", ["n"], ["e"], domain="com.microsoft"),
         N("Softmax", ["e"], ["y"], axis=-1)],
        [("x", ["B", 3, 8])], [("y", None)], [("g", w(8)), ("b", w(8))], ms=True, dims="B=2")
    s["layernorm_two_axes_gelu20"] = make_model(
        [N("LayerNormalization", ["x", "g"], ["n"], axis=1),
         N("Gelu", ["n"], ["y"], approximate="tanh")],
        [("x", [2, 3, 4])], [("y", None)], [("g", w(3, 4))], opset=20)
    s["reduce_attr_axes"] = make_model(
        [N("ReduceMean", ["x"], ["m"], axes=[1, 3], keepdims=1), N("Sub", ["x", "m"], ["d"]),
         N("ReduceMax", ["d"], ["y"], axes=[-1], keepdims=0)],
        [("x", [2, 3, 4, 5])], [("y", None), ("m", None)])
    s["reduce_axes_input"] = make_model(
        [N("ReduceSum", ["x", "ax"], ["r"], keepdims=0),
         N("ReduceMin", ["x"], ["q"], keepdims=1), N("Relu", ["r"], ["y"])],
        [("x", [3, 4, 2])], [("y", None), ("q", None)], [("ax", np.array([0, 2], np.int64))],
        opset=18)
    s["elementwise_broadcast"] = make_model(
        [N("Sub", ["x", "a"], ["s"]), N("Mul", ["s", "b"], ["m"]), N("Div", ["m", "c"], ["d"]),
         N("Mul", ["x", "x"], ["q"]), N("Add", ["d", "q"], ["y"])],
        [("x", [2, 3, 4]), ("a", [4]), ("b", [3, 1])], [("y", None)],
        [("c", w(1, 3, 4, low=0.5, high=1.5))])
    s["reshape_flatten_softmax"] = make_model(
        [N("Relu", ["x"], ["r"]), N("Reshape", ["r", "sh"], ["p"]),
         N("Flatten", ["p"], ["f"], axis=2), N("Softmax", ["f"], ["y"])],
        [("x", [2, 3, 4])], [("y", None)], [("sh", np.array([0, -1, 2, 2], np.int64))],
        opset=13)
    s["empty_batch_relu_reshape"] = make_model(
        [N("Relu", ["x"], ["r"]), N("Reshape", ["r", "sh"], ["y"], allowzero=1)],
        [("x", ["A", 3, 4])], [("y", None)], [("sh", np.array([3, 4, 0], np.int64))],
        opset=14, dims="A=0")
    s["fp16_conv_relu_reduce"] = make_model(
        [N("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["r"]),
         N("ReduceMax", ["r"], ["y"], axes=[3], keepdims=1)],
        [("x", [1, 2, 4, 4])], [("y", None)],
        [("W", w(3, 2, 3, 3).astype(np.float16)), ("B", w(3).astype(np.float16))],
        elem=FLOAT16)
    s["fp16_matmul_layernorm"] = make_model(
        [N("MatMul", ["x", "W"], ["h"]), N("LayerNormalization", ["h", "g"], ["y"])],
        [("x", [2, 3, 4])], [("y", None)],
        [("W", w(4, 6).astype(np.float16)), ("g", w(6).astype(np.float16))], elem=FLOAT16)
    return s


def write_seeds() -> int:
    CORPUS.mkdir(parents=True, exist_ok=True)
    for old in CORPUS.glob("*.onnx"):
        if not old.name.startswith("regress-"):  # reproducers are kept by hand
            old.unlink()
    models = seeds()
    total = 0
    for name, m in models.items():
        data = m.SerializeToString()
        (CORPUS / f"{name}.onnx").write_bytes(data)
        total += len(data)
    print(f"fuzz_onnx: wrote {len(models)} seeds to {CORPUS} ({total} bytes)")
    return 0


# ---- inputs -----------------------------------------------------------------------------

def props(m: onnx.ModelProto) -> dict[str, str]:
    return {p.key: p.value for p in m.metadata_props}


def set_prop(m: onnx.ModelProto, key: str, value: str) -> None:
    for p in m.metadata_props:
        if p.key == key:
            p.value = value
            return
    helper.set_model_props(m, {**props(m), key: value})


def tame_data(a: np.ndarray) -> bool:
    if a.dtype.kind != "f" or a.size == 0:
        return True
    f = a.astype(np.float64)
    return bool(np.isfinite(f).all() and np.abs(f).max() <= TAME)


def make_feeds(m: onnx.ModelProto, rng: random.Random, special: bool) -> dict[str, np.ndarray]:
    """An array per graph input that is not an initializer, of its declared type (float32
    for a type the runner does not read) and shape: symbolic and unknown dims take the
    model's fuzz_dims values, else 0 to 3; an input of no known shape takes the fuzz_shape.*
    a mutation left.  special: a few NaN, inf, zero or huge elements."""
    nrng = np.random.default_rng(rng.getrandbits(32))
    hints = props(m)
    dims = dict(kv.split("=", 1) for kv in hints.get("fuzz_dims", "").split(",") if "=" in kv)
    inits = {i.name for i in m.graph.initializer}
    feeds = {}
    for vi in m.graph.input:
        if vi.name in inits or vi.name in feeds:
            continue
        t = vi.type.tensor_type
        if t.HasField("shape"):
            shape = []
            for d in t.shape.dim:
                if d.HasField("dim_value"):
                    shape.append(d.dim_value)
                    continue
                key = d.dim_param or "?"
                if key not in dims:
                    dims[key] = str(rng.choice([0, 1, 1, 2, 2, 3]))
                shape.append(int(dims[key]))
        else:
            shape = [int(x) for x in hints.get(f"fuzz_shape.{vi.name}", "2,3").split(",") if x]
        # feeds stay small: a dim cut short no longer matches the model, and ORT says so
        shape = [max(0, min(d, 64)) for d in shape]
        if int(np.prod(shape, dtype=np.float64)) > 1 << 16:
            shape = [min(d, 4) for d in shape]
        elem = t.elem_type if t.elem_type in NP_TYPE else FLOAT
        if elem == INT64:
            a = nrng.integers(-1, 5, size=shape).astype(np.int64)
        else:
            mag = nrng.uniform(0.1, 1.0, size=shape) * nrng.choice([-1.0, 1.0], size=shape)
            a = mag.astype(NP_TYPE[elem])
            if special and a.size:
                flat = a.reshape(-1)
                with np.errstate(over="ignore"):  # -1e30 is inf in float16
                    for _ in range(rng.randint(1, 3)):
                        flat[rng.randrange(flat.size)] = rng.choice(
                            [np.nan, np.inf, -np.inf, 0.0, -0.0, 6e4, -1e30])
        feeds[vi.name] = a
    if any(k != "?" for k in dims):  # the next mutation of this model feeds the same
        set_prop(m, "fuzz_dims", ",".join(f"{k}={v}" for k, v in dims.items() if k != "?"))
    return feeds


# ---- mutations --------------------------------------------------------------------------

INTS = [0, 1, -1, 2, 3, -2, 5, 2 ** 31 - 1, 2 ** 31, 2 ** 40, 2 ** 40 + 1, 2 ** 62, -2 ** 63,
        2 ** 63 - 1]
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 1e-30, 1e30, 3.4e38, float("nan"),
          float("inf"), float("-inf")]
CONV_ATTRS = {"strides": "ints", "dilations": "ints", "pads": "ints", "kernel_shape": "ints",
              "group": "int", "auto_pad": ("NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER")}
REDUCE_ATTRS = {"axes": "ints", "keepdims": "int", "noop_with_empty_axes": "int"}
ATTRS = {
    "Conv": CONV_ATTRS,
    "ConvTranspose": {**CONV_ATTRS, "output_padding": "ints", "output_shape": "ints"},
    "Gemm": {"transA": "int", "transB": "int", "alpha": "float", "beta": "float"},
    "BatchNormalization": {"epsilon": "float", "momentum": "float", "training_mode": "int"},
    "LayerNormalization": {"axis": "int", "epsilon": "float", "stash_type": "int"},
    "Softmax": {"axis": "int"}, "Flatten": {"axis": "int"}, "Reshape": {"allowzero": "int"},
    "ReduceSum": REDUCE_ATTRS, "ReduceMean": REDUCE_ATTRS, "ReduceMax": REDUCE_ATTRS,
    "ReduceMin": REDUCE_ATTRS, "Gelu": {"approximate": ("none", "tanh")},
}
FAMILIES = [("Relu", "Sigmoid", "Tanh", "Gelu", "Softmax", "Flatten", "Elu", "Neg"),
            ("Add", "Sub", "Mul", "Div", "MatMul", "Max"),
            ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"),
            ("Conv", "ConvTranspose"), ("Gemm", "MatMul"),
            ("LayerNormalization", "BatchNormalization", "InstanceNormalization")]
OPSETS = [7, 9, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 22, 23]


def interesting_int(rng: random.Random) -> int:
    return rng.choice(INTS) if rng.random() < 0.5 else rng.randint(-2, 4)


def new_attr(rng: random.Random, name: str, kind, old: AttributeProto | None):
    """A value for attribute name of kind ("int", "ints", "float" or its strings)."""
    if isinstance(kind, tuple):
        return helper.make_attribute(name, rng.choice(kind + ("", "same_upper", "bogus")))
    if kind == "int":
        return helper.make_attribute(name, interesting_int(rng))
    if kind == "float":
        return helper.make_attribute(name, rng.choice(FLOATS))
    vals = list(old.ints) if old is not None and old.type == AttributeProto.INTS else [1, 1]
    op = rng.randrange(5)
    if op == 0 and vals:
        vals[rng.randrange(len(vals))] = interesting_int(rng)
    elif op == 1 and vals:
        del vals[rng.randrange(len(vals))]
    elif op == 2:
        vals.append(rng.choice(vals) if vals and rng.random() < 0.5 else interesting_int(rng))
    elif op == 3:
        vals = [rng.randint(-1, 3) for _ in range(rng.randint(0, 6))]
    else:
        vals = [interesting_int(rng) for _ in vals]
    a = AttributeProto(name=name, type=AttributeProto.INTS)
    a.ints.extend(vals)
    return a


def mut_attribute(rng, m, ctx):
    if not m.graph.node:
        return False
    node = rng.choice(m.graph.node)
    known = ATTRS.get(node.op_type, {})
    names = sorted(set(known) | {a.name for a in node.attribute})
    if not names:
        return False
    name = rng.choice(names)
    idx = next((i for i, a in enumerate(node.attribute) if a.name == name), None)
    old = node.attribute[idx] if idx is not None else None
    r = rng.random()
    if old is not None and r < 0.15:
        del node.attribute[idx]  # the default, or a required attribute missing
        return f"drop {node.op_type}.{name}"
    if old is not None and r < 0.25:  # the right name with the wrong type
        kind = rng.choice(["int", "ints", "float", ("NOTSET",)])
    else:
        kind = known.get(name, "int" if old is None or old.type == AttributeProto.INT else
                         "float" if old.type == AttributeProto.FLOAT else "ints")
    a = new_attr(rng, name, kind, old)
    if idx is not None:
        node.attribute[idx].CopyFrom(a)
    else:
        node.attribute.append(a)
    return f"attr {node.op_type}.{name}={helper.get_attribute_value(a)!r}"


def mut_input_shape(rng, m, ctx):
    inits = {i.name for i in m.graph.initializer}
    cands = [vi for vi in list(m.graph.input) + list(m.graph.output) if vi.name not in inits]
    if not cands:
        return False
    vi = rng.choice(cands)
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return False
    dims = t.shape.dim
    op = rng.randrange(6)
    if op == 0 and len(dims):
        d = rng.choice(dims)
        old = d.dim_value if d.HasField("dim_value") else 2
        d.dim_value = rng.choice([0, 1, old + 1, max(1, old - 1), 2 * old])
    elif op == 1 and len(dims):  # symbolic: fed as 0..3 at run time, or as fuzz_dims says
        rng.choice(dims).dim_param = rng.choice(["N", "S", "M", "Q"])
        if rng.random() < 0.5:
            set_prop(m, "fuzz_dims", "")  # every symbolic dim fed anew
    elif op == 2 and len(dims):
        del dims[rng.randrange(len(dims))]
    elif op == 3:  # one more dim, leading (broadcasting) or trailing
        old = [copy.deepcopy(d) for d in dims]
        extra = onnx.TensorShapeProto.Dimension(dim_value=rng.choice([1, 1, 2, 3]))
        del dims[:]
        dims.extend([extra] + old if rng.random() < 0.5 else old + [extra])
    elif op == 4:  # no shape at all: rank unknown to hipdnn-ep
        old = [d.dim_value or 2 for d in dims]
        t.ClearField("shape")
        set_prop(m, f"fuzz_shape.{vi.name}", ",".join(map(str, old)))
    else:  # every dim symbolic, one name each
        for k, d in enumerate(dims):
            d.dim_param = f"d{k}"
    return f"shape {vi.name}"


def init_array(t: TensorProto) -> np.ndarray | None:
    try:
        return numpy_helper.to_array(t)
    except Exception:  # a mutated initializer may no longer read
        return None


def mut_initializer(rng, m, ctx):
    inits = list(m.graph.initializer)
    if not inits:
        return False
    t = rng.choice(inits)
    a = init_array(t)
    if a is None:
        return False
    op = rng.randrange(5)
    if op == 0 and a.dtype.kind == "f" and a.size:  # special values
        a = a.copy()
        flat = a.reshape(-1)
        for _ in range(rng.randint(1, 3)):
            flat[rng.randrange(flat.size)] = rng.choice(FLOATS + [6e4, -1e30])
        what = "specials"
    elif op == 1 and a.dtype.kind == "i" and a.size:  # axes, shapes: interesting ints
        a = a.copy()
        a.reshape(-1)[rng.randrange(a.size)] = rng.choice([0, -1, -2, 1, 2, 3, 5, 2 ** 40,
                                                           -2 ** 63, 2 ** 62])
        what = "value"
    elif op == 2:  # another shape, data to match
        shape = list(a.shape)
        k = rng.randrange(len(shape) + 1)
        if k == len(shape) or rng.random() < 0.2:
            shape.insert(rng.randrange(len(shape) + 1), rng.choice([1, 2]))
        elif rng.random() < 0.3:
            del shape[k]
        else:
            shape[k] = rng.choice([0, 1, shape[k] + 1, max(1, shape[k] - 1)])
        nrng = np.random.default_rng(rng.getrandbits(32))
        if a.dtype.kind == "i":
            a = nrng.integers(-1, 4, size=shape).astype(a.dtype)
        else:
            a = nrng.uniform(-1, 1, size=shape).astype(a.dtype)
        what = f"shape {shape}"
    elif op == 3:  # data of the wrong size for its dims
        raw = numpy_helper.from_array(a, t.name).raw_data
        t.ClearField("raw_data")
        t.raw_data = raw[:rng.randrange(len(raw) + 1)] if raw and rng.random() < 0.7 else \
            raw + bytes(rng.choice([1, 2, 4, 8]))
        return f"init {t.name} wrong size"
    else:  # the initializer becomes a graph input, fed at run time (no longer a constant)
        m.graph.initializer.remove(t)
        m.graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(a.shape)))
        return f"init {t.name} to input"
    t.CopyFrom(numpy_helper.from_array(a, t.name))
    return f"init {t.name} {what}"


def retype(m: onnx.ModelProto, old: int, new: int) -> None:
    for vi in list(m.graph.input) + list(m.graph.output) + list(m.graph.value_info):
        if vi.type.tensor_type.elem_type == old:
            vi.type.tensor_type.elem_type = new
    for t in m.graph.initializer:
        if t.data_type == old:
            a = init_array(t)
            if a is not None:
                t.CopyFrom(numpy_helper.from_array(a.astype(NP_TYPE[new]), t.name))


def mut_dtype(rng, m, ctx):
    types = {vi.type.tensor_type.elem_type for vi in m.graph.input}
    cur = FLOAT16 if FLOAT16 in types else FLOAT
    op = rng.randrange(4)
    if op == 0:  # the whole model float16 <-> float32
        retype(m, cur, FLOAT if cur == FLOAT16 else FLOAT16)
        return "model retyped"
    if op == 1:  # the whole model int64 (hipdnn-ep must leave it all to ORT)
        retype(m, cur, INT64)
        return "model int64"
    vis = list(m.graph.input) + list(m.graph.output)
    new = rng.choice([FLOAT, FLOAT16, INT64, TensorProto.DOUBLE, TensorProto.INT32,
                      TensorProto.BOOL])
    if op == 2 and vis:  # one tensor of another type: a model ORT rejects
        rng.choice(vis).type.tensor_type.elem_type = new
        return "one value retyped"
    inits = [t for t in m.graph.initializer if t.data_type in NP_TYPE]
    if not inits:
        return False
    t = rng.choice(inits)
    a = init_array(t)
    if a is None or new not in NP_TYPE:
        return False
    t.CopyFrom(numpy_helper.from_array(a.astype(NP_TYPE[new]), t.name))
    return f"init {t.name} retyped"


def mut_opset(rng, m, ctx):
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx") or rng.random() < 0.3:
            o.version = rng.choice(OPSETS) if o.domain in ("", "ai.onnx") else rng.choice([0, 1, 2])
    if rng.random() < 0.2:
        m.ir_version = rng.choice([3, 7, 8, 9, 10])
    return "opset"


def value_names(m: onnx.ModelProto, before: int | None = None) -> list[str]:
    """Graph inputs, initializers and node outputs (those of nodes before index before)."""
    names = [vi.name for vi in m.graph.input] + [t.name for t in m.graph.initializer]
    for n in list(m.graph.node)[:before]:
        names += [o for o in n.output if o]
    return list(dict.fromkeys(names))


def mut_nodes(rng, m, ctx):
    nodes = m.graph.node
    if not nodes:
        return False
    i = rng.randrange(len(nodes))
    n = nodes[i]
    op = rng.randrange(7)
    if op == 0 and n.input:  # dropped: its consumers read its first input instead
        src, gone, kind = n.input[0], set(n.output), n.op_type
        del nodes[i]
        for c in nodes:
            for k, v in enumerate(c.input):
                if v in gone:
                    c.input[k] = src
        for o in m.graph.output:
            if o.name in gone:
                o.name = src
        return f"drop node {kind}"
    if op == 1:  # duplicated: applied twice where the op keeps its input's shape
        d = copy.deepcopy(n)
        d.name = ""
        mid = f"{n.output[0]}_dup"
        for c in list(nodes)[i + 1:]:
            for k, v in enumerate(c.input):
                if v == n.output[0]:
                    c.input[k] = mid
        for o in m.graph.output:
            if o.name == n.output[0]:
                o.name = mid
        d.input[0] = n.output[0]
        del d.output[:]
        d.output.append(mid)
        nodes.insert(i + 1, d)
        return f"dup node {n.op_type}"
    if op == 2 and n.input:  # an input rewired to another value before it
        k = rng.randrange(len(n.input))
        n.input[k] = rng.choice(value_names(m, i) + [""])
        return f"rewire {n.op_type}.in{k}"
    if op == 3:  # an input dropped or added
        if n.input and rng.random() < 0.5:
            del n.input[rng.randrange(len(n.input))]
        else:
            n.input.append(rng.choice(value_names(m, i)))
        return f"arity {n.op_type}"
    if op == 4:  # another op of its family, or of the other domain
        fam = next((f for f in FAMILIES if n.op_type in f), None)
        if fam and rng.random() < 0.8:
            n.op_type = rng.choice(fam)
        else:
            n.domain = "com.microsoft" if n.domain == "" else ""
            if not any(o.domain == "com.microsoft" for o in m.opset_import):
                m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
        return f"op {n.op_type}/{n.domain}"
    if op == 5:  # an intermediate value also a graph output (read inside and out)
        v = rng.choice([o for o in n.output if o] or [""])
        if not v or any(o.name == v for o in m.graph.output):
            return False
        m.graph.output.append(helper.make_tensor_value_info(v, ctx["elem"], None))
        return f"output {v}"
    if len(nodes) > 1:  # two nodes swapped: an order that is not topological
        j = rng.randrange(len(nodes))
        a, b = copy.deepcopy(nodes[i]), copy.deepcopy(nodes[j])
        nodes[i].CopyFrom(b)
        nodes[j].CopyFrom(a)
        return "swap nodes"
    return False


def mut_graft(rng, m, ctx):
    """A new node of hipdnn-ep's set on a graph input or output, its output a new graph
    output: grows fusions the seeds do not have.  Shapes are those of the parent's last run
    (onnx's own shape inference crashes on some mutated models)."""
    inits = {t.name for t in m.graph.initializer}
    cands = sorted(k for k, (e, _) in ctx["shapes"].items() if k not in inits and e in TOL)
    if not cands:
        return False
    v = rng.choice(cands)
    elem, shape = ctx["shapes"][v]
    nrng = np.random.default_rng(rng.getrandbits(32))
    out = f"g{len(m.graph.node)}_{rng.randrange(1000)}"
    r = len(shape)
    N = helper.make_node

    def const(name, a):
        m.graph.initializer.append(numpy_helper.from_array(a.astype(NP_TYPE[elem]), name))
        return name

    kind = rng.randrange(8)
    if kind == 0:
        node = N(rng.choice(["Relu", "Sigmoid", "Tanh"]), [v], [out])
    elif kind == 1:  # broadcast operand: a suffix of the shape, some dims 1
        sub = [d if rng.random() < 0.6 else 1 for d in shape[rng.randrange(r + 1):]]
        node = N(rng.choice(["Add", "Sub", "Mul", "Div"]),
                 [v, const(out + "_c", nrng.uniform(0.5, 1.5, size=sub))][::rng.choice([1, -1])],
                 [out])
    elif kind == 2:
        node = N("Softmax", [v], [out], axis=rng.choice([-1, r - 1, 0, 1]))
    elif kind == 3 and r:
        axes = sorted(rng.sample(range(r), rng.randint(1, r)))
        node = N(rng.choice(["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"]), [v], [out],
                 axes=axes, keepdims=rng.randint(0, 1))
        m.opset_import[0].version = min(m.opset_import[0].version, 17)  # axes an attribute
    elif kind == 4 and r >= 2:
        axis = rng.randint(1, r - 1)
        node = N("LayerNormalization", [v, const(out + "_g", nrng.uniform(-1, 1, shape[axis:]))],
                 [out], axis=axis)
    elif kind == 5 and r >= 2:
        node = N("MatMul", [v, const(out + "_w", nrng.uniform(-1, 1, (shape[-1], 3)))], [out])
    elif kind == 6 and 3 <= r <= 5 and shape[1] >= 1:
        k = [min(3, d) if d else 1 for d in shape[2:]]
        node = N("Conv", [v, const(out + "_w", nrng.uniform(-1, 1, [2, shape[1]] + k))], [out],
                 pads=[rng.randint(0, 1)] * (2 * (r - 2)))
    else:
        node = N("Flatten", [v], [out], axis=rng.randint(0, r))
    m.graph.node.append(node)
    m.graph.output.append(helper.make_tensor_value_info(out, elem, None))
    return f"graft {node.op_type} on {v}"


MUTATORS = [(mut_attribute, 30), (mut_input_shape, 12), (mut_initializer, 12), (mut_dtype, 6),
            (mut_opset, 4), (mut_nodes, 14), (mut_graft, 12)]


def flip_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not b:
            break
        i = rng.randrange(len(b))
        op = rng.randrange(4)
        if op == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFF])
        elif op == 2:
            del b[i:i + rng.randint(1, 8)]
        else:
            b[i:i] = b[i:i + rng.randint(1, 8)]
    return bytes(b)


@np.errstate(all="ignore")  # NaN and inf cast to int64, 1e30 to float16: meant
def mutate(rng: random.Random, m: onnx.ModelProto,
           shapes: dict) -> tuple[onnx.ModelProto, list[str]]:
    """Stacked mutations of a copy of m; shapes: (elem, dims) of its inputs and outputs as
    it last ran."""
    m = copy.deepcopy(m)
    elem = FLOAT16 if any(vi.type.tensor_type.elem_type == FLOAT16 for vi in m.graph.input) \
        else FLOAT
    ctx, done = {"elem": elem, "shapes": shapes}, []
    fns, weights = zip(*MUTATORS)
    for _ in range(30):
        what = rng.choices(fns, weights)[0](rng, m, ctx)
        if what:
            done.append(what)
        if len(done) >= rng.choice([1, 1, 2, 3]):
            break
    return m, done


# ---- running ----------------------------------------------------------------------------

def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_LIMIT, MEM_LIMIT))


def ort_cmd(work: Path, ep: str, case: dict) -> list[str]:
    cmd = [str(ORT_RUN), "--model", str(work / "model.onnx"), "--out-dir", str(work / ep),
           "--ep", ep, "--log-level", "3", "--opt-level", case["opt"]]
    if ep == "hipdnn":
        cmd += ["--ep-lib", str(ep_library()), "--threads", str(case["threads"])]
    for name, files in case["inputs"].items():
        cmd += [a for f in files for a in ("--input", f"{name}={work / f}")]
    return cmd


def run_pair(work: Path, case: dict) -> dict:
    """Both runs at once; per EP: rc (None: timed out), stderr, assigned EPs."""
    procs = {}
    env = dict(os.environ, HIPDNN_LOG_LEVEL="off")
    for ep in ("cpu", "hipdnn"):
        out = work / ep
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        procs[ep] = subprocess.Popen(ort_cmd(work, ep, case), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, errors="replace",
                                     env=env, preexec_fn=limit_memory)
    res, deadline = {}, time.monotonic() + TIMEOUT
    for ep, p in procs.items():
        try:
            stdout, stderr = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, stderr = p.communicate()
            rc = None
        assigned = [ln.split()[1] for ln in stdout.splitlines() if ln.startswith("assigned ")]
        res[ep] = {"rc": rc, "stderr": stderr, "assigned": assigned}
    return res


def compare(work: Path, tame: bool) -> str | None:
    """Why the outputs of the two runs disagree, or None."""
    for path in sorted((work / "cpu").glob("*.npy")):
        name = path.name[:-4]  # output NAME of run I: NAME.I
        want, got_path = np.load(path), work / "hipdnn" / path.name
        if not got_path.exists():
            return f"output {name}: the CPU EP wrote it, hipdnn-ep's run did not"
        got = np.load(got_path)
        if got.size == want.size == 0 and got.dtype == want.dtype:
            continue  # ORT 1.30's CPU EP leaves an empty input unreduced on a negative axis
        if got.shape != want.shape or got.dtype != want.dtype:
            return (f"output {name}: hipdnn-ep gave {got.dtype}{list(got.shape)}, the CPU EP "
                    f"{want.dtype}{list(want.shape)}")
        if not tame or want.dtype.kind != "f" or want.size == 0:
            continue
        tol = TOL[FLOAT16 if want.dtype == np.float16 else FLOAT]
        w, g = want.astype(np.float64), got.astype(np.float64)
        finite = np.isfinite(w)
        if not finite.any():
            continue
        scale = max(1.0, float(np.abs(w[finite]).max()))
        with np.errstate(invalid="ignore"):
            bad = finite & ~(np.abs(g - w) <= tol * (np.abs(w) + scale))
        if np.isnan(w).any():  # NaN made inside: ORT's ReduceMax drops it in some lanes
            bad &= ~np.isnan(g)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            return (f"output {name}: {int(bad.sum())} of {want.size} elements differ (first "
                    f"at flat index {k}: hipdnn-ep {g.reshape(-1)[k]!r}, CPU EP "
                    f"{w.reshape(-1)[k]!r}; tolerance {tol} * (|ref| + {scale:.3g}))")
    return None


def empty_reduce_quirk(m: onnx.ModelProto | None, runs: list[dict[str, np.ndarray]]) -> bool:
    """ORT 1.30's CPU EP does not reduce an empty input over a negative axis (its output
    keeps the axis, where ONNX drops it or keeps a 1): a model with such a reduction, fed an
    empty input, is run but not compared."""
    if m is None or not any(a.size == 0 for f in runs for a in f.values()):
        return False
    consts = {t.name: init_array(t) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type.startswith("Reduce"):
            axes = [list(a.ints) for a in n.attribute if a.name == "axes"]
            if len(n.input) > 1 and consts.get(n.input[1]) is not None:
                axes.append(consts[n.input[1]].reshape(-1).tolist())
            if any(x < 0 for ax in axes for x in ax):
                return True
    return False


def judge(work: Path, case: dict) -> tuple[str, str | None]:
    """(outcome, finding or None); outcome: hipdnn, mixed, ort (who ran the nodes), or
    rejected (ORT's CPU EP refused the model)."""
    res = run_pair(work, case)
    cpu, hip = res["cpu"], res["hipdnn"]
    for ep in res:
        (work / f"{ep}.stderr").write_text(res[ep]["stderr"])
    if hip["rc"] is not None and hip["rc"] < 0:
        return "finding", (f"the hipdnn run was killed by signal {-hip['rc']}:\n"
                           f"{hip['stderr'][-3000:]}")
    if SANITIZER.search(hip["stderr"]):
        return "finding", f"sanitizer report in the hipdnn run:\n{hip['stderr'][-3000:]}"
    if hip["rc"] is None and cpu["rc"] is not None:
        return "finding", f"the hipdnn run hung (over {TIMEOUT} s; the CPU EP's took less)"
    if cpu["rc"] != 0:
        return "rejected", None
    if case.get("quirk"):
        return "quirk", None
    if hip["rc"] != 0:
        return "finding", (f"the CPU EP ran the model, the hipdnn run failed (status "
                         f"{hip['rc']}):\n{hip['stderr'][-3000:]}")
    why = compare(work, case["tame"])
    mine = sum(1 for a in hip["assigned"] if a == "hipdnn")
    outcome = "ort" if mine == 0 else "hipdnn" if mine == len(hip["assigned"]) else "mixed"
    return outcome, why


def prepare(work: Path, data: bytes, runs: list[dict[str, np.ndarray]], case: dict) -> dict:
    """The model and its inputs (runs: one dict of arrays per run of one session) in work."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    (work / "model.onnx").write_bytes(data)
    case["inputs"] = {}
    for r, feeds in enumerate(runs):
        for k, (name, a) in enumerate(feeds.items()):
            np.save(work / f"in{k}_{r}.npy", a)
            case["inputs"].setdefault(name, []).append(f"in{k}_{r}.npy")
    (work / "case.json").write_text(json.dumps(case, indent=1))
    return case


def ran_shapes(work: Path, feeds: dict[str, np.ndarray]) -> dict:
    """name -> (elem type, dims) of a run's inputs and the CPU EP's outputs."""
    back = {v: k for k, v in NP_TYPE.items()}
    shapes = {n: (back.get(a.dtype.type, 0), list(a.shape)) for n, a in feeds.items()}
    for p in (work / "cpu").glob("*.0.npy"):
        a = np.load(p)
        shapes[p.name[:-len(".0.npy")]] = (back.get(a.dtype.type, 0), list(a.shape))
    return shapes


def replay_case(m: onnx.ModelProto, k: int) -> tuple[dict, list[dict[str, np.ndarray]]]:
    """How seed k runs: its metadata may ask for later runs of the session with other
    symbolic dims (fuzz_more_runs: "N=0;N=3"), concurrent Run calls (fuzz_threads) and an
    optimization level (fuzz_opt), as a reproducer's finding needed them; else one run,
    one thread, ORT's optimizations off."""
    hints = props(m)
    case = {"opt": hints.get("fuzz_opt", "disable"), "threads": int(hints.get("fuzz_threads", 1))}
    more = []
    for dims in filter(None, hints.get("fuzz_more_runs", "").split(";")):
        again = copy.deepcopy(m)
        set_prop(again, "fuzz_dims", dims)
        more.append(make_feeds(again, random.Random(k), False))
    return case, more


def check_dir(d: Path) -> int:
    """--check: a reproducer directory judged again."""
    case = json.loads((d / "case.json").read_text())
    outcome, why = judge(d, case)
    print(f"fuzz_onnx: {d}: {outcome}" + (f"\nFAIL: {why}" if why else ", no finding"))
    return 1 if why else 0


def missing() -> str | None:
    for path in (ORT_RUN, ep_library()):
        if not path.exists():
            return (f"{path} is not built: fuzz_onnx runs hipdnn-ep through the build of "
                    f"HIPDNN_BUILD_DIR ({BUILD_DIR}); `make build ORT_EP=ON` builds ort_run "
                    "and libhipdnn_ep.so (ORT fetched by tools/fetch_ort.sh)")
    return None


def main() -> int:
    if sys.argv[1:2] == ["--write-seeds"]:
        return write_seeds()
    if (why := missing()) is not None:
        print(f"FAIL: fuzz_onnx: {why}")
        return 1
    if sys.argv[1:2] == ["--check"]:
        return check_dir(Path(sys.argv[2]))
    keep_going, verbose = "--keep-going" in sys.argv, "--verbose" in sys.argv
    args = [a for a in sys.argv[1:] if a not in ("--keep-going", "--verbose")]
    build, seconds = Path(args[0]), float(args[1])
    seed = int(args[2]) if len(args) > 2 else 1
    rng = random.Random(seed)
    corpus = [(p.name, onnx.load_from_string(p.read_bytes()))
              for p in sorted(CORPUS.glob("*.onnx"))]
    pool = []  # mutation parents, with their shapes: the seeds, then models hipdnn ran
    crashes, work = build / "crashes", build / "fuzz_onnx.work"
    crashes.mkdir(parents=True, exist_ok=True)
    start, runs, findings = time.monotonic(), 0, 0
    counts = {"hipdnn": 0, "mixed": 0, "ort": 0, "rejected": 0, "quirk": 0}
    while (runs < len(corpus) or time.monotonic() - start < seconds) and \
            (keep_going or not findings):
        if runs < len(corpus):
            label, m, what = corpus[runs][0], copy.deepcopy(corpus[runs][1]), []
            feeds, special = make_feeds(m, random.Random(runs), False), False
            case, more = replay_case(m, runs)
        else:
            m, what = mutate(rng, *rng.choice(pool))
            special = rng.random() < 0.1
            feeds = make_feeds(m, rng, special)
            case = {"opt": rng.choice(["disable"] * 6 + ["basic", "all"]),
                    "threads": rng.choice([1] * 9 + [3])}  # concurrent Runs must agree
            more = []
            if props(m).get("fuzz_dims") and rng.random() < 0.3:
                again = copy.deepcopy(m)  # a second run of the session, other symbolic dims
                set_prop(again, "fuzz_dims", "")
                more.append(make_feeds(again, rng, special))
        try:
            data = m.SerializeToString()
        except Exception as e:  # a value protobuf will not encode
            print(f"fuzz_onnx: {label if not what else what}: not serialized: {e}")
            continue
        if what and rng.random() < 0.08:
            data, m = flip_bytes(rng, data), None
            what.append("bytes")
        if what:
            label = f"mutation {runs - len(corpus) + 1} ({'; '.join(what)})"
        case["tame"] = not special and all(tame_data(a) for f in [feeds] + more
                                           for a in f.values()) and (
            m is None or all(tame_data(a) for t in m.graph.initializer
                             if (a := init_array(t)) is not None))
        case["what"] = label
        case["quirk"] = empty_reduce_quirk(m, [feeds] + more)
        prepare(work, data, [feeds] + more, case)
        outcome, why = judge(work, case)
        runs += 1
        if verbose:
            print(f"{outcome:8} {label}", flush=True)
        if why is None:
            counts[outcome] += 1
            if outcome != "rejected" and m is not None and (runs <= len(corpus) or
                                                           outcome != "ort"):
                entry = (m, ran_shapes(work, feeds))
                if len(pool) < POOL:
                    pool.append(entry)
                else:  # the seeds stay
                    pool[rng.randrange(len(corpus), POOL)] = entry
            continue
        findings += 1
        out = crashes / f"fuzz_onnx-{runs}"
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(work, out)
        (out / "case.json").write_text(json.dumps(case, indent=1))
        print(f"FAIL: fuzz_onnx: model {runs}, {label}, seed {seed}: {why}\n"
              f"reproducer: {out}\n"
              f"rerun:      {sys.executable} {Path(__file__).relative_to(REPO)} --check {out}\n"
              f"ort_run:    {' '.join(ort_cmd(out, 'hipdnn', case))}", flush=True)
    if not pool:
        print("FAIL: fuzz_onnx: no seed ran (fuzz/corpus/fuzz_onnx/ is empty or ORT rejects "
              "every seed)")
        return 1
    print(f"fuzz_onnx: {runs} models in {time.monotonic() - start:.0f} s, {findings} finding"
          f"{'s' if findings != 1 else ''} ({counts['hipdnn']} all on hipdnn-ep, "
          f"{counts['mixed']} split, {counts['ort']} all left to ORT, {counts['rejected']} "
          f"rejected by ORT's CPU EP, {counts['quirk']} not compared)")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
