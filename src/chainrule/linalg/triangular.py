"""Triangular solves with their gradients: the ``solve_triangular`` row (only the triangle it
reads gets a gradient), ``linalg.solve_triangular`` and the older ``triangular_solve``, and the
Cholesky solves built on them (``cholesky_solve``, ``cholesky_inverse``). The LU solves are in
`chainrule.linalg.lu_factorization`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import ShapeError, fmt_shape
from ..op import Op
from .matrices import _batch_linalg, _lapack, _same_dtype, _tril, _triu, matrices

__all__ = ["cholesky_inverse", "cholesky_solve", "triangular_solve"]


# solve_triangular: X = T⁻¹ B, T the upper or lower triangle of A (diagonal taken as 1 when
# unitriangular). Only that triangle is read, so only it gets a gradient.


def _triangle(a, upper: bool, unitriangular: bool):
    """The entries of a that a triangular solve reads, the others 0."""
    return _triu(a, int(unitriangular)) if upper else _tril(a, -int(unitriangular))


def _solve_triangular(x, y, upper, unitriangular):
    t = np.triu(x) if upper else np.tril(x)
    if unitriangular:
        n = t.shape[-1]
        t[..., range(n), range(n)] = 1
    return _lapack("solve_triangular", np.linalg.solve, t, y)


def _tri_solve(a, b, upper: bool, unitriangular: bool = False):
    return xp.run(solve_triangular_row, a, b, upper=upper, unitriangular=unitriangular)


def _solve_triangular_vjp_a(g, x, out, upper, unitriangular):
    gb = _tri_solve(x.mT, g, not upper, unitriangular)
    return -_triangle(gb @ out.mT, upper, unitriangular)


def _solve_triangular_jvp_a(dx, x, out, upper, unitriangular):
    return -_tri_solve(x, _triangle(dx, upper, unitriangular) @ out, upper, unitriangular)


# fmt: off
solve_triangular_row = Op(
    "solve_triangular", _solve_triangular,
    vjp=(_solve_triangular_vjp_a,
         lambda g, x, upper, unitriangular: _tri_solve(x.mT, g, not upper, unitriangular)),
    jvp=(_solve_triangular_jvp_a,
         lambda dy, x, upper, unitriangular: _tri_solve(x, dy, upper, unitriangular)),
    kind="decomposition", batch=_batch_linalg,
    doc="T⁻¹ B for the upper or lower triangle T of A (x) and matrices B (y).")
# fmt: on


class TriangularSolveResult(NamedTuple):
    """What ``triangular_solve`` returns, like ``torch.return_types.triangular_solve``."""

    solution: Tensor
    cloned_coefficient: Tensor


def solve_triangular(A, B, *, upper: bool, left: bool = True, unitriangular: bool = False):
    """X with A X = B (``left=False``: X A = B) for triangular A (..., n, n).

    Only the ``upper`` or lower triangle of A is read (its diagonal too, unless
    ``unitriangular``), so only that triangle gets a gradient. B is (..., n, k) (``left``)
    or (..., k, n); batch dims broadcast. A zero on the diagonal is a DomainError
    (PyTorch returns inf or nan).

    >>> import chainrule as cr
    >>> A = cr.tensor([[2.0, 1.0], [0.0, 4.0]])
    >>> cr.linalg.solve_triangular(A, cr.tensor([[4.0], [8.0]]), upper=True).tolist()
    [[1.0], [2.0]]
    """
    a_shape = matrices("solve_triangular", A, square=True)
    b_shape = matrices("solve_triangular", B)
    _same_dtype("solve_triangular", A, B)
    n = a_shape[-1]
    size = b_shape[-2] if left else b_shape[-1]
    if size != n:
        where = "second-last" if left else "last"
        raise ShapeError(
            f"solve_triangular: A has shape {fmt_shape(a_shape)} but B has shape "
            f"{fmt_shape(b_shape)}: its {where} dim must be {n}"
        )
    try:
        np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    except ValueError:
        raise ShapeError(
            f"solve_triangular: batch dims of shapes {fmt_shape(a_shape)} and "
            f"{fmt_shape(b_shape)} do not broadcast"
        ) from None
    upper, unitriangular = bool(upper), bool(unitriangular)
    if left:
        return solve_triangular_row(A, B, upper=upper, unitriangular=unitriangular)
    return solve_triangular_row(A.mT, B.mT, upper=not upper, unitriangular=unitriangular).mT


def triangular_solve(b, A, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> TriangularSolveResult:  # fmt: skip
    """(X, A) with A X = b (``transpose``: Aᵀ X = b) for triangular A, as the older
    ``torch.triangular_solve``; `chainrule.linalg.solve_triangular` is the newer spelling.

    >>> import chainrule as cr
    >>> A = cr.tensor([[2.0, 0.0], [1.0, 1.0]])
    >>> cr.triangular_solve(cr.tensor([[2.0], [3.0]]), A, upper=False).solution.tolist()
    [[1.0], [2.0]]
    """
    a_shape = matrices("triangular_solve", A, square=True)
    coefficient = A.mT if transpose else A
    upper = bool(upper) != bool(transpose)
    x = solve_triangular(coefficient, b, upper=upper, unitriangular=unitriangular)
    # The copy of A has the solution's batch dims, as PyTorch's.
    return TriangularSolveResult(x, A.expand(tuple(x.shape[:-2]) + a_shape[-2:]).clone())


def cholesky_solve(B, L, upper: bool = False):
    """X with A X = B, given A's Cholesky factor L (A = L Lᵀ; ``upper``: A = Lᵀ L).

    Only L's triangle is read, and only it gets a gradient (PyTorch differentiates L Lᵀ as
    if L were full, giving the other triangle a gradient too).

    >>> import chainrule as cr
    >>> L = cr.tensor([[2.0, 0.0], [1.0, 1.0]])  # A = [[4, 2], [2, 2]]
    >>> cr.cholesky_solve(cr.tensor([[6.0], [4.0]]), L).tolist()
    [[1.0], [1.0]]
    """
    matrices("cholesky_solve", L, square=True)
    lower = L.mT if upper else L
    return solve_triangular(lower.mT, solve_triangular(lower, B, upper=False), upper=True)


def cholesky_inverse(L, upper: bool = False):
    """The inverse of A from its Cholesky factor L (A = L Lᵀ; ``upper``: A = Lᵀ L); only
    L's triangle is read and gets a gradient (see `cholesky_solve`).

    >>> import chainrule as cr
    >>> cr.cholesky_inverse(cr.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.25, 0.0], [0.0, 0.0625]]
    """
    shape = matrices("cholesky_inverse", L, square=True)
    eye = Tensor._make(np.eye(shape[-1], dtype=np.dtype(L.dtype)))
    inverse = solve_triangular(L.mT if upper else L, eye, upper=False)  # L⁻¹
    return inverse.mT @ inverse
