"""`python -m hipdnn info | demo | bench`: what they print and their exit status (draw:
tests/test_draw.py; support: tests/test_support_matrix.py)."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import hipdnn

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
TEST_PLUGINS = BUILD_DIR / "tests" / "plugins"


def run(args, env=None, code=None):
    full = dict(os.environ)
    full["PYTHONPATH"] = str(Path(hipdnn.__file__).resolve().parents[1]) + os.pathsep + \
        full.get("PYTHONPATH", "")
    full.setdefault("HIPDNN_LOG_LEVEL", "off")
    full.update(env or {})
    cmd = [sys.executable, "-c", textwrap.dedent(code)] if code else \
        [sys.executable, "-m", "hipdnn", *args]
    return subprocess.run(cmd, env=full, capture_output=True, text=True, timeout=300)


def test_info_prints_version_paths_plugins_and_engines():
    r = run(["info"])
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.splitlines()[0] == f"hipdnn {hipdnn.version()}"
    default_dir = str(Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" /
                      "engines")
    assert f"plugin paths searched:\n  {default_dir}\n" in out
    for path in hipdnn.loaded_engine_plugin_paths():
        assert f"  {path}\n" in out
    # Only device plugins whose GPU or runtime is absent may be skipped, each with why.
    skipped = hipdnn.skipped_engine_plugins()
    assert f"plugins skipped ({len(skipped)}):" in out
    for path, reason in skipped:
        assert Path(path).name.startswith(("libhipdnn_hip_", "libhipdnn_blaslt",
                                           "libhipdnn_cudnn")), (path, reason)
        assert reason.startswith(("declined to load: hip (", "declined to load: blaslt: ",
                                  "declined to load: cudnn: ",
                                  "could not open: ")), reason
        assert f"  {path}: {reason}\n" in out
    for e in hipdnn.engines():
        assert re.search(rf"^  {e.name}  id 0x{e.id:016x}  memory "
                         rf"{e.memory_space.name.lower()}", out, re.M)


def test_info_reports_skipped_plugins_with_reasons():
    assert TEST_PLUGINS.is_dir(), f"build the test plugins first ({TEST_PLUGINS})"
    r = run(["info"], env={"HIPDNN_PLUGIN_DIR": str(TEST_PLUGINS)})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"plugin paths searched:\n  {TEST_PLUGINS}\n" in out
    assert re.search(r"plugins skipped \(\d+\):", out)
    assert f"  {TEST_PLUGINS}/libbad_abi_version.so: API 2.0" in out
    assert f"  {TEST_PLUGINS}/libmissing_symbol.so: missing symbol" in out
    assert re.search(r"^  declines_all  id 0x[0-9a-f]{16}  memory host", out, re.M)


def test_info_with_no_plugins_at_all(tmp_path):
    r = run(["info"], env={"HIPDNN_PLUGIN_DIR": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert "plugins loaded (0):" in r.stdout and "engines (0):" in r.stdout


def test_demo_checks_against_numpy_and_reports_engine_error_and_time():
    r = run(["demo", "--runs", "3", "--seed", "1"])
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "engine: reference_cpu" in out
    m = re.search(r"max abs error vs float64 NumPy: (\S+) \(tolerance atol = rtol = 1e-05\)", out)
    assert m and float(m.group(1)) < 1e-4
    assert re.search(r"time: \d+\.\d+ ms \(median of 3 runs\)", out)
    assert out.rstrip().endswith("result: OK")


def test_demo_exits_1_on_a_mismatch():
    # Same demo, with the reference shifted: the comparison must fail and say so.
    r = run([], code="""
        import sys
        import hipdnn.__main__ as cli
        real = cli.conv2d_reference
        cli.conv2d_reference = lambda x, w, pad: real(x, w, pad) + 1.0
        sys.exit(cli.main(["demo", "--runs", "1"]))
    """)
    assert r.returncode == 1
    assert "result: MISMATCH" in r.stdout


def test_demo_without_engines_fails_with_the_reason(tmp_path):
    r = run(["demo"], env={"HIPDNN_PLUGIN_DIR": str(tmp_path)})
    assert r.returncode == 1
    assert r.stderr.startswith("hipdnn: ")
    assert "no engine plugin loaded" in r.stderr


def test_usage_errors():
    r = run([])
    assert r.returncode == 2 and "usage:" in r.stderr
    r = run(["demo", "--runs", "0"])
    assert r.returncode == 2 and "--runs must be at least 1" in r.stderr


# ---- info: devices ------------------------------------------------------------------------

FAKE_DRIVER = BUILD_DIR / "tests" / "fake_cuda"
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"


def test_info_shows_the_device_runtime_or_why_there_is_none():
    r = run(["info"])
    assert r.returncode == 0, r.stderr
    second = r.stdout.splitlines()[1]
    rt = hipdnn.device_runtime()
    if rt.name == "none":
        assert second == f"devices: none ({' '.join(rt.reason.split())})"
        assert len(second) > len("devices: none ()")
    else:
        assert second == f"devices: {rt.device_count} ({rt.name} runtime)"


def test_info_counts_the_devices_of_a_runtime():
    # the fake CUDA driver of the emulated GPU tests reports one device
    assert (FAKE_DRIVER / "libcuda.so.1").is_file(), f"build the test targets ({FAKE_DRIVER})"
    r = run(["info"], env={"LD_LIBRARY_PATH": str(FAKE_DRIVER) + os.pathsep +
                           os.environ.get("LD_LIBRARY_PATH", ""),
                           "HIPDNN_DEVICE_RUNTIME": "cuda"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == "devices: 1 (cuda runtime)"


# ---- bench ---------------------------------------------------------------------------------

BENCH_CASES = ["conv_bias_relu", "matmul_gelu", "layernorm", "softmax", "sdpa"]


def _table(stdout):
    """{case: [cells]} of bench's table (columns split on two spaces or more)."""
    lines = stdout.splitlines()
    head = re.split(r"\s{2,}", lines[0].strip())
    rows = {}
    for line in lines[2:]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = dict(zip(head, cells))
    return head, rows


def test_bench_quick_times_every_case_against_numpy_with_progress():
    r = run(["bench", "--quick"])
    assert r.returncode == 0, r.stdout + r.stderr
    head, rows = _table(r.stdout)
    assert head == ["case", "shape", "numpy ms", "reference_cpu ms (x numpy)"]
    assert list(rows) == BENCH_CASES
    for case, row in rows.items():
        assert float(row["numpy ms"]) > 0
        assert re.fullmatch(r"\d+\.\d{3} \(\d+\.\d{2}x\)", row["reference_cpu ms (x numpy)"]), row
    assert "median of 1 run(s)" in r.stdout
    # progress: a line per case as it starts, then NumPy's and each engine's result
    progress = [line for line in r.stderr.splitlines() if line.startswith("bench [")]
    assert [p.split()[2] for p in progress] == BENCH_CASES
    assert progress[0].startswith("bench [1/5] conv_bias_relu (")
    assert len(re.findall(r"^  reference_cpu: \d+\.\d{3} ms, max error \S+$", r.stderr,
                          re.M)) == 5


def test_bench_runs_the_hip_engine_where_it_accepts_and_says_why_not_elsewhere():
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    reference = Path(hipdnn.__file__).resolve().parent / "lib" / "hipdnn_plugins" / "engines"
    r = run(["bench", "--quick", "--plugin", str(reference), "--plugin", str(EMULATED),
             "--case", "conv_bias_relu", "--case", "sdpa"])
    assert r.returncode == 0, r.stdout + r.stderr
    head, rows = _table(r.stdout)
    assert list(rows) == ["conv_bias_relu", "sdpa"]
    for case in rows:
        assert re.fullmatch(r"\d+\.\d{3} \(\d+\.\d{2}x\)", rows[case]["hip_emulated ms (x numpy)"])
    # without a run-time compiler the engine declines the attention, saying why
    r = run(["bench", "--quick", "--plugin", str(reference), "--plugin", str(EMULATED),
             "--case", "sdpa"], env={"HIPDNN_EMULATED_NO_RTC": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    head, rows = _table(r.stdout)
    assert rows["sdpa"]["hip_emulated ms (x numpy)"] == "declined"
    assert "hip_emulated: declined: hip_emulated: node 'sdpa' (sdpa): attention kernels are " \
        "compiled at run time" in r.stderr


def test_bench_fails_on_a_wrong_result():
    # the same bench with the reference of softmax shifted: the check must catch it
    r = run([], code="""
        import sys
        import hipdnn.__main__ as cli
        from hipdnn import _bench
        i = [c.name for c in _bench.CASES].index("softmax")
        case = _bench.CASES[i]
        _bench.CASES[i] = case._replace(reference=lambda x: case.reference(x) + 1e-3)
        sys.exit(cli.main(["bench", "--quick", "--case", "softmax"]))
    """)
    assert r.returncode == 1
    assert "MISMATCH" in r.stdout
    assert re.search(r"hipdnn bench: softmax on reference_cpu: MISMATCH: max error \S+ > "
                     r"tolerance 1e-05", r.stderr)


def test_bench_usage_errors():
    r = run(["bench", "--case", "nope"])
    assert r.returncode == 2 and "unknown case nope" in r.stderr
    assert "conv_bias_relu, matmul_gelu, layernorm, softmax, sdpa" in r.stderr
    r = run(["bench", "--reps", "0"])
    assert r.returncode == 2 and "--reps must be at least 1" in r.stderr


def test_bench_without_engines_says_so(tmp_path):
    r = run(["bench", "--quick"], env={"HIPDNN_PLUGIN_DIR": str(tmp_path)})
    assert r.returncode == 1
    assert "no engine loaded" in r.stderr


def test_every_command_is_in_the_usage():
    r = run(["--help"])
    assert r.returncode == 0
    for cmd in ("info", "demo", "draw", "support", "bench"):
        assert cmd in r.stdout
