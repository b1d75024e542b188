"""cudnn_frontend_api.py — which cuDNN frontend names a piece of Python uses, and whether
hipdnn has each (with the keywords given), found by reading the code, not running it.

    check([(cell_number, source), ...]) -> [(use, ok, why), ...]

A use is a module name (`cudnn.create_handle(handle=)`), a graph method
(`pygraph.sdpa(q=, k=, ...)`, `Graph.__call__(handle=)`) or a tensor method
(`tensor.set_uid()`).  Objects are followed through assignments, tuple unpacking and
`with ... as`: `cudnn.pygraph(...)` makes a pygraph, `cudnn.Graph(...)` a Graph, a
graph's op a tensor (or tuple of tensors), a tensor's setter the tensor.  Names of other
libraries (torch, numpy) are not uses.  Used by tools/cudnn_frontend_samples.py (--api).
"""
from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import hipdnn  # noqa: E402

_PYGRAPH = sys.modules["hipdnn.pygraph"]
# A graph method whose result is not a tensor.
_NOT_TENSOR = {"validate", "build_operation_graph", "create_execution_plans", "check_support",
               "build_plans", "build", "execute", "get_workspace_size", "serialize",
               "deserialize", "set_io_tuples", "execute_plan_at_index", "get_execution_plan_count",
               "get_engine_count", "populate_cuda_graph", "update_cuda_graph", "tensors"}


def _owner(kind: str) -> Any:
    return {"pygraph": hipdnn.pygraph, "Graph": hipdnn.Graph, "tensor": _PYGRAPH.Tensor}[kind]


def _keywords_missing(fn: Any, keywords: List[str]) -> List[str]:
    """The keywords `fn` does not take (none when it takes **kwargs or has no signature)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return []
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return []
    return [k for k in keywords if k not in params]


class _Checker:
    def __init__(self) -> None:
        self.kinds: Dict[str, Any] = {}  # variable -> "pygraph" / "Graph" / "tensor" / tuple
        self.uses: Dict[str, Tuple[bool, str]] = {}

    def record(self, use: str, ok: bool, why: str = "") -> None:
        if use not in self.uses or not ok:
            self.uses[use] = (ok, why)

    # -- expressions: their kind, recording the uses inside them --
    def kind(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Name):
            return self.kinds.get(node.id)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            chain = _cudnn_chain(node)
            if chain:
                self.module_name(chain, None)
                return None
            self.kind(node.value)
            return None
        for child in ast.iter_child_nodes(node):
            self.kind(child)
        return None

    def call(self, node: ast.Call) -> Any:
        for a in node.args:
            self.kind(a)
        for k in node.keywords:
            self.kind(k.value)
        keywords = [k.arg for k in node.keywords if k.arg]
        f = node.func
        chain = _cudnn_chain(f)
        if chain:
            self.module_name(chain, keywords)
            return {"pygraph": "pygraph", "Graph": "Graph"}.get(chain[-1]) \
                if len(chain) == 1 else None
        if isinstance(f, ast.Attribute):
            recv = self.kind(f.value)
            if recv in ("pygraph", "Graph", "tensor"):
                return self.method(recv, f.attr, keywords)
            return None
        recv = self.kind(f)
        if recv == "Graph":
            self.method("Graph", "__call__", keywords)
        return None

    def module_name(self, chain: List[str], keywords: Optional[List[str]]) -> None:
        obj: Any = hipdnn
        for i, part in enumerate(chain):
            try:
                obj = getattr(obj, part)
            except (AttributeError, ImportError) as e:
                use = "cudnn." + ".".join(chain[:i + 1])
                self.record(use, False, f"{type(e).__name__}: {e}"[:160])
                return
        use = "cudnn." + ".".join(chain)
        if keywords is None or not callable(obj) or isinstance(obj, type) and \
                issubclass(obj, int):
            self.record(use, True)
            return
        self._with_keywords(use, obj, keywords)

    def method(self, kind: str, name: str, keywords: List[str]) -> Any:
        owner = _owner(kind)
        fn = getattr(owner, name, None)
        label = "tensor" if kind == "tensor" else kind
        if fn is None and kind == "Graph":
            fn = getattr(hipdnn.pygraph, name, None)  # the wrapper's ops are pygraph's
        elif kind == "Graph" and name not in vars(hipdnn.Graph):
            pass
        elif kind == "Graph" and name != "__call__" and hasattr(hipdnn.pygraph, name):
            fn = getattr(hipdnn.pygraph, name)  # forwarded with *args, **kwargs
        use = f"{label}.{name}"
        if fn is None:
            self.record(f"{use}()", False, f"hipdnn's {owner.__name__} has no {name}")
            return "tensor" if kind != "tensor" else None
        self._with_keywords(use, fn, keywords)
        if kind == "tensor":
            return "tensor" if name.startswith("set_") else None
        return None if name in _NOT_TENSOR or name.startswith("get_") else "tensor"

    def _with_keywords(self, use: str, fn: Any, keywords: List[str]) -> None:
        self.record(f"{use}()", True)
        missing = set(_keywords_missing(fn, keywords))
        for k in keywords:
            self.record(f"{use}({k}=)", k not in missing,
                        "not a keyword hipdnn takes" if k in missing else "")

    # -- statements, in order --
    def bind(self, target: ast.AST, kind: Any) -> None:
        if isinstance(target, ast.Name):
            self.kinds[target.id] = kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            for i, t in enumerate(target.elts):
                sub = kind if kind == "tensor" else (
                    kind[i] if isinstance(kind, tuple) and i < len(kind) else None)
                self.bind(t, sub)

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            kind = self.kind(node.value)
            for t in node.targets:
                self.bind(t, kind)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                kind = self.kind(item.context_expr)
                if _cudnn_chain(getattr(item.context_expr, "func", None)) == ["graph"]:
                    kind = ("pygraph", None)  # with cudnn.graph(handle) as (g, uids)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, kind)
            self.block(node.body)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in node.decorator_list:
                self.kind(d)
            self.block(node.body)
        else:
            for field_name, value in ast.iter_fields(node):
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    self.block(value)
                elif isinstance(value, list):
                    for v in value:
                        if isinstance(v, ast.AST):
                            self.walk_other(v)
                elif isinstance(value, ast.AST):
                    self.kind(value)

    def walk_other(self, node: ast.AST) -> None:
        if isinstance(node, ast.excepthandler):
            if node.type is not None:
                self.kind(node.type)
            self.block(node.body)
        else:
            self.kind(node)

    def block(self, body: List[ast.stmt]) -> None:
        for s in body:
            self.stmt(s)


def _cudnn_chain(node: Optional[ast.AST]) -> List[str]:
    """["pygraph"] for `cudnn.pygraph`, ["data_type", "HALF"] for `cudnn.data_type.HALF`."""
    parts: List[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "cudnn" and parts:
        return parts[::-1]
    return []


def check(cells: List[Tuple[int, str]]) -> List[Tuple[str, bool, str]]:
    """The uses in the cells, in order of first use: (use, hipdnn has it, why not)."""
    c = _Checker()
    for _number, source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        c.block(tree.body)
    return [(use, ok, why) for use, (ok, why) in c.uses.items()]
