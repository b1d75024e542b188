"""serialize()/deserialize(): exact round trips, deterministic bytes and keys, deserialized
graphs that build and run, and corrupted or truncated bytes that raise, never crash."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn

dt = hipdnn.data_type
CONV_FP32 = 1e-5  # docs/architecture.md, "Tolerances"


def conv_bias_relu(pad=1, name="cbr"):
    """conv(x, w) + b -> relu, with a Python-float scale in between; built and validated."""
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name=name)
    x = g.tensor(name="x", dim=[2, 3, 6, 6])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    b = g.tensor(name="b", dim=[1, 4, 1, 1])
    conv = g.conv_fprop(image=x, weight=w, padding=[pad, pad], name="conv")
    y = g.relu(input=g.mul(a=g.add(a=conv, b=b, name="bias"), b=0.5, name="scale"), name="act")
    y.set_output(True).set_name("y")
    g.validate()
    return g, x, w, b, y


def run_py(code):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(hipdnn.__file__).resolve().parents[1]) + os.pathsep + \
        env.get("PYTHONPATH", "")
    env.setdefault("HIPDNN_LOG_LEVEL", "off")
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=300)


def tensor_summary(g):
    return sorted((t.get_uid(), t.get_name(), t.get_dim(), t.get_stride(), t.get_data_type(),
                   t.get_is_virtual(), t.get_is_pass_by_value(), t.get_value())
                  for t in g.tensors())


def test_round_trip_is_exact():
    g, *_ = conv_bias_relu()
    data = g.serialize()
    assert isinstance(data, bytes) and len(data) > 0
    g2 = hipdnn.pygraph()
    g2.deserialize(data)
    assert g2.serialize() == data
    assert g2.name == "cbr"
    assert tensor_summary(g2) == tensor_summary(g)


def test_deserialized_graph_lists_tensors_with_inferred_dims():
    g, x, w, b, y = conv_bias_relu()
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    by_name = {t.get_name(): t for t in g2.tensors()}
    assert by_name["y"].get_dim() == [2, 4, 6, 6]
    assert by_name["y"].get_stride() == [144, 36, 6, 1]
    assert by_name["conv::Y"].get_is_virtual()
    (scalar,) = [t for t in g2.tensors() if t.get_is_pass_by_value()]
    assert scalar.get_value() == 0.5 and scalar.get_data_type() == dt.FLOAT


def test_deserialized_repr_shows_the_same_nodes():
    g, *_ = conv_bias_relu()
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    nodes = [line for line in repr(g).splitlines()[1:] if "'" in line]
    nodes2 = [line for line in repr(g2).splitlines()[1:] if "'" in line]
    assert nodes2 == nodes
    assert any(line.startswith("  conv_fprop 'conv': image=x:float32[2, 3, 6, 6]")
               for line in nodes2)


def test_serialization_is_deterministic_and_keys_are_stable():
    g1, *_ = conv_bias_relu()
    g2, *_ = conv_bias_relu()
    assert g1.serialize() == g2.serialize()
    assert g1.key() == g2.key()
    assert isinstance(g1.key(), int) and 0 <= g1.key() < 2 ** 64
    g3, *_ = conv_bias_relu(pad=0)
    assert g3.key() != g1.key()
    named, *_ = conv_bias_relu(name="other")
    assert named.key() != g1.key()


def test_key_is_the_same_in_another_process():
    g, *_ = conv_bias_relu()
    here = Path(__file__).read_text()
    helper = here[here.index("def conv_bias_relu"):here.index("def run_py")]
    r = run_py("import hipdnn\ndt = hipdnn.data_type\n" + helper +
               "\ng, *_ = conv_bias_relu()\nprint(g.key())\n")
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == g.key()


def test_deserialized_graph_builds_and_runs_like_the_original():
    g, x, w, b, y = conv_bias_relu()
    g.build()
    rng = np.random.default_rng(7)
    xa = rng.uniform(-1, 1, (2, 3, 6, 6)).astype(np.float32)
    wa = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    ba = rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32)
    y1 = np.full((2, 4, 6, 6), np.nan, np.float32)
    g.execute({x: xa, w: wa, b: ba, y: y1})

    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    g2.build([hipdnn.heur_mode.A])
    y2 = np.full((2, 4, 6, 6), np.nan, np.float32)
    g2.execute({x.get_uid(): xa, w.get_uid(): wa, b.get_uid(): ba, y.get_uid(): y2},
               np.empty(g2.get_workspace_size(), np.uint8))
    assert np.array_equal(y1, y2)

    x64 = np.pad(xa.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(x64, (3, 3), axis=(2, 3))
    ref = np.einsum("nchwij,kcij->nkhw", win, wa.astype(np.float64))
    ref = np.maximum((ref + ba.astype(np.float64)) * 0.5, 0)
    err = np.abs(y2.astype(np.float64) - ref)
    assert np.all(err <= CONV_FP32 + CONV_FP32 * np.abs(ref))

    # tensors() of the deserialized graph work as keys too; its output must be writable
    t = {t.get_name(): t for t in g2.tensors()}
    y3 = np.full((2, 4, 6, 6), np.nan, np.float32)
    g2.execute({t["x"]: xa, t["w"]: wa, t["b"]: ba, t["y"]: y3})
    assert np.array_equal(y1, y3)
    y3.flags.writeable = False
    with pytest.raises(ValueError, match="'y'.*read-only"):
        g2.execute({t["x"]: xa, t["w"]: wa, t["b"]: ba, t["y"]: y3})


@pytest.mark.parametrize("what", ["graph", "plan"])
def test_a_runtime_scalar_survives_the_round_trip(what):
    # issue 26: a pass-by-value tensor given at execute (no value in the graph) serialized,
    # and deserialize() raised IndexError reading the empty value
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, name="scaled")
    x = g.tensor(name="x", dim=[2, 8])
    s = g.tensor(name="s", dim=[1, 1], stride=[1, 1], is_pass_by_value=True)
    y = g.mul(a=x, b=s, name="m")
    y.set_output(True)
    if what == "graph":
        data = g.serialize()  # validated, not built: the graph alone
    else:
        g.build([hipdnn.heur_mode.A])
        data = g.serialize()  # the plan with it
    g2 = hipdnn.pygraph()
    g2.deserialize(data)
    t = {t.get_name(): t for t in g2.tensors()}
    assert t["s"].get_is_pass_by_value()
    if what == "graph":
        g2.build([hipdnn.heur_mode.A])
    xa = np.arange(16, dtype=np.float32).reshape(2, 8)
    out = np.full((2, 8), np.nan, np.float32)
    g2.execute({t["x"]: xa, t["s"]: 1.5, y.get_uid(): out})
    assert np.array_equal(out, xa * np.float32(1.5))


def test_serialize_validates_first():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT)
    y = g.relu(input=g.tensor(name="x", dim=[3]))
    y.set_output(True)
    data = g.serialize()  # no explicit build step needed
    assert y.get_dim() == [3] and len(data) > 0
    bad = hipdnn.pygraph(io_data_type=dt.FLOAT)
    bad.matmul(A=bad.tensor(dim=[2, 3]), B=bad.tensor(dim=[4, 5]), name="mm").set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match="matmul 'mm'"):
        bad.serialize()


def test_bytes_like_inputs_are_accepted():
    g, *_ = conv_bias_relu()
    data = g.serialize()
    for form in (bytearray(data), memoryview(data)):
        g2 = hipdnn.pygraph()
        g2.deserialize(form)
        assert g2.serialize() == data


@pytest.mark.parametrize("bad", ["text", None, 42, [1, 2]])
def test_deserialize_wants_bytes(bad):
    with pytest.raises(TypeError, match="expected bytes"):
        hipdnn.pygraph().deserialize(bad)


def test_empty_and_garbage_bytes_raise():
    for data in (b"", b"\x00", b"garbage!", b"\xff" * 64, bytes(range(256))):
        with pytest.raises(hipdnn.InvalidGraphError, match="deserialize"):
            hipdnn.pygraph().deserialize(data)


def test_every_truncation_raises_or_only_cut_padding():
    g, *_ = conv_bias_relu()
    data = g.serialize()
    accepted = 0
    for n in range(len(data)):
        g2 = hipdnn.pygraph()
        try:
            g2.deserialize(data[:n])
        except hipdnn.InvalidGraphError:
            continue
        # Accepted only if nothing but trailing alignment padding was cut.
        assert g2.serialize() == data, f"truncation to {n} bytes changed the graph"
        accepted += 1
    assert accepted < 8


def test_corrupted_bytes_never_crash_the_process():
    # In a child process, so that a crash shows up as a failure instead of killing pytest.
    r = run_py("""
        import random, hipdnn
        import numpy as np
        dt = hipdnn.data_type
        g = hipdnn.pygraph(io_data_type=dt.FLOAT, name="fuzz")
        x = g.tensor(name="x", dim=[2, 3, 4, 4]); w = g.tensor(name="w", dim=[4, 3, 3, 3])
        y = g.add(a=g.conv_fprop(image=x, weight=w, padding=[1, 1]), b=0.5)
        y.set_output(True)
        data = g.serialize()
        rng = random.Random(1234)
        rejected = built = 0
        for i in range(1500):
            d = bytearray(data)
            for _ in range(rng.randint(1, 6)):
                d[rng.randrange(len(d))] = rng.randrange(256)
            g2 = hipdnn.pygraph()
            try:
                g2.deserialize(bytes(d))
            except hipdnn.InvalidGraphError:
                rejected += 1
                continue
            repr(g2)
            assert g2.serialize() == g2.serialize()
            try:
                g2.build()
                built += 1
            except hipdnn.HipdnnError:
                pass
        print(rejected, built)
    """)
    assert r.returncode == 0, r.stderr
    rejected, built = map(int, r.stdout.split())
    assert rejected > 1000  # most corruptions are caught by verification or validation
