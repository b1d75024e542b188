"""ONNX's own node tests (Debian's libonnx-testdata: a model, its inputs and the outputs
the ONNX authors expect, per test) run through tests/ort/ort_run with hipdnn-ep
registered, CPU fallback on, so that what hipdnn-ep does not claim runs on ORT's CPU EP.

    /usr/bin/python3 tests/ort/node_tests.py [--build build] [--device cpu|gpu]
        [--runner build/tests/ort/oldest/ort_run] [--filter REGEX] [--data DIR] [--jobs 2] [--json FILE] [--failures]

Each test is `declined` (no node assigned to hipdnn-ep), `passed` (some node claimed and
every output within ONNX's own tolerance: rtol 1e-3, atol 1e-7, NaNs where expected),
`failed` (an output differs) or `error` (the session or the run failed, or the runner
cannot feed the test: `unreadable`, an element type ort_run does not read, a sequence).
The summary gives the counts, then, per op type hipdnn-ep claimed in some test, its
tests claimed / passed / failed / errored.  --device gpu runs over the fake CUDA driver
(build/tests/fake_cuda) with the emulated HIP engine, as tests/test_ort_ep.py does.
tests/test_ort_ep_node_tests.py runs it for the ops of docs/onnxruntime.md's table.

    /usr/bin/python3 tests/ort/node_tests.py --update-doc docs/onnxruntime.md

runs the whole suite on both devices and writes the per-op table between the markers
BEGIN and END of that page (tests/test_ort_ep_node_tests.py fails when it is stale).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

DATA = Path(os.environ.get("ONNX_NODE_TESTS", "/usr/share/libonnx-testdata/data/node"))
RTOL, ATOL = 1e-3, 1e-7  # onnx.backend.test.runner's defaults


def read_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return t.name, numpy_helper.to_array(t)


def gpu_env(build):
    env = dict(os.environ)
    env.update({
        "LD_LIBRARY_PATH": f"{build / 'tests' / 'fake_cuda'}{os.pathsep}"
                           f"{env.get('LD_LIBRARY_PATH', '')}",
        "HIPDNN_DEVICE_RUNTIME": "cuda",
        "HIPDNN_EMULATED_MEMORY": "device",
        "HIPDNN_PLUGIN_DIR": str(build / "tests" / "emulated"),
    })
    return env


def close(got, want):
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind not in "fc":
        return None if np.array_equal(got, want) else "values differ"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~np.isclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
    if not bad.any():
        return None
    i = np.flatnonzero(bad)[0]
    return (f"{int(bad.sum())} of {bad.size} differ; first at {np.unravel_index(i, g.shape)}: "
            f"{g.flat[i]!r}, expected {w.flat[i]!r}")


def run_test(test, args, env):
    """(status, detail, claimed op types) of one test directory."""
    model = onnx.load(str(test / "model.onnx"))
    ops = [n.op_type for n in model.graph.node]
    sets = sorted(test.glob("test_data_set_*"))
    if not sets:
        return "error", "no test_data_set", [], ops
    claimed, detail = set(), None
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for ds in sets:
            runner = getattr(args, "runner", None) or args.build / "tests" / "ort" / "ort_run"
            cmd = [str(runner), "--model",
                   str(test / "model.onnx"), "--out-dir", str(tmp), "--ep", "hipdnn",
                   "--device", args.device, "--log-level", "3", "--opt-level", "disable"]
            try:
                inputs = [read_pb(p) for p in sorted(ds.glob("input_*.pb"),
                                                     key=lambda p: int(p.stem.split("_")[1]))]
                outputs = [read_pb(p) for p in sorted(ds.glob("output_*.pb"),
                                                      key=lambda p: int(p.stem.split("_")[1]))]
            except Exception as e:  # sequences, optionals: not a tensor
                return "error", f"unreadable: {type(e).__name__}: {e}", [], ops
            names = [i.name for i in model.graph.input]
            inits = {i.name for i in model.graph.initializer}
            names = [n for n in names if n not in inits]
            for k, (name, a) in enumerate(inputs):
                f = tmp / f"in{k}.npy"
                np.save(f, a)
                cmd += ["--input", f"{name or names[k]}={f}"]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
            for line in p.stdout.splitlines():
                if line.startswith("assigned hipdnn "):
                    claimed.add(line.split(" ")[3])
            if p.returncode:
                return "error", (p.stderr.strip().splitlines() or ["?"])[-1][:400], \
                    sorted(claimed), ops
            outs = [o.name for o in model.graph.output]
            for k, (name, want) in enumerate(outputs):
                got = np.load(tmp / f"{name or outs[k]}.0.npy")
                why = close(got, want)
                if why:
                    detail = f"{ds.name} output {name or outs[k]}: {why}"
    if not claimed:
        return "declined", None, [], ops
    return ("failed" if detail else "passed"), detail, sorted(claimed), ops


BEGIN = "<!-- node-test table: made by tests/ort/node_tests.py --update-doc; do not edit -->"
END = "<!-- end of the node-test table -->"
DOC_COMMAND = "/usr/bin/python3 tests/ort/node_tests.py --update-doc docs/onnxruntime.md"


def summarize(results):
    """(counts by status, per claimed op type {claimed, passed, failed, error})."""
    counts, per_op = {}, {}
    for _name, status, _detail, claimed, _ops in results:
        counts[status] = counts.get(status, 0) + 1
        for op in claimed:
            row = per_op.setdefault(op, {"claimed": 0, "passed": 0, "failed": 0, "error": 0})
            row["claimed"] += 1
            row[status] += 1
    return counts, per_op


def table(by_device):
    """The Markdown block docs/onnxruntime.md holds: per device the counts, then per op
    type claimed anywhere its tests claimed / passed / failed or errored on each device.
    by_device: {"cpu": results, "gpu": results}."""
    lines = [BEGIN, ""]
    for device, results in by_device.items():
        claimed = [r for r in results if r[3]]
        passed = sum(1 for r in claimed if r[1] == "passed")
        lines.append(f"- {'CPU device' if device == 'cpu' else 'fake GPU'}: {len(results)} "
                     f"tests, {len(results) - len(claimed)} with no node claimed; "
                     f"{len(claimed)} claimed: {passed} passed, {len(claimed) - passed} "
                     "failed or errored")
    per = {d: summarize(r)[1] for d, r in by_device.items()}
    lines += ["", "| ONNX op | " + " | ".join(
        f"{'CPU' if d == 'cpu' else 'fake GPU'}: claimed / passed / failed" for d in per) + " |",
        "| --- |" + " --- |" * len(per)]
    for op in sorted(set().union(*[set(p) for p in per.values()])):
        cells = []
        for p in per.values():
            r = p.get(op, {"claimed": 0, "passed": 0, "failed": 0, "error": 0})
            cells.append(f"{r['claimed']} / {r['passed']} / {r['failed'] + r['error']}")
        lines.append(f"| {op} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", END]) + "\n"


def doc_block(text):
    """The table block of a page's text (markers included), or None."""
    if BEGIN not in text or END not in text:
        return None
    a = text.index(BEGIN)
    return text[a:text.index(END, a) + len(END)] + "\n"


def run_suite(args, device):
    env = gpu_env(args.build) if device == "gpu" else dict(os.environ)
    tests = sorted(t for t in args.data.iterdir()
                   if (t / "model.onnx").is_file() and re.search(args.filter, t.name))
    run_args = argparse.Namespace(**{**vars(args), "device": device})
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        return list(pool.map(lambda t: (t.name, *run_test(t, run_args, env)), tests))


def update_doc(args):
    page = args.update_doc
    text = page.read_text(encoding="utf-8")
    block = doc_block(text)
    if block is None:
        sys.exit(f"{page}: no node-test table markers ({BEGIN!r} ... {END!r})")
    new = table({d: run_suite(args, d) for d in ("cpu", "gpu")})
    page.write_text(text.replace(block, new), encoding="utf-8")
    print(new, end="")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", type=Path, default=Path(__file__).resolve().parents[2] / "build")
    ap.add_argument("--device", choices=["cpu", "gpu"], default="cpu")
    ap.add_argument("--runner", type=Path, help="the ort_run to use (default: the build's; "
                    "tests/ort/oldest/ort_run is linked against the oldest ORT supported)")
    ap.add_argument("--filter", default="")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--failures", action="store_true", help="print each failure and error")
    ap.add_argument("--update-doc", type=Path, metavar="PAGE",
                    help="run the whole suite on both devices and rewrite PAGE's table")
    args = ap.parse_args(argv)
    args.build = args.build.resolve()
    if not args.data.is_dir():
        sys.exit(f"{args.data}: no ONNX node tests (apt-get install libonnx-testdata)")
    if args.update_doc:
        return update_doc(args)
    results = run_suite(args, args.device)
    counts, per_op = summarize(results)
    for name, status, detail, claimed, ops in results:
        if args.failures and status in ("failed", "error") and (claimed or status == "failed"):
            print(f"{status} {name} [{' '.join(claimed)}]: {detail}")
    print(f"{len(results)} tests: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for op, row in sorted(per_op.items()):
        print(f"  {op}: claimed {row['claimed']}, passed {row['passed']}, "
              f"failed {row['failed']}, error {row['error']}")
    if args.json:
        args.json.write_text(json.dumps(
            {"device": args.device, "counts": counts, "per_op": per_op,
             "tests": [{"name": n, "status": s, "detail": d, "claimed": c, "ops": o}
                       for n, s, d, c, o in results]}, indent=1))
    bad = [r for r in results if r[1] == "failed" or (r[1] == "error" and r[3])]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
