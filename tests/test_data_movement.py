"""slice and concatenate on the reference engine: the values are copied bit for bit, for
every storage type, through strided inputs and outputs."""
import hipdnn
import numpy as np
import pytest



DTYPES = {"fp32": np.float32, "fp16": np.float16, "fp64": np.float64}


def rand(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("slices", [
    (slice(1, 4), slice(None), slice(0, 7, 2)),
    (slice(0, 1), slice(2, 3), slice(6, 7)),
    (slice(None, None, 3), slice(1, None, 2), slice(None)),
])
def test_slice(dtype, slices):
    x = rand([5, 4, 7], DTYPES[dtype])
    before = x.copy()
    with hipdnn.Graph() as g:
        y = g.slice(x, slices=list(slices))
        g.output(y)
    got = g(x)
    want = x[slices]
    assert got.shape == want.shape
    assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
    assert np.array_equal(x, before)


def test_slice_of_a_strided_view_into_a_strided_output():
    base = rand([6, 10, 8], np.float32, 1)
    x = base[:, ::2, 1:]                       # [6, 5, 7], non-contiguous
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    xt = g.tensor_like(x, name="x")
    y = g.slice(xt, slices=[slice(1, 5), slice(0, 5, 2), slice(2, 7)])
    out_base = np.full([4, 3, 10], np.nan, np.float32)
    out = out_base[:, :, ::2]                  # [4, 3, 5] with stride 2 on the last dim
    y.set_output(True).set_stride([s // 4 for s in out.strides])
    g.build([hipdnn.heur_mode.A])
    g.execute({xt: x, y: out}, np.empty(g.get_workspace_size(), np.uint8))
    assert np.array_equal(out, x[1:5, 0:5:2, 2:7])
    assert np.isnan(out_base[:, :, 1::2]).all()   # the gaps are untouched


def test_slice_errors_name_the_dim():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[4, 5])
    with pytest.raises(ValueError, match="2 slices for an input of rank 2|rank"):
        g.slice(x, slices=[slice(0, 2)])
    y = g.slice(x, slices=[slice(3, 3), slice(None)])
    y.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match="dim 0: start 3, limit 3"):
        g.validate()


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_concatenate(dtype, axis):
    shapes = [[3, 4, 5], [3, 4, 5], [3, 4, 5]]
    for s, extra in zip(shapes, (1, 2, 3)):
        s[axis] = extra
    xs = [rand(s, DTYPES[dtype], i) for i, s in enumerate(shapes)]
    with hipdnn.Graph() as g:
        y = g.concatenate(inputs=xs, axis=axis)
        g.output(y)
    got = g(*xs)
    want = np.concatenate(xs, axis=axis)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_concatenate_eight_strided_inputs():
    xs = [rand([2, 3 + i, 4], np.float32, i)[:, :, ::-1].copy()[:, :, ::1] for i in range(8)]
    views = [np.asfortranarray(x) for x in xs]   # column-major inputs
    with hipdnn.Graph() as g:
        y = g.concatenate(inputs=views, axis=1)
        g.output(y)
    assert np.array_equal(g(*views), np.concatenate(xs, axis=1))


def test_concatenate_rejects_mismatched_inputs():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    a = g.tensor(name="a", dim=[2, 3])
    b = g.tensor(name="b", dim=[3, 3])
    y = g.concatenate(inputs=[a, b], axis=1)
    y.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match=r"x1 'b' is \[3, 3\] but x0 'a' is \[2, 3\]"):
        g.validate()
