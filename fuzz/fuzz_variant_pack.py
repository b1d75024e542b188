"""fuzz_variant_pack — execute's variant pack over hostile memory (issue 26).

An input is a small JSON description: one graph of a catalogue (pointwise unary, binary
with broadcast and select, a runtime scalar, conv fprop, matmul, layernorm, softmax, a
reduction, batchnorm with running statistics, two chained outputs), its io type, the
engine it is planned on (the reference engine, or the GPU engine's host emulation over the
fake CUDA driver), the layout its tensors declare, the allocations (host or device, each
with guard bytes on both sides, filled with tame values from the seed) and how each
tensor is supplied: a NumPy view, a DeviceArray view, a hand-made DLPack capsule or a
__cuda_array_interface__ dict over some address of some allocation, with whatever shape,
strides, type, flags, device and pointer the description says (lying included), or None,
nothing, garbage, twice; plus runtime scalars in any form and a workspace of any size,
type and memory.  Descriptions are mutated field by field (views moved onto each other,
shifted by an element or a byte, types, shapes, strides, DLPack and CAI fields, engines).

Every execute must either raise one of hipdnn's exceptions (HipdnnError and its kinds,
ValueError / TypeError / NotImplementedError / OverflowError) with a message, leaving every
allocation as it was, or succeed with: no read-only output, no two outputs over the same
bytes, no array smaller than its tensor or of another type, no host memory taken by the
device engine, no workspace smaller than the plan's; and every allocation, guard bytes
included, equal to what it held before with each output's elements replaced by the result
of the same engine on fresh separate arrays holding the same inputs (bit for bit: a device
reference keeps each tensor's offset modulo 256, but puts an input that overlaps an output
at the start of an allocation, as the backend's copy of it is, since kernels are chosen by
pointer alignment).  Anything else, a crash or a hang included, is a finding: its
description is written to BUILD/crashes/fuzz_variant_pack-<n>.json.

    /usr/bin/python3 fuzz/fuzz_variant_pack.py BUILD SECONDS [SEED] [--verbose]
                    (fuzz/run.sh runs it; SECONDS 0: the seeds only; --verbose: each
                    pack's outcome, refusals with their message)
    /usr/bin/python3 fuzz/fuzz_variant_pack.py --check FILE   (one description, judged again)
    /usr/bin/python3 fuzz/fuzz_variant_pack.py --write-seeds  (rewrites the seeds; the
                    reproducers fuzz/corpus/fuzz_variant_pack/regress-* are kept by hand)

The fake driver and the emulated engine come from HIPDNN_BUILD_DIR (default build/ at the
repository root): build/tests/fake_cuda/libcuda.so.1 and
build/tests/emulated/libhip_emulated.so, test targets of that build.  Exit status 1 on a
finding or when they are missing, else 0 with the count of packs.
"""
from __future__ import annotations

import copy
import ctypes
import json
import os
import random
import select
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CORPUS = HERE / "corpus" / "fuzz_variant_pack"
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"

# issue 26 item 8: a device pointer whose __cuda_array_interface__ or DLPack shape claims
# more than its allocation holds (4 bytes claiming [1024, 1024]) was not refused, and was
# written past its end.  On (fixed: the backend checks each device tensor's extent at
# execute, and a preferred host engine's staging asks the same check before it allocates
# or copies anything), device descriptors may claim more than their allocation and lie
# anywhere; off, they claim no more than it.
OVERSTATED_EXTENTS = True
# Found by this fuzzer, fixed (hipdnn/_pygraph/host_staging.py): device arrays given to a
# preferred host engine were staged through separate host copies, so two outputs over the
# same device bytes were not refused (the last copied back won), and a read-only output
# was refused only while copying back, after the outputs before it were written.  On,
# such outputs are generated for the host engine too; off, they are not.
STAGED_OUTPUT_CLASHES = True

GUARD = 64            # bytes before and after each allocation's data, nobody's
MAX_BYTES = 1 << 16   # per allocation
TIMEOUT = 60          # seconds per pack: the tensors are tiny, so a hang is a finding
POOL = 200            # descriptions kept as parents: the seeds and packs that ran
STORAGE = {"fp32": ("f4", 4), "fp16": ("f2", 2), "bf16": ("bf16", 2), "i8": ("i1", 1)}
TYPESTRS = ["<f4", "<f2", "<u2", "|i1", "|u1", "<i4", "<i8", "|b1", "<f8", ">f4", "=f4",
            "f4", "<f16", "<c8", ""]
DL_DTYPES = {"f4": (2, 32, 1), "f2": (2, 16, 1), "bf16": (4, 16, 1), "i1": (0, 8, 1),
             "u1": (1, 8, 1), "u2": (1, 16, 1), "i4": (0, 32, 1), "i8": (0, 64, 1),
             "b1": (6, 8, 1), "f8": (2, 64, 1)}


# ---- the graphs ----------------------------------------------------------------------------
# name: (inputs {name: shape}, outputs {name: shape or [shape, storage]}, runtime scalars)

GRAPHS = {
    "tanh": ({"x": [6, 10]}, {"y": [6, 10]}, []),
    "add_broadcast": ({"a": [6, 10], "b": [1, 10]}, {"y": [6, 10]}, []),
    "select": ({"x": [4, 6], "b": [4, 6], "m": [4, 6]}, {"y": [4, 6]}, []),
    "scale_by_scalar": ({"x": [5, 7]}, {"y": [5, 7]}, ["s"]),
    "conv_fprop": ({"x": [1, 3, 6, 6], "w": [4, 3, 3, 3]}, {"y": [1, 4, 6, 6]}, []),
    "matmul": ({"a": [2, 6, 8], "b": [2, 8, 6]}, {"c": [2, 6, 6]}, []),
    "layernorm": ({"x": [4, 16], "s": [1, 16], "b": [1, 16]},
                  {"y": [4, 16], "mean": [[4, 1], "fp32"], "inv": [[4, 1], "fp32"]}, ["eps"]),
    "softmax": ({"x": [4, 12]}, {"y": [4, 12]}, []),
    "reduction": ({"x": [6, 10]}, {"y": [6, 1]}, []),
    "batchnorm_running": ({"x": [2, 4, 3, 3], "s": [1, 4, 1, 1], "b": [1, 4, 1, 1],
                           "rm": [1, 4, 1, 1], "rv": [1, 4, 1, 1]},
                          {"y": [2, 4, 3, 3], "mean": [[1, 4, 1, 1], "fp32"],
                           "inv": [[1, 4, 1, 1], "fp32"], "next_rm": [[1, 4, 1, 1], "fp32"],
                           "next_rv": [[1, 4, 1, 1], "fp32"]}, []),
    "two_outputs": ({"x": [4, 6], "b": [1, 6]}, {"s": [4, 6], "r": [4, 6]}, []),
}


def make_nodes(g, name, t):
    """The graph's nodes from its input tensors; {output name: tensor}."""
    import hipdnn
    rm, ph = hipdnn.reduction_mode, hipdnn.norm_forward_phase
    if name == "tanh":
        return {"y": g.tanh(input=t["x"])}
    if name == "add_broadcast":
        return {"y": g.add(a=t["a"], b=t["b"])}
    if name == "select":
        return {"y": g.binary_select(input0=t["x"], input1=t["b"], mask=t["m"])}
    if name == "scale_by_scalar":
        return {"y": g.mul(a=t["x"], b=t["s"])}
    if name == "conv_fprop":
        return {"y": g.conv_fprop(image=t["x"], weight=t["w"], padding=[1, 1])}
    if name == "matmul":
        return {"c": g.matmul(A=t["a"], B=t["b"])}
    if name == "layernorm":
        return dict(zip(["y", "mean", "inv"], g.layernorm(ph.TRAINING, t["x"], t["s"], t["b"],
                                                          epsilon=t["eps"])))
    if name == "softmax":
        m = g.reduction(input=t["x"], mode=rm.MAX)
        m.set_dim([4, 1])
        e = g.exp(input=g.sub(a=t["x"], b=m))
        s = g.reduction(input=e, mode=rm.ADD)
        s.set_dim([4, 1])
        return {"y": g.div(a=e, b=s)}
    if name == "reduction":
        return {"y": g.reduction(input=t["x"], mode=rm.ADD)}
    if name == "batchnorm_running":
        return dict(zip(["y", "mean", "inv", "next_rm", "next_rv"], g.batchnorm(
            t["x"], t["s"], t["b"], in_running_mean=t["rm"], in_running_var=t["rv"],
            epsilon=1e-5, momentum=0.1)))
    s = g.add(a=t["x"], b=t["b"])
    return {"s": s, "r": g.mul(a=g.relu(input=s), b=t["x"])}


def strides_of(shape, layout):
    """Row-major (NHWC for 4-d shapes in layout "nhwc"), every stride doubled in "gapped"."""
    order = [0, 2, 3, 1] if layout == "nhwc" and len(shape) == 4 else list(range(len(shape)))
    out, acc = [0] * len(shape), 2 if layout == "gapped" else 1
    for axis in reversed(order):
        out[axis] = acc
        acc *= shape[axis]
    return out


def slots(desc):
    """(name, is_output, shape, strides, storage) of each array tensor of the graph."""
    ins, outs, _ = GRAPHS[desc["graph"]]
    out = [(n, False, s, strides_of(s, desc["layout"]), desc["io"]) for n, s in ins.items()]
    for n, spec in outs.items():
        shape, storage = (spec[0], spec[1]) if isinstance(spec[0], list) else (spec, desc["io"])
        out.append((n, True, shape, strides_of(shape, desc["layout"]), storage))
    return out


def span_range(shape, strides, itemsize):
    """Bytes [lo, hi) a view's elements reach, relative to its pointer; (0, 0) if empty."""
    if any(d <= 0 for d in shape):
        return 0, 0
    lo = sum((d - 1) * s for d, s in zip(shape, strides) if s < 0)
    hi = sum((d - 1) * s for d, s in zip(shape, strides) if s > 0)
    return lo * itemsize, (hi + 1) * itemsize


# ---- descriptions: generated, mutated, kept inside their allocations -------------------------

def fresh_view(wrap, buf, offset):
    return {"wrap": wrap, "buf": buf, "offset": offset, "shape": None, "strides": None,
            "dtype": None, "readonly": False, "null": False, "key": "tensor"}


def generate(rng, graph=None, engine=None):
    """A description of an honest pack, its tensors placed by one of the aliasing patterns."""
    graph = graph or rng.choice(sorted(GRAPHS))
    engine = engine or rng.choice(["host", "device"])
    d = {"graph": graph, "io": rng.choice(["fp32"] * 4 + ["fp16", "bf16"]), "engine": engine,
         "layout": rng.choice(["packed", "packed", "gapped", "nhwc"]),
         "seed": rng.randrange(1 << 30), "tensors": {}, "workspace": None}
    if d["graph"] in ("layernorm", "batchnorm_running"):
        d["io"] = "fp32"  # statistics are fp32: one type keeps in-place moves meaningful
    ss = slots(d)
    width = max(span_range(s[2], s[3], STORAGE[s[4]][1])[1] for s in ss)
    space = "host" if engine == "host" else "device"
    d["buffers"] = [{"space": space, "bytes": 2 * width * len(ss), "dtype": d["io"]}]
    wraps = ["numpy"] if engine == "host" else ["devarray", "devarray", "cai", "dlpack",
                                                 "devarray_dlpack", "devarray_cai"]
    for k, (name, _out, _shape, _st, _storage) in enumerate(ss):
        d["tensors"][name] = fresh_view(rng.choice(wraps), 0, 2 * width * k)
    for name in GRAPHS[graph][2]:
        d["tensors"][name] = {"wrap": "scalar", "form": "float",
                              "value": 1e-5 if name == "eps" else 0.75}
    pattern = rng.choice(["apart", "in_place", "shifted", "crowded"])
    outs = [s[0] for s in ss if s[1]]
    ins = [s[0] for s in ss if not s[1]]
    o, i = rng.choice(outs), rng.choice(ins)
    if pattern == "in_place":
        d["tensors"][o]["offset"] = d["tensors"][i]["offset"]
    elif pattern == "shifted":
        d["tensors"][o]["offset"] = d["tensors"][i]["offset"] + 4 * rng.choice([-2, -1, 1, 3])
    elif pattern == "crowded":
        for name in outs + ins:
            d["tensors"][name]["offset"] = 8 * rng.randrange(max(1, width // 8))
    if rng.random() < 0.2:
        d["workspace"] = {"wrap": "numpy" if engine == "host" else "devarray", "space": space,
                          "delta": rng.choice([0, 0, 64]), "dtype": "u1", "readonly": False}
    return normalize(d)


def _mut_view(rng, d, t, name):
    """One lie or move for an array tensor's view."""
    graph_shape = {s[0]: s[2] for s in slots(d)}.get(name, [1])
    op = rng.randrange(14)
    if op == 0:
        t["wrap"] = rng.choice(["numpy", "devarray", "cai", "dlpack", "none", "missing",
                                "garbage", "twice", "devarray_dlpack", "devarray_cai"])
    elif op == 1:
        other = d["tensors"][rng.choice(sorted(d["tensors"]))]
        if other.get("wrap") != "scalar":  # onto another tensor, or next to it
            t["buf"], t["offset"] = other.get("buf", 0), other.get("offset", 0) + \
                rng.choice([0, 0, 1, -4, 4, 8, -8, 2])
    elif op == 2:
        t["offset"] = t.get("offset", 0) + rng.choice([1, 2, -1, 4, -4, 64, -64, 1000])
    elif op == 3:
        t["buf"] = rng.randrange(len(d["buffers"]) + 1)
    elif op == 4:
        shape = list(t.get("shape") or graph_shape)
        choice = rng.randrange(6)
        if choice == 0 and shape:
            shape[rng.randrange(len(shape))] += rng.choice([-1, 1, 5])
        elif choice == 1:
            shape = [1] + shape
        elif choice == 2:
            shape = shape[1:]
        elif choice == 3:
            shape = list(reversed(shape))
        elif choice == 4:
            shape = [rng.choice([0, -1, 1 << 20, 1024])] + shape[1:]
        else:
            shape = [1024, 1024]
        t["shape"] = shape
    elif op == 5:
        strides = list(t.get("strides") or strides_of(t.get("shape") or graph_shape, "packed"))
        if strides:
            k = rng.randrange(len(strides))
            strides[k] = rng.choice([0, -strides[k], 2 * strides[k], strides[k] + 1, 1 << 40])
        t["strides"] = strides
    elif op == 6:
        t["dtype"] = rng.choice(sorted(DL_DTYPES))
    elif op == 7:
        t["readonly"] = not t.get("readonly")
    elif op == 8:
        t["null"] = not t.get("null")
    elif op == 9:
        dl = t.setdefault("dl", {})
        field = rng.choice(["code", "bits", "lanes", "device_type", "device_id", "byte_offset",
                            "versioned", "major", "capsule", "dlpack_device", "null_strides",
                            "raises"])
        dl[field] = {"code": lambda: rng.choice([0, 1, 2, 4, 5, 6, 255]),
                     "bits": lambda: rng.choice([0, 1, 8, 16, 32, 64, 255]),
                     "lanes": lambda: rng.choice([0, 1, 2, 4, 65535]),
                     "device_type": lambda: rng.choice([0, 1, 2, 3, 7, 10, 11, 13, 999, -1]),
                     "device_id": lambda: rng.choice([0, 1, -1, 7]),
                     "byte_offset": lambda: rng.choice([0, 4, 8, 64, 1]),
                     "versioned": lambda: rng.random() < 0.5,
                     "major": lambda: rng.choice([0, 1, 2]),
                     "capsule": lambda: rng.choice(["dltensor", "dltensor_versioned",
                                                    "used_dltensor", "bogus"]),
                     "dlpack_device": lambda: rng.choice([None, [1, 0], [2, 0], [2, 1], "raise",
                                                          "missing"]),
                     "null_strides": lambda: rng.random() < 0.5,
                     "raises": lambda: rng.random() < 0.3}[field]()
        t["wrap"] = "dlpack"
    elif op == 10:
        cai = t.setdefault("cai", {})
        field = rng.choice(["typestr", "version", "strides_none", "mask", "stream", "data"])
        cai[field] = {"typestr": lambda: rng.choice(TYPESTRS),
                      "version": lambda: rng.choice([0, 1, 2, 3, 99]),
                      "strides_none": lambda: rng.random() < 0.5,
                      "mask": lambda: rng.random() < 0.5,
                      "stream": lambda: rng.choice([None, 0, 1, 2, 12345]),
                      "data": lambda: rng.choice(["tuple", "list", "int", "long"])}[field]()
        t["wrap"] = "cai"
    elif op == 11:
        t["key"] = rng.choice(["tensor", "uid", "other_graph", "bool"])
    elif op == 12:  # every stride of the graph's, but the view starts a byte off
        t["offset"] = t.get("offset", 0) + rng.choice([1, 3])
    else:
        t.update(fresh_view(t.get("wrap", "numpy") if t.get("wrap") != "scalar" else "numpy",
                            t.get("buf", 0), t.get("offset", 0)))


def _mut_scalar(rng, t):
    t["form"] = rng.choice(["float", "np32", "np64", "0d", "1elem", "2elem", "str", "none",
                            "device", "int", "bool", "nan", "inf"])
    t["value"] = rng.choice([0.5, 1e-5, -2.0, 0.0, 1e30, 3.0])


def mutate(rng, d, pool):
    """1 to 4 edits of a copy of d."""
    d = copy.deepcopy(d)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(10)
        if op < 6 and d["tensors"]:
            name = rng.choice(sorted(d["tensors"]))
            t = d["tensors"][name]
            if t.get("wrap") == "scalar":
                _mut_scalar(rng, t)
            else:
                _mut_view(rng, d, t, name)
        elif op == 6:
            b = rng.choice(d["buffers"])
            b["space"] = rng.choice(["host", "device"]) if rng.random() < 0.5 else b["space"]
            b["bytes"] = max(8, b["bytes"] + rng.choice([-64, -8, 8, 256, b["bytes"]]))
            if rng.random() < 0.3:
                d["buffers"].append({"space": rng.choice(["host", "device"]),
                                     "bytes": rng.choice([8, 256, 4096]), "dtype": d["io"]})
        elif op == 7:
            w = d["workspace"] or {"wrap": "numpy", "space": "host", "delta": 0, "dtype": "u1",
                                   "readonly": False}
            field = rng.choice(["wrap", "space", "delta", "dtype", "readonly", "none"])
            if field == "none":
                w = None
            else:
                w[field] = {"wrap": lambda: rng.choice(["numpy", "devarray", "cai", "dlpack",
                                                         "garbage", "noncontiguous"]),
                            "space": lambda: rng.choice(["host", "device"]),
                            "delta": lambda: rng.choice([-1, -64, 0, 1, 4096, -(1 << 20)]),
                            "dtype": lambda: rng.choice(["u1", "f4", "bits255", "u2"]),
                            "readonly": lambda: rng.random() < 0.5}[field]()
            d["workspace"] = w
        elif op == 8:
            d["engine"] = "device" if d["engine"] == "host" else "host"
        else:  # another layout, or a parent's tensor supply grafted by name
            if rng.random() < 0.5:
                d["layout"] = rng.choice(["packed", "gapped", "nhwc"])
            else:
                other = rng.choice(pool)
                common = sorted(set(other["tensors"]) & set(d["tensors"]))
                if common and len(other["buffers"]) <= len(d["buffers"]):
                    name = rng.choice(common)
                    d["tensors"][name] = copy.deepcopy(other["tensors"][name])
    d["seed"] = rng.randrange(1 << 30) if rng.random() < 0.2 else d["seed"]
    return normalize(d)


ITEMSIZE = {"f4": 4, "f2": 2, "bf16": 2, "u2": 2, "i1": 1, "u1": 1, "i4": 4, "i8": 8,
            "b1": 1, "f8": 8}


def view_dtype(d, t, storage):
    """The type code a view is made with: a DeviceArray view the allocation's, else its
    own, else its tensor's."""
    if t.get("wrap", "").startswith("devarray") and \
            d["buffers"][t.get("buf", 0) % len(d["buffers"])]["space"] == "device":
        return STORAGE[d["buffers"][t.get("buf", 0) % len(d["buffers"])]["dtype"]][0]
    return t.get("dtype") or STORAGE[storage][0]


def told_type(d, t, storage):
    """(type code or None when hipdnn knows no such type, item size) as hipdnn reads the
    value: a CAI typestr, DLPack's code, bits and lanes, or the view's type."""
    code = view_dtype(d, t, storage)
    if t.get("wrap") == "cai" and "typestr" in t.get("cai", {}):
        ts = t["cai"]["typestr"]
        ok = len(ts) == 3 and ts[0] in "<|=" and ts[1:] in ITEMSIZE and ts[1:] != "bf16"
        digits = "".join(ch for ch in ts if ch.isdigit())
        return (ts[1:] if ok else None), max(1, min(16, int(digits or 1)))
    if t.get("wrap") == "dlpack" and any(k in t.get("dl", {}) for k in ("code", "bits",
                                                                         "lanes")):
        dl, base = t["dl"], DL_DTYPES[code]
        three = (dl.get("code", base[0]), dl.get("bits", base[1]), dl.get("lanes", base[2]))
        known = {v: k for k, v in DL_DTYPES.items()}
        return known.get(three), max(1, (three[1] * three[2] + 7) // 8)
    return code, ITEMSIZE[code]


def claimed(d, t, name):
    """(shape, strides, itemsize) a view claims for its own elements."""
    info = {s[0]: s for s in slots(d)}.get(name)
    shape = t.get("shape") or (info[2] if info else [1])
    strides = t.get("strides") or (strides_of(shape, "packed") if t.get("shape") else
                                   (info[3] if info else [1]))
    if len(strides) != len(shape) or (t.get("wrap") == "cai" and t.get("cai", {}).get(
            "strides_none")) or (t.get("wrap") == "dlpack" and t.get("dl", {}).get(
            "null_strides")):  # none said: packed
        strides = strides_of(shape, "packed")
    code, item = told_type(d, t, info[4] if info else "fp32")
    return shape, strides, max(item, ITEMSIZE[view_dtype(d, t, info[4] if info else "fp32")])


def is_null(t):
    """Whether a view's pointer is NULL (which only CAI and DLPack can say: a DeviceArray
    view asked for one is a CAI dict)."""
    return bool(t.get("null")) and t.get("wrap") in ("cai", "dlpack", "devarray",
                                                     "devarray_dlpack", "devarray_cai")


def staged_kind(t):
    """Whether hipdnn.is_device_array takes this value for device memory (so that a host
    engine's plan stages it)."""
    w = t.get("wrap")
    if w in ("devarray", "cai", "devarray_dlpack", "devarray_cai"):
        return True
    if w != "dlpack":
        return False
    dev = t.get("dl", {}).get("dlpack_device")
    return not (isinstance(dev, list) and dev[0] in (1, 3, 11))


def normalize(d):
    """Keeps a description inside what the harness may do: every view a host process could
    touch lies inside its allocation (a NumPy view past its buffer is the caller's memory
    error, not hipdnn's), device views too unless OVERSTATED_EXTENTS, sizes small, and the
    known-open cases off (see the flags above)."""
    d["buffers"] = d["buffers"][:8] or [{"space": "host", "bytes": 256, "dtype": d["io"]}]
    for b in d["buffers"]:
        b["bytes"] = min(MAX_BYTES, max(8, int(b["bytes"]) + 7 & ~7))
    if d["layout"] == "nhwc" and d["graph"] not in ("conv_fprop", "batchnorm_running"):
        d["layout"] = "packed"
    names = {s[0] for s in slots(d)}
    scalars = set(GRAPHS[d["graph"]][2])
    for name in set(d["tensors"]) - names - scalars:
        del d["tensors"][name]
    for name in names:
        if d["tensors"].get(name, {}).get("wrap", "scalar") == "scalar":
            d["tensors"][name] = fresh_view("numpy", 0, 0)
    for name in scalars:
        if d["tensors"].get(name, {}).get("wrap") != "scalar":
            d["tensors"][name] = {"wrap": "scalar", "form": "float", "value": 0.5}
    outs = {s[0] for s in slots(d) if s[1]}
    for name, t in sorted(d["tensors"].items()):
        if t.get("wrap") == "scalar" or t.get("wrap") in ("none", "missing", "garbage"):
            continue
        t["buf"] = t.get("buf", 0) % len(d["buffers"])
        t["shape"] = None if t.get("shape") is None else \
            [max(-2, min(1 << 20, int(v))) for v in t["shape"][:10]]
        b = d["buffers"][t["buf"]]
        shape, strides, item = claimed(d, t, name)
        lo, hi = span_range(shape, strides, item)
        overstated_ok = OVERSTATED_EXTENTS and b["space"] == "device" and \
            t["wrap"] in ("cai", "dlpack")
        if t.get("wrap") in ("numpy", "twice") and min(shape + [0]) < 0:
            t["shape"] = None  # NumPy itself takes no negative dims
            shape, strides, item = claimed(d, t, name)
            lo, hi = span_range(shape, strides, item)
        if not overstated_ok and hi - lo > b["bytes"] + 2 * GUARD:
            t["shape"] = t["strides"] = None  # claims more than any allocation: the graph's
            shape, strides, item = claimed(d, t, name)
            lo, hi = span_range(shape, strides, item)
            b["bytes"] = min(MAX_BYTES, max(b["bytes"], hi - lo + 7 & ~7))
        if not overstated_ok:  # inside [-GUARD, bytes + GUARD)
            t["offset"] = max(-GUARD - lo, min(int(t.get("offset", 0)), b["bytes"] + GUARD - hi))
        if name in outs and d["engine"] == "host" and staged_kind(t) and \
                not STAGED_OUTPUT_CLASHES:
            t["readonly"] = False
            t.get("dl", {}).pop("readonly", None)
    if d["engine"] == "host" and not STAGED_OUTPUT_CLASHES:
        _apart_staged_outputs(d, outs)
    return d


def _apart_staged_outputs(d, outs):
    """Outputs of which one is staged (host engine, device value) moved off each other:
    after the end of their allocation, which grows (or into a new one)."""
    placed = []
    for name in sorted(outs):
        t = d["tensors"][name]
        if t.get("wrap") in ("none", "missing", "garbage") or is_null(t):
            continue
        shape, strides, item = claimed(d, t, name)
        lo, hi = span_range(shape, strides, item)
        if any(buf == t["buf"] and t["offset"] + lo < ohi and olo < t["offset"] + hi and
               (staged or staged_kind(t)) for buf, olo, ohi, staged in placed):
            b = d["buffers"][t["buf"]]
            end = max([b["bytes"]] + [ohi for buf, _, ohi, _ in placed if buf == t["buf"]])
            if end + hi - lo + 8 <= MAX_BYTES:
                t["offset"] = (end + 7 & ~7) - lo
                b["bytes"] = end + hi - lo + 8 + 7 & ~7
            else:
                d["buffers"].append(dict(b, bytes=hi - lo + 8 + 7 & ~7))
                t["buf"], t["offset"] = len(d["buffers"]) - 1, -lo
        placed.append((t["buf"], t["offset"] + lo, t["offset"] + hi, staged_kind(t)))


# ---- the seeds -------------------------------------------------------------------------------

def seeds():
    """The checked-in corpus: {file name: description}, deterministic."""
    out = {}
    rng = random.Random(26)
    for graph in sorted(GRAPHS):
        for engine in ("host", "device"):
            out[f"{graph}-{engine}.json"] = generate(rng, graph, engine)
    # the aliasing patterns, each on both engines
    for engine in ("host", "device"):
        d = generate(rng, "conv_fprop", engine)
        d["layout"] = "packed"
        d["tensors"]["y"].update(offset=d["tensors"]["x"]["offset"], buf=0)
        out[f"conv_in_place-{engine}.json"] = normalize(d)
        d = generate(rng, "tanh", engine)
        d["tensors"]["y"].update(offset=d["tensors"]["x"]["offset"] + 4, buf=0)
        d["io"] = "fp32"
        out[f"tanh_shifted-{engine}.json"] = normalize(d)
        d = generate(rng, "two_outputs", engine)
        d["tensors"]["r"].update(offset=d["tensors"]["s"]["offset"] + 8, buf=0)
        out[f"two_outputs_clash-{engine}.json"] = normalize(d)
        d = generate(rng, "select", engine)
        for n in ("b", "m"):
            d["tensors"][n].update(offset=d["tensors"]["x"]["offset"], buf=0)
        out[f"one_array_three_operands-{engine}.json"] = normalize(d)
    lies = [("x", {"wrap": "cai", "cai": {"typestr": "<f2"}}),
            ("x", {"wrap": "dlpack", "dl": {"lanes": 2}}),
            ("x", {"wrap": "dlpack", "dl": {"byte_offset": 64}}),
            ("y", {"wrap": "dlpack", "dl": {"versioned": True, "readonly": True}}),
            ("y", {"wrap": "cai", "readonly": True}),
            ("x", {"wrap": "cai", "null": True}),
            ("x", {"wrap": "cai", "offset": 2}),
            ("x", {"wrap": "dlpack", "dl": {"device_type": 1}}),
            ("x", {"wrap": "dlpack", "dl": {"device_id": 3}}),
            ("x", {"wrap": "cai", "shape": [1, 6, 10]}),
            ("x", {"wrap": "cai", "strides": [-10, 1]}),
            ("x", {"wrap": "cai", "strides": [0, 1]}),
            ("y", {"wrap": "cai", "shape": [70]}),
            ("x", {"wrap": "cai", "cai": {"mask": True}}),
            ("x", {"wrap": "dlpack", "dl": {"capsule": "used_dltensor"}})]
    for k, (name, lie) in enumerate(lies):
        d = generate(rng, "tanh", "device")
        d["io"] = "fp32"
        d["tensors"][name].update(lie)
        out[f"tanh_lie{k:02d}-device.json"] = normalize(d)
    d = generate(rng, "tanh", "device")
    d["buffers"].append({"space": "host", "bytes": 512, "dtype": "fp32"})
    d["tensors"]["x"].update(wrap="cai", buf=1, offset=0)
    out["host_pointer_as_device.json"] = normalize(d)
    d = generate(rng, "tanh", "host")
    d["buffers"][0]["space"] = "device"
    d["tensors"]["x"]["wrap"] = "dlpack"
    d["tensors"]["y"].update(wrap="devarray", offset=d["tensors"]["x"]["offset"])
    out["device_arrays_to_the_host_engine.json"] = normalize(d)
    for k, w in enumerate([{"wrap": "devarray", "space": "device", "delta": -1, "dtype": "u1"},
                           {"wrap": "numpy", "space": "host", "delta": 0, "dtype": "u1",
                            "readonly": True},
                           {"wrap": "dlpack", "space": "device", "delta": 0,
                            "dtype": "bits255"}]):
        d = generate(rng, "softmax", "device")
        d["workspace"] = w
        out[f"workspace{k}.json"] = normalize(d)
    for form in ("2elem", "str", "device", "0d"):
        d = generate(rng, "scale_by_scalar", "host")
        d["tensors"]["s"]["form"] = form
        out[f"scalar_{form}.json"] = normalize(d)
    return out


def write_seeds():
    CORPUS.mkdir(parents=True, exist_ok=True)
    for p in CORPUS.glob("*.json"):
        if not p.name.startswith("regress-"):  # reproducers are kept by hand
            p.unlink()
    for name, d in seeds().items():
        (CORPUS / name).write_text(json.dumps(d, sort_keys=True) + "\n")
    print(f"fuzz_variant_pack: {len(list(CORPUS.glob('*.json')))} seeds in {CORPUS}")
    return 0


# ---- the child: materialize, execute, judge ----------------------------------------------------

class Finding(Exception):
    """What the pack did that it must not."""


class ViewRefused(Exception):
    """DeviceArray.as_strided refused the view a description asks for (hipdnn's answer,
    judged as execute's refusals are)."""


class Child:
    """State of one child process: hipdnn with the reference and emulated engines, and the
    graphs built so far."""

    def __init__(self):
        import numpy as np
        import hipdnn
        self.np, self.hipdnn = np, hipdnn
        hipdnn.set_engine_plugin_paths(["hipdnn_plugins/engines/libhipdnn_reference_cpu.so",
                                        str(EMULATED)], hipdnn.plugin_loading_mode.ABSOLUTE)
        self.allowed = (ValueError, TypeError, NotImplementedError, OverflowError,
                        hipdnn.HipdnnError)
        self.graphs = {}
        self.other = hipdnn.pygraph(name="other")  # a graph no pack belongs to
        self.other_x = self.other.tensor(name="x", dim=[1])

    def graph(self, d):
        """(g, {name: tensor}) of the description's graph, built for its engine; raises
        what building raised."""
        key = (d["graph"], d["io"], d["engine"], d["layout"])
        if key not in self.graphs:
            try:
                self.graphs[key] = self._build(d)
            except self.allowed as e:
                self.graphs[key] = e
        got = self.graphs[key]
        if isinstance(got, BaseException):
            raise got
        return got

    def _build(self, d):
        hipdnn = self.hipdnn
        dt = hipdnn.data_type
        types = {"fp32": dt.FLOAT, "fp16": dt.HALF, "bf16": dt.BFLOAT16, "i8": dt.INT8}
        g = hipdnn.pygraph(io_data_type=types[d["io"]], intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name=d["graph"])
        t = {}
        for name, out, shape, strides, storage in slots(d):
            if not out:
                t[name] = g.tensor(name=name, dim=shape, stride=strides, data_type=types[storage])
        for name in GRAPHS[d["graph"]][2]:
            t[name] = g.tensor(name=name, dim=[1], stride=[1], is_pass_by_value=True,
                               data_type=dt.FLOAT)
        made = make_nodes(g, d["graph"], t)
        for name, out, shape, strides, storage in slots(d):
            if out:
                made[name].set_output(True).set_name(name).set_dim(shape).set_stride(strides)
                made[name].set_data_type(types[storage])
                t[name] = made[name]
        g.set_preferred_engine("reference_cpu" if d["engine"] == "host" else "hip_emulated")
        g.build([hipdnn.heur_mode.A])
        return g, t

    def run(self, d):
        """Runs one description; returns how it ended, raises Finding."""
        try:
            g, tensors = self.graph(d)
        except self.allowed as e:
            if not str(e):
                raise Finding(f"building raised {type(e).__name__} without a message")
            return "not built"
        mem = Memory(self, d)
        try:
            pack, supplied, scalars = mem.pack(d, g, tensors)
            ws, ws_info = mem.workspace(d, g)
        except ViewRefused as e:
            if not str(e):
                raise Finding("DeviceArray.as_strided refused without a message")
            return f"refused by as_strided: {e}"
        before = mem.snapshot()  # the workspace's allocation included
        try:
            g.execute(pack, ws)
        except self.allowed as e:
            if not str(e):
                raise Finding(f"{type(e).__name__} without a message")
            after = mem.snapshot()
            scratch(before, after, ws_info)  # the workspace is the engine's to write
            if after != before:
                raise Finding(f"refused ({type(e).__name__}: {e}) after writing memory: "
                              f"{mem.changed(before)}")
            return f"refused: {type(e).__name__}: {e}".replace("\n", " ")
        except Finding:
            raise
        except Exception:  # noqa: BLE001 - exactly what this looks for
            raise Finding("raised " + traceback.format_exc(limit=6))
        after = mem.snapshot()
        judge(self, d, g, mem, supplied, scalars, ws_info, before, after)
        return "ran"


class View:
    """What one array supply points at: allocation index (None: NULL), byte position of
    element 0 in that allocation, what the value claims, and the tensor it is for."""

    def __init__(self, name, slot, buf, pos, claim_lo, claim_hi, type_ok, readonly, staged):
        self.name, self.slot, self.buf, self.pos = name, slot, buf, pos
        self.claim = (claim_lo, claim_hi)
        self.type_ok, self.readonly, self.staged = type_ok, readonly, staged

    def graph_range(self):
        _n, _o, shape, strides, storage = self.slot
        lo, hi = span_range(shape, strides, STORAGE[storage][1])
        return self.pos + lo, self.pos + hi

    def shares_bytes(self, np, other):
        """Whether an element of this view's tensor shares a byte with one of other's: the
        backend's rule (aliasing.c), under which views that interleave do not."""
        (alo, ahi), (blo, bhi) = self.graph_range(), other.graph_range()
        if self.buf != other.buf or not (alo < bhi and blo < ahi):
            return False
        return np.intersect1d(self._bytes(np), other._bytes(np)).size > 0

    def _bytes(self, np):
        _n, _o, shape, strides, storage = self.slot
        item = STORAGE[storage][1]
        at = np.array([self.pos])
        for d, st in zip(shape, strides):
            at = (at[:, None] + np.arange(d)[None, :] * st * item).ravel()
        return np.unique((at[:, None] + np.arange(item)[None, :]).ravel())


class Memory:
    """The description's allocations, each GUARD + bytes + GUARD, and the values over them."""

    def __init__(self, child, d):
        np, hipdnn = child.np, child.hipdnn
        self.c, self.allocs = child, []
        rng = np.random.default_rng(d["seed"])
        for b in d["buffers"]:
            total = GUARD + (b["bytes"] + 7 & ~7) + GUARD  # whole elements of any type
            data = tame_bytes(np, rng, total, b["dtype"])
            if b["space"] == "host":
                self.allocs.append(("host", data, data.ctypes.data, total))
            else:  # of the allocation's type, so that DeviceArray views of it can be had
                kind = {"fp32": np.float32, "fp16": np.float16, "bf16": np.uint16,
                        "i8": np.int8}[b["dtype"]]
                arr = hipdnn.DeviceArray.from_numpy(
                    data.view(kind),
                    data_type=hipdnn.data_type.BFLOAT16 if b["dtype"] == "bf16" else None)
                self.allocs.append(("device", arr, arr.data_ptr, total))
        self.extra = None  # the workspace's own allocation
        self.ws_info = None

    def snapshot(self):
        allocs = self.allocs + ([self.extra] if self.extra is not None else [])
        return [bytes(a[1]) if a[0] == "host" else a[1].numpy().tobytes() for a in allocs]

    def changed(self, before):
        after = self.snapshot()
        scratch(before, after, self.ws_info)
        for k, (x, y) in enumerate(zip(before, after)):
            if x != y:
                first = next(i for i in range(len(x)) if x[i] != y[i])
                return f"allocation {k}, byte {first} of {len(x)}"
        return "nothing"

    def pointer(self, t):
        """(allocation index, byte position) of a view's element 0; (None, 0) for a NULL
        pointer (which only a CAI dict or a DLPack capsule can give)."""
        if is_null(t):
            return None, 0
        return t["buf"], GUARD + int(t.get("offset", 0))

    def pack(self, d, g, tensors):
        """The variant pack the description says; what each array supply points at; the
        scalars' values."""
        np = self.c.np
        info = {s[0]: s for s in slots(d)}
        pack, supplied, scalars = {}, [], {}
        for name in sorted(d["tensors"]):
            t = d["tensors"][name]
            tensor = tensors[name]
            key = {"tensor": tensor, "uid": tensor.get_uid(), "other_graph": self.c.other_x,
                   "bool": True}[t.get("key", "tensor")]
            w = t["wrap"]
            if w == "missing":
                continue
            if w == "scalar":
                pack[key] = scalar_value(np, self.c.hipdnn, t)
                scalars[name] = t
                continue
            if w in ("none", "garbage"):
                pack[key] = None if w == "none" else "not an array"
                continue
            value, view = self.value(d, name, t, info[name])
            pack[key] = value
            if w == "twice":
                pack[tensor.get_uid()] = value
            supplied.append(view)
        return pack, supplied, scalars

    def value(self, d, name, t, slot):
        """One array supply and its View."""
        np = self.c.np
        wrap = t["wrap"] if t["wrap"] != "twice" else "numpy"
        space, base, addr0, total = self.allocs[t["buf"]]
        buf, pos = self.pointer(t)
        via = wrap[len("devarray_"):] if wrap.startswith("devarray_") else None
        if wrap.startswith("devarray") and (space != "device" or buf is None or
                                            pos % base.itemsize):
            wrap = "cai"  # a DeviceArray view only where one can be: else the same as CAI
        elif via:
            wrap = "devarray"
        t = dict(t, wrap=wrap)
        shape, strides, item = claimed(d, t, name)
        code = view_dtype(d, t, slot[4])
        told, _ = told_type(d, t, slot[4])
        graph_code = STORAGE[slot[4]][0]
        type_ok = told == graph_code or (graph_code == "bf16" and told == "u2")
        lo, hi = span_range(shape, strides, item)
        readonly = bool(t.get("readonly"))
        addr = 0 if buf is None else addr0 + pos
        if wrap == "numpy":
            value = numpy_view(np, base if space == "host" else None, addr0, pos, shape,
                               strides, code, ITEMSIZE[code], total)
            value.flags.writeable = not readonly
        elif wrap == "devarray":
            try:
                value = base.as_strided(shape, strides, pos // base.itemsize)
            except self.c.allowed as e:
                raise ViewRefused(str(e))
            readonly = False
            if via == "dlpack":  # the DeviceArray's own exports, seen by someone else
                value = ViaDLPack(value)
            elif via == "cai":
                value = ViaCAI(value)
        elif wrap == "cai":
            value = CAIValue(t, addr, shape, strides, code, ITEMSIZE[code], base)
        else:
            value = DLPackValue(t, addr, shape, strides, code, space, base)
            dl = t.get("dl", {})
            readonly = bool(dl.get("readonly")) and bool(dl.get("versioned"))
        staged = d["engine"] == "host" and staged_kind(t)
        return value, View(name, slot, buf, pos, pos + lo, pos + hi, type_ok, readonly, staged)

    def workspace(self, d, g):
        """(workspace value, (allocation index, first byte, bytes claimed, readonly,
        dropped)) as the description says; (None, None) for none."""
        w = d.get("workspace")
        if not w:
            return None, None
        np, hipdnn = self.c.np, self.c.hipdnn
        need = g.get_workspace_size()
        nbytes = max(0, need + int(w.get("delta", 0)))
        if w.get("wrap") == "garbage":
            return 12345, None
        space = w.get("space", "host")
        data = np.full(GUARD + nbytes + 8 + GUARD, 0xA5, np.uint8)
        if space == "host":
            self.extra = ("host", data, data.ctypes.data, len(data))
        else:
            arr = hipdnn.DeviceArray.from_numpy(data)
            self.extra = ("device", arr, arr.data_ptr, len(data))
        k = len(self.allocs)
        code = {"u1": "u1", "f4": "f4", "u2": "u2", "bits255": "u1"}[w.get("dtype", "u1")]
        item = {"u1": 1, "f4": 4, "u2": 2}[code]
        shape = [nbytes // item]
        base, addr0 = self.extra[1], self.extra[2]
        wrap = w.get("wrap", "numpy")
        readonly = bool(w.get("readonly"))
        if wrap in ("numpy", "noncontiguous"):
            v = numpy_view(np, data if space == "host" else None, addr0, GUARD, shape, [1], code,
                           item, len(data))
            if wrap == "noncontiguous" and shape[0] >= 2:
                v = v[::2]
            v.flags.writeable = not readonly
        elif wrap == "devarray" and space == "device":
            v, readonly = base.as_strided([nbytes], [1], GUARD), False
        elif wrap == "dlpack" or (wrap == "devarray" and space == "host"):
            t = {"dl": {"bits": 255, "lanes": 65535} if w.get("dtype") == "bits255" else {}}
            v, readonly = DLPackValue(t, addr0 + GUARD, shape, [1], code, space, base), False
        else:
            v = CAIValue({"readonly": readonly}, addr0 + GUARD, shape, [1], code, item, base)
        dropped = d["engine"] == "host" and staged_kind({"wrap": wrap if wrap != "numpy" else
                                                         "numpy"})
        self.ws_info = (k, GUARD, nbytes if wrap != "noncontiguous" else 0, readonly, dropped,
                        need, space)
        return v, self.ws_info


def tame_bytes(np, rng, total, storage):
    """`total` bytes that read as values in +-[0.25, 2] of the storage type."""
    kind = {"fp32": np.float32, "fp16": np.float16, "bf16": np.float32, "i8": np.float32}[storage]
    n = total // (2 if storage == "bf16" else np.dtype(kind).itemsize) + 1
    vals = (rng.uniform(0.25, 2.0, n) * rng.choice([-1.0, 1.0], n)).astype(kind)
    if storage == "bf16":
        vals = (vals.view(np.uint32) >> 16).astype(np.uint16)
    return np.frombuffer(vals.tobytes()[:total], np.uint8).copy()


NP_CODES = {"f4": "<f4", "f2": "<f2", "bf16": "<u2", "u2": "<u2", "i1": "|i1", "u1": "|u1",
            "i4": "<i4", "i8": "<i8", "b1": "|b1", "f8": "<f8"}


def numpy_view(np, host, addr0, pos, shape, strides, code, item, total):
    """A NumPy view at byte `pos` of an allocation: a host buffer, or device memory (host
    memory under the fake driver) read through ctypes."""
    if host is None:
        host = np.ctypeslib.as_array((ctypes.c_uint8 * total).from_address(addr0))
    return np.ndarray(shape, np.dtype(NP_CODES[code]), buffer=host, offset=pos,
                      strides=[s * item for s in strides])


class CAIValue:
    """A __cuda_array_interface__ over an address, saying what its description says."""

    def __init__(self, t, addr, shape, strides, code, item, keep):
        cai = t.get("cai", {})
        data = (addr, bool(t.get("readonly")))
        form = cai.get("data", "tuple")
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": cai.get("typestr", NP_CODES[code]),
            "version": cai.get("version", 3),
            "data": {"tuple": data, "list": list(data), "int": addr, "long": data + (0,)}[form],
            "strides": None if cai.get("strides_none") else tuple(s * item for s in strides)}
        if cai.get("mask"):
            self.__cuda_array_interface__["mask"] = (0, False)
        if "stream" in cai:
            self.__cuda_array_interface__["stream"] = cai["stream"]
        self.keep = keep


class ViaDLPack:
    """Another library's array over a DeviceArray, seen only through DLPack."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


class ViaCAI:
    """Another library's array over a DeviceArray, seen only through its CAI dict."""

    def __init__(self, array):
        self.__cuda_array_interface__ = array.__cuda_array_interface__
        self.keep = array


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class ManagedVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class DLPackValue:
    """A DLPack producer of a hand-made DLTensor (no deleter: the memory is ours)."""

    def __init__(self, t, addr, shape, strides, code, space, keep):
        dl = t.get("dl", {})
        self.dl, self.keep = dl, keep
        code3 = DL_DTYPES[code]
        split = min(int(dl.get("byte_offset", 0)), addr)  # data + byte_offset = addr
        self.shape = (ctypes.c_int64 * max(1, len(shape)))(*shape)
        self.strides = (ctypes.c_int64 * max(1, len(strides)))(*strides)
        tensor = DLTensor(addr - split if addr else 0,
                          dl.get("device_type", 2 if space == "device" else 1),
                          dl.get("device_id", 0), len(shape), dl.get("code", code3[0]),
                          dl.get("bits", code3[1]), dl.get("lanes", code3[2]), self.shape,
                          None if dl.get("null_strides") else self.strides, split)
        self.versioned = dl.get("versioned", False)
        if self.versioned:
            self.m = ManagedVersioned(dl.get("major", 1), 0, None, None,
                                      1 if dl.get("readonly") else 0, tensor)
        else:
            self.m = Managed(tensor, None, None)
        name = dl.get("capsule", "dltensor_versioned" if self.versioned else "dltensor")
        self.capsule_name = name.encode()

    def __dlpack__(self, stream=None, max_version=None, **_):
        if self.dl.get("raises"):
            raise BufferError("this producer refuses")
        return _capsule_new(ctypes.addressof(self.m), self.capsule_name, None)

    def __getattr__(self, attr):
        if attr != "__dlpack_device__":
            raise AttributeError(attr)
        dev = self.dl.get("dlpack_device")
        if dev == "missing":
            raise AttributeError(attr)

        def device():
            if dev == "raise":
                raise RuntimeError("no device")
            return tuple(dev) if isinstance(dev, list) else (self.m.dl_tensor.device_type,
                                                            self.m.dl_tensor.device_id)
        return device


def scalar_value(np, hipdnn, t):
    v = float({"nan": "nan", "inf": "inf"}.get(t.get("form"), t.get("value", 0.5)))
    return {"float": v, "np32": np.float32(v), "np64": np.float64(v),
            "0d": np.array(v, np.float32), "1elem": np.array([v], np.float32),
            "2elem": np.array([v, v], np.float32), "str": "0.5", "none": None,
            "device": hipdnn.DeviceArray.from_numpy(np.array([v], np.float32)),
            "int": 2, "bool": True, "nan": v, "inf": v}[t.get("form", "float")]


def judge(c, d, g, mem, supplied, scalars, ws_info, before, after):
    """The rules for a pack that ran (see the module doc); raises Finding."""
    np = c.np
    for v in supplied:
        if v.buf is None:
            raise Finding(f"accepted a NULL pointer for tensor {v.name!r}")
        lo, hi = v.graph_range()
        if v.slot[1] and v.readonly:
            raise Finding(f"accepted a read-only array for output {v.name!r}")
        if not v.type_ok:
            raise Finding(f"accepted an array of another type for tensor {v.name!r}")
        if lo < v.claim[0] or hi > v.claim[1]:
            raise Finding(f"accepted for tensor {v.name!r} an array that claims bytes "
                          f"{v.claim} but the tensor reaches {(lo, hi)}")
        if lo < 0 or hi > len(before[v.buf]):
            raise Finding(f"tensor {v.name!r} reaches past its allocation (issue 26 item 8)")
        if d["engine"] == "device" and mem.allocs[v.buf][0] == "host":
            raise Finding(f"the device engine took host memory for tensor {v.name!r}")
    outs = [v for v in supplied if v.slot[1]]
    for i, a in enumerate(outs):
        for b in outs[i + 1:]:
            if a.shares_bytes(np, b):
                raise Finding(f"accepted outputs {a.name!r} and {b.name!r} over the same bytes")
    for name, t in scalars.items():
        if t.get("form") in ("2elem", "str", "none"):
            raise Finding(f"accepted {t['form']} for the scalar {name!r}")
    if ws_info is not None:
        k, first, nbytes, readonly, dropped, need, _space = ws_info
        # a preferred host engine's staging drops a device workspace (it runs on the host)
        staging = any(v.staged for v in supplied) or d["engine"] == "host" and any(
            t.get("form") == "device" for t in scalars.values())
        used = not (dropped and staging)
        if used and (nbytes < need or readonly):
            raise Finding(f"accepted a workspace of {nbytes} bytes{' (read-only)' * readonly} "
                          f"for a plan that needs {need}")
        scratch(before, after, ws_info)
    want = expected(c, d, g, mem, supplied, scalars, before)
    for k, (w, a) in enumerate(zip(want, after)):
        if w != a:
            raise Finding(explain(np, d, supplied, k, w, a))


def scratch(before, after, ws_info):
    """`before` given `after`'s bytes where the workspace is (the engine's to write)."""
    if ws_info is not None:
        k, first, nbytes = ws_info[:3]
        before[k] = before[k][:first] + after[k][first:first + nbytes] + \
            before[k][first + nbytes:]


def expected(c, d, g, mem, supplied, scalars, before):
    """Every allocation as it must be: `before` with each output's elements set to the
    result of the same graph on fresh separate arrays."""
    np, hipdnn = c.np, c.hipdnn
    device = d["engine"] == "device"
    outs = [v for v in supplied if v.slot[1]]
    staged = {v.name for v in supplied if not v.slot[1] and any(
        v.shares_bytes(np, o) for o in outs)}
    pack, fresh = {}, []
    _, tensors = c.graph(d)
    for v in supplied:
        lo, hi = v.graph_range()
        addr = mem.allocs[v.buf][2] + v.pos
        # the host engine has no paths by alignment (and a staged copy is aligned)
        pad = 0 if v.name in staged or not device else addr % 256
        data = np.full(pad + (hi - lo) + GUARD, 0xFF, np.uint8)
        data[pad:pad + hi - lo] = np.frombuffer(before[v.buf][lo:hi], np.uint8)
        _n, _o, shape, strides, storage = v.slot
        code, item = STORAGE[storage]
        first = pad + (v.pos - lo)  # element 0 (after any negative reach: none in graphs)
        if device:
            arr = hipdnn.DeviceArray.from_numpy(data)
            value = CAIValue({}, arr.data_ptr + first, shape, strides, code, item, arr)
        else:
            arr = data
            value = numpy_view(np, data, data.ctypes.data, first, shape, strides, code, item,
                               len(data))
        pack[tensors[v.name]] = value
        fresh.append((v, arr, first))
    for name, t in scalars.items():
        pack[tensors[name]] = float({"nan": "nan", "inf": "inf"}.get(t.get("form"),
                                                                     t.get("value", 0.5)))
        if t.get("form") == "bool":
            pack[tensors[name]] = 1.0
        elif t.get("form") == "int":
            pack[tensors[name]] = 2.0
    g.execute(pack, None)
    want = [bytearray(b) for b in before]
    for v, arr, first in fresh:
        if not v.slot[1]:
            continue
        got = arr.numpy().view(np.uint8) if device else arr
        lo, hi = v.graph_range()
        _n, _o, shape, strides, storage = v.slot
        item = STORAGE[storage][1]
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[item]
        src = np.ndarray(shape, bits, buffer=got, offset=first, strides=[s * item for s in strides])
        dst = np.ndarray(shape, bits, buffer=want[v.buf], offset=v.pos,
                         strides=[s * item for s in strides])
        dst[...] = src
    return [bytes(w) for w in want]


def explain(np, d, supplied, k, want, got):
    diff = [i for i in range(len(want)) if want[i] != got[i]]
    owners = [f"{'output' if v.slot[1] else 'input'} {v.name!r}" for v in supplied
              if v.buf == k and v.graph_range()[0] <= diff[0] < v.graph_range()[1]]
    where = ", ".join(owners) if owners else \
        "a guard byte" if diff[0] < GUARD or diff[0] >= len(want) - GUARD else "no tensor's byte"
    return (f"allocation {k}: {len(diff)} bytes differ from the out-of-place result, first at "
            f"byte {diff[0]} ({where})")


def child_main():
    import warnings
    warnings.simplefilter("ignore")  # cuDNN's rule for blocks of another shape warns
    c = Child()
    for line in sys.stdin:
        path = Path(line.strip())
        try:
            verdict = "ok " + c.run(json.loads(path.read_text()))
        except Finding as e:
            verdict = "finding: " + str(e).replace("\n", "\\n")
        except Exception:  # noqa: BLE001 - a harness error is reported, not hidden
            verdict = "finding: harness: " + traceback.format_exc().replace("\n", "\\n")
        print(verdict, flush=True)
    return 0


# ---- the parent ----------------------------------------------------------------------------

def child_env():
    env = dict(os.environ, HIPDNN_LOG_LEVEL="off", HIPDNN_DEVICE_RUNTIME="cuda",
               HIPDNN_EMULATED_MEMORY="device", HIPDNN_BUILD_DIR=str(BUILD_DIR),
               LD_LIBRARY_PATH=os.pathsep.join([str(FAKE_DRIVER),
                                                os.environ.get("LD_LIBRARY_PATH", "")]),
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    env.pop("HIPDNN_PLUGIN_DIR", None)
    return env


class Runner:
    """One child process at a time; a dead or hung child is replaced."""

    def __init__(self, current):
        self.current, self.proc = current, None

    def __call__(self, desc):
        if self.proc is None:
            self.proc = subprocess.Popen([sys.executable, __file__, "--child"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, env=child_env(), cwd=str(REPO))
        self.current.write_text(json.dumps(desc, sort_keys=True) + "\n")
        self.proc.stdin.write(f"{self.current}\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        verdict = self.proc.stdout.readline().strip() if ready else None
        if verdict:
            return verdict
        self.proc.kill()
        status = self.proc.wait()
        self.proc = None
        return f"finding: hung for {TIMEOUT} s" if ready == [] else \
            f"finding: the child died (status {status})"

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def missing_build():
    for p in (FAKE_DRIVER / "libcuda.so.1", EMULATED):
        if not p.is_file():
            return (f"FAIL: fuzz_variant_pack: {p} is missing: the fake CUDA driver and the "
                    f"emulated GPU engine are test targets of the build in {BUILD_DIR} "
                    "(`make build`, or set HIPDNN_BUILD_DIR)")
    return None


def check(path):
    """--check FILE: one description judged again, the verdict printed."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(Path(tmp) / "current.json")
        verdict = runner(json.loads(Path(path).read_text()))
        runner.close()
    print(verdict.replace("\\n", "\n"))
    return 0 if verdict.startswith("ok") else 1


def main():
    if sys.argv[1:2] == ["--child"]:
        return child_main()
    if sys.argv[1:2] == ["--write-seeds"]:
        return write_seeds()
    problem = missing_build()
    if problem:
        print(problem)
        return 1
    if sys.argv[1:2] == ["--check"]:
        return check(sys.argv[2])
    verbose = "--verbose" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--verbose"]
    build, seconds = Path(args[0]), float(args[1])
    rng = random.Random(int(args[2]) if len(args) > 2 else 1)
    corpus = [json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))]
    if not corpus:
        print(f"FAIL: fuzz_variant_pack: no seeds in {CORPUS} (--write-seeds writes them)")
        return 1
    crashes = build / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    runner = Runner(build / "fuzz_variant_pack.current.json")
    pool = list(corpus)
    start, runs, findings = time.monotonic(), 0, 0
    while (runs < len(corpus) or time.monotonic() - start < seconds) and not findings:
        if runs < len(corpus):
            desc = corpus[runs]
        elif rng.random() < 0.1:
            desc = generate(rng)
        else:
            desc = mutate(rng, rng.choice(pool), pool)
        verdict = runner(desc)
        runs += 1
        if verbose:
            print(f"{runs}: {desc['graph']} {desc['engine']}: {verdict[:300]}", flush=True)
        if verdict.startswith("ok"):
            if verdict == "ok ran" and runs > len(corpus) and len(pool) < POOL:
                pool.append(desc)
            continue
        findings += 1
        out = crashes / f"fuzz_variant_pack-{runs}.json"
        out.write_text(json.dumps(desc, sort_keys=True, indent=1) + "\n")
        print(f"FAIL: fuzz_variant_pack: pack {runs}: {verdict[len('finding: '):]}"
              .replace("\\n", "\n"))
        print(f"reproducer: {out}\nrerun:      {sys.executable} "
              f"{Path(__file__).relative_to(REPO)} --check {out}")
    runner.close()
    print(f"fuzz_variant_pack: {runs} packs in {time.monotonic() - start:.0f} s, "
          f"{findings} finding{'s' if findings != 1 else ''}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
