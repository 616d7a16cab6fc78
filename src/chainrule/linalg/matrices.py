"""What the linear-algebra rows share: checking a batch of matrices (`matrices`), several
outputs packed into one array (`unpack`), LAPACK's failures as DomainErrors, the batching rule
of a row over the last two dims, the ``_ex`` variants' way with a matrix that fails, and the
small matrix helpers the rules are written with (each takes arrays or Tensors: a backward with
create_graph=True).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op, with_rank
from ..ops.arguments import shape_of
from ..ops.elementwise import where

# Checks.


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


def _same_dtype(op: str, a, b) -> None:
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise DTypeError(
            f"{op}: A has dtype {fmt_dtype(a.dtype)} but B has {fmt_dtype(b.dtype)}; both must "
            "have one dtype: convert one with .to(dtype)"
        )


# Helpers for the rules: each takes arrays or Tensors (a backward with create_graph=True).


def _diag(v):
    """A batch of diagonal matrices from a batch of vectors."""
    return xp.unsqueeze(v, -1) * np.eye(v.shape[-1], dtype=v.dtype)


def _diagonal(a):
    return xp.einsum("...ii->...i", a)


def _tril(a, k: int = 0):
    return xp.where(np.tril(np.ones(a.shape[-2:], dtype=bool), k), a, 0)


def _triu(a, k: int = 0):
    return xp.where(np.triu(np.ones(a.shape[-2:], dtype=bool), k), a, 0)


def _sym(a):
    return 0.5 * (a + a.mT)


def _reciprocal_or_zero(e):
    """1 / e, and 0 where e == 0: the coupling of two equal eigen- or singular values, which
    a gauge-invariant loss never needs (and the 0 keeps svdvals' gradient finite there)."""
    zero = e == 0
    return xp.where(zero, 0, 1 / xp.where(zero, 1, e))


def _side_by_side(a, b):
    """[a | b] along the last dim, as products with constant selection matrices (so that
    arrays and Tensors take one path)."""
    m, n = a.shape[-1], b.shape[-1]
    eye = np.eye(m + n, dtype=a.dtype)
    return a @ eye[:m] + b @ eye[m:]


def _stacked(a, b):
    """[a; b] along the second-last dim."""
    return _side_by_side(a.mT, b.mT).mT


def _values(a) -> np.ndarray:
    return a._array if isinstance(a, Tensor) else np.asarray(a)


# Rows with several outputs pack them into one array; the public functions unpack them.


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


# The _ex variants: info per matrix instead of an error. A matrix that fails gives nan in
# the result (PyTorch leaves LAPACK's partial work there) and no gradient.


def _failed(op: str, info: np.ndarray, what: Callable[[int], str]) -> None:
    """Raise for the first matrix whose info is not 0, naming its batch element."""
    flat = info.reshape(-1)
    first = int(np.flatnonzero(flat)[0])
    where = f" (batch element {first})" if info.ndim else ""
    raise DomainError(f"{op}: {what(int(flat[first]))}{where}; check_errors=False returns the "
                      "info instead")  # fmt: skip


def _guarded(A, info: np.ndarray, compute: Callable, matrix_dims: int = 2):
    """compute(A), with each failed matrix (info != 0) replaced by the identity before and
    by nan after, so the others keep their values and gradients."""
    if not info.any():
        return compute(A)
    n = A.shape[-1]
    bad = Tensor._make(info.reshape(info.shape + (1, 1)) != 0)
    out = compute(where(bad, Tensor._make(np.eye(n, dtype=np.dtype(A.dtype))), A))
    bad_out = Tensor._make(info.reshape(info.shape + (1,) * matrix_dims) != 0)
    return where(bad_out, math.nan, out)
