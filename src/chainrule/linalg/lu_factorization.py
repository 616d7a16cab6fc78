"""LU factorization with partial pivoting and its gradient: the rows (``lu_factor``, the
permutation matrix of the pivots), ``linalg.lu_factor``/``lu_factor_ex``/``lu``/``lu_solve``
and the older ``lu``, ``lu_unpack`` and ``lu_solve``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from ..op import Op, with_rank
from ..ops.arguments import shape_of
from .matrices import (
    _batch_linalg,
    _failed,
    _pack,
    _same_dtype,
    _side_by_side,
    _stacked,
    _tril,
    _triu,
    _values,
    matrices,
    unpack,
)
from .triangular import _solve_triangular, _tri_solve, solve_triangular

__all__ = ["lu", "lu_solve", "lu_unpack"]


# LU with partial pivoting: P A = L U, packed (LU, pivots) as LAPACK's getrf returns them
# (L's unit diagonal left out, pivots the 1-based row swapped with each row in turn). NumPy
# has no LU, so the factorisation is written here: one elimination step per column, each
# vectorised over the batch.


def lu_shapes(x_shape: tuple) -> tuple:
    m, n = x_shape[-2:]
    return (m, n), (min(m, n),)


def _lu_factor(x):
    m, n = x.shape[-2:]
    batch, k = x.shape[:-2], min(m, n)
    a = np.array(x, dtype=x.dtype).reshape(-1, m, n)
    every = np.arange(a.shape[0])
    pivots = np.empty((a.shape[0], k), dtype=a.dtype)
    for j in range(k):
        p = j + np.argmax(np.abs(a[:, j:, j]), axis=1)  # the first largest, as LAPACK's
        pivots[:, j] = p + 1
        row = a[every, p].copy()
        a[every, p] = a[:, j]
        a[:, j] = row
        pivot = a[:, j, j]
        # A zero pivot (a singular matrix) leaves its column unscaled, as getrf does.
        a[:, j + 1 :, j] /= np.where(pivot == 0, 1, pivot)[:, None]
        a[:, j + 1 :, j + 1 :] -= a[:, j + 1 :, j, None] * a[:, j, None, j + 1 :]
    return _pack(batch, a.reshape(batch + (m, n)), pivots.reshape(batch + (k,)))


def permutation(pivots: np.ndarray, m: int, dtype) -> np.ndarray:
    """P with A = P L U, from getrf's 1-based row swaps (..., k), as an (..., m, m) array."""
    swaps = np.asarray(pivots).astype(np.int64) - 1
    batch, k = swaps.shape[:-1], swaps.shape[-1]
    swaps = swaps.reshape(-1, k)
    every = np.arange(swaps.shape[0])
    order = np.tile(np.arange(m), (swaps.shape[0], 1))  # row i of Pᵀ A is row order[i] of A
    for i in range(k):
        j = swaps[:, i]
        order[every, i], order[every, j] = order[every, j], order[:, i].copy()
    p = np.zeros((swaps.shape[0], m, m), dtype=dtype)
    p[every[:, None], order, np.arange(m)] = 1
    return p.reshape(batch + (m, m))


def _lu_parts(lu, k: int):
    """L (unit lower, (m, k)) and U (upper, (k, n)) from a packed LU."""
    m = lu.shape[-2]
    return _tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=lu.dtype), _triu(lu[..., :k, :])


def _lu_square_vjp(gl, gu, l, u):
    """B = L U for square L and U: Bᵀ's gradient L⁻ᵀ [tril₋₁(Lᵀ gL) + triu(gU Uᵀ)] U⁻ᵀ."""
    inner = _tril(l.mT @ gl, -1) + _triu(gu @ u.mT)
    right = _tri_solve(u, inner.mT, upper=True).mT  # inner U⁻ᵀ
    return _tri_solve(l.mT, right, upper=True, unitriangular=True)


def _lu_vjp(g, x_shape, out):
    shapes = lu_shapes(x_shape)
    (g_lu, _), (lu, pivots) = unpack(g, shapes), unpack(out, shapes)
    m, n = x_shape[-2:]
    k = min(m, n)
    l, u = _lu_parts(lu, k)
    gl, gu = _tril(g_lu[..., :, :k], -1), _triu(g_lu[..., :k, :])
    if m < n:  # U = [U1 | U2] with U2 = L⁻¹ (Pᵀ A)₂: its gradient reaches L and A₂
        gu2 = _tri_solve(l.mT, gu[..., m:], upper=True, unitriangular=True)
        gl = gl - _tril(gu2 @ u[..., m:].mT, -1)
        grad = _side_by_side(_lu_square_vjp(gl, gu[..., :m], l, u[..., :m]), gu2)
    elif m > n:  # L = [L1; L2] with L2 = (Pᵀ A)₂ U⁻¹: its gradient reaches U and A₂
        gl2 = _tri_solve(u, gl[..., n:, :].mT, upper=True).mT
        gu = gu - _triu(l[..., n:, :].mT @ gl2)
        grad = _stacked(_lu_square_vjp(gl[..., :n, :], gu, l[..., :n, :], u), gl2)
    else:
        grad = _lu_square_vjp(gl, gu, l, u)
    return permutation(_values(pivots), m, grad.dtype) @ grad


def _lu_jvp(dx, x_shape, out):
    shapes = lu_shapes(x_shape)
    lu, pivots = unpack(out, shapes)
    m, n = x_shape[-2:]
    k = min(m, n)
    l, u = _lu_parts(lu, k)
    db = permutation(pivots, m, dx.dtype).mT @ dx
    # With F = L1⁻¹ dB1 U1⁻¹ on the square corner: dL1 = L1 tril₋₁(F), dU1 = triu(F) U1.
    f = _solve_triangular(l[..., :k, :], db[..., :k, :k], False, True)
    f = _solve_triangular(u[..., :k].mT, f.mT, False, False).mT
    dl, du = l[..., :k, :] @ np.tril(f, -1), np.triu(f) @ u[..., :k]
    d_lu = dl + du
    if m < n:
        du2 = _solve_triangular(l, db[..., m:] - dl @ u[..., m:], False, True)
        d_lu = np.concatenate([d_lu, du2], axis=-1)
    elif m > n:
        dl2 = _solve_triangular(u.mT, (db[..., n:, :] - l[..., n:, :] @ du).mT, False, False)
        d_lu = np.concatenate([d_lu, dl2.mT], axis=-2)
    return _pack(x_shape[:-2], d_lu, np.zeros(np.shape(pivots), dx.dtype))


def _permutation_of(x, y):
    batch = np.broadcast_shapes(x.shape[:-2], y.shape[:-1])
    return permutation(np.broadcast_to(y, batch + y.shape[-1:]), x.shape[-2], x.dtype)


def _batch_permutation(op: Op, values: list, batched: list, params: dict):
    """One example's pivots have one dim fewer than its LU: give each batched operand the
    batch rank of the other, as one example's would broadcast."""
    lu, pivots = values
    rank = max(np.ndim(lu) - batched[0] - 2, np.ndim(pivots) - batched[1] - 1)
    lu = with_rank(lu, rank + 2) if batched[0] else lu
    return op(lu, with_rank(pivots, rank + 1) if batched[1] else pivots)


lu_factor_row = Op(
    "lu_factor",
    _lu_factor,
    vjp=(_lu_vjp,),
    jvp=(_lu_jvp,),
    kind="decomposition",
    batch=_batch_linalg,
    doc="LU with partial pivoting of each matrix: LU and the 1-based pivots, packed.",
)


lu_permutation_row = Op(
    "lu_permutation",
    _permutation_of,
    vjp=None,
    inputs=("x", "y"),
    kind="decomposition",
    batch=_batch_permutation,
    doc="The permutation matrix P (A = P L U) of pivots (y), in the dtype of LU (x).",
)


# Public functions: torch.linalg's spellings, then torch's older ones.


class LUResult(NamedTuple):
    """What ``lu_unpack`` and ``linalg.lu`` return: A = P L U."""

    P: Tensor
    L: Tensor
    U: Tensor


class LUFactorResult(NamedTuple):
    """What ``lu_factor`` returns, like ``torch.return_types.linalg_lu_factor``."""

    LU: Tensor
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    """What ``lu_factor_ex`` returns, like ``torch.return_types.linalg_lu_factor_ex``."""

    LU: Tensor
    pivots: Tensor
    info: Tensor


def lu_factor_parts(op: str, A) -> tuple:
    """(LU, pivots int32) of A, checked (the work of linalg.lu_factor and torch.lu)."""
    shape = matrices(op, A)
    lu_packed, pivots = unpack(lu_factor_row(A), lu_shapes(shape))
    return lu_packed, pivots.to("int32")


def lu_info(LU) -> Tensor:
    """getrf's info per matrix (int32): the 1-based index of U's first zero on the diagonal,
    0 when there is none."""
    diagonal = np.diagonal(_values(LU), axis1=-2, axis2=-1)
    zero = diagonal == 0
    info = np.where(zero.any(axis=-1), np.argmax(zero, axis=-1) + 1, 0)
    return Tensor._make(info.astype(np.int32))


def _no_pivot(op: str, pivot) -> None:
    if not pivot:
        raise DomainError(f"{op}: LU without pivoting is not implemented on the CPU (as in "
                          "PyTorch); pass pivot=True")  # fmt: skip


def lu_factor(A, *, pivot: bool = True) -> LUFactorResult:
    """(LU, pivots): A = P L U with partial pivoting, packed as LAPACK's getrf (L's unit
    diagonal left out; pivots int32, 1-based: row i was swapped with row pivots[i]). A may
    be rectangular; the gradient needs full rank. ``pivot=False`` is refused, as PyTorch
    does on the CPU.

    >>> import chainrule as cr
    >>> cr.linalg.lu_factor(cr.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots.tolist()
    [2, 2]
    """
    _no_pivot("lu_factor", pivot)
    return LUFactorResult(*lu_factor_parts("lu_factor", A))


def lu_factor_ex(A, *, pivot: bool = True, check_errors: bool = False) -> LUFactorExResult:
    """`lu_factor` and info (int32 per matrix): the 1-based index of the first zero pivot,
    0 for none. ``check_errors=True`` raises a DomainError instead.

    >>> import chainrule as cr
    >>> cr.linalg.lu_factor_ex(cr.tensor([[1.0, 2.0], [2.0, 4.0]])).info.item()
    2
    """
    _no_pivot("lu_factor_ex", pivot)
    lu_packed, pivots = lu_factor_parts("lu_factor_ex", A)
    info = lu_info(lu_packed)
    if check_errors and info._array.any():
        _failed("lu_factor_ex", info._array, lambda i: f"U[{i - 1}, {i - 1}] is exactly zero")
    return LUFactorExResult(lu_packed, pivots, info)


def linalg_lu(A, *, pivot: bool = True) -> LUResult:
    """(P, L, U) with A = P L U: P a permutation (no gradient), L (m, k) unit lower
    triangular, U (k, n) upper triangular, k = min(m, n).

    >>> import chainrule as cr
    >>> P, L, U = cr.linalg.lu(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> U.tolist()
    [[3.0, 4.0], [0.0, 0.666...]]
    """
    _no_pivot("lu", pivot)
    return lu_unpack(*lu_factor_parts("lu", A))


def linalg_lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False):
    """X with A X = B from A's `lu_factor` (``adjoint``: Aᵀ X = B; ``left=False``: X A = B or
    X Aᵀ = B). Gradients reach B and LU (its L and U triangles).

    >>> import chainrule as cr
    >>> LU, pivots = cr.linalg.lu_factor(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> cr.linalg.lu_solve(LU, pivots, cr.tensor([[5.0], [11.0]])).tolist()
    [[1.0...], [2.0...]]
    """
    return solve_with_lu("lu_solve", LU, pivots, B, left=left, adjoint=adjoint)


def lu(A, pivot: bool = True, get_infos: bool = False):
    """(LU, pivots) of A's LU factorisation with partial pivoting (and ``get_infos``: info,
    1-based index of the first zero pivot, else 0), as the older ``torch.lu``;
    `chainrule.linalg.lu_factor` is the newer spelling. The gradient is for full-rank A.

    >>> import chainrule as cr
    >>> LU, pivots = cr.lu(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> LU.tolist(), pivots.tolist()
    ([[3.0, 4.0], [0.333..., 0.666...]], [2, 2])
    """
    _no_pivot("lu", pivot)
    lu_packed, pivots = lu_factor_parts("lu", A)
    return (lu_packed, pivots, lu_info(lu_packed)) if get_infos else (lu_packed, pivots)


def lu_unpack(LU_data, LU_pivots, unpack_data: bool = True,
              unpack_pivots: bool = True) -> LUResult:  # fmt: skip
    """(P, L, U) with A = P L U from lu_factor's packed LU and pivots; a part not unpacked
    is an empty tensor, as in PyTorch. P gets no gradient.

    >>> import chainrule as cr
    >>> P, L, U = cr.lu_unpack(*cr.lu(cr.tensor([[1.0, 2.0], [3.0, 4.0]])))
    >>> P.tolist(), L.tolist()
    ([[0.0, 1.0], [1.0, 0.0]], [[1.0, 0.0], [0.333..., 1.0]])
    """
    shape = matrices("lu_unpack", LU_data)
    k = min(shape[-2:])
    if tuple(shape_of(LU_pivots))[-1:] != (k,):
        raise ShapeError(f"lu_unpack: LU of shape {fmt_shape(shape)} needs pivots of shape "
                         f"(..., {k}), got {fmt_shape(shape_of(LU_pivots))}")  # fmt: skip
    empty = Tensor._make(np.zeros((0,), np.dtype(LU_data.dtype)))
    p = lu_permutation_row(LU_data, LU_pivots) if unpack_pivots else empty
    if not unpack_data:
        return LUResult(p, empty, empty)
    m = shape[-2]
    lower = LU_data[..., :, :k].tril(-1) + Tensor._make(np.eye(m, k, dtype=p.dtype))
    return LUResult(p, lower, LU_data[..., :k, :].triu())


def solve_with_lu(op: str, LU, pivots, B, left: bool = True, adjoint: bool = False):
    """X with A X = B (``adjoint``: Aᵀ X = B; not ``left``: X A = B or X Aᵀ = B), from A's
    packed LU and pivots: the work of linalg.lu_solve and torch.lu_solve."""
    a_shape, b_shape = matrices(op, LU, square=True), matrices(op, B)
    _same_dtype(op, LU, B)
    n = a_shape[-1]
    if (b_shape[-2] if left else b_shape[-1]) != n:
        raise ShapeError(f"{op}: LU has shape {fmt_shape(a_shape)} but B has shape "
                         f"{fmt_shape(b_shape)}: its {'second-last' if left else 'last'} dim "
                         f"must be {n}")  # fmt: skip
    if not left:  # X A = B is Aᵀ Xᵀ = Bᵀ
        return solve_with_lu(op, LU, pivots, B.mT, True, not adjoint).mT
    p = lu_permutation_row(LU, pivots)
    if not adjoint:  # X = U⁻¹ L⁻¹ Pᵀ B
        y = solve_triangular(LU, p.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(LU, y, upper=True)
    # Aᵀ = Uᵀ Lᵀ Pᵀ: X = P L⁻ᵀ U⁻ᵀ B
    y = solve_triangular(LU.mT, B, upper=False)
    return p @ solve_triangular(LU.mT, y, upper=True, unitriangular=True)


def lu_solve(b, LU_data, LU_pivots):
    """X with A X = b, from A's packed LU and pivots (`lu`), as the older ``torch.lu_solve``
    (`chainrule.linalg.lu_solve` takes LU first and has ``left`` and ``adjoint``).

    >>> import chainrule as cr
    >>> A = cr.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> cr.lu_solve(cr.tensor([[5.0], [11.0]]), *cr.lu(A)).tolist()
    [[1.0...], [2.0...]]
    """
    return solve_with_lu("lu_solve", LU_data, LU_pivots, b)
