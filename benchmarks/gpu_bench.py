"""GPU benchmark: hipdnn against PyTorch eager and torch.compile on the same data, in one run.

    python3 benchmarks/gpu_bench.py [--log2 N] [--samples 15] [--cases mul_add_gelu_add,...]
                                    [--markdown [FILE]] [--update-results benchmarks/RESULTS.md]

Each case builds random inputs once (never zeros), checks every implementation's result
against a float64 reference computed by PyTorch from the same inputs, its output
poisoned with NaN first, and only then times it: the median of CUDA-event timings of
`--repeat` back-to-back runs per sample, after warm-up (torch.compile compiles during
warm-up).  Bandwidth is the bytes a fused implementation must move (each input read once,
each output written once) over the time; "of copy" is that against a device-to-device
copy measured in the same run.

hipdnn runs each of its GPU engine's kernels, chosen at plan time through the environment
(HIPDNN_HIP_JIT=0: the interpreting kernels; HIPDNN_HIP_KERNEL=generic: never the fast
way), each row named by the kernel that actually ran (the engine logs its first run):
  compiled fast        the plan's own kernel (NVRTC), contiguous tensors: flat index,
                       several 16-byte loads in flight a thread
  compiled generic     the plan's own kernel, any strides and broadcasts
  interpreting fast / generic   one precompiled kernel for every plan

Cases (CASES below):
  mul_add_gelu_add        y = gelu(a * b + a) + b over 2^28 bf16 elements: 2 inputs, 1
                          output, 4 nodes fused into one kernel by hipdnn
  mul_add_gelu_add_fp32   the same graph over 2^26 fp32 elements
  row_sum                 y[r] = sum of x[r, :] over x [32768, 4096] bf16 (a reduction)
  softmax                 softmax of each row of x [32768, 4096] bf16, written as cuDNN-FE
                          users do (reduction max, sub, exp, reduction add, div): hipdnn
                          runs the five nodes as one row-wise kernel
  layernorm, rmsnorm      norm_forward (inference) over the rows of x [32768, 4096] bf16
                          with a bf16 scale (and bias), epsilon 1e-5
  layernorm_backward      dx, dscale, dbias of a layernorm over x [32768, 4096] bf16 given
                          its saved fp32 mean and inv_variance (PyTorch:
                          aten.native_layer_norm_backward)
  rmsnorm_backward        dx and dscale of an rmsnorm over the same x given its saved fp32
                          inv_variance (PyTorch: the backward of F.rms_norm's autograd graph,
                          made once, without its forward)
  batchnorm_training      y, mean, inv_variance and the next running statistics of a
                          batchnorm over x [64, 128, 64, 64] bf16 (PyTorch: native_batch_norm)
  batchnorm_backward      dx, dscale, dbias of that batchnorm (native_batch_norm_backward)
  instancenorm            y of an instancenorm over the same x (statistics per sample and
                          channel over 64 x 64), bf16 scale and bias (F.instance_norm)
  maxpool                 3x3 max pooling, stride 2, padding 1, of the same x (max_pool2d)
(--log2 sets a pointwise case's elements, a row case's rows times 4096.)  Row cases' "of
copy" counts the bytes read and written once, as for the pointwise ones.
Host time: one execute of a tiny graph (relu over 16 floats) against torch.relu: the
cost of the call on the host, the GPU being idle.

The table comes last.  --markdown FILE also writes the run as a history entry (FILE "-" or
left out: standard output): this run's standing in the format of RESULTS.md's tables (device,
date, commit from `git rev-parse --short HEAD` or --commit, each case's times and ratios),
then the whole table; --update-results RESULTS.md files that entry in benchmarks/history/ and
replaces the device's rows of RESULTS.md case by case (benchmarks/results.py, which also
does it for a FILE written elsewhere: `results.py add FILE`).
"""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs PyTorch
    torch = None

import hipdnn
import results as bench_results  # benchmarks/results.py: the table's text, RESULTS.md's standing
from gpu_bench_core import (EPS, ROW, VARIANTS, Case, Result, _extra, build_plan, check,
                            copy_bandwidth_gbs, cuda_time_ms, first_run, host_time_us)
from gpu_training_cases import TRAINING_CASES

dt = hipdnn.data_type


def _mul_add_gelu_add_inputs(dtype):
    def make(n: int, gen) -> Dict[str, "torch.Tensor"]:
        a = torch.randn(n, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
        b = torch.randn(n, generator=gen, device="cuda", dtype=torch.float32).to(dtype)
        return {"a": a, "b": b}
    return make


def _mul_add_gelu_add_torch(a, b):
    return torch.nn.functional.gelu(a * b + a) + b


def _mul_add_gelu_add_ref(a, b):
    a, b = a.double(), b.double()
    return torch.nn.functional.gelu(a * b + a) + b


def _mul_add_gelu_add_graph(dtype):
    def build(inputs, out, env: Dict[str, str]) -> Callable[[], None]:
        """The hipdnn plan for the case, on torch's current stream; returns one execute."""
        io = {torch.bfloat16: dt.BFLOAT16, torch.float32: dt.FLOAT}[dtype]
        g = hipdnn.pygraph(io_data_type=io, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name="mul_add_gelu_add")
        a = g.tensor_like(inputs["a"], name="a")
        b = g.tensor_like(inputs["b"], name="b")
        y = g.add(a=g.gelu(input=g.add(a=g.mul(a=a, b=b), b=a)), b=b, name="y")
        y.set_output(True)
        said = build_plan(g, env)
        handle = hipdnn.Handle()
        handle.set_stream(torch.cuda.current_stream())
        pack = {a: inputs["a"], b: inputs["b"], y: out}

        def run():
            g.execute(pack, None, handle=handle)

        run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
        run.said = said  # type: ignore[attr-defined]
        return run
    return build


# The row kernels have one way, its geometry picked per shape; HIPDNN_HIP_ROW_VECTORS sets
# the 16-byte vectors a thread of a softmax or norm holds (the row's threads follow).
ROW_WISE = [("row-wise", {})] + [(f"row-wise, {v} vectors a thread", {"HIPDNN_HIP_ROW_VECTORS": v})
                                 for v in ("1", "2", "4")]


def _rows_inputs(norm: Optional[str]):
    def make(n: int, gen) -> Dict[str, "torch.Tensor"]:
        x = torch.randn(n // ROW, ROW, generator=gen, device="cuda").to(torch.bfloat16)
        t = {"x": x}
        if norm:  # scale near 1 and a bias, random: neither hides an error
            t["w"] = (1 + 0.5 * torch.randn(1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
        if norm == "layernorm":
            t["b"] = (0.5 * torch.randn(1, ROW, generator=gen, device="cuda")).to(torch.bfloat16)
        return t
    return make


def _rows_graph(what: str):
    def build(inputs, out, env: Dict[str, str]) -> Callable[[], None]:
        g = hipdnn.pygraph(io_data_type=dt.BFLOAT16, intermediate_data_type=dt.FLOAT,
                           compute_data_type=dt.FLOAT, name=what)
        x = g.tensor_like(inputs["x"], name="x")
        pack = {x: inputs["x"]}
        rows = inputs["x"].shape[0]
        if what == "row_sum":
            y = g.reduction(input=x, mode=hipdnn.reduction_mode.ADD, name="y")
            y.set_dim([rows, 1])
        elif what == "softmax":
            m = g.reduction(input=x, mode=hipdnn.reduction_mode.MAX, name="max")
            m.set_dim([rows, 1])
            e = g.exp(input=g.sub(a=x, b=m, name="sub"), name="exp")
            s = g.reduction(input=e, mode=hipdnn.reduction_mode.ADD, name="sum")
            s.set_dim([rows, 1])
            y = g.div(a=e, b=s, name="y")
        else:  # a norm; in the training phase its mean and inv_variance are written too
            w = g.tensor_like(inputs["w"], name="w")
            pack[w] = inputs["w"]
            training = what.endswith("_training")
            phase = hipdnn.norm_forward_phase.TRAINING if training else hipdnn.norm_forward_phase.INFERENCE
            if what.startswith("layernorm"):
                b = g.tensor_like(inputs["b"], name="b")
                pack[b] = inputs["b"]
                y, *stats = g.layernorm(phase, x, w, b, EPS, name="y")
            else:
                y, *stats = g.rmsnorm(phase, x, w, epsilon=EPS, name="y")
            if training:
                like = torch.empty(rows, 1, dtype=torch.float32, device="cuda")
                pack.update({t: _extra(t, like) for t in stats})
        y.set_output(True)
        said = build_plan(g, env)
        handle = hipdnn.Handle()
        handle.set_stream(torch.cuda.current_stream())
        pack[y] = out
        size = g.get_workspace_size()  # rows cut into parts: their partial results
        workspace = hipdnn.DeviceArray.empty([size], np.uint8) if size else None

        def run():
            g.execute(pack, workspace, handle=handle)

        run.engine = g.get_engine_name(0)  # type: ignore[attr-defined]
        run.said = said  # type: ignore[attr-defined]
        return run
    return build


def _row_torch(what: str):
    # PyTorch's layer_norm computes its statistics in either phase (native_layer_norm)
    what = what.replace("_training", "")
    f = torch.nn.functional
    return {
        "row_sum": lambda x: x.sum(dim=1, keepdim=True),
        "softmax": lambda x: torch.softmax(x, dim=1),
        "layernorm": lambda x, w, b: f.layer_norm(x, (ROW,), w.view(ROW), b.view(ROW), eps=EPS),
        "rmsnorm": lambda x, w: f.rms_norm(x, (ROW,), w.view(ROW), eps=EPS),
    }[what]


def _row_ref(what: str):
    what = what.replace("_training", "")

    def ref(x, w=None, b=None):
        x = x.double()
        if what == "row_sum":
            return x.sum(dim=1, keepdim=True)
        if what == "softmax":
            return torch.softmax(x, dim=1)
        if what == "layernorm":
            mean = x.mean(dim=1, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=1, keepdim=True)
            return (x - mean) / torch.sqrt(var + EPS) * w.double() + b.double()
        return x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + EPS) * w.double()
    return ref


def _row_case(what: str, tolerance: float) -> Case:
    norm = what.replace("_training", "") if "norm" in what else None
    out_cols = 1 if what == "row_sum" else ROW
    return Case(
        name=what,
        log2=27,  # [32768, 4096]
        make_inputs=_rows_inputs(norm),
        torch_fn=_row_torch(what),
        reference=_row_ref(what),
        build_graph=_rows_graph(what),
        bytes_moved=lambda t: (sum(v.numel() * v.element_size() for v in t.values())
                               + t["x"].shape[0] * out_cols * 2),  # inputs read, y written
        tolerance=tolerance,
        torch_tolerance=tolerance,
        make_output=lambda t: torch.full((t["x"].shape[0], out_cols), float("nan"),
                                         dtype=torch.bfloat16, device="cuda"),
        variants=ROW_WISE[:1] if what.endswith("_training") else ROW_WISE,
        use_compile=not what.endswith("_training"),
    )


CASES = {
    "mul_add_gelu_add": Case(
        name="mul_add_gelu_add",
        log2=28,
        make_inputs=_mul_add_gelu_add_inputs(torch.bfloat16 if torch else None),
        torch_fn=_mul_add_gelu_add_torch,
        reference=_mul_add_gelu_add_ref,
        build_graph=_mul_add_gelu_add_graph(torch.bfloat16 if torch else None),
        bytes_moved=lambda t: 3 * t["a"].numel() * t["a"].element_size(),
        tolerance=1e-2,  # DESIGN: pointwise bf16
        torch_tolerance=5e-2,
    ),
    "mul_add_gelu_add_fp32": Case(
        name="mul_add_gelu_add_fp32",
        log2=26,
        make_inputs=_mul_add_gelu_add_inputs(torch.float32 if torch else None),
        torch_fn=_mul_add_gelu_add_torch,
        reference=_mul_add_gelu_add_ref,
        build_graph=_mul_add_gelu_add_graph(torch.float32 if torch else None),
        bytes_moved=lambda t: 3 * t["a"].numel() * t["a"].element_size(),
        tolerance=1e-5,  # DESIGN: pointwise fp32
        torch_tolerance=1e-5,
    ),
    # bf16 results: within 2^-7 relative plus as much absolute (a sum of 4096 terms, a
    # normalized value near 0), as tests/tolerances.py's bf16 reductions and norms
    "row_sum": _row_case("row_sum", 1e-2) if torch else None,
    "softmax": _row_case("softmax", 1e-2) if torch else None,
    "layernorm": _row_case("layernorm", 2e-2) if torch else None,
    "rmsnorm": _row_case("rmsnorm", 2e-2) if torch else None,
    "layernorm_training": _row_case("layernorm_training", 2e-2) if torch else None,
    "rmsnorm_training": _row_case("rmsnorm_training", 2e-2) if torch else None,
    **(TRAINING_CASES if torch else {}),
}


class _NotTimed(Exception):
    """A case whose torch.compile row is left out."""


def run_case(case: Case, log2: Optional[int], samples: int, repeat: int,
             copy_gbs: float) -> List[Result]:
    n = 1 << (case.log2 if log2 is None else log2)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    inputs = case.make_inputs(n, gen)
    ref = case.reference(**inputs)
    nbytes = case.bytes_moved(inputs)
    label = f"{case.name} (2^{n.bit_length() - 1})"
    results = []

    def add(impl, fn, out_tensor, tol, note=""):
        why = check(f"{case.name} {impl}", out_tensor(), ref, tol)
        if why:
            results.append(Result(label, impl, None, note=f"WRONG: {why}"))
            return
        ms = cuda_time_ms(fn, samples, repeat)
        gbs = nbytes / (ms * 1e-3) / 1e9
        results.append(Result(label, impl, ms, gbs, gbs / copy_gbs, note))

    holder = {}

    def eager():
        holder["eager"] = case.torch_fn(**inputs)
    eager()
    torch.cuda.synchronize()
    add("torch eager", eager, lambda: holder["eager"], case.torch_tolerance)
    del holder["eager"]

    try:
        if not case.use_compile:
            raise _NotTimed
        compiled_fn = torch.compile(case.torch_fn)

        def compiled():
            holder["compiled"] = compiled_fn(**inputs)
        compiled()
        torch.cuda.synchronize()
        add("torch.compile", compiled, lambda: holder["compiled"], case.torch_tolerance)
        holder.pop("compiled", None)
    except _NotTimed:  # a training case: PyTorch eager is what it is held to
        pass
    except Exception as e:  # no triton, or a compiler failure: say so, go on
        results.append(Result(label, "torch.compile", None, note=f"n/a: {type(e).__name__}: "
                              f"{str(e).splitlines()[0][:80] if str(e) else ''}"))

    ran = set()
    for wanted, env in case.variants or VARIANTS:
        # poison: every element must be written
        out = (case.make_output(inputs) if case.make_output
               else torch.full_like(inputs["a"], float("nan")))
        try:
            run = case.build_graph(inputs, out, env)
            kernel = first_run(run)  # "compiled fast", "interpreting generic", ...
            if case.variants:  # row cases: each geometry asked for, by name
                add(f"hipdnn {run.engine}, {wanted}", run, lambda: out, case.tolerance,
                    "" if kernel == "row-wise" else f"(ran: {kernel})")
                continue
            if kernel in ran:  # without NVRTC the compiled rows are the interpreter's
                continue
            ran.add(kernel)
            note = "" if kernel.replace(" ", ", ", 1) + " way" == wanted else f"(asked: {wanted})"
            add(f"hipdnn {run.engine}, {kernel}", run, lambda: out, case.tolerance, note)
        except hipdnn.HipdnnError as e:
            results.append(Result(label, f"hipdnn ({wanted})", None, note=f"failed: {e}"))
    return results


def host_time_results() -> List[Result]:
    x = torch.randn(16, device="cuda")
    y = torch.empty_like(x)
    results = [Result("tiny relu, host time", "torch.relu", None,
                      note=f"{host_time_us(lambda: torch.relu(x)):.1f} us per call")]
    g = hipdnn.pygraph(io_data_type=dt.FLOAT, compute_data_type=dt.FLOAT, name="tiny_relu")
    X = g.tensor(name="x", dim=[16], data_type=dt.FLOAT)
    Y = g.relu(input=X, name="y")
    Y.set_output(True)
    g.build([hipdnn.heur_mode.A])
    engine = g.get_engine_name(0)
    if g.get_memory_space(0) == hipdnn.memory_space.HOST:
        results.append(Result("tiny relu, host time", f"hipdnn ({engine})", None,
                              note="skipped: no device engine"))
        return results
    handle = hipdnn.Handle()
    handle.set_stream(torch.cuda.current_stream())
    dx = hipdnn.DeviceArray.from_numpy(np.arange(16, dtype=np.float32) - 8)
    dy = hipdnn.DeviceArray.empty([16], np.float32)
    pack = {X: dx, Y: dy}
    us = host_time_us(lambda: g.execute(pack, None, handle=handle))
    if not np.array_equal(dy.numpy(), np.maximum(np.arange(16, dtype=np.float32) - 8, 0)):
        results.append(Result("tiny relu, host time", f"hipdnn ({engine})", None, note="WRONG"))
        return results
    results.append(Result("tiny relu, host time", f"hipdnn ({engine}), DeviceArray", None,
                          note=f"{us:.1f} us per call"))
    pack_t = {X: x, Y: y}
    us_t = host_time_us(lambda: g.execute(pack_t, None, handle=handle))
    torch.cuda.synchronize()
    if not torch.equal(y, torch.relu(x)):
        results.append(Result("tiny relu, host time", f"hipdnn ({engine}), torch tensors", None,
                              note="WRONG"))
        return results
    results.append(Result("tiny relu, host time", f"hipdnn ({engine}), torch tensors", None,
                          note=f"{us_t:.1f} us per call"))
    return results


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--log2", type=int, default=None,
                   help="elements per tensor, log2 (default: each case's own, 28 for bf16, 26 for fp32)")
    p.add_argument("--samples", type=int, default=15, help="timed samples (default 15)")
    p.add_argument("--repeat", type=int, default=5, help="runs per sample (default 5)")
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    p.add_argument("--markdown", nargs="?", const="-", metavar="FILE",
                   help="also write the run as a history entry: its standing in RESULTS.md's "
                        "format, then the whole table (FILE '-' or left out: standard output)")
    p.add_argument("--update-results", type=Path, metavar="RESULTS_MD",
                   help="file the run in the history/ beside RESULTS_MD and replace the device's "
                        "rows of RESULTS_MD case by case")
    p.add_argument("--commit", help="the commit measured (default: git rev-parse --short HEAD)")
    p.add_argument("--date", help="the run's date (default: today, UTC)")
    return p.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if torch is None or not torch.cuda.is_available():
        print("gpu_bench: needs PyTorch with a GPU", file=sys.stderr)
        return 2
    names = args.cases.split(",")
    for name in names:
        if name not in CASES:
            print(f"gpu_bench: unknown case {name!r} (known: {', '.join(CASES)})", file=sys.stderr)
            return 2
    rt = hipdnn.device_runtime()
    print(f"hipdnn {hipdnn.version()}, device runtime {rt.name} ({rt.device_count} device(s)); "
          f"engines: {', '.join(e.name for e in hipdnn.engines())}")
    copy_bytes = 2 << (28 if args.log2 is None else args.log2)  # a bf16 tensor of the first case
    copy_gbs = copy_bandwidth_gbs(copy_bytes, args.samples, args.repeat)
    results: List[Result] = []
    for name in names:
        results += run_case(CASES[name], args.log2, args.samples, args.repeat, copy_gbs)
        torch.cuda.empty_cache()
    results += host_time_results()
    device = torch.cuda.get_device_name()
    table = bench_results.format_run_table(results, device, copy_gbs, copy_bytes)
    print()
    print("\n".join(table))
    wrong = [r for r in results if r.note.startswith(("WRONG", "failed"))]
    if args.markdown or args.update_results:
        date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
        entry = bench_results.run_entry(
            table, device, date, args.commit or bench_results.git_commit(),
            preamble=f"`gpu_bench.py {' '.join(argv if argv is not None else sys.argv[1:])}`: "
                     f"hipdnn {hipdnn.version()}, torch {torch.__version__}.")
        if args.markdown == "-":
            print()
            print(entry)
        elif args.markdown:
            Path(args.markdown).write_text(entry, encoding="utf-8")
        if args.update_results and wrong:
            print("gpu_bench: results wrong or failed; RESULTS.md left as it was", file=sys.stderr)
        elif args.update_results:
            path = bench_results.add_entry(entry, args.update_results)
            print(f"gpu_bench: {path} written, {args.update_results} updated")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
