"""Aliasing and in place, as a property (issue 26): for every op family, inputs and outputs
given as views of one buffer give the out-of-place result bit for bit, or are refused
naming both outputs where two outputs share bytes.

Each family is one small graph.  Its tensors are placed in one byte buffer by a scenario:
apart (the control), in place (an output at an input's first byte), shifted by a few
elements, partly overlapping, one array for two inputs, every output over an input at
once, two outputs over the same bytes, random crowding (offsets drawn in a buffer smaller
than the tensors' sum), and, with every stride doubled ("gapped" layout), an output
interleaved one element after an input.  The rule is docs/python.md's: an output over an
input's bytes computes as if the input were elsewhere (the backend copies it first,
csrc/backend/aliasing.c); outputs that share a byte are refused, naming both, and views
that only interleave are not.

The reference is the same graph run on separate arrays holding the same input values.  The
whole buffer after the aliased run must equal the buffer before with each output's
elements replaced by the reference's, so guard bytes, the gaps of strided views and input
bytes no output covers must be unchanged; a refused run must leave the buffer untouched.
Host cases run on the reference engine; the `gpu` ones on the GPU engine over one device
allocation (DeviceArray views for the io type, __cuda_array_interface__ views for the
others), and on the reference engine preferred for device tensors (staged through host
copies that keep the device bytes' sharing: hipdnn/_pygraph/host_staging.py, so outputs
over the same device bytes are refused there too).  The backend reads an input that
it copied first from a fresh allocation, so the device reference puts exactly those inputs
at the start of a fresh allocation too, and every other tensor at its offset modulo 256:
kernels are chosen by pointer alignment, and bit for bit is a fair demand only of the same
kernels.  CI runs the gpu cases on the emulated engine over the fake driver
(test_device_cases_on_the_emulated_engine).
"""
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

import hipdnn
from conftest import FAKE_GPU

dt = hipdnn.data_type
PH = hipdnn.norm_forward_phase
RM = hipdnn.reduction_mode
REPO = Path(__file__).resolve().parents[1]
GUARD = 64  # bytes before the first and after the last tensor, never anyone's
STORAGE = {"fp32": (dt.FLOAT, np.float32), "fp16": (dt.HALF, np.float16),
           "bf16": (dt.BFLOAT16, np.uint16), "i8": (dt.INT8, np.int8),
           "bool": (dt.BOOLEAN, np.bool_)}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class Family:
    """A graph: inputs {name: shape}, outputs {name: shape or (shape, storage)}, and how
    its nodes are made from the input tensors ({name: tensor} -> {output name: tensor})."""
    inputs: dict
    outputs: dict
    build: Callable
    io: str = "fp32"
    channels_last: bool = False  # 4-d tensors held NHWC (the GPU engine's wgrad needs KRSC)
    transposed: tuple = ()  # outputs held with their last two dims swapped in memory


def _softmax(g, x):
    m = g.reduction(input=x, mode=RM.MAX)
    m.set_dim([4, 1])
    e = g.exp(input=g.sub(a=x, b=m))
    s = g.reduction(input=e, mode=RM.ADD)
    s.set_dim([4, 1])
    return {"y": g.div(a=e, b=s)}


def _rope(g, t):
    whole = slice(None)
    x1 = g.slice(t["x"], [whole, whole, whole, slice(0, 4)])
    x2 = g.slice(t["x"], [whole, whole, whole, slice(4, 8)])
    lo = g.sub(a=g.mul(a=x1, b=t["cos"]), b=g.mul(a=x2, b=t["sin"]))
    hi = g.add(a=g.mul(a=x2, b=t["cos"]), b=g.mul(a=x1, b=t["sin"]))
    return {"y": g.concatenate([lo, hi], axis=3)}


def _chain(g, t):
    s = g.add(a=t["x"], b=t["b"])
    return {"s": s, "r": g.mul(a=g.relu(input=s), b=t["x"])}


def _named(names, tensors):
    return dict(zip(names, tensors))


STAT = "fp32"
C4 = (1, 4, 1, 1)
FAMILIES = {
    "tanh": Family({"x": (6, 10)}, {"y": (6, 10)}, lambda g, t: {"y": g.tanh(input=t["x"])}),
    "gelu_fp16": Family({"x": (4, 9)}, {"y": (4, 9)}, lambda g, t: {"y": g.gelu(input=t["x"])},
                        io="fp16"),
    "sigmoid_bf16": Family({"x": (4, 9)}, {"y": (4, 9)},
                           lambda g, t: {"y": g.sigmoid(input=t["x"])}, io="bf16"),
    "add_row": Family({"a": (6, 10), "b": (1, 10)}, {"y": (6, 10)},
                      lambda g, t: {"y": g.add(a=t["a"], b=t["b"])}),
    "mul_outer": Family({"a": (6, 1), "b": (1, 10)}, {"y": (6, 10)},
                        lambda g, t: {"y": g.mul(a=t["a"], b=t["b"])}),
    "max_same_shape": Family({"a": (5, 7), "b": (5, 7)}, {"y": (5, 7)},
                             lambda g, t: {"y": g.max(input0=t["a"], input1=t["b"])}),
    "binary_select": Family({"x": (5, 8), "b": (5, 8), "m": (5, 8)}, {"y": (5, 8)},
                            lambda g, t: {"y": g.binary_select(input0=t["x"], input1=t["b"],
                                                               mask=t["m"])}),
    "cmp_gt_to_bool": Family({"a": (5, 8), "b": (1, 8)}, {"y": ((5, 8), "bool")},
                             lambda g, t: {"y": g.cmp_gt(input=t["a"], comparison=t["b"])}),
    "transpose_copy": Family({"x": (6, 9)}, {"y": (6, 9)},
                             lambda g, t: {"y": g.identity(input=t["x"])}, transposed=("y",)),
    "relu_backward": Family({"dy": (4, 9), "x": (4, 9)}, {"dx": (4, 9)},
                            lambda g, t: {"dx": g.relu_backward(loss=t["dy"], input=t["x"])}),
    "chain_two_outputs": Family({"x": (4, 6), "b": (1, 6)}, {"s": (4, 6), "r": (4, 6)}, _chain),
    "conv_fprop": Family({"x": (1, 3, 6, 6), "w": (4, 3, 3, 3)}, {"y": (1, 4, 6, 6)},
                         lambda g, t: {"y": g.conv_fprop(image=t["x"], weight=t["w"],
                                                         padding=[1, 1])}),
    "conv_bias_relu": Family(
        {"x": (1, 4, 5, 5), "w": (4, 4, 3, 3), "b": C4}, {"y": (1, 4, 5, 5)},
        lambda g, t: {"y": g.relu(input=g.bias(input=g.conv_fprop(
            image=t["x"], weight=t["w"], padding=[1, 1]), bias=t["b"]))}, channels_last=True),
    "conv_dgrad": Family({"dy": (1, 4, 6, 6), "w": (4, 3, 3, 3)}, {"dx": (1, 3, 6, 6)},
                         lambda g, t: {"dx": g.conv_dgrad(loss=t["dy"], filter=t["w"],
                                                          padding=[1, 1])}),
    "conv_fprop_nhwc": Family({"x": (2, 4, 5, 5), "w": (4, 4, 3, 3)}, {"y": (2, 4, 5, 5)},
                              lambda g, t: {"y": g.conv_fprop(image=t["x"], weight=t["w"],
                                                              padding=[1, 1])},
                              channels_last=True),
    "conv_wgrad": Family({"x": (1, 3, 6, 6), "dy": (1, 4, 6, 6)}, {"dw": (4, 3, 3, 3)},
                         lambda g, t: {"dw": g.conv_wgrad(image=t["x"], loss=t["dy"],
                                                          padding=[1, 1])},
                         channels_last=True),
    "matmul": Family({"a": (2, 6, 6), "b": (2, 6, 6)}, {"c": (2, 6, 6)},
                     lambda g, t: {"c": g.matmul(A=t["a"], B=t["b"])}),
    "reduction_add": Family({"x": (6, 10)}, {"y": (6, 1)},
                            lambda g, t: {"y": g.reduction(input=t["x"], mode=RM.ADD)}),
    "reduction_max_axis0": Family({"x": (6, 10)}, {"y": (1, 10)},
                                  lambda g, t: {"y": g.reduction(input=t["x"], mode=RM.MAX)}),
    "softmax": Family({"x": (4, 12)}, {"y": (4, 12)}, lambda g, t: _softmax(g, t["x"])),
    "layernorm_training": Family(
        {"x": (4, 16), "s": (1, 16), "b": (1, 16)},
        {"y": (4, 16), "mean": ((4, 1), STAT), "inv": ((4, 1), STAT)},
        lambda g, t: _named(["y", "mean", "inv"], g.layernorm(
            PH.TRAINING, t["x"], t["s"], t["b"], epsilon=1e-5))),
    "rmsnorm": Family({"x": (4, 16), "s": (1, 16)}, {"y": (4, 16)},
                      lambda g, t: {"y": g.rmsnorm(PH.INFERENCE, t["x"], t["s"],
                                                   epsilon=1e-5)[0]}),
    "batchnorm_inference": Family(
        {"x": (2, 4, 3, 3), "mean": C4, "inv": C4, "s": C4, "b": C4}, {"y": (2, 4, 3, 3)},
        lambda g, t: {"y": g.batchnorm_inference(t["x"], t["mean"], t["inv"], t["s"],
                                                 t["b"])}),
    "batchnorm_training": Family(
        {"x": (2, 4, 3, 3), "s": C4, "b": C4, "rm": C4, "rv": C4},
        {"y": (2, 4, 3, 3), "mean": C4, "inv": C4, "next_rm": C4, "next_rv": C4},
        lambda g, t: _named(["y", "mean", "inv", "next_rm", "next_rv"], g.batchnorm(
            t["x"], t["s"], t["b"], in_running_mean=t["rm"], in_running_var=t["rv"],
            epsilon=1e-5, momentum=0.1))),
    "instancenorm_training": Family(
        {"x": (2, 3, 4, 4), "s": (1, 3, 1, 1), "b": (1, 3, 1, 1)},
        {"y": (2, 3, 4, 4), "mean": (2, 3, 1, 1), "inv": (2, 3, 1, 1)},
        lambda g, t: _named(["y", "mean", "inv"], g.instancenorm(
            PH.TRAINING, t["x"], t["s"], t["b"], epsilon=1e-5))),
    "genstats": Family({"x": (2, 4, 3, 3)}, {"sum": C4, "sq_sum": C4},
                       lambda g, t: _named(["sum", "sq_sum"], g.genstats(t["x"]))),
    "layernorm_backward": Family(
        {"dy": (4, 16), "x": (4, 16), "s": (1, 16), "mean": (4, 1), "inv": (4, 1)},
        {"dx": (4, 16), "ds": (1, 16), "db": (1, 16)},
        lambda g, t: _named(["dx", "ds", "db"], g.layernorm_backward(
            t["dy"], t["x"], t["s"], t["mean"], t["inv"]))),
    "batchnorm_backward": Family(
        {"dy": (2, 4, 3, 3), "x": (2, 4, 3, 3), "s": C4, "mean": C4, "inv": C4},
        {"dx": (2, 4, 3, 3), "ds": C4, "db": C4},
        lambda g, t: _named(["dx", "ds", "db"], g.batchnorm_backward(
            t["dy"], t["x"], t["s"], t["mean"], t["inv"]))),
    "maxpool_with_index": Family(
        {"x": (1, 2, 6, 6)}, {"y": (1, 2, 3, 3), "idx": ((1, 2, 3, 3), "i8")},
        lambda g, t: _named(["y", "idx"], g.resample(
            t["x"], hipdnn.resample_mode.MAXPOOL, [2, 2], [2, 2], generate_index=True))),
    "avgpool_same_size": Family(
        {"x": (1, 2, 5, 5)}, {"y": (1, 2, 5, 5)},
        lambda g, t: {"y": g.resample(t["x"], hipdnn.resample_mode.AVGPOOL_INCLUDE_PADDING,
                                      [3, 3], [1, 1], pre_padding=[1, 1],
                                      post_padding=[1, 1])[0]}),
    "avgpool_backward": Family(
        {"dy": (1, 2, 3, 3)}, {"dx": (1, 2, 6, 6)},
        lambda g, t: {"dx": g.resample_backward(
            t["dy"], hipdnn.resample_mode.AVGPOOL_INCLUDE_PADDING, [2, 2], [2, 2])}),
    "slice": Family({"x": (6, 10)}, {"y": (4, 6)},
                    lambda g, t: {"y": g.slice(t["x"], [slice(1, 5), slice(2, 8)])}),
    "concatenate": Family({"a": (3, 8), "b": (2, 8)}, {"y": (5, 8)},
                          lambda g, t: {"y": g.concatenate([t["a"], t["b"]], axis=0)}),
    "reshape_logical": Family({"x": (4, 6)}, {"y": (6, 4)},
                              lambda g, t: {"y": g.reshape(
                                  t["x"], reshape_mode=hipdnn.reshape_mode.LOGICAL)}),
    "rope": Family({"x": (1, 4, 1, 8), "cos": (1, 4, 1, 4), "sin": (1, 4, 1, 4)},
                   {"y": (1, 4, 1, 8)}, _rope),
    "sdpa": Family({"q": (1, 2, 4, 8), "k": (1, 2, 4, 8), "v": (1, 2, 4, 8)}, {"o": (1, 2, 4, 8)},
                   lambda g, t: {"o": g.sdpa(t["q"], t["k"], t["v"], generate_stats=False,
                                             attn_scale=0.35)[0]}),
}


# ---- tensors, layouts and placements ----------------------------------------------------

@dataclass
class Slot:
    """One tensor of the pack: where it is, what it is."""
    name: str
    out: bool
    shape: tuple
    strides: tuple  # elements
    storage: str
    tensor: object = None
    offset: int = 0  # bytes into the buffer

    @property
    def np_dtype(self):
        return np.dtype(STORAGE[self.storage][1])

    @property
    def itemsize(self):
        return self.np_dtype.itemsize

    @property
    def span(self):
        """Bytes from the first element to past the last."""
        return (1 + sum((d - 1) * s for d, s in zip(self.shape, self.strides))) * self.itemsize

    def view(self, buf, offset=None):
        """This tensor over a host byte buffer, as its storage type."""
        return np.ndarray(self.shape, self.np_dtype, buffer=buf,
                          offset=self.offset if offset is None else offset,
                          strides=[s * self.itemsize for s in self.strides])


def strides_of(shape, layout, channels_last=False, transposed=False):
    """Row-major strides (NHWC for 4-d tensors when channels_last, the last two dims
    swapped when transposed), all doubled for the gapped layout."""
    order = [0, 2, 3, 1] if channels_last and len(shape) == 4 else list(range(len(shape)))
    if transposed:
        order[-2:] = order[-1:-3:-1]
    out, acc = [0] * len(shape), 2 if layout == "gapped" else 1
    for axis in reversed(order):
        out[axis] = acc
        acc *= shape[axis]
    return tuple(out)


@dataclass
class Built:
    g: object
    slots: list = field(default_factory=list)

    def slot(self, name):
        return next(s for s in self.slots if s.name == name)


def build(fam, layout, engine):
    """The family's graph with every tensor in `layout`, built for `engine`."""
    io_type = STORAGE[fam.io][0]
    g = hipdnn.pygraph(io_data_type=io_type, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    b = Built(g)
    tensors = {}
    for name, shape in fam.inputs.items():
        st = strides_of(shape, layout, fam.channels_last)
        tensors[name] = g.tensor(name=name, dim=list(shape), stride=list(st), data_type=io_type)
        b.slots.append(Slot(name, False, shape, st, fam.io, tensors[name]))
    made = fam.build(g, tensors)
    for name, spec in fam.outputs.items():
        shape, storage = spec if isinstance(spec[0], tuple) else (spec, fam.io)
        st = strides_of(shape, layout, fam.channels_last, name in fam.transposed)
        t = made[name]
        t.set_output(True).set_name(name).set_dim(list(shape)).set_stride(list(st))
        t.set_data_type(STORAGE[storage][0])
        b.slots.append(Slot(name, True, shape, st, storage, t))
    g.set_preferred_engine(engine)
    g.build([hipdnn.heur_mode.A])
    assert g.get_engine_name() == engine
    return b


def byte_set(slot):
    """Every byte offset of the buffer an element of the slot covers."""
    idx = np.zeros(1, np.int64)
    for d, st in zip(slot.shape, slot.strides):
        idx = (idx[:, None] + np.arange(d, dtype=np.int64)[None, :] * st).ravel()
    start = slot.offset + idx * slot.itemsize
    return np.unique((start[:, None] + np.arange(slot.itemsize)[None, :]).ravel())


def ranges_meet(a, b):
    """Whether an element of one shares a byte with an element of the other (views that
    interleave without touching do not meet: aliasing.c tells them apart)."""
    if not (a.offset < b.offset + b.span and b.offset < a.offset + a.span):
        return False
    return np.intersect1d(byte_set(a), byte_set(b), assume_unique=True).size > 0


def output_clashes(slots):
    """Pairs of outputs that share a byte: the pack must be refused naming one."""
    outs = [s for s in slots if s.out]
    return {frozenset((a.name, b.name)) for i, a in enumerate(outs) for b in outs[i + 1:]
            if ranges_meet(a, b)}


def _align(v, n):
    return v // n * n


def place(rng, slots, scenario):
    """Byte offsets for every slot by the scenario; the buffer's size.  Each tensor first
    gets a region three spans wide (the widest's) and sits in its middle third, so a move
    by less than a span stays inside that region."""
    width = max(s.span for s in slots)
    ins = [s for s in slots if not s.out]
    outs = [s for s in slots if s.out]
    order = list(rng.permutation(len(slots)))
    for k, i in enumerate(order):
        slots[i].offset = GUARD + 3 * width * k + _align(width, 8)
    size = GUARD + 3 * width * len(slots) + GUARD

    def like(o):  # the input most like output o: same shape, strides and type first
        key = lambda i: (i.shape != o.shape or i.strides != o.strides or i.storage != o.storage,
                         abs(i.span - o.span))
        return min(ins, key=key)

    o = outs[rng.integers(len(outs))]
    if scenario == "in_place":
        o.offset = like(o).offset
    elif scenario == "shifted":
        o.offset = like(o).offset + int(rng.choice([-3, -2, -1, 1, 2, 3])) * o.itemsize
    elif scenario == "interleaved":  # gapped layout: the output in the input's gaps
        o.offset = like(o).offset + o.itemsize
    elif scenario == "partial":
        i = ins[rng.integers(len(ins))]
        lo, hi = -o.span // o.itemsize + 1, i.span // o.itemsize
        o.offset = i.offset + int(rng.integers(lo, hi)) * o.itemsize
    elif scenario == "shared_input":
        same = [(a, b) for a in ins for b in ins if a is not b and a.shape == b.shape and
                a.strides == b.strides and a.storage == b.storage]
        a, b = same[rng.integers(len(same))] if same else (ins[0], ins[-1])
        b.offset = a.offset
    elif scenario == "every_output_in_place":
        free = list(ins)
        for o in outs:  # each over another input while there are inputs left
            i = min(free, key=lambda i: (i.shape != o.shape, abs(i.span - o.span))) if free \
                else ins[rng.integers(len(ins))]
            o.offset = i.offset
            if i in free:
                free.remove(i)
    elif scenario == "two_outputs":
        a, b = outs[0], outs[1]
        b.offset = a.offset + int(rng.integers(0, max(1, min(a.span, b.span) // 8))) * 8
    elif scenario == "crowded":  # anything over anything
        room = max(width + 8, int(sum(s.span for s in slots) * 0.6))
        for s in slots:
            s.offset = GUARD + _align(int(rng.integers(0, room - s.span + 1)), 8)
        size = GUARD + room + GUARD
    elif scenario == "crowded_inputs":  # outputs apart, inputs anywhere over them
        at = GUARD
        for s in outs:
            s.offset = at
            at += _align(s.span + 15, 8) + 8 * int(rng.integers(0, 3))
        for s in ins:
            s.offset = GUARD + _align(int(rng.integers(0, max(1, at - GUARD - s.span // 2))), 8)
        size = max(s.offset + s.span for s in slots) + GUARD
    elif scenario != "apart":
        raise ValueError(scenario)
    assert all(GUARD <= s.offset and s.offset + s.span <= size - GUARD for s in slots), scenario
    return size


def scenarios(fam, layout):
    """The scenarios of one layout: every kind of overlap it can have."""
    if layout == "gapped":
        return ["interleaved", "in_place", "crowded", "crowded_inputs"]
    out = ["apart", "in_place", "shifted", "partial", "every_output_in_place",
           "crowded", "crowded", "crowded_inputs", "crowded_inputs"]
    ins = list(fam.inputs.values())
    if any(ins.count(s) > 1 for s in ins):
        out.append("shared_input")
    if len(fam.outputs) > 1:
        out.append("two_outputs")
    return out


def fill(rng, size, storage):
    """Random bytes that read as values in +-[0.25, 2] of the storage type wherever a
    tensor of that type starts at a multiple of its size."""
    np_dtype = np.dtype(STORAGE[storage][1])
    n = size // np_dtype.itemsize + 1
    vals = rng.uniform(0.25, 2.0, n) * rng.choice([-1.0, 1.0], n)
    if storage == "bf16":
        raw = hipdnn.to_bfloat16(vals.astype(np.float32))
    else:
        raw = vals.astype(np_dtype if np_dtype.kind == "f" else np.float32)
    return np.frombuffer(raw.tobytes()[:size], np.uint8).copy()


# ---- memories: one host buffer or one device allocation ----------------------------------

class HostMemory:
    engine = "reference_cpu"

    def load(self, data):
        self.buf = data.copy()

    def array(self, slot, offset=None):
        return slot.view(self.buf, offset)

    def read(self):
        return self.buf.copy()

    def fresh(self, size):
        return HostMemory()


class DeviceMemory:
    """One device allocation of the io type; views of the io type are DeviceArray views,
    of other types __cuda_array_interface__ dicts over a pointer into the allocation."""

    def __init__(self, engine, io):
        self.engine, self.io = engine, io

    def load(self, data):
        data_type, np_dtype = STORAGE[self.io]
        pad = (-len(data)) % 8
        host = np.concatenate([data, np.zeros(pad, np.uint8)]).view(np_dtype)
        self.base = hipdnn.DeviceArray.from_numpy(host, data_type=data_type)
        self.size = len(data)

    def array(self, slot, offset=None):
        offset = slot.offset if offset is None else offset
        if slot.storage == self.io:
            assert offset % slot.itemsize == 0
            return self.base.as_strided(list(slot.shape), list(slot.strides),
                                        offset // slot.itemsize)
        return DeviceView(self.base, offset, slot)

    def read(self):
        return self.base.numpy().view(np.uint8)[:self.size].copy()

    def fresh(self, size):
        return DeviceMemory(self.engine, self.io)


class DeviceView:
    """A slot over device memory, seen through __cuda_array_interface__."""

    def __init__(self, base, offset, slot):
        typestr = {"fp32": "<f4", "fp16": "<f2", "bf16": "<u2", "i8": "|i1",
                   "bool": "|b1"}[slot.storage]
        self.__cuda_array_interface__ = {
            "shape": tuple(slot.shape), "typestr": typestr, "version": 3,
            "data": (base.data_ptr + offset, False),
            "strides": tuple(s * slot.itemsize for s in slot.strides)}
        self.keep = base


# ---- one case ------------------------------------------------------------------------

def staged_inputs(slots):
    """The inputs the backend copies first: those whose bytes meet an output's."""
    return {i.name for i in slots if not i.out
            for o in slots if o.out and ranges_meet(i, o)}


def reference(built, mem, data, device):
    """Each output's values (as their storage type) from separate arrays: one fresh buffer
    per tensor holding what the placed views hold.  On a device a tensor keeps its offset
    modulo 256 in its fresh allocation (an allocation's alignment), but a staged input
    starts one, as the backend's copy does."""
    staged = staged_inputs(built.slots)
    pack, keep = {}, []
    for s in built.slots:
        pad = 0 if s.name in staged else s.offset % 256 if device else s.offset % 16
        fresh_bytes = np.full(pad + s.span + GUARD, 0xFF, np.uint8)  # outputs: NaN until run
        if not s.out:
            s.view(fresh_bytes, pad)[...] = s.view(data)
        m = mem.fresh(len(fresh_bytes))
        m.load(fresh_bytes)
        keep.append((s, m, pad))
        pack[s.tensor] = m.array(s, pad)
    built.g.execute(pack, None)
    return {s.name: s.view(m.read(), pad).copy() for s, m, pad in keep if s.out}


def expected_after(built, data, ref):
    want = data.copy()
    for s in built.slots:
        if s.out:
            s.view(want)[...] = ref[s.name]
    return want


def explain(built, got, want):
    """Which tensor's bytes differ, for the failure message."""
    bits = lambda s, b: s.view(b).view(UINT[s.itemsize])
    for s in built.slots:
        if s.out and not np.array_equal(bits(s, got), bits(s, want)):
            bad = np.argwhere(bits(s, got) != bits(s, want))
            i = tuple(int(v) for v in bad[0])
            return (f"output {s.name!r}: {len(bad)} elements differ from the out-of-place "
                    f"result, first at {i}: {s.view(got)[i]!r} != {s.view(want)[i]!r}")
    diff = np.flatnonzero(got != want)
    owners = [s.name for s in built.slots if s.offset <= diff[0] < s.offset + s.span]
    return (f"{len(diff)} bytes changed outside every output, first at byte {int(diff[0])} "
            f"(under {owners or 'no tensor: a guard byte'})")


def check_case(built, mem, rng, scenario, device=False):
    size = place(rng, built.slots, scenario)
    io = built.slots[0].storage
    data = fill(rng, size, io)
    placement = {s.name: (s.offset, s.span) for s in built.slots}
    clashes = output_clashes(built.slots)
    mem.load(data)
    pack = {s.tensor: mem.array(s) for s in built.slots}
    if clashes:
        with pytest.raises(ValueError, match=r"outputs '(\w+)' \(uid \d+\) and '(\w+)' "
                                             r"\(uid \d+\) share memory") as e:
            built.g.execute(pack, None)
        named = re.search(r"outputs '(\w+)'.* and '(\w+)'", str(e.value)).groups()
        assert frozenset(named) in clashes, (str(e.value), clashes)
        assert np.array_equal(mem.read(), data), f"{scenario}: a refused run wrote {placement}"
        return "refused"
    built.g.execute(pack, None)
    got = mem.read()
    ref = reference(built, mem, data, device)
    want = expected_after(built, data, ref)
    assert np.array_equal(got, want), f"{scenario} {placement}: {explain(built, got, want)}"
    return "ran, staged" if staged_inputs(built.slots) else "ran"


def check_family(name, mem, rng, rounds, device=False):
    """Every scenario of both layouts, `rounds` times with fresh draws; the outcomes."""
    fam = FAMILIES[name]
    outcomes = []
    for layout in ("packed", "gapped"):
        built = build(fam, layout, mem.engine)
        for _ in range(rounds):
            for scenario in scenarios(fam, layout):
                outcomes.append((layout, scenario,
                                 check_case(built, mem, rng, scenario, device)))
    return outcomes


# ---- the tests ----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_views_of_one_buffer_give_the_out_of_place_result(name, rng):
    outcomes = check_family(name, HostMemory(), rng, rounds=20)
    # the property was tested: placements with an output over an input ran, not only
    # refusals and the control
    assert sum(o[2] == "ran, staged" for o in outcomes) >= 5, outcomes
    if len(FAMILIES[name].outputs) > 1:
        assert ("packed", "two_outputs", "refused") in outcomes, outcomes


# The GPU engine's families: all but attention, which it declines (docs/gpu.md).
GPU_FAMILIES = sorted(set(FAMILIES) - {"sdpa"})


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_FAMILIES)
def test_device_views_of_one_allocation_give_the_out_of_place_result(name, gpu):
    outcomes = check_family(name, DeviceMemory(gpu.engine, FAMILIES[name].io), gpu.rng,
                            rounds=8, device=True)
    assert sum(o[2] == "ran, staged" for o in outcomes) >= 5, outcomes


@pytest.mark.gpu
@pytest.mark.parametrize("name", GPU_FAMILIES)
def test_device_views_staged_for_a_preferred_host_engine(name, gpu):
    # set_preferred_engine("reference_cpu") runs device tensors through host copies
    outcomes = check_family(name, DeviceMemory("reference_cpu", FAMILIES[name].io), gpu.rng,
                            rounds=2)
    assert sum(o[2] == "ran, staged" for o in outcomes) >= 5, outcomes
    if len(FAMILIES[name].outputs) > 1:  # staging keeps the device bytes' sharing
        assert ("packed", "two_outputs", "refused") in outcomes, outcomes


def _two_device_outputs(read_only=None):
    """chain_two_outputs planned on the reference engine for device tensors: (graph,
    pack over one allocation with s and r where the caller puts them, allocation)."""
    built = build(FAMILIES["chain_two_outputs"], "packed", "reference_cpu")
    mem = DeviceMemory("reference_cpu", "fp32")
    mem.load(fill(np.random.default_rng(3), 1024, "fp32"))
    views = {}
    for k, s in enumerate(built.slots):
        s.offset = 192 * k
        views[s.name] = mem.array(s)
    if read_only:
        views[read_only] = DeviceView(mem.base, built.slot(read_only).offset,
                                      built.slot(read_only))
        cai = views[read_only].__cuda_array_interface__
        cai["data"] = (cai["data"][0], True)
    return built, views, mem


@pytest.mark.gpu
def test_device_outputs_over_the_same_bytes_for_a_preferred_host_engine_are_refused(gpu):
    # fuzz_variant_pack: staging copied each device output to a host buffer of its own, so
    # outputs over the same device bytes were not refused (the last copied back won)
    built, views, mem = _two_device_outputs()
    s, r = built.slot("s"), built.slot("r")
    views["r"] = mem.base.as_strided(list(r.shape), list(r.strides), s.offset // 4 + 2)
    before = mem.read()
    with pytest.raises(ValueError, match=r"outputs '([rs])' \(uid \d+\) and '(?!\1)[rs]' "
                                         r"\(uid \d+\) share memory"):
        built.g.execute({t.tensor: views[t.name] for t in built.slots}, None)
    assert np.array_equal(mem.read(), before)


@pytest.mark.gpu
def test_a_read_only_device_output_for_a_preferred_host_engine_is_refused_first(gpu):
    # fuzz_variant_pack: staging found a read-only output only when copying it back, after
    # the plan ran and the outputs copied back before it were written
    for read_only in ("s", "r"):  # whichever is copied back second
        built, views, mem = _two_device_outputs(read_only)
        before = mem.read()
        with pytest.raises(ValueError, match=rf"tensor '{read_only}' \(uid \d+\) is an output "
                                             "but its array is read-only"):
            built.g.execute({t.tensor: views[t.name] for t in built.slots}, None)
        assert np.array_equal(mem.read(), before), f"{read_only!r} read-only: memory written"


@pytest.mark.gpu
def test_a_device_array_ranks_apart_or_a_larger_block_stands_for_its_tensor(gpu):
    # fuzz_variant_pack (regress-devarray-ranks-apart.json): cuDNN's rule for arrays of
    # another shape took every array that was not NumPy's or PyTorch's for CuPy's and
    # raised AttributeError ("module 'hipdnn' has no attribute 'lib'") on a DeviceArray
    built = build(FAMILIES["reduction_add"], "packed", gpu.engine)
    x = np.random.default_rng(4).uniform(-1, 1, (6, 10)).astype(np.float32)
    want = np.full((6, 1), np.nan, np.float32)
    X = hipdnn.DeviceArray.from_numpy(x)
    out = hipdnn.DeviceArray.from_numpy(want)
    built.g.execute({built.slot("x").tensor: X, built.slot("y").tensor: out}, None)
    want = out.numpy()
    squeezed = hipdnn.DeviceArray.from_numpy(np.full((1, 6, 1), np.nan, np.float32))
    built.g.execute({built.slot("x").tensor: X, built.slot("y").tensor: squeezed}, None)
    block = hipdnn.DeviceArray.from_numpy(np.full(9, np.nan, np.float32))
    with pytest.warns(RuntimeWarning, match="one dense block of 9 elements"):
        built.g.execute({built.slot("x").tensor: X, built.slot("y").tensor: block}, None)
    assert np.array_equal(squeezed.numpy().reshape(6, 1), want)
    assert np.array_equal(block.numpy()[:6].reshape(6, 1), want)
    assert np.isnan(block.numpy()[6:]).all()


@pytest.mark.gpu
def test_a_negative_dim_is_refused_before_a_preferred_host_engine_stages_it(gpu):
    # fuzz_variant_pack (regress-staged-negative-dim.json): staging sized its host copy from
    # the claimed dims before anything checked them: [-1, 10] with a 2^40 stride was numpy's
    # MemoryError for terabytes, [-1, 10] packed its "negative dimensions are not allowed"
    built = build(FAMILIES["tanh"], "packed", "reference_cpu")
    mem = DeviceMemory("reference_cpu", "fp32")
    mem.load(fill(np.random.default_rng(5), 1024, "fp32"))
    x, y = built.slot("x"), built.slot("y")
    y.offset = 512
    for strides in [(10, 1), (10, 1 << 40)]:
        lying = DeviceView(mem.base, 0, x)
        cai = lying.__cuda_array_interface__
        cai["shape"], cai["strides"] = (-1, 10), tuple(4 * s for s in strides)
        with pytest.raises(ValueError, match=r"tensor 'x' \(uid \d+\) expects float32 \[6, 10\], "
                                             r"got float32 \[-1, 10\]"):
            built.g.execute({x.tensor: lying, y.tensor: mem.array(y)}, None)


@pytest.mark.gpu
@pytest.mark.parametrize("name,offset,strides", [("x", 904, (10, 1)), ("y", 904, (10, 1)),
                                                 ("x", 0, (10, 1 << 40))])
def test_a_device_array_past_its_allocation_is_refused_before_a_preferred_host_engine_stages_it(
        gpu, name, offset, strides):
    # fuzz_variant_pack with OVERSTATED_EXTENTS: staging allocated and copied the span a
    # device array claims before the backend's extent check (issue 26 item 8) could refuse
    # it: numpy's MemoryError for a 2^40 stride's 6 TiB, or the copy's own refusal, which
    # named no tensor.  Now the backend's check and message, before anything is copied.
    built = build(FAMILIES["tanh"], "packed", "reference_cpu")
    mem = DeviceMemory("reference_cpu", "fp32")
    mem.load(fill(np.random.default_rng(6), 1024, "fp32"))
    x, y = built.slot("x"), built.slot("y")
    y.offset = 512
    views = {"x": mem.array(x), "y": mem.array(y)}
    slot = built.slot(name)
    views[name] = DeviceView(mem.base, offset, slot)
    views[name].__cuda_array_interface__["strides"] = tuple(4 * s for s in strides)
    span = 4 * (1 + 5 * strides[0] + 9 * strides[1])
    before = mem.read()
    with pytest.raises(hipdnn.InvalidGraphError,
                       match=rf"variant pack: tensor '{name}' \(uid \d+\) spans {span} bytes "
                             rf"from 0x[0-9a-f]+ but its device allocation ends {1024 - offset} "
                             "bytes after it"):
        built.g.execute({s.tensor: views[s.name] for s in built.slots}, None)
    assert np.array_equal(mem.read(), before)


@pytest.mark.gpu
def test_host_memory_said_to_be_device_memory_is_refused_before_staging_reads_it(gpu):
    # a __cuda_array_interface__ over host memory (or over nothing at all, which staging's
    # copy would read as the device engine's kernels would): the backend's check first
    built = build(FAMILIES["tanh"], "packed", "reference_cpu")
    mem = DeviceMemory("reference_cpu", "fp32")
    mem.load(fill(np.random.default_rng(7), 1024, "fp32"))
    x, y = built.slot("x"), built.slot("y")
    y.offset = 512
    host = np.ones(x.shape, np.float32)
    lying = DeviceView(mem.base, 0, x)
    lying.__cuda_array_interface__["data"] = (host.ctypes.data, False)
    before = mem.read()
    with pytest.raises(hipdnn.InvalidGraphError,
                       match=r"variant pack: tensor 'x' \(uid \d+\) is declared device memory "
                             r"but the \w+ runtime reports host memory at 0x[0-9a-f]+"):
        built.g.execute({x.tensor: lying, y.tensor: mem.array(y)}, None)
    assert np.array_equal(mem.read(), before)


def test_device_cases_on_the_emulated_engine():
    """The gpu cases above, over the fake driver and the GPU engine's host emulation (as
    tests/test_gpu_emulated.py runs the other GPU files)."""
    if FAKE_GPU:
        pytest.skip("already inside the emulated run")
    build_dir = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
    driver = build_dir / "tests" / "fake_cuda"
    assert (driver / "libcuda.so.1").is_file(), f"build the test targets ({driver})"
    env = dict(os.environ, HIPDNN_DEVICE_RUNTIME="cuda", HIPDNN_EMULATED_MEMORY="device",
               HIPDNN_TEST_FAKE_GPU="1", HIPDNN_BUILD_DIR=str(build_dir),
               LD_LIBRARY_PATH=os.pathsep.join([str(driver),
                                                os.environ.get("LD_LIBRARY_PATH", "")]))
    env.pop("HIPDNN_PLUGIN_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p",
                           "no:cacheprovider", "-p", "no:xdist", __file__],
                          cwd=str(REPO), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=300)
    out = proc.stdout.decode("utf-8", "replace")
    assert proc.returncode == 0, out[-6000:]
    summary = out.strip().splitlines()[-1]
    counts = {k: int(n) for n, k in re.findall(r"(\d+) (\w+)", summary)}
    # every gpu case ran on the emulated engine: none skipped, none expected to fail
    assert counts.get("passed") == 2 * len(GPU_FAMILIES) + 8 \
        and not {"failed", "skipped", "error", "errors", "xfailed", "xpassed"} & set(counts), \
        summary
