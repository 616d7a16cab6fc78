"""chainrule.linalg and the matrix products: the namespace, results with several outputs,
edge cases of the gradients, and the errors. Values and gradients of every function on
generic inputs are checked against PyTorch by tests/test_ops.py (cases_linalg.py)."""

import math
import warnings

import numpy as np
import pytest

import chainrule
import chainrule.linalg
from chainrule import DomainError, DTypeError, ShapeError, Tensor

RNG = np.random.default_rng(0)


def leaf(array):
    return chainrule.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def test_linalg_is_a_module_and_an_attribute_with_pytorch_names(torch):
    assert chainrule.linalg is __import__("chainrule.linalg").linalg
    for name in chainrule.linalg.__all__:
        if not name.endswith("Result"):
            assert hasattr(torch.linalg, name), name
            assert getattr(chainrule.linalg, name).__doc__


@pytest.mark.parametrize(
    "name",
    ["mm", "bmm", "mv", "addmm", "baddbmm", "addmv", "inner", "kron", "cross", "det",
     "inverse", "slogdet", "logdet", "pinverse", "matrix_power"],
)  # fmt: skip
def test_pytorch_tensor_methods_of_linear_algebra_exist(name, torch):
    assert hasattr(torch.Tensor, name)
    assert getattr(chainrule.Tensor, name).__doc__


def test_multi_output_results_are_named_tuples_like_pytorchs(torch):
    a = RNG.standard_normal((2, 4, 3))
    ours, theirs = chainrule.linalg.svd(chainrule.tensor(a)), torch.linalg.svd(torch.tensor(a))
    assert [tuple(t.shape) for t in theirs] == [t.shape for t in ours]
    assert ours._fields == ("U", "S", "Vh")
    q, r = chainrule.linalg.qr(chainrule.tensor(a), mode="complete")
    assert (q.shape, r.shape) == ((2, 4, 4), (2, 4, 3))
    q, r = chainrule.linalg.qr(chainrule.tensor(a), mode="r")
    assert q.shape == (0,) and r.shape == (2, 3, 3)
    w, v = chainrule.linalg.eigh(chainrule.tensor(a @ a.swapaxes(-1, -2)))
    assert chainrule.linalg.eigh.__name__ == "eigh" and (w.shape, v.shape) == ((2, 4), (2, 4, 4))
    sign, logabsdet = chainrule.linalg.slogdet(chainrule.tensor(a[..., :3, :]))
    expected = torch.linalg.slogdet(torch.tensor(a[..., :3, :]))
    np.testing.assert_allclose(sign.numpy(), expected.sign.numpy())
    np.testing.assert_allclose(logabsdet.numpy(), expected.logabsdet.numpy())


def test_det_gradient_is_the_cofactor_matrix_even_where_det_is_zero():
    x = leaf([[1.0, 2.0], [2.0, 4.0]])  # singular
    chainrule.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]])
    assert chainrule.gradcheck(chainrule.det, [leaf([[1.0, 2.0], [2.0, 4.0]])])


def test_slogdet_sign_gets_no_gradient_and_logdet_is_nan_for_a_negative_det(torch):
    x = leaf([[0.0, 2.0], [3.0, 0.0]])
    sign, logabsdet = chainrule.slogdet(x)
    (sign + logabsdet).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.linalg.inv(x.detach().numpy()).T)
    assert math.isnan(chainrule.logdet(x).item())
    assert math.isnan(torch.logdet(torch.tensor(x.detach().numpy())).item())


def test_svdvals_gradient_is_finite_at_repeated_singular_values(torch):
    x = leaf(np.eye(3))
    chainrule.linalg.svdvals(x).sum().backward()
    expected = torch.tensor(np.eye(3), requires_grad=True)
    torch.linalg.svdvals(expected).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected.grad.numpy(), atol=1e-12)


def test_eigh_gradient_is_symmetric_as_pytorchs_for_a_batch(torch):
    a = RNG.standard_normal((3, 4, 4))
    a = a + a.swapaxes(-1, -2)
    weights = RNG.standard_normal((3, 4, 4))
    ours, theirs = leaf(a), torch.tensor(a, requires_grad=True)
    for lib, x in ((chainrule, ours), (torch, theirs)):
        w, v = lib.linalg.eigh(x)
        ((v * v * lib.tensor(weights)).sum() + (w**3).sum()).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(ours.grad.numpy(), ours.grad.numpy().swapaxes(-1, -2))


def test_svd_with_full_matrices_ignores_the_extra_columns_as_pytorch(torch):
    a = RNG.standard_normal((5, 3))
    ours, theirs = leaf(a), torch.tensor(a, requires_grad=True)
    for lib, x in ((chainrule, ours), (torch, theirs)):
        u, s, vh = lib.linalg.svd(x)
        ((u * u).sum() + (u[:, :3] @ vh).sum() + s.sum()).backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-10)


def test_qr_complete_for_a_tall_matrix_differentiates_its_reduced_part():
    a = RNG.standard_normal((4, 2))
    x, y = leaf(a), leaf(a)
    q, r = chainrule.linalg.qr(x, mode="complete")
    (q[:, :2].sum() + r.sum()).backward()
    q, r = chainrule.linalg.qr(y)
    (q.sum() + r.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy())


def test_pinv_and_matrix_rank_of_a_rank_deficient_matrix_match_pytorch(torch):
    a = np.outer([1.0, 2.0, 3.0], [1.0, -1.0])
    np.testing.assert_allclose(
        chainrule.linalg.pinv(chainrule.tensor(a)).numpy(),
        torch.linalg.pinv(torch.tensor(a)).numpy(),
        atol=1e-12,
    )
    assert chainrule.linalg.matrix_rank(chainrule.tensor(a)).item() == 1
    rank = chainrule.linalg.matrix_rank(chainrule.tensor(np.diag([1.0, 0.5, 1e-3])), atol=0.01)
    assert rank.item() == 2 and rank.dtype == np.int64


def test_vector_norm_of_order_zero_counts_nonzeros(torch):
    x = np.array([1.0, 0.0, -2.0])
    assert chainrule.linalg.vector_norm(chainrule.tensor(x), 0).item() == 2.0
    assert torch.linalg.vector_norm(torch.tensor(x), 0).item() == 2.0


def test_matrix_power_zero_is_the_identity_for_every_matrix_of_a_batch():
    out = chainrule.linalg.matrix_power(chainrule.ones(2, 3, 3), 0)
    np.testing.assert_array_equal(out.numpy(), np.broadcast_to(np.eye(3), (2, 3, 3)))


def test_cross_without_dim_takes_the_first_dim_of_size_three_as_torch_cross(torch):
    a, b = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = torch.cross(torch.tensor(a), torch.tensor(b))
    np.testing.assert_allclose(chainrule.cross(Tensor(a), Tensor(b)).numpy(), expected.numpy())
    np.testing.assert_allclose(
        chainrule.linalg.cross(Tensor(a), Tensor(b)).numpy(),
        torch.linalg.cross(torch.tensor(a), torch.tensor(b)).numpy(),
    )


def test_addmm_with_beta_zero_ignores_nan_in_input(torch):
    x = chainrule.tensor([[math.nan, 1.0]])
    out = chainrule.addmm(x, chainrule.eye(2), chainrule.eye(2), beta=0)
    np.testing.assert_array_equal(out.numpy(), np.eye(2))


def test_solve_left_false_and_batched_vectors_match_pytorch(torch):
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3))
    ours = chainrule.linalg.solve(Tensor(a), Tensor(b))
    np.testing.assert_allclose(
        ours.numpy(), torch.linalg.solve(torch.tensor(a), torch.tensor(b)).numpy()
    )
    c = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(
        chainrule.linalg.solve(Tensor(a), Tensor(c), left=False).numpy(),
        torch.linalg.solve(torch.tensor(a), torch.tensor(c), left=False).numpy(),
    )


def test_a_decomposition_runs_under_vmap_once_and_under_grad_twice():
    x = leaf(RNG.standard_normal((3, 3)) + 3 * np.eye(3))
    (g,) = chainrule.autograd.grad(chainrule.linalg.inv(x).sum(), [x], create_graph=True)
    (gg,) = chainrule.autograd.grad(g.sum(), [x])
    assert gg.shape == (3, 3) and np.all(np.isfinite(gg.numpy()))
    batched = chainrule.func.vmap(chainrule.linalg.svdvals)(chainrule.ones(4, 2, 3))
    assert batched.shape == (4, 2)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: chainrule.mm(chainrule.ones(3), chainrule.ones(3, 2)), ShapeError,
         r"mm: expects 2-D and 2-D tensors, got shapes input \(3,\), mat2 \(3, 2\)"),
        (lambda: chainrule.mm(chainrule.ones(2, 3), chainrule.ones(4, 2)), ShapeError,
         r"mm: shapes \(2, 3\) and \(4, 2\) do not align: 3 != 4"),
        (lambda: chainrule.bmm(chainrule.ones(2, 2, 3), chainrule.ones(3, 3, 2)), ShapeError,
         r"bmm: batch sizes differ in shapes \(2, 2, 3\) and \(3, 3, 2\)"),
        (lambda: chainrule.mv(chainrule.ones(2, 3), chainrule.ones(2)), ShapeError,
         r"mv: shapes \(2, 3\) and \(2,\) do not align"),
        (lambda: chainrule.addmm(chainrule.ones(3), chainrule.ones(2, 2), chainrule.ones(2, 2)),
         ShapeError, r"addmm: input of shape \(3,\) does not broadcast to the product's shape"),
        (lambda: chainrule.tensordot(chainrule.ones(2, 3), chainrule.ones(3, 2)), ShapeError,
         r"tensordot: shapes \(2, 3\) and \(3, 2\): dim 0 of a has size 2 but dim 0 of b"),
        (lambda: chainrule.tensordot(chainrule.ones(2), chainrule.ones(2), 2), ShapeError,
         r"tensordot: dims=2 must be between 0 and 1"),
        (lambda: chainrule.cross(chainrule.ones(2, 4), chainrule.ones(2, 4)), ShapeError,
         r"cross: no dim of size 3"),
        (lambda: chainrule.cross(chainrule.ones(3, 2), chainrule.ones(3, 2), dim=1), ShapeError,
         r"cross: shapes \(3, 2\) and \(3, 2\) must both have size 3 at dim 1"),
        (lambda: chainrule.linalg.inv(chainrule.ones(2, 3)), ShapeError,
         r"inv: expects square matrices \(\.\.\., n, n\), got shape \(2, 3\)"),
        (lambda: chainrule.linalg.det(chainrule.ones(3)), ShapeError,
         r"det: expects a matrix or a batch of matrices \(\.\.\., m, n\), got shape \(3,\)"),
        (lambda: chainrule.linalg.inv(chainrule.ones(2, 2)), DomainError,
         r"inv: failed for an input of shape \(2, 2\): Singular matrix"),
        (lambda: chainrule.linalg.cholesky(-chainrule.eye(2)), DomainError,
         r"cholesky: failed .* Matrix is not positive definite"),
        (lambda: chainrule.linalg.svd(chainrule.tensor([[1, 2]])), DTypeError,
         r"svd: expects a floating-point tensor, got int64"),
        (lambda: chainrule.linalg.solve(chainrule.eye(3), chainrule.ones(2)), ShapeError,
         r"solve: A has shape \(3, 3\) but B has shape \(2,\): its last dim must be 3"),
        (lambda: chainrule.linalg.solve(chainrule.eye(3), chainrule.ones(3), left=False),
         ShapeError, r"solve: left=False needs B as matrices"),
        (lambda: chainrule.linalg.qr(chainrule.eye(2), mode="full"), DomainError,
         r"qr: mode must be 'reduced', 'complete' or 'r', got 'full'"),
        (lambda: chainrule.linalg.eigh(chainrule.eye(2), UPLO="X"), DomainError,
         r"eigh: UPLO must be 'L' or 'U', got 'X'"),
        (lambda: chainrule.linalg.matrix_norm(chainrule.eye(2), 3), DomainError,
         r"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got 3"),
        (lambda: chainrule.linalg.matrix_norm(chainrule.ones(3)), ShapeError,
         r"matrix_norm: expects a matrix or a batch of matrices, got shape \(3,\)"),
        (lambda: chainrule.linalg.norm(chainrule.ones(2, 2, 2), 2), ShapeError,
         r"norm: with ord=2 and no dim, A must be 1-D or 2-D, got shape \(2, 2, 2\)"),
        (lambda: chainrule.linalg.vector_norm(chainrule.ones(2), "fro"), DTypeError,
         r"vector_norm: ord must be a number, got 'fro'"),
        (lambda: chainrule.linalg.matrix_power(chainrule.eye(2), 1.5), DTypeError,
         r"matrix_power: n must be an int, got 1.5"),
        (lambda: chainrule.linalg.multi_dot([chainrule.ones(2, 3), chainrule.ones(2, 2)]),
         ShapeError, r"multi_dot: tensor 0 of shape \(2, 3\) and tensor 1 of shape \(2, 2\) "
         r"do not align: 3 != 2"),
        (lambda: chainrule.linalg.multi_dot([chainrule.ones(2, 3)]), ShapeError,
         r"multi_dot: expects at least 2 tensors, got 1"),
        (lambda: chainrule.nn.Linear(3, 2)(chainrule.ones(4, 3, dtype=chainrule.float64)),
         DTypeError, r"matmul_add: x @ y \+ z \(a linear layer's input @ weight.T \+ bias\) got "
         r"dtypes float64, float32 and float32; all must have one dtype: convert with "
         r"\.to\(dtype\), e\.g\. input\.to\(weight\.dtype\)"),
        (lambda: chainrule.ones(2, 3) @ chainrule.ones(3, 2, dtype=chainrule.float64), DTypeError,
         r"matmul: operands have dtypes float32 and float64; both must have one dtype"),
        (lambda: chainrule.addmm(chainrule.ones(2, 2, dtype=chainrule.float64),
                                 chainrule.ones(2, 3), chainrule.ones(3, 2)), DTypeError,
         r"addmm: the operands' dtypes differ \(input float64, mat1 float32 and mat2 float32\); "
         r"all must have one dtype: convert with \.to\(dtype\)"),
    ],
)  # fmt: skip
def test_linalg_errors_name_the_op_and_the_shapes(call, error, message):
    with pytest.raises(error, match=message):
        call()


# LU, triangular and Cholesky solves, lstsq, the _ex variants and older torch.* names.


def _pair(array):
    """The same float64 values as a chainrule leaf and a PyTorch leaf."""
    import torch

    array = np.asarray(array, dtype=np.float64)
    return leaf(array), torch.tensor(array, requires_grad=True)


def test_lu_factor_pivots_are_int32_one_based_and_p_l_u_rebuild_a(torch):
    a = RNG.standard_normal((2, 4, 3))
    LU, pivots = chainrule.linalg.lu_factor(chainrule.tensor(a))
    expected = torch.linalg.lu_factor(torch.tensor(a))
    assert pivots.dtype == np.int32 and pivots.shape == (2, 3)
    np.testing.assert_array_equal(pivots.numpy(), expected.pivots.numpy())
    np.testing.assert_allclose(LU.numpy(), expected.LU.numpy(), atol=1e-12)
    P, L, U = chainrule.linalg.lu(chainrule.tensor(a))
    assert (P.shape, L.shape, U.shape) == ((2, 4, 4), (2, 4, 3), (2, 3, 3))
    np.testing.assert_allclose((P @ L @ U).numpy(), a, atol=1e-12)


def test_lu_of_a_singular_matrix_reports_the_first_zero_pivot_as_pytorch(torch):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    ours = chainrule.linalg.lu_factor_ex(chainrule.tensor(a))
    theirs = torch.linalg.lu_factor_ex(torch.tensor(a))
    assert ours.info.dtype == np.int32
    assert ours.info.item() == theirs.info.item() == 3
    np.testing.assert_allclose(ours.LU.numpy(), theirs.LU.numpy(), atol=1e-12)
    LU, pivots, infos = chainrule.lu(chainrule.tensor(a), get_infos=True)
    assert infos.item() == 3
    with pytest.raises(DomainError, match=r"lu_factor_ex: U\[2, 2\] is exactly zero"):
        chainrule.linalg.lu_factor_ex(chainrule.tensor(a), check_errors=True)


def test_lu_unpack_leaves_out_what_is_not_asked_for(torch):
    LU, pivots = chainrule.linalg.lu_factor(leaf([[1.0, 2.0], [3.0, 4.0]]))
    P, L, U = chainrule.lu_unpack(LU, pivots, unpack_data=False)
    assert P.tolist() == [[0.0, 1.0], [1.0, 0.0]] and L.shape == U.shape == (0,)
    P, L, U = chainrule.lu_unpack(LU, pivots, unpack_pivots=False)
    assert P.shape == (0,) and L.tolist() == [[1.0, 0.0], [1 / 3, 1.0]]


def test_lu_gradient_matches_pytorch_for_wide_and_tall_matrices(torch):
    for shape in [(3, 5), (5, 3)]:
        a = RNG.standard_normal(shape)
        ours, theirs = _pair(a)
        g = RNG.standard_normal(shape)
        chainrule.linalg.lu_factor(ours).LU.backward(chainrule.tensor(g))
        torch.linalg.lu_factor(theirs).LU.backward(torch.tensor(g))
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_solve_triangular_reads_only_its_triangle_and_grads_only_it(torch):
    a = np.array([[2.0, 7.0], [1.0, 4.0]])
    ours = leaf(a)
    x = chainrule.linalg.solve_triangular(ours, leaf([[2.0], [9.0]]), upper=False)
    assert x.tolist() == [[1.0], [2.0]]
    x.sum().backward()
    assert ours.grad.numpy()[0, 1] == 0
    theirs = torch.tensor(a, requires_grad=True)
    torch.linalg.solve_triangular(theirs, torch.tensor([[2.0], [9.0]], dtype=torch.float64),
                                  upper=False).sum().backward()  # fmt: skip
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())


def test_lstsq_reports_what_each_pytorch_driver_reports(torch):
    a, b = RNG.standard_normal((2, 5, 3)), RNG.standard_normal((2, 5, 2))
    for driver in (None, "gels", "gelsy", "gelsd", "gelss"):
        ours = chainrule.linalg.lstsq(chainrule.tensor(a), chainrule.tensor(b), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
        for field in ("solution", "residuals", "rank", "singular_values"):
            got, expected = getattr(ours, field), getattr(theirs, field)
            assert got.shape == tuple(expected.shape), (driver, field)
            assert got.dtype == np.dtype(str(expected.dtype).removeprefix("torch.")), field
            np.testing.assert_allclose(got.numpy(), expected.numpy(), atol=1e-10)


def test_lstsq_of_a_rank_deficient_matrix_gives_the_minimum_norm_solution(torch):
    a = np.array([[1.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    b = np.array([[2.0], [2.0], [1.0]])
    ours = chainrule.linalg.lstsq(chainrule.tensor(a), chainrule.tensor(b), driver="gelsd")
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gelsd")
    np.testing.assert_allclose(ours.solution.numpy(), [[1.0], [1.0]], atol=1e-12)
    np.testing.assert_allclose(ours.solution.numpy(), theirs.solution.numpy(), atol=1e-12)
    assert ours.rank.item() == theirs.rank.item() == 1
    assert ours.residuals.shape == tuple(theirs.residuals.shape) == (0,)


def test_ex_variants_report_failures_in_info_and_raise_on_request(torch):
    not_spd = np.array([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 0.0], [0.0, 1.0]]])
    L, info = chainrule.linalg.cholesky_ex(leaf(not_spd))
    assert info.tolist() == torch.linalg.cholesky_ex(torch.tensor(not_spd)).info.tolist()
    assert info.dtype == np.int32 and info.tolist() == [2, 0]
    L = L.detach().numpy()
    assert np.isnan(L[0]).all() and L[1].tolist() == [[2.0, 0.0], [0.0, 1.0]]
    with pytest.raises(DomainError, match=r"cholesky_ex: the leading minor of order 2 is not "
                                          r"positive-definite \(batch element 0\)"):  # fmt: skip
        chainrule.linalg.cholesky_ex(chainrule.tensor(not_spd), check_errors=True)
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    inverse, info = chainrule.linalg.inv_ex(chainrule.tensor(singular))
    assert info.item() == torch.linalg.inv_ex(torch.tensor(singular)).info.item() == 2
    result, info = chainrule.linalg.solve_ex(chainrule.tensor(singular), chainrule.ones(2))
    assert info.item() == 2 and np.isnan(result.numpy()).all()
    with pytest.raises(DomainError, match=r"inv_ex: the matrix is singular"):
        chainrule.linalg.inv_ex(chainrule.tensor(singular), check_errors=True)


def test_ex_variants_keep_the_gradients_of_the_matrices_that_succeed():
    a = leaf([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 4.0]]])
    inverse, info = chainrule.linalg.inv_ex(a)
    inverse[1].sum().backward()
    assert info.tolist() == [2, 0]
    np.testing.assert_allclose(a.grad.numpy()[1], [[-0.25, -0.125], [-0.125, -0.0625]])
    assert (a.grad.numpy()[0] == 0).all()


def test_torch_svd_gives_v_and_zeros_without_compute_uv(torch):
    a = RNG.standard_normal((3, 2))
    U, S, V = chainrule.svd(chainrule.tensor(a))
    np.testing.assert_allclose((U @ chainrule.diag(S) @ V.mT).numpy(), a, atol=1e-12)
    U, S, V = chainrule.tensor(a).svd(compute_uv=False)
    theirs = torch.svd(torch.tensor(a), compute_uv=False)
    assert (U.shape, V.shape) == (tuple(theirs.U.shape), tuple(theirs.V.shape)) == ((3, 3), (2, 2))
    assert not U.numpy().any() and not V.numpy().any()


def test_svd_and_pca_lowrank_reconstruct_a_low_rank_matrix():
    chainrule.manual_seed(0)
    a = RNG.standard_normal((8, 3)) @ RNG.standard_normal((3, 6))  # rank 3
    U, S, V = chainrule.svd_lowrank(chainrule.tensor(a), q=3)
    assert (U.shape, S.shape, V.shape) == ((8, 3), (3,), (6, 3))
    np.testing.assert_allclose((U * S @ V.mT).numpy(), a, atol=1e-10)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(a, compute_uv=False)[:3], rtol=1e-10)
    U, S, V = chainrule.svd_lowrank(chainrule.tensor(a.T), q=3)  # wide
    np.testing.assert_allclose((U * S @ V.mT).numpy(), a.T, atol=1e-10)
    centered = a - a.mean(axis=0)
    U, S, V = chainrule.pca_lowrank(chainrule.tensor(a), q=3)
    np.testing.assert_allclose((U * S @ V.mT).numpy(), centered, atol=1e-10)


def test_older_names_are_functions_and_methods_as_in_pytorch(torch):
    names = ["cholesky", "cholesky_inverse", "cholesky_solve", "lu", "lu_solve", "matrix_exp",
             "triangular_solve", "qr", "svd", "addbmm", "addcdiv", "addcmul", "addr", "vdot",
             "orgqr"]  # fmt: skip
    for name in names:
        assert hasattr(torch.Tensor, name) and getattr(chainrule.Tensor, name).__doc__, name
    for name in [*names, "lu_unpack", "chain_matmul", "adjoint", "frobenius_norm",
                 "nuclear_norm", "norm_except_dim", "svd_lowrank", "pca_lowrank"]:  # fmt: skip
        assert hasattr(torch, name) and getattr(chainrule, name).__doc__, name


def test_matrix_exp_of_a_rotation_generator_and_a_large_matrix(torch):
    angle = 0.7
    rotation = chainrule.matrix_exp(leaf([[0.0, -angle], [angle, 0.0]])).detach()
    c, s = math.cos(angle), math.sin(angle)
    np.testing.assert_allclose(rotation.numpy(), [[c, -s], [s, c]], rtol=1e-15, atol=1e-16)
    a = RNG.standard_normal((2, 5, 5)) * 10  # scaled and squared many times
    np.testing.assert_allclose(chainrule.matrix_exp(chainrule.tensor(a)).numpy(),
                               torch.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-9)  # fmt: skip
    assert chainrule.matrix_exp(chainrule.zeros(2, 2, dtype=chainrule.float32)).dtype == np.float32


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: chainrule.linalg.solve_triangular(chainrule.eye(3), chainrule.ones(2, 1),
                                                   upper=True), ShapeError,
         r"solve_triangular: A has shape \(3, 3\) but B has shape \(2, 1\): its second-last dim "
         r"must be 3"),
        (lambda: chainrule.linalg.solve_triangular(leaf(np.eye(2)), chainrule.ones(2, 1,
                                                   dtype=chainrule.float32), upper=True),
         DTypeError, r"solve_triangular: A has dtype float64 but B has float32"),
        (lambda: chainrule.linalg.solve_triangular(chainrule.zeros(2, 2), chainrule.ones(2, 1),
                                                   upper=True), DomainError,
         r"solve_triangular: failed for an input of shape \(2, 2\)"),
        (lambda: chainrule.linalg.lu_factor(chainrule.eye(2), pivot=False), DomainError,
         r"lu_factor: LU without pivoting is not implemented on the CPU"),
        (lambda: chainrule.lu_unpack(chainrule.eye(3), chainrule.ones(2).int()), ShapeError,
         r"lu_unpack: LU of shape \(3, 3\) needs pivots of shape \(..., 3\), got \(2,\)"),
        (lambda: chainrule.linalg.lstsq(chainrule.eye(3), chainrule.ones(2, 1)), ShapeError,
         r"lstsq: A has shape \(3, 3\) but B has shape \(2, 1\): B needs 3 rows"),
        (lambda: chainrule.linalg.lstsq(chainrule.eye(3), chainrule.ones(3, 1), driver="x"),
         DomainError, r"lstsq: driver must be one of \('gels', 'gelsy', 'gelsd', 'gelss'\)"),
        (lambda: chainrule.linalg.householder_product(chainrule.ones(2, 3), chainrule.ones(2)),
         ShapeError, r"householder_product: expects A \(..., m, n\) with m >= n"),
        (lambda: chainrule.linalg.tensorinv(chainrule.ones(2, 3), ind=1), ShapeError,
         r"tensorinv: shape \(2, 3\) with ind=1 is not square: 2 != 3 elements"),
        (lambda: chainrule.linalg.tensorsolve(chainrule.ones(2, 3), chainrule.ones(3)),
         ShapeError, r"tensorsolve: A of shape \(2, 3\) must start with B's shape \(3,\)"),
        (lambda: chainrule.matrix_exp(chainrule.ones(2, 3)), ShapeError,
         r"matrix_exp: expects square matrices \(..., n, n\), got shape \(2, 3\)"),
        (lambda: chainrule.addcdiv(chainrule.ones(2), chainrule.ones(2).long(),
                                   chainrule.ones(2).long()), DTypeError,
         r"addcdiv: tensor1 and tensor2 are integers \(int64, int64\)"),
        (lambda: chainrule.vdot(chainrule.ones(3), chainrule.ones(2)), ShapeError,
         r"vdot: expects two 1-D tensors of one length, got shapes \(3,\) and \(2,\)"),
        (lambda: chainrule.chain_matmul(chainrule.ones(3), chainrule.ones(3, 2)), ShapeError,
         r"chain_matmul: matrix 0 has shape \(3,\); each must be 2-D"),
        (lambda: chainrule.adjoint(chainrule.ones(3)), ShapeError,
         r"adjoint: expects a matrix or a batch of matrices, got shape \(3,\)"),
        (lambda: chainrule.addr(chainrule.ones(3, 3), chainrule.ones(2), chainrule.ones(3)),
         ShapeError, r"addr: input of shape \(3, 3\) does not broadcast to the product's shape "
         r"\(2, 3\)"),
        (lambda: chainrule.svd_lowrank(chainrule.ones(3, 2), q=3), ShapeError,
         r"svd_lowrank: q must be between 1 and 2 for shape \(3, 2\), got 3"),
        (lambda: chainrule.nuclear_norm(chainrule.ones(3)), ShapeError,
         r"nuclear_norm: needs two different dims of a matrix"),
    ],
)  # fmt: skip
def test_factorization_errors_name_the_op_and_the_shapes(call, error, message):
    with pytest.raises(error, match=message):
        call()
