"""The normalisation functions of `chainrule.nn.functional` (batch, instance, layer, group,
rms and local response norms, and Lua Torch's cross_map_lrn2d), composed from ops. Their modules
are in `chainrule.nn.modules`' batchnorm, instancenorm and normalization."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...autograd import no_grad
from ...errors import DomainError, ShapeError, fmt_shape
from ...ops import normalizers

__all__ = [
    "batch_norm",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "local_response_norm",
    "rms_norm",
]


def layer_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the last dims (``normalized_shape``) to mean 0 and variance 1 (biased),
    then scale by ``weight`` and shift by ``bias``.

    >>> import chainrule as cr
    >>> layer_norm(cr.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    input_shape = np.shape(input)
    if not shape or input_shape[len(input_shape) - len(shape) :] != shape:
        raise ShapeError(
            f"layer_norm: input of shape {fmt_shape(input_shape)} does not end in "
            f"normalized_shape {fmt_shape(shape)}"
        )
    dims = tuple(range(-len(shape), 0))
    if _affine_row_fits(input, shape, weight, bias):
        dtype = np.dtype(input.dtype)
        weight = np.ones(shape, dtype) if weight is None else weight
        bias = np.zeros(shape, dtype) if bias is None else bias
        return normalizers.layer_norm_row(input, weight, bias, dims=dims, eps=eps)
    out = normalizers.standardize_row(input, dims=dims, eps=eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def _affine_row_fits(input, shape: tuple, weight, bias) -> bool:
    """Whether layer norm's weight and bias (one at least) are Tensors of the normalized shape
    and the input's float dtype, as `layer_norm_row` takes them; otherwise they broadcast as
    ops."""
    if weight is None and bias is None:
        return False
    dtype = np.dtype(input.dtype)
    if dtype.kind != "f":
        return False
    for p in (weight, bias):  # a loop, not all(): this runs at every call
        if p is not None and not (isinstance(p, Tensor) and p.shape == shape and p.dtype == dtype):
            return False
    return True


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (dim 1) over the batch and any spatial dims, then scale and shift.

    Training uses the batch's statistics and updates the running ones in place (when given):
    running = (1 - momentum) * running + momentum * batch, with the unbiased variance, as in
    PyTorch. Otherwise the running statistics normalise.

    >>> import chainrule as cr
    >>> mean, var = cr.zeros(1), cr.ones(1)
    >>> batch_norm(cr.tensor([[1.0], [3.0]]), mean, var, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    >>> mean, var
    (tensor([0.2000]), tensor([1.1000]))
    """
    shape = np.shape(input)
    if len(shape) < 2:
        raise ShapeError(f"batch_norm: input must have shape (N, C, ...), got {fmt_shape(shape)}")
    channels = shape[1]
    for name, tensor in (("running_mean", running_mean), ("running_var", running_var),
                         ("weight", weight), ("bias", bias)):  # fmt: skip
        if tensor is not None and np.shape(tensor) != (channels,):
            raise ShapeError(
                f"batch_norm: {name} has shape {fmt_shape(np.shape(tensor))} but the input "
                f"of shape {fmt_shape(shape)} has {channels} channels"
            )
    per_channel = (1, channels) + (1,) * (len(shape) - 2)
    if training:
        count = int(np.prod(shape)) // max(channels, 1)
        if count <= 1:
            raise DomainError(
                f"batch_norm: expected more than 1 value per channel when training, got input "
                f"of shape {fmt_shape(shape)}"
            )
        dims = (-len(shape), *range(2 - len(shape), 0))  # all but the channel dim
        if np.dtype(input.dtype).kind == "f":
            return _batch_norm_training(input, running_mean, running_var, weight, bias,
                                        momentum, eps, dims, count)  # fmt: skip
        mean, var = input.mean(dims), input.var(dims, correction=0)
        with no_grad():  # ops, not NumPy on the arrays: a compiled step replays the updates
            # running + momentum * (batch - running) = (1 - momentum) * running + ...
            if running_mean is not None:
                running_mean.lerp_(mean, momentum)
            if running_var is not None:
                running_var.lerp_(var * (count / (count - 1)), momentum)  # unbiased
    else:
        if running_mean is None or running_var is None:
            raise DomainError(
                "batch_norm: running_mean and running_var are needed when training=False"
            )
        if _eval_row_fits(input, running_mean, running_var, weight, bias):
            dtype = np.dtype(input.dtype)
            weight = np.ones(channels, dtype) if weight is None else weight
            bias = np.zeros(channels, dtype) if bias is None else bias
            dims = (-len(shape), *range(2 - len(shape), 0))
            return normalizers.batch_norm_eval_row(input, weight, bias, running_mean,
                                                   running_var, dims=dims, eps=eps)  # fmt: skip
        mean, var = running_mean, running_var
    # PyTorch's formula: a scale and a shift per channel (small), then x * scale + shift, two
    # passes over the input where (x - mean) * rstd * weight + bias takes four.
    scale = ops.rsqrt(var + eps)
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale if bias is None else bias - mean * scale
    return input * scale.reshape(per_channel) + shift.reshape(per_channel)


def _eval_row_fits(input, running_mean, running_var, weight, bias) -> bool:
    """Whether eval mode runs as `batch_norm_eval_row`: every operand of the input's float
    dtype, and running statistics without gradient (the row gives them none)."""
    dtype = np.dtype(input.dtype)
    if dtype.kind != "f" or not all(
        isinstance(t, Tensor) and not t.requires_grad for t in (running_mean, running_var)
    ):
        return False
    return all(
        t is None or np.dtype(t.dtype) == dtype for t in (running_mean, running_var, weight, bias)
    )


def _batch_norm_training(
    input, running_mean, running_var, weight, bias, momentum, eps, dims, count
) -> Tensor:
    """Batch norm on the batch's statistics, computed once (`batch_norm_stats_row`): the
    running statistics move towards them, and `batch_norm_row` normalises by them."""
    with no_grad():  # ops, not NumPy on the arrays: a compiled step replays the updates
        stats = normalizers.batch_norm_stats_row(input, dims=dims)
        for k, running, factor in ((0, running_mean, 1), (1, running_var, count / (count - 1))):
            if running is not None:  # the variance unbiased
                running._inplace(_running_update(k, momentum, factor), stats, "batch_norm")
    channels, dtype = np.shape(input)[1], np.dtype(input.dtype)
    if weight is None:
        weight = np.ones(channels, dtype)
    if bias is None:
        bias = np.zeros(channels, dtype)
    return normalizers.batch_norm_row(input, weight, bias, stats, dims=dims, eps=eps)


def _running_update(k: int, momentum: float, factor: float):
    """The in-place update of a running statistic from row k of the batch's statistics."""
    return lambda running, stats: normalizers.batch_norm_running_row(
        running, stats, k=k, momentum=momentum, factor=factor
    )


def _check_channels(op: str, shape: tuple, tensors: dict) -> int:
    """The channel count (dim 1) of an (N, C, ...) input, with each per-channel tensor checked."""
    if len(shape) < 2:
        raise ShapeError(f"{op}: input must have shape (N, C, ...), got {fmt_shape(shape)}")
    channels = shape[1]
    for name, tensor in tensors.items():
        if tensor is not None and np.shape(tensor) != (channels,):
            raise ShapeError(
                f"{op}: {name} has shape {fmt_shape(np.shape(tensor))} but the input of shape "
                f"{fmt_shape(shape)} has {channels} channels"
            )
    return channels


def _affine(out: Tensor, weight, bias, ndim: int) -> Tensor:
    """out * weight + bias, each of shape (C,) broadcast over dim 1 of an ``ndim``-d input."""
    per_channel = (-1,) + (1,) * (ndim - 2)
    if weight is not None:
        out = out * weight.reshape(per_channel)
    return out if bias is None else out + bias.reshape(per_channel)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each group of C / num_groups channels of an (N, C, ...) input over its
    channels and spatial dims (biased variance), then scale and shift per channel.

    >>> import chainrule as cr
    >>> group_norm(cr.tensor([[1.0, 3.0, 0.0, 4.0]]), 2)
    tensor([[-1.0000,  1.0000, -1.0000,  1.0000]])
    """
    shape = np.shape(input)
    channels = _check_channels("group_norm", shape, {"weight": weight, "bias": bias})
    if not isinstance(num_groups, int) or num_groups < 1 or channels % num_groups:
        raise DomainError(
            f"group_norm: num_groups={num_groups!r} must be a positive int dividing the "
            f"{channels} channels of the input of shape {fmt_shape(shape)}"
        )
    grouped = input.reshape(shape[0], num_groups, -1)
    mean = grouped.mean(-1, keepdim=True)
    var = grouped.var(-1, correction=0, keepdim=True)
    out = ((grouped - mean) * ops.rsqrt(var + eps)).reshape(shape)
    return _affine(out, weight, bias, len(shape))


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each example of an (N, C, ...) input over its spatial dims,
    then scale and shift per channel.

    With ``use_input_stats`` the running statistics (when given) move towards the mean over
    the batch of the examples' means and unbiased variances, as PyTorch; without it they
    normalise instead.

    >>> import chainrule as cr
    >>> instance_norm(cr.tensor([[[1.0, 3.0], [0.0, 4.0]]]))
    tensor([[[-1.0000,  1.0000],
             [-1.0000,  1.0000]]])
    """
    shape = np.shape(input)
    tensors = {"running_mean": running_mean, "running_var": running_var, "weight": weight,
               "bias": bias}  # fmt: skip
    channels = _check_channels("instance_norm", shape, tensors)
    dims = tuple(range(2, len(shape)))
    count = int(np.prod(shape[2:], dtype=np.int64))
    if use_input_stats:
        if count <= 1:
            raise DomainError(
                f"instance_norm: expected more than 1 spatial element per channel, got input "
                f"of shape {fmt_shape(shape)}"
            )
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, correction=0, keepdim=True)
        with no_grad():  # ops, not NumPy on the arrays: a compiled step replays the updates
            if running_mean is not None:
                batch_mean = mean.reshape(shape[0], channels).mean(0)
                running_mean.copy_(running_mean * (1 - momentum) + batch_mean * momentum)
            if running_var is not None:
                unbiased = var.reshape(shape[0], channels).mean(0) * (count / (count - 1))
                running_var.copy_(running_var * (1 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise DomainError(
                "instance_norm: running_mean and running_var are needed when use_input_stats=False"
            )
        per_channel = (1, channels) + (1,) * len(dims)
        mean, var = running_mean.reshape(per_channel), running_var.reshape(per_channel)
    return _affine((input - mean) * ops.rsqrt(var + eps), weight, bias, len(shape))


def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """x / sqrt(mean(x²) + eps) over the last dims (``normalized_shape``), times ``weight``.

    ``eps=None`` takes the machine epsilon of the input's dtype, as PyTorch.

    >>> import chainrule as cr
    >>> rms_norm(cr.tensor([[3.0, -4.0]]), [2], eps=0.0)
    tensor([[ 0.8485, -1.1314]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    input_shape = np.shape(input)
    if not shape or input_shape[len(input_shape) - len(shape) :] != shape:
        raise ShapeError(
            f"rms_norm: input of shape {fmt_shape(input_shape)} does not end in "
            f"normalized_shape {fmt_shape(shape)}"
        )
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    dims = tuple(range(-len(shape), 0))
    out = input * ops.rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * weight


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Each element divided by (k + alpha * mean of the squares of ``size`` neighbouring
    channels) ** beta, over an (N, C, ...) input: the window covers size // 2 channels
    before and (size - 1) // 2 after (zeros past the edges count in the mean), as PyTorch.

    >>> import chainrule as cr
    >>> local_response_norm(cr.tensor([[[2.0], [0.0]]]), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6667],
             [0.0000]]])
    """
    shape = np.shape(input)
    if len(shape) < 3:
        raise ShapeError(
            f"local_response_norm: input must have 3 or more dims, (N, C, ...), got shape "
            f"{fmt_shape(shape)}"
        )
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise DomainError(f"local_response_norm: size must be a positive int, got {size!r}")
    if not np.prod(shape):
        return input
    squares = (input * input).reshape(shape[0], shape[1], -1)
    padded = ops.pad(squares, (0, 0, size // 2, (size - 1) // 2))
    means = padded.unfold(1, size, 1).mean(-1).reshape(shape)
    return input / (means * alpha + k) ** beta


def _cross_map_windows(channels: int, size: int) -> np.ndarray:
    """The (C, C) 0/1 matrix of which channels' squares PyTorch's CrossMapLRN2d sums for each
    channel: its running window, replayed step by step (the first channel, once added, is
    never taken out again; a window of even ``size`` covers size - 1 channels)."""
    reach = (size - 1) // 2 + 1
    windows = np.zeros((channels, channels))
    windows[0, : min(reach, channels)] = 1
    for c in range(1, channels):
        windows[c] = windows[c - 1]
        if c < channels - reach + 1:
            windows[c, c + reach - 1] += 1
        if c > reach:
            windows[c, c - reach] -= 1
    return windows


def cross_map_lrn2d(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Local response normalisation of an (N, C, H, W) input as ``torch.nn.CrossMapLRN2d``
    (the Lua Torch layer): x * (k + alpha / size * windowed sum of squares) ** -beta, with
    that layer's own windows (`_cross_map_windows`), which differ from `local_response_norm`.

    >>> import chainrule as cr
    >>> cross_map_lrn2d(cr.tensor([[[[2.0]], [[0.0]]]]), 3, alpha=3.0, beta=1.0)
    tensor([[[[0.4000]],
    <BLANKLINE>
             [[0.0000]]]])
    """
    shape = np.shape(input)
    if len(shape) != 4:
        raise ShapeError(f"CrossMapLRN2d: input must be 4-D (N, C, H, W), got {fmt_shape(shape)}")
    windows = _cross_map_windows(shape[1], size).astype(input.dtype)
    sums = ops.einsum("cj,njhw->nchw", windows, input * input)
    return input * (sums * (alpha / size) + k) ** -beta
