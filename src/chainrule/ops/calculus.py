"""Differences and integrals of sampled values: diff, gradient (central differences),
trapezoid (and its alias trapz) and cumulative_trapezoid.

All are composed from slicing (narrow), cat and arithmetic, so gradients flow to the values
and to sample coordinates given as tensors, and vmap batches them.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

from .._tensor import Tensor
from ..dtypes import get_default_dtype
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from .arguments import check_dim, check_dims
from .cumulative import as_tensor
from .shape import cat

__all__ = ["cumulative_trapezoid", "diff", "gradient", "trapezoid", "trapz"]


def _ends(x: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """(x without its last element along ``dim``, x without its first)."""
    n = x.shape[dim]
    return x.narrow(dim, 0, n - 1), x.narrow(dim, 1, n - 1)


def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None) -> Tensor:
    """The ``n``-th forward difference along ``dim``: x[i + 1] - x[i], ``n`` times, after
    joining ``prepend`` and ``append`` (tensors) on either side. Bool tensors give
    x[i + 1] != x[i]. Each difference is one element shorter (empty once none is left).

    >>> import chainrule as cr
    >>> cr.diff(cr.tensor([1.0, 4.0, 9.0, 16.0])), cr.diff(cr.tensor([1.0, 4.0, 9.0]), n=2)
    (tensor([3., 5., 7.]), tensor([2.]))
    """
    x = as_tensor(input, "diff")
    if x.ndim == 0:
        raise ShapeError("diff: needs a tensor of at least one dimension, got a 0-d one")
    if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
        raise DomainError(f"diff: n (the order) must be a non-negative int, got {n!r}")
    d = check_dim(dim, x.ndim, "diff")
    parts = []
    for name, extra in (("prepend", prepend), (None, x), ("append", append)):
        if extra is None:
            continue
        extra = as_tensor(extra, "diff")
        if name and extra.ndim != x.ndim:
            raise ShapeError(
                f"diff: {name} of shape {fmt_shape(extra.shape)} must have the input's "
                f"{x.ndim} dimensions (input shape {fmt_shape(x.shape)})"
            )
        parts.append(extra)
    x = cat(parts, d) if len(parts) > 1 else x
    for _ in range(n):
        if x.shape[d] == 0:
            break
        before, after = _ends(x, d)
        x = after.logical_xor(before) if x.dtype.kind == "b" else after - before
    return x


def _spacings(spacing, dims: tuple[int, ...], x: Tensor) -> list:
    """One spacing per dim: a number (uniform samples) or a 1-D tensor of coordinates."""
    if isinstance(spacing, numbers.Real) and not isinstance(spacing, bool):
        return [spacing] * len(dims)
    if isinstance(spacing, Tensor) or not isinstance(spacing, Sequence):
        raise DTypeError(
            "gradient: spacing must be a number or a list of numbers or 1-D coordinate "
            f"tensors, got {type(spacing).__name__}"
        )
    if len(spacing) != len(dims):
        raise ShapeError(
            f"gradient: spacing has {len(spacing)} entries for {len(dims)} dims; give one "
            "per dim (or a single number)"
        )
    out = []
    for h, d in zip(spacing, dims):
        if isinstance(h, Tensor):
            if h.ndim != 1 or h.shape[0] != x.shape[d]:
                raise ShapeError(
                    f"gradient: coordinates for dim {d} must be 1-D with {x.shape[d]} "
                    f"values (the size of that dim), got shape {fmt_shape(h.shape)}"
                )
        elif not isinstance(h, numbers.Real) or isinstance(h, bool):
            raise DTypeError(f"gradient: a spacing must be a number or a tensor, got {h!r}")
        out.append(h)
    return out


def _along(v: Tensor, dim: int, ndim: int) -> Tensor:
    """A 1-D ``v`` shaped to broadcast along ``dim`` of a tensor of ``ndim`` dims."""
    return v.reshape(tuple(-1 if i == dim else 1 for i in range(ndim)))


def _derivative(f: Tensor, h, dim: int, edge_order: int) -> Tensor:
    """Second-order central differences inside, one-sided ones of ``edge_order`` at the ends."""
    n = f.shape[dim]

    def at(start: int, length: int = 1) -> Tensor:
        return f.narrow(dim, start % n, length)

    if not isinstance(h, Tensor):
        inner = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first, last = (at(1) - at(0)) / h, (at(-1) - at(-2)) / h
        else:
            first = (-1.5 * at(0) + 2 * at(1) - 0.5 * at(2)) / h
            last = (0.5 * at(-3) - 2 * at(-2) + 1.5 * at(-1)) / h
        return cat([first, inner, last], dim)
    # Uneven steps: the exact derivative of the parabola through each three neighbours.
    steps = h[1:] - h[:-1]
    left, right = steps[:-1], steps[1:]
    a = _along(-right / (left * (left + right)), dim, f.ndim)
    b = _along((right - left) / (left * right), dim, f.ndim)
    c = _along(left / (right * (left + right)), dim, f.ndim)
    inner = a * at(0, n - 2) + b * at(1, n - 2) + c * at(2, n - 2)
    if edge_order == 1:
        first, last = (at(1) - at(0)) / steps[0], (at(-1) - at(-2)) / steps[-1]
    else:
        h0, h1 = steps[0], steps[1]
        first = (-(2 * h0 + h1) / (h0 * (h0 + h1)) * at(0) + (h0 + h1) / (h0 * h1) * at(1)
                 - h0 / (h1 * (h0 + h1)) * at(2))  # fmt: skip
        h0, h1 = steps[-1], steps[-2]
        last = (h0 / (h1 * (h0 + h1)) * at(-3) - (h0 + h1) / (h0 * h1) * at(-2)
                + (2 * h0 + h1) / (h0 * (h0 + h1)) * at(-1))  # fmt: skip
    return cat([first, inner, last], dim)


def gradient(input, *, spacing=1, dim=None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """Estimates of the derivative of ``input`` along each of ``dim`` (an int, a list, or
    None for every dim), one tensor per dim in a tuple, as NumPy's and PyTorch's gradient.

    Inside, central differences (second-order accurate, also for uneven samples); at the
    ends, one-sided differences of ``edge_order`` 1 or 2. ``spacing`` is the distance
    between samples (a number for all dims or a list, one per dim) or, per dim, a 1-D tensor
    of the sample coordinates. Each dim needs at least ``edge_order`` + 1 samples.

    >>> import chainrule as cr
    >>> cr.gradient(cr.tensor([1.0, 4.0, 9.0, 16.0]), spacing=2.0)
    (tensor([1.5000, 2.0000, 3.0000, 3.5000]),)
    """
    x = as_tensor(input, "gradient")
    if x.dtype.kind != "f":
        x = x.to(get_default_dtype())
    if edge_order not in (1, 2) or isinstance(edge_order, bool):
        raise DomainError(f"gradient: edge_order must be 1 or 2, got {edge_order!r}")
    if x.ndim == 0:
        raise ShapeError("gradient: needs a tensor of at least one dimension, got a 0-d one")
    dims = tuple(range(x.ndim)) if dim is None else check_dims(dim, x.ndim, "gradient")
    spacings = _spacings(spacing, dims, x)
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise ShapeError(
                f"gradient: dim {d} of the tensor of shape {fmt_shape(x.shape)} has "
                f"{x.shape[d]} samples; edge_order={edge_order} needs at least {edge_order + 1}"
            )
    return tuple(_derivative(x, h, d, edge_order) for h, d in zip(spacings, dims))


def _steps(y: Tensor, x, dx, dim: int, op: str):
    """The widths between samples along ``dim``: a number, or a tensor broadcasting with y."""
    if x is not None and dx is not None:
        raise DTypeError(f"{op}: give x (sample points) or dx (their spacing), not both")
    if x is None:
        dx = 1 if dx is None else dx
        if not isinstance(dx, numbers.Real) or isinstance(dx, bool):
            raise DTypeError(f"{op}: dx must be a number, got {dx!r}")
        return dx
    x = as_tensor(x, op)
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise ShapeError(
                f"{op}: x has {x.shape[0]} points but y has {y.shape[dim]} samples along "
                f"dim {dim} (shape {fmt_shape(y.shape)}); give one x per sample"
            )
        return _along(diff(x), dim, y.ndim)
    return diff(x, dim=dim - y.ndim)


def _check_y(y, dim, op: str) -> tuple[Tensor, int]:
    y = as_tensor(y, op)
    if y.ndim == 0:
        raise ShapeError(f"{op}: needs y of at least one dimension, got a 0-d tensor")
    return y, check_dim(dim, y.ndim, op)


def trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of samples ``y`` along ``dim`` by the trapezoid rule, at points ``x``
    (a 1-D tensor, or one broadcasting with y) or ``dx`` apart (default 1).

    >>> import chainrule as cr
    >>> cr.trapezoid(cr.tensor([1.0, 2.0, 3.0])), cr.trapezoid(cr.tensor([1.0, 2.0, 3.0]), dx=2.0)
    (tensor(4.), tensor(8.))
    """
    y, d = _check_y(y, dim, "trapezoid")
    h = _steps(y, x, dx, d, "trapezoid")
    if y.shape[d] == 0:
        return y.sum(d) * 0
    left, right = _ends(y, d)
    if isinstance(h, Tensor):
        return ((left + right) * h).sum(d) / 2
    # The sum minus half the two ends: one pass over y, as PyTorch computes it.
    return (y.sum(d) - (y.narrow(d, 0, 1) + y.narrow(d, -1 % y.shape[d], 1)).squeeze(d) / 2) * h


def trapz(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """`trapezoid` by its older name (PyTorch's alias).

    >>> import chainrule as cr
    >>> cr.trapz(cr.tensor([1.0, 2.0, 3.0]), cr.tensor([0.0, 1.0, 3.0]))
    tensor(6.5000)
    """
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running integral of ``y`` along ``dim`` by the trapezoid rule: one value per
    interval (one fewer than the samples), at points ``x`` or ``dx`` apart (default 1).

    >>> import chainrule as cr
    >>> cr.cumulative_trapezoid(cr.tensor([1.0, 2.0, 3.0]))
    tensor([1.5000, 4.0000])
    """
    y, d = _check_y(y, dim, "cumulative_trapezoid")
    h = _steps(y, x, dx, d, "cumulative_trapezoid")
    if y.shape[d] == 0:
        return y
    left, right = _ends(y, d)
    return ((left + right) * h).cumsum(d) / 2
