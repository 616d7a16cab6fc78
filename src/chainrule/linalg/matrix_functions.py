"""Functions of a square matrix: the matrix exponential (``matrix_exp``, a row with its
gradient) and integer powers (``matrix_power``, composed from products and `inv`).
"""

from __future__ import annotations

import numbers

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DTypeError, ShapeError, fmt_shape
from ..op import Op
from ..ops.arguments import shape_of
from .inverses import inv_row
from .matrices import _batch_linalg, matrices

__all__ = ["matrix_exp", "matrix_power"]


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


def matrix_exp(A):
    """The matrix exponential exp(A) = I + A + A²/2! + ... of each square matrix.

    >>> import chainrule as cr
    >>> cr.matrix_exp(cr.tensor([[0.0, 1.0], [0.0, 0.0]])).tolist()
    [[1.0, 1.0], [0.0, 1.0]]
    """
    matrices("matrix_exp", A, square=True)
    return matrix_exp_row(A)


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
