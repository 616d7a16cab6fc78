"""Pooling: max, average and adaptive pooling in 1-D and 2-D, and the rows tiles and untiles.

Pooling is unfold (`chainrule.ops.conv`), then a max or a sum over each window, so it can be
differentiated again. ``tiles`` and ``untiles`` are the cheaper pair for max pooling's usual
windows, which tile the input.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..observe import replayed_whole
from ..op import LINEAR, Op
from .conv import _batched, _dtype, _ints, _spans, _unbatched, unfold_row
from .indexing import index_row
from .linalg import matmul
from .padding import pad
from .reduce import max as max_over
from .reduce import max_row
from .reduce import sum as sum_over
from .shape import permute, reshape, squeeze, unsqueeze

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d",
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


# Pooling.


def _pool_args(op: str, kernel_size, stride, padding, dilation) -> tuple:
    kernel = _ints(kernel_size, 2, op, "kernel_size", 1)
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    stride = kernel if no_stride else _ints(stride, 2, op, "stride", 1)
    padding = _ints(padding, 2, op, "padding", 0)
    dilation = _ints(dilation, 2, op, "dilation", 1)
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
    op = "max_pool2d"
    x, batched = _batched(input, op, 2)
    args = _pool_args(op, kernel_size, stride, padding, dilation)
    return _max_pool(op, x, batched, *args, ceil_mode, return_indices)


def _max_pool(op, x, batched, kernel, stride, padding, dilation, ceil_mode, return_indices):
    """max_pool2d on a checked (N, C, H, W) input; ``batched`` False drops N at the end."""
    n, c, h, w = np.shape(x)
    (oh, ow), (extra_h, extra_w) = _pool_sizes(
        op, (h, w), kernel, stride, padding, dilation, ceil_mode
    )
    (ph, pw), kw = padding, kernel[1]
    if ph or pw or extra_h or extra_w:
        x = pad(x, (pw, pw + extra_w, ph, ph + extra_h), value=_lowest(_dtype(x)))
    windows = _stacked_windows(x, kernel, stride, dilation, (oh, ow))
    positions = _first_max(windows)
    values = max_row(windows, dim=(0,), keepdim=False, indices=positions)
    values = _unbatched(values, batched)
    if not return_indices:
        return values
    indices = _input_indices(positions, (oh, ow), w, kw, stride, padding, dilation, batched)
    return values, Tensor._make(indices)


@replayed_whole(pure=True)  # a compiled step works the indices out from the new positions
def _input_indices(positions, outs, w: int, kw: int, stride, padding, dilation, batched: bool):
    """max_pool2d's returned indices (into each flattened input plane) from the positions
    `_first_max` found in the windows; ``batched`` False drops N."""
    (oh, ow), (ph, pw) = outs, padding
    # Window position (a, b) of output (i, j) is input row i*sh - ph + a*dh, column likewise.
    a, b = np.divmod(positions[0].astype(np.int64), kw)
    rows = np.arange(oh)[:, None] * stride[0] - ph + a * dilation[0]
    columns = np.arange(ow)[None, :] * stride[1] - pw + b * dilation[1]
    indices = (rows * w + columns).astype(np.int64)
    return indices if batched else indices[0]


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
    cols = unfold_row(
        x, kernel_size=kernel, dilation=dilation, padding=((0, 0), (0, 0)), stride=stride
    )
    return permute(reshape(cols, (n, c, kh * kw, oh, ow)), (2, 0, 1, 3, 4))


@replayed_whole(pure=True)  # a compiled step finds the new maxima at each call
def _first_max(windows) -> np.ndarray:
    """np.argmax(windows, axis=0, keepdims=True): where each slice along axis 0 has its first
    maximum, a NaN counting as the largest. Written with whole-slab operations, because
    np.argmax along a leading axis first copies the array to move that axis last."""
    windows = windows.data if isinstance(windows, Tensor) else windows
    k = windows.shape[0]
    largest = np.amax(windows, axis=0)
    hits = windows == largest
    if windows.dtype.kind == "f" and np.isnan(largest).any():
        hits |= np.isnan(windows)
    # The first hit has the largest weight, k - position (in the smallest dtype that holds k).
    weights = np.arange(k, 0, -1, dtype=np.min_scalar_type(k))
    weights = weights.reshape((k,) + (1,) * (windows.ndim - 1))
    return k - np.amax(hits * weights, axis=0, keepdims=True)


def _avg_divisors(sizes, kernel, stride, padding, outs, count_include_pad: bool) -> np.ndarray:
    """The (oH, oW) divisors of avg_pool2d, as PyTorch: the window clipped to the padded input
    (count_include_pad), or to the input itself."""
    counts = []
    for n, k, s, p, out in zip(sizes, kernel, stride, padding, outs):
        start = np.arange(out) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            counts.append(end - start)
        else:
            counts.append(np.minimum(end, n) - np.maximum(start, 0))
    return np.outer(*counts)


def _check_float(x, op: str) -> None:
    dtype = _dtype(x)
    if dtype.kind not in "fc":
        raise DTypeError(
            f"{op}: needs a floating-point input, got {fmt_dtype(dtype)}; convert with .float()"
        )


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
    op = "avg_pool2d"
    x, batched = _batched(input, op, 2)
    kernel, stride, padding, _ = _pool_args(op, kernel_size, stride, padding, 1)
    return _avg_pool(op, x, batched, kernel, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)  # fmt: skip


def _avg_pool(op, x, batched, kernel, stride, padding, ceil_mode, count_include_pad,
              divisor_override):  # fmt: skip
    """avg_pool2d on an (N, C, H, W) input with checked window arguments."""
    _check_float(x, op)
    if divisor_override is not None and (
        not isinstance(divisor_override, numbers.Integral) or divisor_override == 0
    ):
        raise DomainError(f"{op}: divisor_override must be a nonzero int, got {divisor_override!r}")
    n, c, h, w = np.shape(x)
    outs, extras = _pool_sizes(op, (h, w), kernel, stride, padding, (1, 1), ceil_mode)
    widths = tuple((p, p + e) for p, e in zip(padding, extras))
    cols = unfold_row(x, kernel_size=kernel, dilation=(1, 1), padding=widths, stride=stride)
    sums = sum_over(reshape(cols, (n, c, kernel[0] * kernel[1], *outs)), 2)
    if divisor_override is not None:
        divisors = np.asarray(divisor_override, _dtype(x))
    else:
        counts = _avg_divisors((h, w), kernel, stride, padding, outs, count_include_pad)
        divisors = counts.astype(_dtype(x))
    return _unbatched(sums / divisors, batched)


def _adaptive_weights(n: int, out: int, dtype: np.dtype) -> np.ndarray:
    """The (out, n) matrix averaging PyTorch's adaptive windows: window i covers
    floor(i*n/out) to ceil((i+1)*n/out), so neighbouring windows may overlap."""
    i = np.arange(out)
    start = i * n // out
    end = -(-(i + 1) * n // out)
    positions = np.arange(n)
    inside = (positions >= start[:, None]) & (positions < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def adaptive_avg_pool2d(input, output_size):
    """Average pooling of an (N, C, H, W) or (C, H, W) input to ``output_size`` (an int, a
    pair, None in a pair keeping that size), with PyTorch's windows.

    Written as two matmuls with constant averaging matrices, A_h @ x @ A_wᵀ.

    >>> import chainrule as cr
    >>> adaptive_avg_pool2d(cr.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[2., 3.]]])
    """
    op = "adaptive_avg_pool2d"
    _batched(input, op, 2)
    _check_float(input, op)
    h, w = np.shape(input)[-2:]
    sizes = (output_size, output_size) if not isinstance(output_size, Sequence) else output_size
    if len(sizes) != 2:
        raise ShapeError(f"{op}: output_size must be an int or a pair, got {output_size!r}")
    sizes = tuple(n if size is None else size for n, size in zip((h, w), sizes))
    oh, ow = _ints(sizes, 2, op, "output_size", 1)
    dtype = _dtype(input)
    rows = _adaptive_weights(h, oh, dtype)
    columns = _adaptive_weights(w, ow, dtype)
    return matmul(matmul(rows, input), columns.T)


# 1-D pooling: a (N, C, L) signal is an (N, C, 1, L) image.


def _as_image(input, op: str):
    x, batched = _batched(input, op, 1)
    return unsqueeze(x, 2), batched


def _line(value, op: str, what: str, minimum: int, fill: int) -> tuple[int, int]:
    return (fill, *_ints(value, 1, op, what, minimum))


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
    op = "max_pool1d"
    x, batched = _as_image(input, op)
    kernel = _line(kernel_size, op, "kernel_size", 1, 1)
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    stride = kernel if no_stride else _line(stride, op, "stride", 1, 1)
    padding = _line(padding, op, "padding", 0, 0)
    dilation = _line(dilation, op, "dilation", 1, 1)
    if 2 * padding[1] > kernel[1]:
        raise DomainError(
            f"{op}: padding {padding[1]} must be at most half of kernel_size {kernel[1]}"
        )
    out = _max_pool(op, x, True, kernel, stride, padding, dilation, ceil_mode, return_indices)
    if not return_indices:
        return _unbatched(squeeze(out, 2), batched)
    values, indices = out
    return _unbatched(squeeze(values, 2), batched), Tensor._make(_line_of(indices, batched))


@replayed_whole(pure=True)  # a compiled step reads the new indices at each call
def _line_of(indices: Tensor, batched: bool) -> np.ndarray:
    """max_pool1d's indices: the (N, C, 1, L) ones of max_pool2d with H (and N unless
    ``batched``) dropped."""
    return indices.data[:, :, 0] if batched else indices.data[0, :, 0]


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
    op = "avg_pool1d"
    x, batched = _as_image(input, op)
    kernel = _line(kernel_size, op, "kernel_size", 1, 1)
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and not stride)
    stride = kernel if no_stride else _line(stride, op, "stride", 1, 1)
    padding = _line(padding, op, "padding", 0, 0)
    if 2 * padding[1] > kernel[1]:
        raise DomainError(
            f"{op}: padding {padding[1]} must be at most half of kernel_size {kernel[1]}"
        )
    out = _avg_pool(op, x, True, kernel, stride, padding, ceil_mode, count_include_pad, None)
    return _unbatched(squeeze(out, 2), batched)


def adaptive_avg_pool1d(input, output_size):
    """Average pooling of an (N, C, L) or (C, L) input to ``output_size`` windows, PyTorch's
    (see `adaptive_avg_pool2d`): one matmul with a constant averaging matrix.

    >>> import chainrule as cr
    >>> adaptive_avg_pool1d(cr.tensor([[1.0, 2.0, 3.0, 4.0, 5.0]]), 2)
    tensor([[2., 4.]])
    """
    op = "adaptive_avg_pool1d"
    _batched(input, op, 1)
    _check_float(input, op)
    (size,) = _ints(output_size, 1, op, "output_size", 1)
    weights = _adaptive_weights(np.shape(input)[-1], size, _dtype(input))
    return matmul(input, weights.T)


def _adaptive_positions(n: int, out: int) -> np.ndarray:
    """(out, widest window) positions of PyTorch's adaptive windows over n elements; a
    shorter window repeats its last position, which a max ignores."""
    i = np.arange(out)
    start = i * n // out
    end = -(-(i + 1) * n // out)
    widest = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(widest), end[:, None] - 1)


def _adaptive_max(op: str, x, sizes: tuple, return_indices: bool):
    """adaptive max pooling of (..., H, W) x to ``sizes`` (oH, oW)."""
    h, w = np.shape(x)[-2:]
    rows, columns = _adaptive_positions(h, sizes[0]), _adaptive_positions(w, sizes[1])
    kh, kw = rows.shape[1], columns.shape[1]
    grid = (Ellipsis, rows[:, None, :, None], columns[None, :, None, :])
    windows = index_row(x, index=grid)  # (..., oH, oW, kH, kW)
    values, positions = max_over(reshape(windows, (*windows.shape[:-2], kh * kw)), -1)
    if not return_indices:
        return values
    a, b = np.divmod(positions.data, kw)
    oh, ow = np.arange(sizes[0])[:, None], np.arange(sizes[1])[None, :]
    return values, Tensor._make((rows[oh, a] * w + columns[ow, b]).astype(np.int64))


def adaptive_max_pool2d(input, output_size, return_indices: bool = False):
    """Max pooling of an (N, C, H, W) or (C, H, W) input to ``output_size`` (an int or a
    pair; None keeps that size) with PyTorch's windows (see `adaptive_avg_pool2d`); the first
    maximum of a window, row-major, takes the gradient. ``return_indices`` also gives each
    maximum's flat index into its H*W plane.

    >>> import chainrule as cr
    >>> adaptive_max_pool2d(cr.arange(6.0).reshape(1, 2, 3), (1, 2))
    tensor([[[4., 5.]]])
    """
    op = "adaptive_max_pool2d"
    _batched(input, op, 2)
    h, w = np.shape(input)[-2:]
    sizes = (output_size, output_size) if not isinstance(output_size, Sequence) else output_size
    if len(sizes) != 2:
        raise ShapeError(f"{op}: output_size must be an int or a pair, got {output_size!r}")
    sizes = tuple(n if size is None else size for n, size in zip((h, w), sizes))
    return _adaptive_max(op, input, _ints(sizes, 2, op, "output_size", 1), return_indices)


def adaptive_max_pool1d(input, output_size, return_indices: bool = False):
    """Max pooling of an (N, C, L) or (C, L) input to ``output_size`` windows (see
    `adaptive_max_pool2d`).

    >>> import chainrule as cr
    >>> adaptive_max_pool1d(cr.tensor([[1.0, 5.0, 2.0, 4.0, 3.0]]), 2)
    tensor([[5., 4.]])
    """
    op = "adaptive_max_pool1d"
    _batched(input, op, 1)
    (size,) = _ints(output_size, 1, op, "output_size", 1)
    out = _adaptive_max(op, unsqueeze(input, -2), (1, size), return_indices)
    if not return_indices:
        return squeeze(out, -2)
    values, indices = out
    return squeeze(values, -2), Tensor._make(indices.data[..., 0, :])
