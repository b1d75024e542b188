#!/usr/bin/python3
"""cudnn_frontend_tests.py — runs cuDNN frontend's own Python tests with `cudnn` resolved to
hipdnn and nothing else changed, and tells their outcome by file and by cause (issue 25).

    python3 tools/cudnn_frontend_tests.py --tests DIR [--out FILE] [--budget S] [-- ARGS]

DIR is cuDNN frontend's `test/python` folder, fetched by the caller (never kept in this
repository).  The tests run in a scratch copy whose only addition is a `cudnn.py` that makes
`import cudnn` return the hipdnn module, so their conftest, markers (`-m L0` from their
pytest.ini) and fixtures are theirs.  Each file runs in its own pytest process, under
the share of the budget left, so one slow or hanging file costs only itself; ARGS after
`--` reach every pytest (for instance `-n 4`).

Writes a Markdown report: passed / failed / errors / skipped by file, then the failures
grouped by the first line of their message, most common first, with a count.  Needs a GPU
and torch with CUDA, as their tests do.
"""
from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ALIAS = "import sys\nimport hipdnn\nsys.modules[__name__] = hipdnn\n"


def scratch_copy(tests: Path, root: Path) -> Path:
    """Their test folder plus the alias module, in a place pytest may write to."""
    dest = root / "python"
    shutil.copytree(tests, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "cudnn.py").write_text(ALIAS)
    return dest


def test_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("test_*.py") if not p.name.endswith("_utils.py")
                  and p.name != "test_utils.py")


def cause(message: str) -> str:
    """The first line of a failure, with the numbers and quoted names that differ from
    test to test taken out, so failures of one cause fall together."""
    line = next((l for l in message.splitlines() if l.strip()), "(no message)").strip()
    line = re.sub(r"'[^']*'", "'…'", line)
    line = re.sub(r"\b\d+(\.\d+)?\b", "N", line)
    return line[:200]


def run_file(folder: Path, path: Path, seconds: float, args: list[str]) -> dict:
    junit = path.with_suffix(".junit.xml")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           f"--junitxml={junit}", str(path.relative_to(folder)), *args]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                              timeout=max(seconds, 1))
        tail, timed_out = proc.stdout[-2000:] + proc.stderr[-2000:], False
    except subprocess.TimeoutExpired:
        tail, timed_out = "", True
    result = {"file": str(path.relative_to(folder)), "passed": 0, "failed": 0, "errors": 0,
              "skipped": 0, "seconds": time.monotonic() - start, "timed_out": timed_out,
              "causes": collections.Counter(), "tail": tail}
    if not junit.exists():
        return result
    for case in ET.parse(junit).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            result["errors" if bad.tag == "error" else "failed"] += 1
            result["causes"][cause(bad.get("message") or bad.text or "")] += 1
        elif case.find("skipped") is not None:
            result["skipped"] += 1
        else:
            result["passed"] += 1
    return result


def report(results: list[dict]) -> str:
    lines = ["| file | passed | failed | errors | skipped | s |", "|---|---:|---:|---:|---:|---:|"]
    total = collections.Counter()
    causes: collections.Counter = collections.Counter()
    for r in results:
        note = " (timed out)" if r["timed_out"] else ""
        lines.append(f"| {r['file']}{note} | {r['passed']} | {r['failed']} | {r['errors']} | "
                     f"{r['skipped']} | {r['seconds']:.0f} |")
        for key in ("passed", "failed", "errors", "skipped"):
            total[key] += r[key]
        causes.update(r["causes"])
    lines.append(f"| **all** | {total['passed']} | {total['failed']} | {total['errors']} | "
                 f"{total['skipped']} | {sum(r['seconds'] for r in results):.0f} |")
    lines += ["", "| failures | cause (first line) |", "|---:|---|"]
    lines += [f"| {n} | `{c.replace('|', '/')}` |" for c, n in causes.most_common(40)]
    silent = [r for r in results if not r["passed"] + r["failed"] + r["errors"] + r["skipped"]]
    for r in silent:
        lines += ["", f"{r['file']}: no results; the end of its output:", "```",
                  r["tail"][-1500:], "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", type=Path, required=True, help="cuDNN frontend's test/python")
    ap.add_argument("--out", type=Path, help="the Markdown report (default: stdout)")
    ap.add_argument("--budget", type=float, default=480, help="seconds for all files")
    ap.add_argument("--only", help="a regular expression the file names must match")
    ap.add_argument("pytest_args", nargs="*", help="after --: passed to every pytest")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = scratch_copy(opts.tests, Path(tmp))
        files = [p for p in test_files(folder)
                 if not opts.only or re.search(opts.only, p.name)]
        deadline, results = time.monotonic() + opts.budget, []
        for i, path in enumerate(files):
            left = deadline - time.monotonic()
            share = min(left, 3 * left / (len(files) - i))  # a slow file may take 3 shares
            results.append(run_file(folder, path, share, opts.pytest_args))
            print(f"{results[-1]['file']}: {results[-1]['passed']} passed, "
                  f"{results[-1]['failed'] + results[-1]['errors']} failed", flush=True)
    text = report(results)
    if opts.out:
        opts.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
