"""Convolution and pooling: conv1d, conv2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d.

Two rows do the sliding-window work: ``unfold`` (im2col: each window of an input, as a column)
and ``fold`` (col2im: columns added back into place). Each is the other's VJP and both are
linear, so convolution (unfold, then a matmul with the weights) and pooling (unfold, then max or
sum over each window) are composed from rows and can be differentiated again. ``tiles`` and
``untiles`` are the cheaper pair for max pooling's usual windows, which tile the input. Modules
live in `chainrule.nn.conv`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import LINEAR, Op
from .linalg import matmul, matmul_add_row, matmul_row
from .reduce import max_row
from .reduce import sum as sum_over
from .shape import pad, permute, reshape, unsqueeze

__all__ = ["adaptive_avg_pool2d", "avg_pool2d", "conv1d", "conv2d", "max_pool2d"]


# The rows work on 4-D (N, C, H, W) arrays; ``padding`` is ((top, bottom), (left, right)) and
# the other parameters pairs of ints. The public functions check them first.


def _unfold(x, kernel_size, dilation, padding, stride):
    """(N, C, H, W) -> (N, C*kH*kW, L): each window is a column, channels first, then the
    kernel rows and columns; the L = oH*oW windows in row-major order (as PyTorch)."""
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    padded = np.pad(x, ((0, 0), (0, 0), *padding)) if np.any(padding) else x
    spans = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    # A strided view, no copy: windows[n, c, i, j, a, b] = padded[n, c, i*sh + a*dh, j*sw + b*dw]
    windows = sliding_window_view(padded, spans, axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]
    n, c, oh, ow = windows.shape[:4]
    out = windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    # A 1x1 kernel can leave a view of x: the output is a new tensor, so it gets its own memory.
    return out.copy() if np.may_share_memory(out, x) else out


def _fold(cols, output_size, kernel_size, dilation, padding, stride):
    """(N, C*kH*kW, L) -> (N, C, H, W): the adjoint of `_unfold`; overlapping windows add.

    One vectorised add per kernel offset (kH*kW of them): offset (a, b) of every window lands
    on a strided grid of the padded output, and no two windows hit one element at one offset.
    """
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    (top, bottom), (left, right) = padding
    h, w = output_size
    hp, wp = h + top + bottom, w + left + right
    oh = (hp - dh * (kh - 1) - 1) // sh + 1
    ow = (wp - dw * (kw - 1) - 1) // sw + 1
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    out = np.zeros((n, c, hp, wp), cols.dtype)
    for a in range(kh):
        for b in range(kw):
            rows = slice(a * dh, a * dh + sh * (oh - 1) + 1, sh)
            columns = slice(b * dw, b * dw + sw * (ow - 1) + 1, sw)
            out[:, :, rows, columns] += blocks[:, :, a, b]
    return np.ascontiguousarray(out[:, :, top : top + h, left : left + w])


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


def _batch_samples(op: Op, values, batched, params):
    # unfold and fold work on fixed-rank arrays whose first dim is a batch of independent
    # samples ((N, C, H, W) and (N, C*kH*kW, L)): the vmap batch joins that dim.
    (x,) = values
    merged = x.reshape((x.shape[0] * x.shape[1], *x.shape[2:]))
    out = op(merged, **params)
    return out.reshape((x.shape[0], x.shape[1], *out.shape[1:]))


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
unfold_row = Op("unfold", _unfold, jvp=LINEAR, kind="window", batch=_batch_samples,
                doc="im2col: each sliding window of (N, C, H, W) x as a column of (N, C*kH*kW, L).",
                vjp=(lambda g, x_shape, kernel_size, dilation, padding, stride:
                     xp.run(fold_row, g, output_size=x_shape[2:], kernel_size=kernel_size,
                            dilation=dilation, padding=padding, stride=stride),))
fold_row = Op("fold", _fold, jvp=LINEAR, kind="window", batch=_batch_samples,
              doc="col2im: columns added back into place, the adjoint of unfold.",
              vjp=(lambda g, kernel_size, dilation, padding, stride:
                   xp.run(unfold_row, g, kernel_size=kernel_size, dilation=dilation,
                          padding=padding, stride=stride),))
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


# Checking arguments.


def _ints(value, n: int, op: str, what: str, minimum: int) -> tuple[int, ...]:
    """An int or a sequence of n ints as a tuple of n ints, each at least ``minimum``."""
    items = (value,) if isinstance(value, numbers.Integral) else value
    if not isinstance(items, (tuple, list)) or not all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in items
    ):
        raise DTypeError(f"{op}: {what} must be an int or a tuple of {n} ints, got {value!r}")
    if len(items) == 1:
        items = tuple(items) * n
    if len(items) != n:
        raise ShapeError(f"{op}: {what} must be an int or a tuple of {n} ints, got {value!r}")
    if any(v < minimum for v in items):
        bound = "positive" if minimum == 1 else "non-negative"
        raise DomainError(f"{op}: {what} must be {bound}, got {value!r}")
    return tuple(int(v) for v in items)


_LAYOUTS = {1: ("(N, C, L)", "(C, L)"), 2: ("(N, C, H, W)", "(C, H, W)")}


def _batched(x, op: str, spatial: int):
    """``x`` with a batch dimension, and whether it had one (PyTorch's unbatched inputs)."""
    shape = np.shape(x)
    if len(shape) == spatial + 2:
        return x, True
    if len(shape) == spatial + 1:
        return unsqueeze(x, 0), False
    batched, unbatched = _LAYOUTS[spatial]
    raise ShapeError(
        f"{op}: input must be {batched} or unbatched {unbatched}, got shape {fmt_shape(shape)}"
    )


def _unbatched(out, batched: bool):
    return out if batched else reshape(out, out.shape[1:])


def _dtype(x) -> np.dtype:
    return x.dtype if isinstance(x, (Tensor, np.ndarray)) else np.asarray(x).dtype


def _spans(kernel: tuple, dilation: tuple) -> tuple[int, ...]:
    """How far each window reaches: dilation * (kernel - 1) + 1."""
    return tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))


def _conv_padding(op: str, padding, kernel: tuple, dilation: tuple, stride: tuple) -> tuple:
    """``padding`` as (before, after) per spatial dim; "same" puts an odd extra one after."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * n
        if padding == "same":
            if any(s != 1 for s in stride):
                raise DomainError(
                    f"{op}: padding='same' needs stride 1, got stride {stride}; give the "
                    "padding as numbers for a strided convolution"
                )
            totals = [d * (k - 1) for k, d in zip(kernel, dilation)]
            return tuple((t // 2, t - t // 2) for t in totals)
        raise DomainError(
            f"{op}: padding must be 'valid', 'same', an int or a tuple of {n} ints, got {padding!r}"
        )
    return tuple((p, p) for p in _ints(padding, n, op, "padding", 0))


def _check_fits(op: str, sizes: tuple, kernel: tuple, dilation: tuple, padding: tuple) -> None:
    padded = tuple(n + before + after for n, (before, after) in zip(sizes, padding))
    spans = _spans(kernel, dilation)
    if any(s > p for s, p in zip(spans, padded)):
        raise ShapeError(
            f"{op}: kernel size {fmt_shape(kernel)} with dilation {dilation} spans "
            f"{fmt_shape(spans)}, larger than the padded input {fmt_shape(padded)} (input "
            f"{fmt_shape(sizes)} plus padding); pad more or use a smaller kernel"
        )


def _out_sizes(sizes: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple):
    return tuple(
        (n + before + after - span) // s + 1
        for n, (before, after), span, s in zip(sizes, padding, _spans(kernel, dilation), stride)
    )


# Convolution.


def _conv(op: str, input, weight, bias, stride, padding, dilation, groups, spatial: int):
    """conv1d and conv2d: checks, then unfold and one (grouped, batched) matmul."""
    x, batched = _batched(input, op, spatial)
    x_shape, w_shape = np.shape(x), np.shape(weight)
    kernel_names = ", ".join(("kH", "kW") if spatial == 2 else ("kL",))
    if len(w_shape) != spatial + 2:
        raise ShapeError(
            f"{op}: weight must have shape (out_channels, in_channels/groups, {kernel_names}), "
            f"got {fmt_shape(w_shape)}"
        )
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool) or groups < 1:
        raise DomainError(f"{op}: groups must be a positive int, got {groups!r}")
    n, c = x_shape[:2]
    out_channels, group_channels, kernel = w_shape[0], w_shape[1], tuple(w_shape[2:])
    if c % groups:
        raise ShapeError(f"{op}: groups={groups} does not divide the input's {c} channels")
    if out_channels % groups:
        raise ShapeError(
            f"{op}: groups={groups} does not divide the {out_channels} out_channels of weight "
            f"{fmt_shape(w_shape)} (its dim 0)"
        )
    if c != group_channels * groups:
        raise ShapeError(
            f"{op}: input has {c} channels but weight {fmt_shape(w_shape)} expects "
            f"{group_channels * groups} (in_channels/groups={group_channels}, groups={groups})"
        )
    if bias is not None and np.shape(bias) != (out_channels,):
        raise ShapeError(
            f"{op}: bias must have shape ({out_channels},), one per out_channel, got "
            f"{fmt_shape(np.shape(bias))}"
        )
    stride = _ints(stride, spatial, op, "stride", 1)
    dilation = _ints(dilation, spatial, op, "dilation", 1)
    padding = _conv_padding(op, padding, kernel, dilation, stride)
    sizes = tuple(x_shape[2:])
    _check_fits(op, sizes, kernel, dilation, padding)
    out_sizes = _out_sizes(sizes, kernel, dilation, padding, stride)
    if spatial == 1:  # a 1-D signal is a 2-D image of height 1
        x, weight = unsqueeze(x, 2), unsqueeze(weight, 2)
        kernel, stride, dilation = (1, *kernel), (1, *stride), (1, *dilation)
        padding = ((0, 0), *padding)
    cols = unfold_row(x, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
    # Group g multiplies its (out_channels/groups, K) kernels by its (K, L) columns, where
    # K = in_channels/groups * kH * kW; the matmul broadcasts over the batch.
    k = group_channels * kernel[0] * kernel[1]
    cols = reshape(cols, (n, groups, k, math.prod(out_sizes)))
    kernels = reshape(weight, (groups, out_channels // groups, k))
    if bias is None:
        out = matmul_row(kernels, cols)
    else:
        out = matmul_add_row(kernels, cols, reshape(bias, (groups, out_channels // groups, 1)))
    return _unbatched(reshape(out, (n, out_channels, *out_sizes)), batched)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """2-D convolution (cross-correlation, as in PyTorch) of an (N, C, H, W) or (C, H, W)
    input with a weight of shape (out_channels, C/groups, kH, kW), plus ``bias``.

    ``stride``, ``dilation`` and ``padding`` take an int or a pair; ``padding`` also takes
    "valid" (none) and "same" (output as large as the input; stride 1 only; an odd total
    puts the extra row or column after). Padding is zeros. Computed as im2col: the `unfold`
    row gathers every window, then one matmul per group applies the kernels, so
    second derivatives come from the same rows.

    >>> import chainrule as cr
    >>> x = cr.arange(16.0).reshape(1, 1, 4, 4)
    >>> conv2d(x, cr.ones(1, 1, 2, 2), stride=2)
    tensor([[[[10., 18.],
              [42., 50.]]]])
    >>> conv2d(x, cr.ones(3, 1, 3, 3), padding="same").shape
    (1, 3, 4, 4)
    """
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups, 2)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """1-D convolution of an (N, C, L) or (C, L) input with a weight of shape
    (out_channels, C/groups, kL), plus ``bias``; the arguments are as in `conv2d`.

    >>> import chainrule as cr
    >>> conv1d(cr.tensor([[1.0, 2.0, 3.0, 4.0]]), cr.tensor([[[1.0, -1.0]]]))
    tensor([[-1., -1., -1.]])
    """
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups, 1)


# unfold and fold with torch.nn.functional's arguments (symmetric zero padding).


def _window_args(op: str, kernel_size, dilation, padding, stride) -> tuple:
    kernel = _ints(kernel_size, 2, op, "kernel_size", 1)
    dilation = _ints(dilation, 2, op, "dilation", 1)
    padding = tuple((p, p) for p in _ints(padding, 2, op, "padding", 0))
    stride = _ints(stride, 2, op, "stride", 1)
    return kernel, dilation, padding, stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Every sliding window of an (N, C, H, W) or (C, H, W) input as a column (im2col), as
    ``torch.nn.functional.unfold``: shape (N, C*kH*kW, L) with L windows in row-major order.

    >>> import chainrule as cr
    >>> unfold(cr.arange(9.0).reshape(1, 1, 3, 3), 2)
    tensor([[[0., 1., 3., 4.],
             [1., 2., 4., 5.],
             [3., 4., 6., 7.],
             [4., 5., 7., 8.]]])
    """
    x, batched = _batched(input, "unfold", 2)
    kernel, dilation, padding, stride = _window_args(
        "unfold", kernel_size, dilation, padding, stride
    )
    _check_fits("unfold", tuple(np.shape(x)[2:]), kernel, dilation, padding)
    out = unfold_row(x, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride)
    return _unbatched(out, batched)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns (N, C*kH*kW, L) or (C*kH*kW, L) summed back into an (N, C, H, W) image of
    ``output_size`` (col2im), as ``torch.nn.functional.fold``; the adjoint of `unfold`, so
    where windows overlap their values add.

    >>> import chainrule as cr
    >>> x = cr.ones(1, 1, 3, 3)
    >>> fold(unfold(x, 2), (3, 3), 2)
    tensor([[[[1., 2., 1.],
              [2., 4., 2.],
              [1., 2., 1.]]]])
    """
    shape = np.shape(input)
    if len(shape) not in (2, 3):
        raise ShapeError(
            f"fold: input must be (N, C*kH*kW, L) or unbatched (C*kH*kW, L), got shape "
            f"{fmt_shape(shape)}"
        )
    x, batched = (input, True) if len(shape) == 3 else (unsqueeze(input, 0), False)
    size = _ints(output_size, 2, "fold", "output_size", 1)
    kernel, dilation, padding, stride = _window_args("fold", kernel_size, dilation, padding, stride)
    _check_fits("fold", size, kernel, dilation, padding)
    blocks = _out_sizes(size, kernel, dilation, padding, stride)
    rows, columns = np.shape(x)[1:]
    if rows % (kernel[0] * kernel[1]) or columns != blocks[0] * blocks[1]:
        raise ShapeError(
            f"fold: input of shape {fmt_shape(shape)} does not fit: dim -2 must be a multiple "
            f"of kH*kW = {kernel[0] * kernel[1]} and dim -1 the number of windows, "
            f"{blocks[0]} x {blocks[1]} = {blocks[0] * blocks[1]}, of an output {size}"
        )
    out = fold_row(
        x, output_size=size, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride
    )
    return _unbatched(out, batched)


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
    kernel, stride, padding, dilation = _pool_args(op, kernel_size, stride, padding, dilation)
    n, c, h, w = np.shape(x)
    (oh, ow), (extra_h, extra_w) = _pool_sizes(
        op, (h, w), kernel, stride, padding, dilation, ceil_mode
    )
    (ph, pw), kw = padding, kernel[1]
    if ph or pw or extra_h or extra_w:
        x = pad(x, (pw, pw + extra_w, ph, ph + extra_h), value=_lowest(_dtype(x)))
    windows = _stacked_windows(x, kernel, stride, dilation, (oh, ow))
    positions = _first_max(windows.data)
    values = max_row(windows, dim=(0,), keepdim=False, indices=positions)
    values = _unbatched(values, batched)
    if not return_indices:
        return values
    # Window position (a, b) of output (i, j) is input row i*sh - ph + a*dh, column likewise.
    a, b = np.divmod(positions[0].astype(np.int64), kw)
    rows = np.arange(oh)[:, None] * stride[0] - ph + a * dilation[0]
    columns = np.arange(ow)[None, :] * stride[1] - pw + b * dilation[1]
    indices = (rows * w + columns).astype(np.int64)
    return values, Tensor._make(indices if batched else indices[0])


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


def _first_max(windows: np.ndarray) -> np.ndarray:
    """np.argmax(windows, axis=0, keepdims=True): where each slice along axis 0 has its first
    maximum, a NaN counting as the largest. Written with whole-slab operations, because
    np.argmax along a leading axis first copies the array to move that axis last."""
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
    _check_float(x, op)
    kernel, stride, padding, _ = _pool_args(op, kernel_size, stride, padding, 1)
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
