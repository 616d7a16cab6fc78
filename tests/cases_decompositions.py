"""Cases for chainrule/ops/decompositions.py and chainrule.linalg: decompositions, norms,
powers and chains of products.

Inputs are built inside each case so that the op is smooth there: `conditioned` is I + x / 4n
(strictly diagonally dominant, so invertible, with det near 1), `spd` is x xᵀ + n I, and `spread`
adds a small multiple of x to diag(2, 4, 6...), which keeps singular values and eigenvalues
apart (the singular vectors' gradients divide by their gaps). Singular vectors and
eigenvectors are defined up to sign, so cases return sign-free functions of them (squares,
not abs, whose kink at 0 such near-diagonal inputs would hit).
"""

import math

import numpy as np
from cases import Case
from cases_linalg import from_sizes
from hypothesis import strategies as st
from strategies import away_from_zero, distinct

sizes = st.integers(1, 4)


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


CASES = {
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
    "cholesky[upper]": linalg(lambda lib, x: lib.linalg.cholesky(spd(lib, x), upper=True), SQUARE),
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
    "matrix_power[negative]": linalg(lambda lib, x: conditioned(lib, x).matrix_power(-2), SQUARE),
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
        lambda lib, x: lib.linalg.matrix_norm(spread(lib, x).permute(1, 0, 2), "nuc", (0, 2), True),
        st.tuples(sizes, sizes, sizes).map(lambda s: (s,)),
    ),
}
