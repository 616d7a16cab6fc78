"""``chainrule.linalg``: PyTorch's torch.linalg on chainrule tensors. Norms, decompositions
(inv, solve, cholesky, qr, svd, eigh, pinv, LU...), least squares and products of several
matrices. eig and eigvals are left out: a real matrix's eigenvalues may be complex, and
chainrule has no complex dtypes.

The rows and their gradients are in `chainrule.ops.decompositions` (matmul in
`chainrule.ops.linalg`, cross in `chainrule.ops.products`); this module checks arguments,
unpacks results and composes.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from . import ops
from ._tensor import Tensor
from .errors import DomainError, DTypeError, ShapeError, fmt_shape
from .linalg_solvers import (
    CholeskyExResult,
    InvExResult,
    LstsqResult,
    LUFactorExResult,
    LUFactorResult,
    SolveExResult,
    _failed,
    _guarded,
    _lu_info_of,
    _singular,
    cholesky_ex,
    inv_ex,
    lstsq,
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    tensorinv,
    tensorsolve,
)
from .ops.arranging import linalg_vander as vander
from .ops.decompositions import (
    SlogdetResult,
    cholesky_row,
    det,
    eigh_row,
    eigh_shapes,
    inv_row,
    matrices,
    matrix_power,
    matrix_rank_row,
    pinv_row,
    qr_row,
    qr_shapes,
    shape_of,
    slogdet,
    solve_row,
    svd_row,
    svd_shapes,
    unpack,
)
from .ops.factorizations import (
    LUResult,
    QRResult,
    householder_product,
    matrix_exp,
    solve_triangular,
)
from .ops.linalg import matmul

__all__ = [
    "CholeskyExResult", "EighResult", "InvExResult", "LUFactorExResult", "LUFactorResult",
    "LUResult", "LstsqResult", "QRResult", "SVDResult", "SlogdetResult", "SolveExResult",
    "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex",
    "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
    "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]  # fmt: skip


class SVDResult(NamedTuple):
    """What ``svd`` returns, like ``torch.return_types.linalg_svd``."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class EighResult(NamedTuple):
    """What ``eigh`` returns, like ``torch.return_types.linalg_eigh``."""

    eigenvalues: Tensor
    eigenvectors: Tensor


def inv(A):
    """The inverse of each square matrix of ``A`` (..., n, n); singular is a DomainError.

    >>> import chainrule as cr
    >>> cr.linalg.inv(cr.tensor([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    matrices("inv", A, square=True)
    return inv_row(A)


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
        return ops.reshape(solve_row(A, ops.unsqueeze(B, -1)), _broadcast(a_shape[:-1], b_shape))
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


def cholesky(A, *, upper: bool = False):
    """The Cholesky factor L (lower, A = L Lᵀ) of symmetric positive-definite matrices,
    or U = Lᵀ with ``upper=True``. Only the lower triangle of A is read; the gradient is
    symmetric, as in PyTorch. A matrix that is not positive-definite is a DomainError.

    >>> import chainrule as cr
    >>> cr.linalg.cholesky(cr.tensor([[4.0, 2.0], [2.0, 2.0]])).tolist()
    [[2.0, 0.0], [1.0, 1.0]]
    """
    matrices("cholesky", A, square=True)
    out = cholesky_row(A)
    return out.mT if upper else out


def qr(A, mode: str = "reduced") -> QRResult:
    """(Q, R) with A = QR, Q with orthonormal columns and R upper triangular.

    ``mode``: 'reduced' (Q is (m, k), R (k, n), k = min(m, n)), 'complete' (Q is (m, m))
    or 'r' (Q empty). Q's columns past k get no gradient.

    >>> import chainrule as cr
    >>> Q, R = cr.linalg.qr(cr.tensor([[3.0, 1.0], [4.0, 2.0]]))
    >>> (Q @ R).tolist()
    [[3.0..., 1.0...], [4.0..., 2.0...]]
    """
    shape = matrices("qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise DomainError(f"qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    row_mode = "reduced" if mode == "r" else mode
    q, r = unpack(qr_row(A, mode=row_mode), qr_shapes(shape, row_mode))
    if mode == "r":
        return QRResult(Tensor._make(np.zeros((0,), np.dtype(A.dtype))), r)
    return QRResult(q, r)


def svd(A, full_matrices: bool = True) -> SVDResult:
    """(U, S, Vh) with A = U diag(S) Vh, S descending; U's columns and Vh's rows past
    min(m, n) (``full_matrices=True``) get no gradient, as in PyTorch. Singular vectors are
    defined up to sign: differentiate losses that do not depend on it (U @ Vh, abs...).

    >>> import chainrule as cr
    >>> cr.linalg.svd(cr.tensor([[3.0, 0.0], [0.0, -2.0]])).S.tolist()
    [3.0, 2.0]
    """
    shape = matrices("svd", A)
    out = svd_row(A, full_matrices=bool(full_matrices))
    return SVDResult(*unpack(out, svd_shapes(shape, full_matrices)))


def svdvals(A):
    """The singular values of each matrix, descending; differentiable at repeated values.

    >>> import chainrule as cr
    >>> cr.linalg.svdvals(cr.tensor([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    return svd(A, full_matrices=False).S


def eigh(A, UPLO: str = "L") -> EighResult:
    """(eigenvalues, eigenvectors) of symmetric matrices: eigenvalues ascending, A = V
    diag(w) Vᵀ. Only the ``UPLO`` ('L' or 'U') triangle is read. Eigenvectors are defined up
    to sign; their gradient needs distinct eigenvalues.

    >>> import chainrule as cr
    >>> cr.linalg.eigh(cr.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues.tolist()
    [1.0, 3.0]
    """
    shape = matrices("eigh", A, square=True)
    if UPLO not in ("L", "U"):
        raise DomainError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
    return EighResult(*unpack(eigh_row(A, UPLO=UPLO), eigh_shapes(shape)))


def eigvalsh(A, UPLO: str = "L"):
    """The eigenvalues of symmetric matrices, ascending.

    >>> import chainrule as cr
    >>> cr.linalg.eigvalsh(cr.tensor([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    return eigh(A, UPLO).eigenvalues


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


def matrix_rank(A, *, atol=None, rtol=None, hermitian: bool = False):
    """The number of singular values above max(atol, rtol * largest), int64.

    >>> import chainrule as cr
    >>> cr.linalg.matrix_rank(cr.tensor([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    shape = matrices("matrix_rank", A)
    atol, rtol = _tolerances(shape, np.dtype(A.dtype), atol, rtol)
    return matrix_rank_row(A, atol=atol, rtol=rtol)


# Norms, composed from the vector norm row (`chainrule.norm`) and the singular values.


def _order(op: str, ord) -> float:
    if not isinstance(ord, numbers.Real) or isinstance(ord, bool):
        raise DTypeError(f"{op}: ord must be a number, got {ord!r}")
    return float(ord)


def vector_norm(x, ord=2, dim=None, keepdim: bool = False, *, dtype=None):
    """The vector ``ord``-norm over ``dim`` (every element by default, as one vector).

    ``ord``: any positive number, inf (largest |x|), -inf (smallest), 0 (the number of
    non-zero elements, without gradient) or a negative number (sum(|x|^ord)^(1/ord)).

    >>> import chainrule as cr
    >>> cr.linalg.vector_norm(cr.tensor([3.0, -4.0])).item(), cr.linalg.vector_norm(
    ...     cr.tensor([3.0, -4.0]), ord=1).item()
    (5.0, 7.0)
    """
    ord = _order("vector_norm", ord)
    if dtype is not None:
        x = x.to(dtype)
    if ord == 0:
        return ops.sum((x != 0).to(x.dtype), dim, keepdim)
    if ord > 0 or ord == -math.inf:
        return ops.norm(x, ord, dim, keepdim)
    return ops.sum(ops.abs(x) ** ord, dim, keepdim) ** (1 / ord)


def _two_dims(op: str, shape: tuple, dim) -> tuple[int, int]:
    if len(shape) < 2:
        raise ShapeError(
            f"{op}: expects a matrix or a batch of matrices, got shape {fmt_shape(shape)}"
        )
    if isinstance(dim, numbers.Integral) or len(dim) != 2:
        raise ShapeError(f"{op}: dim must be a pair of dims, got {dim!r}")
    d0, d1 = (d % len(shape) if -len(shape) <= d < len(shape) else None for d in dim)
    if d0 is None or d1 is None or d0 == d1:
        raise ShapeError(f"{op}: dim {tuple(dim)} must name two different dims of shape "
                         f"{fmt_shape(shape)}")  # fmt: skip
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None):
    """The matrix norm over the two dims ``dim``: 'fro' (Frobenius), 'nuc' (sum of singular
    values), 2 / -2 (largest / smallest singular value), 1 / -1 (largest / smallest column
    sum of |A|), inf / -inf (largest / smallest row sum).

    >>> import chainrule as cr
    >>> A = cr.tensor([[1.0, -2.0], [3.0, 4.0]])
    >>> cr.linalg.matrix_norm(A, 1).item(), cr.linalg.matrix_norm(A, math.inf).item()
    (6.0, 7.0)
    """
    if dtype is not None:
        A = A.to(dtype)
    shape = shape_of(A)
    d0, d1 = _two_dims("matrix_norm", shape, dim)
    kept_shape = tuple(1 if i in (d0, d1) else n for i, n in enumerate(shape))
    if ord == "fro":
        return ops.norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(ops.movedim(A, (d0, d1), (-2, -1)))
        out = ops.sum(s, -1) if ord == "nuc" else (ops.amax if ord == 2 else ops.amin)(s, -1)
    elif ord in (1, -1, math.inf, -math.inf):
        summed, extreme = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = ops.sum(ops.abs(A), summed, keepdim=True)
        out = (ops.amax if ord > 0 else ops.amin)(sums, extreme, keepdim=True)
    else:
        raise DomainError(
            f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
        )
    if keepdim:
        return ops.reshape(out, kept_shape)
    return ops.reshape(out, tuple(n for i, n in enumerate(shape) if i not in (d0, d1)))


def norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):
    """A vector norm (``dim`` one int) or a matrix norm (``dim`` two ints), as
    `vector_norm` and `matrix_norm`. Without ``dim``: with ``ord`` None the 2-norm of every
    element; with an ``ord``, A must be 1-D (vector norm) or 2-D (matrix norm).

    >>> import chainrule as cr
    >>> A = cr.tensor([[3.0, 0.0], [0.0, 4.0]])
    >>> cr.linalg.norm(A).item(), cr.linalg.norm(A, 2).item(), cr.linalg.norm(A, dim=0).tolist()
    (5.0, 4.0, [3.0, 4.0])
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
        if len(dims) == 1:
            return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        raise ShapeError(f"norm: dim must be one or two dims, got {dim!r}")
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    shape = shape_of(A)
    if len(shape) == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if len(shape) == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise ShapeError(
        f"norm: with ord={ord!r} and no dim, A must be 1-D or 2-D, got shape {fmt_shape(shape)}"
    )


# Products and powers.


def multi_dot(tensors: Sequence):
    """The product of a chain of matrices, left to right; the first may be a row vector
    (1-D) and the last a column vector, which drop from the result as in matmul.

    >>> import chainrule as cr
    >>> cr.linalg.multi_dot([cr.ones(3), cr.ones(3, 4), cr.ones(4)]).item()
    12.0
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise ShapeError(f"multi_dot: expects at least 2 tensors, got {len(tensors)}")
    shapes = [shape_of(t) for t in tensors]
    for i, s in enumerate(shapes):
        allowed = (1, 2) if i in (0, len(shapes) - 1) else (2,)
        if len(s) not in allowed:
            where = "the first and last" if len(allowed) == 2 else "the middle ones"
            raise ShapeError(
                f"multi_dot: tensor {i} has shape {fmt_shape(s)}; {where} must be "
                f"{' or '.join(f'{r}-D' for r in allowed)}"
            )
    for i in range(len(shapes) - 1):
        a, b = shapes[i], shapes[i + 1]
        if a[-1] != b[0]:
            raise ShapeError(
                f"multi_dot: tensor {i} of shape {fmt_shape(a)} and tensor {i + 1} of shape "
                f"{fmt_shape(b)} do not align: {a[-1]} != {b[0]}"
            )
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


def cross(input, other, *, dim: int = -1):
    """The cross product of 3-vectors along ``dim`` (-1 by default; batch dims broadcast).

    >>> import chainrule as cr
    >>> cr.linalg.cross(cr.tensor([0.0, 1.0, 0.0]), cr.tensor([0.0, 0.0, 1.0])).tolist()
    [1.0, 0.0, 0.0]
    """
    return ops.cross(input, other, dim)


def vecdot(x, y, *, dim: int = -1):
    """Sums of products along ``dim`` (batch dims broadcast).

    >>> import chainrule as cr
    >>> cr.linalg.vecdot(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), cr.tensor([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    return ops.sum(x * y, dim)


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """The diagonal of each matrix (``offset`` > 0 above the main one, < 0 below), as
    `chainrule.diagonal` with the last two dims by default.

    >>> import chainrule as cr
    >>> cr.linalg.diagonal(cr.tensor([[1.0, 2.0], [3.0, 4.0]]), offset=1).tolist()
    [2.0]
    """
    return ops.diagonal(A, offset, dim1, dim2)


def cond(A, p=None):
    """The condition number of each matrix in the norm ``p``: with None or 2 the ratio of
    the largest to the smallest singular value (-2: its inverse; A may be rectangular),
    otherwise matrix_norm(A, p) * matrix_norm(inv(A), p) for square invertible A.

    >>> import chainrule as cr
    >>> cr.linalg.cond(cr.tensor([[4.0, 0.0], [0.0, 0.5]])).item()
    8.0
    """
    if p in (None, 2, -2):
        matrices("cond", A)
        s = svdvals(A)
        large, small = s[..., 0], s[..., -1]
        return small / large if p == -2 else large / small
    matrices("cond", A, square=True)
    return matrix_norm(A, p) * matrix_norm(inv_row(A), p)
