"""The files a new pointwise mode and a new op family touch are the ones docs/architecture.md
lists ("What a new operation touches"), counted from the tree itself.

A place is a source file that mentions an existing op in one of its spellings (the C
enumerator's tail, the table's name, the engines' own codes: CMP_GE, cmp_ge, PW_CMP_GE),
tests, docs, notebooks, benchmarks and the fuzz corpus aside, and generated text aside
(csrc/python/constants.inc, and every block between BEGIN GENERATED / END GENERATED lines,
which tools/gen_python_constants.py rewrites).  For pointwise modes that is every file
mentioning each of a few unlike modes (a place that lists modes names them all; one that
merely uses a mode, as a lowering does, names one); for op families it is every file
mentioning genstats, an op with its own inference rule, Python wrapper, enum-typed
parameter and kernels in both engines.  A new hand-kept list fails here until it is
documented there, or derived instead.

Run as a script (`/usr/bin/python3 tests/test_op_touch_points.py [ROOT]`) it prints the
counts for any checkout.
"""
import re
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Set

REPO = Path(__file__).resolve().parent.parent
DOC = Path("docs/architecture.md")
SECTION = "## What a new operation touches"

# Where hand-written sources live; build outputs copied into the package aside.
SCANNED = ["csrc", "ep", "hipdnn", "plugins", "shim", "tools", "cmake"]
TOP_FILES = ["CMakeLists.txt", "Makefile", "setup.py", "pyproject.toml"]
SKIPPED = ["hipdnn/include", "hipdnn/lib"]
SUFFIXES = {".c", ".h", ".cpp", ".hip", ".cu", ".py", ".pyi", ".fbs", ".cmake", ".inc", ".txt",
            ".toml"}
GENERATED_FILES = {"csrc/python/constants.inc"}

# Each mode by its spellings; they differ in shape (binary, unary, backward, boolean), so
# only a list of modes names all four.
POINTWISE_MODES = {
    "cmp_ge": ["cmp_ge"],
    "logical_not": ["logical_not", "pw_not"],
    "sigmoid_backward": ["sigmoid_backward", "sigmoid_bwd"],
    "gelu_approx_tanh": ["gelu_approx_tanh", "gelu_approx_tanh_fwd", "gelu_tanh"],
}
OP_FAMILY = ["genstats", "gen_stats"]


def sources(root: Path) -> Dict[str, str]:
    """Each scanned file's text, less its generated blocks, by path relative to root."""
    paths: List[Path] = [root / f for f in TOP_FILES if (root / f).is_file()]
    for top in SCANNED:
        paths += [p for p in sorted((root / top).rglob("*")) if p.is_file()]
    out = {}
    for path in paths:
        rel = path.relative_to(root).as_posix()
        if (rel in GENERATED_FILES or any(rel.startswith(s + "/") for s in SKIPPED)
                or "__pycache__" in rel or (path.suffix not in SUFFIXES
                                            and path.name not in TOP_FILES)):
            continue
        kept, generated = [], False
        for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
            if "BEGIN GENERATED" in line:
                generated = True
            elif generated and line.strip().endswith("END GENERATED"):
                generated = False
            elif not generated:
                kept.append(line)
        out[rel] = "\n".join(kept)
    return out


def mentioning(texts: Dict[str, str], spellings: Iterable[str]) -> Set[str]:
    """Files naming one of the spellings as a token ('_' separates tokens:
    HIPDNN_POINTWISE_CMP_GE and PW_CMP_GE name cmp_ge), in any case."""
    alternatives = "|".join(re.escape(s) for s in spellings)
    rx = re.compile(rf"(?<![a-z0-9])(?:{alternatives})(?![a-z0-9])", re.I)
    return {rel for rel, text in texts.items() if rx.search(text)}


def pointwise_mode_places(texts: Dict[str, str]) -> Set[str]:
    return set.intersection(*(mentioning(texts, s) for s in POINTWISE_MODES.values()))


def op_family_places(texts: Dict[str, str]) -> Set[str]:
    return mentioning(texts, OP_FAMILY)


def documented(heading: str) -> Set[str]:
    """The paths of the table under `heading` in the doc's section (its rows' first
    column, in backquotes)."""
    text = (REPO / DOC).read_text(encoding="utf-8")
    assert SECTION in text, f"{DOC} has no section '{SECTION}'"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    assert heading in section, f"{DOC}, {SECTION}: no '{heading}'"
    part = section.split(heading, 1)[1].split("\n### ", 1)[0]
    return set(re.findall(r"^\| `([^`]+)` \|", part, re.M))


def _explain(found: Set[str], listed: Set[str], what: str) -> str:
    return (f"{what}: the tree and {DOC} ('{SECTION}') disagree.\n"
            f"  in the tree, not documented: {sorted(found - listed)}\n"
            f"  documented, not in the tree: {sorted(listed - found)}\n"
            "A new hand-kept place: derive it (tools/gen_python_constants.py, the op table) "
            "or document it.")


def test_a_new_pointwise_mode_touches_the_documented_files():
    found = pointwise_mode_places(sources(REPO))
    listed = documented("### A new pointwise mode")
    assert found == listed, _explain(found, listed, "a new pointwise mode")


def test_a_new_op_family_touches_the_documented_files():
    found = op_family_places(sources(REPO))
    listed = documented("### A new op family")
    assert found == listed, _explain(found, listed, "a new op family")


def test_the_counts_the_doc_states_are_the_tables():
    section = (REPO / DOC).read_text(encoding="utf-8").split(SECTION, 1)[1].split("\n## ")[0]
    for heading in ("### A new pointwise mode", "### A new op family"):
        part = section.split(heading, 1)[1].split("\n### ", 1)[0]
        stated = re.search(r"\*\*(\d+) files\*\*", part)
        assert stated, f"{DOC}, {heading}: no '**N files**'"
        assert int(stated.group(1)) == len(documented(heading))


def test_generated_text_and_tests_are_not_places():
    texts = sources(REPO)
    # _ops.py's modes and graph.py's methods are generated, constants.inc wholly
    assert "hipdnn/_ops.py" not in pointwise_mode_places(texts)
    assert "hipdnn/graph.py" not in op_family_places(texts)
    assert "csrc/python/constants.inc" not in texts
    assert not any(rel.startswith(("tests/", "docs/")) for rel in texts)
    # ... but the scan sees them outside generated blocks
    assert "hipdnn/_pygraph/pointwise.py" in pointwise_mode_places(texts)
    assert {"csrc/sdk/op_table.c", "csrc/include/hipdnn/hipdnn.h"} <= op_family_places(texts)


def test_a_mode_merely_used_is_not_a_list_of_modes():
    texts = {"uses.c": "pw(l, HIPDNN_POINTWISE_CMP_GE, x, y);",
             "lists.c": "CMP_GE LOGICAL_NOT PW_SIGMOID_BWD PW_GELU_TANH",
             "tokens.c": "CMP_GEQ logical_nothing sigmoid_backwards gelu_tanhx"}
    assert pointwise_mode_places(texts) == {"lists.c"}


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO
    texts = sources(root)
    for what, places in (("a new pointwise mode", pointwise_mode_places(texts)),
                         ("a new op family (genstats)", op_family_places(texts))):
        print(f"{what}: {len(places)} files")
        for rel in sorted(places):
            print(f"  {rel}")
