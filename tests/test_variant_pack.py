"""The compiled variant pack (hipdnn._C.VariantPack): read once from a plan at
build_plans() time, it is the only thing execute() checks arrays and workspaces against, so
no Python call can make an engine read or write outside the memory it was given.

Hostile calls (arrays or workspaces far smaller than the plan's) run in a child
interpreter: a missing check would overflow the heap there and show up as a signal, not as
a crashed test run.  Only host plans are tested: a device-memory plan cannot be made here.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn
from hipdnn import _C

dt = hipdnn.data_type

# ---- hostile calls, in a child interpreter ------------------------------------------

CHILD = r'''
import json
import numpy as np
import hipdnn
from hipdnn import _C

dt = hipdnn.data_type
N = 1024
g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                   compute_data_type=dt.FLOAT, name="big")
a = g.tensor(name="a", dim=[N, N], uid=1)
b = g.tensor(name="b", dim=[N, N], uid=2)
c = g.relu(input=g.matmul(A=a, B=b, name="mm"), name="act")
c.set_output(True).set_name("c").set_uid(3)
g.build()
pack = g._plans[0].pack
h = g.handle
need = g.get_workspace_size()
small = lambda: np.ones((2, 2), np.float32)
big = lambda: np.ones((N, N), np.float32)
out = lambda: np.empty((N, N), np.float32)


def readonly(x):
    x.flags.writeable = False
    return x


CASES = {
    "pygraph_2x2": lambda: g.execute({a: small(), b: small(), c: small()}),
    "pack_list_2x2": lambda: pack.execute(h, [small(), small(), small()]),
    "pack_dict_2x2": lambda: pack.execute(h, {1: small(), 2: small(), 3: small()}),
    "pack_small_output": lambda: pack.execute(h, [big(), big(), small()]),
    "pack_flat_input": lambda: pack.execute(h, [np.ones(N * N, np.float32), big(), out()]),
    "pack_wrong_dtype": lambda: pack.execute(h, [big().astype(np.float16), big(), out()]),
    "pygraph_short_workspace": lambda: g.execute({a: big(), b: big(), c: out()},
                                                 np.empty(need - 1, np.uint8)),
    "pack_tiny_workspace": lambda: pack.execute(h, [big(), big(), out()], np.empty(8, np.uint8)),
    "pack_readonly_workspace": lambda: pack.execute(h, [big(), big(), out()], bytes(need)),
    "pygraph_readonly_output": lambda: g.execute({a: big(), b: big(), c: readonly(out())}),
    "pack_readonly_output": lambda: pack.execute(h, [big(), big(), readonly(out())]),
    "pygraph_every_other_column": lambda: g.execute(
        {a: np.ones((N, 2 * N), np.float32)[:, ::2], b: big(), c: out()}),
    "pack_column_major": lambda: pack.execute(h, [np.asfortranarray(big()), big(), out()]),
    "pack_too_few_arrays": lambda: pack.execute(h, [big(), big()]),
    "pack_unknown_uid": lambda: pack.execute(h, {1: big(), 2: big(), 3: out(), 99: big()}),
    "pack_missing_uid": lambda: pack.execute(h, {1: big(), 2: big()}),
    "pack_none_array": lambda: pack.execute(h, [big(), None, out()]),
    "pack_not_arrays": lambda: pack.execute(h, 42),
    "pack_string_keys": lambda: pack.execute(h, {"a": big()}),
}

for name, call in CASES.items():
    try:
        call()
        result = {"type": None, "msg": ""}
    except Exception as e:
        result = {"type": type(e).__name__, "msg": str(e)}
    result["case"] = name
    print(json.dumps(result), flush=True)
print(json.dumps({"case": "need", "msg": str(need)}), flush=True)
'''


@pytest.fixture(scope="module")
def hostile():
    """Runs every hostile call in one child; returns {case: (exception name, message)}."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(hipdnn.__file__).resolve().parents[1]) + os.pathsep + \
        env.get("PYTHONPATH", "")
    env.setdefault("HIPDNN_LOG_LEVEL", "off")
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD)], env=env,
                       capture_output=True, text=True, timeout=300)
    # A signal (heap overflow caught by the allocator, SIGSEGV) gives a negative code.
    assert r.returncode == 0, f"child exited with {r.returncode}\n{r.stdout}\n{r.stderr}"
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return {row["case"]: (row.get("type"), row["msg"]) for row in rows}


def raised(hostile, case, exc_name):
    assert case in hostile, f"the child never reported {case}"
    got, msg = hostile[case]
    assert got == exc_name, f"{case}: expected {exc_name}, got {got}: {msg}"
    return msg


A_2X2 = ("variant pack: tensor 'a' (uid 1) expects float32 [1024, 1024], "
         "got float32 [2, 2]")


def test_plan_of_a_1024x1024_matmul_refuses_2x2_arrays(hostile):
    assert raised(hostile, "pygraph_2x2", "ValueError") == A_2X2


def test_pack_in_pack_order_refuses_2x2_arrays(hostile):
    assert raised(hostile, "pack_list_2x2", "ValueError") == A_2X2


def test_pack_given_a_dict_refuses_2x2_arrays(hostile):
    assert raised(hostile, "pack_dict_2x2", "ValueError") == A_2X2


def test_small_output_array_names_the_output(hostile):
    assert raised(hostile, "pack_small_output", "ValueError") == (
        "variant pack: tensor 'c' (uid 3) expects float32 [1024, 1024], got float32 [2, 2]")


def test_same_size_but_other_shape_is_refused(hostile):
    assert raised(hostile, "pack_flat_input", "ValueError").endswith("got float32 [1048576]")


def test_wrong_dtype_is_refused(hostile):
    assert raised(hostile, "pack_wrong_dtype", "ValueError") == (
        "variant pack: tensor 'a' (uid 1) expects float32 [1024, 1024], "
        "got float16 [1024, 1024]")


def test_too_small_workspace_names_both_sizes(hostile):
    need = int(hostile["need"][1])
    assert need > 0  # the virtual matmul result lives in the workspace
    assert raised(hostile, "pygraph_short_workspace", "ValueError") == (
        f"execute: workspace has {need - 1} bytes but the plan needs {need}")
    assert raised(hostile, "pack_tiny_workspace", "ValueError") == (
        f"execute: workspace has 8 bytes but the plan needs {need}")


def test_read_only_workspace_is_refused(hostile):
    assert "workspace must be a writable" in raised(hostile, "pack_readonly_workspace",
                                                    "ValueError")


def test_read_only_output_array_is_refused(hostile):
    expected = "variant pack: tensor 'c' (uid 3) is an output but its array is read-only"
    assert raised(hostile, "pygraph_readonly_output", "ValueError") == expected
    assert raised(hostile, "pack_readonly_output", "ValueError") == expected


def test_non_contiguous_input_with_other_strides_is_refused(hostile):
    assert raised(hostile, "pygraph_every_other_column", "ValueError") == (
        "variant pack: tensor 'a' (uid 1) expects strides [1024, 1] (in elements), "
        "got [2048, 2]")
    assert raised(hostile, "pack_column_major", "ValueError") == (
        "variant pack: tensor 'a' (uid 1) expects strides [1024, 1] (in elements), "
        "got [1, 1024]")


def test_pack_argument_mistakes_are_clean_exceptions(hostile):
    assert raised(hostile, "pack_too_few_arrays", "ValueError").startswith(
        "variant pack: 2 arrays for 3 tensors")
    assert "uid 99 is not a tensor" in raised(hostile, "pack_unknown_uid", "ValueError")
    assert raised(hostile, "pack_missing_uid", "ValueError") == (
        "variant pack: no array for tensor 'c' (uid 3)")
    assert raised(hostile, "pack_none_array", "TypeError").startswith(
        "variant pack: tensor 'b' (uid 2) needs an array with the buffer protocol")
    assert "expected a list or tuple" in raised(hostile, "pack_not_arrays", "TypeError")
    assert "keys must be uids" in raised(hostile, "pack_string_keys", "TypeError")


# ---- what the pack holds, and that it runs only its own plan ---------------------------

def relu_graph(dims, name):
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name=name)
    x = g.tensor(name="x", dim=dims)
    y = g.relu(input=x, name="act")
    y.set_output(True).set_name("y")
    g.build()
    return g, x, y


def test_pack_is_read_from_the_plan():
    g = hipdnn.pygraph(io_data_type=dt.HALF, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[2, 3, 4], stride=[1, 2, 6], uid=7)
    hidden = g.relu(input=x, name="hidden")
    y = g.tanh(input=hidden)
    y.set_output(True).set_name("y")
    g.build()
    plan = g._plans[0][0]
    pack = _C.VariantPack(plan)
    assert pack.plan is plan
    assert pack.memory_space == _C.MEMORY_HOST
    assert pack.workspace_size == g.get_workspace_size() > 0  # 'hidden' is in the workspace
    by_uid = {t[0]: t for t in pack.tensors}
    assert set(pack.uids) == set(by_uid) == {7, y.get_uid()}  # no virtual tensor
    assert by_uid[7] == (7, "x", _C.DATA_HALF, (2, 3, 4), (1, 2, 6), False)
    assert by_uid[y.get_uid()][1:] == ("y", _C.DATA_HALF, (2, 3, 4), tuple(y.get_stride()),
                                       True)


def test_pack_runs_only_the_plan_it_was_compiled_from():
    g1, x1, y1 = relu_graph([4], "four")
    g2, x2, y2 = relu_graph([3, 5], "fifteen")
    pack1 = _C.VariantPack(g1._plans[0][0])
    x2a, y2a = np.ones((3, 5), np.float32), np.zeros((3, 5), np.float32)
    with pytest.raises(ValueError, match=r"tensor 'x' \(uid \d+\) expects float32 \[4\], "
                                         r"got float32 \[3, 5\]"):
        pack1.execute(g1.handle, [x2a, y2a])
    with pytest.raises(TypeError, match="unexpected keyword argument 'plan'"):
        pack1.execute(g1.handle, [np.ones(4, np.float32), np.zeros(4, np.float32)],
                      plan=g2._plans[0][0])
    g2.execute({x2: x2a, y2: y2a})
    assert np.array_equal(y2a, x2a)


def test_pack_is_made_from_finalized_execution_plans_only():
    g, _, _ = relu_graph([4], "g")
    with pytest.raises(TypeError, match="got a OPERATIONGRAPH Descriptor"):
        _C.VariantPack(g._opgraph)
    with pytest.raises(TypeError, match="plan must be an EXECUTION_PLAN Descriptor, got int"):
        _C.VariantPack(3)
    with pytest.raises(ValueError, match="not finalized"):
        _C.VariantPack(_C.Descriptor(_C.BACKEND_EXECUTION_PLAN_DESCRIPTOR))


def test_pack_keeps_its_plan_and_handle_alive():
    g, x, y = relu_graph([4], "g")
    pack, h = g._plans[0].pack, g.handle
    del g, x, y
    xa, ya = np.array([-1, 2, -3, 4], np.float32), np.zeros(4, np.float32)
    pack.execute(h, [xa, ya])
    assert list(ya) == [0, 2, 0, 4]


def test_host_plan_without_workspace_allocates_its_own():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT)
    a, b = g.tensor(name="a", dim=[3, 4]), g.tensor(name="b", dim=[4, 2])
    c = g.relu(input=g.matmul(A=a, B=b))
    c.set_output(True)
    g.build()
    assert g.get_workspace_size() > 0
    aa = np.arange(12, dtype=np.float32).reshape(3, 4) - 6
    ba = np.arange(8, dtype=np.float32).reshape(4, 2) - 3
    ca = np.full((3, 2), np.nan, np.float32)
    g.execute({a: aa, b: ba, c: ca})
    assert np.array_equal(ca, np.maximum(aa @ ba, 0))


def test_execute_argument_checks():
    g, x, y = relu_graph([4], "g")
    pack = g._plans[0].pack
    arrays = [np.ones(4, np.float32), np.zeros(4, np.float32)]
    with pytest.raises(TypeError, match="handle must be a hipdnn._C.Handle, got NoneType"):
        pack.execute(None, arrays)
    with pytest.raises(TypeError, match="missing required argument 'arrays'"):
        pack.execute(g.handle)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        pack.execute(handle=g.handle, arrays=arrays, bogus=1)
    with pytest.raises(TypeError, match="multiple values for argument 'handle'"):
        pack.execute(g.handle, arrays, handle=g.handle)
    with pytest.raises(TypeError, match="keys must be uids"):
        pack.execute(g.handle, {True: arrays[0]})
    pack.execute(handle=g.handle, arrays=tuple(arrays), workspace=None)
    assert list(arrays[1]) == [1, 1, 1, 1]


def test_old_spec_tuple_execute_is_gone():
    assert not hasattr(_C, "execute")
