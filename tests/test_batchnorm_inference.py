"""batchnorm_inference on the reference engine against float64 NumPy:
y = (x - mean) * inv_variance * scale + bias, statistics per channel."""
import references as ref
from tolerances import tolerance


def check_batchnorm(nx, dtype, x_shape, stats_dtype=None, x_layout="packed", y_layout="packed",
                    stats_layout="packed"):
    stats_dtype = stats_dtype or dtype
    stat_shape = [1, x_shape[1]] + [1] * (len(x_shape) - 2)
    x = nx.input(x_shape, dtype, x_layout, high=3.0)
    mean = nx.input(stat_shape, stats_dtype, stats_layout)
    inv_variance = nx.input(stat_shape, stats_dtype, stats_layout, low=0.5, high=2.0,
                            signed=False)
    scale = nx.input(stat_shape, stats_dtype, stats_layout, low=0.5, high=1.5)
    bias = nx.input(stat_shape, stats_dtype, stats_layout)
    g = nx.graph(dtype)
    y = g.batchnorm_inference(input=x.bind(g, "x"), mean=mean.bind(g, "mean"),
                              inv_variance=inv_variance.bind(g, "inv_variance"),
                              scale=scale.bind(g, "scale"), bias=bias.bind(g, "bias"),
                              name="bn")
    expected = ref.batchnorm_inference(x.values, mean.values, inv_variance.values,
                                       scale.values, bias.values)
    out = nx.output(y, expected.shape, dtype, y_layout)
    nx.execute(g, [x, mean, inv_variance, scale, bias, out])
    nx.assert_close(out, expected, tolerance("batchnorm", dtype))


def test_batchnorm_inference_nchw(nx, dtype):
    check_batchnorm(nx, dtype, [2, 6, 5, 7])


def test_batchnorm_inference_nhwc(nx, dtype):
    check_batchnorm(nx, dtype, [2, 6, 5, 7], x_layout="channels_last",
                    y_layout="channels_last")


def test_batchnorm_inference_non_contiguous_views(nx, dtype):
    check_batchnorm(nx, dtype, [2, 5, 4, 6], x_layout="strided", y_layout="strided",
                    stats_layout="strided")


def test_batchnorm_inference_output_inferred_from_nhwc_input(nx, dtype):
    check_batchnorm(nx, dtype, [2, 6, 5, 7], x_layout="channels_last", y_layout="inferred")


def test_batchnorm_inference_3d_spatial(nx, dtype):
    check_batchnorm(nx, dtype, [2, 4, 3, 4, 5])


def test_batchnorm_inference_1d_spatial(nx, dtype):
    check_batchnorm(nx, dtype, [3, 5, 9])


def test_batchnorm_inference_on_nc_input(nx, dtype):
    # After a linear layer: x is [N, C], statistics [1, C].
    check_batchnorm(nx, dtype, [8, 6])


def test_batchnorm_inference_fp32_statistics_with_low_precision_input(nx, dtype):
    # Mixed precision as frameworks run it: fp16/bf16 activations, fp32 running statistics.
    check_batchnorm(nx, dtype, [2, 6, 5, 5], stats_dtype="fp32")


def test_batchnorm_inference_medium(nx, dtype):
    check_batchnorm(nx, dtype, [4, 32, 16, 16], x_layout="channels_last",
                    y_layout="channels_last")
