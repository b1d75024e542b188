"""``cudnn.Graph`` over another library's device tensors, as cuDNN frontend's notebooks call
it (issue 28): its outputs come back as torch tensors, which their
``torch.testing.assert_close`` takes, and a one-element host tensor (``eps_cpu``) is a
scalar input beside device inputs.

Emulated, torch is a stand-in module whose ``from_dlpack`` wraps what it is given, and the
foreign device arrays wrap DeviceArrays behind DLPack alone; on a GPU with PyTorch the
last test runs the real thing.
"""
import sys
import types

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import FAKE_GPU, GPU_ENGINE, assert_close, gpu_unavailable_reason, \
    skip_or_fail_without_gpu
from test_cudnn_compat_graph_wrapper import HostTensor
from tolerances import tolerance

pytestmark = pytest.mark.gpu
PHASE = hipdnn.norm_forward_phase


@pytest.fixture(autouse=True)
def need_gpu():
    reason = gpu_unavailable_reason()
    if reason:
        skip_or_fail_without_gpu(reason)


class Foreign:
    """Another library's device array: DLPack only."""

    def __init__(self, device_array):
        self.d = device_array

    def __dlpack__(self, **kwargs):
        return self.d.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.d.__dlpack_device__()


class StandInTensor:
    def __init__(self, capsule_owner):
        self.owner = capsule_owner


@pytest.fixture
def stand_in_torch(monkeypatch):
    if "torch" in sys.modules and not FAKE_GPU:
        pytest.skip("the real torch is imported")
    fake = types.ModuleType("torch")
    fake.from_dlpack = StandInTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def layernorm_graph(x, scale, bias, eps):
    with hipdnn.Graph(io_data_type=hipdnn.data_type.FLOAT, preferred_engine=GPU_ENGINE,
                      inputs=["ln::input", "ln::scale", "ln::bias", "ln::epsilon"],
                      outputs=["ln::Y", "ln::MEAN", "ln::INV_VARIANCE"]) as g:
        y, mean, inv = g.layernorm(name="ln", input=x, scale=scale, bias=bias, epsilon=eps,
                                   norm_forward_phase=PHASE.TRAINING)
        for t in (y, mean, inv):
            t.set_output(True).set_data_type(hipdnn.data_type.FLOAT)
    assert g.engine_name == GPU_ENGINE
    return g


def host_scalar(value):
    return HostTensor(np.full((1, 1, 1, 1), value, np.float32))


def inputs(rng):
    x = rng.standard_normal((64, 48, 1, 1)).astype(np.float32)
    scale = rng.uniform(0.5, 1.5, (1, 48, 1, 1)).astype(np.float32)
    bias = rng.standard_normal((1, 48, 1, 1)).astype(np.float32)
    return x, scale, bias


def check(outs, x, scale, bias, eps, as_numpy):
    want = ref.norm_forward("layer", x, scale, bias, eps)
    for got, w, name in zip(outs, want, ("y", "mean", "inv_variance")):
        assert_close(as_numpy(got), w, tolerance("layernorm", "fp32"), name)


def test_outputs_are_torch_tensors_for_foreign_device_inputs(stand_in_torch, rng):
    x, scale, bias = inputs(rng)
    dev = [Foreign(hipdnn.DeviceArray.from_numpy(a)) for a in (x, scale, bias)]
    eps = host_scalar(1e-3)
    g = layernorm_graph(*dev, eps)
    outs = g(*dev, eps)
    assert all(isinstance(o, StandInTensor) for o in outs)
    assert all(isinstance(o.owner, hipdnn.DeviceArray) for o in outs)  # zero-copy, on device
    check(outs, x, scale, bias, 1e-3, lambda o: o.owner.numpy())
    got = g({"ln::input": dev[0], "ln::scale": dev[1], "ln::bias": dev[2], "ln::epsilon": eps})
    assert isinstance(got["ln::Y"], StandInTensor)
    check([got["ln::Y"], got["ln::MEAN"], got["ln::INV_VARIANCE"]], x, scale, bias, 1e-3,
          lambda o: o.owner.numpy())


def test_device_array_inputs_keep_device_array_outputs(stand_in_torch, rng):
    x, scale, bias = inputs(rng)
    dev = [hipdnn.DeviceArray.from_numpy(a) for a in (x, scale, bias)]
    g = layernorm_graph(*dev, host_scalar(1e-3))
    outs = g(*dev, host_scalar(0.25))
    assert all(isinstance(o, hipdnn.DeviceArray) for o in outs)
    check(outs, x, scale, bias, 0.25, lambda o: o.numpy())


def test_without_torch_foreign_inputs_give_device_arrays(monkeypatch, rng):
    if "torch" in sys.modules:
        monkeypatch.delitem(sys.modules, "torch")
    x, scale, bias = inputs(rng)
    dev = [Foreign(hipdnn.DeviceArray.from_numpy(a)) for a in (x, scale, bias)]
    g = layernorm_graph(*dev, host_scalar(1e-3))
    outs = g(*dev, host_scalar(1e-3))
    assert all(isinstance(o, hipdnn.DeviceArray) for o in outs)
    check(outs, x, scale, bias, 1e-3, lambda o: o.numpy())


def test_real_torch_cuda_tensors_in_and_out(rng):
    torch = pytest.importorskip("torch")
    if FAKE_GPU or not torch.cuda.is_available():
        pytest.skip("PyTorch has no GPU here")
    x, scale, bias = inputs(rng)
    dev = [torch.from_numpy(a).cuda() for a in (x, scale, bias)]
    eps = torch.full((1, 1, 1, 1), 1e-3, dtype=torch.float32)
    g = layernorm_graph(*dev, eps)
    outs = g(*dev, eps)
    assert all(isinstance(o, torch.Tensor) and o.is_cuda for o in outs)
    check(outs, x, scale, bias, 1e-3, lambda o: o.cpu().numpy())
