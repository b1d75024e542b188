"""The standing of benchmarks/RESULTS.md, computed from the runs in benchmarks/history/.

    python3 benchmarks/results.py check          # exit 1 if RESULTS.md's standing is not what
                                                 # history/ gives (or history/README.md is stale)
    python3 benchmarks/results.py rebuild        # rewrite both from history/
    python3 benchmarks/results.py add RUN.md     # a run written by `gpu_bench.py --markdown
                                                 # RUN.md` (or gpu_matmul_bench.py's,
                                                 # ort_model_bench.py's): into history/,
                                                 # then rebuild

Each file of history/ is one run (or a few runs of one day, as first written), verbatim,
under a metadata comment that says what its text does not say in a fixed form:

    <!-- benchmark run
    name: run 25
    device: NVIDIA H200
    date: 2026-11-27
    commit: 70e5a4e
    -->

Memory-bound GPU runs are named "run 28", compute-bound ones (gpu_matmul_bench.py's
markdown tables, TFLOP/s) "run M11", whole models through hipdnn-ep (ort_model_bench.py's
markdown tables) "run E1".  `commit` and, for CPU runs, `threads` may list one
value per table of the file, in order.
A commit followed by † was not written in the run's text: it is the commit that holds the
code measured, from git log; "—" is one that cannot be told; a trailing "+" means
uncommitted changes on top of it.

The standing is, for each device, the latest row of each case: later files override
earlier ones, and later tables of a file earlier tables.  For a GPU case the row is
hipdnn's default kernel (the first hipdnn row that states a ratio against PyTorch eager,
else the first hipdnn row) with the PyTorch rows of the same table; a matmul table's
ratio against torch.compile, which it does not state, is worked out from the two times;
so are a model table's, whose row is each model's first timed hipdnn-ep row (device I/O
where it ran) with the ORT CPU EP's and PyTorch's times.
Only the notes are written by hand: `rebuild` keeps a row's note while the row is below
one of its anchors, drops it when it is not, and says "cause not recorded" where a row
below has none.

Pure Python: gpu_bench.py, gpu_matmul_bench.py and ort_model_bench.py format their
tables and entries with it, tests/test_bench_results.py checks it without a GPU.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
HISTORY = HERE / "history"
INDEX = "README.md"

HOST_CASE = "tiny relu, host time"
BEGIN = ("<!-- standing: begin. benchmarks/results.py writes what lies between these two "
         "markers from benchmarks/history/; edit only the notes -->")
END = "<!-- standing: end -->"
THIS_RUN = "this run"
NONE = "—"

GPU_COLUMNS = ["case", "hipdnn", "ms", "of copy", "torch eager ms", "vs eager",
               "torch.compile ms", "vs torch.compile", "date", "commit", "run", "note"]
HOST_COLUMNS = ["call", "us per call", "vs torch.relu", "date", "commit", "run", "note"]
CPU_COLUMNS = ["case", "shape", "threads", "hipdnn ms", "NumPy ms", "speed hipdnn/NumPy",
               "date", "commit", "run", "note"]
MATMUL_COLUMNS = ["case", "hipdnn", "ms", "TFLOP/s", "torch eager ms", "vs eager",
                  "torch.compile ms", "vs torch.compile", "date", "commit", "run", "note"]
MODEL_COLUMNS = ["model", "hipdnn-ep", "ms", "took", "ORT CPU ms", "torch eager ms", "vs eager",
                 "torch.compile ms", "vs torch.compile", "date", "commit", "run", "note"]
COLUMNS = {"gpu": GPU_COLUMNS, "host": HOST_COLUMNS, "matmul": MATMUL_COLUMNS,
           "model": MODEL_COLUMNS, "cpu": CPU_COLUMNS}
ALIGN = {"gpu": "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|",
         "host": "|---|---:|---:|---|---|---|---|",
         "matmul": "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|",
         "model": "|---|---|---:|---|---:|---:|---:|---:|---:|---|---|---|---|",
         "cpu": "|---|---|---:|---:|---:|---:|---|---|---|---|"}
CAPTION = {"host": "Host time of one execute of a tiny graph (relu over 16 floats), the GPU idle:",
           "matmul": "Matmul and convolution (compute-bound, `gpu_matmul_bench.py`), TFLOP/s = "
                     "2MNK/time; torch eager is cuBLAS or cuDNN:",
           "model": "Whole models through ONNX Runtime (`ort_model_bench.py`), fp32, median ms a "
                    "run: hipdnn-ep on the GPU against ORT's CPU EP and PyTorch on the GPU:"}
# the columns of gpu_matmul_bench.py's markdown table, a run table of its own kind
MATMUL_RUN_COLUMNS = ["case", "implementation", "ms", "TFLOP/s", "vs torch eager", "note"]
# the columns of ort_model_bench.py's markdown table
MODEL_RUN_COLUMNS = ["model", "implementation", "ms", "vs torch eager", "err vs ORT CPU",
                     "hipdnn-ep took", "note"]
ANCHORS = {"vs eager": "torch eager", "vs torch.compile": "torch.compile",
           "vs torch.relu": "torch.relu", "speed hipdnn/NumPy": "NumPy"}


# ---- a GPU run's table, as gpu_bench.py prints it -------------------------------------------

def _pad(text: str, width: int) -> str:
    """text in a column `width` wide and a space: two spaces at least after it, so that a
    long name still parses."""
    return (text + " ").ljust(width) + " "


def format_run_table(results: Sequence, device: str, copy_gbs: float, copy_bytes: int) -> List[str]:
    """The lines of gpu_bench.py's table.  `results` have case, impl, ms (None for a row
    without a time: its note says why), gbs, of_copy (a fraction) and note; a hipdnn row's
    ratios are the PyTorch rows' times of the same case over its time."""
    head = (f"{'case (elements)':<30} {'implementation':<34} {'time':>10} {'GB/s':>8} "
            f"{'of copy':>8}  ratios")
    lines = [f"device: {device}  |  D2D copy bandwidth {copy_gbs / 1e3:.2f} TB/s "
             f"({copy_bytes / 2**20:.0f} MiB copied)", head, "-" * len(head)]
    by_case: Dict[str, Dict[str, object]] = {}
    for r in results:
        by_case.setdefault(r.case, {})[r.impl] = r
    for r in results:
        if r.ms is None:
            lines.append(f"{_pad(r.case, 30)}{_pad(r.impl, 34)}{'':>10} {'':>8} {'':>8}  {r.note}")
            continue
        ratios = ""
        if r.impl.startswith("hipdnn"):
            for name in ("torch eager", "torch.compile"):
                o = by_case[r.case].get(name)
                if o is not None and o.ms:
                    ratios += f"{o.ms / r.ms:.2f}x vs {name}  "
        lines.append(f"{_pad(r.case, 30)}{_pad(r.impl, 34)}{r.ms:>8.3f}ms {r.gbs:>8.0f} "
                     f"{100 * r.of_copy:>7.1f}%  {ratios}{r.note}".rstrip())
    return lines


@dataclass
class Line:
    """One row of a GPU run's table as printed: the numbers as strings, as written."""
    case: str
    impl: str
    ms: str = ""       # "0.393"; "" for host-time rows and rows without a time
    of_copy: str = ""  # "98.0%"
    us: str = ""       # host-time rows: "10.3"
    rest: str = ""     # what follows: stated ratios, "(ran: ...)", why a row has no time

    def ratio(self, anchor: str) -> str:
        m = re.search(r"(\d+\.\d+)x vs " + re.escape(anchor) + r"(?!\S)", self.rest)
        return m[1] + "x" if m else ""


_TIMED = re.compile(r"(?P<case>\S.*?)\s{2,}(?P<impl>\S.*?)\s{2,}(?P<ms>\d+\.\d+)ms\s+\d+\s+"
                    r"(?P<copy>\d+\.\d+%)(?P<rest>.*)")
_HOST = re.compile(r"(?P<case>\S.*?)\s{2,}(?P<impl>\S.*?)\s{2,}(?P<us>\d+\.\d+) us per call"
                   r"(?P<rest>.*)")
_UNTIMED = re.compile(r"(?P<case>\S.*?)\s{2,}(?P<impl>\S.*?)\s{2,}"
                      r"(?P<rest>(?:WRONG|failed|n/a|skipped)\b.*)")


def parse_line(text: str) -> Optional[Line]:
    s = text.strip()
    m = _TIMED.fullmatch(s)
    if m:
        return Line(m["case"], m["impl"], ms=m["ms"], of_copy=m["copy"], rest=m["rest"].strip())
    m = _HOST.fullmatch(s)
    if m:
        return Line(m["case"], m["impl"], us=m["us"], rest=m["rest"].strip())
    m = _UNTIMED.fullmatch(s)
    if m:
        return Line(m["case"], m["impl"], rest=m["rest"].strip())
    return None


def _furniture(s: str) -> bool:
    """A GPU table's device line, column heads or rule: inside a table, not a row."""
    return (s.startswith("device: ") or (s.startswith("case ") and "implementation" in s)
            or (len(s) > 10 and set(s) == {"-"}))


def case_name(label: str) -> str:
    """"layernorm (2^27)" -> "layernorm": a case is the same case at another size."""
    return re.sub(r"\s*\(2\^\d+\)$", "", label)


# ---- history entries -------------------------------------------------------------------------

_META = re.compile(r"\A<!-- benchmark run\n(?P<fields>.*?)\n-->\n", re.S)


@dataclass
class Table:
    kind: str                      # "gpu" (Lines); "cpu", "matmul", "model" (markdown rows, dicts)
    rows: list


@dataclass
class Entry:
    path: Path
    meta: Dict[str, str]
    body: str                      # the run's text, verbatim
    tables: List[Table] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.meta.get("name", self.path.stem)

    def per_table(self, key: str) -> List[str]:
        """A metadata field with one value for every table (one value: the same for all)."""
        values = [v.strip() for v in self.meta.get(key, "").split(",")] if key in self.meta else []
        if len(values) == 1:
            values *= len(self.tables)
        if len(values) != len(self.tables):
            raise ValueError(f"{self.path.name}: {key!r} gives {len(values)} values for "
                             f"{len(self.tables)} tables")
        return values


def _cells(line: str) -> List[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _markdown_kind(s: str) -> Optional[str]:
    """"cpu", "matmul" or "model" where s is the header of a run's markdown table, else None
    (a standing table, with its commit column, is not a run)."""
    if not s.startswith("|") or "commit" in s:
        return None
    if "hipdnn ms" in s and "NumPy ms" in s:
        return "cpu"
    columns = _cells(s)
    if "model" in columns and "implementation" in columns:
        return "model"
    return "matmul" if "implementation" in columns and "TFLOP/s" in columns else None


def parse_tables(body: str) -> List[Table]:
    """The run tables of a history entry, in order: GPU tables (rows as gpu_bench.py prints
    them), CPU tables (markdown, with "hipdnn ms" and "NumPy ms" columns), matmul tables
    (markdown, as gpu_matmul_bench.py writes them: "implementation" and "TFLOP/s" columns)
    and model tables (ort_model_bench.py's: "model" and "implementation" columns).
    Other tables (standing, aims, profiles) are not runs."""
    tables: List[Table] = []
    current: Optional[Table] = None
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        s = lines[i].strip()
        kind = _markdown_kind(s)
        if kind:
            columns = _cells(s)
            rows = []
            i += 2                                    # the |---| line
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(dict(zip(columns, _cells(lines[i]))))
                i += 1
            tables.append(Table(kind, rows))
            current = None
            continue
        line = parse_line(s) if s else None
        if line is not None:
            if current is None:
                current = Table("gpu", [])
                tables.append(current)
            current.rows.append(line)
        elif not _furniture(s):
            current = None
        i += 1
    return tables


def parse_entry(path: Path, text: Optional[str] = None) -> Entry:
    text = path.read_text(encoding="utf-8") if text is None else text
    m = _META.match(text)
    if not m:
        raise ValueError(f"{path.name}: does not start with a '<!-- benchmark run' comment")
    meta = {}
    for line in m["fields"].splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"{path.name}: metadata line {line!r} is not 'key: value'")
        meta[key.strip()] = value.strip()
    for key in ("device", "date", "commit"):
        if key not in meta:
            raise ValueError(f"{path.name}: metadata lacks {key!r}")
    if not re.fullmatch(r"\d{4}-\d\d-\d\d", meta["date"]):
        raise ValueError(f"{path.name}: date {meta['date']!r} is not YYYY-MM-DD")
    body = text[m.end():]
    entry = Entry(path, meta, body, parse_tables(body))
    entry.per_table("commit")
    if any(t.kind == "cpu" for t in entry.tables):
        entry.per_table("threads")
    return entry


def entry_sort_key(path: Path) -> Tuple[int, str]:
    """Files are named DATE-SEQ-slug.md; SEQ orders them."""
    m = re.match(r"\d{4}-\d\d-\d\d-(\d+)-", path.name)
    if not m:
        raise ValueError(f"history/{path.name}: not named DATE-SEQ-slug.md")
    return int(m[1]), path.name


def read_history(history: Path = HISTORY) -> List[Entry]:
    paths = sorted((p for p in history.glob("*.md") if p.name != INDEX), key=entry_sort_key)
    return [parse_entry(p) for p in paths]


# ---- standing rows ---------------------------------------------------------------------------

@dataclass
class Row:
    """One row of a standing table."""
    device: str
    kind: str                      # "gpu", "host", "matmul", "model" or "cpu"
    key: Tuple[str, ...]           # what a later row replaces it by
    cells: Dict[str, str]          # every column but run and note
    run: Optional[Tuple[str, str]]  # (name, file name) of the entry; None: "this run"
    note: str = ""

    def below(self) -> List[str]:
        """The anchors this row is slower than."""
        out = []
        for column, anchor in ANCHORS.items():
            m = re.match(r"(\d+(?:\.\d+)?)x?$", self.cells.get(column, ""))
            if m and float(m[1]) < 1.0:
                out.append(anchor)
        return out


def commit_cell(commit: str) -> str:
    """"70e5a4e" -> "`70e5a4e`"; "7b1d635†" -> "`7b1d635`†"; "—" stays."""
    m = re.fullmatch(r"([0-9a-f]{7,40}\+?)(†?)", commit)
    return f"`{m[1]}`{m[2]}" if m else commit


def _ratio(anchor: str, hipdnn: str) -> str:
    """The anchor's time over hipdnn's, as the tables write a ratio: "0.91x"."""
    return f"{float(anchor) / float(hipdnn):.2f}x"


def _by_case(rows: Iterable, case) -> Dict[str, list]:
    """rows grouped by case(row), cases in order of first appearance."""
    out: Dict[str, list] = {}
    for r in rows:
        out.setdefault(case(r), []).append(r)
    return out


def gpu_rows(lines: Sequence[Line], device: str, date: str, commit: str,
             run: Optional[Tuple[str, str]]) -> List[Row]:
    """The standing rows one GPU table gives: each case's default hipdnn row against the
    PyTorch rows of the table, and the host-time rows."""
    where = {"date": date, "commit": commit_cell(commit)}
    out = []
    for label, group in _by_case(lines, lambda ln: ln.case).items():
        if label == HOST_CASE:
            relu = next((ln for ln in group if ln.impl == "torch.relu" and ln.us), None)
            for ln in group:
                if not ln.us:
                    continue
                ratio = _ratio(relu.us, ln.us) if relu is not None and ln is not relu else NONE
                out.append(Row(device, "host", (ln.impl,),
                               {"call": ln.impl, "us per call": ln.us, "vs torch.relu": ratio,
                                **where}, run))
            continue
        hip = [ln for ln in group if ln.impl.startswith("hipdnn") and ln.ms]
        if not hip:
            continue
        pick = next((ln for ln in hip if ln.ratio("torch eager")), hip[0])
        anchor = {a: next((ln for ln in group if ln.impl == a and ln.ms), None)
                  for a in ("torch eager", "torch.compile")}
        out.append(Row(device, "gpu", (case_name(label),), {
            "case": label,
            "hipdnn": pick.impl[len("hipdnn"):].strip(),
            "ms": pick.ms,
            "of copy": pick.of_copy,
            "torch eager ms": anchor["torch eager"].ms if anchor["torch eager"] else NONE,
            "vs eager": pick.ratio("torch eager") or NONE,
            "torch.compile ms": anchor["torch.compile"].ms if anchor["torch.compile"] else NONE,
            "vs torch.compile": pick.ratio("torch.compile") or NONE,
            **where}, run))
    return out


def matmul_rows(rows: Sequence[Dict[str, str]], device: str, date: str, commit: str,
                run: Optional[Tuple[str, str]]) -> List[Row]:
    """The standing rows one matmul table gives: each case's default hipdnn row (the first
    that states a ratio against torch eager, else the first timed; rows with a forced tile
    come after it) against the PyTorch rows of the table."""
    out = []
    for case, group in _by_case(rows, lambda r: r["case"]).items():
        timed = [r for r in group if r["ms"]]
        hip = [r for r in timed if r["implementation"].startswith("hipdnn")]
        if not hip:
            continue
        pick = next((r for r in hip if r["vs torch eager"]), hip[0])
        eager = next((r for r in timed if r["implementation"].startswith("torch eager")), None)
        compiled = next((r for r in timed if r["implementation"] == "torch.compile"), None)
        out.append(Row(device, "matmul", (case,), {
            "case": case,
            # the engine's kernel name may end in a comma ("k split 2 ways,")
            "hipdnn": pick["implementation"][len("hipdnn"):].strip().rstrip(","),
            "ms": pick["ms"],
            "TFLOP/s": pick["TFLOP/s"],
            "torch eager ms": eager["ms"] if eager else NONE,
            "vs eager": pick["vs torch eager"] or NONE,
            "torch.compile ms": compiled["ms"] if compiled else NONE,
            "vs torch.compile": _ratio(compiled["ms"], pick["ms"]) if compiled else NONE,
            "date": date, "commit": commit_cell(commit)}, run))
    return out


def model_rows(rows: Sequence[Dict[str, str]], device: str, date: str, commit: str,
               run: Optional[Tuple[str, str]]) -> List[Row]:
    """The standing rows one model table gives: each model's first timed hipdnn-ep row (the
    device-I/O one where it ran, as PyTorch's inputs are on the device too) against the
    ORT CPU EP's, torch eager's (fp32) and torch.compile's times of the table."""
    out = []
    for model, group in _by_case(rows, lambda r: r["model"]).items():
        timed = {}
        for r in group:
            if r["ms"]:
                timed.setdefault(r["implementation"], r)
        hip = [r for impl, r in timed.items() if impl.startswith("hipdnn-ep")]
        if not hip:
            continue
        pick = hip[0]

        def ms(impl):
            return timed[impl]["ms"] if impl in timed else NONE

        def vs(impl):
            return _ratio(timed[impl]["ms"], pick["ms"]) if impl in timed else NONE
        out.append(Row(device, "model", (model,), {
            "model": model, "hipdnn-ep": pick["implementation"][len("hipdnn-ep"):].strip(" ,"),
            "ms": pick["ms"], "took": pick["hipdnn-ep took"] or NONE,
            "ORT CPU ms": ms("ORT CPU EP"), "torch eager ms": ms("torch eager"),
            "vs eager": vs("torch eager"), "torch.compile ms": ms("torch.compile"),
            "vs torch.compile": vs("torch.compile"), "date": date,
            "commit": commit_cell(commit)}, run))
    return out


def cpu_rows(rows: Sequence[Dict[str, str]], device: str, date: str, commit: str,
             threads: str, run: Optional[Tuple[str, str]]) -> List[Row]:
    return [Row(device, "cpu", (r["case"], r["shape"], threads), {
        "case": r["case"], "shape": r["shape"], "threads": threads,
        "hipdnn ms": r["hipdnn ms"], "NumPy ms": r["NumPy ms"],
        "speed hipdnn/NumPy": r["speed hipdnn/NumPy"],
        "date": date, "commit": commit_cell(commit)}, run) for r in rows]


def entry_rows(entry: Entry) -> List[Row]:
    """Every standing row the entry's tables give, in table order."""
    commits = entry.per_table("commit")
    threads = entry.per_table("threads") if "threads" in entry.meta else [""] * len(entry.tables)
    run = (entry.name, entry.path.name)
    out: List[Row] = []
    for table, commit, nthreads in zip(entry.tables, commits, threads):
        if table.kind == "gpu":
            out += gpu_rows(table.rows, entry.meta["device"], entry.meta["date"], commit, run)
        elif table.kind == "matmul":
            out += matmul_rows(table.rows, entry.meta["device"], entry.meta["date"], commit, run)
        elif table.kind == "model":
            out += model_rows(table.rows, entry.meta["device"], entry.meta["date"], commit, run)
        else:
            out += cpu_rows(table.rows, entry.meta["device"], entry.meta["date"], commit,
                            nthreads, run)
    return out


def standing(entries: Iterable[Entry]) -> Dict[str, Dict[Tuple, Row]]:
    """{device: {(kind, key): latest row}}, devices and rows in order of first appearance."""
    out: Dict[str, Dict[Tuple, Row]] = {}
    for entry in entries:
        for row in entry_rows(entry):
            out.setdefault(row.device, {})[(row.kind,) + row.key] = row
    return out


def auto_note(row: Row) -> str:
    return f"below {' and '.join(row.below())}: cause not recorded"


# ---- markdown ----------------------------------------------------------------------------------

def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_row(row: Row, link_prefix: str = "history/") -> str:
    run = THIS_RUN if row.run is None else f"[{row.run[0]}]({link_prefix}{row.run[1]})"
    cells = [row.cells[c] for c in COLUMNS[row.kind][:-2]] + [run, row.note]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def render_tables(rows: Sequence[Row], link_prefix: str = "history/") -> List[str]:
    """One device's standing: its GPU table, its host-time table, its matmul table, its
    model table, its CPU table, those it has."""
    out: List[str] = []
    for kind in ("gpu", "host", "matmul", "model", "cpu"):
        mine = [r for r in rows if r.kind == kind]
        if not mine:
            continue
        if kind in CAPTION:
            out += [CAPTION[kind], ""]
        out += ["| " + " | ".join(COLUMNS[kind]) + " |", ALIGN[kind]]
        out += [render_row(r, link_prefix) for r in mine]
        out.append("")
    return out


def _device_order(table: Dict[str, Dict[Tuple, Row]], entries: Sequence[Entry]) -> List[str]:
    """GPUs before CPUs; within each, the device of the latest run first."""
    last = {}
    for i, entry in enumerate(entries):
        last[entry.meta["device"]] = i
    return sorted(table, key=lambda d: (any(k[0] == "cpu" for k in table[d]), -last.get(d, -1)))


def render_standing(entries: Sequence[Entry], notes: Dict[Tuple, str]) -> str:
    """The text between the markers: a section per device.  `notes` are the hand-written
    ones, by (device, kind, key)."""
    table = standing(entries)
    out = [BEGIN, ""]
    for device in _device_order(table, entries):
        rows = list(table[device].values())
        for r in rows:
            if r.below():
                r.note = notes.get((r.device, r.kind) + r.key) or auto_note(r)
        out += [f"## {device}", ""] + render_tables(rows)
    out.append(END)
    return "\n".join(out)


def parse_standing(text: str) -> List[Row]:
    """The rows of RESULTS.md's standing (between the markers), as written."""
    if BEGIN not in text or END not in text:
        raise ValueError(f"RESULTS.md lacks the standing markers ({BEGIN!r} ... {END!r})")
    region = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    rows: List[Row] = []
    device, columns = None, None
    for line in region.splitlines():
        if not line.startswith("|"):  # a table ends at the first line not of it
            columns = None
            if line.startswith("## "):
                device = line[3:].strip()
            continue
        if columns is None:
            columns = [c.strip() for c in line.strip("|").split("|")]
            kinds = [k for k, c in COLUMNS.items() if c == columns]
            if not kinds:
                raise ValueError(f"standing table of {device} has unknown columns: {line}")
            kind = kinds[0]
            continue
        if line.startswith("|---"):
            continue
        cells = [c.strip().replace("\\|", "|")
                 for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        if len(cells) != len(columns):
            raise ValueError(f"standing row has {len(cells)} cells for {len(columns)} "
                             f"columns: {line}")
        rec = dict(zip(columns, cells))
        m = re.fullmatch(r"\[(.+)\]\((?:history/)?(.+)\)", rec["run"])
        key = {"gpu": (case_name(rec.get("case", "")),), "host": (rec.get("call"),),
               "matmul": (rec.get("case"),), "model": (rec.get("model"),),
               "cpu": (rec.get("case"), rec.get("shape"), rec.get("threads"))}[kind]
        rows.append(Row(device, kind, key,
                        {c: rec[c] for c in columns if c not in ("run", "note")},
                        (m[1], m[2]) if m else None, rec["note"]))
    return rows


def rebuild_text(results_text: str, entries: Sequence[Entry]) -> str:
    """RESULTS.md with its standing recomputed from `entries`, the notes kept."""
    notes = {(r.device, r.kind) + r.key: r.note for r in parse_standing(results_text)}
    start, end = results_text.index(BEGIN), results_text.index(END) + len(END)
    return results_text[:start] + render_standing(entries, notes) + results_text[end:]


def render_index(entries: Sequence[Entry]) -> str:
    out = ["# Benchmark history", "",
           "Every benchmark run, oldest first, as written when it was made.  The standing in",
           "[../RESULTS.md](../RESULTS.md) is computed from these files by",
           "`benchmarks/results.py`; each starts with a comment giving its device, date and",
           "commit (one per table where they differ; † marks a commit taken from git log,",
           "not from the run's text).  Memory-bound GPU runs (`gpu_bench.py`) are named",
           "run 1, run 2 and so on, compute-bound ones (`gpu_matmul_bench.py`: matmul and",
           "convolution) run M1, run M2, whole models through hipdnn-ep",
           "(`ort_model_bench.py`) run E1, run E2.  This index is written by `results.py` too.",
           "",
           "| entry | date | device | commit | heading |", "|---|---|---|---|---|"]
    for e in entries:
        heading = next((ln.lstrip("#").strip() for ln in e.body.splitlines()
                        if ln.startswith("#")), "")
        commits = ", ".join(dict.fromkeys(commit_cell(c) for c in e.per_table("commit")))
        out.append(f"| [{e.name}]({e.path.name}) | {e.meta['date']} | {e.meta['device']} | "
                   f"{commits} | {_cell(heading)} |")
    return "\n".join(out) + "\n"


# ---- a new run -------------------------------------------------------------------------------

def git_commit() -> str:
    """The checkout's short commit, "+" after it when tracked files differ from it; "—" where
    there is no git repository (a copied tree)."""
    top = HERE.parent

    def git(*args):
        return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True,
                              timeout=30)
    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0:
            return NONE
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return NONE
    return head.stdout.strip() + ("+" if dirty else "")


def _entry_text(device: str, date: str, commit: str, heading: str, preamble: str,
                rows: List[Row], whole: List[str]) -> str:
    """A new run's history entry: the metadata, its heading, this run's standing in
    RESULTS.md's format (notes: the automatic ones), and `whole`, its whole table."""
    for r in rows:
        if r.below():
            r.note = auto_note(r)
    out = ["<!-- benchmark run", f"device: {device}", f"date: {date}", f"commit: {commit}",
           "-->", heading, ""]
    if preamble:
        out += [preamble, ""]
    out += ["This run's standing (`benchmarks/results.py add` merges it into RESULTS.md case",
            "by case):", ""]
    out += render_tables(rows, link_prefix="")
    out += ["The whole table:", ""] + whole + [""]
    return "\n".join(out)


def run_entry(table: Sequence[str], device: str, date: str, commit: str,
              preamble: str = "") -> str:
    """The history entry of a run gpu_bench.py just made: the metadata, a heading, this
    run's standing in RESULTS.md's format, and the whole table."""
    lines = [parse_line(t) for t in table]
    rows = gpu_rows([ln for ln in lines if ln is not None], device, date, commit, None)
    return _entry_text(device, date, commit, f"## GPU, hip engine, {date}, {device}", preamble,
                       rows, ["```"] + list(table) + ["```"])


# a row gpu_matmul_bench.py measured: case, implementation, ms, TFLOP/s, note
MatmulResult = Tuple[str, str, Optional[float], Optional[float], str]


def format_matmul_table(results: Sequence[MatmulResult]) -> List[str]:
    """The lines of gpu_matmul_bench.py's markdown table: each row's time and TFLOP/s (none
    where its note says why), and its case's torch eager time over its own."""
    lines = ["| " + " | ".join(MATMUL_RUN_COLUMNS) + " |",
             "| --- | --- | ---: | ---: | ---: | --- |"]
    base = {case: ms for case, impl, ms, _, _ in results if impl.startswith("torch eager") and ms}
    for case, impl, ms, tflops, note in results:
        if not ms:
            lines.append(f"| {case} | {impl} | | | | {note} |")
            continue
        ratio = f"{base[case] / ms:.2f}x" if case in base else ""
        lines.append(f"| {case} | {impl} | {ms:.4f} | {tflops:.0f} | {ratio} | {note} |")
    return lines


def matmul_run_entry(table: Sequence[str], device: str, date: str, commit: str,
                     torch_version: str, preamble: str = "",
                     title: str = "GPU matmul and convolution") -> str:
    """The history entry of a run gpu_matmul_bench.py just made (`table`: its markdown
    table), as run_entry makes gpu_bench.py's: `results.py add` files it as a run M."""
    (parsed,) = [t for t in parse_tables("\n".join(table)) if t.kind == "matmul"]
    rows = matmul_rows(parsed.rows, device, date, commit, None)
    heading = f"## {title}, hip engine, {date}, {device}, torch {torch_version}"
    return _entry_text(device, date, commit, heading, preamble, rows, list(table))


# a row ort_model_bench.py measured: model, implementation, ms, error against ORT's CPU EP,
# the nodes hipdnn-ep took ("" for other rows), note
ModelResult = Tuple[str, str, Optional[float], Optional[float], str, str]


def format_model_table(results: Sequence[ModelResult]) -> List[str]:
    """The lines of ort_model_bench.py's markdown table: each row's median time and error
    (none where its note says why), and its model's torch eager time over its own."""
    lines = ["| " + " | ".join(MODEL_RUN_COLUMNS) + " |",
             "| --- | --- | ---: | ---: | ---: | --- | --- |"]
    base = {m: ms for m, impl, ms, _, _, _ in results if impl == "torch eager" and ms}
    for model, impl, ms, err, took, note in results:
        err_text = "" if err is None else f"{err:.1e}"
        note = note.replace("|", "/")  # a run table's cells are read without escapes
        if not ms:
            lines.append(f"| {model} | {impl} | | | {err_text} | {took} | {note} |")
            continue
        ratio = f"{base[model] / ms:.2f}x" if model in base else ""
        lines.append(f"| {model} | {impl} | {ms:.3f} | {ratio} | {err_text} | {took} | {note} |")
    return lines


def model_run_entry(table: Sequence[str], device: str, date: str, commit: str,
                    versions: str, preamble: str = "") -> str:
    """The history entry of a run ort_model_bench.py just made (`table`: its markdown
    table): `results.py add` files it as a run E.  versions: "onnxruntime 1.30.0, torch ..."."""
    (parsed,) = [t for t in parse_tables("\n".join(table)) if t.kind == "model"]
    rows = model_rows(parsed.rows, device, date, commit, None)
    heading = f"## Whole models through hipdnn-ep, {date}, {device}, {versions}"
    return _entry_text(device, date, commit, heading, preamble, rows, list(table))


def next_name(entries: Sequence[Entry], series: str = "") -> str:
    """The name after the highest of its series on a GPU: "run 29" for a memory-bound run
    (series ""), "run M12" for a compute-bound one (series "M"), "run E2" for a model run
    (series "E")."""
    pattern = rf"\b{series}(\d+)" if series else r"(?<![A-Z\d])(\d+)"  # "runs 6-7": 6 and 7
    numbers = [int(n) for e in entries if not e.meta["device"].startswith("CPU")
               for n in re.findall(pattern, e.name)]
    return f"run {series}{max(numbers, default=0) + 1}"


def add_entry(text: str, results: Path = RESULTS, history: Optional[Path] = None) -> Path:
    """Files a run's entry in history/ (named DATE-SEQ-slug.md, its metadata given a name),
    then rebuilds RESULTS.md's standing and the index.  Returns the new file."""
    history = history or results.parent / "history"
    entries = read_history(history)
    entry = parse_entry(Path("new.md"), text)
    if not entry.tables:
        raise ValueError("the run has no table")
    if "name" not in entry.meta:
        kinds = {t.kind for t in entry.tables}
        name = next_name(entries, "M" if "matmul" in kinds else "E" if "model" in kinds else "")
        text = text.replace("<!-- benchmark run\n", f"<!-- benchmark run\nname: {name}\n", 1)
    else:
        name = entry.meta["name"]
    seq = max((entry_sort_key(e.path)[0] for e in entries), default=0) + 1
    device = re.search(r"[A-Z]\d{3}", entry.meta["device"])
    slug = "-".join(filter(None, ["gpu", device[0].lower() if device else "",
                                  name.replace(" ", "-").lower()]))
    path = history / f"{entry.meta['date']}-{seq:03d}-{slug}.md"
    entries.append(parse_entry(path, text))
    page = rebuild_text(results.read_text(encoding="utf-8"), entries)  # fails before writing
    path.write_text(text, encoding="utf-8")
    results.write_text(page, encoding="utf-8")
    (history / INDEX).write_text(render_index(entries), encoding="utf-8")
    return path


def rebuild(results: Path = RESULTS, history: Optional[Path] = None) -> None:
    history = history or results.parent / "history"
    entries = read_history(history)
    results.write_text(rebuild_text(results.read_text(encoding="utf-8"), entries),
                       encoding="utf-8")
    (history / INDEX).write_text(render_index(entries), encoding="utf-8")


def stale(results: Path = RESULTS, history: Optional[Path] = None) -> List[str]:
    """What `rebuild` would change, as messages; [] when RESULTS.md and the index are current."""
    history = history or results.parent / "history"
    entries = read_history(history)
    text = results.read_text(encoding="utf-8")
    out = []
    want, have = rebuild_text(text, entries).splitlines(), text.splitlines()
    if want != have:
        diff = [f"  RESULTS.md has: {h}\n  history gives:  {w}"
                for h, w in zip(have, want) if h != w][:5]
        out.append("RESULTS.md's standing is not what history/ gives:\n" + "\n".join(diff)
                   if diff else "RESULTS.md's standing differs in length from what history/ gives")
    index = history / INDEX
    if not index.exists() or index.read_text(encoding="utf-8") != render_index(entries):
        out.append("history/README.md is not what history/ gives")
    return out


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("command", choices=["check", "rebuild", "add"])
    p.add_argument("run", nargs="?", help="add: the file gpu_bench.py (or gpu_matmul_bench.py, "
                   "ort_model_bench.py) --markdown wrote")
    p.add_argument("--results", type=Path, default=RESULTS,
                   help="RESULTS.md (default: beside this file; history/ beside it)")
    args = p.parse_args(argv)
    if args.command == "check":
        problems = stale(args.results)
        for msg in problems:
            print(msg, file=sys.stderr)
        if problems:
            print("run `python3 benchmarks/results.py rebuild`", file=sys.stderr)
        return 1 if problems else 0
    if args.command == "rebuild":
        rebuild(args.results)
        return 0
    if not args.run:
        p.error("add needs the run's file")
    path = add_entry(Path(args.run).read_text(encoding="utf-8"), args.results)
    print(f"{path} written; {args.results} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
