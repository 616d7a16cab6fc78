"""Matrix decomposition rows with their gradients: inv, solve, det, slogdet, cholesky, qr, svd,
eigh and pinv, each over the last two dims with any leading batch dims.

A decomposition with several outputs (Q and R; U, S and Vh) is one row whose output packs
them, flattened, along its last dim; the public function slices them back out. Their
gradients then reach the row as one packed array, so one VJP sees every output's gradient at
once (the SVD formula needs them together), and higher derivatives follow from the rules'
`xp` calls. Matrix norms, powers and products are composed in `chainrule.linalg`.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op, with_rank

__all__ = ["det", "inverse", "logdet", "matrix_power", "pinverse", "slogdet"]


# Helpers for the rules: each takes arrays or Tensors (a backward with create_graph=True).


def _diag(v):
    """A batch of diagonal matrices from a batch of vectors."""
    return xp.unsqueeze(v, -1) * np.eye(v.shape[-1], dtype=v.dtype)


def _diagonal(a):
    return xp.einsum("...ii->...i", a)


def _tril(a, k: int = 0):
    return xp.where(np.tril(np.ones(a.shape[-2:], dtype=bool), k), a, 0)


def _sym(a):
    return 0.5 * (a + a.mT)


def _reciprocal_or_zero(e):
    """1 / e, and 0 where e == 0: the coupling of two equal eigen- or singular values, which
    a gauge-invariant loss never needs (and the 0 keeps svdvals' gradient finite there)."""
    zero = e == 0
    return xp.where(zero, 0, 1 / xp.where(zero, 1, e))


def _pack(batch: tuple, *parts: np.ndarray) -> np.ndarray:
    """Arrays of one batch shape, each flattened after it and joined along the last dim."""
    return np.concatenate([np.reshape(p, batch + (-1,)) for p in parts], axis=-1)


def unpack(packed, shapes: tuple) -> list:
    """The parts of a packed array or Tensor, of the given shapes after its batch dims."""
    batch, start, parts = tuple(packed.shape[:-1]), 0, []
    for shape in shapes:
        size = math.prod(shape)
        parts.append(xp.reshape(packed[..., start : start + size], batch + tuple(shape)))
        start += size
    return parts


def _solve(a, b):
    return xp.run(solve_row, a, b)


def _inv(a):
    return xp.run(inv_row, a)


def _solve_right(b, r):
    """b @ r⁻¹, as solve(rᵀ, bᵀ)ᵀ."""
    return _solve(r.mT, b.mT).mT


def _side_by_side(a, b):
    """[a | b] along the last dim, as products with constant selection matrices (so that
    arrays and Tensors take one path)."""
    m, n = a.shape[-1], b.shape[-1]
    eye = np.eye(m + n, dtype=a.dtype)
    return a @ eye[:m] + b @ eye[m:]


def _batch_linalg(op: Op, values: list, batched: list, params: dict):
    """Every row here works on the last two dims and broadcasts the rest: give a batched
    operand the rank of one example (size-1 dims after the batch dim) and run it once."""
    rank = max(np.ndim(v) - b for v, b in zip(values, batched))
    return op(*[with_rank(v, rank) if b else v for v, b in zip(values, batched)], **params)


def _lapack(name: str, fn, *arrays, **kwargs):
    """Run a NumPy linalg routine, its failure (a singular matrix...) a DomainError."""
    try:
        return fn(*arrays, **kwargs)
    except np.linalg.LinAlgError as exc:
        shape = fmt_shape(np.shape(arrays[0]))
        raise DomainError(f"{name}: failed for an input of shape {shape}: {exc}") from None


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


# cholesky: A = L Lᵀ. Φ keeps the lower triangle with the diagonal halved.


def _phi(a):
    return _tril(a) - 0.5 * _diag(_diagonal(a))


def _cholesky_vjp(g, out):
    l_inv = _inv(out)
    return _sym(l_inv.mT @ _phi(out.mT @ g) @ l_inv)


def _cholesky_jvp(dx, out):
    l_inv = _inv(out)
    return out @ _phi(l_inv @ _sym(dx) @ l_inv.mT)


cholesky_row = Op(
    "cholesky",
    lambda x: _lapack("cholesky", np.linalg.cholesky, x),
    vjp=(_cholesky_vjp,),
    jvp=(_cholesky_jvp,),
    kind="decomposition",
    batch=_batch_linalg,
    doc="The lower Cholesky factor of each symmetric positive-definite matrix.",
)


# qr: A = QR, packed (Q, R). The gradient for m >= n is Seeger et al.'s; a wide A = [X | Y]
# is the square QR of X with R = [U | V], V = Qᵀ Y.


def qr_shapes(x_shape: tuple, mode: str) -> tuple:
    m, n = x_shape[-2:]
    cols = m if mode == "complete" else min(m, n)
    return (m, cols), (cols, n)


def _qr(x, mode):
    q, r = np.linalg.qr(x, mode=mode)
    return _pack(np.shape(x)[:-2], q, r)


def _copyltu(a):
    """The symmetric matrix with a's lower triangle."""
    return _tril(a) + _tril(a, -1).mT


def _qr_tall_vjp(gq, gr, q, r):
    """The gradient for m >= n: (gQ + Q copyltu(M)) R⁻ᵀ with M = R gRᵀ - gQᵀ Q."""
    return _solve(r, (gq + q @ _copyltu(r @ gr.mT - gq.mT @ q)).mT).mT


def _qr_vjp(g, x, out, mode):
    (gq, gr), (q, r) = (unpack(a, qr_shapes(x.shape, mode)) for a in (g, out))
    m, n = x.shape[-2:]
    k = min(m, n)  # Q's columns past k (mode="complete") get no gradient, as in PyTorch
    gq, q, gr, r = gq[..., :k], q[..., :k], gr[..., :k, :], r[..., :k, :]
    if m >= n:
        return _qr_tall_vjp(gq, gr, q, r)
    y, gv = x[..., m:], gr[..., m:]
    return _side_by_side(_qr_tall_vjp(gq + y @ gv.mT, gr[..., :m], q, r[..., :m]), q @ gv)


def _qr_jvp(dx, x, out, mode):
    q, r = unpack(out, qr_shapes(x.shape, mode))
    m, n = x.shape[-2:]
    k = min(m, n)
    q, r = q[..., :k], r[..., :k, :k]
    da = dx[..., :k]
    c = q.mT @ _solve_right(da, r)
    omega = _tril(c, -1) - _tril(c, -1).mT
    dr = (c - omega) @ r
    dq = _solve_right(da, r) - q @ (c - omega)
    if m < n:  # R = [U | V] with V = Qᵀ Y
        dr = np.concatenate([dr, dq.mT @ x[..., m:] + q.mT @ dx[..., m:]], axis=-1)
    if mode == "complete" and m > n:  # the columns past n have no defined tangent: 0
        dq = np.concatenate([dq, np.zeros(dq.shape[:-1] + (m - n,), dq.dtype)], axis=-1)
        dr = np.concatenate([dr, np.zeros(dr.shape[:-2] + (m - n, n), dr.dtype)], axis=-2)
    return _pack(x.shape[:-2], dq, dr)


qr_row = Op(
    "qr",
    _qr,
    vjp=(_qr_vjp,),
    jvp=(_qr_jvp,),
    kind="decomposition",
    batch=_batch_linalg,
    doc="Q and R of each matrix (mode 'reduced' or 'complete'), packed along the last dim.",
)


# svd: A = U diag(S) Vh, packed (U, S, Vh). F[i, j] = 1 / (S[j]² - S[i]²) couples the
# singular vectors; columns of U and rows of Vh past k = min(m, n) (full_matrices=True) get
# no gradient and no tangent, as in PyTorch.


def svd_shapes(x_shape: tuple, full_matrices: bool) -> tuple:
    m, n = x_shape[-2:]
    k = min(m, n)
    return ((m, m), (k,), (n, n)) if full_matrices else ((m, k), (k,), (k, n))


def _svd(x, full_matrices):
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return _pack(np.shape(x)[:-2], u, s, vh)


def _coupling(values):
    """F[i, j] = 1 / (values[j] - values[i]), 0 where they are equal (the diagonal)."""
    return _reciprocal_or_zero(xp.unsqueeze(values, -2) - xp.unsqueeze(values, -1))


def _svd_vjp(g, x_shape, out, full_matrices):
    shapes = svd_shapes(x_shape, full_matrices)
    (gu, gs, gvh), (u, s, vh) = (unpack(a, shapes) for a in (g, out))
    k = s.shape[-1]
    u, gu, v, gv = u[..., :k], gu[..., :k], vh[..., :k, :].mT, gvh[..., :k, :].mT
    ju, jv = u.mT @ gu, v.mT @ gv
    f, row, col = _coupling(s * s), xp.unsqueeze(s, -2), xp.unsqueeze(s, -1)
    core = f * (ju - ju.mT) * row + col * (f * (jv - jv.mT)) + _diag(gs)
    s_inv = _reciprocal_or_zero(s)
    # The parts of gU and gV outside the spans of U and V (tall or wide A).
    left = ((gu - u @ ju) * xp.unsqueeze(s_inv, -2)) @ v.mT
    right = u @ (xp.unsqueeze(s_inv, -1) * (gv - v @ jv).mT)
    return u @ core @ v.mT + left + right


def _svd_jvp(dx, x, out, full_matrices):
    shapes = svd_shapes(x.shape, full_matrices)
    u, s, vh = unpack(out, shapes)
    k = s.shape[-1]
    u, v = u[..., :k], vh[..., :k, :].mT
    dp = u.mT @ dx @ v
    f, row, col = _coupling(s * s), s[..., None, :], s[..., :, None]
    s_inv = _reciprocal_or_zero(s)
    du = u @ (f * (dp * row + col * dp.mT)) + (dx @ v - u @ dp) * s_inv[..., None, :]
    dv = v @ (f * (col * dp + dp.mT * row)) + (dx.mT @ u - v @ dp.mT) * s_inv[..., None, :]
    m, n = x.shape[-2:]
    if full_matrices:
        du = np.concatenate([du, np.zeros(du.shape[:-1] + (m - k,), du.dtype)], axis=-1)
        dv = np.concatenate([dv, np.zeros(dv.shape[:-1] + (n - k,), dv.dtype)], axis=-1)
    return _pack(x.shape[:-2], du, _diagonal(dp), dv.mT)


svd_row = Op(
    "svd",
    _svd,
    vjp=(_svd_vjp,),
    jvp=(_svd_jvp,),
    kind="decomposition",
    batch=_batch_linalg,
    doc="U, S and Vh of each matrix, packed along the last dim.",
)


# eigh: A = V diag(w) Vᵀ for symmetric A, packed (w, V). The gradient is symmetric (only the
# skew part of Vᵀ gV moves V), as in PyTorch; the tangent uses the symmetric part of dA.


def _eigh(x, UPLO):
    w, v = np.linalg.eigh(x, UPLO=UPLO)
    return _pack(np.shape(x)[:-2], w, v)


def eigh_shapes(x_shape: tuple) -> tuple:
    n = x_shape[-1]
    return (n,), (n, n)


def _eigh_vjp(g, x_shape, out):
    (gw, gv), (w, v) = (unpack(a, eigh_shapes(x_shape)) for a in (g, out))
    j = v.mT @ gv
    return v @ (_coupling(w) * (0.5 * (j - j.mT)) + _diag(gw)) @ v.mT


def _eigh_jvp(dx, x_shape, out):
    w, v = unpack(out, eigh_shapes(x_shape))
    p = v.mT @ _sym(dx) @ v
    return _pack(x_shape[:-2], _diagonal(p), v @ (_coupling(w) * p))


eigh_row = Op(
    "eigh",
    _eigh,
    vjp=(_eigh_vjp,),
    jvp=(_eigh_jvp,),
    kind="decomposition",
    batch=_batch_linalg,
    doc="Eigenvalues (ascending) and eigenvectors of symmetric matrices, packed.",
)


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


def shape_of(x) -> tuple:
    """The shape of a Tensor or array (one example's inside vmap)."""
    return tuple(x.data.shape if isinstance(x, Tensor) else np.shape(x))


def matrices(op: str, x, square: bool = False) -> tuple:
    """The shape of ``x``, checked to be a floating batch of (square) matrices."""
    shape = shape_of(x)
    dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    if np.dtype(dtype).kind != "f":
        raise DTypeError(f"{op}: expects a floating-point tensor, got {fmt_dtype(dtype)}")
    if len(shape) < 2:
        raise ShapeError(
            f"{op}: expects a matrix or a batch of matrices (..., m, n), got shape "
            f"{fmt_shape(shape)}"
        )
    if square and shape[-1] != shape[-2]:
        raise ShapeError(f"{op}: expects square matrices (..., n, n), got shape {fmt_shape(shape)}")
    return shape


def inverse(input):
    """The inverse of each square matrix (``chainrule.linalg.inv``, by PyTorch's older name);
    a singular one is a DomainError.

    >>> import chainrule as cr
    >>> cr.inverse(cr.tensor([[1.0, 1.0], [0.0, 1.0]])).tolist()
    [[1.0, -1.0], [0.0, 1.0]]
    """
    matrices("inverse", input, square=True)
    return inv_row(input)


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


def pinverse(input, rcond: float = 1e-15):
    """The pseudoinverse, dropping singular values at or below ``rcond`` times the largest
    (``chainrule.linalg.pinv`` with rtol=rcond).

    >>> import chainrule as cr
    >>> cr.pinverse(cr.tensor([[0.0, 2.0]])).tolist()
    [[0.0], [0.5]]
    """
    matrices("pinverse", input)
    return pinv_row(input, atol=0.0, rtol=float(rcond))


def matrix_power(A, n: int):
    """A multiplied by itself ``n`` times (by repeated squaring); n = 0 gives the identity,
    n < 0 powers of inv(A).

    >>> import chainrule as cr
    >>> cr.matrix_power(cr.tensor([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise DTypeError(f"matrix_power: n must be an int, got {n!r}")
    shape = shape_of(A)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ShapeError(
            f"matrix_power: expects square matrices (..., n, n), got shape {fmt_shape(shape)}"
        )
    if n == 0:
        eye = np.eye(shape[-1], dtype=np.dtype(A.dtype))
        return Tensor._make(np.broadcast_to(eye, shape).copy())
    if n < 0:
        matrices("matrix_power", A, square=True)
        A, n = inv_row(A), -n
    result = None
    while n:
        if n & 1:
            result = A if result is None else result @ A
        n >>= 1
        if n:
            A = A @ A
    return result
