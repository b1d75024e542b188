#!/usr/bin/python3
"""cudnn_frontend_tests.py — runs cuDNN frontend's own Python tests with `cudnn` resolved to
hipdnn and nothing else changed, and tells their outcome by file and by cause (issue 25).

    python3 tools/cudnn_frontend_tests.py --tests DIR [--out FILE] [--budget S] [-- ARGS]

DIR is cuDNN frontend's `test/python` folder, fetched by the caller (never kept in this
repository).  The tests run in a scratch copy whose only addition is a `cudnn.py` that makes
`import cudnn` return the hipdnn module, so their conftest, markers (`-m L0` from their
pytest.ini) and fixtures are theirs.  All files run in one pytest process (so ARGS after
`--` such as `-n 12` spread them over workers that start once), and a small plugin of ours
writes each test's outcome the moment it is known: at the end of the budget pytest is
interrupted and every outcome written so far counts, files not reached are listed as such.

Writes a Markdown report: passed / failed / errors / skipped by file, then the failures
grouped by the first line of their message, most common first, with a count.  Needs a GPU
and torch with CUDA, as their tests do.
"""
from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ALIAS = "import sys\nimport hipdnn\nsys.modules[__name__] = hipdnn\n"

# Their tests import `looseversion` (a pip package of their test requirements) for version
# checks; where it is not installed (the GPU machine has no network), the scratch copy gets
# this stand-in of ours: versions compared part by part, numbers as numbers.
LOOSEVERSION = """import re
class LooseVersion:
    def __init__(self, text=None):
        self.vstring = str(text)
        self.version = [int(p) if p.isdigit() else p
                        for p in re.split(r"(\\d+|[a-z]+|\\.)", self.vstring) if p and p != "."]
    def _cmp(self, other):
        other = other if isinstance(other, LooseVersion) else LooseVersion(other)
        a, b = self.version, other.version
        for x, y in zip(a, b):
            if x != y:
                if type(x) is not type(y):
                    x, y = str(x), str(y)
                return -1 if x < y else 1
        return (len(a) > len(b)) - (len(a) < len(b))
    def __eq__(self, o): return self._cmp(o) == 0
    def __lt__(self, o): return self._cmp(o) < 0
    def __le__(self, o): return self._cmp(o) <= 0
    def __gt__(self, o): return self._cmp(o) > 0
    def __ge__(self, o): return self._cmp(o) >= 0
    def __str__(self): return self.vstring
    def __repr__(self): return f"LooseVersion('{self.vstring}')"
"""


def scratch_copy(tests: Path, root: Path) -> Path:
    """Their test folder plus the alias module, in a place pytest may write to."""
    dest = root / "python"
    shutil.copytree(tests, dest, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "cudnn.py").write_text(ALIAS)
    if importlib.util.find_spec("looseversion") is None:
        (dest / "looseversion.py").write_text(LOOSEVERSION)
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


# Loaded into their pytest with -p: appends one JSON line per outcome, in the controller
# only when xdist runs workers, so a run cut short by the budget keeps what it learnt.
PLUGIN = """import json, os
def _write(config, nodeid, outcome, message):
    if hasattr(config, "workerinput"):
        return
    with open(os.environ["HIPDNN_FE_OUTCOMES"], "a") as f:
        f.write(json.dumps({"id": nodeid, "outcome": outcome, "message": message}) + "\\n")
def pytest_configure(config):
    global _config
    _config = config
def pytest_collectreport(report):
    if report.failed:
        _write(_config, report.nodeid, "errors", "collection failure: " + str(report.longrepr).strip().splitlines()[-1])
def pytest_runtest_logreport(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    message = crash.message if crash else str(report.longrepr or "").strip()[-300:]
    if report.when == "call" or (report.when == "setup" and not report.passed):
        outcome = {"passed": "passed", "skipped": "skipped"}.get(report.outcome)
        if outcome is None:
            outcome = "failed" if report.when == "call" else "errors"
        _write(_config, report.nodeid, outcome, message)
    elif report.when == "teardown" and report.failed:
        _write(_config, report.nodeid, "errors", message)
"""


def run_all(folder: Path, files: list[Path], seconds: float, args: list[str]) -> list[dict]:
    """One pytest over every file; at the deadline it gets SIGINT (its own clean stop), then
    SIGKILL ten seconds later.  Returns one result per file, from the outcome lines."""
    (folder / "_hipdnn_fe_outcomes.py").write_text(PLUGIN)
    log = folder / "outcomes.jsonl"
    env = dict(os.environ, HIPDNN_FE_OUTCOMES=str(log))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
           "-p", "_hipdnn_fe_outcomes", "--continue-on-collection-errors", *[str(p.relative_to(folder)) for p in files], *args]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=max(seconds, 1))
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    elapsed = time.monotonic() - start
    results = {str(p.relative_to(folder)): {
        "file": str(p.relative_to(folder)), "passed": 0, "failed": 0, "errors": 0,
        "skipped": 0, "seconds": 0.0, "timed_out": False, "causes": collections.Counter(),
        "examples": {}, "tail": ""} for p in files}
    lines = log.read_text().splitlines() if log.exists() else []
    for line in lines:
        entry = json.loads(line)
        name = entry["id"].split("::")[0]
        r = results.get(name)
        if r is None:
            continue
        r[entry["outcome"]] += 1
        if entry["outcome"] in ("failed", "errors"):
            r["causes"][cause(entry["message"])] += 1
            r["examples"].setdefault(cause(entry["message"]),
                                     f"{entry['id']}: {entry['message'][:300]}")
    for r in results.values():
        if not r["passed"] + r["failed"] + r["errors"] + r["skipped"]:
            r["timed_out"] = timed_out
            r["tail"] = "" if timed_out else (out or "")[-1500:]
    ordered = list(results.values())
    ordered[0]["seconds"] = elapsed  # one process: its time, on the first row
    return ordered


def report(results: list[dict]) -> str:
    lines = ["| file | passed | failed | errors | skipped | s |", "|---|---:|---:|---:|---:|---:|"]
    total = collections.Counter()
    causes: collections.Counter = collections.Counter()
    examples: dict[str, str] = {}
    for r in results:
        note = " (not reached)" if r["timed_out"] else ""
        lines.append(f"| {r['file']}{note} | {r['passed']} | {r['failed']} | {r['errors']} | "
                     f"{r['skipped']} | {r['seconds']:.0f} |")
        for key in ("passed", "failed", "errors", "skipped"):
            total[key] += r[key]
        causes.update(r["causes"])
        for c, text in r["examples"].items():
            examples.setdefault(c, text)
    lines.append(f"| **all** | {total['passed']} | {total['failed']} | {total['errors']} | "
                 f"{total['skipped']} | {sum(r['seconds'] for r in results):.0f} |")
    lines += ["", "| failures | cause (first line) | first test with it |", "|---:|---|---|"]
    lines += [f"| {n} | `{c.replace('|', '/')}` | {examples[c].replace('|', '/')} |"
              for c, n in causes.most_common(40)]
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
        results = run_all(folder, files, opts.budget, opts.pytest_args)
        for r in results:
            print(f"{r['file']}: {r['passed']} passed, {r['failed'] + r['errors']} failed",
                  flush=True)
    text = report(results)
    if opts.out:
        opts.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
