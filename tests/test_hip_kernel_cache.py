"""The HIP engine's row-wise and pooling kernels are compiled at plan time, one template
instantiation each, and kept for the process and on disk (plugins/hip/kernel_cache.c).

Checked on the engine's host emulation (build/tests/emulated/libhip_emulated.so), which
goes through the same cache, files and log lines as the GPU builds: its "compiler" makes
an image of the kernel's name, and launching the kernel runs the instantiation that name
gives.  Each case runs in a fresh process (the process's cache would answer otherwise)
with the environment it names; the emulation keeps no disk cache unless
HIPDNN_KERNEL_CACHE_DIR is set or HIPDNN_EMULATED_KERNEL_CACHE=1 asks for the default
folder, so the other tests write nothing under $HOME."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
EMULATED = BUILD_DIR / "tests" / "emulated" / "libhip_emulated.so"

# argv: plugin, graph ("layernorm", "layernorm_fp32", "pool", "relu"), plans, offset
# (elements x starts past a 16-byte boundary); prints the log and the max error
SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import hipdnn
    hipdnn.set_engine_plugin_paths([sys.argv[1]])
    what, plans, offset = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    log = []
    hipdnn.set_log_level(hipdnn.log_level.INFO)
    hipdnn.set_log_callback(lambda level, m: log.append(m))
    dt = hipdnn.data_type
    rng = np.random.default_rng(0)
    fp32 = what.endswith("fp32")
    for _ in range(plans):
        g = hipdnn.pygraph(io_data_type=dt.FLOAT if fp32 else dt.HALF,
                           intermediate_data_type=dt.FLOAT, compute_data_type=dt.FLOAT)
        np_t = np.float32 if fp32 else np.float16
        if what.startswith("layernorm"):
            buf = rng.standard_normal(8 * 256 + offset).astype(np_t)
            x = buf[offset:].reshape(8, 256)
            s = np.full((1, 256), 1.5, np_t)
            X, S = g.tensor_like(x, name="x"), g.tensor_like(s, name="s")
            y, _, _ = g.layernorm(hipdnn.norm_forward_phase.INFERENCE, X, S, None, 1e-5, name="ln")
            xd = x.astype(np.float64)
            want = 1.5 * (xd - xd.mean(1, keepdims=True)) / np.sqrt(xd.var(1, keepdims=True) + 1e-5)
            ins = {X: x, S: s}
        elif what == "pool":
            x = rng.standard_normal((1, 2, 8, 8)).astype(np_t)
            X = g.tensor_like(x, name="x")
            y, _ = g.resample(X, hipdnn.resample_mode.MAXPOOL, window=[2, 2], stride=[2, 2],
                              pre_padding=[0, 0], post_padding=[0, 0], name="pool")
            want = x.astype(np.float64).reshape(1, 2, 4, 2, 4, 2).max(axis=(3, 5))
            ins = {X: x}
        else:
            x = rng.standard_normal((8, 256)).astype(np_t)
            X = g.tensor_like(x, name="x")
            y = g.relu(input=X, name="r")
            want = np.maximum(x.astype(np.float64), 0)
            ins = {X: x}
        y.set_output(True).set_dim(list(want.shape)).set_data_type(dt.FLOAT if fp32 else dt.HALF)
        g.set_preferred_engine("hip_emulated")
        g.validate()
        g.create_execution_plans([hipdnn.heur_mode.A])
        reasons = dict(g.support_report())
        g.build_plans()
        engine = g.get_engine_name(0)
        out = np.full(want.shape, np.nan, np_t)
        for _ in range(2):
            g.execute({**ins, y: out}, np.zeros(max(g.get_workspace_size(), 1), np.uint8))
        print("ENGINE", engine)
        print("REASON", reasons.get("hip_emulated", ""))
        print("ERROR", float(np.abs(out.astype(np.float64) - want).max()))
    hipdnn._C.flush_log()
    for m in log:
        print("LOG", m)
''')


def run(env_extra, what="layernorm", plans=1, offset=0, unset=()):
    assert EMULATED.is_file(), f"build the test targets ({EMULATED})"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k in ("HIPDNN_PLUGIN_DIR", "HIPDNN_KERNEL_CACHE_DIR", "HIPDNN_EMULATED_KERNEL_CACHE",
              "HIPDNN_EMULATED_NO_RTC", "HIPDNN_HIP_JIT", "HIPDNN_CACHE_DIR", "HIPDNN_CACHE",
              *unset):
        env.pop(k, None)
    env.update(env_extra)
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(EMULATED), what, str(plans),
                           str(offset)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    out = {"log": [l[4:] for l in lines if l.startswith("LOG ")],
           "engine": [l[7:] for l in lines if l.startswith("ENGINE ")],
           "reason": [l[7:] for l in lines if l.startswith("REASON ")],
           "error": [float(l[6:]) for l in lines if l.startswith("ERROR ")]}
    return out


def kernel_lines(out):
    return [m for m in out["log"] if re.search(r": kernel \S+<", m)]


def files(folder):
    return sorted(folder.glob("*.kernel")) if folder.is_dir() else []


def test_a_kernel_is_compiled_once_saved_and_loaded_from_disk_by_the_next_process(tmp_path):
    cache = tmp_path / "kernels"
    first = run({"HIPDNN_KERNEL_CACHE_DIR": str(cache)})
    assert first["engine"] == ["hip_emulated"] and first["error"][0] < 0.05, first
    compiled = kernel_lines(first)
    # fp16 rows of 256, 16-byte aligned: the fast way, one vector a thread
    assert len(compiled) == 1 and "kernel rw_norm<1, 0, 1> (host): compiled in" in compiled[0], \
        first["log"]
    [f] = files(cache)
    assert re.fullmatch(r"rw_norm-[0-9a-f]{32}\.kernel", f.name)
    assert f"saved as {f}" in compiled[0]
    head = f.read_bytes().split(b"\n\n", 1)[0].decode()
    assert head.splitlines()[:3] == ["HIPDNN-KERNEL 1", f"key {f.name[8:40]}", "name rw_norm<1, 0, 1>"]
    stamp = f.stat().st_mtime_ns

    second = run({"HIPDNN_KERNEL_CACHE_DIR": str(cache)})
    assert second["error"][0] < 0.05
    assert kernel_lines(second) == [
        f"hip_emulated: kernel rw_norm<1, 0, 1> (host): loaded from the disk cache ({f})"]
    assert files(cache) == [f] and f.stat().st_mtime_ns == stamp


def test_plans_of_one_process_share_the_kernel(tmp_path):
    out = run({"HIPDNN_KERNEL_CACHE_DIR": str(tmp_path)}, plans=3)
    lines = kernel_lines(out)
    assert len(lines) == 3 and "compiled in" in lines[0], lines
    assert all(m.endswith("kernel rw_norm<1, 0, 1> (host): from the process's cache")
               for m in lines[1:]), lines


def test_each_kernel_has_its_own_file(tmp_path):
    run({"HIPDNN_KERNEL_CACHE_DIR": str(tmp_path)})
    run({"HIPDNN_KERNEL_CACHE_DIR": str(tmp_path)}, what="layernorm_fp32")
    run({"HIPDNN_KERNEL_CACHE_DIR": str(tmp_path)}, what="pool")
    names = sorted(f.read_bytes().split(b"\n")[2].decode() for f in files(tmp_path))
    # fp32 rows of 256: the fast way in fp32 (storage type 0)
    assert names == ["name rs_forward_kernel<2>", "name rw_norm<1, 0, 0>", "name rw_norm<1, 0, 1>"]


@pytest.mark.parametrize("damage", ["truncated", "flipped", "garbage", "empty", "other_kernel"])
def test_a_damaged_file_is_ignored_recompiled_and_replaced(tmp_path, damage):
    env = {"HIPDNN_KERNEL_CACHE_DIR": str(tmp_path)}
    run(env)
    [f] = files(tmp_path)
    data = f.read_bytes()
    f.write_bytes({"truncated": data[:-5],
                   "flipped": data[:-3] + bytes([data[-3] ^ 1]) + data[-2:],
                   "garbage": os.urandom(len(data)),
                   "empty": b"",
                   "other_kernel": data.replace(b"name rw_norm<1, 0, 1>", b"name rw_norm<2, 0, 1>")}[damage])
    out = run(env)
    assert out["engine"] == ["hip_emulated"] and out["error"][0] < 0.05
    ignoring = [m for m in out["log"] if "kernel cache: ignoring" in m]
    assert len(ignoring) == 1 and str(f) in ignoring[0] and "compiling again" in ignoring[0], out["log"]
    assert "compiled in" in kernel_lines(out)[0]
    assert f.read_bytes() == data  # replaced by a good one
    assert "loaded from the disk cache" in kernel_lines(run(env))[0]


def test_a_folder_that_cannot_be_written_costs_only_the_disk_cache(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    out = run({"HIPDNN_KERNEL_CACHE_DIR": str(blocker / "kernels")}, what="pool")
    assert out["engine"] == ["hip_emulated"] and out["error"][0] == 0.0
    warnings = [m for m in out["log"] if "kernel cache: cannot write" in m]
    assert len(warnings) == 1 and str(blocker / "kernels") in warnings[0], out["log"]
    assert "compiled in" in kernel_lines(out)[0] and "not saved" in kernel_lines(out)[0]


def test_off_keeps_no_disk_cache(tmp_path):
    home = tmp_path / "home"
    out = run({"HIPDNN_KERNEL_CACHE_DIR": "off", "HIPDNN_EMULATED_KERNEL_CACHE": "1",
               "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "xdg")})
    assert out["error"][0] < 0.05
    assert "(no disk cache: HIPDNN_KERNEL_CACHE_DIR=off)" in kernel_lines(out)[0]
    assert not any(tmp_path.rglob("*.kernel"))


def test_the_default_folder_is_under_xdg_cache_home_else_home(tmp_path):
    home, xdg = tmp_path / "home", tmp_path / "xdg"
    run({"HIPDNN_EMULATED_KERNEL_CACHE": "1", "HOME": str(home), "XDG_CACHE_HOME": str(xdg)})
    assert len(files(xdg / "hipdnn" / "kernels")) == 1
    run({"HIPDNN_EMULATED_KERNEL_CACHE": "1", "HOME": str(home)}, unset=("XDG_CACHE_HOME",))
    assert len(files(home / ".cache" / "hipdnn" / "kernels")) == 1
    assert oct((home / ".cache" / "hipdnn" / "kernels").stat().st_mode & 0o777) == "0o700"


def test_pointers_off_the_16_byte_grid_take_another_kernel_said_once(tmp_path):
    # x one fp16 element past a 16-byte boundary: the general way, which the plan did not
    # compile; two executes of the same plan log it once
    out = run({"HIPDNN_KERNEL_CACHE_DIR": str(tmp_path)}, offset=1)
    assert out["engine"] == ["hip_emulated"] and out["error"][0] < 0.05
    other = [m for m in out["log"] if "these pointers take kernel" in m]
    assert len(other) == 1, out["log"]
    assert "take kernel rw_norm<1, 0, -1> (planned for 16-byte aligned ones: rw_norm<1, 0, 1>)" \
        in other[0]
    assert sorted(f.read_bytes().split(b"\n")[2] for f in files(tmp_path)) == \
        [b"name rw_norm<1, 0, -1>", b"name rw_norm<1, 0, 1>"]
    assert any("first run of the row-wise kernel rw_norm<1, 0, -1> (general way)" in m
               for m in out["log"]), out["log"]


@pytest.mark.parametrize("what,kind", [("layernorm", "row-wise"), ("pool", "pooling")])
def test_without_a_run_time_compiler_row_wise_and_pooling_graphs_are_declined(what, kind):
    out = run({"HIPDNN_EMULATED_NO_RTC": "1"}, what=what)
    assert out["engine"] == ["reference_cpu"], out
    node = "node 'ln' (norm_forward)" if what == "layernorm" else "node 'pool' (resample_fwd)"
    assert out["reason"][0] == (f"hip_emulated: {node}: {kind} kernels are compiled at run time "
                                "and no NVRTC was found (HIPDNN_EMULATED_NO_RTC is set)"), out
    assert out["error"][0] < 0.05


def test_without_a_run_time_compiler_pointwise_graphs_still_run():
    out = run({"HIPDNN_EMULATED_NO_RTC": "1"}, what="relu")
    assert out["engine"] == ["hip_emulated"] and out["error"][0] == 0.0
