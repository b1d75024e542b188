"""Pictures of graphs: Graphviz source for a ``pygraph`` and its rendering through ``dot``.

``to_dot`` draws each node (its op and mode, "pointwise ADD", and its name), each tensor
(name, dims, data type; virtual tensors dashed and grey, by-value scalars as ellipses,
graph outputs with a heavy border), the edges in dataflow order labelled with the ports
they enter or leave, and, once a plan is built, the engine that runs it and a cluster per
kernel holding the nodes the engine fused into it (with the virtual tensors that never
leave that kernel).  ``render`` runs Debian's graphviz ``dot`` in a subprocess with a
timeout; ``svg_or_none`` is what ``_repr_svg_`` returns (None without ``dot``, so that
Jupyter shows the text form instead).
"""
from __future__ import annotations

import shutil
import subprocess
import textwrap
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from . import _C
from . import plan_bytes
from .enums import data_type, heur_mode, pointwise_mode

if TYPE_CHECKING:
    from ._pygraph.nodes import _Op
    from .pygraph import KernelGroup, Tensor, pygraph

__all__ = ["DotError", "DrawInputError", "to_dot", "render", "svg_or_none", "op_label", "load"]

# Colours: ops blue, real tensors warm, virtual ones grey, kernels green.
_OP_FILL = "#dae8fc"
_OP_LINE = "#6c8ebf"
_REAL_FILL = "#fff2cc"
_REAL_LINE = "#d6b656"
_VIRTUAL_LINE = "#999999"
_SCALAR_FILL = "#f5f5f5"
_KERNEL_LINE = "#82b366"
_KERNEL_FILL = "#f3f9ef"
_FONT = "Helvetica"

REPR_TIMEOUT_S = 10.0  # _repr_svg_: a notebook must not hang on a huge graph


class DotError(RuntimeError):
    """Graphviz ``dot`` is missing, failed or timed out; the message says which."""


class DrawInputError(ValueError):
    """A file ``python -m hipdnn draw`` cannot read as a serialized graph; the message
    names the path and what is wrong."""


def _prefixed(prefix: str, skip: Sequence[str] = ()) -> Dict[int, str]:
    """{value: name} of the extension's constants starting with `prefix`, but for the
    aliases in `skip` (RESAMPLE_AVGPOOL is AVGPOOL_INCLUDE_PADDING)."""
    out: Dict[int, str] = {}
    for name in sorted(dir(_C)):
        if name.startswith(prefix) and name not in skip:
            out.setdefault(int(getattr(_C, name)), name[len(prefix):])
    return out


# Names of the enum-valued parameters a label shows, by attribute type.
_ENUM_NAMES: Dict[int, Dict[int, str]] = {
    _C.TYPE_POINTWISE_MODE_EXT: {int(m): m.name for m in pointwise_mode},
    _C.TYPE_REDUCTION_OPERATOR_TYPE_EXT: _prefixed("REDUCE_TENSOR_"),
    _C.TYPE_RESAMPLE_MODE_EXT: _prefixed("RESAMPLE_", skip=("RESAMPLE_AVGPOOL",)),
    _C.TYPE_RESHAPE_MODE_EXT: _prefixed("RESHAPE_"),
    _C.TYPE_NORM_MODE_EXT: {int(getattr(_C, n)): n for n in (
        "LAYER_NORM", "RMS_NORM", "BATCH_NORM", "INSTANCE_NORM", "ADA_LAYER_NORM", "GROUP_NORM")},
    _C.TYPE_NORM_FWD_PHASE_EXT: {_C.NORM_FWD_INFERENCE: "inference",
                                 _C.NORM_FWD_TRAINING: "training"},
}


def op_label(op: "_Op") -> str:
    """The op table's name and the op's enum parameters: "pointwise ADD", "norm_forward
    LAYER_NORM training", "conv_fprop"."""
    words = [op.info.name]
    for attr, typ, values in op.params:
        names = _ENUM_NAMES.get(typ)
        if names is None:
            continue
        v = values[0] if isinstance(values, (list, tuple)) else values
        if isinstance(v, bool) or not isinstance(v, int):
            continue
        words.append(names.get(int(v), str(int(v))))
    return " ".join(words)


def _quote(text: str) -> str:
    """A DOT string literal; newlines in `text` become centred line breaks."""
    body = text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "")
    return '"' + body.replace("\n", "\\n") + '"'


def _dims(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def _packed(dims: Sequence[int], strides: Sequence[int]) -> bool:
    acc = 1
    for d, s in zip(reversed(dims), reversed(strides)):
        if d != 1 and s != acc:
            return False
        acc *= d
    return True


def _tensor_label(t: "Tensor", dtype: data_type) -> str:
    name = t.get_name() or f"uid {t.get_uid()}"
    dt = _C.dtype_name(dtype) if dtype != data_type.NOT_SET else "data type ?"
    if t.get_is_pass_by_value():
        value = t.get_value()
        head = f"{name} = {value:g}" if value is not None else f"{name} (runtime scalar)"
        return f"{head}\n{dt}"
    dims = t.get_dim()
    lines = [name, f"{_dims(dims) if dims else '[?]'} {dt}"]
    strides = t.get_stride()
    if dims and strides and len(strides) == len(dims) and not _packed(dims, strides):
        lines.append(f"strides {_dims(strides)}")
    return "\n".join(lines)


def _dataflow_order(ops: Sequence["_Op"]) -> List[int]:
    """Op indices so that each op comes after the ops whose results it reads (Kahn's
    algorithm, ties in the order the ops were added); ops caught in a cycle, which only an
    unvalidated graph can hold, follow in their own order."""
    producer: Dict[int, int] = {}
    for i, op in enumerate(ops):
        for _p, _a, t in op.outputs:
            producer.setdefault(id(t), i)
    needs: List[Set[int]] = []
    users: Dict[int, List[int]] = {}
    for i, op in enumerate(ops):
        deps = {producer[id(t)] for _p, _a, t in op.inputs
                if id(t) in producer and producer[id(t)] != i}
        needs.append(deps)
        for d in deps:
            users.setdefault(d, []).append(i)
    order: List[int] = []
    ready = [i for i in range(len(ops)) if not needs[i]]
    done: Set[int] = set()
    while ready:
        i = min(ready)
        ready.remove(i)
        order.append(i)
        done.add(i)
        for u in users.get(i, []):
            needs[u].discard(i)
            if not needs[u] and u not in done and u not in ready:
                ready.append(u)
    order += [i for i in range(len(ops)) if i not in done]
    return order


def _clusters(groups: Sequence["KernelGroup"], num_ops: int
              ) -> List[Tuple[List[int], List[int], "KernelGroup"]]:
    """(kernel numbers from 1, op indices placed in it, its first group) per cluster: a
    node sits in the first kernel that runs it, and kernels running the same nodes (a
    reduction cut into passes) share one cluster."""
    placed: Set[int] = set()
    out: List[Tuple[List[int], List[int], "KernelGroup"]] = []
    by_nodes: Dict[Tuple[int, ...], int] = {}
    for k, grp in enumerate(groups):
        key = tuple(grp.node_indices)
        if key in by_nodes:
            out[by_nodes[key]][0].append(k + 1)
            continue
        fresh = [i for i in grp.node_indices if i not in placed and 0 <= i < num_ops]
        if not fresh:
            continue
        placed.update(fresh)
        by_nodes[key] = len(out)
        out.append(([k + 1], fresh, grp))
    return out


def _kernel_title(numbers: List[int], grp: "KernelGroup") -> str:
    which = (f"kernel {numbers[0]}" if len(numbers) == 1 else
             "kernels " + ", ".join(str(n) for n in numbers))
    return "\n".join([f"{which}: {grp.kernel}"] + textwrap.wrap(grp.detail, 56))


def _plan_kernels(g: "pygraph") -> Tuple[str, Optional[List["KernelGroup"]], str]:
    """The engine of the plan execute() runs ("" before a plan is built), its kernel
    groups (None where the engine does not describe them) and why they are missing."""
    from .errors import HipdnnError

    engine = ""
    groups: Optional[List["KernelGroup"]] = None
    why_no_kernels = ""
    if g._state >= 3 and g._candidate >= 0:  # plans built: the one execute() runs
        engine = g.get_engine_name()
        try:
            groups = g.get_kernel_groups()
        except HipdnnError as e:
            why_no_kernels = str(e).splitlines()[0]
    return engine, groups, why_no_kernels


def _header(g: "pygraph", num_ops: int, engine: str, groups: Optional[List["KernelGroup"]],
            why_no_kernels: str, note: str) -> List[str]:
    """The first lines of the source: the title (graph, node count, engine or build
    state, `note`) and the default node and edge attributes."""
    title = [f"graph '{g.name}'" if g.name else "graph",
             f"{num_ops} node{'s' if num_ops != 1 else ''}"]
    if engine:
        space = g.get_memory_space().name.lower()
        more = (f", {len(groups)} kernel{'s' if len(groups) != 1 else ''}" if groups is not None
                else " (kernels not described)")
        title.append(f"engine {engine} ({space}){more}")
    else:
        title.append("not built" if g._state < 3 else "no plan built")
    if note:
        title.append(note)

    lines = [
        "digraph hipdnn {",
        f"  graph [label={_quote(chr(10).join([title[0] + ': ' + title[1]] + title[2:]))}, "
        f"labelloc=t, fontname={_quote(_FONT)}, fontsize=12, rankdir=TB, nodesep=0.25, "
        "ranksep=0.35];",
        f"  node [fontname={_quote(_FONT)}, fontsize=10];",
        f"  edge [fontname={_quote(_FONT)}, fontsize=8, color=\"#555555\"];",
    ]
    if why_no_kernels:
        lines.append(f"  // kernels: {why_no_kernels.replace(chr(10), ' ')}")
    return lines


def _tensor_stmt(g: "pygraph", t: "Tensor", j: int, produced: Set[int]) -> str:
    """Tensor number j: its label and its style (scalar, virtual, or real with a heavy
    border when an op writes it)."""
    dt = t.get_data_type()
    label = _quote(_tensor_label(t, g._default_dtype(t) if dt == data_type.NOT_SET else dt))
    if t.get_is_pass_by_value():
        style = (f'shape=ellipse, style="filled,dotted", fillcolor="{_SCALAR_FILL}", '
                 f'color="{_VIRTUAL_LINE}"')
    elif t.get_is_virtual():
        style = (f'shape=box, style="rounded,dashed", color="{_VIRTUAL_LINE}", '
                 f'fontcolor="#666666"')
    else:
        heavy = ", penwidth=2" if id(t) in produced else ""
        style = (f'shape=box, style="rounded,filled", fillcolor="{_REAL_FILL}", '
                 f'color="{_REAL_LINE}"{heavy}')
    kind = "scalar" if t.get_is_pass_by_value() else (
        "virtual" if t.get_is_virtual() else "real")
    return f"t{j} [label={label}, {style}, class=\"tensor {kind}\"];"


def _op_stmt(op: "_Op", i: int) -> str:
    """Node number i: its op label and name."""
    label = _quote(f"{op_label(op)}\n'{op.name}'")
    return (f'n{i} [label={label}, shape=box, style="filled", fillcolor="{_OP_FILL}", '
            f'color="{_OP_LINE}", class="op"];')


def _homes(ops: Sequence["_Op"], tensors: Sequence["Tensor"], index: Dict[int, int],
           clusters: Sequence[Tuple[List[int], List[int], "KernelGroup"]]
           ) -> Tuple[Dict[int, int], Dict[int, int]]:
    """Which kernel cluster each op is drawn in ({op index: cluster}), and the virtual
    tensors only one cluster's ops write and read ({tensor index: cluster})."""
    home: Dict[int, int] = {}  # op index -> cluster
    for c, (_nums, members, _grp) in enumerate(clusters):
        for i in members:
            home[i] = c
    touching: Dict[int, Set[int]] = {}  # tensor index -> clusters of the ops using it
    for i, op in enumerate(ops):
        for _p, _a, t in op.inputs + op.outputs:
            touching.setdefault(index[id(t)], set()).add(home.get(i, -1))
    inner: Dict[int, int] = {}  # tensor index -> the one cluster it lives in
    for j, t in enumerate(tensors):
        where = touching.get(j, set())
        if t.get_is_virtual() and not t.get_is_pass_by_value() and len(where) == 1 and \
                -1 not in where:
            inner[j] = next(iter(where))
    return home, inner


def to_dot(g: "pygraph", note: str = "") -> str:
    """Graphviz source for the graph (see the module's docstring); `note` is one more line
    of its title."""
    ops = list(g._ops)
    order = _dataflow_order(ops)
    tensors: List["Tensor"] = []
    index: Dict[int, int] = {}
    for i in order:
        for _p, _a, t in ops[i].inputs + ops[i].outputs:
            if id(t) not in index:
                index[id(t)] = len(tensors)
                tensors.append(t)
    produced = {id(t) for op in ops for _p, _a, t in op.outputs}
    engine, groups, why_no_kernels = _plan_kernels(g)
    lines = _header(g, len(ops), engine, groups, why_no_kernels, note)

    # Kernel clusters: their nodes, and the virtual tensors only they write and read.
    clusters = _clusters(groups, len(ops)) if groups else []
    home, inner = _homes(ops, tensors, index, clusters)
    position = {i: k for k, i in enumerate(order)}
    for c, (nums, members, grp) in enumerate(clusters):
        lines.append(f"  subgraph cluster_k{c} {{")
        lines.append(f"    label={_quote(_kernel_title(nums, grp))}; labeljust=l; "
                     f"style=\"rounded,filled\"; color=\"{_KERNEL_LINE}\"; "
                     f"fillcolor=\"{_KERNEL_FILL}\"; fontsize=9;")
        for i in sorted(members, key=position.__getitem__):
            lines.append("    " + _op_stmt(ops[i], i))
        for j in sorted(j for j, cc in inner.items() if cc == c):
            lines.append("    " + _tensor_stmt(g, tensors[j], j, produced))
        lines.append("  }")
    for i in order:
        if i not in home:
            lines.append("  " + _op_stmt(ops[i], i))
    for j in range(len(tensors)):
        if j not in inner:
            lines.append("  " + _tensor_stmt(g, tensors[j], j, produced))
    # Edges in dataflow order: each op's inputs, then its outputs.
    for i in order:
        for port, _a, t in ops[i].inputs:
            lines.append(f"  t{index[id(t)]} -> n{i} [label={_quote(port)}];")
        for port, _a, t in ops[i].outputs:
            lines.append(f"  n{i} -> t{index[id(t)]} [label={_quote(port)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(source: str, fmt: str = "svg", timeout: float = 60.0) -> bytes:
    """``dot -T<fmt>`` of the source; DotError when dot is missing, fails or takes longer
    than `timeout` seconds."""
    dot = shutil.which("dot")
    if dot is None:
        raise DotError("graphviz 'dot' is not on PATH (Debian: apt-get install graphviz); "
                       "write the .dot source instead")
    try:
        proc = subprocess.run([dot, f"-T{fmt}"], input=source.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise DotError(f"{dot} -T{fmt} took longer than {timeout:g} s") from None
    except OSError as e:
        raise DotError(f"{dot} could not run: {e}") from None
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        raise DotError(f"{dot} -T{fmt} failed (exit {proc.returncode}): {err}")
    return proc.stdout


def svg_or_none(source: str, timeout: float = REPR_TIMEOUT_S) -> Optional[str]:
    """The SVG text, or None when dot is missing, fails or is too slow (Jupyter then shows
    the text form)."""
    try:
        return render(source, "svg", timeout).decode("utf-8", "replace")
    except DotError:
        return None


def load(path: str, build: bool = False, engine: Optional[str] = None
         ) -> Tuple["pygraph", str]:
    """The graph serialized in the file at `path` (``pygraph.serialize()`` bytes, graph or
    plan bytes) and a note for its title.  Plan bytes are rebuilt on their engine where
    it is loaded, so the picture shows its kernels; graph bytes are built only with
    `build` (on `engine` if given, else as heuristics choose).  Nothing needs an engine
    just to draw: a plan whose engine is missing is drawn as its graph, with a note.
    DrawInputError names the path when the file cannot be read or holds no graph."""
    from .errors import HipdnnError
    from .pygraph import pygraph
    from .runtime import engines

    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise DrawInputError(f"cannot read '{path}': {e.strerror or e}") from None
    what = "a serialized hipdnn graph (pygraph.serialize() bytes)"
    if not data:
        raise DrawInputError(f"'{path}' is empty, not {what}")
    graph, plan = data, None
    if plan_bytes.is_plan_bytes(data):
        try:
            plan = plan_bytes.decode(data)
        except ValueError as e:
            raise DrawInputError(f"'{path}' holds damaged plan bytes: {e}") from None
        graph = plan.graph
    g = pygraph()
    try:
        g._adopt_graph(graph, None, bind=False)
    except (HipdnnError, ValueError) as e:
        detail = " ".join(str(e).split())
        raise DrawInputError(f"'{path}' is not {what}: {detail}") from None
    if plan is None and not build:
        return g, ""
    if plan is not None:
        name = next((e.name for e in engines() if e.id == plan.engine_id), None)
        if name is None:
            return g, f"plan for engine id 0x{plan.engine_id:016x}, not loaded here"
    built = pygraph()
    try:
        if plan is not None:
            built.deserialize(data)
        else:
            built.deserialize(graph)
            if engine:
                built.set_preferred_engine(engine)
            built.build([heur_mode.A, heur_mode.FALLBACK])
    except HipdnnError as e:
        first = str(e).splitlines()[0]
        return g, f"not built here: {first}"
    return built, ""
