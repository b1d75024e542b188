"""libhipdnn_ort_bridge.so (shim/, docs/onnxruntime_shim.md), driven as an umbrella EP drives
one of its backends.

tests/ort_shim/umbrella is a C program that dlopens the bridge and calls CreateEpFactories /
ReleaseEpFactory through dlsym with libonnxruntime.so.1's real OrtApiBase, one scripted step
per argument.  Most tests put tests/ort_shim/fake_ep.c behind the bridge: a stand-in for
hipdnn-ep that logs its loads, unloads, creates and releases to a file and fails on demand,
so reference counting is checked without ORT sessions.  The last tests put the real
libhipdnn_ep.so behind it and run a model through an ORT session.

The bridge, the fake and the umbrella are compiled here from their sources, as the CMake
targets compile them, plus -Werror; so these tests need only ORT's headers and library,
which come from the build folder (HIPDNN_BUILD_DIR) or from tools/fetch_ort.sh.  They are
skipped, saying why, only when ORT cannot be fetched.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
BUILD_DIR = Path(os.environ.get("HIPDNN_BUILD_DIR", REPO / "build")).resolve()
CC = os.environ.get("CC", "cc")
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE"]
# `make test-asan` sets this: the bridge, the fake EP and the umbrella are then built with
# the sanitizers too, like everything else in that build (their reports fail the target)
if os.environ.get("HIPDNN_TEST_SANITIZE"):
    CFLAGS += [f"-fsanitize={os.environ['HIPDNN_TEST_SANITIZE']}", "-fno-omit-frame-pointer",
               "-g"]

ORT_NO_SUCHFILE, ORT_FAIL, ORT_INVALID_ARGUMENT, ORT_EP_FAIL = 3, 1, 2, 11
EP_ENV = "HIPDNN_EP_LIBRARY"


# ---- building ---------------------------------------------------------------------------

def cache_value(name):
    """A value from the build folder's CMakeCache.txt, or None."""
    cache = BUILD_DIR / "CMakeCache.txt"
    if cache.exists():
        m = re.search(rf"^{name}:\w+=(.*)$", cache.read_text(), re.M)
        if m:
            return m.group(1)
    return None


@pytest.fixture(scope="session")
def ort(tmp_path_factory):
    """(include dir, libonnxruntime.so.1): the build's, else fetched."""
    inc, lib = BUILD_DIR / "ort" / "include", BUILD_DIR / "ort" / "lib" / "libonnxruntime.so.1"
    if (inc / "onnxruntime_ep_c_api.h").exists() and lib.exists():
        return inc, lib
    dest = tmp_path_factory.mktemp("ort")
    p = subprocess.run(["bash", str(REPO / "tools" / "fetch_ort.sh"), str(dest)],
                       capture_output=True, text=True, timeout=900)
    if p.returncode:
        pytest.skip(f"ONNX Runtime could not be fetched (tools/fetch_ort.sh): {p.stderr.strip()}")
    found = dict(line.split("=", 1) for line in p.stdout.split())
    return Path(found["include"]), Path(found["library"])


def cc(args, what):
    p = subprocess.run([CC] + CFLAGS + [str(a) for a in args], capture_output=True, text=True)
    assert p.returncode == 0, f"compiling {what} failed (warnings are errors):\n{p.stderr}"


@pytest.fixture(scope="session")
def built(ort, tmp_path_factory):
    """The bridge, the fake hipdnn-ep (and one without ReleaseEpFactory) and the umbrella,
    each in its own folder, so that no lookup beside the bridge finds a fake by accident."""
    inc, lib = ort
    out = tmp_path_factory.mktemp("ort_shim")
    b = {"bridge": out / "bridge" / "libhipdnn_ort_bridge.so",
         "fake": out / "fake" / "libhipdnn_ep.so",
         "nosym": out / "nosym" / "libhipdnn_ep.so",
         "umbrella": out / "umbrella"}
    for p in b.values():
        p.parent.mkdir(exist_ok=True)
    shared = ["-fPIC", "-fvisibility=hidden", "-shared", f"-I{inc}"]
    cc(shared + [REPO / "shim" / "bridge.c", REPO / "shim" / "locate.c", "-o", b["bridge"],
                 "-Wl,--no-undefined", "-ldl", "-pthread"], "shim/")
    fake = REPO / "tests" / "ort_shim" / "fake_ep.c"
    cc(shared + [fake, "-o", b["fake"]], "fake_ep.c")
    cc(shared + ["-DFAKE_EP_NO_RELEASE=1", fake, "-o", b["nosym"]], "fake_ep.c (no release)")
    cc([f"-I{inc}", REPO / "tests" / "ort_shim" / "umbrella.c", "-o", b["umbrella"], lib,
        f"-Wl,-rpath,{lib.parent}", "-ldl", "-pthread"], "umbrella.c")
    return b


class Run:
    """One umbrella run: its lines, exit status and what the fake logged."""

    def __init__(self, p, log):
        self.rc, self.stderr = p.returncode, p.stderr
        self.lines = p.stdout.splitlines()
        self.log = log.read_text().splitlines() if log and log.exists() else []

    def line(self, prefix, k=0):
        found = [x for x in self.lines if x.startswith(prefix)]
        assert len(found) > k, f"no line {k} starting {prefix!r} in:\n" + "\n".join(self.lines)
        return found[k]

    def created(self):
        """Factory pointers the umbrella got, in order."""
        return [p for x in self.lines if x.startswith("create ok")
                for p in x.split()[3:]]

    def __repr__(self):
        return "\n".join(self.lines + ["-- stderr:", self.stderr, "-- fake's log:"] + self.log)


def umbrella(built, tmp_path, *steps, bridge=None, env=None, expect_rc=0):
    """Runs the umbrella over the bridge with the steps; HIPDNN_EP_LIBRARY is unset unless
    env sets it.  Every step must meet its expectation ("!" for a failure) unless
    expect_rc says otherwise."""
    log = tmp_path / "fake.log"
    e = {k: v for k, v in os.environ.items()
         if k not in (EP_ENV, "LD_LIBRARY_PATH") and not k.startswith("FAKE_EP_")}
    e["FAKE_EP_LOG"] = str(log)
    e.update(env or {})
    p = subprocess.run([str(built["umbrella"]), str(bridge or built["bridge"]), *steps],
                       capture_output=True, text=True, env=e, timeout=300)
    r = Run(p, log)
    assert r.rc == expect_rc, f"umbrella exited {r.rc}:\n{r!r}"
    return r


def fake_env(built, **more):
    return {EP_ENV: str(built["fake"]), **more}


def replay(log):
    """Replays the fake's log and checks that it never ran unloaded and was unloaded only
    with no factory outstanding.  Returns (loaded at the end, factories outstanding)."""
    loaded, out = False, set()
    for i, ev in enumerate(log):
        kind, _, ptr = ev.partition(" ")
        if kind == "load":
            assert not loaded, f"line {i}: loaded twice:\n{log}"
            loaded = True
        elif kind == "unload":
            assert loaded and not out, f"line {i}: unloaded with {out} outstanding"
            loaded = False
        else:
            assert loaded, f"line {i}: {ev} while unloaded"
            if kind == "create":
                out.add(ptr)
            else:
                assert ptr in out, f"line {i}: release of {ptr}, never created or twice"
                out.remove(ptr)
    return loaded, out


# ---- the library ------------------------------------------------------------------------

def exported(path):
    p = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                       text=True, check=True)
    return sorted(line.split()[-1] for line in p.stdout.splitlines() if line.strip())


def test_bridge_exports_only_the_two_entry_points(built):
    assert exported(built["bridge"]) == ["CreateEpFactories", "ReleaseEpFactory"]


def test_cmake_target_exports_only_the_two_entry_points():
    package = Path(cache_value("HIPDNN_PACKAGE_DIR") or REPO / "hipdnn")
    path = package / "lib" / "libhipdnn_ort_bridge.so"
    if cache_value("USE_HIPDNN") not in ("ON", "TRUE", "1") or not path.exists():
        pytest.skip(f"no {path}: {BUILD_DIR} was not configured with -DUSE_HIPDNN=ON, or "
                    "not built (the bridge is built only on demand); the other tests compile "
                    "it themselves")
    assert exported(path) == ["CreateEpFactories", "ReleaseEpFactory"]


# ---- reference counting -----------------------------------------------------------------

def test_repeated_create_loads_once_and_unloads_after_the_last_release(built, tmp_path):
    fake = built["fake"]
    r = umbrella(built, tmp_path, "create", "create", "create",
                 "release", f"loaded={fake}", "release-oldest", f"loaded={fake}",
                 "release", f"!loaded={fake}", env=fake_env(built))
    assert r.log == ["load"] + [f"create {p}" for p in r.created()] + [
        f"release {r.created()[2]}", f"release {r.created()[0]}", f"release {r.created()[1]}",
        "unload"]


def test_load_again_after_a_full_unload(built, tmp_path):
    r = umbrella(built, tmp_path, "create", "release", "create", "release",
                 f"!loaded={built['fake']}", env=fake_env(built))
    assert [x for x in r.log if x in ("load", "unload")] == ["load", "unload"] * 2
    assert replay(r.log) == (False, set())


def test_factories_returned_are_hipdnn_eps_own(built, tmp_path):
    r = umbrella(built, tmp_path, "create", "name", env=fake_env(built))
    assert r.created() == [x.split()[1] for x in r.log if x.startswith("create ")]
    assert r.line("name") == f"name fake-hipdnn {built['fake']}"


def test_every_factory_of_one_create_is_counted(built, tmp_path):
    fake = built["fake"]
    r = umbrella(built, tmp_path, "create", "release", f"loaded={fake}", "release",
                 f"!loaded={fake}", env=fake_env(built, FAKE_EP_FACTORIES="2"))
    assert len(r.created()) == 2
    assert replay(r.log) == (False, set())


def test_create_that_makes_no_factory_unloads(built, tmp_path):
    r = umbrella(built, tmp_path, "create", f"!loaded={built['fake']}",
                 env=fake_env(built, FAKE_EP_FACTORIES="0"))
    assert r.line("create") == "create ok 0"
    assert r.log == ["load", "unload"]


# ---- failures and retries ---------------------------------------------------------------

def test_missing_library_then_a_retry_that_works(built, tmp_path):
    missing = tmp_path / "nowhere" / "libhipdnn_ep.so"
    r = umbrella(built, tmp_path, "!create", f"set={EP_ENV}={built['fake']}", "create",
                 "release", f"!loaded={built['fake']}", env={EP_ENV: str(missing)})
    err = r.line("create error")
    assert err.startswith(f"create error {ORT_NO_SUCHFILE} hipdnn ORT bridge: could not load")
    assert f"{missing} ({EP_ENV}): " in err and "No such file" in err
    assert r.log == ["load", f"create {r.created()[0]}", f"release {r.created()[0]}", "unload"]


def test_failing_create_unloads_and_a_retry_loads_again(built, tmp_path):
    r = umbrella(built, tmp_path, "!create", f"!loaded={built['fake']}", "set=FAKE_EP_FAIL=",
                 "create", "release", env=fake_env(built, FAKE_EP_FAIL="create"))
    # hipdnn-ep's own status reaches the umbrella unchanged
    assert r.line("create error") == \
        f"create error {ORT_EP_FAIL} fake hipdnn-ep: create fails on demand"
    assert [x for x in r.log if x in ("load", "unload")] == ["load", "unload"] * 2


def test_failing_create_leaves_other_factories_loaded(built, tmp_path):
    fake = built["fake"]
    r = umbrella(built, tmp_path, "create", "set=FAKE_EP_FAIL=create", "!create",
                 f"loaded={fake}", "release", f"!loaded={fake}", env=fake_env(built))
    assert replay(r.log) == (False, set())
    assert r.log.count("load") == 1


def test_failing_release_keeps_the_factory_and_the_library(built, tmp_path):
    fake = built["fake"]
    r = umbrella(built, tmp_path, "create", "set=FAKE_EP_FAIL=release", "!release",
                 f"loaded={fake}", "set=FAKE_EP_FAIL=", "release", f"!loaded={fake}",
                 env=fake_env(built))
    assert r.line("release error") == \
        f"release error {ORT_EP_FAIL} fake hipdnn-ep: release fails on demand"
    assert replay(r.log) == (False, set())


def test_release_of_a_pointer_the_bridge_never_gave_is_refused(built, tmp_path):
    r = umbrella(built, tmp_path, "create", "!release-bogus", "release", "!release-bogus",
                 env=fake_env(built))
    for k in (0, 1):
        assert r.line("release-bogus error", k).startswith(
            f"release-bogus error {ORT_INVALID_ARGUMENT} hipdnn ORT bridge: ReleaseEpFactory: "
            "not a factory this bridge handed out")
    assert replay(r.log) == (False, set())


def test_release_before_any_create_is_ignored(built, tmp_path):
    # No OrtApi has been seen, so there is none to make a status with: the pointer is
    # neither forwarded nor fatal.
    r = umbrella(built, tmp_path, "release-bogus", f"!loaded={built['fake']}",
                 env=fake_env(built))
    assert r.log == []


def test_library_without_release_is_not_hipdnn_ep(built, tmp_path):
    r = umbrella(built, tmp_path, "!create", f"!loaded={built['nosym']}",
                 env={EP_ENV: str(built["nosym"])})
    assert r.line("create error").startswith(f"create error {ORT_FAIL} ")
    assert f"{built['nosym']} ({EP_ENV}): opened, but it does not export ReleaseEpFactory" \
        in r.line("create error")
    assert r.log == ["load", "unload"]  # the fake's constructor ran, and it was closed again


def test_bridge_named_as_hipdnn_ep_is_refused(built, tmp_path):
    r = umbrella(built, tmp_path, "!create", env={EP_ENV: str(built["bridge"])})
    assert "that is this bridge, not hipdnn-ep" in r.line("create error")


# ---- finding libhipdnn_ep.so ------------------------------------------------------------

def beside(built, tmp_path):
    """The bridge with a fake libhipdnn_ep.so in its folder."""
    d = tmp_path / "lib"
    d.mkdir()
    shutil.copy(built["bridge"], d)
    shutil.copy(built["fake"], d)
    return d / "libhipdnn_ort_bridge.so", d / "libhipdnn_ep.so"


def test_found_beside_the_bridge(built, tmp_path):
    bridge, fake = beside(built, tmp_path)
    r = umbrella(built, tmp_path, "create", "name", f"loaded={fake}", "release",
                 f"!loaded={fake}", bridge=bridge)
    assert r.line("name") == f"name fake-hipdnn {fake}"
    assert replay(r.log) == (False, set())


def test_found_through_the_loaders_search_path(built, tmp_path):
    r = umbrella(built, tmp_path, "create", "name", "release",
                 env={"LD_LIBRARY_PATH": str(built["fake"].parent)})
    assert r.line("name") == f"name fake-hipdnn {built['fake']}"


def test_not_found_names_every_path_tried(built, tmp_path):
    r = umbrella(built, tmp_path, "!create")
    err = r.line("create error")
    assert err.startswith(f"create error {ORT_NO_SUCHFILE} ")
    assert f"{built['bridge'].parent}/libhipdnn_ep.so (beside libhipdnn_ort_bridge.so): " in err
    assert "libhipdnn_ep.so (the loader's search path): " in err
    assert err.count("No such file") == 2 and f"set {EP_ENV}" in err


def test_the_variable_wins_and_nothing_else_is_tried(built, tmp_path):
    bridge, fake = beside(built, tmp_path)
    missing = tmp_path / "missing.so"
    r = umbrella(built, tmp_path, "!create", f"!loaded={fake}", bridge=bridge,
                 env={EP_ENV: str(missing)})
    err = r.line("create error")
    assert str(missing) in err and "beside" not in err and "search path" not in err
    assert r.log == []


# ---- threads ----------------------------------------------------------------------------

def test_concurrent_create_and_release(built, tmp_path):
    r = umbrella(built, tmp_path, "threads=8,200", f"!loaded={built['fake']}",
                 env=fake_env(built))
    assert r.line("threads") == "threads ok 8 200"
    assert sum(x.startswith("create ") for x in r.log) == 1600
    assert replay(r.log) == (False, set())


def test_concurrent_with_a_factory_held_throughout(built, tmp_path):
    fake = built["fake"]
    r = umbrella(built, tmp_path, "create", "threads=8,100", f"loaded={fake}", "release",
                 f"!loaded={fake}", env=fake_env(built))
    assert r.log.count("load") == 1  # the held factory kept it loaded the whole time
    assert replay(r.log) == (False, set())


# ---- the real hipdnn-ep -----------------------------------------------------------------

@pytest.fixture(scope="session")
def real(built):
    """(bridge, env, libhipdnn_ep.so): the CMake-built bridge beside the real hipdnn-ep
    when the build has one, else the compiled bridge pointed at it by HIPDNN_EP_LIBRARY."""
    lib = Path(cache_value("HIPDNN_PACKAGE_DIR") or REPO / "hipdnn") / "lib"
    ep = lib / "libhipdnn_ep.so"
    if not ep.exists():
        pytest.skip(f"{ep} is not built: ONNX Runtime was not fetched at configure time "
                    "(tools/fetch_ort.sh; CMake option HIPDNN_ORT_EP)")
    if (lib / "libhipdnn_ort_bridge.so").exists():
        return lib / "libhipdnn_ort_bridge.so", {}, ep
    return built["bridge"], {EP_ENV: str(ep)}, ep


def test_real_factory_is_hipdnn_eps_and_creates_an_ep_with_no_devices(built, real, tmp_path):
    bridge, env, ep = real
    r = umbrella(built, tmp_path, "create", "name", "ep", f"loaded={ep}", "release",
                 f"!loaded={ep}", bridge=bridge, env=env)
    name, owner = r.line("name").split()[1:]
    assert name == "hipdnn" and Path(owner).resolve() == ep.resolve()


def test_real_repeated_and_concurrent(built, real, tmp_path):
    bridge, env, ep = real
    r = umbrella(built, tmp_path, "create", "create", "ep", "release", "ep", "release",
                 f"!loaded={ep}", "threads=4,25,ep", f"!loaded={ep}", "create", "ep",
                 "release", bridge=bridge, env=env)
    assert r.line("threads") == "threads ok 4 25"


def test_ort_session_through_the_bridge_runs_a_model(real, tmp_path):
    onnx = pytest.importorskip("onnx", reason="python3-onnx is not installed "
                               "(apt-get install python3-onnx)")
    from onnx import TensorProto, helper, numpy_helper
    ort_run = BUILD_DIR / "tests" / "ort" / "ort_run"
    if not ort_run.exists():
        pytest.skip(f"{ort_run} is not built: ONNX Runtime was not fetched at configure time")
    bridge, env, _ = real
    rng = np.random.default_rng(7)
    w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (4,)).astype(np.float32)
    x = rng.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "W", "B"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "bridge", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8, 8])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(tmp_path / "m.onnx"))
    np.save(tmp_path / "x.npy", x)
    e = {k: v for k, v in os.environ.items() if k != EP_ENV}
    e.update(env)
    outs = {}
    for ep in ("hipdnn", "cpu"):
        d = tmp_path / ep
        d.mkdir()
        cmd = [str(ort_run), "--model", str(tmp_path / "m.onnx"), "--out-dir", str(d),
               "--ep", ep, "--opt-level", "disable", "--input", f"x={tmp_path / 'x.npy'}"]
        if ep == "hipdnn":
            cmd += ["--ep-lib", str(bridge), "--no-fallback"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=e, timeout=120)
        assert p.returncode == 0, f"ort_run --ep {ep} failed:\n{p.stdout}\n{p.stderr}"
        if ep == "hipdnn":
            assigned = [x.split()[1] for x in p.stdout.splitlines() if x.startswith("assigned ")]
            assert assigned == ["hipdnn", "hipdnn"], p.stdout
        outs[ep] = np.load(d / "y.0.npy")
    np.testing.assert_allclose(outs["hipdnn"], outs["cpu"], rtol=2e-4, atol=2e-5)
