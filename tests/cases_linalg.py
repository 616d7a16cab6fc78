"""Cases for chainrule/linalg/: products (matmul in every form NumPy accepts, dot, outer, the
named products, einsum), inverses and solves, decompositions, LU and triangular solves, matrix
functions, norms and the structured matrices, by torch's and torch.linalg's names.

Inputs are built inside each case so that the op is smooth there: `conditioned` is I + x / 4n
(strictly diagonally dominant, so invertible, with det near 1), `spd` is x xᵀ + n I, and `spread`
adds a small multiple of x to diag(2, 4, 6...), which keeps singular values and eigenvalues
apart (the singular vectors' gradients divide by their gaps). Singular vectors and
eigenvectors are defined up to sign, so cases return sign-free functions of them (squares,
not abs, whose kink at 0 such near-diagonal inputs would hit). For LU, `pivoted` flips
spread(x)'s rows, so each column's largest element (the pivot partial pivoting picks) is clear
of the others and sits off the diagonal: P is not the identity, and no small change of x
changes it (the LU is discontinuous where two candidates tie).
"""

import math

import numpy as np
from cases import Case
from hypothesis import strategies as st
from strategies import (
    away_from_zero,
    broadcastable,
    distinct,
    fixed,
    one,
    positive,
    reals,
    same,
    shapes,
)

from chainrule.linalg import products

sizes = st.integers(1, 4)


def several(n, min_dims=0, max_dims=2):
    """n shapes of min_dims .. max_dims dims each, drawn independently."""
    return st.tuples(*[shapes(min_dims, max_dims) for _ in range(n)])


def powers(x, exponents):
    """x[:, None] ** exponents in PyTorch: torch.vander's own backward fails in 2.13 (an
    in-place cumprod it saved is changed), so its values and gradients are checked against
    this (pow's gradient is 0 for the exponent 0, also at x = 0)."""
    import torch

    return x[:, None] ** torch.tensor(list(exponents), dtype=x.dtype)


APART = (reals(-3.0, -1.0), reals(1.0, 3.0))  # x1 - x2 <= -2: never a zero distance


def points(batch=()):
    """(P, M) and (R, M) shapes, with batch dims in front of the first."""
    sizes = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
    return sizes.map(lambda s: ((*batch, s[0], s[2]), (s[1], s[2])))


def _matmul_pair(drawn):
    (x_batch, y_batch), m, k, n, (x_is_vector, y_is_vector) = drawn
    x = (k,) if x_is_vector else (*x_batch, m, k)
    y = (k,) if y_is_vector else (*y_batch, k, n)
    return x, y


def matmul_shapes(batched=False, vectors=False):
    """Shapes matmul accepts: a (..., m, k) or (k,), b (..., k, n) or (k,); batches broadcast."""
    batches = broadcastable(2, max_dims=2) if batched else st.just(((), ()))
    kinds = (
        st.sampled_from([(True, False), (False, True), (True, True)])
        if vectors
        else st.just((False, False))
    )
    return st.tuples(batches, sizes, sizes, sizes, kinds).map(_matmul_pair)


def from_sizes(*templates):
    """Shapes built from shared sizes: ("ij", "jk") gives (i, j) and (j, k) for drawn i, j, k.

    A "." in a template stands for the broadcastable batch dims drawn for that operand.
    """
    letters = sorted({c for t in templates for c in t if c != "."})
    batches = broadcastable(len(templates), max_dims=2)

    def build(drawn):
        values, batch_shapes = drawn
        size = dict(zip(letters, values))
        return tuple(
            tuple(d for c in t for d in (batch if c == "." else (size[c],)))
            for t, batch in zip(templates, batch_shapes)
        )

    return st.tuples(st.tuples(*[sizes] * len(letters)), batches).map(build)


def einsum_case(equation, *templates, **options):
    """A case running einsum(equation, ...) on both libraries."""
    return Case(
        lambda lib, *xs: lib.einsum(equation, *xs),
        from_sizes(*templates),
        needs_lib=True,
        **options,
    )


def _torch_linear(x, w, b):
    import torch

    return torch.nn.functional.linear(x, w, b)


CASES = {
    "matmul": Case(lambda x, y: x @ y, matmul_shapes()),
    "matmul[batched]": Case(lambda x, y: x.matmul(y), matmul_shapes(batched=True)),
    "matmul[vector]": Case(lambda x, y: x @ y, matmul_shapes(batched=True, vectors=True)),
    "matmul[self]": Case(lambda x: x @ x.mT, matmul_shapes().map(lambda s: s[:1])),
    "linear": Case(
        lambda x, w, b: products.linear_row(x, w, b),
        st.sampled_from(
            [((3, 4), (2, 4), (2,)), ((2, 3, 4), (5, 4), (5,)), ((2, 1, 3, 2), (3, 2), (1,))]
        ),
        torch_fn=lambda x, w, b: _torch_linear(x, w, b),
    ),
    "linear[vector]": Case(
        lambda x, w, b: products.linear_row(x, w, b),
        st.just(((4,), (3, 4), (3,))),
        torch_fn=lambda x, w, b: _torch_linear(x, w, b),
    ),
    "linear[no_bias]": Case(
        lambda x, w: products.linear_row(x, w, None),
        st.sampled_from([((3, 4), (2, 4)), ((4,), (2, 4)), ((2, 3, 4), (5, 4))]),
        torch_fn=lambda x, w: _torch_linear(x, w, None),
    ),
    "matmul_add": Case(
        lambda x, y, z: products.matmul_add_row(x, y, z),
        from_sizes("bij", "jk", "bik"),
        torch_fn=lambda x, y, z: x @ y + z,
    ),
    "matmul_add[broadcast]": Case(
        lambda x, y, z: products.matmul_add_row(x, y, z),
        from_sizes("ij", "bjk", "ik"),
        torch_fn=lambda x, y, z: x @ y + z,
    ),
    "dot": Case(lambda x, y: x.dot(y), from_sizes("i", "i")),
    "outer": Case(lambda x, y: x.outer(y), from_sizes("i", "j")),
    "einsum": einsum_case("ij,jk->ik", "ij", "jk"),
    "einsum[implicit]": einsum_case("ij,kj", "ij", "kj"),
    "einsum[trace]": einsum_case("ii->", "ii"),
    "einsum[diagonal]": einsum_case("ii->i", "ii"),
    "einsum[diagonal_product]": einsum_case("iij,ij->ji", "iij", "ij"),
    "einsum[summed_out]": einsum_case("ijk->j", "ijk"),
    "einsum[ellipsis]": einsum_case("...ij,...jk->...ik", ".ij", ".jk"),
    "einsum[ellipsis_implicit]": einsum_case("...i,i", ".i", "i"),
    "einsum[three]": einsum_case("ij,jk,kl->il", "ij", "jk", "kl"),
    "einsum[batch_outer]": einsum_case("bi,bj->bij", "bi", "bj"),
    "einsum[broadcast_summed]": Case(  # j is 1 in x, broadcast against y's 4, summed out
        lambda lib, x, y: lib.einsum("ij,j->i", x, y), fixed((3, 1), (4,)), needs_lib=True
    ),
    "einsum[bilinear]": Case(
        lambda lib, x, a: lib.einsum("i,ij,j->", x, a, x), from_sizes("i", "ii"), needs_lib=True
    ),
}


def _threes(shapes):
    """The shapes with their last dim set to 3 (the cross product's)."""
    return tuple(s[:-1] + (3,) for s in shapes)


def _same_rank_threes(shapes):
    """Broadcastable shapes padded to one number of dims (cross needs it), last dim 3."""
    ndim = max(len(s) for s in shapes)
    return _threes(tuple((1,) * (ndim - len(s)) + s for s in shapes))


def product_case(call, *templates, **options):
    """A case running call(lib, ...) on shapes built from shared sizes (`from_sizes`)."""
    return Case(call, from_sizes(*templates), needs_lib=True, **options)


# Products of fixed ranks and their scaled sums, tensordot, inner, kron, cross (composed).
CASES.update({
    "mm": Case(lambda x, y: x.mm(y), from_sizes("ij", "jk")),
    "mm[function]": product_case(lambda lib, x, y: lib.mm(x, y), "ij", "jk"),
    "bmm": Case(lambda x, y: x.bmm(y), from_sizes("bij", "bjk")),
    "mv": Case(lambda x, y: x.mv(y), from_sizes("ij", "j")),
    "addmm": product_case(lambda lib, z, x, y: lib.addmm(z, x, y), "k", "ij", "jk"),
    "addmm[scaled]": Case(lambda z, x, y: z.addmm(x, y, beta=0.5, alpha=-2),
                          from_sizes("ik", "ij", "jk")),
    "addmm[beta0]": product_case(lambda lib, z, x, y: lib.addmm(z, x, y, beta=0), "ik", "ij",
                                 "jk"),
    "baddbmm": product_case(lambda lib, z, x, y: lib.baddbmm(z, x, y, alpha=2), "ik", "bij",
                            "bjk"),
    "addmv": product_case(lambda lib, z, x, y: lib.addmv(z, x, y, beta=2), "i", "ij", "j"),
    "addmv[method]": Case(lambda z, x, y: z.addmv(x, y), from_sizes("i", "ij", "j")),
    "tensordot": product_case(lambda lib, x, y: lib.tensordot(x, y), "ijk", "jkl"),
    "tensordot[pairs]": product_case(
        lambda lib, x, y: lib.tensordot(x, y, dims=([0, 2], [1, 0])), "ijk", "kil"
    ),
    "tensordot[outer]": product_case(lambda lib, x, y: lib.tensordot(x, y, 0), "ij", "k"),
    "inner": Case(lambda x, y: x.inner(y), from_sizes(".ij", "kj")),
    "inner[scalar]": product_case(lambda lib, x, y: lib.inner(x, y), "", "ij"),
    "kron": Case(lambda x, y: x.kron(y), from_sizes("ij", "kjl")),
    "kron[vectors]": product_case(lambda lib, x, y: lib.kron(x, y), "i", "j"),
    "cross": Case(lambda x, y: x.cross(y, dim=-1), from_sizes("ki", "ki").map(_threes)),
    "cross[first_dim]": Case(lambda lib, x, y: lib.cross(x.mT, y.mT, dim=0),
                             from_sizes("ij", "ij").map(_threes), needs_lib=True),
    "linalg_cross": Case(lambda lib, x, y: lib.linalg.cross(x, y),
                         broadcastable(2, 1).map(_same_rank_threes), needs_lib=True),
})  # fmt: skip


def conditioned(lib, x):
    n = x.shape[-1]
    return x / (4 * n) + lib.eye(n, dtype=x.dtype)


def spd(lib, x):
    n = x.shape[-1]
    return x @ x.mT + n * lib.eye(n, dtype=x.dtype)


def spread(lib, x, scale=0.05):
    m, n = x.shape[-2:]
    k = min(m, n)
    d = np.zeros((m, n))
    d[range(k), range(k)] = 2.0 * np.arange(1, k + 1)
    return lib.tensor(d).to(x.dtype) + scale * x


def uneven(lib, x):
    """spread(x) with its elements weighted unevenly, so no two row or column sums of |x|
    tie (distinct() draws evenly spaced values, whose sums often do)."""
    m, n = x.shape[-2:]
    weights = 1 + math.sqrt(2) * np.arange(m)[:, None] / 7 + math.sqrt(3) * np.arange(n) / 5
    return spread(lib, x * lib.tensor(weights).to(x.dtype))


def symmetric(lib, x):
    a = spread(lib, x, 0.02)
    return a + a.mT


def matrices(square=False, tall=None, batched=True):
    """One matrix shape (m, n) with batch dims; ``tall`` True: m >= n, False: m < n."""

    def build(drawn):
        (m, n), batch = drawn
        if square:
            n = m
        elif tall is not None and (m >= n) != tall:
            m, n = n, m
        if tall is False and m == n:
            n += 1
        return (batch + (m, n),)

    batch = st.lists(st.integers(1, 3), max_size=2 if batched else 0).map(tuple)
    return st.tuples(st.tuples(sizes, sizes), batch).map(build)


def linalg(call, shapes, **options):
    """A case running call(lib, *xs), where lib is chainrule or torch."""
    return Case(call, shapes, needs_lib=True, **options)


SQUARE = matrices(square=True)


def _svd_parts(lib, x, full):
    U, S, Vh = lib.linalg.svd(spread(lib, x), full_matrices=full)
    k = S.shape[-1]
    U, Vh = U[..., :k], Vh[..., :k, :]
    return U @ Vh, S, U * U, Vh * Vh


def _eigh_parts(lib, x, UPLO="L"):
    w, V = lib.linalg.eigh(symmetric(lib, x), UPLO=UPLO)
    weights = lib.arange(1, w.shape[-1] + 1).to(x.dtype)
    return w, V * V, (V * weights) @ V.mT


CASES.update(
    {
        "inv": linalg(lambda lib, x: lib.linalg.inv(conditioned(lib, x)), SQUARE),
        "inv[inverse]": linalg(lambda lib, x: conditioned(lib, x).inverse(), SQUARE),
        "solve": linalg(
            lambda lib, a, b: lib.linalg.solve(conditioned(lib, a), b), from_sizes(".ii", ".ij")
        ),
        "solve[vector]": linalg(
            lambda lib, a, b: lib.linalg.solve(conditioned(lib, a), b), from_sizes("ii", "i")
        ),
        "solve[batch_of_vectors]": linalg(
            lambda lib, a, b: lib.linalg.solve(conditioned(lib, a), b), from_sizes("kii", "ki")
        ),
        "solve[right]": linalg(
            lambda lib, a, b: lib.linalg.solve(conditioned(lib, a), b, left=False),
            from_sizes("bii", "bji"),
        ),
        "det": linalg(lambda lib, x: lib.linalg.det(conditioned(lib, x)), SQUARE),
        "det[method]": linalg(lambda lib, x: spread(lib, x, 0.15).det(), SQUARE),
        "slogdet": linalg(lambda lib, x: lib.linalg.slogdet(-conditioned(lib, x)), SQUARE),
        "slogdet[method]": linalg(lambda lib, x: conditioned(lib, x).slogdet(), SQUARE),
        "logdet": linalg(lambda lib, x: lib.logdet(spd(lib, x)), SQUARE),
        "cholesky": linalg(lambda lib, x: lib.linalg.cholesky(spd(lib, x)), SQUARE),
        "cholesky[upper]": linalg(
            lambda lib, x: lib.linalg.cholesky(spd(lib, x), upper=True), SQUARE
        ),
        # LAPACK's Householder QR flips the signs of Q and R as the column below the diagonal
        # leaves 0: inputs away from zero keep off that discontinuity.
        "qr": linalg(
            lambda lib, x: tuple(lib.linalg.qr(spread(lib, x))),
            matrices(tall=True),
            domain=(away_from_zero(),),
        ),
        "qr[wide]": linalg(
            lambda lib, x: tuple(lib.linalg.qr(spread(lib, x))),
            matrices(tall=False),
            domain=(away_from_zero(),),
        ),
        "qr[complete]": linalg(  # PyTorch differentiates mode="complete" for m <= n only
            lambda lib, x: tuple(lib.linalg.qr(spread(lib, x), mode="complete")),
            matrices(tall=False),
            domain=(away_from_zero(),),
        ),
        "svd": linalg(lambda lib, x: _svd_parts(lib, x, False), matrices()),
        "svd[full]": linalg(lambda lib, x: _svd_parts(lib, x, True), matrices()),
        "svd[svdvals]": linalg(lambda lib, x: lib.linalg.svdvals(spread(lib, x)), matrices()),
        "eigh": linalg(_eigh_parts, SQUARE),
        "eigh[upper]": linalg(lambda lib, x: _eigh_parts(lib, x, "U"), SQUARE),
        "eigh[eigvalsh]": linalg(lambda lib, x: lib.linalg.eigvalsh(symmetric(lib, x)), SQUARE),
        "pinv": linalg(lambda lib, x: lib.linalg.pinv(spread(lib, x)), matrices()),
        "pinv[pinverse]": linalg(lambda lib, x: spread(lib, x).pinverse(), matrices()),
        "matrix_rank": linalg(lambda lib, x: lib.linalg.matrix_rank(x), matrices()),
        "matrix_power": linalg(lambda lib, x: lib.linalg.matrix_power(x, 3), SQUARE),
        "matrix_power[negative]": linalg(
            lambda lib, x: conditioned(lib, x).matrix_power(-2), SQUARE
        ),
        "multi_dot": linalg(
            lambda lib, a, b, c, d: lib.linalg.multi_dot([a, b, c, d]),
            from_sizes("i", "ij", "jk", "k"),
        ),
        "multi_dot[matrices]": linalg(
            lambda lib, a, b, c: lib.linalg.multi_dot([a, b, c]), from_sizes("ij", "jk", "kl")
        ),
        "vecdot": linalg(lambda lib, x, y: lib.linalg.vecdot(x, y), from_sizes(".i", ".i")),
        "linalg_norm": linalg(
            lambda lib, x: lib.linalg.norm(x), matrices(), domain=(away_from_zero(),)
        ),
        "linalg_norm[dim]": linalg(
            lambda lib, x: lib.linalg.norm(x, 3, dim=0, keepdim=True),
            matrices(),
            domain=(away_from_zero(),),
        ),  # fmt: skip
        "linalg_norm[spectral]": linalg(
            lambda lib, x: lib.linalg.norm(spread(lib, x), 2), matrices(batched=False)
        ),
        "vector_norm": linalg(
            lambda lib, x: lib.linalg.vector_norm(x, dim=(0, -1)),
            matrices(),
            domain=(away_from_zero(),),
        ),  # fmt: skip
        "vector_norm[inf]": linalg(
            lambda lib, x: lib.linalg.vector_norm(x, math.inf, -1),
            matrices(),
            domain=(distinct(0.1, 3),),
        ),
        "vector_norm[negative]": linalg(
            lambda lib, x: lib.linalg.vector_norm(x, -1.5, -1, keepdim=True),
            matrices(),
            domain=(away_from_zero(),),
        ),  # fmt: skip
        "matrix_norm": linalg(
            lambda lib, x: lib.linalg.matrix_norm(x), matrices(), domain=(away_from_zero(),)
        ),
        **{
            f"matrix_norm[{name}]": linalg(
                lambda lib, x, ord=ord: lib.linalg.matrix_norm(uneven(lib, x), ord),
                matrices(),
                domain=(distinct(0.1, 3),),
            )
            for name, ord in [
                ("nuc", "nuc"),
                ("2", 2),
                ("-2", -2),
                ("1", 1),
                ("-1", -1),
                ("inf", math.inf),
                ("-inf", -math.inf),
            ]
        },  # fmt: skip
        "matrix_norm[dims]": linalg(
            lambda lib, x: lib.linalg.matrix_norm(uneven(lib, x.mT).mT, 1, (-1, -2), True),
            matrices(),
            domain=(distinct(0.1, 3),),
        ),
        "matrix_norm[moved]": linalg(
            lambda lib, x: lib.linalg.matrix_norm(
                spread(lib, x).permute(1, 0, 2), "nuc", (0, 2), True
            ),
            st.tuples(sizes, sizes, sizes).map(lambda s: (s,)),
        ),
    }
)


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


CASES.update({
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
})  # fmt: skip


# Structured matrices (chainrule/linalg/structured.py).
CASES.update({
    "block_diag": Case(lambda lib, *ts: lib.block_diag(*ts), several(3), needs_lib=True),
    "diagflat": Case(lambda x: x.diagflat(), one(0, 2)),
    "diagflat[offset]": Case(lambda lib, x: lib.diagflat(x, -2), one(0, 2), needs_lib=True),
    "vander": Case(
        lambda lib, x: lib.vander(x),
        one(1, 1),
        needs_lib=True,
        torch_fn=lambda x: powers(x, range(len(x) - 1, -1, -1)),
    ),
    "vander[N_increasing]": Case(
        lambda lib, x: lib.vander(x, N=5, increasing=True),
        one(1, 1),
        needs_lib=True,
        torch_fn=lambda x: powers(x, range(5)),
    ),
    "vander[linalg]": Case(lambda lib, x: lib.linalg.vander(x, N=3), one(1, 3), needs_lib=True),
})  # fmt: skip


# trace (chainrule/linalg/structured.py).
CASES.update({
    "trace": Case(lambda x: x.trace(), one(min_dims=2, max_dims=2)),
})  # fmt: skip


# Distances (chainrule/linalg/norms.py): x1 and x2 kept apart, so no difference is 0.
CASES.update({
    "dist": Case(lambda lib, x, y: lib.dist(x, y), same(2), APART, needs_lib=True),
    "dist[3]": Case(lambda x, y: x.dist(y, 3), same(2), APART),
    "cdist": Case(lambda lib, x, y: lib.cdist(x, y), points(), APART, needs_lib=True),
    "cdist[1_batched]": Case(lambda lib, x, y: lib.cdist(x, y, 1), points((2,)), APART,
                             needs_lib=True),
    "cdist[0.5]": Case(lambda lib, x, y: lib.cdist(x, y, 0.5), points(), APART, needs_lib=True),
})  # fmt: skip


# renorm (chainrule/linalg/norms.py): maxnorm is a norm no drawn row has exactly (its kink),
# and its 1- and inf-norms keep off their own kinks.
CASES.update({
    "renorm": Case(lambda x: x.renorm(2, 0, 1.2345), one(2)),
    "renorm[1_last]": Case(lambda x: x.renorm(1, -1, 2.3456), one(2), (away_from_zero(),)),
    # |x|³'s third derivative jumps at 0, which the second derivative's finite differences see.
    "renorm[3]": Case(lambda x: x.renorm(3, 1, 0.8765), one(3, 3), (away_from_zero(),)),
    "renorm[inf]": Case(lambda x: x.renorm(math.inf, 0, 1.2345), one(2), (distinct(0.2, 3.0),)),
})  # fmt: skip
