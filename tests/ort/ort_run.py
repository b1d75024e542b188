"""ort_run.py - tests/ort/ort_run (ort_run.c) over onnxruntime's Python API instead of its
C API: the same command line, the same output, the same checks, so that tests/test_ort_ep.py
runs its models through either (HIPDNN_ORT_RUNNER=c or python).

  ort_run.py --model M.onnx --out-dir DIR [--ep hipdnn|cpu] [--ep-lib PATH]
             [--device cpu|gpu] [--no-fallback] [--option KEY=VALUE]... [--log-level 0..4]
             [--opt-level disable|basic|extended|all] [--threads N] [--config KEY=VALUE]...
             --input NAME=FILE.npy...

hipdnn-ep is registered with onnxruntime.register_execution_provider_library("hipdnn",
PATH) (PATH: --ep-lib, by default this checkout's hipdnn/lib/libhipdnn_ep.so); the session
uses the one of its devices (onnxruntime.get_ep_devices()) of the --device type, added with
SessionOptions.add_provider_for_devices and the --option pairs, and it prints
"device hipdnn TYPE vendor 0xVVVV metadata KEY=VALUE..." for it.  --ep cpu: ORT's CPU EP
alone.  --no-fallback sets session.disable_cpu_ep_fallback; --log-level is ORT's severity
(0 verbose .. 4 fatal) of its default logger and of the session; --opt-level its graph
optimization level (all by default).

Before running it prints which EP each node was assigned to (from
InferenceSession.get_provider_graph_assignment_info), one line each: "assigned EP SUBGRAPH
OP_TYPE NODE_NAME" ("-" for a node without a name).  An input given k times makes k runs of
one session (run i takes each input's i-th file; one given once is reused).  --threads N
makes each run N concurrent InferenceSession.run calls, whose outputs must be equal bit for
bit; the first thread's are written, to DIR/NAME.I.npy.  The inputs must be unchanged after
each run ("runs K" is printed at the end).  float32, float16 and int64 tensors only.

Exit status 0 on success, 1 with "ort_run.py: STEP: MESSAGE" on stderr otherwise.  Unlike
the C one it need not check that outputs are host memory: InferenceSession.run returns
NumPy arrays, copied to the host by ORT.  onnxruntime's Python InferenceSession retries a
failed session or Run on the CPU EP by itself; here that fallback is turned off, so that a
failure is a failure, as in C.  onnxruntime is imported only when a model is run, so
`--help` and the argument checks work without it.
"""
import contextlib
import os
import sys
import threading
from pathlib import Path

import numpy as np

PROG = "ort_run.py"
DEFAULT_EP_LIB = Path(__file__).resolve().parents[2] / "hipdnn" / "lib" / "libhipdnn_ep.so"
OPT_LEVELS = {"disable": "ORT_DISABLE_ALL", "basic": "ORT_ENABLE_BASIC",
              "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}
# what ort_run.c reads and writes (its npy_types)
DTYPES = ("<f4", "<f2", "<f8", "<i8", "<i4", "<i2", "|i1", "|u1", "<u2", "<u4", "<u8", "|b1")
USAGE = ("usage: ort_run.py --model M.onnx --out-dir DIR [--ep hipdnn|cpu] [--ep-lib PATH] "
         "[--device cpu|gpu] [--no-fallback] [--option KEY=VALUE]... [--log-level 0..4] "
         "[--opt-level disable|basic|extended|all] [--threads N] [--config KEY=VALUE]... "
         "--input NAME=FILE.npy...")


class Failure(Exception):
    """A failed step: printed as "ort_run.py: STEP: MESSAGE", exit status 1."""

    def __init__(self, step, message):
        super().__init__(f"{step}: {message}")
        self.step, self.message = step, message


@contextlib.contextmanager
def step(name):
    """Turns an exception raised by onnxruntime inside the block into a Failure of step name."""
    try:
        yield
    except Failure:
        raise
    except Exception as e:  # ORT's Python errors are several classes; all end the run here
        raise Failure(name, str(e) or type(e).__name__) from e


def parse(argv):
    """The arguments as ort_run.c reads them; None for --help."""
    a = {"model": None, "out_dir": None, "ep": "hipdnn", "ep_lib": str(DEFAULT_EP_LIB),
         "device": "cpu", "no_fallback": False, "log_level": 2, "threads": 1,
         "opt_level": "all", "options": [], "configs": [], "inputs": {}}
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg in ("-h", "--help"):
            return None
        if arg == "--no-fallback":
            a["no_fallback"] = True
            continue
        if i == len(argv):
            raise Failure("arguments", f"{arg} needs a value")
        v = argv[i]
        i += 1
        if arg in ("--model", "--out-dir", "--ep", "--ep-lib", "--device"):
            a[arg[2:].replace("-", "_")] = v
        elif arg == "--log-level":
            if v not in ("0", "1", "2", "3", "4"):
                raise Failure("arguments", f"--log-level {v}: 0 (verbose) to 4 (fatal)")
            a["log_level"] = int(v)
        elif arg == "--threads":
            if not v.isdigit() or not 1 <= int(v) <= 64:
                raise Failure("arguments", f"--threads {v}: 1 to 64")
            a["threads"] = int(v)
        elif arg == "--opt-level":
            if v not in OPT_LEVELS:
                raise Failure("arguments", f"--opt-level {v}: disable, basic, extended or all")
            a["opt_level"] = v
        elif arg in ("--option", "--input", "--config"):
            key, eq, value = v.partition("=")
            if not eq:
                raise Failure("arguments", f"{arg} {v}: expected KEY=VALUE")
            if arg == "--option":
                a["options"].append((key, value))
            elif arg == "--config":
                a["configs"].append((key, value))
            else:
                a["inputs"].setdefault(key, []).append(value)
        else:
            raise Failure("arguments", f"unknown argument {arg}")
    if not a["model"] or not a["out_dir"]:
        raise Failure("arguments", USAGE)
    if a["ep"] not in ("hipdnn", "cpu"):
        raise Failure("arguments", f"--ep {a['ep']}: hipdnn or cpu")
    if a["device"] not in ("cpu", "gpu"):
        raise Failure("arguments", f"--device {a['device']}: cpu or gpu")
    return a


def read_npy(path):
    """A .npy file as ort_run.c reads it: one of DTYPES, C order."""
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise Failure("read input", f"cannot read {path}: {e}") from e
    if a.dtype.str not in DTYPES:
        raise Failure("read input", f"{path}: only {', '.join(DTYPES)} arrays are read "
                                    f"(dtype {a.dtype.str})")
    if not a.flags.c_contiguous:
        raise Failure("read input", f"{path}: Fortran order is not read")
    return a


def need(ort, owner, name, what):
    """owner.name, or a Failure naming what this onnxruntime lacks."""
    if not hasattr(owner, name):
        raise Failure("onnxruntime", f"onnxruntime {getattr(ort, '__version__', '?')} "
                      f"({os.path.dirname(getattr(ort, '__file__', '') or '?')}) has no {what}; "
                      "this runner needs its plugin-EP Python API (onnxruntime 1.23 or later, "
                      "and get_provider_graph_assignment_info, 1.24 or later)")
    return getattr(owner, name)


def strict_session_class(ort):
    """InferenceSession with its Python-side fallback off from the start: InferenceSession
    retries a session that failed to be made (and a Run that failed in an EP) on the CPU EP
    when its _enable_fallback is set, which it sets itself before making the session, so
    disable_fallback() afterwards is too late for the first.  A failure is a failure here."""
    class StrictSession(ort.InferenceSession):
        @property
        def _enable_fallback(self):
            return False

        @_enable_fallback.setter
        def _enable_fallback(self, value):
            pass

    return StrictSession


def run_threads(session, out_names, feeds, threads):
    """threads concurrent session.run calls on the same inputs; each one's outputs."""
    results = [None] * threads
    errors = [None] * threads

    def work(t):
        try:
            results[t] = session.run(out_names, feeds)
        except Exception as e:  # reported below, with the others'
            errors[t] = e

    if threads == 1:
        work(0)
    else:
        pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for th in pool:
            th.start()
        for th in pool:
            th.join()
    for e in errors:
        if e is not None:
            raise Failure("Run", str(e) or type(e).__name__)
    return results


def same_array(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def pick_device(ort, a):
    """hipdnn-ep's OrtEpDevice of the --device type; prints its "device hipdnn" line."""
    types = need(ort, ort, "OrtHardwareDeviceType", "OrtHardwareDeviceType")
    want = types.GPU if a["device"] == "gpu" else types.CPU
    with step("get_ep_devices"):
        mine = [d for d in need(ort, ort, "get_ep_devices", "get_ep_devices")()
                if d.ep_name == "hipdnn" and d.device.type == want]
    if not mine:
        raise Failure("get_ep_devices", f"{a['ep_lib']} registered but offers no {a['device']} "
                                        "device")
    dev = mine[0]
    with step("OrtEpDevice"):
        metadata = "".join(f" {k}={v}" for k, v in dict(dev.ep_metadata).items())
        print(f"device hipdnn {a['device']} vendor 0x{dev.device.vendor_id:04x} "
              f"metadata{metadata}")
    return dev


def make_session(ort, a):
    """The session ort_run.c makes: options, hipdnn-ep's device or the CPU EP alone."""
    with step("SetDefaultLoggerSeverity"):
        need(ort, ort, "set_default_logger_severity", "set_default_logger_severity")(
            a["log_level"])
    with step("SessionOptions"):
        so = ort.SessionOptions()
        so.log_severity_level = a["log_level"]
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel,
                                              OPT_LEVELS[a["opt_level"]])
        so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        if a["no_fallback"]:
            so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        for key, value in a["configs"]:  # --config: session config entries (ep.context_*)
            so.add_session_config_entry(key, value)
    providers = ["CPUExecutionProvider"]
    if a["ep"] == "hipdnn":
        dev = pick_device(ort, a)
        with step("add_provider_for_devices"):
            need(ort, so, "add_provider_for_devices", "SessionOptions.add_provider_for_devices")(
                [dev], dict(a["options"]))
        providers = None  # the session's EPs are those added to its options
    with step("CreateSession"):
        session = strict_session_class(ort)(a["model"], sess_options=so, providers=providers)
        session.disable_fallback()
        if a["ep"] == "hipdnn" and "hipdnn" not in session.get_providers():
            raise Failure("CreateSession", f"hipdnn is not among the session's execution "
                                           f"providers {session.get_providers()}")
    return session


def print_assignment(ort, session):
    info = need(ort, session, "get_provider_graph_assignment_info",
                "InferenceSession.get_provider_graph_assignment_info")
    with step("get_provider_graph_assignment_info"):
        for s, sub in enumerate(info()):
            for node in sub.get_nodes():
                print(f"assigned {sub.ep_name} {s} {node.op_type} {node.name or '-'}")
    sys.stdout.flush()


def run_model(session, a):
    """The runs: each input's i-th file, threads concurrent calls, outputs written."""
    with step("SessionGetInputName"):
        in_names = [i.name for i in session.get_inputs()]
        out_names = [o.name for o in session.get_outputs()]
    runs = 1
    for name in in_names:
        if name not in a["inputs"]:
            raise Failure("inputs", f"no --input for model input '{name}'")
        runs = max(runs, len(a["inputs"][name]))

    def file_of(name, r):
        files = a["inputs"][name]
        return files[min(r, len(files) - 1)]

    for r in range(runs):
        feeds = {name: read_npy(file_of(name, r)) for name in in_names}
        results = run_threads(session, out_names, feeds, a["threads"])
        for t in range(1, a["threads"]):
            for o, name in enumerate(out_names):
                if not same_array(results[0][o], results[t][o]):
                    raise Failure("check outputs", f"run {r}: thread {t}'s output {name} "
                                                   "differs from thread 0's")
        for o, name in enumerate(out_names):
            out = results[0][o]
            if not isinstance(out, np.ndarray) or out.dtype.str not in DTYPES:
                kind = out.dtype if isinstance(out, np.ndarray) else type(out).__name__
                raise Failure("check outputs", f"output {name} has element type {kind}")
            with step("write output"):
                np.save(os.path.join(a["out_dir"], f"{name}.{r}.npy"), out)
        for name in in_names:  # an EP must not write into the caller's inputs
            if not same_array(read_npy(file_of(name, r)), feeds[name]):
                raise Failure("check inputs", f"run {r} changed input '{name}'")
    print(f"runs {runs}")


def main(argv=None):
    try:
        a = parse(sys.argv[1:] if argv is None else argv)
        if a is None:
            print(__doc__)
            return 0
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise Failure("import onnxruntime", f"{e} (the onnxruntime Python package, 1.24 "
                          "or later, runs this; tests/ort/ort_run is the same over ORT's C "
                          "API)") from e
        registered = False
        if a["ep"] == "hipdnn":
            with step("register_execution_provider_library"):
                need(ort, ort, "register_execution_provider_library",
                     "register_execution_provider_library")("hipdnn", a["ep_lib"])
            registered = True
        session = make_session(ort, a)
        print_assignment(ort, session)
        run_model(session, a)
        session = None  # released before its EP's library goes
        if registered:
            with step("unregister_execution_provider_library"):
                ort.unregister_execution_provider_library("hipdnn")
        return 0
    except Failure as f:
        # As ort_run.c's die(): the message, then exit at once.  A failed session or run
        # leaves ORT objects held by the exception's frames (reference cycles), and
        # unloading the EP's library under them, or tearing them down at interpreter exit
        # after it, crashed the process on the GPU machine (onnxruntime 1.30).
        sys.stdout.flush()
        print(f"{PROG}: {f.step}: {f.message}", file=sys.stderr, flush=True)
        os._exit(1)


if __name__ == "__main__":
    sys.exit(main())
