"""torch.linalg's LU functions, least squares, tensor inverses and solves, and the ``_ex``
variants that report failures as ``info`` instead of raising. `chainrule.linalg` re-exports
them; the rows and their gradients are in `chainrule.ops.factorizations`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import ops
from ._tensor import Tensor
from .errors import DomainError, ShapeError, fmt_shape
from .ops.decompositions import (
    cholesky_row,
    inv_row,
    matrices,
    pinv_row,
    shape_of,
    solve_row,
    unpack,
)
from .ops.factorizations import (
    LUResult,
    _lu_factor,
    _no_pivot,
    _same_dtype,
    lu_factor_parts,
    lu_info,
    lu_shapes,
    lu_unpack,
    solve_with_lu,
)


class LUFactorResult(NamedTuple):
    """What ``lu_factor`` returns, like ``torch.return_types.linalg_lu_factor``."""

    LU: Tensor
    pivots: Tensor


class LUFactorExResult(NamedTuple):
    """What ``lu_factor_ex`` returns, like ``torch.return_types.linalg_lu_factor_ex``."""

    LU: Tensor
    pivots: Tensor
    info: Tensor


class LstsqResult(NamedTuple):
    """What ``lstsq`` returns, like ``torch.return_types.linalg_lstsq``."""

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


class CholeskyExResult(NamedTuple):
    """What ``cholesky_ex`` returns, like ``torch.return_types.linalg_cholesky_ex``."""

    L: Tensor
    info: Tensor


class InvExResult(NamedTuple):
    """What ``inv_ex`` returns, like ``torch.return_types.linalg_inv_ex``."""

    inverse: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    """What ``solve_ex`` returns, like ``torch.return_types.linalg_solve_ex``."""

    result: Tensor
    info: Tensor


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


def _failed(op: str, info: np.ndarray, what: Callable[[int], str]) -> None:
    """Raise for the first matrix whose info is not 0, naming its batch element."""
    flat = info.reshape(-1)
    first = int(np.flatnonzero(flat)[0])
    where = f" (batch element {first})" if info.ndim else ""
    raise DomainError(f"{op}: {what(int(flat[first]))}{where}; check_errors=False returns the "
                      "info instead")  # fmt: skip


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
    if check_errors and info.data.any():
        _failed("lu_factor_ex", info.data, lambda i: f"U[{i - 1}, {i - 1}] is exactly zero")
    return LUFactorExResult(lu_packed, pivots, info)


def lu(A, *, pivot: bool = True) -> LUResult:
    """(P, L, U) with A = P L U: P a permutation (no gradient), L (m, k) unit lower
    triangular, U (k, n) upper triangular, k = min(m, n).

    >>> import chainrule as cr
    >>> P, L, U = cr.linalg.lu(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> U.tolist()
    [[3.0, 4.0], [0.0, 0.666...]]
    """
    _no_pivot("lu", pivot)
    return lu_unpack(*lu_factor_parts("lu", A))


def lu_solve(LU, pivots, B, *, left: bool = True, adjoint: bool = False):
    """X with A X = B from A's `lu_factor` (``adjoint``: Aᵀ X = B; ``left=False``: X A = B or
    X Aᵀ = B). Gradients reach B and LU (its L and U triangles).

    >>> import chainrule as cr
    >>> LU, pivots = cr.linalg.lu_factor(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
    >>> cr.linalg.lu_solve(LU, pivots, cr.tensor([[5.0], [11.0]])).tolist()
    [[1.0...], [2.0...]]
    """
    return solve_with_lu("lu_solve", LU, pivots, B, left=left, adjoint=adjoint)


_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def lstsq(A, B, rcond=None, *, driver=None) -> LstsqResult:
    """The least-squares solution X of A X ≈ B (the minimum-norm one when A is wide), with
    what PyTorch's CPU drivers report beside it: residuals (squared, per column of B; for
    m > n, drivers 'gels' and, at full rank, 'gelsd'/'gelss'), rank (not for 'gels') and
    singular values ('gelsd'/'gelss'); empty tensors otherwise. Singular values at or below
    ``rcond`` times the largest (default: eps * max(m, n)) count as 0.

    Every driver runs the same pseudoinverse here (values agree with LAPACK's to rounding for
    full-rank A); the gradient, like PyTorch's, is the pseudoinverse's (full rank).

    >>> import chainrule as cr
    >>> A = cr.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    >>> out = cr.linalg.lstsq(A, cr.tensor([[1.0], [2.0], [3.0]]), driver="gelsd")
    >>> out.solution.tolist(), out.residuals.tolist(), out.rank.item()
    ([[1.0], [2.0]], [9.0], 2)
    """
    a_shape, b_shape = matrices("lstsq", A), shape_of(B)
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise DomainError(f"lstsq: driver must be one of {_DRIVERS} or None, got {driver!r}")
    m, n = a_shape[-2:]
    is_vector = len(b_shape) == len(a_shape) - 1  # PyTorch's rule for a batch of vectors
    rows = b_shape[-1] if is_vector else b_shape[-2] if len(b_shape) > 1 else None
    if rows != m:
        raise ShapeError(f"lstsq: A has shape {fmt_shape(a_shape)} but B has shape "
                         f"{fmt_shape(b_shape)}: B needs {m} rows")  # fmt: skip
    _same_dtype("lstsq", A, B)
    dtype = np.dtype(A.dtype)
    rcond = np.finfo(dtype).eps * max(m, n) if rcond is None else float(rcond)
    b = ops.unsqueeze(B, -1) if is_vector else B
    solution = pinv_row(A, atol=0.0, rtol=rcond) @ b
    empty = Tensor._make(np.zeros((0,), dtype))
    s = np.linalg.svd(A.detach().numpy(), compute_uv=False)
    rank = np.sum(s > rcond * s[..., :1], axis=-1)
    residuals = empty
    if m > n and (driver == "gels" or (driver != "gelsy" and (rank == n).all())):
        residuals = ops.sum((A @ solution - b) ** 2, -2)
    return LstsqResult(
        solution[..., 0] if is_vector else solution,
        residuals,
        empty.to("int64") if driver == "gels" else Tensor._make(rank.astype(np.int64)),
        Tensor._make(s) if driver in ("gelsd", "gelss") else empty,
    )


# The _ex variants: info per matrix instead of an error. A matrix that fails gives nan in
# the result (PyTorch leaves LAPACK's partial work there) and no gradient.


def _cholesky_info(a: np.ndarray) -> np.ndarray:
    """potrf's info per matrix: the order of the first leading minor that is not positive
    definite, 0 for none."""
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for i, matrix in enumerate(flat):
        try:
            np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            info[i] = next(k for k in range(1, n + 1) if not _is_spd(matrix[:k, :k]))
    return info.reshape(a.shape[:-2])


def _is_spd(a: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return False
    return True


def _lu_info_of(a: np.ndarray) -> np.ndarray:
    lu_packed, _ = unpack(_lu_factor(a), lu_shapes(a.shape))
    return lu_info(lu_packed).data


def _guarded(A, info: np.ndarray, compute: Callable, matrix_dims: int = 2):
    """compute(A), with each failed matrix (info != 0) replaced by the identity before and
    by nan after, so the others keep their values and gradients."""
    if not info.any():
        return compute(A)
    n = A.shape[-1]
    bad = Tensor._make(info.reshape(info.shape + (1, 1)) != 0)
    out = compute(ops.where(bad, Tensor._make(np.eye(n, dtype=np.dtype(A.dtype))), A))
    bad_out = Tensor._make(info.reshape(info.shape + (1,) * matrix_dims) != 0)
    return ops.where(bad_out, math.nan, out)


def cholesky_ex(A, *, upper: bool = False, check_errors: bool = False) -> CholeskyExResult:
    """(L, info): `chainrule.linalg.cholesky` and, per matrix, the order of the first leading
    minor that is not positive-definite (int32, 0 when it is). Such a matrix's L is nan
    here; ``check_errors=True`` raises a DomainError instead.

    >>> import chainrule as cr
    >>> cr.linalg.cholesky_ex(cr.tensor([[1.0, 2.0], [2.0, 1.0]])).info.item()
    2
    """
    matrices("cholesky_ex", A, square=True)
    info = _cholesky_info(A.detach().numpy())
    if check_errors and info.any():
        _failed("cholesky_ex", info, lambda k: f"the leading minor of order {k} is not "
                "positive-definite")  # fmt: skip
    out = _guarded(A, info, cholesky_row)
    return CholeskyExResult(out.mT if upper else out, Tensor._make(info))


def _singular(i: int) -> str:
    return f"the matrix is singular (U[{i - 1}, {i - 1}] of its LU is exactly zero)"


def inv_ex(A, *, check_errors: bool = False) -> InvExResult:
    """(inverse, info): `chainrule.linalg.inv` and, per matrix, getrf's info (int32: the
    1-based index of the first zero pivot of its LU, 0 when invertible). A singular
    matrix's inverse is nan here; ``check_errors=True`` raises a DomainError instead.

    >>> import chainrule as cr
    >>> cr.linalg.inv_ex(cr.tensor([[2.0, 0.0], [0.0, 4.0]])).info.item()
    0
    """
    matrices("inv_ex", A, square=True)
    info = _lu_info_of(A.detach().numpy())
    if check_errors and info.any():
        _failed("inv_ex", info, _singular)
    return InvExResult(_guarded(A, info, inv_row), Tensor._make(info))


def tensorinv(A, ind: int = 2):
    """The inverse of A as a map from its dims past ``ind`` to its first ``ind``: A
    reshaped to a square matrix, inverted, and shaped A.shape[ind:] + A.shape[:ind].

    >>> import chainrule as cr
    >>> cr.linalg.tensorinv(cr.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    shape = shape_of(A)
    if not 0 < ind < len(shape) + (len(shape) == 0):
        raise ShapeError(f"tensorinv: ind must be between 1 and {len(shape) - 1} for shape "
                         f"{fmt_shape(shape)}, got {ind}")  # fmt: skip
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise ShapeError(f"tensorinv: shape {fmt_shape(shape)} with ind={ind} is not square: "
                         f"{rows} != {cols} elements")  # fmt: skip
    matrices("tensorinv", ops.reshape(A, (rows, cols)), square=True)
    return ops.reshape(inv_row(ops.reshape(A, (rows, cols))), shape[ind:] + shape[:ind])


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B: A's first dims match B's shape and its last ones
    make X's (``dims``: A's dims to move to the end first).

    >>> import chainrule as cr
    >>> cr.linalg.tensorsolve(2 * cr.eye(6).reshape(2, 3, 6), cr.ones(2, 3)).tolist()
    [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    """
    if dims is not None:
        dims = [dims] if isinstance(dims, int) else list(dims)
        ndim = len(shape_of(A))
        A = ops.movedim(A, dims, list(range(ndim - len(dims), ndim)))
    a_shape, b_shape = shape_of(A), shape_of(B)
    x_shape = a_shape[len(b_shape) :]
    rows, cols = math.prod(b_shape), math.prod(x_shape)
    if a_shape[: len(b_shape)] != b_shape or rows != cols:
        raise ShapeError(
            f"tensorsolve: A of shape {fmt_shape(a_shape)} must start with B's shape "
            f"{fmt_shape(b_shape)} and have as many elements after it"
        )
    square = ops.reshape(A, (rows, cols))
    matrices("tensorsolve", square, square=True)
    return ops.reshape(solve_row(square, ops.reshape(B, (rows, 1))), x_shape)
