"""Pooling in 1, 2 and 3 spatial dims, every form torch.nn.functional has: max pooling (and
the ``*_with_indices`` spellings), average, adaptive average and adaptive max pooling, Lp
pooling, fractional max pooling, and max unpooling, max pooling's inverse from its indices;
with the rows ``tiles`` and ``untiles``. One implementation serves every rank. The module
stays whole past 800 lines because every form shares the one window machinery below.

Every function here is composed from rows, so it differentiates again. The windows of the
regular pools come as a stack, one slab per window position: for 2-D inputs (and 1-D ones,
pooled as images of one row) from ``tiles`` when they tile the input (stride = kernel,
pooling's default: the cheaper pair) or else from the columns of `unfold`
(`chainrule.ops.conv`); for 3-D inputs from `Tensor.unfold`'s strided view (the ``windows``
row), once per spatial dim. A max or a sum over each window follows. Adaptive and fractional
windows are gathered by an index grid; unpooling scatters values into zeros.

The module stays whole: it is one family, as ``torch.nn.modules.pooling`` is, and its pools
share the window arithmetic and argument checks (split by rank, two copies had drifted apart).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np

from .. import random, xp
from .._tensor import Tensor
from ..creation import zeros
from ..errors import DomainError, DTypeError, OutOfRangeError, ShapeError, fmt_dtype, fmt_shape
from ..linalg.products import matmul
from ..observe import replayed_whole
from ..op import LINEAR, Op
from .conv import _batched, _dtype, _ints, _spans, _unbatched, unfold_row
from .elementwise import abs as abs_
from .elementwise import relu, sign
from .indexing import getitem, index_row
from .padding import pad
from .reduce import max as max_over
from .reduce import max_row
from .reduce import mean as mean_over
from .reduce import sum as sum_over
from .scattering import scatter
from .shape import permute, reshape, squeeze, unsqueeze
from .strided import contiguous, windows_row

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
    "max_pool3d",
]  # fmt: skip


def _tile_grid(x, kernel_size):
    """A view of the whole kH x kW tiles of an (N, C, H, W) array as (N, C, oH, kH, oW, kW)."""
    (kh, kw), (n, c, h, w) = kernel_size, x.shape
    return x[:, :, : h // kh * kh, : w // kw * kw].reshape(n, c, h // kh, kh, w // kw, kw)


def _tiles(x, kernel_size):
    """(N, C, H, W) -> (kH*kW, N, C, H // kH, W // kW): slab a*kW + b holds element (a, b) of
    every kH x kW tile; rows and columns past the last whole tile are left out."""
    (kh, kw), grid = kernel_size, _tile_grid(x, kernel_size)
    out = np.empty((kh * kw, *grid.shape[:3], grid.shape[4]), x.dtype)
    for a in range(kh):
        for b in range(kw):
            out[a * kw + b] = grid[:, :, :, a, :, b]
    return out


def _untiles(t, kernel_size, output_size):
    """The adjoint of `_tiles`: each slab written back over its tiles, in zeros of
    ``output_size``."""
    out = np.zeros(output_size, t.dtype)
    (kh, kw), grid = kernel_size, _tile_grid(out, kernel_size)  # a view: out is contiguous
    for a in range(kh):
        for b in range(kw):
            grid[:, :, :, a, :, b] = t[a * kw + b]
    return out


def _batch_tiles(op: Op, values, batched, params):
    # (B, N, C, H, W) -> tiles of (B*N, C, H, W): (k, B*N, C, oH, oW) -> (B, k, N, C, oH, oW).
    (x,) = values
    b, n = x.shape[:2]
    out = op(x.reshape((b * n, *x.shape[2:])), **params)
    return out.reshape((out.shape[0], b, n, *out.shape[2:])).permute(1, 0, 2, 3, 4, 5)


def _batch_untiles(op: Op, values, batched, params):
    # (B, k, N, C, oH, oW) -> (k, B*N, C, oH, oW) -> untiles into (B*N, C, H, W) -> (B, ...).
    (t,) = values
    b, k, n = t.shape[:3]
    merged = t.permute(1, 0, 2, 3, 4, 5).reshape((k, b * n, *t.shape[3:]))
    size = params["output_size"]
    out = op(merged, kernel_size=params["kernel_size"], output_size=(b * n, *size[1:]))
    return out.reshape((b, *size))


# fmt: off
# Windows that tile the input (pooling's default, stride = kernel) as slabs, window position
# first: one slab copy per position, where unfold's columns plus a permute cost a transpose.
tiles_row = Op("tiles", _tiles, jvp=LINEAR, kind="window", batch=_batch_tiles,
               doc="The whole kH x kW tiles of (N, C, H, W) x, as (kH*kW, N, C, H/kH, W/kW).",
               vjp=(lambda g, x_shape, kernel_size:
                    xp.run(untiles_row, g, kernel_size=kernel_size, output_size=x_shape),))
untiles_row = Op("untiles", _untiles, jvp=LINEAR, kind="window", batch=_batch_untiles,
                 doc="Slabs written back over their tiles in zeros, the adjoint of tiles.",
                 vjp=(lambda g, kernel_size: xp.run(tiles_row, g, kernel_size=kernel_size),))
# fmt: on


# The windows and their arguments, for any number of spatial dims.


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


def _pool_sizes(op: str, sizes: tuple, kernel, stride, padding, dilation, ceil_mode: bool):
    """(output sizes, extra padding after each dim): PyTorch's rule, where ceil_mode adds a
    last partial window only if it starts inside the input or its left padding."""
    outs, extras = [], []
    for n, s, p, span in zip(sizes, stride, padding, _spans(kernel, dilation)):
        room = n + 2 * p - span
        out = (room + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= n + p:
            out -= 1
        outs.append(out)
        extras.append(max(0, (out - 1) * s + span - (n + 2 * p)))
    if any(out < 1 for out in outs):
        raise ShapeError(
            f"{op}: input of size {fmt_shape(sizes)} is too small for kernel_size {kernel} "
            f"with stride {stride}, padding {padding} and dilation {dilation}: the output "
            f"would be {fmt_shape(outs)}"
        )
    return tuple(outs), tuple(extras)


def _lowest(dtype: np.dtype):
    """The padding value that never wins a max: -inf, or an integer type's minimum."""
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


def _padded(x, padding: tuple, extras: tuple, value):
    """x padded by ``padding`` before and ``padding + extras`` after each spatial dim."""
    amounts = [a for p, e in zip(reversed(padding), reversed(extras)) for a in (p, p + e)]
    return pad(x, amounts, value=value) if any(amounts) else x


def _stacked_windows(x, kernel: tuple, stride: tuple, dilation: tuple, out_sizes: tuple):
    """(kH*kW, N, C, oH, oW): slab k holds element k (row-major) of every window of ``x``.

    Windows first, because NumPy reduces a leading axis slab by slab, fast, while a short
    trailing axis costs a loop per window. Windows that tile the input (stride = kernel, no
    dilation) are the `tiles` row; others are the columns of `unfold`, permuted.
    """
    (kh, kw), (oh, ow) = kernel, out_sizes
    if stride == kernel and dilation == (1, 1):
        return tiles_row(x, kernel_size=kernel)
    n, c = np.shape(x)[:2]
    no_padding = ((0, 0), (0, 0))
    cols = unfold_row(x, kernel_size=kernel, dilation=dilation, padding=no_padding,
                      stride=stride, wide=False)  # fmt: skip
    # Windows first, in memory too: the max and the search for it read slabs, which a
    # permuted view of the columns would give them as strided pieces (several times slower).
    return contiguous(permute(reshape(cols, (n, c, kh * kw, oh, ow)), (2, 0, 1, 3, 4)))


def windows_nd(x, kernel: tuple, stride: tuple, dilation: tuple):
    """(N, C, *outs, K): every (dilated) window of an (N, C, *sizes) tensor, its K elements
    in row-major order; one strided view per spatial dim, then a copy."""
    for d, (k, s, dil) in enumerate(zip(kernel, stride, dilation)):
        x = windows_row(x, dim=2 + d, size=dil * (k - 1) + 1, step=s)
    if any(dil != 1 for dil in dilation):
        x = getitem(x, (Ellipsis, *(slice(None, None, dil) for dil in dilation)))
    n = len(kernel)
    return reshape(x, (*x.shape[: 2 + n], math.prod(kernel)))


# Max pooling.


def _max_pool(op, n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """max_pool{n}d of an (N, C, *sizes) or unbatched (C, *sizes) input (see `max_pool2d`)."""
    x, batched = _batched(input, op, n)
    kernel, stride, padding, dilation = window_args(op, n, kernel_size, stride, padding, dilation)
    line = n == 1
    if line:  # a signal (N, C, L) as an image (N, C, 1, L): the 2-D windows (and tiles) serve
        x = unsqueeze(x, 2)
        kernel, stride, dilation, padding = (
            (1, *kernel),
            (1, *stride),
            (1, *dilation),
            (0, *padding),
        )
    sizes = tuple(np.shape(x)[2:])
    outs, extras = _pool_sizes(op, sizes, kernel, stride, padding, dilation, ceil_mode)
    x = _padded(x, padding, extras, _lowest(_dtype(x)))
    if len(sizes) == 2:
        windows = _stacked_windows(x, kernel, stride, dilation, outs)
        positions = _first_max(windows)
        values = max_row(windows, dim=(0,), keepdim=False, indices=positions)
    else:
        values, positions = max_over(windows_nd(x, kernel, stride, dilation), -1)
    values = _unbatched(squeeze(values, 2) if line else values, batched)
    if not return_indices:
        return values
    indices = _input_indices(positions, kernel, outs, sizes, stride, padding, dilation, line,
                             batched)  # fmt: skip
    return values, Tensor._make(indices)


@replayed_whole(pure=True)  # a compiled step works the indices out from the new positions
def _input_indices(positions, kernel, outs, sizes, stride, padding, dilation, line, batched):
    """The flat input positions (into each plane of ``sizes``) of the window positions the
    maxima were found at (flat into ``kernel``): `_first_max`'s array (windows first) or the
    indices ``max`` returned (a Tensor, windows last). ``line`` drops the row of a 1-D input
    pooled as an image, ``batched`` False drops N."""
    positions = positions._array if isinstance(positions, Tensor) else positions[0]
    # Offset o of output i along a dim is input position i*stride - padding + o*dilation.
    offsets = np.unravel_index(positions, kernel)
    n, flat = len(kernel), 0
    for d in range(n):
        start = np.arange(outs[d]).reshape([-1 if e == d else 1 for e in range(n)])
        flat = flat * sizes[d] + start * stride[d] - padding[d] + offsets[d] * dilation[d]
    indices = np.asarray(flat, np.int64)
    if line:
        indices = indices[:, :, 0]
    return indices if batched else indices[0]


@replayed_whole(pure=True)  # a compiled step finds the new maxima at each call
def _first_max(windows) -> np.ndarray:
    """np.argmax(windows, axis=0, keepdims=True): where each slice along axis 0 has its first
    maximum, a NaN counting as the largest. Written with whole-slab operations, because
    np.argmax along a leading axis first copies the array to move that axis last."""
    windows = windows._array if isinstance(windows, Tensor) else windows
    k = windows.shape[0]
    largest = np.amax(windows, axis=0)
    hits = windows == largest
    if windows.dtype.kind == "f" and np.isnan(largest).any():
        hits |= np.isnan(windows)
    # The first hit has the largest weight, k - position (in the smallest dtype that holds k).
    weights = np.arange(k, 0, -1, dtype=np.min_scalar_type(k))
    weights = weights.reshape((k,) + (1,) * (windows.ndim - 1))
    return k - np.amax(hits * weights, axis=0, keepdims=True)


# Average pooling.


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


def _check_float(x, op: str) -> None:
    dtype = _dtype(x)
    if dtype.kind not in "fc":
        raise DTypeError(
            f"{op}: needs a floating-point input, got {fmt_dtype(dtype)}; convert with .float()"
        )


def _avg_pool(op, n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):  # fmt: skip
    """avg_pool{n}d of an (N, C, *sizes) or unbatched (C, *sizes) input (see `avg_pool2d`)."""
    x, batched = _batched(input, op, n)
    kernel, stride, padding, _ = window_args(op, n, kernel_size, stride, padding)
    _check_float(x, op)
    if divisor_override is not None and (
        not isinstance(divisor_override, numbers.Integral) or divisor_override == 0
    ):
        raise DomainError(f"{op}: divisor_override must be a nonzero int, got {divisor_override!r}")
    line = n == 1
    if line:  # an image of one row, as in max pooling
        x = unsqueeze(x, 2)
        kernel, stride, padding = (1, *kernel), (1, *stride), (0, *padding)
    sizes, ones = tuple(np.shape(x)[2:]), (1,) * len(kernel)
    outs, extras = _pool_sizes(op, sizes, kernel, stride, padding, ones, ceil_mode)
    if len(sizes) == 2 and stride == kernel and not any(padding) and not any(extras):
        sums = sum_over(tiles_row(x, kernel_size=kernel), 0)  # windows that tile the input
    elif len(sizes) == 2:  # unfold pads with zeros as it reads
        widths = tuple((p, p + e) for p, e in zip(padding, extras))
        cols = unfold_row(
            x, kernel_size=kernel, dilation=ones, padding=widths, stride=stride, wide=False
        )
        sums = sum_over(reshape(cols, (*np.shape(x)[:2], math.prod(kernel), *outs)), 2)
    else:
        sums = sum_over(windows_nd(_padded(x, padding, extras, 0), kernel, stride, ones), -1)
    if divisor_override is not None:
        divisors = np.asarray(divisor_override, _dtype(x))
    else:
        divisors = _divisors(sizes, kernel, stride, padding, outs, count_include_pad)
    out = sums / divisors.astype(_dtype(x))
    return _unbatched(squeeze(out, 2) if line else out, batched)


# Adaptive pooling: PyTorch's windows, window i of out over n elements covering
# floor(i*n/out) to ceil((i+1)*n/out), so neighbouring windows may overlap.


def _adaptive_weights(n: int, out: int, dtype: np.dtype) -> np.ndarray:
    """The (out, n) matrix averaging PyTorch's adaptive windows: window i covers
    floor(i*n/out) to ceil((i+1)*n/out), so neighbouring windows may overlap."""
    i = np.arange(out)
    start = i * n // out
    end = -(-(i + 1) * n // out)
    positions = np.arange(n)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_positions(n: int, out: int) -> np.ndarray:
    """(out, widest window) positions of PyTorch's adaptive windows over n elements; a
    shorter window repeats its last position, which a max ignores."""
    i = np.arange(out)
    start = i * n // out
    end = -(-(i + 1) * n // out)
    widest = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(widest), end[:, None] - 1)


def _output_sizes(op: str, input, output_size, n: int) -> tuple[int, ...]:
    """An adaptive pool's ``output_size``: an int, or n entries where None keeps a size (a
    1-D pool takes no None, as PyTorch's)."""
    if n == 1:
        return _ints(output_size, 1, op, "output_size", 1)
    sizes = np.shape(input)[-n:]
    wanted = (output_size,) * n if not isinstance(output_size, Sequence) else output_size
    if len(wanted) != n:
        what = "a pair" if n == 2 else f"{n} sizes"
        raise ShapeError(f"{op}: output_size must be an int or {what}, got {output_size!r}")
    wanted = tuple(size if w is None else w for size, w in zip(sizes, wanted))
    return _ints(wanted, n, op, "output_size", 1)


def _adaptive_avg(op: str, n: int, input, output_size):
    """adaptive_avg_pool{n}d: a matmul with a constant averaging matrix per spatial dim,
    A_h @ x @ A_wᵀ over the last two, then (3-D) A_d times the planes as one matrix's
    columns; an output of one element per plane is the plane's mean."""
    _batched(input, op, n)
    _check_float(input, op)
    outs = _output_sizes(op, input, output_size, n)
    shape, dtype = np.shape(input), _dtype(input)
    sizes = shape[-n:]
    if all(out == 1 for out in outs):  # global pooling, as a ResNet ends: one window, a mean
        return mean_over(input, tuple(range(-n, 0)), keepdim=True)
    if n == 1:
        return matmul(input, _adaptive_weights(sizes[0], outs[0], dtype).T)
    rows, columns = (_adaptive_weights(s, out, dtype) for s, out in zip(sizes[-2:], outs[-2:]))
    out = matmul(matmul(rows, input), columns.T)
    if n == 2:
        return out
    planes = reshape(out, (*shape[:-3], sizes[0], outs[1] * outs[2]))
    out = matmul(_adaptive_weights(sizes[0], outs[0], dtype), planes)
    return reshape(out, (*shape[:-3], *outs))


def _adaptive_max(op: str, n: int, input, output_size, return_indices: bool):
    """adaptive_max_pool{n}d: every window gathered by an index grid, then a max (the first
    maximum of a window, row-major, takes the gradient)."""
    _batched(input, op, n)
    outs = _output_sizes(op, input, output_size, n)
    sizes = np.shape(input)[-n:]
    positions = [_adaptive_positions(size, out) for size, out in zip(sizes, outs)]
    grid = []
    for d, p in enumerate(positions):  # (*outs, *kernel) after broadcasting
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = p.shape
        grid.append(p.reshape(shape))
    windows = index_row(input, index=(Ellipsis, *grid))
    kernel = tuple(p.shape[1] for p in positions)
    values, where = max_over(reshape(windows, (*windows.shape[:-n], math.prod(kernel))), -1)
    if not return_indices:
        return values
    offsets = np.unravel_index(where._array, kernel)
    flat = 0
    for d, (p, size) in enumerate(zip(positions, sizes)):
        out_index = np.arange(outs[d]).reshape([-1 if e == d else 1 for e in range(n)])
        flat = flat * size + p[out_index, offsets[d]]
    return values, Tensor._make(np.asarray(flat, np.int64))


# The public functions, by rank.


def max_pool1d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """The maximum of each (dilated) window of an (N, C, L) or (C, L) input; the arguments,
    ties and ``return_indices`` (positions along L) are as in `max_pool2d`.

    >>> import chainrule as cr
    >>> max_pool1d(cr.tensor([[1.0, 5.0, 2.0, 4.0, 3.0]]), 2)
    tensor([[5., 4.]])
    """
    return _max_pool(
        "max_pool1d", 1, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def max_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    dilation=1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """The maximum of each (dilated) window of an (N, C, H, W) or (C, H, W) input.

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with
    -inf; ``ceil_mode`` keeps a last partial window. With ``return_indices`` it also returns
    each maximum's flat index into its input plane (H*W), as PyTorch.

    Ties: the first maximum of a window, in row-major window order, takes the whole gradient
    (as PyTorch on CPU); where windows overlap, an element collects the gradient of every
    window it wins. Built from rows: the windows are stacked along a new first dimension,
    then ``max`` picks each window's first maximum, so it differentiates again.

    >>> import chainrule as cr
    >>> x = cr.tensor([[[1.0, 5.0, 2.0], [4.0, 3.0, 0.0]]], requires_grad=True)
    >>> out, index = max_pool2d(x, 2, stride=1, return_indices=True)
    >>> out, index
    (tensor([[[5., 5.]]], grad_fn=<ReshapeBackward>), tensor([[[1, 1]]]))
    >>> out.sum().backward()
    >>> x.grad
    tensor([[[0., 2., 0.],
             [0., 0., 0.]]])
    """
    return _max_pool(
        "max_pool2d", 2, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


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
    return _max_pool(
        "max_pool3d", 3, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


def avg_pool1d(
    input, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
    count_include_pad: bool = True,
):  # fmt: skip
    """The mean of each window of an (N, C, L) or (C, L) input; the arguments are as in
    `avg_pool2d`.

    >>> import chainrule as cr
    >>> avg_pool1d(cr.tensor([[1.0, 5.0, 2.0, 4.0]]), 2)
    tensor([[3., 3.]])
    """
    return _avg_pool("avg_pool1d", 1, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, None)  # fmt: skip


def avg_pool2d(
    input,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
):
    """The mean of each window of an (N, C, H, W) or (C, H, W) input.

    ``stride`` defaults to ``kernel_size``; ``padding`` (at most half the kernel) pads with
    zeros, which count in the mean when ``count_include_pad``; ``ceil_mode`` keeps a last
    partial window, averaged over its part inside the padded input (PyTorch's divisors).
    ``divisor_override`` replaces every divisor.

    >>> import chainrule as cr
    >>> avg_pool2d(cr.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 2.5000,  4.5000],
             [10.5000, 12.5000]]])
    """
    return _avg_pool("avg_pool2d", 2, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)  # fmt: skip


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
    return _avg_pool("avg_pool3d", 3, input, kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)  # fmt: skip


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of an (N, C, L) or (C, L) input to ``output_size`` windows, PyTorch's
    (see `adaptive_avg_pool2d`): one matmul with a constant averaging matrix.

    >>> import chainrule as cr
    >>> adaptive_avg_pool1d(cr.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]]), 2)
    tensor([[2., 4.]])
    """
    return _adaptive_avg("adaptive_avg_pool1d", 1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of an (N, C, H, W) or (C, H, W) input to ``output_size`` (an int, a
    pair, None in a pair keeping that size), with PyTorch's windows.

    Written as two matmuls with constant averaging matrices, A_h @ x @ A_wᵀ.

    >>> import chainrule as cr
    >>> adaptive_avg_pool2d(cr.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[2., 3.]]])
    """
    return _adaptive_avg("adaptive_avg_pool2d", 2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """Average pooling of an (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` (an
    int or a triple; None keeps that size) with PyTorch's windows (see
    `adaptive_avg_pool2d`): three matmuls with constant averaging matrices.

    >>> import chainrule as cr
    >>> adaptive_avg_pool3d(cr.arange(8.0).reshape(1, 2, 2, 2), (1, 1, 2))
    tensor([[[[3., 4.]]]])
    """
    return _adaptive_avg("adaptive_avg_pool3d", 3, input, output_size)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max pooling of an (N, C, L) or (C, L) input to ``output_size`` windows (see
    `adaptive_max_pool2d`).

    >>> import chainrule as cr
    >>> adaptive_max_pool1d(cr.tensor([[1.0, 5.0, 2.0, 4.0, 3.0]]), 2)
    tensor([[5., 4.]])
    """
    return _adaptive_max("adaptive_max_pool1d", 1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max pooling of an (N, C, H, W) or (C, H, W) input to ``output_size`` (an int or a
    pair; None keeps that size) with PyTorch's windows (see `adaptive_avg_pool2d`); the first
    maximum of a window, row-major, takes the gradient. ``return_indices`` also gives each
    maximum's flat index into its H*W plane.

    >>> import chainrule as cr
    >>> adaptive_max_pool2d(cr.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[4., 5.]]])
    """
    return _adaptive_max("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices: bool = False):
    """Max pooling of an (N, C, D, H, W) or (C, D, H, W) input to ``output_size`` (an int or
    a triple; None keeps that size) with PyTorch's windows; the first maximum of a window,
    row-major, takes the gradient. ``return_indices`` also gives flat positions into D*H*W.

    >>> import chainrule as cr
    >>> adaptive_max_pool3d(cr.arange(8.0).reshape(1, 2, 2, 2), (1, 2, 1))
    tensor([[[[5.],
              [7.]]]])
    """
    return _adaptive_max("adaptive_max_pool3d", 3, input, output_size, return_indices)


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
        samples = random.rand((shape[0], shape[1], n), dtype=_dtype(x))._array
    samples = samples._array if isinstance(samples, Tensor) else np.asarray(samples)
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
    offsets = np.unravel_index(found._array, kernel)
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
    (N, C, 2) in [0, 1) (when not given, drawn as PyTorch draws them: ``rand(N, C, 2)`` from
    `chainrule.default_generator`).

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


# Max unpooling: the maxima put back where max pooling found them, zeros elsewhere.


def _unpool(op: str, n: int, input, indices, kernel_size, stride, padding, output_size):
    """max_unpool{n}d: values scattered into zeros at their flat positions per plane."""
    x, batched = _batched(input, op, n)
    index = indices._array if isinstance(indices, Tensor) else np.asarray(indices)
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
