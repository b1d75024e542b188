"""Whole models through hipdnn-ep (docs/onnxruntime.md, "Whole models"): a ResNet-18-style
CNN, a BERT-style encoder layer and a ViT (patch embedding and one block), written with
python3-onnx and random weights (NumPy, seeded) by tests/ort_models.py (whose builders
benchmarks/ort_model_bench.py runs at real widths), run through ONNX Runtime with
hipdnn-ep and with ORT's CPU EP alone.

Every compute node (convolutions, products, normalizations, softmax, pooling, the
pointwise ops and the data movement between them) must be claimed, in one fused node, on
hipdnn-ep's CPU device and on the fake GPU (tests/test_ort_ep.py's fake CUDA driver with
the HIP engine's host emulation; on a GPU machine, with HIPDNN_TEST_NO_FAKE=1 and
HIPDNN_ORT_DEVICE=gpu, the real GPU); only BERT's embedding Gather stays with ORT.  Each test
prints the fraction of nodes hipdnn-ep took on each device.  Each model runs as written
(ORT's graph optimizations off) and as ORT rewrites it at level `all` (BatchNormalization
folded into Conv, constants folded), which is what an application gets by default.

Tolerance: each output must match ORT's CPU EP within tests/tolerances.py's graph
tolerance over the model's ops in fp32 (the loosest op's: batchnorm's 2e-4 for the CNN,
layernorm's 1e-4 for the transformers), relative and absolute; the differences seen are
near 1e-6, both sides summing in float32 in their own orders.
"""
import os
import re

import numpy as np
import pytest

from ort_models import bert, resnet, vit
from test_ort_ep import DEFAULT_DEVICE, run, runner_available  # noqa: F401  a fixture
from tolerances import graph_tolerance

CNN_TOL = graph_tolerance(["conv_fprop", "batchnorm", "pointwise", "resample", "reduction",
                           "matmul"], "fp32")
TRANSFORMER_TOL = graph_tolerance(["conv_fprop", "matmul", "layernorm", "pointwise",
                                   "reduction", "sdpa"], "fp32")


# ---- runs -----------------------------------------------------------------------------------

def took(assigned):
    mine = [a for a in assigned if a[0] == "hipdnn"]
    return len(mine), len(assigned), sorted({a[2] for a in assigned if a[0] != "hipdnn"})


def devices():
    """The CPU device, then the fake GPU; on a GPU machine (HIPDNN_TEST_NO_FAKE=1) the real
    GPU instead (None: run()'s default device, in the real environment) where
    HIPDNN_ORT_DEVICE=gpu asks for it, else the CPU alone."""
    if os.environ.get("HIPDNN_TEST_NO_FAKE") != "1":
        return ["cpu", "gpu"]
    return ["cpu", None] if DEFAULT_DEVICE == "gpu" else ["cpu"]


def check_model(tmp_path, m, feeds, tol, opt, stays=(), sdpa=0):
    """hipdnn-ep on its CPU device and on a GPU (devices()): every node but
    those of the op types in `stays` claimed, in one fused node, and the output equal to
    ORT's CPU EP within tol; ORT's graph optimizations at level `opt`.  sdpa: how many
    attentions (MatMul -> scale -> mask -> Softmax -> MatMul) the fused node's log says
    ran as one sdpa operation each."""
    want, _, _ = run(tmp_path, m, feeds, ep="cpu", opt=opt)
    for device in devices():
        got, assigned, err = run(tmp_path, m, feeds, device=device, opt=opt, log_level=1)
        assert [int(c) for c in re.findall(r"(\d+) attention as sdpa", err)] == [sdpa], err[-3000:]
        device = device or "real GPU"
        n, total, kept = took(assigned)
        print(f"\n{device} device, optimizations {opt}: hipdnn-ep took {n} of {total} nodes "
              f"({100.0 * n / total:.1f} %); ORT kept {kept or 'none'}")
        np.testing.assert_allclose(got["y"][0], want["y"][0], rtol=tol, atol=tol)
        assert kept == sorted(stays), assigned
        assert n == total - sum(1 for a in assigned if a[2] in stays)
        assert len({a[1] for a in assigned if a[0] == "hipdnn"}) == 1, assigned


OPT = pytest.mark.parametrize("opt", ["disable", "all"])


@OPT
def test_resnet18_style_cnn(tmp_path, opt):
    m, _ = resnet(seed=1)
    x = np.random.default_rng(2).standard_normal((2, 3, 32, 32)).astype(np.float32)
    check_model(tmp_path, m, {"x": x}, CNN_TOL, opt)


@OPT
@pytest.mark.parametrize("form", ["erf", "none", "tanh"])
def test_bert_style_encoder_layer(tmp_path, form, opt):
    m, _ = bert(seed=3, form=form)
    r = np.random.default_rng(4)
    mask = np.zeros((2, 1, 1, 8), np.float32)
    mask[1, ..., 6:] = -1e4  # the second sequence is two tokens shorter
    check_model(tmp_path, m, {"ids": r.integers(0, 50, (2, 8)).astype(np.int64), "mask": mask},
                TRANSFORMER_TOL, opt, stays=("Gather",), sdpa=1)


@OPT
def test_vit_patch_embedding_and_block(tmp_path, opt):
    m, _ = vit(seed=5)
    x = np.random.default_rng(6).standard_normal((2, 3, 16, 16)).astype(np.float32)
    check_model(tmp_path, m, {"x": x}, TRANSFORMER_TOL, opt, sdpa=1)
