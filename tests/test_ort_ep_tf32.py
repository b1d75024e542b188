"""hipdnn-ep's ep.hipdnn.use_tf32 option (docs/onnxruntime.md, "Options"): 0, the default,
keeps fp32 exact; 1 plans each fused node on its engine's "tf32" knob (the hip engine's:
TF32 on an sm_90 GPU's tensor cores for an fp32 matmul whose a has k contiguous, b k or n:
a Gemm with transB = 1 or 0, a MatMul), falling back to the exact plan where the engine
declines (a Gemm with transA = 1: a's m contiguous); an NCHW Conv with KCRS w too.  On the fake GPU (the emulated hip engine,
which computes the knob's plans exactly) the outputs match ORT's CPU EP to fp32's
tolerance and the engine's stage line says which plan ran."""
import re

import numpy as np
from onnx import helper

from test_ort_ep import model, rand, run

TOL = dict(rtol=1e-5, atol=1e-5)


def gemm_model(rng, trans_b, trans_a=0):
    w = rand(rng, 48, 40) if trans_b else rand(rng, 40, 48)
    nodes = [helper.make_node("Gemm", ["x", "W", "b"], ["h"], name="fc", transA=trans_a,
                              transB=trans_b),
             helper.make_node("Relu", ["h"], ["y"], name="relu")]
    x_shape = [40, 64] if trans_a else [64, 40]
    return model(nodes, [("x", x_shape)], [("y", None)], [("W", w), ("b", rand(rng, 48))])


def stage_lines(err):
    return re.findall(r"stage \d+ of \d+ \(matmul [^)]*\)", err)


def test_use_tf32_plans_the_hip_engines_tf32_config(tmp_path):
    rng = np.random.default_rng(5)
    for trans_b in (1, 0):
        m, x = gemm_model(rng, trans_b), rand(rng, 64, 40)
        want, _, _ = run(tmp_path, m, {"x": x}, ep="cpu")
        got, _, err = run(tmp_path, m, {"x": x}, device="gpu", log_level=1,
                          options={"use_tf32": "1", "log_level": "info"})
        np.testing.assert_allclose(got["y"][0], want["y"][0], **TOL)
        lines = stage_lines(err)
        assert lines and all("TF32 on tensor cores on sm_90, else exact fp32 FMA" in s
                             for s in lines), err[-3000:]


def test_fp32_stays_exact_by_default_and_where_tf32_is_declined(tmp_path):
    rng = np.random.default_rng(6)
    for trans_a, opts in ((0, {}), (0, {"use_tf32": "0"}), (1, {"use_tf32": "1"})):
        m = gemm_model(rng, 1, trans_a)
        x = rand(rng, 40, 64) if trans_a else rand(rng, 64, 40)
        want, _, _ = run(tmp_path, m, {"x": x}, ep="cpu")
        got, _, err = run(tmp_path, m, {"x": x}, device="gpu", log_level=1,
                          options=dict(opts, log_level="info"))
        np.testing.assert_allclose(got["y"][0], want["y"][0], **TOL)
        lines = stage_lines(err)
        assert lines and not any("TF32" in s for s in lines), (opts, err[-3000:])


def test_a_bad_use_tf32_value_is_a_warning_and_fp32_stays_exact(tmp_path):
    rng = np.random.default_rng(7)
    m, x = gemm_model(rng, 1), rand(rng, 64, 40)
    _, _, err = run(tmp_path, m, {"x": x}, device="gpu", log_level=1,
                    options={"use_tf32": "yes", "log_level": "info"})
    assert "option ep.hipdnn.use_tf32: 'yes' is neither 0 nor 1; ignored (fp32 stays exact)" \
        in err, err[-3000:]
    assert not any("TF32" in s for s in stage_lines(err)), err[-3000:]


def test_use_tf32_reads_an_onnx_nchw_conv_as_tf32(tmp_path):
    # NCHW x, KCRS w (ONNX's): x gathered an element at a time on an sm_90 GPU
    rng = np.random.default_rng(8)
    nodes = [helper.make_node("Conv", ["x", "W"], ["h"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["h"], ["y"], name="relu")]
    m = model(nodes, [("x", [2, 8, 9, 9])], [("y", None)], [("W", rand(rng, 12, 8, 3, 3))])
    x = rand(rng, 2, 8, 9, 9)
    want, _, _ = run(tmp_path, m, {"x": x}, ep="cpu")
    got, _, err = run(tmp_path, m, {"x": x}, device="gpu", log_level=1,
                      options={"use_tf32": "1", "log_level": "info"})
    np.testing.assert_allclose(got["y"][0], want["y"][0], **TOL)
    lines = re.findall(r"stage \d+ of \d+ \(conv_fprop [^)]*\)", err)
    assert lines and all("TF32 on tensor cores on sm_90, else exact fp32 FMA" in s
                         for s in lines), err[-3000:]
