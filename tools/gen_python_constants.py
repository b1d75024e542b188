#!/usr/bin/python3
"""gen_python_constants.py — writes what hipdnn.h, the SDK's pointwise table and pygraph's
op families already say into the Python package, so none of it is kept twice by hand.

The rule for hipdnn.h: every integer constant of csrc/include/hipdnn/hipdnn.h is exported
by hipdnn._C under its C name less the HIPDNN_ prefix.  That is every enumerator of every
`typedef enum { ... } name;` and every `#define HIPDNN_<NAME> <integer literal>`
(HIPDNN_MAX_DIMS -> _C.MAX_DIMS, HIPDNN_ATTR_TENSOR_DIMENSIONS ->
_C.ATTR_TENSOR_DIMENSIONS).  From them this writes:

  csrc/python/constants.inc  the {"NAME", HIPDNN_NAME} rows module.c's table includes;
  hipdnn/_C.pyi              the `NAME: int` lines between its BEGIN / END GENERATED lines;
  hipdnn/enums.py            the members of each enum class between a line
                               # BEGIN GENERATED: <C enum type> less <C prefix>[, but A, B]
                             and `# END GENERATED`: one member per enumerator of that C
                             enum, in header order, named as in C less the prefix and
                             valued `_C.<name>`, except those the `but` list names.
                             Members outside the markers are hand-written.

And from the SDK's table of pointwise modes (k_pointwise in csrc/sdk/op_table.c: each
mode's name, which is cuDNN frontend's method, and its operand count) and from pygraph's
op families:

  hipdnn/_ops.py             POINTWISE_MODES and POINTWISE_ARITY, between its markers;
  hipdnn/graph.py            hipdnn.Graph's op methods, one per public method of each op
                             family mixin pygraph is assembled from (hipdnn/_pygraph/*.py,
                             the `*Ops` bases of `class pygraph` in hipdnn/pygraph.py), in
                             that order, between its markers.

Run it after adding an enumerator or a #define to hipdnn.h, a pointwise mode to the SDK's
table or an op method to pygraph:

  /usr/bin/python3 tools/gen_python_constants.py          rewrites what is out of date
  /usr/bin/python3 tools/gen_python_constants.py --check  writes nothing; exits 1 with a
                                                          diff if a file is out of date

tests/test_generated_sources.py runs --check.  --root DIR works on another checkout.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Sequence

COMMAND = "/usr/bin/python3 tools/gen_python_constants.py"
HEADER = Path("csrc/include/hipdnn/hipdnn.h")
CONSTANTS_INC = Path("csrc/python/constants.inc")
STUB = Path("hipdnn/_C.pyi")
ENUMS = Path("hipdnn/enums.py")
SDK_TABLE = Path("csrc/sdk/op_table.c")
OPS = Path("hipdnn/_ops.py")
PYGRAPH = Path("hipdnn/pygraph.py")
GRAPH = Path("hipdnn/graph.py")

PREFIX = "HIPDNN_"
BEGIN = "# BEGIN GENERATED"
END = "# END GENERATED"
STUB_BEGIN = f"{BEGIN}: hipdnn.h constants, by tools/gen_python_constants.py; do not edit"
OPS_BEGIN = f"{BEGIN}: the SDK's pointwise modes, by tools/gen_python_constants.py; do not edit"
GRAPH_BEGIN = f"{BEGIN}: pygraph's op methods, by tools/gen_python_constants.py; do not edit"
ENUM_BEGIN = re.compile(
    r"^(?P<indent>[ ]*)# BEGIN GENERATED: (?P<enum>\w+) less (?P<prefix>\w+)"
    r"(?:, but (?P<but>\w+(?:, \w+)*))?$")


class Group(NamedTuple):
    """Constants of the header that sit together: one C enum, or a run of #defines."""

    title: str          # "hipdnnStatus_t", or "#define" for defines
    names: List[str]    # full C names, HIPDNN_ prefix included, in header order


class GeneratorError(Exception):
    """The header or a marked file is not what this script can read."""


# ---- reading hipdnn.h ------------------------------------------------------------------

_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
_ITEM = re.compile(
    r"typedef\s+enum\s*(?:\w+\s*)?\{(?P<body>[^}]*)\}\s*(?P<name>\w+)\s*;"
    r"|^[ \t]*#[ \t]*define[ \t]+(?P<define>HIPDNN_\w+)[ \t]+"
    r"(?P<value>\(?-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*\)?)[ \t]*$",
    re.M)
_ENUMERATOR = re.compile(r"^(\w+)\s*(?:=\s*(.+))?$", re.S)


def read_constants(header_text: str) -> List[Group]:
    """The header's integer constants in header order, grouped by enum."""
    text = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n") or " ", header_text)
    groups: List[Group] = []
    for m in _ITEM.finditer(text):
        if m.group("define"):
            if groups and groups[-1].title == "#define":
                groups[-1].names.append(m.group("define"))
            else:
                groups.append(Group("#define", [m.group("define")]))
            continue
        names = []
        for item in m.group("body").split(","):
            item = item.strip()
            if not item:
                continue
            e = _ENUMERATOR.match(item)
            if not e:
                raise GeneratorError(f"{HEADER}: {m.group('name')}: cannot read {item!r}")
            names.append(e.group(1))
        groups.append(Group(m.group("name"), names))
    seen: Dict[str, str] = {}
    for g in groups:
        for name in g.names:
            if not name.startswith(PREFIX) or not name[len(PREFIX):]:
                raise GeneratorError(f"{HEADER}: {g.title}: {name} lacks the {PREFIX} prefix")
            if name in seen:
                raise GeneratorError(f"{HEADER}: {name} twice ({seen[name]}, {g.title})")
            seen[name] = g.title
    if not groups:
        raise GeneratorError(f"{HEADER}: no enum or #define {PREFIX}* found")
    return groups


def short(name: str) -> str:
    return name[len(PREFIX):]


# ---- writing ---------------------------------------------------------------------------

def constants_inc(groups: Sequence[Group]) -> str:
    out = [
        f"/* {CONSTANTS_INC.name} — generated by tools/gen_python_constants.py from hipdnn.h;",
        " * do not edit.  Every enumerator of hipdnn.h's enums and every integer",
        " * #define HIPDNN_*, exported by module.c as _C.<name without HIPDNN_>.",
        f" * Regenerate: {COMMAND} */",
    ]
    for g in groups:
        out.append(f"/* {g.title} */")
        out += [f'{{"{short(n)}", {n}}},' for n in g.names]
    return "\n".join(out) + "\n"


def stub_lines(groups: Sequence[Group]) -> List[str]:
    out = []
    for g in groups:
        out.append(f"# {g.title}")
        out += [f"{short(n)}: int" for n in g.names]
    return out


def enum_lines(indent: str, group: Group, prefix: str, but: Sequence[str],
               where: str) -> List[str]:
    members = []
    for name in group.names:
        if not name.startswith(prefix):
            raise GeneratorError(f"{where}: {name} of {group.title} does not start with "
                                 f"{prefix}")
        member = name[len(prefix):]
        if not member.isidentifier():
            raise GeneratorError(f"{where}: {name} less {prefix} is no Python name")
        members.append((member, name))
    unknown = sorted(set(but) - {m for m, _ in members})
    if unknown:
        raise GeneratorError(f"{where}: 'but' names {', '.join(unknown)}, which "
                             f"{group.title} does not have")
    return [f"{indent}{m} = _C.{short(n)}" for m, n in members if m not in but]


def _blocks(lines: List[str], where: str) -> List[tuple[int, int]]:
    """(begin, end) line indices of every marked block."""
    blocks, begin = [], None
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith(BEGIN):
            if begin is not None:
                raise GeneratorError(f"{where}:{i + 1}: BEGIN GENERATED inside another block")
            begin = i
        elif s == END:
            if begin is None:
                raise GeneratorError(f"{where}:{i + 1}: END GENERATED without a BEGIN")
            blocks.append((begin, i))
            begin = None
    if begin is not None:
        raise GeneratorError(f"{where}:{begin + 1}: BEGIN GENERATED without an END")
    return blocks


def replace_block(text: str, where: Path, begin: str, body: List[str]) -> str:
    """text with the lines of its one marked block (whose BEGIN line, indent aside, is
    `begin`) replaced by body."""
    lines = text.split("\n")
    blocks = _blocks(lines, str(where))
    if len(blocks) != 1 or lines[blocks[0][0]].strip() != begin:
        raise GeneratorError(f"{where}: expected one block starting with the line {begin!r}")
    b, e = blocks[0]
    return "\n".join(lines[:b + 1] + body + lines[e:])


def stub(text: str, groups: Sequence[Group]) -> str:
    return replace_block(text, STUB, STUB_BEGIN, stub_lines(groups))


def enums(text: str, groups: Sequence[Group]) -> str:
    by_name = {g.title: g for g in groups if g.title != "#define"}
    lines = text.split("\n")
    out: List[str] = []
    done = 0
    for b, e in _blocks(lines, str(ENUMS)):
        where = f"{ENUMS}:{b + 1}"
        m = ENUM_BEGIN.match(lines[b])
        if not m:
            raise GeneratorError(f"{where}: expected '# BEGIN GENERATED: <C enum> less "
                                 f"<prefix>[, but A, B]', got {lines[b].strip()!r}")
        group = by_name.get(m.group("enum"))
        if group is None:
            raise GeneratorError(f"{where}: hipdnn.h has no enum {m.group('enum')}")
        but = m.group("but").split(", ") if m.group("but") else []
        out += lines[done:b + 1]
        out += enum_lines(m.group("indent"), group, m.group("prefix"), but, where)
        done = e
    out += lines[done:]
    return "\n".join(out)


# ---- the SDK's pointwise table -----------------------------------------------------------

class PointwiseMode(NamedTuple):
    enumerator: str  # HIPDNN_POINTWISE_RELU_FWD
    name: str        # "relu": cuDNN frontend's method
    arity: int


_PW_TABLE = re.compile(r"\}\s*k_pointwise\[\]\s*=\s*\{(?P<rows>.*?)\n\};", re.S)
_PW_ROW = re.compile(r"\{\s*(?P<mode>\w+)\s*,\s*\"(?P<name>\w+)\"\s*,\s*(?P<arity>\d+)\s*,"
                     r"\s*\w+\s*\},?")


def read_pointwise(table_text: str, groups: Sequence[Group]) -> List[PointwiseMode]:
    """The rows of the SDK's k_pointwise, in table order, each mode checked against
    hipdnn.h's hipdnnPointwiseMode_t."""
    m = _PW_TABLE.search(_COMMENT.sub(" ", table_text))
    if not m:
        raise GeneratorError(f"{SDK_TABLE}: no k_pointwise[] = {{ ... }}; table found")
    rows = m.group("rows")
    left = _PW_ROW.sub("", rows).strip()
    if left:  # a row this script cannot read would silently go missing
        raise GeneratorError(f"{SDK_TABLE}: k_pointwise: cannot read {left.splitlines()[0]!r}")
    enum = {n for g in groups if g.title == "hipdnnPointwiseMode_t" for n in g.names}
    modes: List[PointwiseMode] = []
    for row in _PW_ROW.finditer(rows):
        if row.group("mode") not in enum:
            raise GeneratorError(f"{SDK_TABLE}: k_pointwise: {row.group('mode')} is not a "
                                 "hipdnnPointwiseMode_t of hipdnn.h")
        modes.append(PointwiseMode(row.group("mode"), row.group("name"), int(row.group("arity"))))
    for what in ("enumerator", "name"):
        seen = [getattr(p, what) for p in modes]
        twice = sorted({v for v in seen if seen.count(v) > 1})
        if twice:
            raise GeneratorError(f"{SDK_TABLE}: k_pointwise: {', '.join(twice)} twice")
    return modes


def ops_lines(modes: Sequence[PointwiseMode]) -> List[str]:
    out = ["POINTWISE_MODES: Dict[str, int] = {"]
    out += [f'    "{p.name}": _C.{short(p.enumerator)},' for p in modes]
    out += ["}", "POINTWISE_ARITY: Dict[str, int] = {"]
    out += [f'    "{p.name}": {p.arity},' for p in modes]
    return out + ["}"]


# ---- pygraph's op methods ------------------------------------------------------------------

def op_methods(root: Path) -> List[str]:
    """The public methods of each op family mixin (a `*Ops` base of `class pygraph`), in
    the order pygraph lists its bases and each file defines them."""
    tree = ast.parse((root / PYGRAPH).read_text(encoding="utf-8"))
    modules: Dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for alias in node.names:
                modules[alias.asname or alias.name] = node.module
    classes = [c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "pygraph"]
    if not classes:
        raise GeneratorError(f"{PYGRAPH}: no class pygraph")
    methods: List[str] = []
    for base in classes[0].bases:
        if not (isinstance(base, ast.Name) and base.id.endswith("Ops")):
            continue
        module = modules.get(base.id)
        if module is None:
            raise GeneratorError(f"{PYGRAPH}: pygraph's base {base.id} is not imported "
                                 "from a module of the package")
        path = root / "hipdnn" / Path(*module.split(".")).with_suffix(".py")
        mixin = [c for c in ast.parse(path.read_text(encoding="utf-8")).body
                 if isinstance(c, ast.ClassDef) and c.name == base.id]
        if not mixin:
            raise GeneratorError(f"{path.relative_to(root)}: no class {base.id}")
        methods += [f.name for f in mixin[0].body
                    if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")]
    if not methods:
        raise GeneratorError(f"{PYGRAPH}: pygraph has no op family (*Ops) bases")
    return methods


def graph_lines(methods: Sequence[str]) -> List[str]:
    return [f'    {m} = _op_method("{m}")' for m in methods]


def header_text(root: Path) -> str:
    """hipdnn.h, then each hipdnn/ header it includes at its end (hipdnn_tuning.h): one API."""
    text = (root / HEADER).read_text(encoding="utf-8")
    for name in re.findall(r'^#include "hipdnn/(\w+\.h)"', text, re.M):
        text += (root / HEADER.parent / name).read_text(encoding="utf-8")
    return text


def generate(root: Path) -> Dict[Path, str]:
    """What each generated file should hold, by path relative to root."""
    groups = read_constants(header_text(root))
    modes = read_pointwise((root / SDK_TABLE).read_text(encoding="utf-8"), groups)
    return {
        CONSTANTS_INC: constants_inc(groups),
        STUB: stub((root / STUB).read_text(encoding="utf-8"), groups),
        ENUMS: enums((root / ENUMS).read_text(encoding="utf-8"), groups),
        OPS: replace_block((root / OPS).read_text(encoding="utf-8"), OPS, OPS_BEGIN,
                           ops_lines(modes)),
        GRAPH: replace_block((root / GRAPH).read_text(encoding="utf-8"), GRAPH, GRAPH_BEGIN,
                             graph_lines(op_methods(root))),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 with a diff if a file is out of date")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout to work on (default: this script's)")
    args = parser.parse_args(argv)
    try:
        wanted = generate(args.root)
    except (GeneratorError, OSError) as exc:
        print(f"gen_python_constants: {exc}", file=sys.stderr)
        return 2
    stale = []
    for rel, text in wanted.items():
        path = args.root / rel
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        stale.append(rel)
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True),
                f"a/{rel}", f"b/{rel}"))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
    if args.check and stale:
        print(f"\n{', '.join(map(str, stale))}: not what hipdnn.h, {SDK_TABLE} and pygraph "
              f"say; run `{COMMAND}`",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
