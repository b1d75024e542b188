"""benchmarks/results.py: the tables gpu_bench.py and gpu_matmul_bench.py print, the standing
of benchmarks/RESULTS.md and the runs of benchmarks/history/ it is computed from, checked
without a GPU.

The standing must be what the history gives (the latest row of each case on each device),
so that it cannot drift from the runs; a case below an anchor carries a note, others none.
"""
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
HISTORY = BENCH / "history"
sys.path.insert(0, str(BENCH))
import results  # noqa: E402

# RESULTS.md as it was before its runs moved to history/, and before its matmul runs did
BEFORE_THE_MOVE = "e723257"
BEFORE_THE_MATMUL_MOVE = "b596b12"


@dataclass
class Result:  # what gpu_bench.run_case gives
    case: str
    impl: str
    ms: Optional[float] = None
    gbs: Optional[float] = None
    of_copy: Optional[float] = None
    note: str = ""


SOFTMAX = [Result("softmax (2^27)", "torch eager", 0.420, 1275, 0.305),
           Result("softmax (2^27)", "torch.compile", 0.320, 1673, 0.400),
           Result("softmax (2^27)", "hipdnn hip, row-wise", 0.390, 1383, 0.330),
           Result("softmax (2^27)", "hipdnn hip, row-wise, 1 vectors a thread", 0.520, 1031, 0.246)]
POOL = [Result("maxpool (2^25)", "torch eager", 0.150, 559, 0.134),
        Result("maxpool (2^25)", "hipdnn hip, resample", 0.120, 700, 0.167, "(ran: resample)")]
HOST = [Result("tiny relu, host time", "torch.relu", note="8.0 us per call"),
        Result("tiny relu, host time", "hipdnn (hip), DeviceArray", note="10.0 us per call")]


# what gpu_matmul_bench.py's cases give: (case, implementation, ms, TFLOP/s, note)
MATMUL = [("matmul_bf16_4096^3", "torch eager (cuBLAS)", 0.1785, 770.0, ""),
          ("matmul_bf16_4096^3", "hipdnn hip, tensor-core (wgmma)", 0.2250, 611.0, ""),
          ("matmul_bf16_4096^3", "hipdnn hip, tensor-core (wgmma)", 0.3092, 444.0,
           "tile 128 x 64 forced"),
          ("matmul_bias_gelu_bf16_4096^3", "torch eager (cuBLAS)", 0.2465, 558.0, ""),
          ("matmul_bias_gelu_bf16_4096^3", "torch.compile", 0.2246, 612.0, ""),
          ("matmul_bias_gelu_bf16_4096^3", "hipdnn hip, tensor-core (wgmma)", 0.2471, 556.0, ""),
          ("wgrad_r50_256x14x14_k256_3x3", "torch eager (cuDNN)", 0.0427, 347.0, ""),
          ("wgrad_r50_256x14x14_k256_3x3", "hipdnn hip, tensor-core (wgmma), k split 7 ways,",
           0.0978, 151.0, ""),
          ("conv_r50_512x7x7_k512_3x3", "torch eager (cuDNN)", 0.0415, 356.0, ""),
          ("conv_r50_512x7x7_k512_3x3", "hipdnn", None, None, "failed: no plan")]


def table(rows, device="NVIDIA H200"):
    return results.format_run_table(rows, device, 4180.0, 512 << 20)


def entry(rows, device="NVIDIA H200", date="2026-12-01", commit="abc1234"):
    return results.run_entry(table(rows, device), device, date, commit)


def matmul_entry(rows, device="NVIDIA H200", date="2026-12-01", commit="abc1234"):
    return results.matmul_run_entry(results.format_matmul_table(rows), device, date, commit,
                                    "2.11.0+cu130", preamble="`gpu_matmul_bench.py`")


# ---- the table gpu_bench.py prints ------------------------------------------------------------

def test_a_hipdnn_row_states_each_pytorch_time_over_its_own():
    lines = table(SOFTMAX)
    assert lines[0] == "device: NVIDIA H200  |  D2D copy bandwidth 4.18 TB/s (512 MiB copied)"
    hip = next(ln for ln in lines if "hipdnn hip, row-wise " in ln)
    # 0.420 / 0.390 and 0.320 / 0.390
    assert hip == ("softmax (2^27)                 hipdnn hip, row-wise                  0.390ms"
                   "     1383    33.0%  1.08x vs torch eager  0.82x vs torch.compile")
    eager = next(ln for ln in lines if "torch eager" in ln)
    assert eager.endswith("0.420ms     1275    30.5%")  # PyTorch rows state no ratio


def test_the_table_keeps_the_layout_of_the_runs_in_history():
    """A row formatted from its numbers is the line the twenty-fifth run printed."""
    run25 = (HISTORY / "2026-11-27-025-gpu-h200-run-25.md").read_text(encoding="utf-8")
    rows = [Result("row_sum (2^27)", "torch eager", 0.075, 3581, 0.856),
            Result("row_sum (2^27)", "torch.compile", 0.087, 3085, 0.737),
            Result("row_sum (2^27)", "hipdnn hip, row-wise", 0.078, 3447, 0.824)]
    for line in table(rows)[3:]:
        assert line + "\n" in run25, line


def test_printed_lines_parse_back_to_what_they_say():
    rows = SOFTMAX + HOST + [
        Result("a_case_name_of_thirty_chars (2^20)", "torch eager", 0.5, 100, 0.02),
        Result("a_case_name_of_thirty_chars (2^20)",
               "hipdnn hip, a kernel name longer than its column", 0.25, 200, 0.04),
        Result("maxpool (2^25)", "torch.compile", None, note="n/a: BackendCompilerFailed: x")]
    parsed = [results.parse_line(ln) for ln in table(rows)[3:]]
    assert [(p.case, p.impl) for p in parsed] == [(r.case, r.impl) for r in rows]
    assert parsed[2].ms == "0.390" and parsed[2].of_copy == "33.0%"
    assert parsed[2].ratio("torch eager") == "1.08x"
    assert parsed[2].ratio("torch.compile") == "0.82x"
    assert parsed[0].ratio("torch eager") == ""
    assert parsed[4].us == "8.0" and parsed[5].us == "10.0"
    assert parsed[7].ratio("torch eager") == "2.00x"  # long names keep two spaces after them
    assert parsed[8].ms == "" and parsed[8].rest.startswith("n/a")


def test_lines_that_are_not_rows_are_not_read_as_rows():
    for text in ["case (elements)                implementation        time     GB/s",
                 "rw_norm_warp<16, bf16> (layernorm, rmsnorm)        128      24.4%   33-42%",
                 "Pooling 0.656 → 0.272 ms, batchnorm training 1.41 → 0.88", ""]:
        assert results.parse_line(text) is None, text


# ---- a run's standing --------------------------------------------------------------------------

def standing_lines(text):
    return [ln for ln in text.splitlines() if ln.startswith("| ") and "|---" not in ln]


def test_a_runs_standing_is_hipdnns_default_kernel_against_pytorch():
    lines = standing_lines(entry(SOFTMAX + POOL + HOST))
    assert lines == [
        "| case | hipdnn | ms | of copy | torch eager ms | vs eager | torch.compile ms | "
        "vs torch.compile | date | commit | run | note |",
        "| softmax (2^27) | hip, row-wise | 0.390 | 33.0% | 0.420 | 1.08x | 0.320 | 0.82x | "
        "2026-12-01 | `abc1234` | this run | below torch.compile: cause not recorded |",
        "| maxpool (2^25) | hip, resample | 0.120 | 16.7% | 0.150 | 1.25x | — | — | "
        "2026-12-01 | `abc1234` | this run |  |",
        "| call | us per call | vs torch.relu | date | commit | run | note |",
        "| torch.relu | 8.0 | — | 2026-12-01 | `abc1234` | this run |  |",
        "| hipdnn (hip), DeviceArray | 10.0 | 0.80x | 2026-12-01 | `abc1234` | this run | "
        "below torch.relu: cause not recorded |",
    ]


def test_the_run_entry_holds_its_metadata_and_whole_table():
    text = entry(SOFTMAX, commit="abc1234+")
    e = results.parse_entry(Path("x.md"), text)
    assert (e.meta["device"], e.meta["date"], e.meta["commit"]) == ("NVIDIA H200", "2026-12-01",
                                                                   "abc1234+")
    assert [t.kind for t in e.tables] == ["gpu"]  # its standing table is not a run table
    assert [ln.impl for ln in e.tables[0].rows] == [r.impl for r in SOFTMAX]
    assert "| `abc1234+` |" in text


def test_the_first_hipdnn_row_stating_a_ratio_is_the_default():
    """The eighth run listed the packed softmax first, without ratios: it was not the default."""
    lines = [results.parse_line(s) for s in [
        "softmax (2^27)                 torch eager                           0.426ms     1259    42.4%",
        "softmax (2^27)                 hipdnn hip, row-wise                  0.637ms      843    28.4%  (a warp a row, packed)",
        "softmax (2^27)                 hipdnn hip, row-wise, 2 vectors a thread    0.396ms     1355    45.7%  1.08x vs torch eager  0.83x vs torch.compile"]]
    (row,) = results.gpu_rows(lines, "NVIDIA H100 80GB HBM3", "2026-11-23", "60c5404", None)
    assert (row.cells["hipdnn"], row.cells["ms"], row.cells["vs eager"]) == (
        "hip, row-wise, 2 vectors a thread", "0.396", "1.08x")
    assert row.cells["torch.compile ms"] == "—" and row.cells["vs torch.compile"] == "0.83x"


def test_a_stated_ratio_stands_where_the_pytorch_row_was_left_out():
    lines = [results.parse_line(
        "mul_add_gelu_add_fp32 (2^26)   hipdnn hip, compiled fast             0.288ms     2800    "
        "95.0%  3.45x vs torch eager  0.98x vs torch.compile")]
    (row,) = results.gpu_rows(lines, "NVIDIA H100 80GB HBM3", "2026-11-23", "a7731f0†", None)
    assert row.cells["torch eager ms"] == "—" and row.cells["vs eager"] == "3.45x"
    assert row.below() == ["torch.compile"]
    assert row.cells["commit"] == "`a7731f0`†"


# ---- a compute-bound run: gpu_matmul_bench.py's markdown table ---------------------------------

def test_the_matmul_table_keeps_the_layout_of_the_runs_in_history():
    """Rows formatted from their numbers are the lines run M11 filed, ratios and all."""
    m11 = (HISTORY / "2026-11-28-039-gpu-h200-run-m11.md").read_text(encoding="utf-8")
    lines = results.format_matmul_table([r for r in MATMUL if r[0] in (
        "matmul_bf16_4096^3", "wgrad_r50_256x14x14_k256_3x3") and not r[4]])
    assert lines[0] == "| case | implementation | ms | TFLOP/s | vs torch eager | note |"
    assert lines[2] == "| matmul_bf16_4096^3 | torch eager (cuBLAS) | 0.1785 | 770 | 1.00x |  |"
    for line in lines:
        assert line + "\n" in m11, line


def test_a_matmul_table_parses_as_a_run_table_of_its_own_kind():
    lines = results.format_matmul_table(MATMUL)
    assert lines[-1] == "| conv_r50_512x7x7_k512_3x3 | hipdnn | | | | failed: no plan |"
    (t,) = results.parse_tables("Some prose.\n\n" + "\n".join(lines) + "\n\nMore prose.\n")
    assert t.kind == "matmul" and len(t.rows) == len(MATMUL)
    assert t.rows[2] == {"case": "matmul_bf16_4096^3",
                         "implementation": "hipdnn hip, tensor-core (wgmma)", "ms": "0.3092",
                         "TFLOP/s": "444", "vs torch eager": "0.58x",
                         "note": "tile 128 x 64 forced"}
    assert t.rows[-1]["ms"] == "" and t.rows[-1]["note"] == "failed: no plan"
    # an entry's own standing table (it has a commit column) is not a run table
    e = results.parse_entry(Path("x.md"), matmul_entry(MATMUL))
    assert [t.kind for t in e.tables] == ["matmul"]


def test_a_matmul_cases_row_is_its_first_hipdnn_row_against_the_pytorch_rows():
    (t,) = results.parse_tables("\n".join(results.format_matmul_table(MATMUL)))
    rows = results.matmul_rows(t.rows, "NVIDIA H200", "2026-12-01", "abc1234+", None)
    by_case = {r.key: r for r in rows}
    assert list(by_case) == [("matmul_bf16_4096^3",), ("matmul_bias_gelu_bf16_4096^3",),
                             ("wgrad_r50_256x14x14_k256_3x3",)]  # the failed case gives none
    mm = by_case[("matmul_bf16_4096^3",)]  # not the forced tile's row after it
    assert mm.cells == {"case": "matmul_bf16_4096^3", "hipdnn": "hip, tensor-core (wgmma)",
                        "ms": "0.2250", "TFLOP/s": "611", "torch eager ms": "0.1785",
                        "vs eager": "0.79x", "torch.compile ms": "—", "vs torch.compile": "—",
                        "date": "2026-12-01", "commit": "`abc1234+`"}
    gelu = by_case[("matmul_bias_gelu_bf16_4096^3",)]
    # the table states no ratio against torch.compile: 0.2246 / 0.2471
    assert (gelu.cells["vs eager"], gelu.cells["vs torch.compile"]) == ("1.00x", "0.91x")
    assert gelu.below() == ["torch.compile"]
    wgrad = by_case[("wgrad_r50_256x14x14_k256_3x3",)]
    assert wgrad.cells["hipdnn"] == "hip, tensor-core (wgmma), k split 7 ways"


def test_a_matmul_runs_entry_renders_its_standing_after_the_memory_bound_tables():
    text = matmul_entry(MATMUL)
    e = results.parse_entry(Path("x.md"), text)
    assert (e.meta["device"], e.meta["date"], e.meta["commit"]) == (
        "NVIDIA H200", "2026-12-01", "abc1234")
    assert "## GPU matmul and convolution, hip engine, 2026-12-01, NVIDIA H200, " \
           "torch 2.11.0+cu130\n" in text
    assert standing_lines(text)[:3] == [
        "| case | hipdnn | ms | TFLOP/s | torch eager ms | vs eager | torch.compile ms | "
        "vs torch.compile | date | commit | run | note |",
        "| matmul_bf16_4096^3 | hip, tensor-core (wgmma) | 0.2250 | 611 | 0.1785 | 0.79x | — | "
        "— | 2026-12-01 | `abc1234` | this run | below torch eager: cause not recorded |",
        "| matmul_bias_gelu_bf16_4096^3 | hip, tensor-core (wgmma) | 0.2471 | 556 | 0.2465 | "
        "1.00x | 0.2246 | 0.91x | 2026-12-01 | `abc1234` | this run | "
        "below torch.compile: cause not recorded |"]
    mixed = results.render_tables(
        results.entry_rows(results.parse_entry(Path("m.md"), text))
        + results.entry_rows(results.parse_entry(Path("g.md"), entry(SOFTMAX + HOST))))
    heads = [ln for ln in mixed if ln.startswith("| case |") or ln.startswith("| call |")]
    assert heads == ["| " + " | ".join(results.COLUMNS[kind]) + " |"
                     for kind in ("gpu", "host", "matmul")]
    assert results.CAPTION["matmul"] in mixed


def test_matmul_runs_are_named_in_a_series_of_their_own():
    def named(*names):
        return [results.Entry(Path(f"{n}.md"), {"name": n, "device": "NVIDIA H200"}, "")
                for n in names]
    runs = named("runs 1-2", "run 28", "run M1", "run M11")
    assert results.next_name(runs) == "run 29"
    assert results.next_name(runs, "M") == "run M12"
    assert results.next_name(named("run 3"), "M") == "run M1"


# ---- adding a run -------------------------------------------------------------------------------

RESULTS_PAGE = f"# Benchmark results\n\nintro\n\n{results.BEGIN}\n{results.END}\n\nhow to\n"


@pytest.fixture
def bench(tmp_path):
    """An empty RESULTS.md and history/."""
    (tmp_path / "history").mkdir()
    page = tmp_path / "RESULTS.md"
    page.write_text(RESULTS_PAGE)
    return page


def rows_of(page):
    return {(r.device, r.kind) + r.key: r for r in results.parse_standing(page.read_text())}


def test_adding_a_run_replaces_that_devices_rows_case_by_case(bench):
    results.add_entry(entry(SOFTMAX + POOL + HOST, date="2026-12-01", commit="aaaaaaa"), bench)
    results.add_entry(entry(SOFTMAX, device="NVIDIA H100 80GB HBM3", commit="bbbbbbb"), bench)
    faster = [Result("maxpool (2^25)", "torch eager", 0.141, 595, 0.142),
              Result("maxpool (2^25)", "hipdnn hip, resample", 0.100, 840, 0.2)]
    new = results.add_entry(entry(faster, date="2026-12-02", commit="ccccccc"), bench)
    assert new.name == "2026-12-02-003-gpu-h200-run-3.md"
    rows = rows_of(bench)
    pool = rows[("NVIDIA H200", "gpu", "maxpool")]
    assert (pool.cells["ms"], pool.cells["date"], pool.cells["commit"], pool.run) == (
        "0.100", "2026-12-02", "`ccccccc`", ("run 3", new.name))
    softmax = rows[("NVIDIA H200", "gpu", "softmax")]  # not in the third run: as it was
    assert (softmax.cells["ms"], softmax.cells["commit"]) == ("0.390", "`aaaaaaa`")
    assert rows[("NVIDIA H100 80GB HBM3", "gpu", "softmax")].cells["commit"] == "`bbbbbbb`"
    assert len(rows) == 5  # 2 cases and 2 host rows on the H200, 1 case on the H100
    text = bench.read_text()
    assert text.index("## NVIDIA H200") < text.index("## NVIDIA H100")  # latest device first
    assert text.startswith("# Benchmark results\n\nintro\n") and text.endswith("how to\n")
    index = (bench.parent / "history" / "README.md").read_text()
    assert f"| [run 3]({new.name}) | 2026-12-02 | NVIDIA H200 | `ccccccc` |" in index
    assert results.stale(bench) == []


def test_a_note_stays_while_its_case_is_below_an_anchor(bench):
    results.add_entry(entry(SOFTMAX, date="2026-12-01"), bench)
    note = "| below torch.compile: cause not recorded |"
    bench.write_text(bench.read_text().replace(note, "| two barriers a row (run 7) |"))
    results.add_entry(entry(SOFTMAX, date="2026-12-02"), bench)   # still 0.82x torch.compile
    assert rows_of(bench)[("NVIDIA H200", "gpu", "softmax")].note == "two barriers a row (run 7)"
    fast = [Result(r.case, r.impl, r.ms / 2 if r.impl.startswith("hipdnn") else r.ms, r.gbs,
                   r.of_copy) for r in SOFTMAX]
    results.add_entry(entry(fast, date="2026-12-03"), bench)      # 1.64x torch.compile
    assert rows_of(bench)[("NVIDIA H200", "gpu", "softmax")].note == ""


def test_the_latest_matmul_run_of_each_case_stands(bench):
    results.add_entry(entry(SOFTMAX + HOST), bench)
    first = results.add_entry(matmul_entry(MATMUL, commit="aaaaaaa"), bench)
    faster = [("matmul_bf16_4096^3", "torch eager (cuBLAS)", 0.1790, 768.0, ""),
              ("matmul_bf16_4096^3", "hipdnn hip, tensor-core (wgmma)", 0.1700, 808.0, "")]
    second = results.add_entry(matmul_entry(faster, date="2026-12-02", commit="bbbbbbb"), bench)
    assert (first.name, second.name) == ("2026-12-01-002-gpu-h200-run-m1.md",
                                         "2026-12-02-003-gpu-h200-run-m2.md")
    assert "name: run M2\n" in second.read_text()
    rows = rows_of(bench)
    mm = rows[("NVIDIA H200", "matmul", "matmul_bf16_4096^3")]
    assert (mm.cells["ms"], mm.cells["vs eager"], mm.cells["commit"], mm.run, mm.note) == (
        "0.1700", "1.05x", "`bbbbbbb`", ("run M2", second.name), "")
    gelu = rows[("NVIDIA H200", "matmul", "matmul_bias_gelu_bf16_4096^3")]  # not in M2
    assert (gelu.cells["commit"], gelu.run[0]) == ("`aaaaaaa`", "run M1")
    assert len([k for k in rows if k[1] == "matmul"]) == 3
    text = bench.read_text()
    assert (text.index("| call | us per call |") < text.index(results.CAPTION["matmul"])
            < text.index("| case | hipdnn | ms | TFLOP/s |"))
    # a memory-bound run after them continues its own series
    assert results.add_entry(entry(SOFTMAX, date="2026-12-03"), bench).name == (
        "2026-12-03-004-gpu-h200-run-2.md")
    assert results.stale(bench) == []


def test_a_matmul_rows_note_stays_while_it_is_below(bench):
    results.add_entry(matmul_entry(MATMUL), bench)
    note = "| below torch.compile: cause not recorded |"
    bench.write_text(bench.read_text().replace(note, "| the epilogue (run M4) |"))
    results.add_entry(matmul_entry(MATMUL, date="2026-12-02"), bench)
    key = ("NVIDIA H200", "matmul", "matmul_bias_gelu_bf16_4096^3")
    assert rows_of(bench)[key].note == "the epilogue (run M4)"


def test_check_fails_when_a_standing_number_is_edited(tmp_path):
    shutil.copytree(HISTORY, tmp_path / "history")
    page = tmp_path / "RESULTS.md"
    text = (BENCH / "RESULTS.md").read_text(encoding="utf-8")
    row = next(ln for ln in text.splitlines() if ln.startswith("| layernorm (2^27) "))
    edited = re.sub(r"\| \d+\.\d+x \|", "| 9.99x |", row, count=1)
    assert edited != row
    page.write_text(text.replace(row, edited, 1))
    assert results.stale(page) and "RESULTS.md's standing" in results.stale(page)[0]
    page.write_text(text)
    (tmp_path / "history" / "README.md").write_text("# stale\n")
    assert results.stale(page) == ["history/README.md is not what history/ gives"]


# ---- the repository's RESULTS.md and history/ -------------------------------------------------

def entries_by_name():
    return {p.name: p.read_text(encoding="utf-8")
            for p in sorted(HISTORY.glob("*.md")) if p.name != results.INDEX}


def device_of(text):
    return re.search(r"^device: (.+)$", text, re.M)[1]


def test_results_md_and_the_index_are_what_history_gives():
    assert results.stale() == []


def matmul_row_is_in(text, row):
    """Asserts that a matmul standing row's numbers are in the run's table (its hipdnn row,
    the PyTorch rows of its case); returns the pattern of any hipdnn row of the case."""
    c = {k: re.escape(v) for k, v in row.cells.items()}
    hip = re.search(rf"^\| {c['case']} \| hipdnn {c['hipdnn']},? \| {c['ms']} \| "
                    rf"{c['TFLOP/s']} \|([^|]*)\|", text, re.M)
    assert hip and hip[1].strip() == row.cells["vs eager"].replace(results.NONE, ""), row
    for column, anchor in (("torch eager ms", r"torch eager \([^)]*\)"),
                           ("torch.compile ms", r"torch\.compile")):
        if row.cells[column] != results.NONE:
            assert re.search(rf"^\| {c['case']} \| {anchor} \| {c[column]} \|", text, re.M), row
    if row.cells["vs torch.compile"] != results.NONE:
        ratio = float(row.cells["torch.compile ms"]) / float(row.cells["ms"])
        assert row.cells["vs torch.compile"] == f"{ratio:.2f}x", row
    return rf"^\| {c['case']} \| hipdnn"


def test_each_standing_row_is_the_latest_measurement_of_its_case():
    """Read from the history files' text, not through results.py: the row is in the run it
    links, and no later run on that device measured the case."""
    texts = entries_by_name()
    rows = results.parse_standing((BENCH / "RESULTS.md").read_text(encoding="utf-8"))
    seen = {"gpu": 0, "host": 0, "matmul": 0, "cpu": 0, "model": 0}
    for row in rows:
        name = row.run[1]
        text = texts[name]
        assert device_of(text) == row.device, row
        assert row.cells["date"] in text.split("\n## ", 1)[1].splitlines()[0]
        c = {k: re.escape(v) for k, v in row.cells.items()}
        if row.kind == "gpu":
            m = re.search(rf"^\s*{c['case']}\s{{2,}}hipdnn {c['hipdnn']}\s{{2,}}{c['ms']}ms\s+\d+"
                          rf"\s+{c['of copy']}(.*)$", text, re.M)
            assert m, row
            for column, anchor in (("vs eager", "torch eager"),
                                   ("vs torch.compile", "torch.compile")):
                if row.cells[column] != results.NONE:
                    assert f"{row.cells[column]} vs {anchor}" in m[1], row
            for column, anchor in (("torch eager ms", "torch eager"),
                                   ("torch.compile ms", "torch.compile")):
                if row.cells[column] != results.NONE:
                    assert re.search(rf"^\s*{c['case']}\s{{2,}}{re.escape(anchor)}\s{{2,}}"
                                     rf"{c[column]}ms", text, re.M), row
            again = rf"^\s*{re.escape(row.key[0])}( \(2\^\d+\))?\s{{2,}}hipdnn"
        elif row.kind == "host":
            assert re.search(rf"^\s*tiny relu, host time\s{{2,}}{c['call']}\s{{2,}}"
                             rf"{c['us per call']} us per call", text, re.M), row
            again = rf"^\s*tiny relu, host time\s{{2,}}{c['call']}\s{{2,}}"
        elif row.kind == "matmul":
            again = matmul_row_is_in(text, row)
        elif row.kind == "model":  # the whole table's hipdnn-ep row and torch eager's
            assert re.search(rf"^\| {c['model']} \| hipdnn-ep {c['hipdnn-ep']} \| {c['ms']} \| "
                             rf"{c['vs eager']} \|.*\| {c['took']} \|", text, re.M), row
            assert re.search(rf"^\| {c['model']} \| torch eager \| {c['torch eager ms']} \|",
                             text, re.M), row
            again = rf"^\| {c['model']} \| hipdnn-ep "
        else:
            lines = re.findall(rf"^\| {c['case']} \| {c['shape']} \|.*$", text, re.M)
            assert [ln for ln in lines if all(f"| {row.cells[k]} |" in ln for k in
                                              ("hipdnn ms", "NumPy ms", "speed hipdnn/NumPy"))], row
            again = rf"^\| {c['case']} \| {c['shape']} \|"
        later = [n for n, t in texts.items()
                 if n > name and device_of(t) == row.device and re.search(again, t, re.M)]
        assert later == [], (row, later)
        seen[row.kind] += 1
    assert seen["gpu"] >= 20 and seen["host"] >= 4 and seen["matmul"] >= 14 and seen["cpu"] >= 20
    assert seen["model"] >= 4


def test_rows_below_an_anchor_and_only_those_have_a_note():
    rows = results.parse_standing((BENCH / "RESULTS.md").read_text(encoding="utf-8"))
    below = [r for r in rows if r.below()]
    assert below, "no row below an anchor: the check would check nothing"
    assert [r for r in below if not r.note] == []
    assert [r for r in rows if r.note and not r.below()] == []
    # the file holds them as it was given them: a stated 0.96x is below, 1.00x is not
    assert results.Row("d", "gpu", ("x",), {"vs eager": "0.96x"}, None).below() == ["torch eager"]
    assert results.Row("d", "gpu", ("x",), {"vs eager": "1.00x"}, None).below() == []


def test_every_history_entry_says_device_date_and_commit_for_each_table():
    entries = results.read_history()
    assert len(entries) >= 27
    for e in entries:
        heading = next(ln for ln in e.body.splitlines() if ln.startswith("## "))
        assert e.meta["date"] in heading, e.path.name
        if not e.meta["device"].startswith("CPU"):
            assert re.search(r"H\d00", e.meta["device"])[0] in heading, e.path.name
        assert e.tables, e.path.name
        for commit in e.per_table("commit"):
            assert re.fullmatch(r"[0-9a-f]{7,40}\+?†?|—", commit), (e.path.name, commit)


def test_the_history_holds_every_run_of_the_old_results_md_verbatim():
    old = subprocess.run(["git", "-C", str(REPO), "show",
                          f"{BEFORE_THE_MOVE}:benchmarks/RESULTS.md"], capture_output=True, text=True)
    if old.returncode != 0:
        pytest.skip(f"no git history of RESULTS.md here ({old.stderr.strip()[:80]})")
    title, blank, runs = old.stdout.split("\n", 2)
    assert (title, blank) == ("# Benchmark results", "")
    moved = results.read_history()[:27]
    assert "\n\n".join(e.body.rstrip("\n") for e in moved) + "\n" == runs
    assert sum(len(t.rows) for e in moved for t in e.tables) == sum(
        len(t.rows) for t in results.parse_tables(runs)) == 568


def test_the_history_holds_every_matmul_run_of_the_old_results_md_verbatim():
    """Runs M1-M11 were filed by hand in RESULTS.md, newest first, under ### headings; each
    history entry is one of them as it was, its heading one level up."""
    old = subprocess.run(["git", "-C", str(REPO), "show",
                          f"{BEFORE_THE_MATMUL_MOVE}:benchmarks/RESULTS.md"],
                         capture_output=True, text=True)
    if old.returncode != 0:
        pytest.skip(f"no git history of RESULTS.md here ({old.stderr.strip()[:80]})")
    section = old.stdout[old.stdout.index("### Run M11:"):old.stdout.index("\nCommits: ")]
    hand_filed = {f"run M{i}" for i in range(1, 12)}  # later runs are results.py's
    moved = [e for e in results.read_history() if e.name in hand_filed]
    assert [e.name for e in moved] == [f"run M{i}" for i in range(1, 12)]
    assert "\n".join("#" + e.body for e in reversed(moved)) == section
    assert sum(len(t.rows) for e in moved for t in e.tables) == 229
    for e in moved:
        heading = e.body.splitlines()[0]
        assert re.match(rf"## Run {e.name[4:]}: {e.meta['device']}, {e.meta['date']}, commit "
                        rf"`{e.meta['commit'].rstrip('+')}`", heading), heading
        assert e.meta["commit"].endswith("+") == bool(re.search(r"`\+|\(\+|` less", heading))


def test_gpu_bench_writes_the_standing_through_results_py():
    gpu_bench = pytest.importorskip("gpu_bench", reason="gpu_bench.py needs hipdnn importable")
    assert gpu_bench.bench_results is results
    assert gpu_bench.parse_args(["--markdown"]).markdown == "-"
    args = gpu_bench.parse_args(["--markdown", "run.md", "--update-results",
                                 "benchmarks/RESULTS.md", "--commit", "abc1234"])
    assert (args.markdown, args.update_results, args.commit) == (
        "run.md", Path("benchmarks/RESULTS.md"), "abc1234")


def test_gpu_matmul_bench_writes_an_entry_that_add_files(bench, tmp_path, monkeypatch, capsys):
    """The bench's main, its cases and PyTorch stood in for (no GPU here): its --markdown
    file is a history entry that `results.py add` files as it is."""
    bench_mm = pytest.importorskip("gpu_matmul_bench",
                                   reason="gpu_matmul_bench.py needs hipdnn importable")
    assert bench_mm.bench_results is results
    cuda = SimpleNamespace(is_available=lambda: True, get_device_name=lambda: "NVIDIA H200")
    backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace(allow_tf32=True)),
                               cudnn=SimpleNamespace(allow_tf32=True))
    monkeypatch.setattr(bench_mm, "torch", SimpleNamespace(cuda=cuda, backends=backends,
                                                           __version__="2.11.0+cu130"))
    monkeypatch.setattr(bench_mm, "run_case", lambda name, samples, repeat: [
        r for r in MATMUL if r[0] == name])
    run = tmp_path / "run.md"
    assert bench_mm.main(["--cases", "matmul_bf16_4096^3,matmul_bias_gelu_bf16_4096^3",
                          "--markdown", str(run), "--commit", "abc1234",
                          "--date", "2026-12-01"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("NVIDIA H200, 2026-12-01, torch 2.11.0+cu130\n\n| case |")
    text = run.read_text(encoding="utf-8")
    assert text.startswith("<!-- benchmark run\ndevice: NVIDIA H200\ndate: 2026-12-01\n"
                           "commit: abc1234\n-->\n## GPU matmul and convolution, hip engine, "
                           "2026-12-01, NVIDIA H200, torch 2.11.0+cu130\n")
    assert "median of 15 samples of 10 runs" in text
    assert results.main(["add", str(run), "--results", str(bench)]) == 0
    rows = rows_of(bench)
    assert sorted(k[2] for k in rows) == ["matmul_bf16_4096^3", "matmul_bias_gelu_bf16_4096^3"]
    assert {r.run for r in rows.values()} == {("run M1", "2026-12-01-001-gpu-h200-run-m1.md")}


def test_a_file_the_matmul_bench_writes_is_accepted_by_add_as_is(bench, tmp_path):
    run = tmp_path / "run.md"
    run.write_text(matmul_entry(MATMUL), encoding="utf-8")  # what --markdown run.md writes
    assert results.main(["add", str(run), "--results", str(bench)]) == 0
    (filed,) = [p for p in (bench.parent / "history").glob("*-run-m1.md")]
    assert filed.read_text(encoding="utf-8") == run.read_text(encoding="utf-8").replace(
        "<!-- benchmark run\n", "<!-- benchmark run\nname: run M1\n", 1)
    assert len([r for r in results.parse_standing(bench.read_text()) if r.kind == "matmul"]) == 3
    assert results.main(["check", "--results", str(bench)]) == 0


def test_host_overhead_bench_rows_become_host_standing_rows_and_builds_stay_out():
    import host_overhead_bench as hob  # needs hipdnn, not a GPU
    rows = [(hob.CASE, "torch.relu", 7.5, ""),
            (hob.CASE, "hipdnn (hip), DeviceArray", 5.0, ""),
            (hob.CASE, "hipdnn (hip), DeviceArray, checked path", None, "WRONG"),
            (hob.CASE, "C hipdnnBackendExecute (hip)", 2.5, ""),
            (hob.BUILD_CASE, "first device use (runtime, context)", 180.0, "torch has paid it"),
            (hob.BUILD_CASE, "hipdnn (hip), cold (empty cache folder)", 250.0,
             "validate 0.3, heuristics 4.0, plan 245.7 ms")]
    table = hob.format_rows(rows)
    entry = results.run_entry(table, "NVIDIA H200", "2026-11-29", "abc1234")
    parsed = results.parse_entry(Path("x.md"), entry)
    host = [r for r in results.entry_rows(parsed) if r.kind == "host"]
    got = {r.cells["call"]: (r.cells["us per call"], r.cells["vs torch.relu"]) for r in host}
    assert got == {"torch.relu": ("7.5", "—"), "hipdnn (hip), DeviceArray": ("5.0", "1.50x"),
                   "C hipdnnBackendExecute (hip)": ("2.5", "3.00x")}, got
    assert "180.0 ms torch has paid it" in entry and "heuristics 4.0" in entry
    assert "250.0 ms per build" in entry and all(r.kind == "host" for r in
                                                  results.entry_rows(parsed))
