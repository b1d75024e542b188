"""fuzz_pygraph — the Python layer over mutated graph and plan bytes (issue 26).

The libFuzzer targets drive the C backend; the layer above it (``pygraph.deserialize``,
its build steps and ``execute``) turns what the backend gives back into Python objects,
and a bug there is an ``IndexError`` or a crash the C targets never see.  This mutates the
seeds of fuzz/corpus/fuzz_graph_bytes and fuzz/corpus/fuzz_pygraph (plan bytes): byte
flips and sets, cuts, splices, repeats, from a fixed seed so that a run repeats.  For each
input it deserializes a pygraph, builds the plans it allows and executes the first with
arrays of its tensors' sizes.  Every outcome must be a result or one of hipdnn's own exceptions (``HipdnnError`` and its
kinds, ``ValueError`` / ``TypeError`` / ``NotImplementedError`` with a message); anything
else is a finding, written to BUILD/crashes/fuzz_pygraph-<n>.hdng with its traceback.

    /usr/bin/python3 fuzz/fuzz_pygraph.py BUILD SECONDS [SEED]   (fuzz/run.sh runs it;
                                                              SECONDS 0: the seeds only)

Inputs run in a child process; a child killed by a signal is a finding too (its input was
written before it ran).  Exit status 1 on a finding, else 0 with the count of inputs.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
# graph bytes (the C target's seeds) and plan bytes (serialize() after a build)
SEEDS = (HERE / "corpus" / "fuzz_graph_bytes", HERE / "corpus" / "fuzz_pygraph")
ALLOWED = (ValueError, TypeError, NotImplementedError, OverflowError)
MAX_ELEMENTS = 1 << 16  # inputs whose tensors would be larger are deserialized, not run


def mutate(rng: random.Random, data: bytes, seeds: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        if not b:
            b = bytearray(rng.choice(seeds))
        i = rng.randrange(len(b))
        if op == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        elif op == 2:
            del b[i:i + rng.randint(1, 16)]
        elif op == 3:
            other = rng.choice(seeds)
            j = rng.randrange(len(other))
            b[i:i + rng.randint(1, 32)] = other[j:j + rng.randint(1, 32)]
        elif op == 4:
            b[i:i] = b[i:i + rng.randint(1, 8)]
        else:
            b[i:i + 4] = rng.randrange(1 << 32).to_bytes(4, "little")
    return bytes(b)


def run_one(data: bytes) -> None:
    """Deserialize, build, execute; raises what the layer raises."""
    import numpy as np
    import hipdnn
    from hipdnn.arrays import numpy_dtype

    g = hipdnn.pygraph()
    g.deserialize(data)
    if g.get_execution_plan_count() == 0:
        g.build([hipdnn.heur_mode.A])
    pack = {}
    for t in g.tensors():
        if t.get_is_virtual() or (t.get_is_pass_by_value() and t.get_value() is not None):
            continue
        span = 1 + sum((d - 1) * s for d, s in zip(t.get_dim(), t.get_stride()))
        if span > MAX_ELEMENTS:
            return
        if t.get_is_pass_by_value():
            pack[t] = 0.5
            continue
        pack[t] = t.empty()
        pack[t].reshape(-1).view(np.uint8)[:] = 0x3C
    g.execute(pack)


def child(work: Path) -> int:
    """Runs the inputs the parent writes, one per line of stdin (a path); prints a verdict."""
    import hipdnn

    ok = ALLOWED + (hipdnn.HipdnnError,)
    for line in sys.stdin:
        path = Path(line.strip())
        try:
            run_one(path.read_bytes())
            verdict = "ok"
        except ok as e:
            verdict = "ok" if str(e) else f"finding: {type(e).__name__} without a message"
        except Exception:  # noqa: BLE001 - exactly what this looks for
            verdict = "finding: " + traceback.format_exc().replace("\n", "\\n")
        print(verdict, flush=True)
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(Path(sys.argv[2]))
    build, seconds = Path(sys.argv[1]), float(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    seeds = [p.read_bytes() for d in SEEDS for p in sorted(d.iterdir())
             if p.stat().st_size < 20000]
    crashes = build / "crashes"
    crashes.mkdir(parents=True, exist_ok=True)
    current = build / "fuzz_pygraph.current"
    env = dict(os.environ, HIPDNN_LOG_LEVEL="off")
    start, runs, findings = time.monotonic(), 0, 0
    proc = None
    while (runs < len(seeds) or time.monotonic() - start < seconds) and findings == 0:
        if proc is None:
            proc = subprocess.Popen([sys.executable, __file__, "--child", str(build)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                    env=env)
        data = mutate(rng, rng.choice(seeds), seeds) if runs >= len(seeds) else seeds[runs]
        current.write_bytes(data)
        proc.stdin.write(f"{current}\n")
        proc.stdin.flush()
        verdict = proc.stdout.readline().strip()
        runs += 1
        if verdict == "ok":
            continue
        findings += 1
        out = crashes / f"fuzz_pygraph-{runs}.hdng"
        out.write_bytes(data)
        why = verdict.replace("\\n", "\n") if verdict else f"the child died ({proc.wait()})"
        print(f"FAIL: fuzz_pygraph: input {runs}: {why}\nreproducer: {out}\nrerun:      "
              f"{sys.executable} -c \"import sys; sys.path.insert(0, 'fuzz'); import "
              f"fuzz_pygraph as f; f.run_one(open('{out}', 'rb').read())\"")
        if not verdict:
            proc = None
    if proc is not None:
        proc.stdin.close()
        proc.wait()
    print(f"fuzz_pygraph: {runs} inputs in {time.monotonic() - start:.0f} s, "
          f"{findings} finding{'s' if findings != 1 else ''}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
