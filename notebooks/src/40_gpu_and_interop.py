# %% [markdown]
# # 40 · GPUs, device memory, PyTorch and CuPy
#
# Each engine runs on one kind of memory, its **memory space**: `reference_cpu` on host
# memory (NumPy arrays), the GPU engine `hip` on device memory. A plan takes the memory
# space of the engine that built it, and `execute` checks every pointer against it.
#
# hipdnn links no GPU library: the backend opens AMD's HIP runtime or NVIDIA's driver
# (`libcuda.so.1`) the first time something needs a device, and
# `hipdnn.device_runtime()` says which one it found, or why none.
#
# This notebook runs everywhere. The cells that need a GPU check for one first and, where
# there is none, print why and do nothing else; the cells for PyTorch and CuPy also need
# those packages with GPU support.

# %%
import math
import sys
from pathlib import Path

import numpy as np

try:
    import hipdnn
except ImportError:  # a built checkout that is not installed: use the one we are in
    sys.path.insert(0, str(Path.cwd().parent))
    import hipdnn

print("hipdnn", hipdnn.__version__, "from", Path(hipdnn.__file__).parent)
rng = np.random.default_rng(40)


def rand(*shape, dtype=np.float32):
    """Uniform magnitudes in [0.1, 1) with random signs: never zero, never tiny."""
    values = rng.uniform(0.1, 1.0, shape) * rng.choice([-1.0, 1.0], shape)
    return values.astype(dtype)


def check(name, got, ref, tol):
    """Every element finite and within tol + tol * |ref| of the float64 reference."""
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"{name}: shape {got.shape}, reference {ref.shape}"
    assert np.isfinite(got).all(), f"{name}: elements not finite"
    err = np.abs(got - ref)
    ratio = float((err / (tol + tol * np.abs(ref))).max())
    print(f"{name}: max |error| {err.max():.2e}, {ratio:.2g} of the allowed bound (tol {tol:g})")
    assert ratio <= 1.0, f"{name}: out of tolerance {tol}"

# %% [markdown]
# ## Is there a GPU?
#
# A GPU is usable when the backend found a device runtime with a device *and* an engine
# on device memory is loaded. When it is not, the reason is the runtime's answer and
# what the GPU plugins said when they declined to load.

# %%
runtime = hipdnn.device_runtime()
print(runtime)
device_engines = [e.name for e in hipdnn.engines()
                  if e.memory_space == hipdnn.memory_space.DEVICE]
print("device engines:", device_engines)

GPU_SKIP = None
if runtime.name == "none":
    GPU_SKIP = "no GPU runtime with a device (device_runtime().reason above says why)"
elif not device_engines:
    declined = [f"{Path(p).name}: {r}" for p, r in hipdnn.skipped_engine_plugins()]
    GPU_SKIP = "no engine on device memory is loaded" + \
        (" (" + "; ".join(declined) + ")" if declined else " (the GPU plugin was not built)")
DEVICE_ENGINE = device_engines[0] if device_engines and not GPU_SKIP else None
print("GPU cells:", "skipped, " + GPU_SKIP if GPU_SKIP else f"run on '{DEVICE_ENGINE}'")

# %% [markdown]
# ## The easy way: `hipdnn.Graph` stages NumPy through the device
#
# `hipdnn.Graph` picks the engine, and when that engine runs on the device it copies the
# NumPy inputs there, runs, and copies the outputs back, so the call still takes and
# returns NumPy arrays. This cell runs everywhere: on the GPU engine where there is one,
# on `reference_cpu` otherwise. The tolerance is float32 pointwise's, 1e-5, either way.

# %%
x = rand(8, 64, 28, 28)
scale, shift = rand(1, 64, 1, 1), rand(1, 64, 1, 1)

with hipdnn.Graph(preferred_engine=DEVICE_ENGINE) as g:
    g.gelu(g.add(g.mul(x, scale), shift))
out = g(x, scale, shift)
print("engine:", g.engine_name, "| output:", type(out).__name__, out.dtype, out.shape)

v = x.astype(np.float64) * scale + shift
erf = np.vectorize(math.erf)
check("gelu(x * scale + shift)", out, v * 0.5 * (1.0 + erf(v / np.sqrt(2.0))), 1e-5)

# %% [markdown]
# ## `hipdnn.DeviceArray`
#
# hipdnn's own device array, for code without PyTorch or CuPy: `from_numpy` copies to the
# device, `empty` allocates (strides optional, in elements), `as_strided` makes a
# bounds-checked view, `numpy()` copies back. It speaks DLPack and
# `__cuda_array_interface__`, so PyTorch and CuPy can share its memory (below).

# %%
if GPU_SKIP:
    print("skipped:", GPU_SKIP)
else:
    host = rand(4, 8)
    d = hipdnn.DeviceArray.from_numpy(host)
    print(d)
    print("shape", d.shape, "dtype", d.dtype, "strides (bytes)", d.strides,
          "(elements)", d.element_strides, "device", d.device)
    assert np.array_equal(d.numpy(), host)              # a bit-exact round trip

    view = d.as_strided((4, 4), (8, 2), offset=1)      # every other column from column 1
    assert np.array_equal(view.numpy(), host[:, 1::2])

    e = hipdnn.DeviceArray.empty((4, 8), np.float16)
    e.fill_bytes(0xFF)                                  # every byte 0xFF: fp16 NaN
    assert np.isnan(e.numpy()).all()
    print("DeviceArray: round trip, view and fill ok")

# %% [markdown]
# ## pygraph on device memory
#
# With `pygraph`, hand `execute` device memory directly: a `DeviceArray`, a PyTorch or
# CuPy tensor, anything with `__dlpack__` or `__cuda_array_interface__`. It is used in
# place. `tensor_like` reads dims, strides and data type from device arrays as from NumPy
# ones. The plan runs on the handle's stream; `numpy()` waits for the device.

# %%
if GPU_SKIP:
    print("skipped:", GPU_SKIP)
else:
    dt = hipdnn.data_type
    a_host, b_host = rand(37, 129), rand(37, 129)
    da, db = hipdnn.DeviceArray.from_numpy(a_host), hipdnn.DeviceArray.from_numpy(b_host)
    pg = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                        compute_data_type=dt.FLOAT)
    A, B = pg.tensor_like(da, name="a"), pg.tensor_like(db, name="b")
    Y = pg.relu(input=pg.add(a=A, b=B))
    Y.set_output(True)
    pg.set_preferred_engine(DEVICE_ENGINE)
    pg.build([hipdnn.heur_mode.A])
    print("engine:", pg.get_engine_name(), "| memory space:", pg.get_memory_space().name)

    dy = hipdnn.DeviceArray.empty([37, 129], np.float32)
    dy.fill_bytes(0xFF)                                  # NaN poison
    pg.execute({A: da, B: db, Y: dy})
    check("relu(a + b) on the device", dy.numpy(),
          np.maximum(a_host.astype(np.float64) + b_host, 0.0), 1e-5)

    try:  # a NumPy array for a device plan is refused, naming the tensor
        pg.execute({A: a_host, B: db, Y: dy})
    except hipdnn.InvalidGraphError as err:
        print("InvalidGraphError:", err)
        assert "'a'" in str(err) and "host memory" in str(err)
    else:
        raise AssertionError("host memory was accepted by a device plan")

# %% [markdown]
# Given device arrays for every input, `hipdnn.Graph` uses them in place too, and its
# outputs stay on the device (`DeviceArray`): chains of calls never go through the host.

# %%
if GPU_SKIP:
    print("skipped:", GPU_SKIP)
else:
    on_device = g(hipdnn.DeviceArray.from_numpy(x), hipdnn.DeviceArray.from_numpy(scale),
                  hipdnn.DeviceArray.from_numpy(shift))
    print(type(on_device).__name__, on_device.shape)
    assert isinstance(on_device, hipdnn.DeviceArray)
    assert np.array_equal(on_device.numpy(), out)       # same plan, same bits

# %% [markdown]
# ## PyTorch: zero-copy both ways
#
# PyTorch GPU tensors go straight into a variant pack (read from their attributes; work
# already queued on torch's current stream comes first). Set the handle's stream to
# torch's to keep everything on one stream. The other way, `torch.from_dlpack` of a
# `DeviceArray` shares its memory: same pointer, no copy.

# %%
try:
    import torch
    TORCH_SKIP = None if torch.cuda.is_available() else "PyTorch has no GPU here"
except ImportError:
    TORCH_SKIP = "PyTorch is not installed"
if GPU_SKIP or TORCH_SKIP:
    print("skipped:", GPU_SKIP or TORCH_SKIP)
else:
    ta = torch.randn(1 << 16, device="cuda")
    tb = torch.randn(1 << 16, device="cuda")
    tout = torch.full_like(ta, float("nan"))
    pt = hipdnn.pygraph(io_data_type=torch.float32, intermediate_data_type=torch.float32,
                        compute_data_type=torch.float32)   # torch dtypes are taken too
    TA, TB = pt.tensor_like(ta, name="a"), pt.tensor_like(tb, name="b")
    TY = pt.tanh(input=pt.mul(a=TA, b=TB))
    TY.set_output(True)
    pt.set_preferred_engine(DEVICE_ENGINE)
    pt.build([hipdnn.heur_mode.A])
    handle = hipdnn.Handle()
    handle.set_stream(torch.cuda.current_stream())
    pt.execute({TA: ta, TB: tb, TY: tout}, handle=handle)
    torch.cuda.synchronize()
    check("tanh(a * b), torch tensors", tout.cpu().numpy(),
          np.tanh(ta.double().cpu().numpy() * tb.double().cpu().numpy()), 1e-5)

    shared = hipdnn.DeviceArray.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))
    t = torch.from_dlpack(shared)
    assert t.data_ptr() == shared.data_ptr                # the same memory
    t.mul_(2)
    torch.cuda.synchronize()
    assert np.array_equal(shared.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4) * 2)
    print("torch.from_dlpack(DeviceArray): same pointer; torch's write is seen by hipdnn")

# %% [markdown]
# ## CuPy: the same, through `__cuda_array_interface__` and DLPack

# %%
try:
    import cupy
    cupy.cuda.runtime.getDeviceCount()
    CUPY_SKIP = None
except ImportError:
    CUPY_SKIP = "CuPy is not installed"
except Exception as err:  # CuPy without a usable GPU
    CUPY_SKIP = f"CuPy has no GPU here: {err}"
if GPU_SKIP or CUPY_SKIP:
    print("skipped:", GPU_SKIP or CUPY_SKIP)
else:
    ca = cupy.random.standard_normal((64, 33)).astype(cupy.float32)
    cb = cupy.random.standard_normal((64, 33)).astype(cupy.float32)
    cout = cupy.full_like(ca, cupy.nan)
    pc = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                        compute_data_type=hipdnn.data_type.FLOAT)
    CA, CB = pc.tensor_like(ca, name="a"), pc.tensor_like(cb, name="b")
    CY = pc.sub(a=CA, b=CB)
    CY.set_output(True)
    pc.set_preferred_engine(DEVICE_ENGINE)
    pc.build([hipdnn.heur_mode.A])
    pc.execute({CA: ca, CB: cb, CY: cout})
    cupy.cuda.runtime.deviceSynchronize()
    check("a - b, CuPy arrays", cupy.asnumpy(cout),
          cupy.asnumpy(ca).astype(np.float64) - cupy.asnumpy(cb), 1e-5)

    shared = hipdnn.DeviceArray.from_numpy(np.arange(5, dtype=np.float32))
    assert cupy.asarray(shared).data.ptr == shared.data_ptr       # __cuda_array_interface__
    assert cupy.from_dlpack(shared).data.ptr == shared.data_ptr   # DLPack
    print("cupy.asarray / cupy.from_dlpack(DeviceArray): same pointer")
