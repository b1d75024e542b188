"""cuDNN frontend's ``cudnn.experimental.ops.sdpa`` and ``cudnn.api_base`` in hipdnn, without
PyTorch: the modules import without it (and ``import hipdnn`` loads neither them nor torch),
the operator then says torch is needed, a ``cudnn`` alias of hipdnn shares one copy of the
caches, the experimental-API warning is logged once per API; and the graphs behind the
operator (hipdnn/experimental/ops/_sdpa_graphs.py), run here on NumPy arrays on the
reference engine, against float64 NumPy: forward with Stats and backward from O, dO and
Stats, causal masks at both alignments, sliding windows, padding, GQA, strided layouts,
one cached graph per problem.  tests/test_gpu_sdpa_op.py runs the torch operator on a GPU."""
import importlib
import logging
import threading

import numpy as np
import pytest

import hipdnn
import references as ref
from conftest import assert_close, python
from hipdnn.api_base import _reset_experimental_api_warning_registry, warn_experimental_api_once
from hipdnn.experimental.ops import _sdpa_graphs as graphs
from tolerances import tolerance

TOL = {np.float32: "fp32", np.float16: "fp16"}


# ---- modules, imports, api_base ---------------------------------------------------------

def test_import_hipdnn_loads_neither_torch_nor_the_experimental_package():
    out = python("import sys, hipdnn\n"
                 "print('torch' in sys.modules, 'hipdnn.experimental' in sys.modules)")
    assert out.split() == ["False", "False"]


def test_the_modules_import_without_torch_and_the_operator_asks_for_it():
    out = python(
        "import sys\n"
        "sys.modules['torch'] = None  # as if not installed, wherever it is\n"
        "import hipdnn.experimental\n"
        "from hipdnn.experimental.ops.sdpa import scaled_dot_product_attention, "
        "_fprop_cache, _bprop_cache\n"
        "assert hipdnn.experimental.ops.scaled_dot_product_attention is "
        "scaled_dot_product_attention\n"
        "assert _fprop_cache == {} and _bprop_cache == {}\n"
        "try:\n"
        "    scaled_dot_product_attention(None, None, None)\n"
        "except ModuleNotFoundError as e:\n"
        "    print(e.name, '|', e)\n")
    name, message = out.strip().split(" | ")
    assert name == "torch" and "needs PyTorch" in message


def test_a_cudnn_alias_of_hipdnn_shares_the_caches_and_hipdnns_classes():
    # tools/cudnn_frontend_tests.py makes `import cudnn` return hipdnn (sys.modules), so
    # Python loads the package again as cudnn.experimental: state must stay one copy
    out = python(
        "import sys, hipdnn\n"
        "sys.modules['cudnn'] = hipdnn\n"
        "from cudnn.experimental.ops.sdpa import scaled_dot_product_attention, _fprop_cache\n"
        "from cudnn.experimental.ops import sdpa\n"
        "from cudnn.api_base import warn_experimental_api_once\n"
        "from hipdnn.experimental.ops import _sdpa_graphs\n"
        "assert _fprop_cache is _sdpa_graphs._fprop_cache\n"
        "assert sdpa._bprop_cache is _sdpa_graphs._bprop_cache\n"
        "assert _sdpa_graphs.pygraph is hipdnn.pygraph\n"
        "print(sorted(m for m in sys.modules if m.startswith('cudnn.') and 'experimental' "
        "not in m and 'api_base' not in m))\n")
    assert out.strip() == "[]"  # no second copy of hipdnn's own modules


def test_the_experimental_warning_is_logged_once_per_api(caplog):
    logger = logging.getLogger("hipdnn.test.experimental")
    _reset_experimental_api_warning_registry()
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            for name in ("Alpha", "Alpha", "Beta", "Alpha", "Beta"):
                warn_experimental_api_once(logger, name)
        assert [r.getMessage() for r in caplog.records] == [
            "Alpha is an experimental API", "Beta is an experimental API"]
        assert {r.levelno for r in caplog.records} == {logging.WARNING}
    finally:
        _reset_experimental_api_warning_registry()


def test_resetting_the_registry_warns_again(caplog):
    logger = logging.getLogger("hipdnn.test.experimental")
    _reset_experimental_api_warning_registry()
    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            warn_experimental_api_once(logger, "Gamma")
            _reset_experimental_api_warning_registry()
            warn_experimental_api_once(logger, "Gamma")
        assert [r.getMessage() for r in caplog.records] == ["Gamma is an experimental API"] * 2
    finally:
        _reset_experimental_api_warning_registry()


def test_many_threads_asking_at_once_warn_once(caplog):
    logger = logging.getLogger("hipdnn.test.experimental")
    _reset_experimental_api_warning_registry()
    start = threading.Barrier(8)

    def ask():
        start.wait()
        for _ in range(50):
            warn_experimental_api_once(logger, "Delta")

    try:
        with caplog.at_level(logging.WARNING, logger=logger.name):
            threads = [threading.Thread(target=ask) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert [r.getMessage() for r in caplog.records] == ["Delta is an experimental API"]
    finally:
        _reset_experimental_api_warning_registry()


def test_moe_grouped_matmul_is_named_and_refused_as_not_supported():
    from hipdnn.experimental.ops import moe_grouped_matmul
    with pytest.raises(hipdnn.FeatureNotSupportedError, match="moe_grouped_matmul") as e:
        moe_grouped_matmul(None, None, None, mode="gather")
    assert isinstance(e.value, NotImplementedError)
    assert isinstance(e.value, hipdnn.cudnnGraphNotSupportedError)


@pytest.mark.parametrize("name", ["experimental", "experimental.ops",
                                  "experimental.ops.sdpa", "experimental.ops.moe_grouped_matmul"])
def test_every_public_name_of_the_experimental_modules_has_a_docstring(name):
    module = importlib.import_module(f"hipdnn.{name}")
    assert (module.__doc__ or "").strip() and module.__all__
    for attr in module.__all__:
        obj = getattr(module, attr)
        assert (obj.__doc__ or "").strip(), f"hipdnn.{name}.{attr}"


@pytest.mark.parametrize("mask,want", [
    ((False, 0, -1, -1), (hipdnn.diagonal_alignment.TOP_LEFT, None, None)),
    ((True, 0, -1, -1), (hipdnn.diagonal_alignment.TOP_LEFT, None, 0)),
    ((True, 1, -1, -1), (hipdnn.diagonal_alignment.BOTTOM_RIGHT, None, 0)),
    ((True, 0, 32, 0), (hipdnn.diagonal_alignment.TOP_LEFT, 32, 0)),
    ((True, 0, -1, 5), (hipdnn.diagonal_alignment.TOP_LEFT, None, 5)),
    ((False, 1, 4, 2), (hipdnn.diagonal_alignment.BOTTOM_RIGHT, 4, 2)),
])
def test_mask_arguments_become_sdpas_band(mask, want):
    kw = graphs.Mask(*mask).keywords()
    assert (kw["diagonal_alignment"], kw["diagonal_band_left_bound"],
            kw["diagonal_band_right_bound"]) == want


# ---- the graphs, on NumPy arrays --------------------------------------------------------

@pytest.fixture(autouse=True)
def empty_caches():
    """Each test starts with no cached graph (the caches live as long as the process)."""
    graphs._fprop_cache.clear()
    graphs._bprop_cache.clear()


def allowed(mask, b, sq, skv, lens):
    """The float64 reference's mask for graphs.Mask and seq_lens (None or (len_q, len_kv))."""
    right = mask.right_bound if mask.right_bound >= 0 else (0 if mask.is_causal else None)
    left = mask.left_bound if mask.left_bound >= 0 else None
    lq, lk = lens if lens else (None, None)
    return ref.sdpa_mask(b, sq, skv, lq, lk, left, right, mask.diagonal_alignment != 0)


def layout(a, kind):
    """a in BHSD (packed) or as a BSHD allocation viewed as BHSD."""
    if kind == "bhsd":
        return np.ascontiguousarray(a)
    return np.ascontiguousarray(a.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)


class Problem:
    """q, k, v, dO (and seq_lens) of one attention problem, in dtype and a layout."""

    def __init__(self, rng, b=2, hq=4, hk=None, sq=7, skv=9, d=8, dv=None,
                 dtype=np.float32, kind="bhsd", lens=None):
        hk, dv = hk or hq, dv or d
        make = lambda *shape: layout(rng.standard_normal(shape).astype(dtype), kind)
        self.q, self.k = make(b, hq, sq, d), make(b, hk, skv, d)
        self.v, self.do = make(b, hk, skv, dv), make(b, hq, sq, dv)
        self.dtype, self.lens = dtype, lens
        self.seq = {} if lens is None else {
            name: np.asarray(n, np.int32).reshape(-1, 1, 1, 1)
            for name, n in zip(("seq_len_q", "seq_len_kv"), lens)}

    def inputs(self):
        return [self.q, self.k, self.v, self.do, *self.seq.values()]


def run(p, scale, mask, put=lambda a: a, get=lambda a: a, deterministic=False):
    """The operator's two graphs on p: returns o, stats, dq, dk, dv (NumPy) and whether
    each graph came from its cache.  Outputs start as NaN: every element must be written."""
    nan = lambda shape, dt: np.full(shape, np.nan, dt)
    o = put(nan(p.q.shape[:3] + p.v.shape[3:], p.dtype))
    stats = put(nan(p.q.shape[:3] + (1,), np.float32))
    q, k, v, do = (put(a) for a in (p.q, p.k, p.v, p.do))
    seq = {n: put(a) for n, a in p.seq.items()}
    hit_f = graphs.forward(None, dict(q=q, k=k, v=v, o=o, stats=stats, **seq), scale, mask)
    dq, dk, dv = (put(nan(a.shape, p.dtype)) for a in (p.q, p.k, p.v))
    hit_b = graphs.backward(None, dict(q=q, k=k, v=v, o=o, dO=do, stats=stats, dQ=dq,
                                       dK=dk, dV=dv, **seq), scale, mask, deterministic)
    return [get(a) for a in (o, stats, dq, dk, dv)], (hit_f, hit_b)


def check(p, scale, mask, outs):
    """outs against float64: o and stats from the inputs, the gradients from the inputs,
    dO and the graph's own o and stats (as a training step's backward sees them)."""
    o, stats, dq, dk, dv = outs
    b, _, sq, _ = p.q.shape
    ok = allowed(mask, b, sq, p.k.shape[2], p.lens)
    want_o, want_stats = ref.sdpa(p.q, p.k, p.v, scale, None, ok)
    tol = tolerance("sdpa", TOL[p.dtype])
    assert_close(o, want_o, tol, "o")
    empty = np.isneginf(want_stats)
    assert np.array_equal(np.isneginf(stats), empty), "stats: -inf rows differ"
    assert_close(stats[~empty], want_stats[~empty], tolerance("sdpa", "fp32"), "stats")
    want = ref.sdpa_backward(p.q, p.k, p.v, o, p.do, stats, scale, None, ok)
    for name, got, w in zip(("dq", "dk", "dv"), (dq, dk, dv), want):
        assert_close(got, w, tol, name)


CASES = {
    "plain": (dict(), (False, 0, -1, -1)),
    "causal_top_left": (dict(sq=9), (True, 0, -1, -1)),
    "causal_bottom_right": (dict(sq=5, skv=11), (True, 1, -1, -1)),
    "sliding_window": (dict(sq=12, skv=12), (True, 0, 3, 0)),
    "band": (dict(sq=10, skv=10), (False, 0, 2, 3)),
    "gqa": (dict(hq=6, hk=2), (False, 0, -1, -1)),
    "mqa_causal": (dict(hq=4, hk=1), (True, 0, -1, -1)),
    "padding": (dict(lens=([5, 7], [9, 4])), (False, 0, -1, -1)),
    "padding_causal_bottom_right": (dict(lens=([3, 7], [8, 9])), (True, 1, -1, -1)),
    "bshd_head_dim_16": (dict(kind="bshd", d=16, dv=8), (False, 0, -1, -1)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name", list(CASES))
def test_forward_and_backward_graphs_match_float64(rng, name, dtype):
    kw, mask = CASES[name]
    p = Problem(rng, dtype=dtype, **kw)
    before = [a.copy() for a in p.inputs()]
    outs, _ = run(p, 0.3, graphs.Mask(*mask))
    check(p, 0.3, graphs.Mask(*mask), outs)
    for a, was in zip(p.inputs(), before):
        assert np.array_equal(a, was), "an input changed"


def test_the_second_call_of_a_problem_reuses_both_graphs(rng):
    mask = graphs.Mask(True, 0, -1, -1)
    first = Problem(rng, b=1, hq=2, sq=6, skv=6, d=8)
    n_f, n_b = len(graphs._fprop_cache), len(graphs._bprop_cache)
    _, hits = run(first, 0.5, mask)
    assert hits == (False, False)
    assert (len(graphs._fprop_cache), len(graphs._bprop_cache)) == (n_f + 1, n_b + 1)
    second = Problem(rng, b=1, hq=2, sq=6, skv=6, d=8)  # new values, same problem
    outs, hits = run(second, 0.5, mask)
    assert hits == (True, True)
    assert (len(graphs._fprop_cache), len(graphs._bprop_cache)) == (n_f + 1, n_b + 1)
    check(second, 0.5, mask, outs)  # the cached graphs read the new arrays


@pytest.mark.parametrize("change", ["shape", "layout", "dtype", "scale", "mask", "padding",
                                    "deterministic"])
def test_each_part_of_the_problem_has_its_own_graph(rng, change):
    base = dict(b=1, hq=2, sq=6, skv=6, d=8)
    mask, scale = graphs.Mask(False, 0, -1, -1), 0.5
    run(Problem(rng, **base), scale, mask)
    p, deterministic = Problem(rng, **base), False
    if change in ("shape", "layout", "dtype", "padding"):
        extra = {"shape": dict(sq=7), "layout": dict(kind="bshd"),
                 "dtype": dict(dtype=np.float16), "padding": dict(lens=([6], [4]))}[change]
        p = Problem(rng, **{**base, **extra})
    scale = 0.25 if change == "scale" else scale
    mask = graphs.Mask(True, 0, -1, -1) if change == "mask" else mask
    deterministic = change == "deterministic"
    outs, hits = run(p, scale, mask, deterministic=deterministic)
    assert hits == ((True, False) if change == "deterministic" else (False, False))
    check(p, scale, mask, outs)


def test_clearing_the_caches_builds_again(rng):
    p, mask = Problem(rng, b=1, hq=1, sq=4, skv=4, d=8), graphs.Mask(False, 0, -1, -1)
    run(p, 1.0, mask)
    graphs._fprop_cache.clear()
    graphs._bprop_cache.clear()
    assert len(graphs._fprop_cache) == len(graphs._bprop_cache) == 0
    _, hits = run(p, 1.0, mask)
    assert hits == (False, False) and len(graphs._fprop_cache) == 1


def test_a_graph_no_engine_runs_is_refused_at_build_and_not_cached(rng):
    # a left bound of 0 is not a band sdpa takes: pygraph says so, and nothing is cached
    p, mask = Problem(rng, b=1, hq=1, sq=4, skv=4, d=8), graphs.Mask(False, 0, 0, -1)
    n = len(graphs._fprop_cache)
    with pytest.raises(ValueError, match="left bound"):
        run(p, 1.0, mask)
    assert len(graphs._fprop_cache) == n
