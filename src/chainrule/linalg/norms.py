"""Norms: torch.linalg's ``vector_norm``, ``matrix_norm``, ``norm`` and the condition number
``cond``, torch's older ``frobenius_norm``, ``nuclear_norm`` and ``norm_except_dim``, and what
is made of norms: the distances ``dist`` and ``cdist`` and ``renorm``; all composed from the
vector norm row (`chainrule.norm`) and the singular values.
"""

from __future__ import annotations

import math
import numbers

from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..ops import reduce
from ..ops.arguments import as_tensor, check_dim, shape_of
from ..ops.elementwise import abs as abs_
from ..ops.elementwise import where
from ..ops.reduce import amax, amin, norm
from ..ops.shape import movedim, reshape
from .decompositions import svdvals
from .inverses import inv_row
from .matrices import matrices

__all__ = [
    "cdist", "dist", "frobenius_norm", "norm_except_dim", "nuclear_norm", "renorm",
]  # fmt: skip


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
        return reduce.sum((x != 0).to(x.dtype), dim, keepdim)
    if ord > 0 or ord == -math.inf:
        return norm(x, ord, dim, keepdim)
    return reduce.sum(abs_(x) ** ord, dim, keepdim) ** (1 / ord)


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
        return norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(movedim(A, (d0, d1), (-2, -1)))
        out = reduce.sum(s, -1) if ord == "nuc" else (amax if ord == 2 else amin)(s, -1)
    elif ord in (1, -1, math.inf, -math.inf):
        summed, extreme = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = reduce.sum(abs_(A), summed, keepdim=True)
        out = (amax if ord > 0 else amin)(sums, extreme, keepdim=True)
    else:
        raise DomainError(
            f"matrix_norm: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
        )
    if keepdim:
        return reshape(out, kept_shape)
    return reshape(out, tuple(n for i, n in enumerate(shape) if i not in (d0, d1)))


def linalg_norm(A, ord=None, dim=None, keepdim: bool = False, *, dtype=None):
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


# Norms by torch's older names.


def _dims(op: str, shape: tuple, dim) -> tuple:
    dims = (dim,) if isinstance(dim, numbers.Integral) else tuple(dim)
    if any(not -len(shape) <= d < len(shape) for d in dims):
        raise ShapeError(f"{op}: dim {dim!r} is out of range for shape {fmt_shape(shape)}")
    return tuple(d % len(shape) for d in dims)


def frobenius_norm(input, dim, keepdim: bool = False):
    """The 2-norm over the dims ``dim`` (the Frobenius norm of matrices over two dims).

    >>> import chainrule as cr
    >>> cr.frobenius_norm(cr.tensor([[3.0, 0.0], [0.0, 4.0]]), (0, 1)).item()
    5.0
    """
    return norm(input, 2, _dims("frobenius_norm", shape_of(input), dim), keepdim)


def nuclear_norm(input, dim=None, keepdim: bool = False):
    """The sum of the singular values of the matrices over ``dim`` (two dims; the last two
    by default). Also ``nuclear_norm(input, keepdim)``, PyTorch's other overload.

    >>> import chainrule as cr
    >>> cr.nuclear_norm(cr.tensor([[3.0, 0.0], [0.0, -4.0]])).item()
    7.0
    """
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    shape = shape_of(input)
    d0, d1 = (
        _dims("nuclear_norm", shape, (-2, -1) if dim is None else dim) if len(shape) > 1 else (0, 0)
    )
    if d0 == d1:
        raise ShapeError(f"nuclear_norm: needs two different dims of a matrix, got dim {dim!r} "
                         f"for shape {fmt_shape(shape)}")  # fmt: skip
    matrices("nuclear_norm", input)
    out = reduce.sum(svdvals(movedim(input, (d0, d1), (-2, -1))), -1)
    if keepdim:
        return reshape(out, tuple(1 if i in (d0, d1) else n for i, n in enumerate(shape)))
    return out


def norm_except_dim(v, pow=2, dim: int = 0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (what
    weight_norm divides by); ``dim=-1`` takes the norm of every element, a 0-d tensor.

    >>> import chainrule as cr
    >>> cr.norm_except_dim(cr.tensor([[3.0, 1.0], [4.0, 1.0]]), dim=1).tolist()
    [[5.0, 1.4142...]]
    """
    shape = shape_of(v)
    if dim == -1:
        return norm(v, pow)
    (dim,) = _dims("norm_except_dim", shape, dim)
    others = tuple(d for d in range(len(shape)) if d != dim)
    return norm(v, pow, others, True) if others else abs(v)


# Distances: norms of differences.


def _distance(diff, p, dim, op: str):
    """The p-norm of ``diff`` over ``dim``; p = 0 counts the non-zero elements."""
    if not isinstance(p, numbers.Real) or isinstance(p, bool):
        raise DTypeError(f"{op}: p must be a number, got {p!r}")
    if p < 0 and not (op == "dist" and p == -math.inf):  # dist's -inf: the smallest |diff|
        extra = ", inf or -inf" if op == "dist" else " or inf"
        raise DomainError(f"{op}: p must be >= 0{extra}, got {p!r}")
    if p == 0:  # a count: no gradient (PyTorch's is 0)
        return (diff != 0).to(diff.dtype).sum(dim)
    return norm(diff, p, dim)


def dist(x, y, p: float = 2) -> Tensor:
    """The p-norm of x - y over all elements (broadcasting); p = 0 counts where they differ.

    The gradient is 0 where x == y, as PyTorch's; p = 0 has none. p is >= 0, inf or -inf
    (PyTorch also takes other negative p).

    >>> import chainrule as cr
    >>> cr.dist(cr.tensor([1.0, 2.0]), cr.tensor([4.0, 6.0]))
    tensor(5.)
    """
    return _distance(as_tensor(x, "dist") - as_tensor(y, "dist"), p, None, "dist")


def cdist(x1, x2, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M):
    shape (..., P, R), batch dims broadcast.

    Computed directly from the differences (never through matrix products, so
    ``compute_mode`` changes nothing); the gradient is 0 at zero distance, as PyTorch's.

    >>> import chainrule as cr
    >>> cr.cdist(cr.tensor([[0.0, 0.0]]), cr.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    x1, x2 = as_tensor(x1, "cdist"), as_tensor(x2, "cdist")
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(
            f"cdist: needs x1 (..., P, M) and x2 (..., R, M) with the same M, got shapes "
            f"{fmt_shape(x1.shape)} and {fmt_shape(x2.shape)}"
        )
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == math.inf:
        # PyTorch's cdist gives each tied largest |x1 - x2| the whole gradient (norm and dist
        # share it out): the largest, plus the tied ones' differences from it (0 in value).
        size = diff.abs()
        top = size.amax(-1, keepdim=True).detach()
        return top.squeeze(-1) + ((size - top) * (size == top)).sum(-1)
    return _distance(diff, p, -1, "cdist")


# Rescaling slices to a largest norm.


def renorm(input, p: float, dim: int, maxnorm: float) -> Tensor:
    """``input`` with each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down
    to norm ``maxnorm`` (by maxnorm / (norm + 1e-7), as PyTorch, so just under it).

    The gradient is the scaling's, norm included, as PyTorch's.

    >>> import chainrule as cr
    >>> cr.renorm(cr.tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    x = as_tensor(input, "renorm")
    if x.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {fmt_shape(x.shape)}")
    d = check_dim(dim, x.ndim, "renorm")
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not p > 0:
        raise DomainError(f"renorm: p must be a positive number (or inf), got {p!r}")
    if not isinstance(maxnorm, numbers.Real) or not maxnorm >= 0:
        raise DomainError(f"renorm: maxnorm must be >= 0, got {maxnorm!r}")
    norm = x.norm(p, tuple(i for i in range(x.ndim) if i != d), keepdim=True)
    return x * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
