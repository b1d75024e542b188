#!/usr/bin/python3
"""cudnn_frontend_samples.py — runs cuDNN frontend's sample notebooks with `cudnn` resolved to
hipdnn and nothing else changed, and tells each notebook's outcome (issue 28).

    python3 tools/cudnn_frontend_samples.py --samples DIR [--out FILE] [--only RE]
                                            [--timeout S] [--budget S] [-j N]
    python3 tools/cudnn_frontend_samples.py --samples DIR --list [-v]   # cells kept, dropped
    python3 tools/cudnn_frontend_samples.py --samples DIR --api          # names each one uses

DIR is cuDNN frontend's `samples/python` folder, fetched by the caller (never kept in this
repository).  Each notebook's code cells run in order as one script, in a fresh Python
process whose working folder holds a `cudnn.py` that makes `import cudnn` return hipdnn.
Shell and magic lines (`!pip ...`, `%...`, `get_ipython()...`) are dropped (a `pass` keeps
the cell's line numbers), and so are cells that only install or print (every statement a
print()/display() or a shell call).  Cells are numbered from 1 in notebook order, markdown
cells included, as they stand in the notebook.

Outcomes: passed (the script ran to its end: the notebook's own assert_close and assert
lines are the checks); failed (the exception's first line and the cell it came from; a
timeout or a crash says so); not supported (hipdnn raised FeatureNotSupportedError or
cudnnGraphNotSupportedError: an operation or argument no engine of hipdnn runs, with its
message); skipped (the notebook needs what the machine lacks: torch, a CUDA/ROCm device,
a module not installed, or one of its asserts on the cuDNN version or the device, quoted).
A notebook that imports torch is skipped at once when torch or its GPU is missing, so
that notebooks guarded by `if torch.cuda.is_available()` do not pass without running.

The Markdown report (--out) has one row per notebook, the failures' tracebacks, and the
cuDNN frontend names each notebook calls with whether hipdnn has them (the --api check,
tools/cudnn_frontend_api.py).  Needs a GPU and torch with CUDA (or ROCm), as the
notebooks do.
"""
from __future__ import annotations

import argparse
import ast
import collections
import concurrent.futures
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ALIAS = "import sys\nimport hipdnn\nsys.modules[__name__] = hipdnn\n"
OUTCOMES = ("passed", "failed", "not supported", "skipped")

# Cell magics whose body is Python (run it); any other (%%bash, %%writefile...) drops the cell.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
_SHELL_CALLS = {"os.system", "subprocess.run", "subprocess.call", "subprocess.check_call",
                "subprocess.check_output", "subprocess.Popen"}


@dataclass
class Cell:
    """One code cell: its number (1-based, in notebook order), the source that runs (with
    dropped lines as `pass`), the lines dropped and, when the whole cell is, why."""
    number: int
    source: str
    original: str
    dropped: List[str] = field(default_factory=list)
    why_dropped: str = ""

    @property
    def kept(self) -> bool:
        return not self.why_dropped


def _drop_line(line: str) -> bool:
    s = line.lstrip()
    return s.startswith(("!", "%")) or s.startswith("get_ipython(")


def clean_source(src: str) -> Tuple[str, List[str], str]:
    """(runnable source, dropped lines, why the whole cell is dropped or "")."""
    lines = src.splitlines()
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split()[0] if first[2:].split() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return "", lines, f"cell magic %%{magic}"
    out: List[str] = []
    dropped: List[str] = []
    continued = False  # a dropped shell line ending in a backslash goes on
    indent = ""
    for line in lines:
        if continued or _drop_line(line):
            if not continued:  # a continuation keeps its command's indentation
                indent = line[:len(line) - len(line.lstrip())]
            dropped.append(line)
            continued = line.rstrip().endswith("\\")
            out.append(f"{indent}pass")
            continue
        out.append(line)
    text = "\n".join(out) + ("\n" if out else "")
    return text, dropped, _why_dropped(text)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _why_dropped(text: str) -> str:
    """Why a cleaned cell does not run: nothing left, or only prints and shell calls."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return ""  # run it: the error is the notebook's, and is reported as such
    body = [s for s in tree.body if not isinstance(s, ast.Pass)]
    if not body:
        return "no code (comments or magics only)"
    for s in body:
        call = s.value if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) else None
        name = _dotted(call.func) if call is not None else ""
        if name not in ("print", "display") and name not in _SHELL_CALLS:
            return ""
    return "only installs or prints"


def read_cells(path: Path) -> List[Cell]:
    """The notebook's code cells, cleaned."""
    nb = json.loads(path.read_text())
    cells = []
    for i, c in enumerate(nb.get("cells", []), start=1):
        if c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        text, dropped, why = clean_source(src)
        cells.append(Cell(i, text, src, dropped, why))
    return cells


def notebooks(folder: Path, only: Optional[str]) -> List[Path]:
    return sorted(p for p in folder.glob("*.ipynb")
                  if not only or re.search(only, p.name))


# ---- running ------------------------------------------------------------------------

# Runs in the notebook's process: the cells in one namespace, each compiled under its own
# file name ("<cell 12>") so that tracebacks and the outcome name it.  Writes the outcome
# as JSON; the number of the cell being run goes to a progress file first, for timeouts
# and crashes.
DRIVER = r'''import json, linecache, sys, traceback
cells = json.load(open(sys.argv[1]))
result, progress, needs_torch = sys.argv[2], sys.argv[3], sys.argv[4] == "1"
VERSION_WORDS = ("backend_version", "version", "is_available", "get_device_capability",
                 "device_count", "get_device_properties")

def write(outcome, cell=None, detail="", tb=""):
    json.dump({"outcome": outcome, "cell": cell, "detail": detail, "traceback": tb},
              open(result, "w"))
    sys.exit(0)

def first_line(e):
    text = str(e).strip()
    return type(e).__name__ + (": " + text.splitlines()[0] if text else "")

def failing_assert(e, number, source):
    """The source of the assert statement that raised e, from its frame in the cell."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == f"<cell {number}>"]
    if not frames:
        return ""
    import ast
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert) and node.lineno <= frames[-1].lineno <= node.end_lineno:
            return ast.get_source_segment(source, node) or ""
    return ""

def classify(e, number, source):
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))[-3000:]
    hipdnn = sys.modules.get("hipdnn")
    if hipdnn is not None and isinstance(e, hipdnn.GraphNotSupportedError):
        whole = " ".join(str(e).split())  # its lines name each node and reason
        write("not supported", number, f"{type(e).__name__}: {whole}"[:600], tb)
    if isinstance(e, ImportError) and e.name and e.name.split(".")[0] not in ("cudnn", "hipdnn"):
        write("skipped", number, f"needs the module {e.name!r}, which is not installed", tb)
    if isinstance(e, AssertionError):
        stmt = failing_assert(e, number, source)
        if any(w in stmt for w in VERSION_WORDS):
            write("skipped", number, "the notebook's own gate: " + " ".join(stmt.split()), tb)
    write("failed", number, first_line(e), tb)

if needs_torch:
    try:
        import torch
    except ImportError as e:
        write("skipped", None, f"needs torch ({e})")
    if not torch.cuda.is_available():
        write("skipped", None, "needs a GPU: torch.cuda.is_available() is False")
namespace = {"__name__": "__main__", "__builtins__": __builtins__}
for number, source in cells:
    with open(progress, "w") as f:
        f.write(str(number))
    name = f"<cell {number}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    try:
        exec(compile(source, name, "exec"), namespace)
    except SystemExit as e:
        if e.code not in (None, 0):
            write("failed", number, f"SystemExit: {e.code}")
        break
    except BaseException as e:
        classify(e, number, source)
write("passed")
'''


@dataclass
class Result:
    notebook: str
    outcome: str
    cell: Optional[int] = None
    detail: str = ""
    traceback: str = ""
    seconds: float = 0.0
    output: str = ""


def _imports_torch(cells: List[Cell]) -> bool:
    return any(re.search(r"^\s*(import torch\b|from torch\b)", c.source, re.M)
               for c in cells if c.kept)


def _hipdnn_path() -> str:
    """Where `import hipdnn` comes from for the runner (so the notebooks see the same one):
    an installed hipdnn, else this checkout."""
    spec = importlib.util.find_spec("hipdnn")
    if spec is not None and spec.origin:
        return str(Path(spec.origin).resolve().parents[1])
    return str(Path(__file__).resolve().parents[1])


def run_notebook(path: Path, timeout: float) -> Result:
    """One notebook in a fresh process and scratch folder."""
    cells = read_cells(path)
    kept = [(c.number, c.source) for c in cells if c.kept]
    with tempfile.TemporaryDirectory(prefix="hipdnn-sample-") as tmp:
        work = Path(tmp)
        (work / "cudnn.py").write_text(ALIAS)
        (work / "_hipdnn_sample_driver.py").write_text(DRIVER)
        (work / "cells.json").write_text(json.dumps(kept))
        result, progress = work / "result.json", work / "progress.txt"
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [_hipdnn_path()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.setdefault("MPLBACKEND", "Agg")
        cmd = [sys.executable, "_hipdnn_sample_driver.py", "cells.json", str(result),
               str(progress), "1" if _imports_torch(cells) else "0"]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        timed_out = False
        try:
            out, _ = proc.communicate(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        seconds = time.monotonic() - start
        cell = int(progress.read_text()) if progress.exists() else None
        if timed_out:
            return Result(path.stem, "failed", cell, f"timed out after {timeout:.0f} s",
                          "", seconds, out or "")
        if not result.exists():
            rc = proc.returncode
            how = f"signal {-rc}" if rc < 0 else f"exit code {rc}"
            return Result(path.stem, "failed", cell, f"the process died ({how})", "",
                          seconds, out or "")
        r = json.loads(result.read_text())
        return Result(path.stem, r["outcome"], r["cell"], r["detail"], r["traceback"],
                      seconds, out or "")


def run_all(paths: List[Path], timeout: float, budget: float, jobs: int) -> List[Result]:
    """Every notebook, `jobs` at a time; those not started within the budget are
    reported as not reached (failed)."""
    start = time.monotonic()

    def one(p: Path) -> Result:
        left = budget - (time.monotonic() - start)
        if left < 5:
            return Result(p.stem, "failed", None, "not reached: the budget ran out")
        r = run_notebook(p, min(timeout, left))
        print(f"{r.notebook}: {r.outcome}" + (f" (cell {r.cell}: {r.detail})" if r.detail
                                                 else ""), flush=True)
        return r

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        return list(pool.map(one, paths))


# ---- the report ---------------------------------------------------------------------

def _md(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def report(results: List[Result], api: Optional[Dict[str, List[Tuple[str, bool, str]]]]) -> str:
    lines = ["| notebook | outcome | cell | detail | s |", "|---|---|---:|---|---:|"]
    for r in results:
        lines.append(f"| {r.notebook} | {r.outcome} | {r.cell or ''} | {_md(r.detail[:300])} "
                     f"| {r.seconds:.0f} |")
    count = collections.Counter(r.outcome for r in results)
    lines += ["", "**all**: " + ", ".join(f"{count[o]} {o}" for o in OUTCOMES)
              + f" of {len(results)} notebooks"]
    for r in results:
        if r.outcome == "failed":
            lines += ["", f"### {r.notebook}: failed in cell {r.cell}", "```",
                      (r.traceback or r.output[-2000:]).rstrip(), "```"]
    if api is not None:
        lines += ["", "## cuDNN frontend names the notebooks use", "",
                  "| notebook | names | hipdnn lacks |", "|---|---:|---|"]
        for name, uses in api.items():
            missing = [f"`{u}` ({why})" if why else f"`{u}`" for u, ok, why in uses if not ok]
            lines.append(f"| {name} | {len(uses)} | {_md(', '.join(missing)) or '-'} |")
    return "\n".join(lines) + "\n"


def api_uses(paths: List[Path]) -> Dict[str, List[Tuple[str, bool, str]]]:
    """For each notebook, the cuDNN frontend names its kept cells use, checked against
    hipdnn (tools/cudnn_frontend_api.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import cudnn_frontend_api
    return {p.stem: cudnn_frontend_api.check([(c.number, c.source) for c in read_cells(p)
                                             if c.kept]) for p in paths}


def list_cells(paths: List[Path], verbose: bool) -> str:
    out = []
    for p in paths:
        cells = read_cells(p)
        kept = sum(c.kept for c in cells)
        out.append(f"== {p.name}: {kept} of {len(cells)} code cells kept")
        for c in cells:
            state = "kept" if c.kept else f"dropped ({c.why_dropped})"
            out.append(f"  cell {c.number}: {state}, {len(c.original.splitlines())} lines")
            for line in c.dropped:
                out.append(f"      - {line}")
            if verbose and c.kept:
                out += [f"      | {line}" for line in c.source.splitlines()]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=Path, required=True, help="cuDNN frontend's samples/python")
    ap.add_argument("--out", type=Path, help="the Markdown report (default: stdout)")
    ap.add_argument("--only", help="a regular expression the notebook names must match")
    ap.add_argument("--timeout", type=float, default=240, help="seconds per notebook")
    ap.add_argument("--budget", type=float, default=540, help="seconds for all notebooks")
    ap.add_argument("-j", "--jobs", type=int, default=4, help="notebooks run at once (one GPU)")
    ap.add_argument("--list", action="store_true", help="print the cells kept and dropped")
    ap.add_argument("--api", action="store_true", help="print the names each notebook uses")
    ap.add_argument("-v", "--verbose", action="store_true", help="--list: the kept source too")
    opts = ap.parse_args()
    paths = notebooks(opts.samples, opts.only)
    if not paths:
        print(f"no notebooks in {opts.samples}", file=sys.stderr)
        return 2
    if opts.list or opts.api:
        if opts.list:
            print(list_cells(paths, opts.verbose), end="")
        if opts.api:
            for name, uses in api_uses(paths).items():
                print(f"== {name}")
                for use, ok, why in uses:
                    print(f"  {'ok ' if ok else 'MISSING'} {use}" + (f"  ({why})" if why else ""))
        return 0
    results = run_all(paths, opts.timeout, opts.budget, opts.jobs)
    try:
        api = api_uses(paths)
    except Exception as e:  # the run's outcomes matter more than the static check
        print(f"API check failed: {e}", file=sys.stderr)
        api = None
    text = report(results, api)
    if opts.out:
        opts.out.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
