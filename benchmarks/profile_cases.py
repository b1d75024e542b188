"""Runs each named case of gpu_bench.py a few times, PyTorch eager then hipdnn (default
kernel choice), and nothing else: a driver for a profiler, e.g.

    ncu -k regex:'rw_|rs_|layer_norm|pool' --section SpeedOfLight --section Occupancy \\
        python3 benchmarks/profile_cases.py layernorm maxpool

Each case's output is checked against its float64 reference first, as gpu_bench does."""
import sys

import torch

import gpu_bench as gb


def main(names):
    for name in names:
        case = gb.CASES[name]
        gen = torch.Generator(device="cuda")
        gen.manual_seed(1234)
        inputs = case.make_inputs(1 << case.log2, gen)
        ref = case.reference(**inputs)
        out = case.make_output(inputs) if case.make_output else torch.full_like(inputs["a"], float("nan"))
        env = (case.variants or gb.VARIANTS)[0][1]
        run = case.build_graph(inputs, out, env)
        for _ in range(2):
            eager = case.torch_fn(**inputs)
            run()
        torch.cuda.synchronize()
        why = gb.check(f"{name} hipdnn", out, ref, case.tolerance) or gb.check(
            f"{name} torch", eager, ref, case.torch_tolerance)
        print(f"{name}: {'WRONG: ' + why if why else 'ok'} (engine {run.engine})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
