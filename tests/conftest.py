"""Shared mechanics of the numeric tests, so each test reads as a specification
(tolerances and rules: docs/architecture.md, "Tolerances").

The `nx` fixture gives a test:
  nx.input(shape, dtype, layout)  fresh seeded random data (never zero, never tiny), stored
                                  as fp32 / fp16 / bf16 bit patterns in the requested memory
                                  layout; `.values` holds the rounded values in float64 for
                                  the reference;
  nx.graph(dtype)                 a pygraph with that io dtype and fp32 intermediates/compute;
  nx.output(tensor, shape, dtype, layout)
                                  marks an op result as output, sets its dims and strides to
                                  a buffer poisoned with NaN (0x7FC0 for bf16); layout
                                  "inferred" sets neither and allocates after the build in the
                                  strides the graph inferred;
  nx.execute(g, operands)         builds on the reference engine, runs with a poisoned
                                  workspace, then checks every input is bit-for-bit unchanged
                                  and nothing was written outside an output's view;
  nx.assert_close(out, ref, tol)  every element finite and |out - ref| <= tol + tol*|ref|.

Layouts: "packed" (row-major), "channels_last" (NCHW dims, NHWC strides), "transposed"
(last two dims swapped in memory) and "strided" (a non-contiguous view into a larger
buffer whose gaps hold NaN, so reading or writing a gap shows up).
"""
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import pytest

from tolerances import DTYPES

# The plan cache (docs/engine_selection.md) of a user's earlier autotuning must not change
# which engine a test's graph gets: the session's caches start empty, in a folder of their
# own (set before hipdnn is imported; child processes inherit it).
if not os.environ.get("HIPDNN_CACHE_DIR"):
    os.environ["HIPDNN_CACHE_DIR"] = tempfile.mkdtemp(prefix="hipdnn-test-cache-")

try:
    import hipdnn
except ImportError:  # running from a checkout without an installed package
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import hipdnn

ENGINE = "reference_cpu"
BF16_NAN = np.uint16(0x7FC0)


# ---- storage dtypes -------------------------------------------------------------------

class Storage:
    """How one storage dtype is held in NumPy and decoded back to float64."""

    def __init__(self, name, data_type, np_dtype, nan):
        self.name, self.data_type, self.np_dtype, self.nan = name, data_type, np_dtype, nan

    def encode(self, values):
        if self.name == "bf16":
            return hipdnn.to_bfloat16(np.asarray(values, np.float32))
        if self.name == "bool":
            return np.asarray(values) != 0
        return np.asarray(values).astype(self.np_dtype)

    def decode(self, stored):
        """float64 of the stored values; bf16 decoded here, not by the library under test;
        a bool's byte as it is (so that poison, neither 0 nor 1, shows)."""
        if self.name == "bf16":
            bits = np.asarray(stored, np.uint16).astype(np.uint32) << np.uint32(16)
            return bits.view(np.float32).astype(np.float64)
        if self.name == "bool":
            return np.asarray(stored).view(np.uint8).astype(np.float64)
        return np.asarray(stored).astype(np.float64)

    def full(self, shape):
        """An array of `shape` holding the poison: NaN, or for bool the byte 0x5A and for
        integers a value no op here gives."""
        if self.name == "bool":
            return np.full(shape, 0x5A, np.uint8).view(np.bool_)
        return np.full(shape, self.nan, self.np_dtype)


STORAGES = {
    "fp32": Storage("fp32", hipdnn.data_type.FLOAT, np.float32, np.float32(np.nan)),
    "fp16": Storage("fp16", hipdnn.data_type.HALF, np.float16, np.float16(np.nan)),
    "bf16": Storage("bf16", hipdnn.data_type.BFLOAT16, np.uint16, BF16_NAN),
    "fp64": Storage("fp64", hipdnn.data_type.DOUBLE, np.float64, np.float64(np.nan)),
    # comparisons, logic, masks and indices
    "bool": Storage("bool", hipdnn.data_type.BOOLEAN, np.bool_, None),
    "i8": Storage("i8", hipdnn.data_type.INT8, np.int8, np.int8(-0x5A)),
    "i32": Storage("i32", hipdnn.data_type.INT32, np.int32, np.int32(-0x5A5A5A5A)),
    "i64": Storage("i64", hipdnn.data_type.INT64, np.int64, np.int64(-0x5A5A5A5A5A5A5A5A)),
}


# ---- layouts --------------------------------------------------------------------------

def _memory_order(layout, ndim):
    """Logical axes from outermost to innermost in memory."""
    axes = list(range(ndim))
    if layout in ("packed", "strided"):
        return axes
    if layout == "channels_last":
        assert ndim >= 3, "channels_last needs N, C and at least one spatial dim"
        return [0] + axes[2:] + [1]
    if layout == "transposed":
        assert ndim >= 2
        return axes[:-2] + [ndim - 1, ndim - 2]
    if layout == "bshd":  # attention's [B, H, S, D] held as [B, S, H, D]
        assert ndim == 4
        return [0, 2, 1, 3]
    if layout == "outer_swapped":  # [B, S, D] held as [S, B, D]
        assert ndim >= 2
        return [1, 0] + axes[2:]
    raise ValueError(f"unknown layout {layout!r}")


def _allocate(shape, storage, layout):
    """(view, base, mask): `view` has logical `shape`; `base` is the whole allocation and
    `mask` marks the elements of `base` that `view` covers.  Everything holds NaN."""
    shape = tuple(shape)
    if layout == "strided":
        # Each dim gets a leading gap; the last dim also a stride of 2.
        base_shape = tuple(d + 2 for d in shape[:-1]) + (2 * shape[-1] + 1,)
        window = tuple(slice(1, 1 + d) for d in shape[:-1]) + (slice(1, 1 + 2 * shape[-1], 2),)
        base = storage.full(base_shape)
        mask = np.zeros(base_shape, bool)
        mask[window] = True
        return base[window], base, mask
    if layout.endswith("padded"):
        # "padded", "transposed_padded": that layout with the innermost dim in memory padded
        # to the next multiple of 8 elements past it (16-byte rows, a gap in every row)
        order = _memory_order(layout[:-len("padded")].rstrip("_") or "packed", len(shape))
        inner = shape[order[-1]]
        base_shape = tuple(shape[a] for a in order[:-1]) + (inner // 8 * 8 + 8,)
        base = storage.full(base_shape)
        mask = np.zeros(base_shape, bool)
        mask[..., :inner] = True
        view = base[..., :inner].transpose(np.argsort(order))
        assert view.shape == shape
        return view, base, mask
    order = _memory_order(layout, len(shape))
    base = storage.full(tuple(shape[a] for a in order))
    view = base.transpose(np.argsort(order))
    assert view.shape == shape
    return view, base, np.ones(base.shape, bool)


def _allocate_inferred(op):
    """Allocates an output in exactly the strides the graph inferred for it, which must
    describe a dense layout."""
    shape, strides = tuple(op.tensor.get_dim()), list(op.tensor.get_stride())
    assert len(strides) == len(shape) and min(strides) >= 0, f"inferred strides {strides}"
    extent = 1 + sum((d - 1) * s for d, s in zip(shape, strides))
    assert extent == int(np.prod(shape)), (
        f"inferred strides {strides} of {op.tensor.get_name()!r} {list(shape)} are not dense")
    op.base = op.storage.full(extent)
    op.mask = np.ones(extent, bool)
    op.array = np.lib.stride_tricks.as_strided(
        op.base, shape, [s * op.base.itemsize for s in strides], writeable=True)


def element_strides(array):
    return [s // array.itemsize for s in array.strides]


# ---- operands -------------------------------------------------------------------------

class Operand:
    """A NumPy buffer fed to or filled by a graph, with what is needed to check it."""

    def __init__(self, array, base, mask, storage, values=None):
        self.array, self.base, self.mask, self.storage = array, base, mask, storage
        self.shape = None if array is None else array.shape
        self.values = values  # float64 of what was stored (inputs only)
        self.tensor = None
        self.before = base.copy() if values is not None else None

    @property
    def is_output(self):
        return self.values is None

    def bind(self, g, name):
        """Declares this input on graph g (dims, strides, dtype from the array)."""
        kwargs = {"data_type": self.storage.data_type} if self.storage.name == "bf16" else {}
        self.tensor = g.tensor_like(self.array, name=name, **kwargs)
        return self.tensor

    def decoded(self):
        return self.storage.decode(self.array)


class Numerics:
    def __init__(self, rng):
        self.rng = rng

    def graph(self, dtype, name=None):
        return hipdnn.pygraph(io_data_type=STORAGES[dtype].data_type,
                              intermediate_data_type=hipdnn.data_type.FLOAT,
                              compute_data_type=hipdnn.data_type.FLOAT, name=name)

    def random(self, shape, low=0.1, high=1.0, signed=True):
        """float64 values with |v| in [low, high): no zeros, nothing too tiny for rtol."""
        mag = self.rng.uniform(low, high, size=tuple(shape))
        if signed:
            mag *= self.rng.choice([-1.0, 1.0], size=tuple(shape))
        return mag

    def input(self, shape, dtype, layout="packed", low=0.1, high=1.0, signed=True, values=None):
        storage = STORAGES[dtype]
        if values is None:
            values = self.random(shape, low, high, signed)
        view, base, mask = _allocate(np.shape(values), storage, layout)
        view[...] = storage.encode(values)
        op = Operand(view, base, mask, storage, storage.decode(view))
        assert np.isfinite(op.values).all()
        return op

    def mask(self, shape, layout="packed", p=0.5):
        """A BOOLEAN input, true with probability p (comparison, logic and select inputs)."""
        return self.input(shape, "bool", layout, values=self.rng.random(tuple(shape)) < p)

    def output(self, tensor, shape, dtype, layout="packed", set_dim=True):
        """Marks `tensor` as a graph output of `dtype` and gives it a NaN-poisoned buffer.

        The output's strides are set to the buffer's layout (and its dims too, unless
        set_dim=False).  layout="inferred" sets neither: the buffer is allocated after the
        build, in whatever dense layout the graph inferred.
        """
        storage = STORAGES[dtype]
        tensor.set_output(True).set_data_type(storage.data_type)
        if layout == "inferred":
            op = Operand(None, None, None, storage)
            op.shape = tuple(shape)
        else:
            view, base, mask = _allocate(shape, storage, layout)
            if set_dim:
                tensor.set_dim(list(view.shape))
            tensor.set_stride(element_strides(view))
            op = Operand(view, base, mask, storage)
        op.tensor = tensor
        return op

    engine = ENGINE

    def build(self, g):
        g.set_preferred_engine(self.engine)
        g.build([hipdnn.heur_mode.A])
        assert g.get_engine_name(0) == self.engine
        return g

    def execute(self, g, operands, build=True):
        """Runs g once with every operand bound; checks the inputs survive untouched."""
        if build:
            self.build(g)
        for op in operands:
            if op.is_output:
                assert list(op.tensor.get_dim()) == list(op.shape), (
                    f"inferred dims of {op.tensor.get_name()!r}: {op.tensor.get_dim()}, "
                    f"reference shape {list(op.shape)}")
                if op.array is None:
                    _allocate_inferred(op)
        self.run(g, operands)
        for op in operands:
            name = op.tensor.get_name()
            if op.is_output:
                gap = op.base[~op.mask]
                poison = op.storage.full(gap.shape)
                assert _same_bits(gap, poison), (
                    f"output {name!r}: the engine wrote outside the tensor's view")
            else:
                assert _same_bits(op.base, op.before), f"input {name!r} was modified by execute"

    def run(self, g, operands):
        """One execute of g on the operands' host arrays."""
        size = g.get_workspace_size()
        workspace = np.full(size, 0xA5, np.uint8)  # garbage, not zeros
        g.execute({op.tensor: op.array for op in operands}, workspace)

    def assert_close(self, out, ref, tol):
        assert_close(out.decoded(), ref, tol, out.tensor.get_name() if out.tensor else "output")


class DeviceNumerics(Numerics):
    """Numerics on the GPU engine: each operand's whole host allocation (gaps and NaN
    poison included) is copied to device memory, the graph runs on a view of it with the
    operand's strides, and the allocation is copied back, so every check made on the host
    (values, untouched gaps, unchanged inputs) applies to what the device did."""

    engine = None  # set by the gpu fixture
    handle = None  # a hipdnn.Handle to execute on, when not the graph's own

    def run(self, g, operands):
        bases = []
        pack = {}
        for op in operands:
            if op.tensor.get_is_pass_by_value():  # a host value, read at execute
                pack[op.tensor] = op.array
                bases.append(None)
                continue
            kwargs = {"data_type": op.storage.data_type}
            base = hipdnn.DeviceArray.from_numpy(op.base, **kwargs)
            offset = (op.array.__array_interface__["data"][0] -
                      op.base.__array_interface__["data"][0]) // op.base.itemsize
            pack[op.tensor] = base.as_strided(list(op.array.shape), element_strides(op.array),
                                              offset)
            bases.append(base)
        size = g.get_workspace_size()
        workspace = None
        if size:
            workspace = hipdnn.DeviceArray.empty([size], np.uint8)
            workspace.fill_bytes(0xA5)
        if self.handle is not None:
            g.execute(pack, workspace, handle=self.handle)
        else:
            g.execute(pack, workspace)
        for op, base in zip(operands, bases):
            if base is not None:
                np.copyto(op.base, base.numpy())


# ---- the GPU engine under test ----------------------------------------------------------
# A real GPU runs the engine "hip".  Without one, `HIPDNN_TEST_FAKE_GPU=1` (set by
# tests/test_gpu_emulated.py for a subprocess) runs the same tests on the engine's host
# emulation ("hip_emulated", build/tests/emulated) over the fake driver of
# build/tests/fake_cuda, so every device path but the kernel launch itself is exercised.

FAKE_GPU = os.environ.get("HIPDNN_TEST_FAKE_GPU") == "1"
GPU_ENGINE = "hip_emulated" if FAKE_GPU else "hip"

if FAKE_GPU:  # before any handle exists: only the reference engine and the emulation
    _build = os.environ.get("HIPDNN_BUILD_DIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build")
    hipdnn.set_engine_plugin_paths(
        ["hipdnn_plugins/engines/libhipdnn_reference_cpu.so",
         os.path.join(_build, "tests", "emulated", "libhip_emulated.so")],
        hipdnn.plugin_loading_mode.ABSOLUTE)


def python(code):
    """Runs code in a fresh interpreter on this checkout; returns its stdout."""
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=checkout + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=checkout, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def logged(run):
    """Calls run() with the log on at INFO; every line it logged."""
    messages = []
    hipdnn.set_log_level(hipdnn.log_level.INFO)
    hipdnn.set_log_callback(lambda level, msg: messages.append(msg))
    try:
        run()
        hipdnn._C.flush_log()
    finally:
        hipdnn.set_log_callback(None)
        hipdnn.set_log_level(hipdnn.log_level.WARN)
    return messages


def engine_log(run, engine=None):
    """Calls run() with the engine's log on; the lines of `engine` (default the GPU engine
    under test): its plan and first runs."""
    return [m for m in logged(run) if m.startswith((engine or GPU_ENGINE) + ":")]


def gpu_unavailable_reason():
    """None when the GPU engine is loaded, else why the gpu tests are skipped."""
    names = [e.name for e in hipdnn.engines()]
    if GPU_ENGINE in names and hipdnn.device_runtime().name != "none":
        return None
    rt = hipdnn.device_runtime()
    why = [f"no '{GPU_ENGINE}' engine"]
    for path, reason in hipdnn.skipped_engine_plugins():
        if "hip" in os.path.basename(path):
            why.append(f"{os.path.basename(path)}: {reason}")
    if rt.name == "none":
        why.append(f"device runtime: {rt.reason}")
    return "; ".join(why)


def skip_or_fail_without_gpu(reason):
    """Skips, or fails where HIPDNN_TEST_REQUIRE_GPU=1 says a GPU must be there (the GPU
    machine's check, tools/gpu_check.sh)."""
    if os.environ.get("HIPDNN_TEST_REQUIRE_GPU") == "1":
        pytest.fail(f"HIPDNN_TEST_REQUIRE_GPU=1 but: {reason}")
    pytest.skip(reason)


@pytest.fixture
def gpu(rng):
    """DeviceNumerics on the GPU engine; skips, saying why, without a GPU."""
    reason = gpu_unavailable_reason()
    if reason:
        skip_or_fail_without_gpu(reason)
    d = DeviceNumerics(rng)
    d.engine = GPU_ENGINE
    return d


def _bits(array):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[array.itemsize]


def _same_bits(a, b):
    return a.shape == b.shape and np.array_equal(a.view(_bits(a)), b.view(_bits(b)))


def assert_close(got, ref, tol, name="output"):
    """Every element finite and |got - ref| <= tol + tol * |ref| (atol = rtol)."""
    got = np.asarray(got, np.float64)
    ref = np.asarray(ref, np.float64)
    assert got.shape == ref.shape, f"{name}: shape {got.shape}, reference {ref.shape}"
    assert np.isfinite(ref).all(), f"{name}: the reference itself is not finite"
    finite = np.isfinite(got)
    if not finite.all():
        idx = tuple(int(i) for i in np.argwhere(~finite)[0])
        pytest.fail(f"{name}: {int((~finite).sum())} of {got.size} elements are not finite "
                    f"(unwritten poison?), first at {idx}: {got[idx]}")
    err = np.abs(got - ref)
    bound = tol + tol * np.abs(ref)
    bad = err > bound
    if bad.any():
        idx = np.unravel_index(int(np.argmax(err - bound)), got.shape)
        idx = tuple(int(i) for i in idx)
        pytest.fail(f"{name}: {int(bad.sum())} of {got.size} elements out of tolerance {tol}; "
                    f"worst at {idx}: got {got[idx]!r}, reference {ref[idx]!r}, "
                    f"|diff| {err[idx]:.3g} > {bound[idx]:.3g}")


# ---- fixtures -------------------------------------------------------------------------

@pytest.fixture
def rng(request):
    """A generator seeded from the test's id: fresh data per test, reproducible per run."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def nx(rng):
    return Numerics(rng)


@pytest.fixture(params=DTYPES)
def dtype(request):
    """Storage dtype ("fp32", "fp16", "bf16"); a test may parametrize it directly instead."""
    return request.param
