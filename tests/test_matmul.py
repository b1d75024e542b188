"""matmul on the reference engine against float64 NumPy matmul.

2D, batched, batch broadcast, transposed and non-contiguous operands, fp32 / fp16 / bf16.
"""
import hipdnn
import numpy as np
import pytest

import references as ref
from tolerances import tolerance


def check_matmul(nx, dtype, a, b, a_layout="packed", b_layout="packed", c_layout="packed"):
    """Builds A, B -> matmul -> C, runs it and compares C with NumPy's A @ B."""
    A = nx.input(a, dtype, a_layout)
    B = nx.input(b, dtype, b_layout)
    g = nx.graph(dtype)
    c = g.matmul(A=A.bind(g, "A"), B=B.bind(g, "B"), name="mm")
    expected = ref.matmul(A.values, B.values)
    out = nx.output(c, expected.shape, dtype, c_layout)
    nx.execute(g, [A, B, out])
    nx.assert_close(out, expected, tolerance("matmul", dtype))


def test_matmul_2d(nx, dtype):
    check_matmul(nx, dtype, a=[7, 5], b=[5, 6])


def test_matmul_outer_product_k1(nx, dtype):
    check_matmul(nx, dtype, a=[5, 1], b=[1, 4])


def test_matmul_row_vector_m1(nx, dtype):
    check_matmul(nx, dtype, a=[1, 9], b=[9, 4])


def test_matmul_batched(nx, dtype):
    check_matmul(nx, dtype, a=[3, 7, 5], b=[3, 5, 6])


def test_matmul_two_batch_dims(nx, dtype):
    check_matmul(nx, dtype, a=[2, 3, 4, 5], b=[2, 3, 5, 6])


def test_matmul_broadcasts_batch_dims_of_size_one(nx, dtype):
    # [2, 1, M, K] @ [1, 3, K, N] -> [2, 3, M, N]
    check_matmul(nx, dtype, a=[2, 1, 4, 5], b=[1, 3, 5, 6])


def test_matmul_broadcasts_shared_weight(nx, dtype):
    check_matmul(nx, dtype, a=[4, 3, 5], b=[1, 5, 6])


def test_matmul_broadcasts_shared_activation(nx, dtype):
    check_matmul(nx, dtype, a=[1, 3, 5], b=[4, 5, 6])


def test_matmul_transposed_b(nx, dtype):
    # B held column-major (B^T row-major), as a weight of a linear layer usually is.
    check_matmul(nx, dtype, a=[3, 6, 7], b=[3, 7, 5], b_layout="transposed")


def test_matmul_transposed_a(nx, dtype):
    check_matmul(nx, dtype, a=[3, 6, 7], b=[3, 7, 5], a_layout="transposed")


def test_matmul_both_transposed_and_transposed_output(nx, dtype):
    check_matmul(nx, dtype, a=[2, 6, 7], b=[2, 7, 5], a_layout="transposed",
                 b_layout="transposed", c_layout="transposed")


def test_matmul_non_contiguous_views(nx, dtype):
    check_matmul(nx, dtype, a=[2, 5, 6], b=[2, 6, 4], a_layout="strided", b_layout="strided",
                 c_layout="strided")


def test_matmul_broadcast_with_transposed_b(nx, dtype):
    check_matmul(nx, dtype, a=[2, 1, 4, 6], b=[1, 3, 6, 5], b_layout="transposed")


def test_matmul_broadcast_output_dims_and_strides_inferred(nx, dtype):
    check_matmul(nx, dtype, a=[2, 1, 4, 5], b=[1, 3, 5, 6], c_layout="inferred")


def test_matmul_medium(nx, dtype):
    check_matmul(nx, dtype, a=[4, 32, 48], b=[4, 48, 40])


def test_matmul_long_inner_dim(nx, dtype):
    # K = 256: fp32 accumulation error must stay inside the fp32 tolerance.
    check_matmul(nx, dtype, a=[2, 16, 256], b=[2, 256, 24], b_layout="transposed")


def test_matmul_rank_difference_broadcasts_or_is_rejected_cleanly(nx, dtype):
    """[B, M, K] @ [K, N]: NumPy broadcasts it.  The API may do the same (then the result
    must match) or refuse it as an invalid graph; it must not crash or compute garbage."""
    A = nx.input([3, 4, 5], dtype)
    B = nx.input([5, 6], dtype)
    g = nx.graph(dtype)
    try:
        c = g.matmul(A=A.bind(g, "A"), B=B.bind(g, "B"), name="mm")
        expected = ref.matmul(A.values, B.values)
        out = nx.output(c, expected.shape, dtype)
        nx.build(g)
    except ValueError as e:  # InvalidGraphError is a ValueError
        assert "matmul" in str(e) or "mm" in str(e), f"the error should name the node: {e}"
        return
    nx.execute(g, [A, B, out], build=False)
    nx.assert_close(out, expected, tolerance("matmul", dtype))


def test_matmul_inner_dim_mismatch_is_an_invalid_graph(nx):
    A = nx.input([4, 5], "fp32")
    B = nx.input([6, 3], "fp32")
    g = nx.graph("fp32")
    with pytest.raises(ValueError):
        c = g.matmul(A=A.bind(g, "A"), B=B.bind(g, "B"), name="mm")
        c.set_output(True)
        g.build([hipdnn.heur_mode.A])


def test_reference_matmul_broadcast_shape():
    got = ref.matmul(np.ones((2, 1, 4, 5)), np.ones((1, 3, 5, 6)))
    assert got.shape == (2, 3, 4, 6) and (got == 5).all()
