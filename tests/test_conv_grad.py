"""conv_dgrad and conv_wgrad on the reference engine against float64 NumPy adjoints of the
forward convolution, for 1D/2D/3D, padding (asymmetric too), stride, dilation, groups,
both convolution modes, strided layouts and fp32/fp16/bf16 storage.  The references are
checked once against finite sums of conv_fprop itself (the adjoint identity), so they
cannot share a mistake with the engine."""
import hipdnn
import numpy as np
import pytest

import references as ref
from tolerances import tolerance

TRUE_CONV = hipdnn.convolution_mode.CONVOLUTION


def geometry(x, w, pre, post, stride, dilation):
    spatial = len(x) - 2
    return [x[0], w[0]] + [ref.conv_output_size(x[2 + i], w[2 + i], pre[i], post[i], stride[i],
                                                dilation[i]) for i in range(spatial)]


def params(x, pre, post, stride, dilation, mode):
    spatial = len(x) - 2
    kw = dict(pre_padding=pre or [0] * spatial, post_padding=post or [0] * spatial,
              stride=stride or [1] * spatial, dilation=dilation or [1] * spatial)
    if mode is not None:
        kw["convolution_mode"] = mode
    return kw


def check_dgrad(nx, dtype, x, w, pre=None, post=None, stride=None, dilation=None, mode=None,
                dy_layout="packed", w_layout="packed", dx_layout="packed"):
    kw = params(x, pre, post, stride, dilation, mode)
    y = geometry(x, w, kw["pre_padding"], kw["post_padding"], kw["stride"], kw["dilation"])
    loss = nx.input(y, dtype, dy_layout)
    filt = nx.input(w, dtype, w_layout)
    g = nx.graph(dtype)
    dx = g.conv_dgrad(loss=loss.bind(g, "dy"), filter=filt.bind(g, "w"), name="dgrad", **kw)
    expected = ref.conv_dgrad(loss.values, filt.values, x, kw["pre_padding"],
                              kw["post_padding"], kw["stride"], kw["dilation"],
                              flip=(mode == TRUE_CONV))
    out = nx.output(dx, expected.shape, dtype, dx_layout)
    nx.execute(g, [loss, filt, out])
    nx.assert_close(out, expected, tolerance("conv_fprop", dtype))


def check_wgrad(nx, dtype, x, w, pre=None, post=None, stride=None, dilation=None, mode=None,
                x_layout="packed", dy_layout="packed", dw_layout="packed"):
    kw = params(x, pre, post, stride, dilation, mode)
    y = geometry(x, w, kw["pre_padding"], kw["post_padding"], kw["stride"], kw["dilation"])
    image = nx.input(x, dtype, x_layout)
    loss = nx.input(y, dtype, dy_layout)
    g = nx.graph(dtype)
    dw = g.conv_wgrad(image=image.bind(g, "x"), loss=loss.bind(g, "dy"), name="wgrad", **kw)
    expected = ref.conv_wgrad(image.values, loss.values, w, kw["pre_padding"],
                              kw["post_padding"], kw["stride"], kw["dilation"],
                              flip=(mode == TRUE_CONV))
    out = nx.output(dw, expected.shape, dtype, dw_layout)
    nx.execute(g, [image, loss, out])
    nx.assert_close(out, expected, tolerance("conv_fprop", dtype))


CASES = {
    "2d_same": dict(x=[2, 4, 7, 7], w=[6, 4, 3, 3], pre=[1, 1], post=[1, 1]),
    "2d_stride2_odd": dict(x=[2, 3, 9, 8], w=[5, 3, 3, 2], pre=[1, 0], post=[0, 1],
                           stride=[2, 3]),
    "2d_dilated": dict(x=[1, 2, 11, 10], w=[3, 2, 3, 3], dilation=[2, 3], pre=[2, 1],
                       post=[1, 2]),
    "2d_groups": dict(x=[2, 6, 6, 5], w=[9, 2, 3, 3], pre=[1, 1], post=[1, 1]),
    "2d_depthwise_stride": dict(x=[1, 4, 8, 8], w=[4, 1, 3, 3], stride=[2, 2], pre=[1, 1],
                                post=[1, 1]),
    "2d_true_convolution": dict(x=[2, 3, 6, 7], w=[4, 3, 3, 2], pre=[1, 0], post=[1, 1],
                                mode=TRUE_CONV),
    "1d": dict(x=[3, 4, 17], w=[5, 4, 4], pre=[2], post=[1], stride=[2]),
    "3d": dict(x=[1, 2, 5, 6, 4], w=[3, 2, 2, 3, 2], pre=[1, 1, 0], post=[0, 1, 1],
               stride=[1, 2, 1]),
    # stride larger than the kernel: some image positions get no gradient at all
    "2d_stride_over_kernel": dict(x=[1, 2, 9, 9], w=[2, 2, 2, 2], stride=[3, 3]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_conv_dgrad(nx, dtype, case):
    check_dgrad(nx, dtype, **CASES[case])


@pytest.mark.parametrize("case", list(CASES))
def test_conv_wgrad(nx, dtype, case):
    check_wgrad(nx, dtype, **CASES[case])


def test_conv_dgrad_strided_layouts(nx, dtype):
    check_dgrad(nx, dtype, x=[2, 4, 6, 5], w=[3, 4, 3, 3], pre=[1, 1], post=[1, 1],
                dy_layout="channels_last", w_layout="strided", dx_layout="channels_last")


def test_conv_wgrad_strided_layouts(nx, dtype):
    check_wgrad(nx, dtype, x=[2, 4, 6, 5], w=[3, 4, 3, 3], pre=[1, 1], post=[1, 1],
                x_layout="strided", dy_layout="channels_last", dw_layout="channels_last")


def test_references_are_the_adjoints_of_conv_fprop():
    """<conv(x, w), dy> = <x, dgrad(dy, w)> = <w, wgrad(x, dy)> for every case."""
    rng = np.random.default_rng(7)
    for case in CASES.values():
        kw = params(case["x"], case.get("pre"), case.get("post"), case.get("stride"),
                    case.get("dilation"), case.get("mode"))
        flip = case.get("mode") == TRUE_CONV
        x = rng.standard_normal(case["x"])
        w = rng.standard_normal(case["w"])
        args = (kw["pre_padding"], kw["post_padding"], kw["stride"], kw["dilation"])
        y = ref.conv_fprop(x, w, *args, flip=flip)
        dy = rng.standard_normal(y.shape)
        lhs = np.sum(y * dy)
        assert np.isclose(lhs, np.sum(x * ref.conv_dgrad(dy, w, x.shape, *args, flip=flip)))
        assert np.isclose(lhs, np.sum(w * ref.conv_wgrad(x, dy, w.shape, *args, flip=flip)))


def test_conv_dgrad_needs_dx_dims():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    dy = g.tensor(name="dy", dim=[1, 2, 4, 4])
    w = g.tensor(name="w", dim=[2, 2, 3, 3])
    dx = g.conv_dgrad(loss=dy, filter=w, padding=[1, 1], stride=[1, 1], dilation=[1, 1])
    dx.set_output(True)
    with pytest.raises(hipdnn.HipdnnError, match="dx.*has no dims"):
        g.validate()


def test_conv_wgrad_rejects_dims_that_do_not_give_dy():
    g = hipdnn.pygraph(io_data_type=hipdnn.data_type.FLOAT)
    x = g.tensor(name="x", dim=[1, 2, 5, 5])
    dy = g.tensor(name="dy", dim=[1, 3, 5, 5])
    dw = g.conv_wgrad(image=x, loss=dy, padding=[0, 0], stride=[1, 1], dilation=[1, 1])
    dw.set_output(True).set_dim([3, 2, 3, 3])
    with pytest.raises(hipdnn.HipdnnError, match=r"dy 'dy' is \[1, 3, 5, 5\] but the forward "
                                                 r"convolution of these shapes gives \[1, 3, 3, 3\]"):
        g.validate()
