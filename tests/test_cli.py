"""`python -m hipdnn info | demo`: what they print and their exit status."""
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
        assert Path(path).name.startswith("libhipdnn_hip_"), (path, reason)
        assert reason.startswith(("declined to load: hip (", "could not open: ")), reason
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
