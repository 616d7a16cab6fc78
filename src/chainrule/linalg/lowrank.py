"""Randomized low-rank SVD and PCA (``svd_lowrank``, ``pca_lowrank``), composed from QR, SVD
and products.
"""

from __future__ import annotations

from ..errors import ShapeError, fmt_shape
from ..ops.arguments import shape_of
from ..ops.reduce import mean
from ..random import randn
from .decompositions import qr, svd_row, svd_shapes
from .matrices import matrices, unpack

__all__ = ["pca_lowrank", "svd_lowrank"]


# Randomized SVD (Halko, Martinsson and Tropp 2009, algorithms 4.4 and 5.1): an orthonormal
# basis Q of A's range from A times a Gaussian matrix, refined by ``niter`` power iterations,
# then the SVD of the small Qᵀ A.


def _range_basis(A, q: int, niter: int):
    n = shape_of(A)[-1]
    q_basis = qr(A @ randn(n, q, dtype=A.dtype)).Q
    for _ in range(niter):
        q_basis = qr(A @ qr(A.mT @ q_basis).Q).Q
    return q_basis


def svd_lowrank(A, q: int | None = 6, niter: int = 2, M=None):
    """(U, S, V), an approximate rank-``q`` SVD of A - M (A ≈ U diag(S) Vᵀ) by randomized
    range finding with ``niter`` power iterations. The random matrix is PyTorch's draw
    (``randn(n, q)``), so under one seed the results agree with PyTorch's to rounding (the QR
    factorizations are LAPACK's).

    >>> import chainrule as cr
    >>> A = cr.tensor([[3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
    >>> [round(s, 6) for s in cr.svd_lowrank(A, q=2)[1].tolist()]
    [3.0, 2.0]
    """
    shape = matrices("svd_lowrank", A)
    m, n = shape[-2:]
    q = 6 if q is None else q
    if not 0 < q <= min(m, n):
        raise ShapeError(f"svd_lowrank: q must be between 1 and {min(m, n)} for shape "
                         f"{fmt_shape(shape)}, got {q}")  # fmt: skip
    if M is not None:
        A = A - M
    wide = m < n
    if wide:
        A = A.mT
    basis = _range_basis(A, q, niter)
    u, s, vh = unpack(
        svd_row(basis.mT @ A, full_matrices=False), svd_shapes((q, A.shape[-1]), False)
    )
    u, v = basis @ u, vh.mT
    return (v, s, u) if wide else (u, s, v)


def pca_lowrank(A, q: int | None = None, center: bool = True, niter: int = 2):
    """(U, S, V) of `svd_lowrank` on A with its column means taken away (``center``): the
    principal directions are V's columns, the variances S² / (m - 1). ``q`` defaults to
    min(6, m, n).

    >>> import chainrule as cr
    >>> A = cr.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    >>> U, S, V = cr.pca_lowrank(A, q=1)
    >>> round(S.item() ** 2 / 2, 6), [round(abs(x), 6) for x in V[:, 0].tolist()]
    (2.0, [0.707107, 0.707107])
    """
    shape = matrices("pca_lowrank", A)
    q = min(6, *shape[-2:]) if q is None else q
    if center:
        A = A - mean(A, -2, True)
    return svd_lowrank(A, q, niter)
