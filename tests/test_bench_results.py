"""benchmarks/results.py: the table gpu_bench.py prints, the standing of benchmarks/RESULTS.md
and the runs of benchmarks/history/ it is computed from, checked without a GPU.

The standing must be what the history gives (the latest row of each case on each device),
so that it cannot drift from the runs; a case below an anchor carries a note, others none.
"""
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "benchmarks"
HISTORY = BENCH / "history"
sys.path.insert(0, str(BENCH))
import results  # noqa: E402

# RESULTS.md as it was before its runs moved to history/
BEFORE_THE_MOVE = "e723257"


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


def table(rows, device="NVIDIA H200"):
    return results.format_run_table(rows, device, 4180.0, 512 << 20)


def entry(rows, device="NVIDIA H200", date="2026-12-01", commit="abc1234"):
    return results.run_entry(table(rows, device), device, date, commit)


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


def test_each_standing_row_is_the_latest_measurement_of_its_case():
    """Read from the history files' text, not through results.py: the row is in the run it
    links, and no later run on that device measured the case."""
    texts = entries_by_name()
    rows = results.parse_standing((BENCH / "RESULTS.md").read_text(encoding="utf-8"))
    seen = {"gpu": 0, "host": 0, "cpu": 0}
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
        else:
            lines = re.findall(rf"^\| {c['case']} \| {c['shape']} \|.*$", text, re.M)
            assert [ln for ln in lines if all(f"| {row.cells[k]} |" in ln for k in
                                              ("hipdnn ms", "NumPy ms", "speed hipdnn/NumPy"))], row
            again = rf"^\| {c['case']} \| {c['shape']} \|"
        later = [n for n, t in texts.items()
                 if n > name and device_of(t) == row.device and re.search(again, t, re.M)]
        assert later == [], (row, later)
        seen[row.kind] += 1
    assert seen["gpu"] >= 20 and seen["host"] >= 4 and seen["cpu"] >= 20


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


def test_gpu_bench_writes_the_standing_through_results_py():
    gpu_bench = pytest.importorskip("gpu_bench", reason="gpu_bench.py needs hipdnn importable")
    assert gpu_bench.bench_results is results
    assert gpu_bench.parse_args(["--markdown"]).markdown == "-"
    args = gpu_bench.parse_args(["--markdown", "run.md", "--update-results",
                                 "benchmarks/RESULTS.md", "--commit", "abc1234"])
    assert (args.markdown, args.update_results, args.commit) == (
        "run.md", Path("benchmarks/RESULTS.md"), "abc1234")
