"""What tools/gen_python_constants.py writes is current, and a constant added to hipdnn.h,
a mode added to the SDK's pointwise table or an op method added to pygraph without
rerunning it fails here with the command to run:

  csrc/python/constants.inc  the rows of _C's int constants (module.c includes it);
  hipdnn/_C.pyi              their `NAME: int` lines, between its GENERATED markers;
  hipdnn/enums.py            the members of each enum class that is one C enum's image;
  hipdnn/_ops.py             POINTWISE_MODES and POINTWISE_ARITY (csrc/sdk/op_table.c's);
  hipdnn/graph.py            hipdnn.Graph's op methods (pygraph's op families').
"""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hipdnn.enums
from hipdnn import _C, _ops

REPO = Path(__file__).resolve().parent.parent
TOOL = REPO / "tools" / "gen_python_constants.py"
COMMAND = "/usr/bin/python3 tools/gen_python_constants.py"
HEADER = Path("csrc/include/hipdnn/hipdnn.h")
SDK_TABLE = Path("csrc/sdk/op_table.c")
# What the script reads besides the header: the SDK's table, and pygraph with its mixins.
SOURCES = [HEADER, Path("csrc/include/hipdnn/hipdnn_tuning.h"), SDK_TABLE,
           Path("hipdnn/pygraph.py"),
           *sorted(p.relative_to(REPO) for p in (REPO / "hipdnn" / "_pygraph").glob("*.py"))]
# Those a new hipdnn.h enumerator changes, then those the other sources feed.
GENERATED = [Path("csrc/python/constants.inc"), Path("hipdnn/_C.pyi"), Path("hipdnn/enums.py")]
OPS, GRAPH = Path("hipdnn/_ops.py"), Path("hipdnn/graph.py")


def _tool():
    spec = importlib.util.spec_from_file_location("gen_python_constants", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def checkout(tmp_path):
    """A copy of the header and of the generated files, laid out as in the checkout."""
    for rel in [*SOURCES, *GENERATED, OPS, GRAPH]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / rel, tmp_path / rel)
    return tmp_path


def _edit(root, rel, after, line):
    path = root / rel
    text = path.read_text()
    assert after in text
    path.write_text(text.replace(after, after + "\n" + line, 1))


def _edit_header(root, after, line):
    _edit(root, HEADER, after, line)


def test_generated_files_are_current():
    proc = _run("--check")
    assert proc.returncode == 0, (
        f"generated files are out of date with hipdnn.h; run `{COMMAND}`\n"
        + proc.stdout + proc.stderr)


def test_the_extension_exports_exactly_the_integer_constants_of_hipdnn_h():
    groups = _tool().read_constants(_tool().header_text(REPO))
    from_header = {n[len("HIPDNN_"):] for g in groups for n in g.names}
    exported = {n for n in dir(_C) if type(getattr(_C, n)) is int}
    assert exported == from_header
    assert {"MAX_DIMS", "GRAPH_FORMAT_VERSION", "POINTWISE_BINARY_SELECT",
            "ATTR_TENSOR_DIMENSIONS"} <= exported


# Enum classes that image one C enum but keep cuDNN frontend's member order, so are
# hand-written: each must still have every enumerator, under its C name less the prefix.
HAND_WRITTEN_IMAGES = [
    ("heur_mode", "hipdnnBackendHeurMode_t", "HIPDNN_HEUR_MODE_"),
    ("convolution_mode", "hipdnnConvolutionMode_t", "HIPDNN_"),
]


@pytest.mark.parametrize("cls, c_enum, prefix", HAND_WRITTEN_IMAGES)
def test_hand_written_enum_images_have_every_enumerator(cls, c_enum, prefix):
    groups = {g.title: g for g in _tool().read_constants(_tool().header_text(REPO))}
    members = getattr(hipdnn.enums, cls).__members__
    for name in groups[c_enum].names:
        member = name[len(prefix):]
        assert member in members, f"hipdnn.{cls} lacks {member} ({name} of hipdnn.h)"
        assert members[member] == getattr(_C, name[len("HIPDNN_"):])


def test_a_new_enumerator_not_regenerated_fails_the_check_with_the_command(checkout):
    _edit_header(checkout, "    HIPDNN_POINTWISE_BINARY_SELECT = 601,",
                 "    HIPDNN_POINTWISE_FROBNICATE_EXT = 9001,")
    proc = _run("--check", "--root", str(checkout))
    assert proc.returncode == 1
    assert COMMAND in proc.stderr
    for rel in GENERATED:
        assert str(rel) in proc.stderr
    assert '+{"POINTWISE_FROBNICATE_EXT", HIPDNN_POINTWISE_FROBNICATE_EXT},' in proc.stdout
    assert "+POINTWISE_FROBNICATE_EXT: int" in proc.stdout
    assert "+    FROBNICATE_EXT = _C.POINTWISE_FROBNICATE_EXT" in proc.stdout
    for rel in [*GENERATED, OPS, GRAPH]:  # --check writes nothing
        assert (checkout / rel).read_bytes() == (REPO / rel).read_bytes()


def test_regenerating_exports_a_new_define_and_the_check_then_passes(checkout):
    _edit_header(checkout, "#define HIPDNN_MAX_SPATIAL 6", "#define HIPDNN_MAX_WIDGETS 3")
    proc = _run("--root", str(checkout))
    assert proc.returncode == 0, proc.stderr
    assert '{"MAX_WIDGETS", HIPDNN_MAX_WIDGETS},' in (checkout / GENERATED[0]).read_text()
    assert "\nMAX_WIDGETS: int\n" in (checkout / GENERATED[1]).read_text()
    assert (checkout / GENERATED[2]).read_bytes() == (REPO / GENERATED[2]).read_bytes()
    assert _run("--check", "--root", str(checkout)).returncode == 0


def test_hand_written_members_outside_the_markers_are_kept(checkout):
    enums = checkout / "hipdnn" / "enums.py"
    end = "    NOT_SET = _C.DATA_NOT_SET\n    # END GENERATED\n"
    text = enums.read_text()
    assert end in text
    enums.write_text(text.replace(end, end + "    HAND_WRITTEN = 99\n", 1))
    _edit_header(checkout, "    HIPDNN_DATA_NOT_SET = 127,", "    HIPDNN_DATA_INT4_EXT = 128,")
    assert _run("--root", str(checkout)).returncode == 0
    assert ("    NOT_SET = _C.DATA_NOT_SET\n    INT4_EXT = _C.DATA_INT4_EXT\n"
            "    # END GENERATED\n    HAND_WRITTEN = 99\n") in enums.read_text()


@pytest.mark.parametrize("old, new, named", [
    ("hipdnnPointwiseMode_t less", "hipdnnPointwizeMode_t less", "no enum hipdnnPointwizeMode_t"),
    ("HIPDNN_POINTWISE_, but ATAN2", "HIPDNN_POINTWISE_, but ATAN3", "ATAN3"),
    ("hipdnnMemorySpace_t less HIPDNN_MEMORY_", "hipdnnMemorySpace_t less HIPDNN_MEM_X_",
     "HIPDNN_MEMORY_HOST of hipdnnMemorySpace_t does not start with HIPDNN_MEM_X_"),
])
def test_a_marker_that_does_not_fit_hipdnn_h_is_an_error_not_a_skip(checkout, old, new,
                                                                    named):
    path = checkout / "hipdnn" / "enums.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    proc = _run("--check", "--root", str(checkout))
    assert proc.returncode == 2
    assert "hipdnn/enums.py:" in proc.stderr and named in proc.stderr


def test_the_python_pointwise_tables_are_the_sdks():
    modes = _tool().read_pointwise((REPO / SDK_TABLE).read_text(),
                                   _tool().read_constants((REPO / HEADER).read_text()))
    assert _ops.POINTWISE_MODES == {m.name: getattr(_C, m.enumerator[len("HIPDNN_"):])
                                    for m in modes}
    assert _ops.POINTWISE_ARITY == {m.name: m.arity for m in modes}
    assert len(modes) == 50 and _ops.POINTWISE_ARITY["binary_select"] == 3


def test_a_new_pointwise_mode_not_regenerated_fails_the_check(checkout):
    _edit_header(checkout, "    HIPDNN_POINTWISE_BINARY_SELECT = 601,",
                 "    HIPDNN_POINTWISE_FROBNICATE_EXT = 9001,")
    _edit(checkout, SDK_TABLE, '    {HIPDNN_POINTWISE_BINARY_SELECT, "binary_select", 3, PW_FWD},',
          '    {HIPDNN_POINTWISE_FROBNICATE_EXT, "frobnicate", 2, PW_FWD},')
    proc = _run("--check", "--root", str(checkout))
    assert proc.returncode == 1
    assert str(OPS) in proc.stderr and str(GRAPH) not in proc.stderr
    assert '+    "frobnicate": _C.POINTWISE_FROBNICATE_EXT,' in proc.stdout
    assert '+    "frobnicate": 2,' in proc.stdout
    assert _run("--root", str(checkout)).returncode == 0
    assert _run("--check", "--root", str(checkout)).returncode == 0


def test_a_new_pygraph_op_method_gives_hipdnn_graph_its_method(checkout):
    _edit(checkout, Path("hipdnn/_pygraph/matmul.py"), "class MatmulOps(GraphBase):",
          "    def frobnicate(self) -> None:\n        pass\n\n    def _private(self) -> None:"
          "\n        pass\n")
    proc = _run("--check", "--root", str(checkout))
    assert proc.returncode == 1 and str(GRAPH) in proc.stderr
    assert proc.stdout.count("\n+    ") == 1
    assert '+    frobnicate = _op_method("frobnicate")' in proc.stdout


@pytest.mark.parametrize("row, named", [
    ('    {HIPDNN_POINTWISE_ATAN3, "atan3", 2, PW_FWD},', "HIPDNN_POINTWISE_ATAN3 is not a"),
    ('    {HIPDNN_POINTWISE_ATAN2, "atan2", ARITY, PW_FWD},', "cannot read"),
    ('    {HIPDNN_POINTWISE_ADD, "add", 2, PW_FWD},', "HIPDNN_POINTWISE_ADD twice"),
])
def test_a_pointwise_row_the_script_cannot_take_is_an_error(checkout, row, named):
    _edit(checkout, SDK_TABLE, '    {HIPDNN_POINTWISE_BINARY_SELECT, "binary_select", 3, PW_FWD},',
          row)
    proc = _run("--check", "--root", str(checkout))
    assert proc.returncode == 2
    assert str(SDK_TABLE) in proc.stderr and named in proc.stderr
