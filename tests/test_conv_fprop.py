"""conv_fprop on the reference engine against a float64 NumPy convolution.

Covers 1D/2D/3D, symmetric and asymmetric padding, stride, dilation, groups (depthwise
included), NCHW / NHWC / arbitrary strides, and both convolution modes, for fp32, fp16 and
bf16 storage with fp32 compute.
"""
import hipdnn
import numpy as np
import pytest

import references as ref
from tolerances import tolerance

CROSS = hipdnn.convolution_mode.CROSS_CORRELATION
TRUE_CONV = hipdnn.convolution_mode.CONVOLUTION


def check_conv(nx, dtype, x, w, padding=None, pre=None, post=None, stride=None,
               dilation=None, mode=None, x_layout="packed", w_layout="packed",
               y_layout="packed", y_set_dim=True):
    """Builds x -> conv_fprop -> y, runs it and compares y with the NumPy reference."""
    spatial = len(x) - 2
    stride = stride or [1] * spatial
    dilation = dilation or [1] * spatial
    if padding is not None:
        pads = dict(padding=padding)
        pre = post = padding
    else:
        pads = dict(pre_padding=pre, post_padding=post)
    if mode is not None:
        pads["convolution_mode"] = mode

    image = nx.input(x, dtype, x_layout)
    weight = nx.input(w, dtype, w_layout)
    g = nx.graph(dtype)
    y = g.conv_fprop(image=image.bind(g, "x"), weight=weight.bind(g, "w"), stride=stride,
                     dilation=dilation, name="conv", **pads)

    expected = ref.conv_fprop(image.values, weight.values, pre, post, stride, dilation,
                              flip=(mode == TRUE_CONV))
    out = nx.output(y, expected.shape, dtype, y_layout, set_dim=y_set_dim)
    nx.execute(g, [image, weight, out])
    nx.assert_close(out, expected, tolerance("conv_fprop", dtype))


# ---- 2D geometry ------------------------------------------------------------------------

def test_conv2d_same_padding(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 7, 7], w=[6, 4, 3, 3], padding=[1, 1])


def test_conv2d_without_padding(nx, dtype):
    check_conv(nx, dtype, x=[2, 5, 8, 6], w=[3, 5, 3, 2], padding=[0, 0])


def test_conv2d_asymmetric_pre_and_post_padding(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 7, 6], w=[5, 4, 3, 3], pre=[1, 0], post=[2, 1])


def test_conv2d_padding_wider_than_kernel_writes_zeros_at_borders(nx, dtype):
    # Corner outputs see only padding: the engine must write 0 there, not leave poison.
    check_conv(nx, dtype, x=[1, 3, 5, 5], w=[4, 3, 3, 3], padding=[3, 3])


def test_conv2d_stride(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 9, 8], w=[6, 4, 3, 3], padding=[1, 1], stride=[2, 3])


def test_conv2d_stride_larger_than_kernel(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 9, 9], w=[5, 4, 1, 1], padding=[0, 0], stride=[3, 2])


def test_conv2d_dilation(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 9, 9], w=[6, 4, 3, 3], padding=[2, 2], dilation=[2, 2])


def test_conv2d_stride_dilation_and_asymmetric_padding_together(nx, dtype):
    check_conv(nx, dtype, x=[2, 3, 9, 8], w=[4, 3, 3, 2], pre=[2, 0], post=[1, 1],
               stride=[2, 1], dilation=[1, 3])


def test_conv2d_rectangular_kernel(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 6, 9], w=[3, 4, 1, 5], padding=[0, 2])


# ---- groups -----------------------------------------------------------------------------

def test_conv2d_grouped(nx, dtype):
    # weight C=4 divides image C=8: two groups of 4 input channels, 3 output channels each.
    check_conv(nx, dtype, x=[2, 8, 7, 7], w=[6, 4, 3, 3], padding=[1, 1])


def test_conv2d_four_groups_with_stride(nx, dtype):
    check_conv(nx, dtype, x=[2, 8, 8, 8], w=[8, 2, 3, 3], padding=[1, 1], stride=[2, 2])


def test_conv2d_depthwise(nx, dtype):
    check_conv(nx, dtype, x=[2, 6, 7, 7], w=[6, 1, 3, 3], padding=[1, 1])


def test_conv2d_depthwise_with_channel_multiplier(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 6, 6], w=[8, 1, 3, 3], padding=[1, 1])


# ---- layouts ----------------------------------------------------------------------------

def test_conv2d_nhwc_image_and_weight(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 7, 6], w=[6, 4, 3, 3], padding=[1, 1],
               x_layout="channels_last", w_layout="channels_last")


def test_conv2d_nhwc_output(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 7, 6], w=[6, 4, 3, 3], padding=[1, 1],
               y_layout="channels_last")


def test_conv2d_nhwc_everywhere_grouped(nx, dtype):
    check_conv(nx, dtype, x=[2, 6, 6, 7], w=[9, 2, 3, 3], padding=[1, 0], stride=[1, 2],
               x_layout="channels_last", w_layout="channels_last", y_layout="channels_last")


def test_conv2d_non_contiguous_views(nx, dtype):
    # Views into larger NaN-filled buffers: reading or writing a gap shows up.
    check_conv(nx, dtype, x=[2, 4, 7, 7], w=[5, 4, 3, 3], padding=[1, 1],
               x_layout="strided", w_layout="strided", y_layout="strided")


def test_conv2d_mixed_layouts(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 6, 6], w=[4, 4, 3, 3], padding=[1, 1], stride=[2, 2],
               x_layout="strided", w_layout="channels_last", y_layout="channels_last")


# ---- output dims and strides left to inference --------------------------------------------

def test_conv2d_output_dims_and_strides_inferred(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 9, 8], w=[6, 4, 3, 2], pre=[1, 0], post=[2, 1],
               stride=[2, 1], dilation=[1, 2], y_layout="inferred")


def test_conv2d_output_inferred_from_nhwc_image(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 7, 6], w=[6, 4, 3, 3], padding=[1, 1],
               x_layout="channels_last", w_layout="channels_last", y_layout="inferred")


def test_conv3d_output_dims_and_strides_inferred(nx, dtype):
    check_conv(nx, dtype, x=[2, 3, 5, 6, 4], w=[4, 3, 3, 2, 3], padding=[1, 0, 1],
               stride=[2, 1, 1], y_layout="inferred")


def test_conv2d_output_strides_set_without_dims(nx, dtype):
    # cuDNN frontend habit: y.set_output(True).set_stride(nhwc); the dims are still inferred.
    check_conv(nx, dtype, x=[2, 4, 7, 6], w=[6, 4, 3, 3], padding=[1, 1],
               y_layout="channels_last", y_set_dim=False)


# ---- convolution mode -------------------------------------------------------------------

@pytest.mark.parametrize("mode", [CROSS, TRUE_CONV], ids=["cross_correlation", "convolution"])
def test_conv2d_convolution_mode(nx, dtype, mode):
    # A random (non-symmetric) filter tells the two modes apart.
    check_conv(nx, dtype, x=[2, 3, 7, 6], w=[4, 3, 3, 2], pre=[1, 0], post=[1, 1], mode=mode)


def test_conv3d_true_convolution_flips_every_spatial_dim(nx, dtype):
    check_conv(nx, dtype, x=[1, 2, 5, 4, 6], w=[3, 2, 2, 3, 2], padding=[1, 1, 0],
               mode=TRUE_CONV)


def test_conv2d_true_convolution_grouped_strided_dilated(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 9, 8], w=[4, 2, 3, 2], padding=[1, 1], stride=[2, 1],
               dilation=[1, 2], mode=TRUE_CONV)


# ---- 1D and 3D --------------------------------------------------------------------------

def test_conv1d(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 11], w=[5, 4, 3], padding=[1], stride=[2])


def test_conv1d_dilated_asymmetric_padding(nx, dtype):
    check_conv(nx, dtype, x=[2, 3, 12], w=[4, 3, 4], pre=[3], post=[0], dilation=[2])


def test_conv3d(nx, dtype):
    check_conv(nx, dtype, x=[2, 3, 5, 6, 4], w=[4, 3, 3, 3, 2], padding=[1, 1, 0])


def test_conv3d_stride_dilation_asymmetric_padding(nx, dtype):
    check_conv(nx, dtype, x=[2, 3, 6, 7, 6], w=[4, 3, 2, 3, 3], pre=[1, 0, 2], post=[0, 1, 1],
               stride=[2, 1, 2], dilation=[1, 2, 1])


def test_conv3d_grouped_channels_last(nx, dtype):
    check_conv(nx, dtype, x=[2, 4, 4, 5, 4], w=[6, 2, 3, 3, 3], padding=[1, 1, 1],
               x_layout="channels_last", w_layout="channels_last", y_layout="channels_last")


def test_conv3d_non_contiguous_views(nx, dtype):
    check_conv(nx, dtype, x=[1, 3, 4, 5, 5], w=[2, 3, 2, 2, 3], padding=[0, 1, 1],
               x_layout="strided", w_layout="strided", y_layout="strided")


# ---- medium shapes ----------------------------------------------------------------------

def test_conv2d_medium_resnet_like_block(nx, dtype):
    check_conv(nx, dtype, x=[2, 32, 14, 14], w=[32, 32, 3, 3], padding=[1, 1])


def test_conv2d_medium_strided_nhwc(nx, dtype):
    check_conv(nx, dtype, x=[2, 16, 17, 17], w=[24, 16, 5, 5], padding=[2, 2], stride=[2, 2],
               x_layout="channels_last", w_layout="channels_last", y_layout="channels_last")


# ---- the reference itself -----------------------------------------------------------------

def test_reference_conv_agrees_with_a_direct_loop(rng):
    """Guards the guard: the vectorised reference against the textbook definition."""
    x = rng.standard_normal((2, 4, 6, 5))
    w = rng.standard_normal((6, 2, 3, 2))
    pre, post, stride, dil = [1, 0], [2, 1], [2, 1], [1, 2]
    for flip in (False, True):
        got = ref.conv_fprop(x, w, pre, post, stride, dil, flip=flip)
        wk = w[:, :, ::-1, ::-1] if flip else w
        n, c, h, wd = x.shape
        k, cg, r, s = w.shape
        kg = k // (c // cg)
        want = np.zeros(got.shape)
        for ni, ki, oh, ow in np.ndindex(*got.shape):
            g = ki // kg
            acc = 0.0
            for ci, ri, si in np.ndindex(cg, r, s):
                ih = oh * stride[0] + ri * dil[0] - pre[0]
                iw = ow * stride[1] + si * dil[1] - pre[1]
                if 0 <= ih < h and 0 <= iw < wd:
                    acc += x[ni, g * cg + ci, ih, iw] * wk[ki, ci, ri, si]
            want[ni, ki, oh, ow] = acc
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
