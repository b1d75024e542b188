"""fork() while another Python thread runs hipdnn, as data loaders and multiprocessing do.

The child must find hipdnn working: the default handle (also while another thread held
the lock that guards it), the plan that was executing, new graphs, new handles, the log
callback.  Each scenario runs in a fresh interpreter under a timeout, and every forked
child has an alarm, so a hang fails the test instead of hanging the suite.  Results are
compared with float64 NumPy at the matmul fp32 tolerance.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tolerances import tolerance

REPO = Path(__file__).resolve().parents[1]
TIMEOUT_S = 240

# Shared by every scenario: a matmul graph on the default handle, run on poisoned output
# and checked against float64 NumPy; the inputs must come back unchanged.
PRELUDE = textwrap.dedent("""
    import json, os, signal, sys, threading, time, warnings
    import numpy as np
    import hipdnn
    warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: fork with threads
    TOL = {tol!r}
    CHILD_TIMEOUT_S = 20

    class MatmulCase:
        def __init__(self, m, k, n, seed, handle=None):
            dt = hipdnn.data_type
            self.g = hipdnn.pygraph(io_data_type=dt.FLOAT, intermediate_data_type=dt.FLOAT,
                                    compute_data_type=dt.FLOAT, name=f"mm{{m}}", handle=handle)
            self.a = self.g.tensor(name="a", dim=[1, m, k])
            self.b = self.g.tensor(name="b", dim=[1, k, n])
            self.c = self.g.matmul(A=self.a, B=self.b, name="mm")
            self.c.set_output(True)
            self.g.build([hipdnn.heur_mode.A])
            rng = np.random.default_rng(seed)
            self.A = rng.uniform(-1, 1, (1, m, k)).astype(np.float32)
            self.B = rng.uniform(-1, 1, (1, k, n)).astype(np.float32)
            self.ref = self.A.astype(np.float64) @ self.B.astype(np.float64)
            self.ws = np.empty(self.g.get_workspace_size(), np.uint8)

        def run_ok(self, handle=None):
            A0, B0 = self.A.copy(), self.B.copy()
            C = np.full(self.ref.shape, np.nan, np.float32)
            self.g.execute({{self.a: self.A, self.b: self.B, self.c: C}}, self.ws, handle=handle)
            err = np.abs(C.astype(np.float64) - self.ref)
            return bool(np.all(err <= TOL + TOL * np.abs(self.ref))
                        and np.array_equal(A0, self.A) and np.array_equal(B0, self.B))

    def wait_child(pid, timeout_s=CHILD_TIMEOUT_S + 10):
        # exit status; -1 if it hung (then killed); 128 + signal if one ended it
        end = time.monotonic() + timeout_s
        while True:
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == pid:
                return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) \\
                    else 128 + os.WTERMSIG(status)
            if time.monotonic() > end:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return -1
            time.sleep(0.005)
""")

FORK_DURING_EXECUTE = """
big = MatmulCase(256, 256, 256, seed=1)
small = MatmulCase(9, 7, 5, seed=2)
messages = []
hipdnn.set_log_level("info")
hipdnn.set_log_callback(lambda level, msg: messages.append(msg))
stop = threading.Event()
executing = threading.Event()
worker_bad = []
runs = [0]

def worker():
    while not stop.is_set():
        executing.set()
        ok = big.run_ok()
        executing.clear()
        if not ok:
            worker_bad.append(runs[0])
        runs[0] += 1
        if runs[0] % 10 == 0:   # a plan built now and then: an info line to queue
            MatmulCase(3, 3, 3, seed=runs[0])

def child():
    signal.alarm(CHILD_TIMEOUT_S)
    bad = 0
    if not big.run_ok():                        # the plan that was executing
        bad |= 1
    if not small.run_ok(handle=hipdnn.Handle()):  # an existing plan, a new handle
        bad |= 2
    fresh = MatmulCase(6, 4, 3, seed=3)         # a new graph on the default handle
    if not fresh.run_ok():
        bad |= 4
    got = []                                    # the log callback, in the child
    hipdnn.set_log_callback(lambda level, msg: got.append(msg))
    MatmulCase(2, 2, 2, seed=4)
    hipdnn._C.flush_log()
    if not any("execution context" in m for m in got):
        bad |= 8
    os._exit(bad)

t0 = time.monotonic()
assert big.run_ok()
half_run = (time.monotonic() - t0) / 2   # forks land at points over the first half of a run
t = threading.Thread(target=worker)
t.start()
results, during = [], 0
for i in range({forks}):
    executing.wait(5)
    time.sleep(half_run * ((i * 7) % 10) / 10)
    during += executing.is_set()
    pid = os.fork()
    if pid == 0:
        try:
            child()
        finally:
            os._exit(99)
    results.append(wait_child(pid))
    if sum(r in (-1, 128 + signal.SIGALRM) for r in results) >= 2:
        break                    # children hang: fail now, not after every one's alarm
stop.set()
t.join()
hipdnn._C.flush_log()
print(json.dumps({{"results": results, "during": during, "runs": runs[0],
                  "worker_bad": worker_bad, "parent_ok": small.run_ok(),
                  "messages": len(messages)}}))
"""

DEFAULT_HANDLE_LOCK_HELD = """
from hipdnn import runtime
# A thread inside default_handle() holds its lock (making the first handle loads the
# plugins: a long hold) when the process forks.
held, release = threading.Event(), threading.Event()

def holder():
    with runtime._lock:
        held.set()
        release.wait(30)

t = threading.Thread(target=holder)
t.start()
held.wait(5)
pid = os.fork()
if pid == 0:
    signal.alarm(CHILD_TIMEOUT_S)
    try:
        ok = MatmulCase(5, 4, 3, seed=5).run_ok()   # needs default_handle()
    finally:
        pass
    os._exit(0 if ok else 1)
rc = wait_child(pid)
release.set()
t.join()
print(json.dumps({{"results": [rc], "parent_ok": MatmulCase(4, 4, 4, seed=6).run_ok()}}))
"""

MULTIPROCESSING_FORK = """
import multiprocessing as mp
big = MatmulCase(256, 256, 256, seed=1)
stop = threading.Event()
worker_bad = []

def worker():
    while not stop.is_set():
        if not big.run_ok():
            worker_bad.append(1)

def task(i):
    signal.alarm(CHILD_TIMEOUT_S)
    ok = big.run_ok() and MatmulCase(4 + i, 3, 2, seed=i).run_ok()
    signal.alarm(0)
    return ok

t = threading.Thread(target=worker)
t.start()
time.sleep(0.01)
ctx = mp.get_context("fork")
results = []
for round in range(3):              # each Pool forks its workers while `worker` runs
    pool = ctx.Pool(2)
    try:
        results += pool.map_async(task, range(4)).get(timeout=CHILD_TIMEOUT_S + 10)
    except mp.TimeoutError:         # hung workers: report, without waiting to join them
        print(json.dumps({{"results": "hung", "worker_bad": [], "parent_ok": None}}))
        sys.stdout.flush()
        os._exit(0)
    pool.close()
    pool.join()
stop.set()
t.join()
print(json.dumps({{"results": [0 if r else 1 for r in results], "worker_bad": worker_bad,
                  "parent_ok": big.run_ok()}}))
"""


def run_scenario(body, **fmt):
    """Runs PRELUDE + body in a fresh interpreter; its JSON summary (last stdout line)."""
    code = PRELUDE.format(tol=tolerance("matmul", "fp32")) + textwrap.dedent(body.format(**fmt))
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("HIPDNN_PLUGIN_DIR", None)
    try:
        proc = subprocess.run([sys.executable, "-c", code], cwd=str(REPO), env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        proc = None
        err = e.stderr.decode("utf-8", "replace") if isinstance(e.stderr, bytes) else e.stderr
    if proc is None:
        pytest.fail(f"the scenario hung past {TIMEOUT_S} s\nstderr: {err}")
    assert proc.returncode == 0, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
    lines = proc.stdout.strip().splitlines()
    assert lines, f"no summary\nstderr: {proc.stderr}"
    return json.loads(lines[-1])


def test_os_fork_while_another_thread_executes():
    forks = 20
    r = run_scenario(FORK_DURING_EXECUTE, forks=forks)
    # each child: 0 = every step right; bits say which failed; 142 (SIGALRM) or -1: hung
    assert r["results"] == [0] * forks, r
    assert r["during"] >= forks // 2, f"only {r['during']} of {forks} forks landed in a run"
    assert r["worker_bad"] == [] and r["runs"] > 0, r
    assert r["parent_ok"], r
    assert r["messages"] > 0, r


def test_os_fork_while_another_thread_holds_the_default_handle_lock():
    r = run_scenario(DEFAULT_HANDLE_LOCK_HELD)
    assert r["results"] == [0], r
    assert r["parent_ok"], r


def test_multiprocessing_fork_start_method_while_a_thread_executes():
    r = run_scenario(MULTIPROCESSING_FORK)
    assert r["results"] == [0] * 12, r
    assert r["worker_bad"] == [] and r["parent_ok"], r
