"""Cases for chainrule/ops/factorizations.py, ops/spectral.py, chainrule/linalg_solvers.py and
the products added to ops/products.py: triangular and LU solves, Cholesky solves, lstsq,
matrix_exp, Householder products, the _ex variants, older torch.* names and norms.

Inputs are shaped inside each case as cases_decompositions.py explains. For LU, `pivoted`
flips spread(x)'s rows, so each column's largest element (the pivot partial pivoting picks)
is clear of the others and sits off the diagonal: P is not the identity, and no small change
of x changes it (the LU is discontinuous where two candidates tie).
"""

from cases import Case
from cases_decompositions import conditioned, linalg, matrices, spd, spread
from cases_linalg import from_sizes, product_case
from hypothesis import strategies as st
from strategies import away_from_zero, broadcastable, fixed, positive, reals

sizes = st.integers(1, 4)
SQUARE = matrices(square=True)


def pivoted(lib, x):
    return spread(lib, x).flip(-2)


def triangular(lib, x, upper=False):
    """A well-conditioned triangular factor: spread(x)'s lower (upper) triangle."""
    a = spread(lib, x)
    return a.triu() if upper else a.tril()


def _tall_with_tau(drawn):
    (m, n), k = drawn
    m, n = max(m, n), min(m, n)
    return (m, n), (min(k, n),)


def _norm_times_inverse_norm(x, ord):
    import torch

    a = conditioned(torch, x)
    return torch.linalg.matrix_norm(a, ord) * torch.linalg.matrix_norm(torch.linalg.inv(a), ord)


def _svd_v_parts(lib, x, some=True):
    U, S, V = lib.svd(spread(lib, x), some=some)
    k = S.shape[-1]
    U, V = U[..., :k], V[..., :k]
    return U @ V.mT, S, U * U, V * V


CASES = {
    # Rows.
    "solve_triangular": linalg(
        lambda lib, a, b: lib.linalg.solve_triangular(spread(lib, a), b, upper=True),
        from_sizes(".ii", ".ij"),
    ),
    "solve_triangular[lower_unit]": linalg(
        lambda lib, a, b: lib.linalg.solve_triangular(a / 4, b, upper=False, unitriangular=True),
        from_sizes("ii", "ij"),
    ),
    "solve_triangular[right]": linalg(
        lambda lib, a, b: lib.linalg.solve_triangular(spread(lib, a), b, upper=False, left=False),
        from_sizes("bii", "ji"),
    ),
    "lu_factor": linalg(lambda lib, x: tuple(lib.linalg.lu_factor(pivoted(lib, x))), matrices()),
    "lu_factor[lu]": linalg(lambda lib, x: pivoted(lib, x).lu(), SQUARE),
    "lu_factor[linalg_lu]": linalg(lambda lib, x: tuple(lib.linalg.lu(pivoted(lib, x))),
                                   matrices()),
    "lu_permutation": linalg(lambda lib, x: lib.lu_unpack(*lib.linalg.lu_factor(pivoted(lib, x))).P,
                             matrices()),
    "matrix_exp": linalg(lambda lib, x: lib.linalg.matrix_exp(x / 4), SQUARE),
    "matrix_exp[method]": Case(lambda x: (x / 2).matrix_exp(), matrices(square=True,
                                                                         batched=False)),
    # LU, Cholesky and triangular solves, by both namespaces' names.
    "lu_solve": linalg(
        lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(pivoted(lib, a)), b),
        from_sizes(".ii", ".ij"),
    ),
    "lu_solve[adjoint_right]": linalg(
        lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(pivoted(lib, a)), b,
                                              left=False, adjoint=True),
        from_sizes("ii", "ji"),
    ),
    "lu_solve[torch]": linalg(
        lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(pivoted(lib, a))),
        from_sizes("ii", "ij"),
    ),
    "lu_solve[method_adjoint]": linalg(
        lambda lib, a, b: lib.linalg.lu_solve(*lib.linalg.lu_factor(pivoted(lib, a)), b,
                                              adjoint=True),
        from_sizes("ii", "ij"),
    ),
    "lu_unpack": linalg(
        lambda lib, x: tuple(lib.lu_unpack(*lib.linalg.lu_factor(pivoted(lib, x)),
                                           unpack_pivots=False))[1:],
        matrices(),
    ),
    "triangular_solve": linalg(
        lambda lib, a, b: tuple(lib.triangular_solve(b, spread(lib, a), upper=False,
                                                     transpose=True)),
        from_sizes(".ii", ".ij"),
    ),
    "triangular_solve[method]": linalg(
        lambda lib, a, b: b.triangular_solve(spread(lib, a), unitriangular=True).solution,
        from_sizes("ii", "ij"),
    ),
    "cholesky_solve": linalg(
        lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(spd(lib, a))),
        from_sizes(".ii", ".ij"),
    ),
    "cholesky_solve[upper]": linalg(
        lambda lib, a, b: b.cholesky_solve(triangular(lib, a, upper=True), upper=True),
        from_sizes("ii", "ij"),
    ),
    "cholesky_inverse": linalg(lambda lib, x: lib.cholesky_inverse(triangular(lib, x)), SQUARE),
    "cholesky_inverse[upper]": linalg(
        lambda lib, x: triangular(lib, x, upper=True).cholesky_inverse(upper=True), SQUARE
    ),
    "cholesky[torch]": linalg(lambda lib, x: lib.cholesky(spd(lib, x), upper=True), SQUARE),
    "cholesky[method]": linalg(lambda lib, x: spd(lib, x).cholesky(), SQUARE),
    "householder_product": linalg(
        lambda lib, a, tau: lib.linalg.householder_product(a, tau),
        st.tuples(st.tuples(sizes, sizes), sizes).map(_tall_with_tau),
    ),
    "householder_product[orgqr]": linalg(
        lambda lib, a, tau: a.orgqr(tau),
        st.tuples(st.tuples(sizes, sizes), sizes).map(_tall_with_tau),
    ),
    # Least squares, tensor solves, the _ex variants, cond and diagonal.
    "lstsq": linalg(
        lambda lib, a, b: tuple(lib.linalg.lstsq(spread(lib, a), b)),
        from_sizes("ij", "ik").filter(lambda s: s[0][0] >= s[0][1]),
    ),
    "lstsq[gelsd]": linalg(  # singular_values (no gradient) are checked in test_linalg_namespace
        lambda lib, a, b: tuple(lib.linalg.lstsq(spread(lib, a), b, driver="gelsd"))[:3],
        from_sizes("ij", "ik"),
    ),
    "lstsq[gels_vector]": linalg(
        lambda lib, a, b: tuple(lib.linalg.lstsq(spread(lib, a), b, driver="gels")),
        from_sizes("bij", "bi").filter(lambda s: s[0][1] >= s[0][2]),
    ),
    "tensorinv": linalg(
        lambda lib, x: lib.linalg.tensorinv(conditioned(lib, x).reshape(2, 3, 6), ind=2),
        fixed((6, 6)),
    ),
    "tensorsolve": linalg(
        lambda lib, a, b: lib.linalg.tensorsolve(
            conditioned(lib, a).reshape(2, 3, 2, 3).movedim(3, 1), b, dims=(1,)),
        fixed((6, 6), (2, 3)),
    ),
    "cholesky_ex": linalg(lambda lib, x: tuple(lib.linalg.cholesky_ex(spd(lib, x))), SQUARE),
    "inv_ex": linalg(lambda lib, x: tuple(lib.linalg.inv_ex(conditioned(lib, x))), SQUARE),
    "solve_ex": linalg(
        lambda lib, a, b: tuple(lib.linalg.solve_ex(conditioned(lib, a), b)),
        from_sizes(".ii", "i"),
    ),
    "cond": linalg(lambda lib, x: lib.linalg.cond(spread(lib, x)), matrices()),
    "cond[fro]": linalg(  # PyTorch's cond backward fails here (inv_ex's output written in place)
        lambda lib, x: lib.linalg.cond(conditioned(lib, x), "fro"),
        SQUARE,
        torch_fn=lambda x: _norm_times_inverse_norm(x, "fro"),
    ),
    "linalg_diagonal": linalg(lambda lib, x: lib.linalg.diagonal(x, offset=-1), matrices()),
    # Older torch.* names for qr and svd.
    "qr[torch]": linalg(
        lambda lib, x: tuple(lib.qr(spread(lib, x), some=False)),
        matrices(tall=False),
        domain=(away_from_zero(),),
    ),
    "qr[method]": linalg(
        lambda lib, x: tuple(spread(lib, x).qr()), matrices(tall=True),
        domain=(away_from_zero(),),
    ),
    "svd[torch]": linalg(_svd_v_parts, matrices()),
    "svd[method_full]": linalg(lambda lib, x: _svd_v_parts(lib, x, some=False), matrices()),
    "svd[values_only]": linalg(
        lambda lib, x: lib.svd(spread(lib, x), compute_uv=False)[1], matrices()
    ),
    # Products.
    "addbmm": product_case(lambda lib, z, x, y: lib.addbmm(z, x, y, beta=0.5, alpha=2), "ik",
                           "bij", "bjk"),
    "addbmm[method]": Case(lambda z, x, y: z.addbmm(x, y), from_sizes("k", "bij", "bjk")),
    "addr": product_case(lambda lib, z, x, y: lib.addr(z, x, y, alpha=3), "ij", "i", "j"),
    "addr[method]": Case(lambda z, x, y: z.addr(x, y, beta=0), from_sizes("j", "i", "j")),
    "addcmul": product_case(lambda lib, z, x, y: lib.addcmul(z, x, y, value=-2), "", "", ""),
    "addcmul[method]": Case(lambda z, x, y: z.addcmul(x, y), broadcastable(3)),
    "addcdiv": Case(lambda z, x, y: z.addcdiv(x, y, value=0.5), broadcastable(3),
                    domain=(reals(), reals(), away_from_zero())),
    "vdot": product_case(lambda lib, x, y: lib.vdot(x, y), "i", "i"),
    "vdot[method]": Case(lambda x, y: x.vdot(y), from_sizes("i", "i")),
    "chain_matmul": product_case(lambda lib, x, y, z: lib.chain_matmul(x, y, z), "ij", "jk",
                                 "kl"),
    "adjoint": linalg(lambda lib, x: lib.adjoint(x), matrices()),
    # Norms by older names, and their overloads.
    "frobenius_norm": linalg(lambda lib, x: lib.frobenius_norm(x, (0, -1), True), matrices(),
                             domain=(away_from_zero(),)),
    "nuclear_norm": linalg(lambda lib, x: lib.nuclear_norm(spread(lib, x), True),
                           matrices(batched=False)),
    "nuclear_norm[dim]": linalg(
        lambda lib, x: lib.nuclear_norm(spread(lib, x).permute(1, 0, 2), (0, 2)),
        st.tuples(sizes, sizes, sizes).map(lambda s: (s,)),
    ),
    "norm_except_dim": linalg(lambda lib, x: lib.norm_except_dim(x, 2, 1), matrices(),
                              domain=(away_from_zero(),)),
    "norm_except_dim[all]": linalg(lambda lib, x: lib.norm_except_dim(x, 3, -1), matrices(),
                                   domain=(positive(),)),
}  # fmt: skip
