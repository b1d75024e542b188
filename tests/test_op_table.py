"""The one table of operations: what the backend exposes, that graph.fbs agrees with it,
the graph format version, and the limits and linear cost of validation."""
import pathlib
import struct
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
    members = [re.fullmatch(r"(\w+)\s*=\s*(\d+)", u.strip()) for u in union.split(",") if u.strip()]
    assert all(members), "graph.fbs's union Op gives each member its op kind"
    return tables, [(m.group(1), int(m.group(2))) for m in members]


def test_op_table_lists_every_op_with_ports_and_parameters():
    table = _C.op_table()
    kinds = [e["kind"] for e in table]
    assert kinds == sorted(set(kinds)) and kinds[0] >= 1  # ascending; reserved kinds skipped
    names = {e["name"] for e in table}
    assert {"conv_fprop", "matmul", "pointwise", "batchnorm_inference"} <= names
    conv = _ops.OPS["conv_fprop"]
    assert [p.name for p in conv.inputs] == ["x", "w"]
    assert [p.name for p in conv.params] == ["pre_padding", "post_padding", "stride",
                                            "dilation", "conv_mode"]
    assert conv.param("conv_mode").default == _C.CROSS_CORRELATION
    assert _ops.OPS["pointwise"].input("b").optional


def test_ports_carry_cudnn_frontend_keywords_and_suffixes():
    """pygraph names ports and unnamed tensors from the table alone (issue 23)."""
    for info in _ops.OPS.values():
        for p in info.inputs + info.outputs:
            assert p.frontend_name and isinstance(p.frontend_name, str)
            assert p.frontend_suffix is None or isinstance(p.frontend_suffix, str)
    conv = _ops.OPS["conv_fprop"]
    assert [(p.frontend_name, p.frontend_suffix) for p in conv.inputs + conv.outputs] == \
        [("image", None), ("weight", None), ("y", "Y")]
    assert _ops.OPS["reduction"].input("x").frontend_name == "input"
    from hipdnn._pygraph.nodes import _NAMES_INPUTS
    assert _NAMES_INPUTS == {"matmul", "pointwise"}


# Ports an op had when graph format 2 came out (inputs, outputs), where it has gained
# ports since: the schema is append-only, so those follow the parameters
# (hipdnnSdkOpFieldIndex).
FORMAT2_PORTS = {"pointwise": (2, 1), "sdpa": (7, 2), "sdpa_backward": (10, 3)}


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
    for (member, kind), entry in zip(union, table):
        assert kind == entry["kind"], f"graph.fbs's {member} has tag {kind}, op {entry['name']} kind {entry['kind']}"
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
    for version in (1, _C.GRAPH_FORMAT_VERSION_ATTENTION_EXT + 1):
        with pytest.raises(hipdnn.InvalidGraphError) as e:
            hipdnn.pygraph().deserialize(_set_format_version(data, version))
        assert f"format version {version}" in str(e.value)
        assert f"versions {_C.GRAPH_FORMAT_VERSION} and 3" in str(e.value)


def _format_version(data: bytes) -> int:
    buf = bytearray(data)
    root = int.from_bytes(buf[0:4], "little")
    vtable = root - int.from_bytes(buf[root:root + 4], "little", signed=True)
    off = int.from_bytes(buf[vtable + 4 + 2 * 3:vtable + 6 + 2 * 3], "little")
    return int.from_bytes(buf[root + off:root + off + 4], "little")


@pytest.mark.parametrize("feature", [None, "alibi", "paged", "dropout", "dropout0",
                                     "rng_dump"])
def test_attention_features_since_version_2_write_version_3(feature):
    """A graph using ALiBi, paged K / V or dropout (a probability, or only its seed and
    offset ports, or rng_dump) is written as version 3, which a reader of version 2 alone
    refuses by name (rather than running it without the feature); without, version 2
    still."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    q = g.tensor(name="q", dim=[1, 2, 4, 8])
    kw = {}
    if feature == "paged":
        t = g.tensor(name="table", dim=[1, 1, 1, 1], data_type=hipdnn.data_type.INT32)
        kw = dict(paged_attention_k_table=t, paged_attention_v_table=t,
                  paged_attention_max_seq_len_kv=4)
    if feature and feature.startswith(("dropout", "rng")):
        w = g.tensor(name="word", dim=[1, 1, 1, 1], data_type=hipdnn.data_type.INT64)
        kw = dict(dropout=(0.0 if feature == "dropout0" else 0.5, w, w))
        if feature == "rng_dump":
            kw["rng_dump"] = g.tensor(name="dump", dim=[1, 2, 4, 4],
                                      data_type=hipdnn.data_type.FLOAT)
    o, _ = g.sdpa(q, q, q, generate_stats=False, use_alibi_mask=feature == "alibi",
                  use_causal_mask=True, **kw)
    o.set_output(True)
    g.validate()
    g.build_operation_graph()
    data = g.serialize()
    want = _C.GRAPH_FORMAT_VERSION_ATTENTION_EXT if feature else _C.GRAPH_FORMAT_VERSION
    assert _format_version(data) == want
    back = hipdnn.pygraph()
    back.deserialize(data)
    assert back.serialize() == data


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


# ---- pointwise ports: cuDNN backend's, each mode its own --------------------------------

def _tensor(uid, virtual=False, dtype=None):
    t = _C.Descriptor(_C.BACKEND_TENSOR_DESCRIPTOR)
    t.set(_C.ATTR_TENSOR_UNIQUE_ID, _C.TYPE_INT64, uid)
    t.set(_C.ATTR_TENSOR_DATA_TYPE, _C.TYPE_DATA_TYPE, _C.DATA_FLOAT if dtype is None else dtype)
    t.set(_C.ATTR_TENSOR_DIMENSIONS, _C.TYPE_INT64, [2, 3])
    t.set(_C.ATTR_TENSOR_IS_VIRTUAL, _C.TYPE_BOOLEAN, virtual)
    t.finalize()
    return t


def _pointwise(mode, ports):
    """An OPERATION_POINTWISE descriptor with `ports` ({attribute: tensor}) set."""
    d = _C.Descriptor(_C.BACKEND_OPERATION_POINTWISE_DESCRIPTOR)
    d.set(_C.ATTR_POINTWISE_MODE, _C.TYPE_POINTWISE_MODE_EXT, mode)
    for attr, t in ports.items():
        d.set(attr, _C.TYPE_BACKEND_DESCRIPTOR, t)
    return d


X, B, Y = (_C.ATTR_OPERATION_POINTWISE_XDESC, _C.ATTR_OPERATION_POINTWISE_BDESC,
           _C.ATTR_OPERATION_POINTWISE_YDESC)
DX, DY, T = (_C.ATTR_OPERATION_POINTWISE_DXDESC, _C.ATTR_OPERATION_POINTWISE_DYDESC,
             _C.ATTR_OPERATION_POINTWISE_TDESC)


def test_pointwise_ports_carry_cudnns_attribute_numbers():
    pw = _ops.OPS["pointwise"]
    assert [(p.name, p.attr) for p in pw.inputs] == [("x", 10751), ("b", 10752), ("dy", 10757),
                                                    ("t", 10758)]
    assert [(p.name, p.attr) for p in pw.outputs] == [("y", 10753), ("dx", 10756)]
    assert [(p.name, p.attr) for p in pw.params[4:]] == [
        ("elu_alpha", 10006), ("softplus_beta", 10007), ("swish_beta", 10008), ("axis", 10009)]


@pytest.mark.parametrize("mode,ports,message", [
    (_C.POINTWISE_RELU_BWD, {X: 1, DY: 2, Y: 3}, "output 'y' is set but relu_backward writes 'dx'"),
    (_C.POINTWISE_RELU_BWD, {X: 1, B: 2, DX: 3}, "input 'b' is set but relu_backward does not"),
    (_C.POINTWISE_RELU_BWD, {X: 1, DX: 3}, "input 'dy' is not set"),
    (_C.POINTWISE_RELU_BWD, {X: 1, DY: 2}, "output 'dx' is not set"),
    (_C.POINTWISE_ADD, {X: 1, Y: 3}, "input 'b' is not set"),
    (_C.POINTWISE_TANH_FWD, {X: 1, B: 2, Y: 3}, "input 'b' is set but tanh does not use it"),
    (_C.POINTWISE_ADD, {X: 1, B: 2, DX: 3}, "output 'y' is not set"),
    (_C.POINTWISE_BINARY_SELECT, {X: 1, B: 2, Y: 3}, "input 't' is not set"),
    (_C.POINTWISE_MUL, {X: 1, B: 2, T: 4, Y: 3}, "input 't' is set but mul does not use it"),
])
def test_each_pointwise_mode_takes_its_own_ports(mode, ports, message):
    d = _pointwise(mode, {a: _tensor(u) for a, u in ports.items()})
    with pytest.raises(hipdnn.HipdnnError, match=message):
        d.finalize()


def test_a_backward_mode_reads_x_and_dy_and_writes_dx():
    x, dy, dx = _tensor(1), _tensor(2), _tensor(3)
    d = _pointwise(_C.POINTWISE_SIGMOID_BWD, {X: x, DY: dy, DX: dx})
    d.finalize()
    g = _C.Descriptor(_C.BACKEND_OPERATIONGRAPH_DESCRIPTOR)
    g.set(_C.ATTR_OPERATIONGRAPH_HANDLE, _C.TYPE_HANDLE, hipdnn.default_handle())
    g.set(_C.ATTR_OPERATIONGRAPH_OPS, _C.TYPE_BACKEND_DESCRIPTOR, [d])
    g.finalize()
    assert list(g.get(_C.ATTR_OPERATIONGRAPH_OUTPUT_UIDS_EXT, _C.TYPE_INT64)) == [3]


def _late_graph():
    """A graph whose pointwise nodes use the ports and parameters added after format 2."""
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT, name="late")
    x = g.tensor(name="x", dim=[2, 3])
    dy = g.tensor(name="dy", dim=[2, 3])
    m = g.tensor(name="m", dim=[2, 3], data_type=hipdnn.data_type.BOOLEAN)
    g.swish_backward(loss=dy, input=x, swish_beta=1.5, name="sb").set_output(True)
    g.binary_select(input0=x, input1=dy, mask=m, name="sel").set_output(True)
    g.gen_index(input=x, axis=1, name="gi").set_output(True)
    g.elu(input=x, elu_alpha=0.25, name="e").set_output(True)
    g.softplus(input=x, softplus_beta=2.0, name="sp").set_output(True)
    return g


def test_late_ports_and_parameters_sit_in_the_fields_graph_fbs_gives_them():
    from test_hostile_inputs import FlatBytes
    tables, _ = _schema_tables()
    fields = [name for name, _type in tables["Pointwise"]]
    g = _late_graph()
    fb = FlatBytes(g.serialize())
    uids = {t.get_name(): t.get_uid() for t in g.tensors()}
    nodes = {}
    _, n = fb.vector(fb.root(), 2)
    for i in range(n):
        op = fb.op(i)
        nodes[fb.u32(fb.field(op, fields.index("mode")))] = op
    def long_at(op, name):
        return struct.unpack_from("<q", fb.b, fb.field(op, fields.index(name)))[0]

    def double_at(op, name):
        return struct.unpack_from("<d", fb.b, fb.field(op, fields.index(name)))[0]

    sb = nodes[_C.POINTWISE_SWISH_BWD]
    assert long_at(sb, "x") == uids["x"] and long_at(sb, "dy") == uids["dy"]
    assert long_at(sb, "dx") == uids["sb::OUT_0"]
    assert fb.field(sb, fields.index("y")) is None and fb.field(sb, fields.index("b")) is None
    assert double_at(sb, "swish_beta") == 1.5
    sel = nodes[_C.POINTWISE_BINARY_SELECT]
    assert [long_at(sel, p) for p in ("x", "b", "t", "y")] == \
        [uids["x"], uids["dy"], uids["m"], uids["sel::OUT_0"]]
    assert long_at(nodes[_C.POINTWISE_GEN_INDEX], "axis") == 1
    assert double_at(nodes[_C.POINTWISE_ELU_FWD], "elu_alpha") == 0.25
    assert double_at(nodes[_C.POINTWISE_SOFTPLUS_FWD], "softplus_beta") == 2.0


def test_late_ports_and_parameters_round_trip():
    g = _late_graph()
    data = g.serialize()
    h = hipdnn.pygraph()
    h.deserialize(data)
    assert h.serialize() == data
    listing = repr(h)
    assert "swish_backward 'sb': input=x" in listing and "loss=dy" in listing
    assert "-> dx=sb::OUT_0" in listing
    assert "binary_select 'sel': input0=x" in listing and "mask=m" in listing


def test_bytes_written_before_the_later_pointwise_fields_still_read():
    # tests/data/pointwise_format2_first_modes.hdng: a graph of the first twelve modes as
    # format 2 wrote it before dy, t, dx and the parameters past relu's were appended
    data = (pathlib.Path(__file__).parent / "data" / "pointwise_format2_first_modes.hdng")
    g = hipdnn.pygraph()
    g.deserialize(data.read_bytes())
    assert [line.split("'")[0].strip() for line in repr(g).splitlines()[1:]] == \
        ["add", "sub", "mul", "div", "max", "min", "relu", "sigmoid", "tanh", "gelu", "identity"]
    g.build([hipdnn.heur_mode.A])
    # its bytes now carry the later parameters at their defaults, and read back the same
    h = hipdnn.pygraph()
    h.deserialize(g.serialize())
    assert h.serialize() == g.serialize()
