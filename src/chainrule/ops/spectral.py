"""Norms by PyTorch's older torch.* names (frobenius_norm, nuclear_norm, norm_except_dim) and
randomized low-rank SVD and PCA (svd_lowrank, pca_lowrank), all composed from rows elsewhere.
"""

from __future__ import annotations

import numbers

from ..errors import ShapeError, fmt_shape
from ..random import randn
from . import reduce
from .decompositions import matrices, shape_of, svd_row, svd_shapes, unpack
from .factorizations import qr
from .reduce import mean, norm
from .shape import movedim, reshape

__all__ = ["frobenius_norm", "norm_except_dim", "nuclear_norm", "pca_lowrank", "svd_lowrank"]


def _svdvals(A):
    shape = shape_of(A)
    return unpack(svd_row(A, full_matrices=False), svd_shapes(shape, False))[1]


def _dims(op: str, shape: tuple, dim) -> tuple:
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if any(not -len(shape) <= d < len(shape) for d in dims):
        raise ShapeError(f"{op}: dim {dim!r} is out of range for shape {fmt_shape(shape)}")
    return tuple(d % len(shape) for d in dims)


def frobenius_norm(input, dim, keepdim: bool = False):
    """The 2-norm over the dims ``dim`` (the Frobenius norm of matrices over two dims).

    >>> import chainrule as cr
    >>> cr.frobenius_norm(cr.tensor([[3.0, 0.0], [0.0, 4.0]]), (0, 1)).item()
    5.0
    """
    return norm(input, 2, _dims("frobenius_norm", shape_of(input), dim), keepdim)


def nuclear_norm(input, dim=None, keepdim: bool = False):
    """The sum of the singular values of the matrices over ``dim`` (two dims; the last two
    by default). Also ``nuclear_norm(input, keepdim)``, PyTorch's other overload.

    >>> import chainrule as cr
    >>> cr.nuclear_norm(cr.tensor([[3.0, 0.0], [0.0, -4.0]])).item()
    7.0
    """
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    shape = shape_of(input)
    d0, d1 = (
        _dims("nuclear_norm", shape, (-2, -1) if dim is None else dim) if len(shape) > 1 else (0, 0)
    )
    if d0 == d1:
        raise ShapeError(f"nuclear_norm: needs two different dims of a matrix, got dim {dim!r} "
                         f"for shape {fmt_shape(shape)}")  # fmt: skip
    matrices("nuclear_norm", input)
    out = reduce.sum(_svdvals(movedim(input, (d0, d1), (-2, -1))), -1)
    if keepdim:
        return reshape(out, tuple(1 if i in (d0, d1) else n for i, n in enumerate(shape)))
    return out


def norm_except_dim(v, pow=2, dim: int = 0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (what
    weight_norm divides by); ``dim=-1`` takes the norm of every element, a 0-d tensor.

    >>> import chainrule as cr
    >>> cr.norm_except_dim(cr.tensor([[3.0, 1.0], [4.0, 1.0]]), dim=1).tolist()
    [[5.0, 1.4142...]]
    """
    shape = shape_of(v)
    if dim == -1:
        return norm(v, pow)
    (dim,) = _dims("norm_except_dim", shape, dim)
    others = tuple(d for d in range(len(shape)) if d != dim)
    return norm(v, pow, others, True) if others else abs(v)


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
    range finding with ``niter`` power iterations; the random draws come from chainrule's
    generator, so values differ from PyTorch's (they agree up to the approximation).

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
