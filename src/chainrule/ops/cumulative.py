"""Cumulative rows: running sums, products, maxima, minima and log-sum-exps along one dim.
cummax and cummin find their indices with a row of no gradient, then read x there with a
`picker` row (`chainrule.ops.picking`).

Rows receive ``dim`` as a non-negative int on an input of at least one dimension: the public
functions check it and run a 0-d input as a vector of one element.
"""

from __future__ import annotations

import math

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..dtypes import as_dtype, int64
from ..errors import DTypeError, fmt_dtype
from ..op import LINEAR, Op
from .arguments import as_tensor, check_dim
from .picking import batch_along, picker
from .reduce import ValuesIndices

__all__ = ["cummax", "cummin", "cumprod", "cumsum", "logcumsumexp"]


# Cumulative sums and products.


def _reverse_cumsum(g, dim: int):
    """sum over j >= i of g_j along ``dim``: the VJP of cumsum (arrays or Tensors)."""
    if isinstance(g, Tensor):
        return xp.flip(cumsum_row(xp.flip(g, dim), dim=dim), dim)
    return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)


def _zeros_of_cumprod(x, dim: int):
    """Where each slice of x is before its first zero, and where that zero is."""
    x = x._array if isinstance(x, Tensor) else x
    zero = x == 0
    seen = np.cumsum(zero, axis=dim)
    return seen == 0, zero & (seen == 1)


def _later(n: int) -> np.ndarray:
    """Bool (n, n), True at (i, j) where j >= i: the outputs that input i reaches."""
    return np.triu(np.ones((n, n), dtype=bool))


def _cumprod_vjp(g, x, out, dim: int):
    # grad_i = sum over j >= i of g_j * prod(x_k for k <= j, k != i).
    if isinstance(g, Tensor) or isinstance(x, Tensor):
        # Recorded for a second derivative: each i's products with x_i replaced by 1, an n x n
        # grid per slice, exact where x has zeros (no division, so nothing to special-case).
        xs, gs = xp.transpose(x, dim, -1), xp.transpose(g, dim, -1)
        n, last = np.shape(xs)[-1], np.ndim(xs)
        others = cumprod_row(xp.where(np.eye(n, dtype=bool), 1, xp.unsqueeze(xs, -2)), dim=last)
        later = xp.where(_later(n), others, 0)
        return xp.transpose(xp.sum(later * xp.unsqueeze(gs, -2), -1), dim, -1)
    # Before a slice's first zero, sum_j g_j out_j / x_i (out_j is 0 from that zero on). At the
    # first zero, the products with that zero taken as 1; after it, 0 (each product has it).
    before, first = _zeros_of_cumprod(x, dim)
    with np.errstate(divide="ignore", invalid="ignore"):
        grad = _reverse_cumsum(g * out, dim) / np.where(before, x, 1)
    if not first.any():
        return grad
    skipped = np.cumprod(np.where(first, 1, x), axis=dim)
    return np.where(before, grad, np.where(first, _reverse_cumsum(g * skipped, dim), 0))


def _cumprod_jvp(dx, x, out, dim: int):
    # d out_j = sum over i <= j of dx_i * prod(x_k for k <= j, k != i): out_j * sum(dx_i / x_i)
    # before the first zero; from it on only its own term is left (the others contain it).
    before, first = _zeros_of_cumprod(x, dim)
    with np.errstate(divide="ignore", invalid="ignore"):
        tangent = out * np.cumsum(dx / np.where(before, x, 1), axis=dim)
    if not first.any():
        return tangent
    skipped = np.cumprod(np.where(first, 1, x), axis=dim)
    at_zero = np.sum(np.where(first, dx, 0), axis=dim, keepdims=True)
    return np.where(before, tangent, at_zero * skipped)


# Log-cumsum-exp: d out_j / d x_i = exp(x_i - out_j) for i <= j, at most 1 since out_j >= x_i.


def _split_log(v):
    """log(v+) and log(v-): the logs of v's positive and negative parts (-inf where none)."""
    with np.errstate(divide="ignore"):
        return np.log(np.where(v > 0, v, 0)), np.log(np.where(v < 0, -v, 0))


def _logcumsumexp_weights(x, out, dim: int):
    """exp(x_i - out_j) on an n x n grid per slice (i, j), 0 where not j >= i (Tensors)."""
    xs, outs = xp.transpose(x, dim, -1), xp.transpose(out, dim, -1)
    gaps = xp.unsqueeze(xs, -1) - xp.unsqueeze(outs, -2)
    return xp.exp(xp.where(_later(np.shape(xs)[-1]), gaps, -math.inf))


def _logcumsumexp_vjp(g, x, out, dim: int):
    if isinstance(g, Tensor) or isinstance(x, Tensor):  # recorded: the n x n form
        weights = _logcumsumexp_weights(x, out, dim)
        summed = xp.sum(weights * xp.unsqueeze(xp.transpose(g, dim, -1), -2), -1)
        return xp.transpose(summed, dim, -1)
    # sum over j >= i of g_j exp(x_i - out_j), as exp(x_i + log sum exp(log g_j - out_j)) for
    # g's positive and negative parts, so no exponent can overflow.
    parts = []
    for log_part in _split_log(g):
        with np.errstate(invalid="ignore"):
            tail = np.flip(np.logaddexp.accumulate(np.flip(log_part - out, dim), axis=dim), dim)
            parts.append(np.exp(x + tail))
    return np.where(x == -math.inf, 0, parts[0] - parts[1])


def _logcumsumexp_jvp(dx, x, out, dim: int):
    # sum over i <= j of exp(x_i - out_j) dx_i, split by sign as the VJP is.
    parts = []
    for log_part in _split_log(dx):
        with np.errstate(invalid="ignore"):
            parts.append(np.exp(np.logaddexp.accumulate(x + log_part, axis=dim) - out))
    return np.where(out == -math.inf, 0, parts[0] - parts[1])


def _extreme_indices(x, dim: int, accumulate: np.ufunc):
    """The index of each running extreme: the latest position that ties it, or that holds a
    NaN (which then stays the extreme), as PyTorch's cummax and cummin."""
    hit = x == accumulate.accumulate(x, axis=dim)
    if x.dtype.kind in "fc":
        hit |= np.isnan(x)
    positions = np.arange(x.shape[dim]).reshape([-1 if d == dim else 1 for d in range(x.ndim)])
    return np.maximum.accumulate(np.where(hit, positions, 0), axis=dim).astype(np.int64)


# fmt: off
cumsum_row = Op("cumsum", lambda x, dim: np.cumsum(x, axis=dim),
                vjp=(lambda g, dim: _reverse_cumsum(g, dim),), jvp=LINEAR, kind="reduction",
                batch=batch_along, doc="Running sums along dim.")
cumprod_row = Op("cumprod", lambda x, dim: np.cumprod(x, axis=dim),
                 vjp=(lambda g, x, out, dim: _cumprod_vjp(g, x, out, dim),),
                 jvp=(lambda dx, x, out, dim: _cumprod_jvp(dx, x, out, dim),), kind="reduction",
                 batch=batch_along, doc="Running products along dim; exact gradients at zeros.")
# np.logaddexp.accumulate adds one term at a time as log(e^a + e^b), exact and never overflowing.
logcumsumexp_row = Op("logcumsumexp", lambda x, dim: np.logaddexp.accumulate(x, axis=dim),
                      vjp=(lambda g, x, out, dim: _logcumsumexp_vjp(g, x, out, dim),),
                      jvp=(lambda dx, x, out, dim: _logcumsumexp_jvp(dx, x, out, dim),),
                      kind="reduction", batch=batch_along,
                      doc="log(cumsum(exp(x))) along dim, without overflow.")
cummax_indices_row = Op("cummax_indices", lambda x, dim: _extreme_indices(x, dim, np.maximum),
                        vjp=None, inputs=("x",), kind="reduction", batch=batch_along,
                        doc="The index (int64) of each running maximum along dim.")
cummin_indices_row = Op("cummin_indices", lambda x, dim: _extreme_indices(x, dim, np.minimum),
                        vjp=None, inputs=("x",), kind="reduction", batch=batch_along,
                        doc="The index (int64) of each running minimum along dim.")
cummax_row = picker("cummax", doc="cummax(x, dim).values: x at the running maxima's indices.")
cummin_row = picker("cummin", doc="cummin(x, dim).values: x at the running minima's indices.")
# fmt: on


# Public functions.


def _scan(row: Op, x, dim, op: str, dtype=None):
    x = as_tensor(x, op)
    d = check_dim(dim, x.ndim, op)
    if dtype is not None:
        x = x.to(as_dtype(dtype, op))
    elif x.dtype.kind in "biu":  # integers add up in int64, as in PyTorch
        x = x.to(int64)
    if x.ndim == 0:
        return row(x.reshape(1), dim=0).reshape(())
    return row(x, dim=d)


def cumsum(x, dim: int, *, dtype=None) -> Tensor:
    """Running sums along ``dim``: ``out[i] = x[0] + ... + x[i]``.

    ``dtype`` casts x first; integer and bool inputs add up in int64, as in PyTorch.

    >>> import chainrule as cr
    >>> cr.cumsum(cr.tensor([1.0, 2.0, 3.0]), 0)
    tensor([1., 3., 6.])
    """
    return _scan(cumsum_row, x, dim, "cumsum", dtype)


def cumprod(x, dim: int, *, dtype=None) -> Tensor:
    """Running products along ``dim``: ``out[i] = x[0] * ... * x[i]``.

    The gradient is exact where x has zeros (only the first zero of a slice and the elements
    before it get one), as PyTorch's.

    >>> import chainrule as cr
    >>> x = cr.tensor([2.0, 0.0, 3.0], requires_grad=True)
    >>> cr.cumprod(x, 0).sum().backward()
    >>> x.grad
    tensor([1., 8., 0.])
    """
    return _scan(cumprod_row, x, dim, "cumprod", dtype)


def logcumsumexp(x, dim: int) -> Tensor:
    """Running log(sum(exp(x))) along ``dim``, finite for inputs like ±1000.

    >>> import chainrule as cr
    >>> cr.logcumsumexp(cr.tensor([1000.0, 1000.0]), 0)
    tensor([1000.0000, 1000.6932])
    """
    x = as_tensor(x, "logcumsumexp")
    if x.dtype.kind != "f":
        raise DTypeError(
            f"logcumsumexp: needs a floating-point tensor, got {fmt_dtype(x.dtype)}; "
            "convert with .float() or .double()"
        )
    return _scan(logcumsumexp_row, x, dim, "logcumsumexp")


def _extremes(indices_row: Op, row: Op, x, dim, op: str) -> ValuesIndices:
    x = as_tensor(x, op)
    d = check_dim(dim, x.ndim, op)
    flat = x.reshape(1) if x.ndim == 0 else x
    indices = indices_row(flat, dim=d)
    values = row(flat, indices, dim=d)
    if x.ndim == 0:
        return ValuesIndices(values.reshape(()), indices.reshape(()))
    return ValuesIndices(values, indices)


def cummax(x, dim: int) -> ValuesIndices:
    """(values, indices) of the running maximum along ``dim``.

    At a tie the later index is taken, and a NaN stays the maximum from where it appears,
    as in PyTorch; the gradient goes to the element at each index.

    >>> import chainrule as cr
    >>> cr.cummax(cr.tensor([1.0, 3.0, 2.0, 3.0]), 0)
    ValuesIndices(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 1, 3]))
    """
    return _extremes(cummax_indices_row, cummax_row, x, dim, "cummax")


def cummin(x, dim: int) -> ValuesIndices:
    """(values, indices) of the running minimum along ``dim`` (ties: the later index).

    >>> import chainrule as cr
    >>> cr.cummin(cr.tensor([3.0, 1.0, 2.0]), 0).indices
    tensor([0, 1, 1])
    """
    return _extremes(cummin_indices_row, cummin_row, x, dim, "cummin")
