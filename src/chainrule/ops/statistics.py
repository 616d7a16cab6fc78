"""Statistics of a tensor's values: aminmax, count_nonzero, nansum, nanmean, var_mean and
std_mean, cov, corrcoef, quantile and nanquantile.

Most are composed from existing rows (sort, take_along_dim, lerp, matmul...), so their
gradients, forward mode and vmap follow from those rows; only counting (count_nonzero), which
has no gradient, is a row of its own. Differences and integrals
(diff, gradient, trapezoid) are in `chainrule.ops.calculus`, histograms in
`chainrule.ops.histograms`, window functions in `chainrule.ops.windows`.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from .._tensor import Tensor
from ..dtypes import as_dtype, get_default_dtype
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import Op
from .arguments import as_tensor, check_dim
from .elementwise import where
from .numeric import nan_to_zero_row
from .reduce import _dims, amax, amin, batch_reduction, mean, std, var

__all__ = [
    "aminmax", "corrcoef", "count_nonzero", "cov", "nanmean", "nanquantile", "nansum",
    "quantile", "std_mean", "var_mean",
]  # fmt: skip


# fmt: off
count_nonzero_row = Op(
    "count_nonzero", lambda x, dim: np.sum(x != 0, axis=dim).astype(np.int64),
    vjp=None, inputs=("x",), kind="reduction", batch=batch_reduction,
    doc="How many elements over dim are not zero (int64).")
# fmt: on


class MinMax(NamedTuple):
    """What `aminmax` returns, like ``torch.return_types.aminmax``."""

    min: Tensor
    max: Tensor


def aminmax(input, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """(min, max) over one ``dim``, or over every element for None, as a named tuple.

    The gradients are `amin`'s and `amax`'s: tied extremes share them equally.

    >>> import chainrule as cr
    >>> cr.aminmax(cr.tensor([[1.0, 5.0], [4.0, 2.0]]), dim=1)
    MinMax(min=tensor([1., 2.]), max=tensor([5., 4.]))
    """
    x = as_tensor(input, "aminmax")
    if dim is not None:
        if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
            raise DTypeError(f"aminmax: dim must be an int or None, got {dim!r}")
        check_dim(dim, x.ndim, "aminmax")
    dims = _dims(x, dim, "aminmax")
    if 0 in [x.shape[d] for d in dims] or (not dims and x.numel() == 0):
        raise ShapeError(
            f"aminmax: cannot reduce a tensor of shape {fmt_shape(x.shape)} over an empty "
            "dimension: there is no extreme of no elements"
        )
    return MinMax(amin(x, dim, keepdim), amax(x, dim, keepdim))


def count_nonzero(input, dim=None) -> Tensor:
    """How many elements are not zero, over ``dim`` (an int, a tuple, or None for all): int64.

    >>> import chainrule as cr
    >>> cr.count_nonzero(cr.tensor([[0.0, 1.0], [2.0, 3.0]]), dim=1)
    tensor([1, 2])
    """
    x = as_tensor(input, "count_nonzero")
    return count_nonzero_row(x, dim=_dims(x, dim, "count_nonzero"))


def _without_nan(x: Tensor, dtype, op: str) -> Tensor:
    """x (cast to ``dtype``) with NaN read as 0; the gradient there is 0, as PyTorch's."""
    if dtype is not None:
        x = x.to(as_dtype(dtype, op))
    return nan_to_zero_row(x) if x.dtype.kind == "f" else x


def nansum(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum over ``dim`` with NaN taken as 0; the gradient at a NaN is 0.

    >>> import chainrule as cr
    >>> cr.nansum(cr.tensor([1.0, float("nan"), 2.0]))
    tensor(3.)
    """
    x = as_tensor(input, "nansum")
    return _without_nan(x, dtype, "nansum").sum(dim, keepdim)


def nanmean(input, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean over ``dim`` of the elements that are not NaN (NaN where all are, with a NaN
    gradient there, as PyTorch's).

    >>> import chainrule as cr
    >>> cr.nanmean(cr.tensor([[1.0, float("nan")], [2.0, 4.0]]), dim=1)
    tensor([1., 3.])
    """
    x = as_tensor(input, "nanmean")
    if x.dtype.kind != "f":
        raise DTypeError(f"nanmean: needs a floating-point tensor, got {fmt_dtype(x.dtype)}")
    counted = (~x.isnan()).sum(dim, keepdim)
    return nansum(x, dim, keepdim, dtype=dtype) / counted


def _weights(weights, n: int, integral: bool, name: str) -> Tensor:
    w = as_tensor(weights, "cov")
    if w.ndim > 1 or w.numel() != n:
        raise ShapeError(
            f"cov: {name} must be a 1-D tensor of one weight per observation ({n}), got shape "
            f"{fmt_shape(w.shape)}"
        )
    if (w.dtype.kind in "biu") != integral:
        want = "an integer" if integral else "a floating-point"
        raise DTypeError(f"cov: {name} must have {want} dtype, got {fmt_dtype(w.dtype)}")
    if w.numel() and w._array.min() < 0:
        raise DomainError(f"cov: {name} must not be negative, got {w._array.min()}")
    return w.reshape(-1)


def cov(input, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance matrix of the variables in the rows of ``input`` (observations in its
    columns; a 1-D input is one variable, giving a 0-d result).

    ``fweights`` (integers) repeat observations, ``aweights`` (floats) weigh them; with
    N - ``correction`` <= 0 the result is inf or NaN (PyTorch warns). Gradients flow to
    ``input`` and ``aweights``.

    >>> import chainrule as cr
    >>> cr.cov(cr.tensor([[1.0, 2.0, 4.0], [2.0, 1.0, 0.0]]))
    tensor([[ 2.3333, -1.5000],
            [-1.5000,  1.0000]])
    """
    x = as_tensor(input, "cov")
    if x.ndim > 2:
        raise ShapeError(f"cov: input must have at most 2 dimensions, got {fmt_shape(x.shape)}")
    if x.dtype.kind != "f":
        x = x.to(get_default_dtype())
    x = x.reshape(1, -1) if x.ndim < 2 else x
    n = x.shape[1]
    w = None if fweights is None else _weights(fweights, n, True, "fweights")
    if aweights is not None:
        a = _weights(aweights, n, False, "aweights")
        w = a if w is None else w * a
    if w is None:
        total, centered = n, x - x.mean(1, keepdim=True)
        dof = n - correction
    else:
        total = w.sum()
        centered = x - ((x * w).sum(1, keepdim=True) / total)
        dof = total - correction
        if aweights is not None and correction != 0:
            dof = total - correction * (w * a).sum() / total
    dof = where(dof > 0, dof, 0).to(x.dtype) if isinstance(dof, Tensor) else max(dof, 0)
    weighted = centered if w is None else centered * w
    return (weighted @ centered.mT / dof).squeeze()


def corrcoef(input) -> Tensor:
    """Pearson's correlation coefficients of the variables in the rows of ``input``:
    ``cov(input)`` divided by the standard deviations, clipped to [-1, 1].

    >>> import chainrule as cr
    >>> cr.corrcoef(cr.tensor([[1.0, 2.0, 4.0], [2.0, 1.0, 0.0]]))
    tensor([[ 1.0000, -0.9820],
            [-0.9820,  1.0000]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.reshape(-1, 1) / stddev.reshape(1, -1)
    return c.clip(-1.0, 1.0)


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _q_tensor(q, x: Tensor, op: str) -> Tensor:
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ShapeError(f"{op}: q must be a number or a 1-D tensor, got {fmt_shape(q.shape)}")
        if q.dtype != x.dtype:
            raise DTypeError(
                f"{op}: q ({fmt_dtype(q.dtype)}) must have the input's dtype ({fmt_dtype(x.dtype)})"
            )
        values = q._array
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        values = np.asarray(q, x.dtype)
        q = Tensor._make(values)
    else:
        raise DTypeError(f"{op}: q must be a number or a tensor, got {type(q).__name__}")
    if not np.all((values >= 0) & (values <= 1)):
        raise DomainError(f"{op}: q must lie in [0, 1], got {values.tolist()}")
    return q


def _quantile(x, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool, op: str):
    x = as_tensor(x, op)
    if x.dtype.kind != "f":
        raise DTypeError(f"{op}: needs a floating-point tensor, got {fmt_dtype(x.dtype)}")
    if interpolation not in _MODES:
        raise DomainError(f"{op}: interpolation must be one of {', '.join(_MODES)}, got "
                          f"{interpolation!r}")  # fmt: skip
    q = _q_tensor(q, x, op)
    if x.numel() == 0:
        raise ShapeError(f"{op}: the input of shape {fmt_shape(x.shape)} is empty")
    d = None if dim is None else check_dim(dim, x.ndim, op)
    rows = x.reshape(-1) if d is None or x.ndim == 0 else x.movedim(d, -1)
    ranked = rows.sort(-1).values  # NaN last
    n = ranked.shape[-1]
    if q.ndim:  # one result per q, in a new first dim
        ranked = ranked.unsqueeze(0)
    q = q.reshape(tuple(q.shape) + (1,) * rows.ndim)
    if ignore_nan:  # over the values that are not NaN; with none, index 0 (a NaN)
        ranks = q * ((~ranked.isnan()).sum(-1, keepdim=True) - 1)
        ranks = where(ranks < 0, 0.0, ranks)
    else:  # a NaN in the slice: the last value, a NaN
        ranks = where(ranked.isnan().any(-1, keepdim=True), float(n - 1), q * (n - 1))
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}[
            interpolation
        ]()
    below = ranks.long()
    out = ranked.take_along_dim(below, -1)
    if interpolation in ("linear", "midpoint"):
        weight = ranks - below if interpolation == "linear" else 0.5
        out = out.lerp(ranked.take_along_dim(ranks.ceil().long(), -1), weight)
    if not keepdim or (d is not None and x.ndim == 0):
        return out.squeeze(-1)
    if d is None:
        return out.reshape(tuple(out.shape[: out.ndim - rows.ndim]) + (1,) * x.ndim)
    return out.movedim(-1, d + (out.ndim - x.ndim))


def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """The ``q``-th quantiles of ``input`` along ``dim`` (of all elements for None).

    ``q`` is a number or a 1-D tensor of them in [0, 1] (a new first dim, one per q).
    Between two order statistics ``interpolation`` takes the 'linear' blend, the 'lower',
    'higher' or 'nearest' one (ties to even), or the 'midpoint'. A slice with NaN gives NaN.
    The gradient flows to the two order statistics used, weighted as in the blend.

    >>> import chainrule as cr
    >>> x = cr.tensor([4.0, 1.0, 3.0, 2.0])
    >>> cr.quantile(x, 0.5), cr.quantile(x, cr.tensor([0.25, 1.0]), interpolation="lower")
    (tensor(2.5000), tensor([1., 4.]))
    """
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """`quantile` of the elements that are not NaN (NaN where a slice has only NaN).

    >>> import chainrule as cr
    >>> cr.nanquantile(cr.tensor([1.0, float("nan"), 3.0]), 0.5)
    tensor(2.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


# Variances and standard deviations with the mean.


def var_mean(x, dim=None, *, correction=1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """(var, mean) over ``dim``, as `var` and `mean` give them.

    >>> import chainrule as cr
    >>> cr.var_mean(cr.tensor([1.0, 2.0, 4.0]))
    (tensor(2.3333), tensor(2.3333))
    """
    return var(x, dim, correction=correction, keepdim=keepdim), mean(x, dim, keepdim)


def std_mean(x, dim=None, *, correction=1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """(std, mean) over ``dim``, as `std` and `mean` give them.

    >>> import chainrule as cr
    >>> cr.std_mean(cr.tensor([1.0, 3.0]))
    (tensor(1.4142), tensor(2.))
    """
    return std(x, dim, correction=correction, keepdim=keepdim), mean(x, dim, keepdim)
