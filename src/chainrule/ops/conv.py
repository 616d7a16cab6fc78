"""Convolution: conv1d, conv2d, conv3d, the transposed conv_transpose1d/2d/3d, the
sliding-window rows unfold and fold, and channel_shuffle (which lets grouped convolutions mix
their groups).

Two rows do the sliding-window work: ``unfold`` (im2col: each window of an input, as a column)
and ``fold`` (col2im: columns added back into place). Each is the other's VJP and both are
linear, so convolution (unfold, then a matmul with the weights) is composed from rows and can
be differentiated again. A stride-1 convolution asks unfold for its wide columns (a window at
every column of the padded rows: contiguous runs to copy), and a 1x1 kernel needs no unfold.
Pooling is in `chainrule.ops.pooling`; modules live in `chainrule.nn.conv`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_shape
from ..linalg.products import _one_dtype, matmul, matmul_add_row, matmul_row
from ..op import LINEAR, Op
from .elementwise import cast
from .indexing import getitem, getitem_row, index_row
from .padding import pad, pad_row
from .shape import flip, permute, reshape, reshape_row, transpose, unsqueeze

__all__ = [
    "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d",
]  # fmt: skip


# The rows work on 4-D (N, C, H, W) arrays; ``padding`` is ((top, bottom), (left, right)) and
# the other parameters pairs of ints. The public functions check them first.


def _padded_zeros(x, padding, extra: int = 0):
    """(N, C, H, W) x in zeros, ``padding`` ((top, bottom), (left, right)) around it, as one
    (N, C, Hp*Wp + extra) array: the padded planes flattened, ``extra`` zeros after each.
    (One write into zeros: np.pad's Python costs more than the copy at these sizes.)"""
    (top, bottom), (left, right) = padding
    n, c, h, w = x.shape
    hp, wp = h + top + bottom, w + left + right
    flat = np.zeros((n, c, hp * wp + extra), x.dtype)
    flat[:, :, : hp * wp].reshape(n, c, hp, wp)[:, :, top : top + h, left : left + w] = x
    return flat


def _unfold(x, kernel_size, dilation, padding, stride, wide=False):
    """(N, C, H, W) -> (N, C*kH*kW, L): each window is a column, channels first, then the
    kernel rows and columns; the L = oH*oW windows in row-major order (as PyTorch).

    ``wide`` (stride 1): L = oH*Wp, a window at every column of the padded rows, those
    that run past a row's end (into the next row) included: then the columns of one kernel
    offset are one contiguous run of the flattened padded input, which copies as fast as
    memory goes, where the oH*oW windows are runs of oW. A convolution drops the extra
    columns' results (Wp - oW a row) after its product.
    """
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    n, c = x.shape[:2]
    if wide:
        (top, bottom), (left, right) = padding
        wp = x.shape[3] + left + right
        oh = x.shape[2] + top + bottom - dh * (kh - 1)
        flat = _padded_zeros(x, padding, dw * (kw - 1))
        step = flat.itemsize
        # windows[n, c, a, b, p] = flat[n, c, a*dh*Wp + b*dw + p], p < oH*Wp
        windows = np.lib.stride_tricks.as_strided(
            flat,
            (n, c, kh, kw, oh * wp),
            (*flat.strides[:2], dh * wp * step, dw * step, step),
            writeable=False,
        )
        return windows.reshape(n, c * kh * kw, oh * wp)
    padded = (
        _padded_zeros(x, padding).reshape(
            n, c, x.shape[2] + sum(padding[0]), x.shape[3] + sum(padding[1])
        )
        if np.any(padding)
        else x
    )
    spans = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    # A strided view, no copy: windows[n, c, i, j, a, b] = padded[n, c, i*sh + a*dh, j*sw + b*dw]
    windows = sliding_window_view(padded, spans, axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]
    oh, ow = windows.shape[2:4]
    out = windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)
    # A 1x1 kernel can leave a view of x: the output is a new tensor, so it gets its own memory.
    return out.copy() if np.may_share_memory(out, x) else out


def _fold(cols, output_size, kernel_size, dilation, padding, stride, wide=False):
    """(N, C*kH*kW, L) -> (N, C, H, W): the adjoint of `_unfold`; overlapping windows add.

    One vectorised add per kernel offset (kH*kW of them): offset (a, b) of every window lands
    on a strided grid of the padded output (for ``wide`` columns, on one contiguous run of
    the flattened padded output), and no two windows hit one element at one offset.
    """
    (kh, kw), (dh, dw), (sh, sw) = kernel_size, dilation, stride
    (top, bottom), (left, right) = padding
    h, w = output_size
    hp, wp = h + top + bottom, w + left + right
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    if wide:
        length = cols.shape[2]  # oH * Wp
        blocks = cols.reshape(n, c, kh, kw, length)
        flat = np.zeros((n, c, hp * wp + dw * (kw - 1)), cols.dtype)
        for a in range(kh):
            for b in range(kw):
                start = a * dh * wp + b * dw
                flat[:, :, start : start + length] += blocks[:, :, a, b]
        out = flat[:, :, : hp * wp].reshape(n, c, hp, wp)
        return np.ascontiguousarray(out[:, :, top : top + h, left : left + w])
    oh = (hp - dh * (kh - 1) - 1) // sh + 1
    ow = (wp - dw * (kw - 1) - 1) // sw + 1
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    out = np.zeros((n, c, hp, wp), cols.dtype)
    for a in range(kh):
        for b in range(kw):
            rows = slice(a * dh, a * dh + sh * (oh - 1) + 1, sh)
            columns = slice(b * dw, b * dw + sw * (ow - 1) + 1, sw)
            out[:, :, rows, columns] += blocks[:, :, a, b]
    return np.ascontiguousarray(out[:, :, top : top + h, left : left + w])


def _batch_samples(op: Op, values, batched, params):
    # unfold and fold work on fixed-rank arrays whose first dim is a batch of independent
    # samples ((N, C, H, W) and (N, C*kH*kW, L)): the vmap batch joins that dim.
    (x,) = values
    merged = x.reshape((x.shape[0] * x.shape[1], *x.shape[2:]))
    out = op(merged, **params)
    return out.reshape((x.shape[0], x.shape[1], *out.shape[1:]))


# fmt: off
unfold_row = Op("unfold", _unfold, jvp=LINEAR, kind="window", batch=_batch_samples,
                doc="im2col: each sliding window of (N, C, H, W) x as a column of (N, C*kH*kW, L).",
                vjp=(lambda g, x_shape, kernel_size, dilation, padding, stride, wide:
                     xp.run(fold_row, g, output_size=x_shape[2:], kernel_size=kernel_size,
                            dilation=dilation, padding=padding, stride=stride, wide=wide),))
fold_row = Op("fold", _fold, jvp=LINEAR, kind="window", batch=_batch_samples,
              doc="col2im: columns added back into place, the adjoint of unfold.",
              vjp=(lambda g, kernel_size, dilation, padding, stride, wide:
                   xp.run(unfold_row, g, kernel_size=kernel_size, dilation=dilation,
                          padding=padding, stride=stride, wide=wide),))
# fmt: on


# Checking arguments.


def _ints(value, n: int, op: str, what: str, minimum: int) -> tuple[int, ...]:
    """An int or a sequence of n ints as a tuple of n ints, each at least ``minimum``."""
    if type(value) is int and value >= minimum:  # the common case, first
        return (value,) * n
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


_LAYOUTS = {1: ("(N, C, L)", "(C, L)"), 2: ("(N, C, H, W)", "(C, H, W)"),
            3: ("(N, C, D, H, W)", "(C, D, H, W)")}  # fmt: skip


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
    kernel_names = ", ".join({1: ("kL",), 2: ("kH", "kW"), 3: ("kD", "kH", "kW")}[spatial])
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
    _one_dtype(op, {"input": x, "weight": weight, "bias": bias})
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
    # The columns: (N, C*kernel, rows * width) with width the output's last size, or wider
    # (unfold's wide columns, whose extra results are dropped after the product).
    rows, width = math.prod(out_sizes[:-1]), out_sizes[-1]
    if spatial == 3:
        cols = _unfold3d(x, kernel, dilation, padding, stride, out_sizes)
    elif all(k == 1 for k in kernel) and not np.any(padding):
        # A 1x1 kernel's windows are the input's pixels (every stride-th one): no im2col.
        steps = (slice(None), slice(None), *(slice(None, None, s) for s in stride))
        cols = x if stride == (1, 1) else getitem_row(x, index=steps)
    else:
        # Wide columns save the fold's work in the input's gradient, and cost the crop: for
        # one input channel (a first layer on images) the crop costs more (W5: 20%).
        wide = stride == (1, 1) and group_channels > 1
        if wide:
            width = np.shape(x)[-1] + sum(padding[1])
        cols = unfold_row(x, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride,
                          wide=wide)  # fmt: skip
    # Group g multiplies its (out_channels/groups, K) kernels by its (K, L) columns, where
    # K = in_channels/groups * kH * kW; the matmul broadcasts over the batch.
    k = group_channels * math.prod(kernel)
    cols = _shaped(cols, (n, groups, k, rows * width))
    kernels = _shaped(weight, (groups, out_channels // groups, k))
    if bias is None:
        out = matmul_row(kernels, cols)
    else:
        out = matmul_add_row(kernels, cols, reshape_row(bias, shape=(groups, -1, 1)))
    if width != out_sizes[-1]:
        crop = (slice(None), slice(None), slice(None), slice(0, out_sizes[-1], None))
        out = getitem_row(_shaped(out, (n, out_channels, rows, width)), index=crop)
    return _unbatched(_shaped(out, (n, out_channels, *out_sizes)), batched)


def _shaped(x, shape: tuple):
    """``x`` reshaped to ``shape``, which has its number of elements (no check needed)."""
    return x if np.shape(x) == shape else reshape_row(x, shape=shape)


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


def _unfold3d(x, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple, outs: tuple):
    """im2col in 3-D, composed: pad, then one gather of every window by an index grid, giving
    (N, C*kD*kH*kW, oD*oH*oW) in `unfold`'s order (its adjoint is the gather's scatter-add)."""
    if any(before or after for before, after in padding):
        x = pad_row(x, widths=((0, 0), (0, 0), *padding), value=0)
    grids = []
    for d, (k, dil, s, out) in enumerate(zip(kernel, dilation, stride, outs)):
        positions = np.arange(out)[:, None] * s + np.arange(k)[None, :] * dil  # (out, k)
        shape = [1] * 6
        shape[d], shape[3 + d] = out, k
        grids.append(positions.reshape(shape))
    windows = index_row(x, index=(Ellipsis, *grids))  # (N, C, oD, oH, oW, kD, kH, kW)
    n, c = np.shape(x)[:2]
    windows = permute(windows, (0, 1, 5, 6, 7, 2, 3, 4))
    return reshape(windows, (n, c * math.prod(kernel), math.prod(outs)))


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """3-D convolution of an (N, C, D, H, W) or (C, D, H, W) input with a weight of shape
    (out_channels, C/groups, kD, kH, kW), plus ``bias``; the arguments are as in `conv2d`.

    The windows are gathered by an index grid (a 3-D im2col composed from rows), then one
    matmul per group applies the kernels.

    >>> import chainrule as cr
    >>> conv3d(cr.ones(1, 1, 3, 3, 3), cr.ones(2, 1, 2, 2, 2)).shape
    (1, 2, 2, 2, 2)
    """
    return _conv("conv3d", input, weight, bias, stride, padding, dilation, groups, 3)


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
    out = unfold_row(
        x, kernel_size=kernel, dilation=dilation, padding=padding, stride=stride, wide=False
    )
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
    out = fold_row(x, output_size=size, kernel_size=kernel, dilation=dilation, padding=padding,
                   stride=stride, wide=False)  # fmt: skip
    return _unbatched(out, batched)


# Transposed convolution: the adjoint of convolution in its input.


def _conv_transpose(op, input, weight, bias, stride, padding, output_padding, groups, dilation,
                    spatial: int):  # fmt: skip
    """Each input pixel scatters weight-scaled kernels into the output: one matmul makes every
    column, `fold` adds them onto the full canvas, which is then cropped by ``padding`` and
    extended by ``output_padding``."""
    x, batched = _batched(input, op, spatial)
    x_shape, w_shape = np.shape(x), np.shape(weight)
    if len(w_shape) != spatial + 2:
        raise ShapeError(
            f"{op}: weight must have shape (in_channels, out_channels/groups, *kernel) with "
            f"{spatial} kernel dims, got {fmt_shape(w_shape)}"
        )
    if not isinstance(groups, numbers.Integral) or isinstance(groups, bool) or groups < 1:
        raise DomainError(f"{op}: groups must be a positive int, got {groups!r}")
    n, c = x_shape[:2]
    if c != w_shape[0] or c % groups:
        raise ShapeError(
            f"{op}: input has {c} channels but weight {fmt_shape(w_shape)} expects "
            f"{w_shape[0]} (its dim 0, in_channels), which groups={groups} must divide"
        )
    out_channels, kernel = w_shape[1] * groups, tuple(w_shape[2:])
    if bias is not None and np.shape(bias) != (out_channels,):
        raise ShapeError(
            f"{op}: bias must have shape ({out_channels},), one per out_channel, got "
            f"{fmt_shape(np.shape(bias))}"
        )
    _one_dtype(op, {"input": x, "weight": weight})
    if bias is not None and _dtype(bias) != _dtype(x):
        bias = cast(bias, dtype=_dtype(x))  # PyTorch casts the bias to the output's dtype
    stride = _ints(stride, spatial, op, "stride", 1)
    padding = _ints(padding, spatial, op, "padding", 0)
    extra = _ints(output_padding, spatial, op, "output_padding", 0)
    dilation = _ints(dilation, spatial, op, "dilation", 1)
    if any(e >= s and e >= d for e, s, d in zip(extra, stride, dilation)):
        raise DomainError(
            f"{op}: output_padding {extra} must be smaller than either stride {stride} or "
            f"dilation {dilation}"
        )
    sizes = tuple(x_shape[2:])
    canvas = tuple(
        (i - 1) * s + span for i, s, span in zip(sizes, stride, _spans(kernel, dilation))
    )
    if any(size - 2 * p + e < 1 for size, p, e in zip(canvas, padding, extra)):
        raise ShapeError(
            f"{op}: input of size {fmt_shape(sizes)} with padding {padding} gives a "
            "non-positive output size"
        )
    if spatial == 3:
        out = _transpose_by_conv(x, weight, bias, stride, padding, extra, groups, dilation)
        return _unbatched(out, batched)
    if spatial == 1:
        kernel, stride, dilation, canvas = (1, *kernel), (1, *stride), (1, *dilation), (1, *canvas)
        padding, extra = (0, *padding), (0, *extra)
    k = w_shape[1] * math.prod(kernel)
    columns = matmul(
        reshape(weight, (groups, c // groups, k)).mT,
        reshape(x, (n, groups, c // groups, math.prod(sizes))),
    )  # (N, groups, out_channels/groups * kernel, L)
    columns = reshape(columns, (n, out_channels * math.prod(kernel), math.prod(sizes)))
    out = fold_row(columns, output_size=canvas, kernel_size=kernel, dilation=dilation,
                   padding=((0, 0), (0, 0)), stride=stride, wide=False)  # fmt: skip
    amounts = [a for p, e in zip(reversed(padding), reversed(extra)) for a in (-p, e - p)]
    if any(amounts):
        out = pad(out, amounts)
    if spatial == 1:
        out = reshape(out, (n, out_channels, out.shape[-1]))
    if bias is not None:
        out = out + reshape(bias, (out_channels,) + (1,) * spatial)
    return _unbatched(out, batched)


def conv_transpose2d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1
):
    """The transposed 2-D convolution (the gradient of `conv2d` in its input) of an
    (N, C, H, W) or (C, H, W) input with a weight of shape (C, out_channels/groups, kH, kW).

    The output is (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1
    high (and likewise wide); ``output_padding`` (below stride or dilation) adds rows and
    columns at the end.

    >>> import chainrule as cr
    >>> conv_transpose2d(cr.ones(1, 1, 2, 2), cr.ones(1, 1, 2, 2), stride=2)
    tensor([[[[1., 1., 1., 1.],
              [1., 1., 1., 1.],
              [1., 1., 1., 1.],
              [1., 1., 1., 1.]]]])
    """
    return _conv_transpose("conv_transpose2d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 2)  # fmt: skip


def _transpose_by_conv(x, weight, bias, stride, padding, extra, groups, dilation):
    """The transposed convolution as a plain one (3-D, where no fold row exists): zeros
    inserted between the input's elements (stride - 1 of them), each side padded by
    dilation * (k - 1) - padding (output_padding more after; negative amounts crop), then
    `conv3d` with the kernel flipped and its in/out channels swapped within each group."""
    n, c = np.shape(x)[:2]
    for d, s in enumerate(stride):
        if s > 1:
            size, dim = np.shape(x)[2 + d], 3 + d
            spread = pad(unsqueeze(x, dim), [0, 0] * (x.ndim - dim) + [0, s - 1])
            merged = np.shape(x)[: 2 + d] + (size * s,) + np.shape(x)[3 + d :]
            crop = (slice(None),) * (2 + d) + (slice(0, (size - 1) * s + 1),)
            x = getitem(reshape(spread, merged), crop)
    kernel = np.shape(weight)[2:]
    amounts = []
    for k, p, e, dil in zip(reversed(kernel), reversed(padding), reversed(extra),
                            reversed(dilation)):  # fmt: skip
        amounts += [dil * (k - 1) - p, dil * (k - 1) - p + e]
    x = pad(x, amounts) if any(amounts) else x
    w_shape = np.shape(weight)
    grouped = reshape(weight, (groups, c // groups, w_shape[1], *kernel))
    swapped = reshape(transpose(grouped, 1, 2), (w_shape[1] * groups, c // groups, *kernel))
    return conv3d(x, flip(swapped, (2, 3, 4)), bias, dilation=dilation, groups=groups)


def conv_transpose3d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1
):
    """The transposed 3-D convolution of an (N, C, D, H, W) or (C, D, H, W) input with a
    weight of shape (C, out_channels/groups, kD, kH, kW); the arguments are as in
    `conv_transpose2d`. Computed as a `conv3d` of the input spread out by the stride.

    >>> import chainrule as cr
    >>> conv_transpose3d(cr.ones(1, 1, 2, 2, 2), cr.ones(1, 1, 1, 1, 2), stride=(1, 1, 2))[0, 0, 0]
    tensor([[1., 1., 1., 1.],
            [1., 1., 1., 1.]])
    """
    return _conv_transpose("conv_transpose3d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 3)  # fmt: skip


def channel_shuffle(input, groups: int):
    """The channels (dim 1) of an (N, C, ...) input regrouped: C = groups x k channels read
    as a (groups, k) grid and written out column by column (ShuffleNet's shuffle, which lets
    grouped convolutions mix information across groups).

    >>> import chainrule as cr
    >>> channel_shuffle(cr.arange(6.0).reshape(1, 6, 1), 2).flatten()
    tensor([0., 3., 1., 4., 2., 5.])
    """
    shape = np.shape(input)
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise DomainError(f"channel_shuffle: groups must be a positive int, got {groups!r}")
    if len(shape) < 3 or shape[1] % groups:
        raise ShapeError(
            f"channel_shuffle: input must be (N, C, *) with C divisible by groups={groups}, "
            f"got shape {fmt_shape(shape)}"
        )
    grid = reshape(input, (shape[0], groups, shape[1] // groups, *shape[2:]))
    return reshape(transpose(grid, 1, 2), shape)


def conv_transpose1d(
    input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1, dilation=1
):
    """The transposed 1-D convolution of an (N, C, L) or (C, L) input with a weight of shape
    (C, out_channels/groups, kL); the arguments are as in `conv_transpose2d`.

    >>> import chainrule as cr
    >>> conv_transpose1d(cr.tensor([[1.0, 2.0]]), cr.tensor([[[1.0, 1.0, 1.0]]]))
    tensor([[1., 3., 3., 2.]])
    """
    return _conv_transpose("conv_transpose1d", input, weight, bias, stride, padding,
                           output_padding, groups, dilation, 1)  # fmt: skip
