"""Writes tests/data/conv_add_relu.onnx, the model tests/test_ort_ep_python.py runs through
ONNX Runtime's Python API (where the onnxruntime package is installed, which may lack the
onnx package that builds models):

    /usr/bin/python3 tests/data/make_ort_models.py

Conv (3 -> 4 channels, 3x3, pads 1) -> Add (a [1, 4, 1, 1] bias) -> Relu on x [1, 3, 8, 8];
the weights are fixed pseudo-random values (seed 7), stored in the model as initializers."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
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
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_add_relu.onnx")
    onnx.save(model, path)


if __name__ == "__main__":
    main()
