"""Decompositions with their gradients: Cholesky, QR, SVD and eigh, by torch.linalg's names
(``cholesky``, ``cholesky_ex``, ``qr``, ``svd``, ``svdvals``, ``eigh``, ``eigvalsh``) and torch's
older ones (``cholesky``, ``qr(some)``, ``svd(some)`` with V), and the Householder product of
QR's packed reflectors (``householder_product``, ``orgqr``). LU is in
`chainrule.linalg.lu_factorization`.

A decomposition with several outputs (Q and R; U, S and Vh) is one row whose output packs
them, flattened, along its last dim; the public function slices them back out. Their
gradients then reach the row as one packed array, so one VJP sees every output's gradient at
once (the SVD formula needs them together), and higher derivatives follow from the rules'
`xp` calls.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from ..op import Op
from ..ops.arguments import shape_of
from .inverses import _inv, _solve, _solve_right
from .matrices import (
    _batch_linalg,
    _diag,
    _diagonal,
    _failed,
    _guarded,
    _lapack,
    _pack,
    _reciprocal_or_zero,
    _same_dtype,
    _side_by_side,
    _sym,
    _tril,
    matrices,
    unpack,
)

__all__ = ["cholesky", "orgqr", "qr", "svd"]


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


# Public functions: torch.linalg's spellings, then torch's older ones.


class QRResult(NamedTuple):
    """What ``qr`` returns, like ``torch.return_types.qr`` (and ``linalg_qr``)."""

    Q: Tensor
    R: Tensor


class SVDResult(NamedTuple):
    """What ``svd`` returns, like ``torch.return_types.linalg_svd``."""

    U: Tensor
    S: Tensor
    Vh: Tensor


class SVDWithVResult(NamedTuple):
    """What ``torch.svd`` returns: A = U diag(S) Vᵀ (V, not linalg.svd's Vh)."""

    U: Tensor
    S: Tensor
    V: Tensor


class EighResult(NamedTuple):
    """What ``eigh`` returns, like ``torch.return_types.linalg_eigh``."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class CholeskyExResult(NamedTuple):
    """What ``cholesky_ex`` returns, like ``torch.return_types.linalg_cholesky_ex``."""

    L: Tensor
    info: Tensor


def linalg_cholesky(A, *, upper: bool = False):
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


def linalg_qr(A, mode: str = "reduced") -> QRResult:
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


def linalg_svd(A, full_matrices: bool = True) -> SVDResult:
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
    return linalg_svd(A, full_matrices=False).S


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
