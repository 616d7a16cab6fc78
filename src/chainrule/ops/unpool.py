"""Max unpooling (the maxima put back where max pooling found them, zeros elsewhere) in 1-3 D,
and fractional max pooling in 2-D and 3-D (windows at pseudo-random, increasing offsets).

Both are composed from rows: unpooling is a `scatter` of the values into zeros, fractional
pooling a gather of every window by an index grid and a max. The regular pools are in
`chainrule.ops.pool` and `chainrule.ops.pool3d`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._tensor import Tensor
from ..creation import zeros
from ..errors import DomainError, OutOfRangeError, ShapeError, fmt_shape
from ..observe import replayed_whole
from ..random import default_generator
from .conv import _batched, _dtype, _ints, _unbatched
from .indexing import index_row
from .reduce import max as max_over
from .scattering import scatter
from .shape import reshape

__all__: list[str] = []


def _unpool(op: str, n: int, input, indices, kernel_size, stride, padding, output_size):
    """max_unpool{n}d: values scattered into zeros at their flat positions per plane."""
    x, batched = _batched(input, op, n)
    index = indices.data if isinstance(indices, Tensor) else np.asarray(indices)
    if index.shape != np.shape(input):
        raise ShapeError(
            f"{op}: indices of shape {fmt_shape(index.shape)} must match the input's "
            f"{fmt_shape(np.shape(input))}"
        )
    if index.dtype.kind not in "iu":
        raise ShapeError(f"{op}: indices must be integers (from max pooling), got {index.dtype}")
    kernel = _ints(kernel_size, n, op, "kernel_size", 1)
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    stride = kernel if no_stride else _ints(stride, n, op, "stride", 1)
    padding = _ints(padding, n, op, "padding", 0)
    sizes = np.shape(x)[2:]
    if output_size is None:
        outs = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(sizes, stride, padding, kernel))
    else:
        wanted = tuple(output_size)
        if len(wanted) not in (n, n + 2, n + 1):
            raise ShapeError(f"{op}: output_size must have {n} sizes, got {output_size!r}")
        outs = _ints(wanted[-n:], n, op, "output_size", 1)
    lead = np.shape(x)[:2]
    flat_index = _flat_index(index, batched, lead, outs, op)
    canvas = zeros(*lead, math.prod(outs), dtype=_dtype(x))
    out = scatter(canvas, 2, flat_index, reshape(x, (*lead, -1)))
    return _unbatched(reshape(out, (*lead, *outs)), batched)


@replayed_whole(pure=True)  # a compiled step checks and reads the new indices at each call
def _flat_index(index: np.ndarray, batched: bool, lead: tuple, outs: tuple, op: str):
    """The checked (N, C, L) int64 positions into each output plane of size ``outs``."""
    plane = math.prod(outs)
    if index.size and (index.min() < 0 or index.max() >= plane):
        bad = int(index.min()) if index.min() < 0 else int(index.max())
        raise OutOfRangeError(
            f"{op}: index {bad} is out of range for an output of size {fmt_shape(outs)} "
            f"({plane} positions per plane)"
        )
    return (index if batched else index[None]).reshape(*lead, -1).astype(np.int64)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of `max_pool1d` with ``return_indices``: each value of an (N, C, L) or
    (C, L) input written at its index of an output of zeros, of length
    (L - 1) * stride - 2 * padding + kernel_size unless ``output_size`` says.

    >>> import chainrule as cr
    >>> max_unpool1d(cr.tensor([[5.0, 4.0]]), cr.tensor([[1, 3]]), 2)
    tensor([[0., 5., 0., 4.]])
    """
    return _unpool("max_unpool1d", 1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of `max_pool2d` with ``return_indices``, over (N, C, H, W) or (C, H, W)
    inputs (see `max_unpool1d`); the indices are flat positions into the output's H*W.

    >>> import chainrule as cr
    >>> max_unpool2d(cr.tensor([[[7.0]]]), cr.tensor([[[2]]]), 2)
    tensor([[[0., 0.],
             [7., 0.]]])
    """
    return _unpool("max_unpool2d", 2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The inverse of `max_pool3d` with ``return_indices``, over (N, C, D, H, W) or
    (C, D, H, W) inputs (see `max_unpool1d`).

    >>> import chainrule as cr
    >>> max_unpool3d(cr.tensor([[[[7.0]]]]), cr.tensor([[[[7]]]]), 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    return _unpool("max_unpool3d", 3, input, indices, kernel_size, stride, padding, output_size)


# Fractional max pooling (Graham, 2014).


def _starts(samples: np.ndarray, size: int, out: int, k: int) -> np.ndarray:
    """PyTorch's window starts along one dim, one row per plane's sample u in [0, 1):
    int((i + u) * alpha) - int(u * alpha) with alpha = (size - k) / (out - 1), computed in
    the samples' dtype as PyTorch does; the last window ends at the edge."""
    starts = np.empty(samples.shape + (out,), np.int64)
    if out > 1:
        alpha = samples.dtype.type(size - k) / samples.dtype.type(out - 1)
        i = np.arange(out - 1, dtype=samples.dtype)
        u = samples[..., None]
        starts[..., :-1] = ((i + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    starts[..., -1] = size - k
    return starts


def _fractional(op: str, n: int, input, kernel_size, output_size, output_ratio,
                return_indices: bool, samples):  # fmt: skip
    x, batched = _batched(input, op, n)
    shape = np.shape(x)
    sizes = shape[2:]
    kernel = _ints(kernel_size, n, op, "kernel_size", 1)
    if output_size is None:
        if output_ratio is None:
            raise DomainError(f"{op}: give output_size or output_ratio")
        ratios = (output_ratio,) * n if not isinstance(output_ratio, Sequence) else output_ratio
        if len(ratios) != n or not all(0 < r < 1 for r in ratios):
            raise DomainError(
                f"{op}: output_ratio must be {n} numbers in (0, 1), got {output_ratio!r}"
            )
        output_size = tuple(int(s * r) for s, r in zip(sizes, ratios))
    outs = _ints(output_size, n, op, "output_size", 1)
    # PyTorch's 3-D pool wants the last window to end before the edge; the 2-D one, at it.
    if any(o + k - 1 > s - (n == 3) for o, k, s in zip(outs, kernel, sizes)):
        raise ShapeError(
            f"{op}: output_size {outs} plus kernel_size {kernel} minus 1 must be "
            f"{'below' if n == 3 else 'at most'} the input's size {fmt_shape(sizes)}"
        )
    if samples is None:
        samples = default_generator().random((shape[0], shape[1], n)).astype(_dtype(x))
    samples = samples.data if isinstance(samples, Tensor) else np.asarray(samples)
    if samples.shape != (shape[0], shape[1], n):
        raise ShapeError(
            f"{op}: _random_samples must have shape {fmt_shape((shape[0], shape[1], n))}, "
            f"(N, C, {n}), got {fmt_shape(samples.shape)}"
        )
    # PyTorch's sample k drives dim k in 3-D (T, H, W) but the 2-D pool reads (W, H).
    order = (1, 0) if n == 2 else tuple(range(n))
    grids = [np.arange(shape[0]).reshape((-1,) + (1,) * (2 * n + 1)),
             np.arange(shape[1]).reshape((1, -1) + (1,) * (2 * n))]  # fmt: skip
    positions = []
    for d in range(n):
        starts = _starts(samples[..., order[d]], sizes[d], outs[d], kernel[d])  # (N, C, out)
        where = starts[..., None] + np.arange(kernel[d])  # (N, C, out, k)
        grid_shape = [shape[0], shape[1]] + [1] * (2 * n)
        grid_shape[2 + d], grid_shape[2 + n + d] = outs[d], kernel[d]
        positions.append(where.reshape(grid_shape))
    windows = index_row(x, index=(*grids, *positions))  # (N, C, *outs, *kernel)
    values, found = max_over(reshape(windows, (*shape[:2], *outs, math.prod(kernel))), -1)
    values = _unbatched(values, batched)
    if not return_indices:
        return values
    offsets = np.unravel_index(found.data, kernel)
    flat = 0
    for d in range(n):
        starts = positions[d][(Ellipsis, *[0] * n)]  # (N, C, 1.., out_d, 1..)
        flat = flat * sizes[d] + starts + offsets[d]
    indices = np.asarray(flat, np.int64)
    return values, Tensor._make(indices if batched else indices[0])


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):  # fmt: skip
    """Max pooling of an (N, C, H, W) or (C, H, W) input over kernel_size windows whose
    starts step by 1 or 2 pseudo-randomly, to ``output_size`` (or input size times
    ``output_ratio``). Each plane's offsets come from its row of ``_random_samples``, shape
    (N, C, 2) in [0, 1) (drawn from `chainrule.default_generator()` when not given;
    PyTorch's numbers differ, so pass the same samples to both to compare).

    >>> import chainrule as cr
    >>> x = cr.arange(16.0).reshape(1, 1, 4, 4)
    >>> fractional_max_pool2d(x, 2, output_size=2, _random_samples=cr.zeros(1, 1, 2))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size,
                       output_ratio, return_indices, _random_samples)  # fmt: skip


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples=None):  # fmt: skip
    """Fractional max pooling of an (N, C, D, H, W) or (C, D, H, W) input (see
    `fractional_max_pool2d`); ``_random_samples`` has shape (N, C, 3).

    >>> import chainrule as cr
    >>> x = cr.arange(8.0).reshape(1, 2, 2, 2)
    >>> fractional_max_pool3d(x, 1, output_size=1, _random_samples=cr.zeros(1, 1, 3))
    tensor([[[[7.]]]])
    """
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size,
                       output_ratio, return_indices, _random_samples)  # fmt: skip


def fractional_max_pool2d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
    _random_samples=None,
):  # fmt: skip
    """`fractional_max_pool2d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> x = cr.arange(4.0).reshape(1, 2, 2)
    >>> fractional_max_pool2d_with_indices(x, 2, 1, _random_samples=cr.zeros(1, 1, 2))[1]
    tensor([[[3]]])
    """
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)  # fmt: skip


def fractional_max_pool3d_with_indices(
    input, kernel_size, output_size=None, output_ratio=None, return_indices: bool = False,
    _random_samples=None,
):  # fmt: skip
    """`fractional_max_pool3d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> x = cr.arange(8.0).reshape(1, 2, 2, 2)
    >>> fractional_max_pool3d_with_indices(x, 1, 1, _random_samples=cr.zeros(1, 1, 3))[1]
    tensor([[[[7]]]])
    """
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)  # fmt: skip
