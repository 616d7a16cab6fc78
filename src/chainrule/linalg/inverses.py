"""Inverses, solves and determinants with their gradients: the rows inv, solve, det, slogdet,
pinv and matrix_rank; torch's ``inverse``, ``det``, ``slogdet``, ``logdet`` and ``pinverse``;
torch.linalg's ``inv``, ``solve``, ``pinv``, ``matrix_rank``, least squares (``lstsq``),
the tensor forms (``tensorinv``, ``tensorsolve``) and the ``_ex`` variants that report a
singular matrix as ``info`` instead of raising.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from ..op import Op
from ..ops import reduce
from ..ops.arguments import shape_of
from ..ops.shape import movedim, reshape, unsqueeze
from .lu_factorization import _lu_factor, lu_info, lu_shapes
from .matrices import (
    _batch_linalg,
    _failed,
    _guarded,
    _lapack,
    _same_dtype,
    matrices,
    unpack,
)

__all__ = ["det", "inverse", "logdet", "pinverse", "slogdet"]


def _solve(a, b):
    return xp.run(solve_row, a, b)


def _inv(a):
    return xp.run(inv_row, a)


def _solve_right(b, r):
    """b @ r⁻¹, as solve(rᵀ, bᵀ)ᵀ."""
    return _solve(r.mT, b.mT).mT


# inv, solve, det, slogdet.


def _cofactor(x: np.ndarray) -> np.ndarray:
    """The cofactor matrix det(x) x⁻ᵀ, from the SVD so that it is right for singular x too:
    with x = U diag(s) Vh it is det(U) det(Vh) U diag(prod of the other s) Vh."""
    u, s, vh = np.linalg.svd(x)
    others = np.prod(np.where(np.eye(s.shape[-1], dtype=bool), 1, s[..., None, :]), axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * (u * others[..., None, :]) @ vh


def _det_vjp(g, x, out):
    if isinstance(x, Tensor):  # differentiable again through inv (x invertible)
        return xp.unsqueeze(xp.unsqueeze(g * out, -1), -1) * _inv(x).mT
    return g[..., None, None] * _cofactor(x)


def _slogdet(x):
    sign, logabsdet = np.linalg.slogdet(x)
    return np.stack([sign, logabsdet], axis=-1)


def _slogdet_jvp(dx, x):
    dlog = np.einsum("...ii->...", _lapack("slogdet", np.linalg.solve, x, dx))
    return np.stack([np.zeros_like(dlog), dlog], axis=-1)


# fmt: off
inv_row = Op("inv", lambda x: _lapack("inv", np.linalg.inv, x),
             vjp=(lambda g, out: -(out.mT @ g @ out.mT),),
             jvp=(lambda dx, out: -(out @ dx @ out),),
             kind="decomposition", batch=_batch_linalg,
             doc="The inverse of each square matrix; a singular one is a DomainError.")
# out = A⁻¹ B (x = A, y = B): B's gradient solves Aᵀ gB = g, and A's is -gB outᵀ.
solve_row = Op("solve", lambda x, y: _lapack("solve", np.linalg.solve, x, y),
               vjp=(lambda g, x, out: -(_solve(x.mT, g) @ out.mT),
                    lambda g, x: _solve(x.mT, g)),
               jvp=(lambda dx, x, out: -_solve(x, dx @ out), lambda dy, x: _solve(x, dy)),
               kind="decomposition", batch=_batch_linalg,
               doc="A⁻¹ B for square A (x) and matrices B (y), batch dims broadcast.")
det_row = Op("det", np.linalg.det, vjp=(_det_vjp,),
             jvp=(lambda dx, x: np.sum(_cofactor(x) * dx, axis=(-2, -1)),),
             kind="decomposition", batch=_batch_linalg,
             doc="The determinant of each square matrix.")
slogdet_row = Op("slogdet", _slogdet,
                 vjp=(lambda g, x: xp.unsqueeze(g[..., 1:], -1) * _inv(x).mT,),
                 jvp=(_slogdet_jvp,), kind="decomposition", batch=_batch_linalg,
                 doc="sign(det) and log|det| of each square matrix, packed (..., 2).")
# fmt: on


# pinv: P = A⁺ from the SVD, singular values at or below max(atol, rtol * largest) dropped.
# Its derivative (Golub and Pereyra) holds where the rank does not change.


def _kept(s, atol, rtol):
    return s > np.maximum(atol, rtol * s[..., :1])


def _pinv(x, atol, rtol):
    u, s, vh = np.linalg.svd(x, full_matrices=False)
    kept = _kept(s, atol, rtol)
    s_inv = np.where(kept, 1 / np.where(kept, s, 1), 0)
    return (vh.mT * s_inv[..., None, :]) @ u.mT


def _pinv_vjp(g, x, out):
    p, gt = out, g.mT
    return -(p.mT @ g @ p.mT) + (gt - x @ (p @ gt)) @ (p @ p.mT) + (p.mT @ p) @ (gt - (gt @ p) @ x)


def _pinv_jvp(dx, x, out):
    p, dt = out, dx.mT
    return -(p @ dx @ p) + (p @ p.mT) @ (dt - (dt @ x) @ p) + (dt - p @ (x @ dt)) @ (p.mT @ p)


pinv_row = Op(
    "pinv",
    _pinv,
    vjp=(_pinv_vjp,),
    jvp=(_pinv_jvp,),
    kind="decomposition",
    batch=_batch_linalg,
    doc="The Moore-Penrose pseudoinverse of each matrix.",
)


matrix_rank_row = Op(
    "matrix_rank",
    lambda x, atol, rtol: np.sum(_kept(np.linalg.svd(x, compute_uv=False), atol, rtol), -1),
    vjp=None,
    inputs=("x",),
    kind="decomposition",
    batch=_batch_linalg,
    doc="The number of singular values above the tolerance (int64).",
)


# Public functions: check shapes and dtypes, call the row, unpack its outputs.


class SlogdetResult(NamedTuple):
    """What ``slogdet`` returns, like ``torch.return_types.linalg_slogdet``."""

    sign: Tensor
    logabsdet: Tensor


class InvExResult(NamedTuple):
    """What ``inv_ex`` returns, like ``torch.return_types.linalg_inv_ex``."""

    inverse: Tensor
    info: Tensor


class SolveExResult(NamedTuple):
    """What ``solve_ex`` returns, like ``torch.return_types.linalg_solve_ex``."""

    result: Tensor
    info: Tensor


class LstsqResult(NamedTuple):
    """What ``lstsq`` returns, like ``torch.return_types.linalg_lstsq``."""

    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


def inv(A):
    """The inverse of each square matrix of ``A`` (..., n, n); singular is a DomainError.

    >>> import chainrule as cr
    >>> cr.linalg.inv(cr.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    matrices("inv", A, square=True)
    return inv_row(A)


def inverse(input):
    """The inverse of each square matrix (``chainrule.linalg.inv``, by PyTorch's older name);
    a singular one is a DomainError.

    >>> import chainrule as cr
    >>> cr.inverse(cr.tensor([[1.0, 1.0], [0.0, 1.0]])).tolist()
    [[1.0, -1.0], [0.0, 1.0]]
    """
    matrices("inverse", input, square=True)
    return inv_row(input)


def _singular(i: int) -> str:
    return f"the matrix is singular (U[{i - 1}, {i - 1}] of its LU is exactly zero)"


def _lu_info_of(a: np.ndarray) -> np.ndarray:
    lu_packed, _ = unpack(_lu_factor(a), lu_shapes(a.shape))
    return lu_info(lu_packed)._array


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


def solve(A, B, *, left: bool = True):
    """X with A X = B (``left=False``: X A = B) for square A (..., n, n).

    B is a batch of vectors (..., n) when it is 1-D or has A's shape without its last dim,
    else a batch of matrices (..., n, k); batch dims broadcast.

    >>> import chainrule as cr
    >>> cr.linalg.solve(cr.tensor([[2.0, 0.0], [0.0, 4.0]]), cr.tensor([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    a_shape = matrices("solve", A, square=True)
    b_shape = shape_of(B)
    is_vector = len(b_shape) == 1 or b_shape == a_shape[:-1]
    n = a_shape[-1]
    if is_vector and not left:
        raise ShapeError(
            f"solve: left=False needs B as matrices (..., k, {n}), got shape "
            f"{fmt_shape(b_shape)}; for a vector, use B / A"
        )
    if not is_vector and len(b_shape) < 2:
        raise ShapeError(f"solve: B must have at least 1 dimension, got shape {fmt_shape(b_shape)}")
    size = b_shape[-1] if is_vector or not left else b_shape[-2]
    if size != n:
        where = "its last dim" if is_vector or not left else "its second-last dim"
        raise ShapeError(
            f"solve: A has shape {fmt_shape(a_shape)} but B has shape {fmt_shape(b_shape)}: "
            f"{where} must be {n}"
        )
    if is_vector:
        return reshape(solve_row(A, unsqueeze(B, -1)), _broadcast(a_shape[:-1], b_shape))
    if left:
        return solve_row(A, B)
    return solve_row(A.mT, B.mT).mT


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False) -> SolveExResult:
    """(result, info): `chainrule.linalg.solve` and getrf's info per matrix of A (see
    `inv_ex`); the result for a singular matrix is nan here.

    >>> import chainrule as cr
    >>> A, B = cr.tensor([[2.0, 0.0], [0.0, 4.0]]), cr.tensor([2.0, 4.0])
    >>> cr.linalg.solve_ex(A, B).result.tolist()
    [1.0, 1.0]
    """
    a_shape = matrices("solve_ex", A, square=True)
    info = _lu_info_of(A.detach().numpy())
    if check_errors and info.any():
        _failed("solve_ex", info, _singular)
    b_shape = shape_of(B)
    matrix_dims = 1 if len(b_shape) == 1 or b_shape == a_shape[:-1] else 2
    result = _guarded(A, info, lambda a: solve(a, B, left=left), matrix_dims)
    return SolveExResult(result, Tensor._make(info))


def _broadcast(a: tuple, b: tuple) -> tuple:
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        raise ShapeError(
            f"solve: batch shapes {fmt_shape(a)} and {fmt_shape(b)} do not broadcast"
        ) from None


def det(A):
    """The determinant of each square matrix of ``A`` (..., n, n).

    The gradient is the cofactor matrix, right for singular matrices too (where PyTorch's
    can be 0: for [[1, 1], [1, 1]] it gives 0, chainrule [[1, -1], [-1, 1]]). A second
    derivative goes through inv, so there it needs an invertible matrix.

    >>> import chainrule as cr
    >>> cr.det(cr.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    -2.0...
    """
    matrices("det", A, square=True)
    return det_row(A)


def slogdet(A) -> SlogdetResult:
    """(sign, logabsdet): the sign and log |det| of each square matrix, without overflow.

    The sign gets no gradient; a singular matrix has sign 0 and logabsdet -inf.

    >>> import chainrule as cr
    >>> cr.slogdet(cr.tensor([[0.0, 2.0], [3.0, 0.0]]))
    SlogdetResult(sign=tensor(-1.), logabsdet=tensor(1.7918))
    """
    matrices("slogdet", A, square=True)
    out = slogdet_row(A)
    return SlogdetResult(out[..., 0], out[..., 1])


def logdet(A):
    """log(det(A)): nan where the determinant is negative, -inf where it is 0.

    >>> import chainrule as cr
    >>> cr.logdet(cr.tensor([[2.0, 0.0], [0.0, 3.0]])).item()
    1.791759...
    """
    sign, logabsdet = slogdet(A)
    return xp.where(sign < 0, math.nan, logabsdet)


def _tolerances(shape: tuple, dtype, atol, rtol) -> tuple[float, float]:
    """PyTorch's defaults: rtol = max(m, n) * eps when neither is given, 0 with atol alone."""
    if rtol is None:
        rtol = max(shape[-2:]) * np.finfo(dtype).eps if atol is None or atol <= 0 else 0.0
    return float(atol or 0.0), float(rtol)


def pinv(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The pseudoinverse of each matrix, dropping singular values at or below
    max(atol, rtol * largest). ``hermitian`` is accepted and changes nothing here. The
    gradient holds where the rank does not change.

    >>> import chainrule as cr
    >>> cr.linalg.pinv(cr.tensor([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    shape = matrices("pinv", A)
    atol, rtol = _tolerances(shape, np.dtype(A.dtype), atol, rtol)
    return pinv_row(A, atol=atol, rtol=rtol)


def pinverse(input, rcond: float = 1e-15):
    """The pseudoinverse, dropping singular values at or below ``rcond`` times the largest
    (``chainrule.linalg.pinv`` with rtol=rcond).

    >>> import chainrule as cr
    >>> cr.pinverse(cr.tensor([[0.0, 2.0]])).tolist()
    [[0.0], [0.5]]
    """
    matrices("pinverse", input)
    return pinv_row(input, atol=0.0, rtol=float(rcond))


def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The number of singular values above max(atol, rtol * largest), int64.

    >>> import chainrule as cr
    >>> cr.linalg.matrix_rank(cr.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    shape = matrices("matrix_rank", A)
    atol, rtol = _tolerances(shape, np.dtype(A.dtype), atol, rtol)
    return matrix_rank_row(A, atol=atol, rtol=rtol)


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
    b = unsqueeze(B, -1) if is_vector else B
    solution = pinv_row(A, atol=0.0, rtol=rcond) @ b
    empty = Tensor._make(np.zeros((0,), dtype))
    s = np.linalg.svd(A.detach().numpy(), compute_uv=False)
    rank = np.sum(s > rcond * s[..., :1], axis=-1)
    residuals = empty
    if m > n and (driver == "gels" or (driver != "gelsy" and (rank == n).all())):
        residuals = reduce.sum((A @ solution - b) ** 2, -2)
    return LstsqResult(
        solution[..., 0] if is_vector else solution,
        residuals,
        empty.to("int64") if driver == "gels" else Tensor._make(rank.astype(np.int64)),
        Tensor._make(s) if driver in ("gelsd", "gelss") else empty,
    )


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
    matrices("tensorinv", reshape(A, (rows, cols)), square=True)
    return reshape(inv_row(reshape(A, (rows, cols))), shape[ind:] + shape[:ind])


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
        A = movedim(A, dims, list(range(ndim - len(dims), ndim)))
    a_shape, b_shape = shape_of(A), shape_of(B)
    x_shape = a_shape[len(b_shape) :]
    rows, cols = math.prod(b_shape), math.prod(x_shape)
    if a_shape[: len(b_shape)] != b_shape or rows != cols:
        raise ShapeError(
            f"tensorsolve: A of shape {fmt_shape(a_shape)} must start with B's shape "
            f"{fmt_shape(b_shape)} and have as many elements after it"
        )
    square = reshape(A, (rows, cols))
    matrices("tensorsolve", square, square=True)
    return reshape(solve_row(square, reshape(B, (rows, 1))), x_shape)
