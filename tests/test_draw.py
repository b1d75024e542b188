"""Pictures of graphs and the kernel-fusion report.

to_dot() is read back by a small parser of the DOT it writes (statements, attributes,
clusters), so each test checks the structure: every node and tensor drawn with its label,
virtual tensors and by-value scalars drawn apart from real ones, edges in dataflow order,
and once built, the engine's kernels as clusters exactly as get_kernel_groups() reports
them.  _repr_svg_ goes through graphviz `dot` (Debian's graphviz: `make deps`) and gives
None without it; `python -m hipdnn draw` is run on good and bad files.  The HIP engine's
report is checked on its host emulation (build/tests/emulated), in a subprocess that loads
it; a plugin without the optional GetKernelInfo, and plugins whose reports break the
ABI's rules, are compiled here from the C below.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hipdnn

dt = hipdnn.data_type
REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"
PACKAGE = Path(hipdnn.__file__).resolve().parent
REFERENCE = PACKAGE / "lib" / "hipdnn_plugins" / "engines" / "libhipdnn_reference_cpu.so"


# ---- reading DOT back ------------------------------------------------------------------------

ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^,\]\s]+)')
STMT = re.compile(r"^\s*(\w+) \[(.*)\];$")
EDGE = re.compile(r"^\s*(\w+) -> (\w+) \[(.*)\];$")


def _unquote(v):
    if v.startswith('"'):
        return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), v[1:-1])
    return v


class Dot:
    """Nodes {id: attrs}, edges [(src, dst, attrs)] in order, clusters {id: (attrs, [ids])}
    and the graph's own attributes, from to_dot()'s output."""

    def __init__(self, source):
        self.source = source
        self.nodes, self.edges, self.clusters, self.graph = {}, [], {}, {}
        lines = source.splitlines()
        assert lines[0] == "digraph hipdnn {" and lines[-1] == "}", source
        cluster = None
        for line in lines[1:-1]:
            s = line.strip()
            if s.startswith("subgraph cluster_"):
                cluster = s.split()[1]
                self.clusters[cluster] = ({}, [])
                continue
            if s == "}":
                cluster = None
                continue
            if s.startswith("//"):
                continue
            m = EDGE.match(line)
            if m:
                self.edges.append((m.group(1), m.group(2), self._attrs(m.group(3))))
                continue
            m = STMT.match(line)
            if m and m.group(1) in ("graph", "node", "edge"):
                if m.group(1) == "graph":
                    self.graph = self._attrs(m.group(2))
                continue
            if m:
                self.nodes[m.group(1)] = self._attrs(m.group(2))
                if cluster:
                    self.clusters[cluster][1].append(m.group(1))
                continue
            assert cluster and s.startswith("label="), f"unparsed DOT line: {line!r}"
            self.clusters[cluster][0].update(self._attrs(s.rstrip(";").replace("; ", ", ")))

    @staticmethod
    def _attrs(text):
        return {k: _unquote(v) for k, v in ATTR.findall(text)}

    def ops(self):
        return {k: v for k, v in self.nodes.items() if v.get("class") == "op"}

    def tensors(self):
        return {k: v for k, v in self.nodes.items() if v.get("class", "").startswith("tensor")}

    def by_label_line(self, first):
        found = [k for k, v in self.nodes.items() if v["label"].split("\n")[0] == first]
        assert len(found) == 1, (first, found)
        return found[0]


def conv_chain(name="cbr"):
    """conv -> add bias -> mul by a by-value 0.5 -> relu; unbuilt."""
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                       compute_data_type=dt.FLOAT, name=name)
    x = g.tensor(name="x", dim=[2, 3, 6, 6])
    w = g.tensor(name="w", dim=[4, 3, 3, 3])
    b = g.tensor(name="b", dim=[1, 4, 1, 1])
    conv = g.conv_fprop(image=x, weight=w, padding=[1, 1], name="conv")
    y = g.relu(input=g.mul(a=g.add(a=conv, b=b, name="bias"), b=0.5, name="scale"), name="act")
    y.set_output(True).set_name("y")
    return g


# ---- the DOT source ---------------------------------------------------------------------------


def test_every_node_is_drawn_with_its_op_mode_and_name():
    d = Dot(conv_chain().to_dot())
    labels = sorted(v["label"] for v in d.ops().values())
    assert labels == sorted(["conv_fprop\n'conv'", "pointwise ADD\n'bias'",
                             "pointwise MUL\n'scale'", "pointwise RELU_FWD\n'act'"])


def test_every_tensor_is_drawn_with_name_dims_and_data_type_once_validated():
    g = conv_chain()
    g.validate()
    d = Dot(g.to_dot())
    labels = {v["label"] for v in d.tensors().values()}
    assert len(d.tensors()) == 8  # x, w, b, the scalar, three intermediates and y
    for want in ("x\n[2, 3, 6, 6] float32", "w\n[4, 3, 3, 3] float32",
                 "b\n[1, 4, 1, 1] float32", "conv::Y\n[2, 4, 6, 6] float32",
                 "bias::OUT_0\n[2, 4, 6, 6] float32", "scale::OUT_0\n[2, 4, 6, 6] float32",
                 "y\n[2, 4, 6, 6] float32", "scale::IN_1 = 0.5\nfloat32"):
        assert want in labels, (want, labels)


def test_before_validation_unknown_dims_are_marked():
    d = Dot(conv_chain().to_dot())
    assert d.nodes[d.by_label_line("conv::Y")]["label"] == "conv::Y\n[?] float32"
    assert "not built" in d.graph["label"]


def test_virtual_scalar_and_real_tensors_are_drawn_apart():
    g = conv_chain()
    g.validate()
    d = Dot(g.to_dot())
    for k, v in d.tensors().items():
        name = v["label"].split("\n")[0]
        if name.startswith("scale::IN_1"):
            assert v["class"] == "tensor scalar" and v["shape"] == "ellipse"
            assert "dotted" in v["style"]
        elif "::" in name:  # op results left unnamed: virtual
            assert v["class"] == "tensor virtual" and "dashed" in v["style"]
            assert "filled" not in v["style"]
        else:
            assert v["class"] == "tensor real" and "filled" in v["style"]
            assert "dashed" not in v["style"]
    # graph outputs are real tensors with a heavy border; inputs are not
    assert d.nodes[d.by_label_line("y")].get("penwidth") == "2"
    assert "penwidth" not in d.nodes[d.by_label_line("x")]


def test_strides_are_shown_for_non_packed_layouts():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[2, 3, 4, 4], stride=[48, 1, 12, 3])  # channels last
    g.relu(x, name="r").set_output(True)
    d = Dot(g.to_dot())
    assert d.nodes[d.by_label_line("x")]["label"] == \
        "x\n[2, 3, 4, 4] float32\nstrides [48, 1, 12, 3]"


def test_edges_are_in_dataflow_order_and_name_their_ports():
    g = conv_chain()
    g.validate()
    d = Dot(g.to_dot())
    seen_written = set()
    for src, dst, attrs in d.edges:
        if src.startswith("t"):  # a read: whoever writes the tensor came before
            writers = [s for s, t, _a in d.edges if t == src]
            assert all(w in seen_written for w in writers), (src, dst)
        else:
            seen_written.add(src)
    conv, bias = d.by_label_line("conv_fprop"), d.by_label_line("pointwise ADD")
    x, w = d.by_label_line("x"), d.by_label_line("w")
    assert (x, conv, {"label": "image"}) in d.edges
    assert (w, conv, {"label": "weight"}) in d.edges
    ports = sorted(a["label"] for s, t, a in d.edges if t == bias)
    assert ports == ["a", "b"]
    # every tensor is connected, every op reads and writes something
    for k in d.tensors():
        assert any(k in (s, t) for s, t, _a in d.edges), k
    for k in d.ops():
        assert any(s == k for s, _t, _a in d.edges) and any(t == k for _s, t, _a in d.edges)


def test_names_with_quotes_and_backslashes_stay_one_label():
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
    x = g.tensor(name='x "in"\\n', dim=[4])
    g.relu(x, name='say "hi"').set_output(True)
    d = Dot(g.to_dot())
    assert d.nodes[d.by_label_line("pointwise RELU_FWD")]["label"] == \
        "pointwise RELU_FWD\n'say \"hi\"'"
    assert any(v["label"].startswith('x "in"\\n\n[4]') for v in d.tensors().values())


# ---- built: the engine and its kernels ---------------------------------------------------------


def test_kernel_groups_of_the_reference_engine():
    g = conv_chain()
    g.build([hipdnn.heur_mode.A])
    groups = g.get_kernel_groups()
    assert [(k.kernel, k.nodes, k.node_indices) for k in groups] == [
        ("conv_fprop", ["conv"], [0]), ("pointwise", ["bias", "scale", "act"], [1, 2, 3])]
    assert groups[1].detail == "3 pointwise nodes fused: one pass over blocks"
    assert groups[0].detail == ""


def test_a_result_the_graph_outputs_ends_a_fused_run():
    # bias's result is an output too: the reference engine writes it, so the run is cut
    g = conv_chain()
    for t in g.tensors():
        if t.get_name() == "bias::OUT_0":
            t.set_output(True)
    g.build([hipdnn.heur_mode.A])
    assert [(k.kernel, k.nodes) for k in g.get_kernel_groups()] == [
        ("conv_fprop", ["conv"]), ("pointwise", ["bias"]), ("pointwise", ["scale", "act"])]


def test_kernel_groups_need_a_built_plan():
    g = conv_chain()
    with pytest.raises(hipdnn.HipdnnError, match="get_kernel_groups.. needs build_plans"):
        g.get_kernel_groups()


def test_node_indices_follow_the_graph_order_not_the_engines():
    # Added as conv, relu(conv), reduction(x), add(relu, reduction): the backend sorts the
    # nodes for the engine as conv, reduction, relu, add, and the reference engine fuses
    # relu and add.  The report must name nodes in the graph's own order.
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT,
                       intermediate_data_type=dt.FLOAT)
    x = g.tensor(name="x", dim=[1, 4, 4, 4])
    w = g.tensor(name="w", dim=[4, 4, 1, 1])
    r = g.relu(g.conv_fprop(x, w, name="conv"), name="relu")
    m = g.reduction(x, mode=hipdnn.reduction_mode.MAX, name="red")
    m.set_dim([1, 4, 1, 1])
    g.add(r, m, name="add").set_output(True)
    g.build([hipdnn.heur_mode.A])
    groups = g.get_kernel_groups()
    assert [(k.kernel, k.nodes, k.node_indices) for k in groups] == [
        ("conv_fprop", ["conv"], [0]), ("reduction", ["red"], [2]),
        ("pointwise", ["relu", "add"], [1, 3])]


def test_built_picture_names_the_engine_and_clusters_each_kernel():
    g = conv_chain()
    g.build([hipdnn.heur_mode.A])
    d = Dot(g.to_dot())
    assert d.graph["label"] == "graph 'cbr': 4 nodes\nengine reference_cpu (host), 2 kernels"
    clusters = sorted(d.clusters.values(), key=lambda c: c[0]["label"])
    assert [c[0]["label"] for c in clusters] == [
        "kernel 1: conv_fprop",
        "kernel 2: pointwise\n3 pointwise nodes fused: one pass over blocks"]
    conv_ops = [k for k in clusters[0][1] if k.startswith("n")]
    pw = clusters[1][1]
    assert [d.nodes[k]["label"].split("\n")[1] for k in conv_ops] == ["'conv'"]
    assert sorted(d.nodes[k]["label"].split("\n")[1] for k in pw if k.startswith("n")) == \
        ["'act'", "'bias'", "'scale'"]
    # the values the fused kernel keeps to itself are drawn inside it; conv's result,
    # which crosses from one kernel to the other, is not
    inside = sorted(d.nodes[k]["label"].split("\n")[0] for k in pw if k.startswith("t"))
    assert inside == ["bias::OUT_0", "scale::OUT_0"]
    assert d.by_label_line("conv::Y") not in clusters[0][1] + clusters[1][1]


def test_deserialized_plan_reports_the_same_kernels():
    g = conv_chain()
    g.build([hipdnn.heur_mode.A])
    g2 = hipdnn.pygraph()
    g2.deserialize(g.serialize())
    assert g2.get_kernel_groups() == g.get_kernel_groups()
    assert Dot(g2.to_dot()).clusters.keys() == Dot(g.to_dot()).clusters.keys()
    # the nodes keep their modes after the round trip
    assert sorted(v["label"] for v in Dot(g2.to_dot()).ops().values()) == \
        sorted(v["label"] for v in Dot(g.to_dot()).ops().values())


def test_repr_lists_kernels_once_built():
    g = conv_chain()
    assert "kernels" not in repr(g)
    g.build([hipdnn.heur_mode.A])
    assert "  kernels of reference_cpu: 1 conv_fprop [conv]; 2 pointwise [bias, scale, act]" \
        in repr(g).splitlines()


def test_graph_wrapper_draws_and_reports_kernels():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 5, 5), dtype=np.float32)
    b = rng.standard_normal((1, 4, 1, 1), dtype=np.float32)
    with hipdnn.Graph(name="wrapped") as g:
        with pytest.raises(hipdnn.HipdnnError, match="not built"):
            g.get_kernel_groups()
        assert "not built" in Dot(g.to_dot()).graph["label"]
        g.sigmoid(g.add(x, b, name="shift"), name="sig")
    groups = g.get_kernel_groups()
    assert [(k.kernel, k.nodes) for k in groups] == [("pointwise", ["shift", "sig"])]
    assert "engine reference_cpu" in Dot(g.to_dot()).graph["label"]
    out = g(x, b)  # the picture changed nothing about running it
    ref = 1.0 / (1.0 + np.exp(-(x.astype(np.float64) + b)))
    assert np.all(np.abs(out - ref) <= 1e-5 + 1e-5 * np.abs(ref))


# ---- rendering ---------------------------------------------------------------------------------


def _need_dot():
    assert shutil.which("dot"), "graphviz's dot is not on PATH: `make deps` installs graphviz"


def test_svg_is_rendered_through_dot():
    _need_dot()
    g = conv_chain()
    g.build([hipdnn.heur_mode.A])
    svg = g._repr_svg_()
    assert svg is not None and "<svg" in svg and svg.rstrip().endswith("</svg>")
    for text in ("conv_fprop", "pointwise RELU_FWD", "kernel 2: pointwise", "reference_cpu"):
        assert text in svg, text


def _fake_dot(folder, script):
    path = folder / "dot"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return folder


def test_without_dot_there_is_no_svg_and_the_text_form_lists_the_nodes(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder without dot
    g = conv_chain()
    assert g._repr_svg_() is None
    texts = []

    class Printer:
        def text(self, s):
            texts.append(s)

    g._repr_pretty_(Printer(), False)
    assert texts == [repr(g)]
    for line in ("conv_fprop 'conv'", "add 'bias'", "mul 'scale'", "relu 'act'"):
        assert line in texts[0]
    from hipdnn import _draw
    with pytest.raises(_draw.DotError, match="'dot' is not on PATH"):
        _draw.render(g.to_dot())


def test_a_failing_dot_gives_no_svg_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_dot(tmp_path, "echo 'syntax error in line 3' >&2\n"
                                                       "exit 3\n")))
    from hipdnn import _draw
    g = conv_chain()
    assert g._repr_svg_() is None
    with pytest.raises(_draw.DotError, match=r"failed \(exit 3\): syntax error in line 3"):
        _draw.render(g.to_dot())


def test_a_hanging_dot_times_out(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_dot(tmp_path, f"exec {shutil.which('sleep')} 30\n")))
    from hipdnn import _draw
    with pytest.raises(_draw.DotError, match="took longer than 0.5 s"):
        _draw.render(conv_chain().to_dot(), timeout=0.5)


# ---- python -m hipdnn draw ---------------------------------------------------------------------


def run(args, env=None, code=None, cwd=None):
    full = dict(os.environ)
    full["PYTHONPATH"] = str(PACKAGE.parent) + os.pathsep + full.get("PYTHONPATH", "")
    full.setdefault("HIPDNN_LOG_LEVEL", "off")
    full.update(env or {})
    cmd = [sys.executable, "-c", textwrap.dedent(code)] if code else \
        [sys.executable, "-m", "hipdnn", *args]
    return subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.fixture
def files(tmp_path):
    g = conv_chain()
    (tmp_path / "graph.bin").write_bytes(g.serialize())
    g.build([hipdnn.heur_mode.A])
    (tmp_path / "plan.bin").write_bytes(g.serialize())
    return tmp_path


def test_draw_graph_bytes_prints_the_source(files):
    r = run(["draw", str(files / "graph.bin")])
    assert r.returncode == 0, r.stderr
    d = Dot(r.stdout)
    assert len(d.ops()) == 4 and not d.clusters
    assert d.graph["label"].startswith("graph 'cbr': 4 nodes\nnot built")


def test_draw_plan_bytes_shows_engine_and_kernels(files):
    r = run(["draw", str(files / "plan.bin"), "-o", str(files / "plan.dot")])
    assert r.returncode == 0, r.stderr
    d = Dot((files / "plan.dot").read_text())
    assert "engine reference_cpu (host), 2 kernels" in d.graph["label"]
    assert len(d.clusters) == 2


def test_draw_build_builds_graph_bytes(files):
    r = run(["draw", str(files / "graph.bin"), "--build"])
    assert r.returncode == 0, r.stderr
    assert len(Dot(r.stdout).clusters) == 2


def test_draw_renders_svg(files):
    _need_dot()
    r = run(["draw", str(files / "plan.bin"), "-o", str(files / "plan.svg")])
    assert r.returncode == 0, r.stderr
    svg = (files / "plan.svg").read_text()
    assert "<svg" in svg and "kernel 1: conv_fprop" in svg


def test_draw_a_plan_whose_engine_is_not_loaded(files, tmp_path):
    empty = tmp_path / "no_plugins"
    empty.mkdir()
    r = run(["draw", str(files / "plan.bin")], env={"HIPDNN_PLUGIN_DIR": str(empty)})
    assert r.returncode == 0, r.stderr
    d = Dot(r.stdout)
    assert len(d.ops()) == 4 and not d.clusters
    engine_id = hipdnn.engines()[[e.name for e in hipdnn.engines()].index("reference_cpu")].id
    assert f"plan for engine id 0x{engine_id:016x}, not loaded here" in d.graph["label"]
    assert "not loaded here" in r.stderr


@pytest.mark.parametrize("content, message", [
    (None, "cannot read '{path}': No such file or directory"),
    (b"", "'{path}' is empty, not a serialized hipdnn graph"),
    (b"not a graph at all, just text\n" * 4, "'{path}' is not a serialized hipdnn graph"),
    (b"HDNNPLAN\x01\x00\x00\x00", "'{path}' holds damaged plan bytes: plan bytes: 12 bytes, "
                                  "shorter than"),
])
def test_draw_refuses_what_is_not_a_graph_naming_the_path(tmp_path, content, message):
    path = tmp_path / "input.bin"
    if content is not None:
        path.write_bytes(content)
    r = run(["draw", str(path)])
    assert r.returncode == 1
    assert r.stdout == ""
    assert r.stderr.startswith("hipdnn draw: " + message.format(path=path)), r.stderr
    assert "Traceback" not in r.stderr


def test_draw_says_when_the_output_cannot_be_written(files):
    out = files / "missing_folder" / "g.dot"
    r = run(["draw", str(files / "graph.bin"), "-o", str(out)])
    assert r.returncode == 1
    assert r.stderr.startswith(f"hipdnn draw: cannot write '{out}'"), r.stderr


def test_draw_without_dot_says_to_write_the_source(files, tmp_path):
    r = run(["draw", str(files / "graph.bin"), "-o", str(tmp_path / "g.svg")],
            env={"PATH": str(tmp_path)})
    assert r.returncode == 1
    assert "graphviz 'dot' is not on PATH" in r.stderr and "write the .dot source" in r.stderr
    assert not (tmp_path / "g.svg").exists()


# ---- the HIP engine's report, on its host emulation ---------------------------------------------


EMULATED_RUN = """
    import json, hipdnn
    hipdnn.set_engine_plugin_paths([{reference!r}, {emulated!r}],
                                   hipdnn.plugin_loading_mode.ABSOLUTE)
    dt = hipdnn.data_type
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT,
                       intermediate_data_type=dt.FLOAT, name="g")
    {build}
    g.set_preferred_engine("hip_emulated")
    g.build([hipdnn.heur_mode.A])
    print(json.dumps({{"engine": g.get_engine_name(),
                      "groups": [list(k) for k in g.get_kernel_groups()],
                      "names": [op.name for op in g._ops]}}))
"""


def emulated(build):
    import json
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    r = run([], code=EMULATED_RUN.format(reference=str(REFERENCE), emulated=str(EMULATED),
                                         build=textwrap.indent(textwrap.dedent(build),
                                                               "    ").strip()))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["engine"] == "hip_emulated"
    return out["groups"], out["names"]


def test_a_pointwise_chain_is_one_kernel_on_the_hip_engine():
    groups, names = emulated("""
        x = g.tensor(name="x", dim=[4, 8, 16, 16])
        s = g.tensor(name="s", dim=[1, 8, 1, 1])
        b = g.tensor(name="b", dim=[1, 8, 1, 1])
        y = g.gelu(g.add(g.mul(x, s, name="scale"), b, name="shift"), name="act")
        g.tanh(y, name="squash").set_output(True)
    """)
    assert groups == [["pointwise", "4 nodes fused: 3 inputs read once, 1 output written once",
                       ["scale", "shift", "act", "squash"], [0, 1, 2, 3]]]


def test_hip_stages_are_its_kernels_with_the_nodes_each_runs():
    # layernorm with a relu epilogue (one row-wise kernel), then a reduction of its result
    groups, names = emulated("""
        x = g.tensor(name="x", dim=[4, 8, 16])
        s = g.tensor(name="s", dim=[1, 1, 16])
        b = g.tensor(name="b", dim=[1, 1, 16])
        y, _m, _v = g.layernorm(hipdnn.norm_forward_phase.INFERENCE, x, s, b, epsilon=1e-5,
                                name="ln")
        r = g.relu(y, name="r")
        total = g.reduction(r, mode=hipdnn.reduction_mode.ADD, name="sum")
        total.set_dim([4, 8, 1]).set_output(True)
    """)
    assert [(k[0], k[2]) for k in groups] == [("row-wise", ["ln", "r"]), ("row-wise", ["sum"])]
    assert "layernorm 'ln'" in groups[0][1] and "epilogue" in groups[0][1]


def test_hip_lowered_nodes_are_traced_to_the_nodes_given_even_under_one_name():
    # genstats is lowered into a sum and a squared 2-norm; both genstats nodes are called
    # "stats", so only the trace by position can tell their kernels apart
    groups, names = emulated("""
        x = g.tensor(name="x", dim=[2, 4, 8, 8])
        for t in g.genstats(x, name="stats") + g.genstats(g.exp(x, name="e"), name="stats"):
            t.set_output(True)
    """)
    assert names == ["stats", "e", "stats"]
    # each genstats is a sum and a 2-norm (row-wise) and a squaring (pointwise); the first
    # one's squaring shares its kernel with exp
    assert [(k[0], k[3]) for k in groups] == [
        ("row-wise", [0]), ("row-wise", [0]), ("pointwise", [0, 1]),
        ("row-wise", [2]), ("row-wise", [2]), ("pointwise", [2])]
    assert "'stats/sum'" in groups[0][1] and "'stats/norm2'" in groups[1][1]


# ---- plugins without the optional report, and plugins that break its rules ---------------------


PLUGIN_C = r"""
#include <stdint.h>
#include <string.h>
#include "hipdnn/hipdnn_plugin.h"

#define NAME "draw_test"
struct hipdnnEnginePluginHandle { int unused; };
struct hipdnnEnginePluginExecutionContext { int unused; };
static struct hipdnnEnginePluginHandle g_handle;
static struct hipdnnEnginePluginExecutionContext g_ctx;

static uint64_t id(void) {  /* FNV-1a 64 of NAME, as the loader requires */
    uint64_t h = 14695981039346656037ull;
    for (const char* p = NAME; *p; ++p) { h ^= (unsigned char)*p; h *= 1099511628211ull; }
    return h;
}
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetApiVersion(uint32_t* a, uint32_t* b)
{ *a = HIPDNN_PLUGIN_API_MAJOR; *b = 0; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetName(const char** n)
{ *n = NAME; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetVersion(const char** v)
{ *v = "1"; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginGetType(hipdnnPluginType_t* t)
{ *t = HIPDNN_PLUGIN_TYPE_ENGINE; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT void hipdnnPluginGetLastErrorString(const char** m) { *m = "draw_test says no"; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnPluginSetLoggingCallback(hipdnnPluginLoggingCallback_t c)
{ (void)c; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetAllEngineIds(uint64_t* ids, uint32_t max, uint32_t* n)
{ *n = 1; if (ids && max) ids[0] = id(); return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreate(hipdnnEnginePluginHandle_t* h)
{ *h = &g_handle; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroy(hipdnnEnginePluginHandle_t h)
{ (void)h; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginSetStream(hipdnnEnginePluginHandle_t h, hipdnnStream_t s)
{ (void)h; (void)s; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetApplicableEngineIds(
    hipdnnEnginePluginHandle_t h, const uint8_t* g, size_t n, uint64_t* ids, uint32_t max, uint32_t* num)
{ (void)h; (void)g; (void)n; *num = 1; if (ids && max) ids[0] = id(); return HIPDNN_PLUGIN_STATUS_SUCCESS; }
static const hipdnnPluginEngineDetails_t k_details = {
    sizeof(hipdnnPluginEngineDetails_t), 0, NAME, HIPDNN_MEMORY_HOST, 0, 0, 0, NULL, NULL, NULL};
static hipdnnPluginEngineDetails_t g_details;
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetEngineDetails(
    hipdnnEnginePluginHandle_t h, uint64_t e, const hipdnnPluginEngineDetails_t** d)
{ (void)h; (void)e; g_details = k_details; g_details.engine_id = id(); *d = &g_details;
  return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyEngineDetails(
    hipdnnEnginePluginHandle_t h, const hipdnnPluginEngineDetails_t* d)
{ (void)h; (void)d; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetWorkspaceSize(
    hipdnnEnginePluginHandle_t h, const uint8_t* c, size_t cn, const uint8_t* g, size_t gn, size_t* ws)
{ (void)h; (void)c; (void)cn; (void)g; (void)gn; *ws = 0; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginCreateExecutionContext(
    hipdnnEnginePluginHandle_t h, const uint8_t* c, size_t cn, const uint8_t* g, size_t gn,
    hipdnnEnginePluginExecutionContext_t* ctx)
{ (void)h; (void)c; (void)cn; (void)g; (void)gn; *ctx = &g_ctx; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginDestroyExecutionContext(
    hipdnnEnginePluginHandle_t h, hipdnnEnginePluginExecutionContext_t c)
{ (void)h; (void)c; return HIPDNN_PLUGIN_STATUS_SUCCESS; }
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginExecuteOpGraph(
    hipdnnEnginePluginHandle_t h, hipdnnEnginePluginExecutionContext_t c, void* w,
    const hipdnnPluginDeviceBuffer_t* b, uint32_t n)
{ (void)h; (void)c; (void)w; (void)b; (void)n; return HIPDNN_PLUGIN_STATUS_NOT_SUPPORTED; }

#ifdef REPORT
/* REPORT: 1 every node in one kernel; 2 names node 7 of a 2-node graph; 3 leaves node 1
 * out; 4 entries smaller than the ABI's; 5 fails */
static const uint32_t k_nodes[2] = {0, REPORT == 2 ? 7 : 1};
static hipdnnPluginKernelInfo_t k_kernel = {
    REPORT == 4 ? 8 : sizeof(hipdnnPluginKernelInfo_t), "whole", NULL, REPORT == 3 ? 1 : 2, k_nodes};
HIPDNN_PLUGIN_EXPORT hipdnnPluginStatus_t hipdnnEnginePluginGetKernelInfo(
    hipdnnEnginePluginHandle_t h, hipdnnEnginePluginExecutionContext_t c,
    const hipdnnPluginKernelInfo_t** k, uint32_t* n)
{ (void)h; (void)c; *k = &k_kernel; *n = 1;
  return REPORT == 5 ? HIPDNN_PLUGIN_STATUS_INTERNAL_ERROR : HIPDNN_PLUGIN_STATUS_SUCCESS; }
#endif
"""

PLUGIN_RUN = """
    import hipdnn
    hipdnn.set_engine_plugin_paths([{path!r}], hipdnn.plugin_loading_mode.ABSOLUTE)
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT,
                       compute_data_type=hipdnn.data_type.FLOAT, name="two")
    x = g.tensor(name="x", dim=[4])
    g.exp(g.relu(x, name="r"), name="e").set_output(True)
    g.build([hipdnn.heur_mode.A])
    print("ENGINE", g.get_engine_name())
    print("DOT", "(kernels not described)" in g.to_dot())
    try:
        print("GROUPS", [tuple(k) for k in g.get_kernel_groups()])
    except hipdnn.HipdnnError as e:
        print("ERROR", type(e).__name__, e.status_name, str(e))
"""


def plugin_answer(tmp_path, report):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler is needed (make deps installs gcc)"
    src = tmp_path / "draw_test.c"
    src.write_text(PLUGIN_C)
    lib = tmp_path / "libdraw_test.so"
    flags = [] if report is None else [f"-DREPORT={report}"]
    subprocess.run([cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    "-fvisibility=hidden", *flags, f"-I{PACKAGE / 'include'}", str(src), "-o",
                    str(lib)], check=True, capture_output=True, timeout=120)
    r = run([], code=PLUGIN_RUN.format(path=str(lib)))
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["ENGINE"] == "draw_test"
    return lines


def test_a_plugin_without_the_report_loads_and_says_it_does_not_describe_kernels(tmp_path):
    got = plugin_answer(tmp_path, None)
    assert got["ERROR"].startswith("NotSupportedError HIPDNN_STATUS_NOT_SUPPORTED ")
    assert "engine 'draw_test' does not describe its kernels (its plugin " in got["ERROR"]
    assert "has no hipdnnEnginePluginGetKernelInfo" in got["ERROR"]
    assert got["DOT"] == "True"


def test_a_plugin_report_is_read_as_given(tmp_path):
    got = plugin_answer(tmp_path, 1)
    assert got["GROUPS"] == "[('whole', '', ['r', 'e'], [0, 1])]"


@pytest.mark.parametrize("report, message", [
    (2, "engine 'draw_test': kernel 0 ('whole') names node 7; the graph has 2"),
    (3, "engine 'draw_test': node 'e' is in none of its 1 kernels"),
    (4, "engine 'draw_test': GetKernelInfo entries of 8 bytes; this backend reads"),
    (5, "engine 'draw_test': GetKernelInfo failed: draw_test says no"),
])
def test_a_report_that_breaks_the_abi_is_refused_with_the_reason(tmp_path, report, message):
    got = plugin_answer(tmp_path, report)
    assert got["ERROR"].startswith("HipdnnError HIPDNN_STATUS_PLUGIN_ERROR plan_kernels: "
                                    + message), got
