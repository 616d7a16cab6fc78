"""Pooling in any number of spatial dims: 3-D max, average and adaptive pooling, Lp pooling in
1-3 D, and the ``*_with_indices`` spellings of max pooling.

The windows come from `Tensor.unfold`'s strided view (the ``windows`` row), once per spatial
dim, so every function here is composed from rows and differentiates again. The tuned 1-D and
2-D pools are in `chainrule.ops.pool`; unpooling and fractional pooling in
`chainrule.ops.unpool`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .._tensor import Tensor
from ..errors import DomainError, ShapeError
from ..observe import replayed_whole
from .conv import _batched, _dtype, _ints, _unbatched
from .elementwise import abs as abs_
from .elementwise import relu, sign
from .indexing import getitem, index_row
from .linalg import matmul
from .padding import pad
from .pool import (
    _adaptive_positions,
    _adaptive_weights,
    _check_float,
    _lowest,
    _pool_sizes,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .reduce import max as max_over
from .reduce import sum as sum_over
from .shape import reshape
from .strided import windows_row

__all__ = ["max_pool3d", "max_pool1d_with_indices"]


def window_args(op: str, n: int, kernel_size, stride, padding, dilation=1) -> tuple:
    """kernel, stride (the kernel when None or empty), padding and dilation as n ints each;
    padding at most half the kernel, so that every window overlaps the input."""
    kernel = _ints(kernel_size, n, op, "kernel_size", 1)
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    stride = kernel if no_stride else _ints(stride, n, op, "stride", 1)
    padding = _ints(padding, n, op, "padding", 0)
    dilation = _ints(dilation, n, op, "dilation", 1)
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise DomainError(
            f"{op}: padding {padding} must be at most half of kernel_size {kernel}, so that "
            "every window overlaps the input"
        )
    return kernel, stride, padding, dilation


def windows_nd(x, kernel: tuple, stride: tuple, dilation: tuple):
    """(N, C, *outs, K): every (dilated) window of an (N, C, *sizes) tensor, its K elements
    in row-major order; one strided view per spatial dim, then a copy."""
    for d, (k, s, dil) in enumerate(zip(kernel, stride, dilation)):
        x = windows_row(x, dim=2 + d, size=dil * (k - 1) + 1, step=s)
    if any(dil != 1 for dil in dilation):
        x = getitem(x, (Ellipsis, *(slice(None, None, dil) for dil in dilation)))
    n = len(kernel)
    return reshape(x, (*x.shape[: 2 + n], math.prod(kernel)))


def _padded(x, padding: tuple, extras: tuple, value):
    """x padded by ``padding`` before and ``padding + extras`` after each spatial dim."""
    amounts = [a for p, e in zip(reversed(padding), reversed(extras)) for a in (p, p + e)]
    return pad(x, amounts, value=value) if any(amounts) else x


def max_pool_nd(op, x, batched, kernel, stride, padding, dilation, ceil_mode, return_indices):
    """Max pooling of a checked (N, C, *sizes) input; ``batched`` False drops N at the end.
    Ties: the first maximum of a window, row-major, takes the gradient (as PyTorch on CPU)."""
    sizes = tuple(np.shape(x)[2:])
    outs, extras = _pool_sizes(op, sizes, kernel, stride, padding, dilation, ceil_mode)
    x = _padded(x, padding, extras, _lowest(_dtype(x)))
    values, positions = max_over(windows_nd(x, kernel, stride, dilation), -1)
    values = _unbatched(values, batched)
    if not return_indices:
        return values
    indices = _input_indices(positions, kernel, outs, sizes, stride, padding, dilation, batched)
    return values, Tensor._make(indices)


@replayed_whole(pure=True)  # a compiled step works the indices out from the new positions
def _input_indices(positions: Tensor, kernel, outs, sizes, stride, padding, dilation, batched):
    """The flat input positions (into each plane of ``sizes``) of the window positions
    ``positions`` (flat into ``kernel``) the maxima were found at; ``batched`` False drops N."""
    # Offset o of output i along a dim is input position i*stride - padding + o*dilation.
    offsets = np.unravel_index(positions.data, kernel)
    n, flat = len(kernel), 0
    for d in range(n):
        start = np.arange(outs[d]).reshape([-1 if e == d else 1 for e in range(n)])
        flat = flat * sizes[d] + start * stride[d] - padding[d] + offsets[d] * dilation[d]
    indices = np.asarray(flat, np.int64)
    return indices if batched else indices[0]


def max_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """The maximum of each (dilated) window of an (N, C, D, H, W) or (C, D, H, W) input; the
    arguments, ties and ``return_indices`` (flat positions into D*H*W) are as in `max_pool2d`.

    >>> import chainrule as cr
    >>> max_pool3d(cr.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    op = "max_pool3d"
    x, batched = _batched(input, op, 3)
    args = window_args(op, 3, kernel_size, stride, padding, dilation)
    return max_pool_nd(op, x, batched, *args, ceil_mode, return_indices)


def _divisors(sizes, kernel, stride, padding, outs, count_include_pad: bool) -> np.ndarray:
    """The divisor of each output of average pooling, as PyTorch: the window clipped to the
    padded input (count_include_pad), or to the input itself; a product over the dims."""
    total = np.ones(())
    for d, (n, k, s, p, out) in enumerate(zip(sizes, kernel, stride, padding, outs)):
        start = np.arange(out) * s - p
        end = np.minimum(start + k, n + p)
        count = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
        total = total[..., None] * count if d else count
    return total


def avg_pool_nd(op, x, batched, kernel, stride, padding, ceil_mode, count_include_pad,
                divisor_override):  # fmt: skip
    """Average pooling of a checked (N, C, *sizes) input."""
    _check_float(x, op)
    if divisor_override is not None and (
        not isinstance(divisor_override, int) or divisor_override == 0
    ):
        raise DomainError(f"{op}: divisor_override must be a nonzero int, got {divisor_override!r}")
    sizes, ones = tuple(np.shape(x)[2:]), (1,) * len(kernel)
    outs, extras = _pool_sizes(op, sizes, kernel, stride, padding, ones, ceil_mode)
    sums = sum_over(windows_nd(_padded(x, padding, extras, 0), kernel, stride, ones), -1)
    if divisor_override is not None:
        divisors = np.asarray(divisor_override, _dtype(x))
    else:
        divisors = _divisors(sizes, kernel, stride, padding, outs, count_include_pad)
    return _unbatched(sums / divisors.astype(_dtype(x)), batched)


def avg_pool3d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
):
    """The mean of each window of an (N, C, D, H, W) or (C, D, H, W) input; the arguments
    and divisors are as in `avg_pool2d`.

    >>> import chainrule as cr
    >>> avg_pool3d(cr.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[3.5000]]]])
    """
    op = "avg_pool3d"
    x, batched = _batched(input, op, 3)
    kernel, stride, padding, _ = window_args(op, 3, kernel_size, stride, padding)
    return avg_pool_nd(op, x, batched, kernel, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)  # fmt: skip


def _output_sizes(op: str, input, output_size, n: int) -> tuple[int, ...]:
    """An adaptive pool's ``output_size`` (an int, or n entries where None keeps a size)."""
    sizes = np.shape(input)[-n:]
    wanted = (output_size,) * n if not isinstance(output_size, Sequence) else output_size
    if len(wanted) != n:
        raise ShapeError(f"{op}: output_size must be an int or {n} sizes, got {output_size!r}")
    wanted = tuple(size if w is None else w for size, w in zip(sizes, wanted))
    return _ints(wanted, n, op, "output_size", 1)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of an (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` (an
    int or a triple; None keeps that size) with PyTorch's windows (see
    `adaptive_avg_pool2d`): three matmuls with constant averaging matrices.

    >>> import chainrule as cr
    >>> adaptive_avg_pool3d(cr.arange(8.0).reshape(1, 2, 2, 2), (1, 1, 2))
    tensor([[[[3., 4.]]]])
    """
    op = "adaptive_avg_pool3d"
    _batched(input, op, 3)
    _check_float(input, op)
    od, oh, ow = _output_sizes(op, input, output_size, 3)
    shape, dtype = np.shape(input), _dtype(input)
    d, h, w = shape[-3:]
    planes = matmul(
        matmul(_adaptive_weights(h, oh, dtype), input), _adaptive_weights(w, ow, dtype).T
    )
    planes = reshape(planes, (*shape[:-3], d, oh * ow))
    out = matmul(_adaptive_weights(d, od, dtype), planes)
    return reshape(out, (*shape[:-3], od, oh, ow))


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max pooling of an (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` (an int or
    a triple; None keeps that size) with PyTorch's windows; the first maximum of a window,
    row-major, takes the gradient. ``return_indices`` also gives flat positions into D*H*W.

    >>> import chainrule as cr
    >>> adaptive_max_pool3d(cr.arange(8.0).reshape(1, 2, 2, 2), (1, 2, 1))
    tensor([[[[5.],
              [7.]]]])
    """
    op = "adaptive_max_pool3d"
    _batched(input, op, 3)
    outs = _output_sizes(op, input, output_size, 3)
    sizes = np.shape(input)[-3:]
    positions = [_adaptive_positions(n, out) for n, out in zip(sizes, outs)]
    grid = []
    for d, p in enumerate(positions):  # (oD, oH, oW, kD, kH, kW) after broadcasting
        shape = [1] * 6
        shape[d], shape[3 + d] = p.shape
        grid.append(p.reshape(shape))
    windows = index_row(input, index=(Ellipsis, *grid))
    kernel = tuple(p.shape[1] for p in positions)
    values, where = max_over(reshape(windows, (*windows.shape[:-3], math.prod(kernel))), -1)
    if not return_indices:
        return values
    offsets = np.unravel_index(where.data, kernel)
    flat = 0
    for d, (p, n) in enumerate(zip(positions, sizes)):
        out_index = np.arange(outs[d]).reshape([-1 if e == d else 1 for e in range(3)])
        flat = flat * n + p[out_index, offsets[d]]
    return values, Tensor._make(np.asarray(flat, np.int64))


# The *_with_indices names: max pooling that always returns (values, indices).


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):  # fmt: skip
    """`max_pool1d` with ``return_indices=True`` whatever is passed, as PyTorch's.

    >>> import chainrule as cr
    >>> max_pool1d_with_indices(cr.tensor([[1.0, 5.0, 2.0, 4.0]]), 2)
    (tensor([[5., 4.]]), tensor([[1, 3]]))
    """
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):  # fmt: skip
    """`max_pool2d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> max_pool2d_with_indices(cr.arange(4.0).reshape(1, 2, 2), 2)[1]
    tensor([[[3]]])
    """
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False):  # fmt: skip
    """`max_pool3d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> max_pool3d_with_indices(cr.arange(8.0).reshape(1, 2, 2, 2), 2)[1]
    tensor([[[[7]]]])
    """
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices: bool = False):
    """`adaptive_max_pool1d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> adaptive_max_pool1d_with_indices(cr.tensor([[1.0, 5.0, 2.0]]), 1)
    (tensor([[5.]]), tensor([[1]]))
    """
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices: bool = False):
    """`adaptive_max_pool2d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> adaptive_max_pool2d_with_indices(cr.arange(4.0).reshape(1, 2, 2), 1)[1]
    tensor([[[3]]])
    """
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices: bool = False):
    """`adaptive_max_pool3d` returning (values, indices) always.

    >>> import chainrule as cr
    >>> adaptive_max_pool3d_with_indices(cr.arange(8.0).reshape(1, 2, 2, 2), 1)[1]
    tensor([[[[7]]]])
    """
    return adaptive_max_pool3d(input, output_size, True)


# Lp pooling: (sum of x**p over each window) ** (1/p), from average pooling as PyTorch.


def _lp_pool(pool, n: int, input, norm_type, kernel_size, stride, ceil_mode: bool):
    op = f"lp_pool{n}d"
    if isinstance(norm_type, bool) or not isinstance(norm_type, (int, float)) or norm_type == 0:
        raise DomainError(f"{op}: norm_type must be a nonzero number, got {norm_type!r}")
    kernel = _ints(kernel_size, n, op, "kernel_size", 1)
    means = pool(input**norm_type, kernel, stride, 0, ceil_mode)
    # sign(m) * relu(|m|) is m, but with PyTorch's gradient 0 where a window's sum is 0.
    sums = sign(means) * relu(abs_(means)) * math.prod(kernel)
    return sums ** (1.0 / norm_type)


def lp_pool1d(input, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False):
    """The p-norm (p = ``norm_type``) of each window of an (N, C, L) or (C, L) input:
    (sum of x**p) ** (1/p), as PyTorch computes it (so negative inputs with an odd p, or a
    window whose sum is 0, follow its arithmetic: NaN, and gradient 0 or inf).

    >>> import chainrule as cr
    >>> lp_pool1d(cr.tensor([[3.0, 4.0, 1.0, 0.0]]), 2, 2)
    tensor([[5., 1.]])
    """
    return _lp_pool(avg_pool1d, 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of an (N, C, H, W) or (C, H, W) input (see `lp_pool1d`).

    >>> import chainrule as cr
    >>> lp_pool2d(cr.tensor([[[3.0, 4.0], [0.0, 0.0]]]), 2, 2)
    tensor([[[5.]]])
    """
    return _lp_pool(avg_pool2d, 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
    """The p-norm of each window of an (N, C, D, H, W) or (C, D, H, W) input (see
    `lp_pool1d`).

    >>> import chainrule as cr
    >>> lp_pool3d(cr.ones(1, 2, 2, 2), 1, 2)
    tensor([[[[8.]]]])
    """
    return _lp_pool(avg_pool3d, 3, input, norm_type, kernel_size, stride, ceil_mode)
