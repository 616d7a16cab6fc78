"""Matrix factorizations and solvers beyond ops.decompositions: triangular solves, LU (factor,
unpack, solve), Cholesky solves and inverse, matrix_exp and Householder products, under
PyTorch's torch.* names (triangular_solve, lu, qr(some), svd(some)...). `chainrule.linalg`
spells the same work the torch.linalg way and calls the helpers here.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op, with_rank
from .decompositions import (
    _batch_linalg,
    _lapack,
    _pack,
    _side_by_side,
    _tril,
    cholesky_row,
    matrices,
    qr_row,
    qr_shapes,
    shape_of,
    svd_row,
    svd_shapes,
    unpack,
)

__all__ = [
    "cholesky", "cholesky_inverse", "cholesky_solve", "lu", "lu_solve", "lu_unpack",
    "matrix_exp", "orgqr", "qr", "svd", "triangular_solve",
]  # fmt: skip


# Helpers for the rules: each takes arrays or Tensors (a backward with create_graph=True).


def _triu(a, k: int = 0):
    return xp.where(np.triu(np.ones(a.shape[-2:], dtype=bool), k), a, 0)


def _stacked(a, b):
    """[a; b] along the second-last dim."""
    return _side_by_side(a.mT, b.mT).mT


def _values(a) -> np.ndarray:
    return a.data if isinstance(a, Tensor) else np.asarray(a)


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


# matrix_exp by scaling and squaring: scale A by 2⁻ˢ to 1-norm at most 1/2, sum Taylor's
# series to degree 18 (its remainder is below 1e-22 there), square s times. The Fréchet
# derivative of exp at A in direction E is the top-right block of exp([[A, E], [0, A]]).

_TAYLOR_DEGREE = 18


def _matrix_exp(x):
    a = np.asarray(x, dtype=np.float64)
    norm = np.max(np.sum(np.abs(a), axis=-2), axis=-1, initial=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.ceil(np.log2(norm / 0.5))
    s = np.where(np.isfinite(s), np.clip(s, 0, 2000), 0).astype(np.int64)
    scaled = a / np.exp2(s)[..., None, None]
    eye = np.eye(a.shape[-1])
    out = eye + scaled / _TAYLOR_DEGREE
    for j in range(_TAYLOR_DEGREE - 1, 0, -1):
        out = eye + (scaled @ out) / j
    for i in range(int(s.max(initial=0))):
        out = np.where((i < s)[..., None, None], out @ out, out)
    return out.astype(np.asarray(x).dtype)


def _upper_blocks(a, b):
    """The block matrix [[a, b], [0, a]] (2n, 2n), from products with constant selections
    (so arrays and Tensors take one path)."""
    n = a.shape[-1]
    eye = np.eye(2 * n, dtype=a.dtype)
    top, bottom = eye[:n], eye[n:]
    return (a.mT @ top).mT @ top + (b.mT @ top).mT @ bottom + (a.mT @ bottom).mT @ bottom


def _exp_derivative(a, e):
    n = a.shape[-1]
    return xp.run(matrix_exp_row, _upper_blocks(a, e))[..., :n, n:]


matrix_exp_row = Op(
    "matrix_exp",
    _matrix_exp,
    vjp=(lambda g, x: _exp_derivative(x.mT, g),),
    jvp=(lambda dx, x: _exp_derivative(x, dx),),
    kind="decomposition",
    batch=_batch_linalg,
    doc="The matrix exponential of each square matrix.",
)


# Public functions (torch.* names) and the helpers chainrule.linalg shares.


class TriangularSolveResult(NamedTuple):
    """What ``triangular_solve`` returns, like ``torch.return_types.triangular_solve``."""

    solution: Tensor
    cloned_coefficient: Tensor


class LUResult(NamedTuple):
    """What ``lu_unpack`` and ``linalg.lu`` return: A = P L U."""

    P: Tensor
    L: Tensor
    U: Tensor


class QRResult(NamedTuple):
    """What ``qr`` returns, like ``torch.return_types.qr`` (and ``linalg_qr``)."""

    Q: Tensor
    R: Tensor


class SVDWithVResult(NamedTuple):
    """What ``torch.svd`` returns: A = U diag(S) Vᵀ (V, not linalg.svd's Vh)."""

    U: Tensor
    S: Tensor
    V: Tensor


def _same_dtype(op: str, a, b) -> None:
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise DTypeError(
            f"{op}: A has dtype {fmt_dtype(a.dtype)} but B has {fmt_dtype(b.dtype)}; both must "
            "have one dtype: convert one with .to(dtype)"
        )


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


def cholesky(input, upper: bool = False):
    """The Cholesky factor of symmetric positive-definite matrices, lower (A = L Lᵀ) or
    ``upper`` (A = Uᵀ U): the older ``torch.cholesky``, as `chainrule.linalg.cholesky`.

    >>> import chainrule as cr
    >>> cr.cholesky(cr.tensor([[4.0, 2.0], [2.0, 2.0]]), upper=True).tolist()
    [[2.0, 1.0], [0.0, 1.0]]
    """
    matrices("cholesky", input, square=True)
    out = cholesky_row(input)
    return out.mT if upper else out


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


def matrix_exp(A):
    """The matrix exponential exp(A) = I + A + A²/2! + ... of each square matrix.

    >>> import chainrule as cr
    >>> cr.matrix_exp(cr.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    matrices("matrix_exp", A, square=True)
    return matrix_exp_row(A)


def householder_product(A, tau):
    """The first n columns of H₁ H₂ ... H_k, H_i = I - tau_i v_i v_iᵀ, v_i column i of A
    (..., m, n) below the diagonal with 1 on it (geqrf's packed Q); tau is (..., k), k <= n.

    >>> import chainrule as cr
    >>> Q = cr.linalg.householder_product(cr.tensor([[1.0], [1.0]]), cr.tensor([1.0]))
    >>> Q.tolist()
    [[0.0], [-1.0]]
    """
    shape = matrices("householder_product", A)
    tau_shape = shape_of(tau)
    m, n = shape[-2:]
    if m < n or not tau_shape or tau_shape[-1] > n:
        raise ShapeError(
            f"householder_product: expects A (..., m, n) with m >= n and tau (..., k) with "
            f"k <= n, got shapes {fmt_shape(shape)} and {fmt_shape(tau_shape)}"
        )
    _same_dtype("householder_product", A, tau)
    dtype = np.dtype(A.dtype)
    reflectors = A.tril(-1) + Tensor._make(np.eye(m, n, dtype=dtype))
    q = Tensor._make(np.eye(m, dtype=dtype))
    for i in range(tau_shape[-1]):  # Q H_i = Q - tau_i (Q v_i) v_iᵀ
        v = reflectors[..., :, i : i + 1]
        q = q - (q @ v) * tau[..., i, None, None] @ v.mT
    return q[..., :, :n]


def orgqr(input, tau):
    """`chainrule.linalg.householder_product` by LAPACK's name.

    >>> import chainrule as cr
    >>> cr.orgqr(cr.tensor([[1.0], [1.0]]), cr.tensor([1.0])).tolist()
    [[0.0], [-1.0]]
    """
    return householder_product(input, tau)


def qr(input, some: bool = True) -> QRResult:
    """(Q, R) with A = QR, as the older ``torch.qr``: ``some=False`` gives the complete Q
    (m, m) (`chainrule.linalg.qr` with mode 'reduced' or 'complete').

    >>> import chainrule as cr
    >>> Q, R = cr.qr(cr.tensor([[3.0], [4.0]]), some=False)
    >>> Q.shape, R.shape
    ((2, 2), (2, 1))
    """
    shape = matrices("qr", input)
    mode = "reduced" if some else "complete"
    return QRResult(*unpack(qr_row(input, mode=mode), qr_shapes(shape, mode)))


def svd(input, some: bool = True, compute_uv: bool = True) -> SVDWithVResult:
    """(U, S, V) with A = U diag(S) Vᵀ, as the older ``torch.svd``: V, not linalg.svd's Vh,
    and ``some=False`` for full U and V. Without ``compute_uv``, U and V are zeros of shapes
    (m, m) and (n, n), as in PyTorch.

    >>> import chainrule as cr
    >>> U, S, V = cr.svd(cr.tensor([[0.0, 2.0], [1.0, 0.0]]))
    >>> S.tolist(), (U @ cr.diag(S) @ V.mT).tolist()
    ([2.0, 1.0], [[0.0, 2.0], [1.0, 0.0]])
    """
    shape = matrices("svd", input)
    full = not some and compute_uv
    u, s, vh = unpack(svd_row(input, full_matrices=full), svd_shapes(shape, full))
    if compute_uv:
        return SVDWithVResult(u, s, vh.mT)
    m, n, batch, dtype = shape[-2], shape[-1], shape[:-2], np.dtype(input.dtype)
    zeros = [Tensor._make(np.zeros(batch + (k, k), dtype)) for k in (m, n)]
    return SVDWithVResult(zeros[0], s, zeros[1])
