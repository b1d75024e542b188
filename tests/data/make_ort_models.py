"""Writes the models tests/test_ort_ep_python.py runs through ONNX Runtime's Python API
(where the onnxruntime package is installed, which may lack the onnx package that builds
models):

    /usr/bin/python3 tests/data/make_ort_models.py

conv_add_relu.onnx: Conv (3 -> 4 channels, 3x3, pads 1) -> Add (a [1, 4, 1, 1] bias) -> Relu
on x [1, 3, 8, 8]; the weights are fixed pseudo-random values (seed 7).

ln_softmax_block.onnx: MatMul (W [16, 16]) -> Add (b [16]) -> Relu -> LayerNormalization
(gamma, beta [16], epsilon 1e-5, last axis) -> Softmax (last axis) on x [2, 5, 16]; weights
from seed 11, drawn in that order.  On the GPU the MatMul stays with ORT (the GPU engine
runs the memory-bound ops) and the other four nodes are one fused node.

Both store their weights as initializers; the test recomputes them from the seeds for its
float64 references."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(model, name):
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def conv_add_relu():
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Add", ["c", "b"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["y"], name="relu")]
    graph = helper.make_graph(
        nodes, "conv_add_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         "conv_add_relu.onnx")


def ln_softmax_block():
    rng = np.random.default_rng(11)
    w = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
    b = rng.uniform(-1, 1, (16,)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, (16,)).astype(np.float32)
    beta = rng.uniform(-1, 1, (16,)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"], name="proj"),
             helper.make_node("Add", ["h", "b"], ["hb"], name="bias"),
             helper.make_node("Relu", ["hb"], ["r"], name="relu"),
             helper.make_node("LayerNormalization", ["r", "gamma", "beta"], ["n"], name="ln",
                              axis=-1, epsilon=1e-5),
             helper.make_node("Softmax", ["n"], ["y"], name="softmax", axis=-1)]
    graph = helper.make_graph(
        nodes, "ln_softmax_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 16])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(gamma, "gamma"), numpy_helper.from_array(beta, "beta")])
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
         "ln_softmax_block.onnx")


def main():
    conv_add_relu()
    ln_softmax_block()


if __name__ == "__main__":
    main()
