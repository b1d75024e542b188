"""The one table of operations: what the backend exposes, that graph.fbs agrees with it,
the graph format version, and the limits and linear cost of validation."""
import pathlib
import re
import time

import pytest

import hipdnn
from hipdnn import _C, _ops
from chain_graph import reversed_chain_bytes

SCHEMA = pathlib.Path(__file__).resolve().parents[1] / "csrc" / "schema" / "graph.fbs"
# Parameter kind -> the FlatBuffers type graph.fbs must give the field.
FB_TYPE = {_C.OP_ATTR_INT64: "long", _C.OP_ATTR_INT64_LIST: "[long]",
           _C.OP_ATTR_DOUBLE: "double", _C.OP_ATTR_ENUM: "long", _C.OP_ATTR_BOOLEAN: "bool"}


def _schema_tables():
    text = re.sub(r"//[^\n]*", "", SCHEMA.read_text())
    tables = {m.group(1): re.findall(r"(\w+)\s*:\s*(\[?\w+\]?)", m.group(2))
              for m in re.finditer(r"table\s+(\w+)\s*\{([^}]*)\}", text)}
    union = re.search(r"union\s+Op\s*\{([^}]*)\}", text).group(1)
    return tables, [u.strip() for u in union.split(",") if u.strip()]


def test_op_table_lists_every_op_with_ports_and_parameters():
    table = _C.op_table()
    assert [e["kind"] for e in table] == list(range(1, len(table) + 1))
    names = {e["name"] for e in table}
    assert {"conv_fprop", "matmul", "pointwise", "batchnorm_inference"} <= names
    conv = _ops.OPS["conv_fprop"]
    assert [p.name for p in conv.inputs] == ["x", "w"]
    assert [p.name for p in conv.params] == ["pre_padding", "post_padding", "stride",
                                            "dilation", "conv_mode"]
    assert conv.param("conv_mode").default == _C.CROSS_CORRELATION
    assert _ops.OPS["pointwise"].input("b").optional


# Ports an op had when graph format 2 came out (inputs, outputs), where it has gained
# ports since: the schema is append-only, so those follow the parameters
# (hipdnnSdkOpFieldIndex).
FORMAT2_PORTS = {"pointwise": (2, 1)}


def schema_fields(entry):
    """The fields graph.fbs must give an op table entry, in order."""
    ni, no = FORMAT2_PORTS.get(entry["name"], (len(entry["inputs"]), len(entry["outputs"])))
    ins, outs = entry["inputs"], entry["outputs"]
    ports = lambda ps: [(p[0], "long") for p in ps]  # noqa: E731
    return (ports(ins[:ni]) + ports(outs[:no]) + [(a[0], FB_TYPE[a[3]]) for a in entry["attrs"]]
            + ports(ins[ni:]) + ports(outs[no:]))


def test_schema_has_one_table_per_op_in_kind_order_with_fields_in_table_order():
    tables, union = _schema_tables()
    table = _C.op_table()
    assert len(union) == len(table), "graph.fbs's union Op and the op table differ in length"
    for member, entry in zip(union, table):
        assert tables[member] == schema_fields(entry), \
            f"graph.fbs table {member} does not match op {entry['name']}"


def _graph_bytes():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[2, 3])
    y = g.relu(input=x)
    y.set_output(True)
    return g.serialize()


def _set_format_version(data: bytes, version: int) -> bytes:
    """Rewrites Graph.format_version (field 3 of the root table) in place."""
    buf = bytearray(data)
    root = int.from_bytes(buf[0:4], "little")
    vtable = root - int.from_bytes(buf[root:root + 4], "little", signed=True)
    off = int.from_bytes(buf[vtable + 4 + 2 * 3:vtable + 6 + 2 * 3], "little")
    assert off, "format_version is written"
    assert int.from_bytes(buf[root + off:root + off + 4], "little") == _C.GRAPH_FORMAT_VERSION
    buf[root + off:root + off + 4] = version.to_bytes(4, "little")
    return bytes(buf)


def test_bytes_of_another_format_version_are_refused_naming_both():
    data = _graph_bytes()
    hipdnn.pygraph().deserialize(data)  # the original reads back
    for version in (1, _C.GRAPH_FORMAT_VERSION + 1):
        with pytest.raises(hipdnn.InvalidGraphError) as e:
            hipdnn.pygraph().deserialize(_set_format_version(data, version))
        assert f"format version {version}" in str(e.value)
        assert f"version {_C.GRAPH_FORMAT_VERSION}" in str(e.value)


def test_conv_parameters_beyond_2_pow_40_are_refused_when_set():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[1, 1, 8, 8])
    w = g.tensor(name="w", dim=[1, 1, 3, 3])
    y = g.conv_fprop(image=x, weight=w, padding=[1 << 62, 1], name="huge")
    y.set_output(True)
    with pytest.raises(hipdnn.InvalidGraphError, match="pre_padding"):
        g.validate()


def test_validation_of_a_long_reversed_chain_does_not_hang():
    # A guard against quadratic or cubic validation (10 000 nodes took minutes), not a
    # speed claim: linear validation does this in well under a second.
    data = reversed_chain_bytes(10000)
    start = time.perf_counter()
    g = _C.deserialize(data)
    assert time.perf_counter() - start < 20
    ops = g.get(_C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR)
    assert len(ops) == 10000
