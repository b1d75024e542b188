"""The parts of ``hipdnn.pygraph``, one file per op family and per build stage, as cuDNN
frontend's Python bindings keep one file per family (docs/architecture.md, "Python
layers").

hipdnn/pygraph.py holds the tensor type and assembles the ``pygraph`` class from the
mixins here; each derives from ``base.GraphBase``, which declares the state they share:

* base.py: the graph's state and build stages, and adding a node (``_op``, ``_finish``);
* nodes.py: a node before lowering (``_Op``) and the names users see for its ports;
* args.py: argument checking, with messages that name the argument;
* conv.py, matmul.py, pointwise.py, norm.py, reduction.py, movement.py (slice,
  concatenate, reshape), resample.py, sdpa.py: the op families;
* build.py: validate, heuristics and engine configs, engine choices, building plans;
* plans.py: what built plans are, and execute; serialize.py: serialize, deserialize, key.
"""
