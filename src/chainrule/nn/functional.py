"""Functional forms of layers and losses, with PyTorch's names: ``import chainrule.nn.functional
as F``. Each is composed from the differentiable ops in `chainrule.ops` (so higher derivatives
come free); convolution and pooling are re-exported from `chainrule.ops.conv`. The modules that
hold weights are in `chainrule.nn.layers` and its neighbours.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from .. import ops
from ..autograd import no_grad
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..ops.conv import adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, max_pool2d
from ..tensor import Tensor, default_generator

__all__ = [
    "adaptive_avg_pool2d", "avg_pool2d", "conv1d", "conv2d", "max_pool2d",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "dropout", "elu", "embedding", "gelu", "huber_loss", "l1_loss", "layer_norm", "leaky_relu",
    "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
    "tanh",
]  # fmt: skip

_REDUCTIONS = ("none", "mean", "sum")


# Shared checks.


def _array(x) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x)


def _in_place(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    """``out``, written back into ``input`` when ``inplace`` (the graph records the copy)."""
    return input.copy_(out) if inplace else out


def _check_probability(p, op: str, name: str = "p") -> float:
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not 0 <= p <= 1:
        raise DomainError(f"{op}: {name} must be a probability between 0 and 1, got {p!r}")
    return float(p)


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in _REDUCTIONS:
        raise DomainError(f"{op}: reduction must be 'none', 'mean' or 'sum', got {reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _check_same_shape(input: Tensor, target, op: str) -> None:
    if np.shape(input) != np.shape(target):
        raise ShapeError(
            f"{op}: input has shape {fmt_shape(np.shape(input))} but target has shape "
            f"{fmt_shape(np.shape(target))}; they must be the same"
        )


def _check_broadcast_target(input: Tensor, target, op: str) -> None:
    """PyTorch broadcasts a regression target of another shape, with a warning."""
    shape, target_shape = np.shape(input), np.shape(target)
    if shape == target_shape:
        return
    try:
        np.broadcast_shapes(shape, target_shape)
    except ValueError:
        raise ShapeError(
            f"{op}: input has shape {fmt_shape(shape)} but target has shape "
            f"{fmt_shape(target_shape)}, which do not broadcast"
        ) from None
    warnings.warn(
        f"{op}: target shape {fmt_shape(target_shape)} differs from input shape "
        f"{fmt_shape(shape)}; broadcasting them is likely a mistake",
        UserWarning,
        stacklevel=3,
    )


# Activations.


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0), elementwise; the gradient at 0 is 0.

    >>> import chainrule as cr
    >>> relu(cr.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    return _in_place(input, ops.relu(input), inplace)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x.

    >>> import chainrule as cr
    >>> leaky_relu(cr.tensor([-1.0, 2.0]), 0.1)
    tensor([-0.1000,  2.0000])
    """
    return _in_place(input, ops.leaky_relu(input, negative_slope), inplace)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF; ``approximate="tanh"`` uses the tanh formula.

    >>> import chainrule as cr
    >>> gelu(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8413])
    """
    return ops.gelu(input, approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (swish).

    >>> import chainrule as cr
    >>> silu(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.7311])
    """
    return _in_place(input, ops.silu(input), inplace)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), exact in both tails.

    >>> import chainrule as cr
    >>> sigmoid(cr.tensor([0.0]))
    tensor([0.5000])
    """
    return ops.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """The hyperbolic tangent, elementwise.

    >>> import chainrule as cr
    >>> tanh(cr.tensor([0.0]))
    tensor([0.])
    """
    return ops.tanh(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta; x itself where beta * x > threshold, as in PyTorch.

    >>> import chainrule as cr
    >>> softplus(cr.tensor([0.0, 30.0]))
    tensor([ 0.6931, 30.0000])
    """
    scaled = input if beta == 1 else input * beta
    smooth = ops.softplus(scaled) if beta == 1 else ops.softplus(scaled) / beta
    return ops.where(scaled > threshold, input, smooth)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1); the slope at 0 is alpha, as in PyTorch.

    >>> import chainrule as cr
    >>> elu(cr.tensor([-1.0, 2.0]))
    tensor([-0.6321,  2.0000])
    """
    # Clamping first keeps exp from overflowing (and its gradient from being inf * 0) for
    # large x, whose branch where() discards anyway.
    negative = ops.expm1(ops.clamp(input, max=0.0)) * alpha
    return _in_place(input, ops.where(input > 0, input, negative), inplace)


def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """exp(x) normalised to sum to 1 along ``dim`` (the input is cast to ``dtype`` first).

    >>> import chainrule as cr
    >>> softmax(cr.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    return ops.softmax(input if dtype is None else input.to(dtype), dim)


def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    """log(softmax(x)) along ``dim``, as x - logsumexp(x): finite for inputs like ±1000.

    >>> import chainrule as cr
    >>> log_softmax(cr.tensor([0.0, 1000.0]), dim=0)
    tensor([-1000.,     0.])
    """
    return ops.log_softmax(input if dtype is None else input.to(dtype), dim)


# Layers without state.


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, with weight of shape (out_features, in_features).

    >>> import chainrule as cr
    >>> linear(cr.ones(2, 3), cr.ones(4, 3), cr.zeros(4)).shape
    (2, 4)
    """
    shape, weight_shape = np.shape(input), np.shape(weight)
    if len(weight_shape) != 2:
        raise ShapeError(
            f"linear: weight must have shape (out_features, in_features), got "
            f"{fmt_shape(weight_shape)}"
        )
    if not shape or shape[-1] != weight_shape[1]:
        raise ShapeError(
            f"linear: input has shape {fmt_shape(shape)} but weight has shape "
            f"{fmt_shape(weight_shape)}; the input's last dim must be in_features = "
            f"{weight_shape[1]}"
        )
    out = ops.matmul(input, weight.mT)
    return out if bias is None else out + bias


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p) (training).

    The mask comes from `chainrule.default_generator()`, so `chainrule.manual_seed` repeats
    it; the numbers differ from PyTorch's. Outside training (or for p = 0) the input passes.

    >>> import chainrule as cr
    >>> out = dropout(cr.ones(1000), p=0.25)
    >>> sorted(set(out.tolist()))  # dropped, or scaled by 1 / 0.75
    [0.0, 1.3333333730697632]
    """
    p = _check_probability(p, "dropout")
    if not training or p == 0:
        return input
    if p == 1:
        return _in_place(input, input * 0.0, inplace)
    keep = default_generator().random(np.shape(input)) >= p  # kept with probability 1 - p
    scale = keep.astype(input.dtype) * (1.0 / (1.0 - p))
    return _in_place(input, input * scale.astype(input.dtype), inplace)


def _indices(x, op: str, what: str) -> np.ndarray:
    """The integer array of an index tensor, or a clear error for another dtype."""
    array = _array(x)
    if array.dtype.kind not in "iu":
        raise DTypeError(
            f"{op}: {what} must be an integer (int64) tensor, got {fmt_dtype(array.dtype)}"
        )
    return array


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a new last dim of size ``num_classes``: 1 at each index, else 0.

    ``num_classes=-1`` takes the largest index plus one.

    >>> import chainrule as cr
    >>> one_hot(cr.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    index = _indices(tensor, "one_hot", "the input")
    if index.size and index.min() < 0:
        raise DomainError(f"one_hot: class values must be non-negative, got {int(index.min())}")
    if num_classes == -1:
        if not index.size:
            raise DomainError("one_hot: cannot infer num_classes from an empty tensor; pass it")
        num_classes = int(index.max()) + 1
    if index.size and index.max() >= num_classes:
        raise DomainError(
            f"one_hot: class value {int(index.max())} is out of range for num_classes={num_classes}"
        )
    return Tensor._make((index[..., None] == np.arange(num_classes)).astype(np.int64))


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``: shape input.shape + (dim,).

    The gradient adds up over repeated indices; the row ``padding_idx`` gets none.

    >>> import chainrule as cr
    >>> embedding(cr.tensor([[0, 2]]), cr.eye(3))
    tensor([[[1., 0., 0.],
             [0., 0., 1.]]])
    """
    index = _indices(input, "embedding", "input")
    rows = np.shape(weight)[0]
    if index.size and (index.min() < 0 or index.max() >= rows):
        bad = int(index.min() if index.min() < 0 else index.max())
        raise DomainError(
            f"embedding: index {bad} is out of range for a weight of shape "
            f"{fmt_shape(np.shape(weight))} (valid: 0 to {rows - 1})"
        )
    out = weight[index]
    if padding_idx is None:
        return out
    if not -rows <= padding_idx < rows:
        raise DomainError(f"embedding: padding_idx {padding_idx} is out of range for {rows} rows")
    is_padding = (index == padding_idx % rows)[..., None]
    # The padding row is looked up like any other, but through a detached copy: no gradient.
    return ops.where(is_padding, weight.detach()[index], out) if is_padding.any() else out


# Normalisation.


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
    mean = input.mean(dims, keepdim=True)
    var = input.var(dims, correction=0, keepdim=True)
    out = (input - mean) * ops.rsqrt(var + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


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
        dims = (0, *range(2, len(shape)))
        mean = input.mean(dims, keepdim=True)
        var = input.var(dims, correction=0, keepdim=True)
        with no_grad():
            if running_mean is not None:
                batch_mean = mean.data.reshape(channels)
                running_mean.copy_(running_mean.data * (1 - momentum) + batch_mean * momentum)
            if running_var is not None:
                unbiased = var.data.reshape(channels) * (count / (count - 1))
                running_var.copy_(running_var.data * (1 - momentum) + unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise DomainError(
                "batch_norm: running_mean and running_var are needed when training=False"
            )
        mean, var = running_mean.reshape(per_channel), running_var.reshape(per_channel)
    out = (input - mean) * ops.rsqrt(var + eps)
    if weight is not None:
        out = out * weight.reshape(per_channel)
    return out if bias is None else out + bias.reshape(per_channel)


# Losses over classes.


def _class_dim(input: Tensor, op: str) -> int:
    ndim = len(np.shape(input))
    if ndim == 0:
        raise ShapeError(f"{op}: input must have a class dimension, got a 0-d tensor")
    return 0 if ndim == 1 else 1


def _nll(
    logp: Tensor, target, weight, ignore_index: int, op: str
) -> tuple[Tensor, np.ndarray, np.ndarray]:
    """Per-element -weight[t] * logp[t] (0 where ignored), the kept mask and the weights."""
    shape = np.shape(logp)
    class_dim = _class_dim(logp, op)
    t = _array(target)
    if t.dtype.kind not in "iu":
        raise DTypeError(
            f"{op}: class-index targets must be integers (int64), got {fmt_dtype(t.dtype)}; "
            f"class probabilities need a float target of the input's shape {fmt_shape(shape)}"
        )
    expected = shape[:1] + shape[2:] if class_dim == 1 else ()
    if t.shape != expected:
        raise ShapeError(
            f"{op}: input has shape {fmt_shape(shape)} but target has shape "
            f"{fmt_shape(t.shape)}; expected target shape {fmt_shape(expected)}"
        )
    classes = shape[class_dim]
    keep = t != ignore_index
    bad = keep & ((t < 0) | (t >= classes))
    if bad.any():
        raise DomainError(
            f"{op}: target {int(t[bad].flat[0])} is out of range for {classes} classes "
            f"(0 to {classes - 1}, or ignore_index={ignore_index})"
        )
    safe = np.where(keep, t, 0)
    class_weight = np.ones(classes) if weight is None else _array(weight)
    if class_weight.shape != (classes,):
        raise ShapeError(
            f"{op}: weight has shape {fmt_shape(class_weight.shape)} but the input of shape "
            f"{fmt_shape(shape)} has {classes} classes"
        )
    w = np.where(keep, class_weight[safe], 0).astype(logp.dtype)
    picked = logp.gather(class_dim, np.expand_dims(safe, class_dim)).squeeze(class_dim)
    return -picked * w, keep, w


def _weighted_mean(total: Tensor, weight_sum: float) -> Tensor:
    # Every target ignored: PyTorch gives nan (0 / 0).
    return total * (1.0 / weight_sum if weight_sum else math.nan)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood -input[n, target[n]], from log-probabilities ``input``.

    ``input`` is (C,), (N, C) or (N, C, d1, ...); ``target`` holds class indices of shape
    (), (N,) or (N, d1, ...). Targets equal to ``ignore_index`` count for nothing; 'mean'
    divides by the summed ``weight`` (a constant per class) of the other targets.

    >>> import chainrule as cr
    >>> nll_loss(cr.tensor([[-1.0, -2.0], [-3.0, -4.0]]), cr.tensor([1, 0]))
    tensor(2.5000)
    """
    _check_reduction(reduction, "nll_loss")
    loss, _, w = _nll(input, target, weight, ignore_index, "nll_loss")
    if reduction == "mean":
        return _weighted_mean(loss.sum(), float(w.sum()))
    return _reduce(loss, reduction)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    ignore_index: int = -100,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy between softmax(input) over the class dim and the target.

    ``input`` holds logits of shape (C,), (N, C) or (N, C, d1, ...). ``target`` is either
    class indices (int64, shape (N,) or (N, d1, ...); see `nll_loss` for ``ignore_index``
    and ``weight``) or class probabilities (float, the input's shape). ``label_smoothing``
    mixes the target with the uniform distribution, as in PyTorch.

    >>> import chainrule as cr
    >>> round(cross_entropy(cr.tensor([[0.0, 0.0]]), cr.tensor([1])).item(), 4)
    0.6931
    """
    _check_reduction(reduction, "cross_entropy")
    smoothing = _check_probability(label_smoothing, "cross_entropy", "label_smoothing")
    class_dim = _class_dim(input, "cross_entropy")
    shape = np.shape(input)
    classes = shape[class_dim]
    weight_shape = (classes,) + (1,) * (len(shape) - class_dim - 1)
    logp = ops.log_softmax(input, class_dim)
    target_array = _array(target)
    if target_array.dtype.kind == "f":  # class probabilities
        _check_same_shape(input, target, "cross_entropy")
        if smoothing:
            target = target * (1 - smoothing) + smoothing / classes
        if weight is not None:
            logp = logp * _array(weight).reshape(weight_shape).astype(logp.dtype)
        loss = -(logp * target).sum(class_dim)
        return _reduce(loss, reduction)
    loss, keep, w = _nll(logp, target, weight, ignore_index, "cross_entropy")
    if reduction == "mean":
        loss = _weighted_mean(loss.sum(), float(w.sum()))
    else:
        loss = _reduce(loss, reduction)
    if not smoothing:
        return loss
    # The uniform part: -sum over classes of weight[c] * logp[c], 0 where the target is ignored.
    if weight is not None:
        logp = logp * _array(weight).reshape(weight_shape).astype(logp.dtype)
    smooth = -logp.sum(class_dim) * keep.astype(logp.dtype)
    if reduction == "mean":
        smooth = _weighted_mean(smooth.sum(), float(w.sum()))
    else:
        smooth = _reduce(smooth, reduction)
    return loss * (1 - smoothing) + smooth * (smoothing / classes)


def binary_cross_entropy(
    input: Tensor, target: Tensor, weight: Tensor | None = None, reduction: str = "mean"
) -> Tensor:
    """-weight * (t log(x) + (1 - t) log(1 - x)) for probabilities x in [0, 1].

    Each log is clamped at -100, as in PyTorch, so x = 0 or 1 gives a finite loss; where the
    clamp acts the gradient is 0 (PyTorch's is large but finite there).

    >>> import chainrule as cr
    >>> round(binary_cross_entropy(cr.tensor([0.5]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction(reduction, "binary_cross_entropy")
    _check_same_shape(input, target, "binary_cross_entropy")
    x = _array(input)
    if x.size and not (x.min() >= 0 and x.max() <= 1):
        bad = float(x.min() if not x.min() >= 0 else x.max())
        raise DomainError(
            f"binary_cross_entropy: input values must lie in [0, 1], found {bad!r}; apply "
            "sigmoid first, or use binary_cross_entropy_with_logits on logits"
        )

    def clamped_log(y: Tensor) -> Tensor:
        # log of where(y > 0, y, 1) never sees 0, so no inf (nor inf * 0 in the backward).
        positive = y > 0
        return ops.where(positive, ops.clamp(ops.log(ops.where(positive, y, 1.0)), min=-100.0),
                         -100.0)  # fmt: skip

    loss = -(target * clamped_log(input) + (1 - target) * clamped_log(1 - input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross entropy of sigmoid(input) against ``target``, computed stably from logits.

    loss = (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), finite for any x;
    ``pos_weight`` (broadcast over the last dim) weighs the positive examples.

    >>> import chainrule as cr
    >>> round(binary_cross_entropy_with_logits(cr.tensor([0.0]), cr.tensor([1.0])).item(), 4)
    0.6931
    """
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    _check_same_shape(input, target, "binary_cross_entropy_with_logits")
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * ops.softplus(-input)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


# Regression losses.


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """(input - target)², reduced.

    >>> import chainrule as cr
    >>> mse_loss(cr.tensor([1.0, 2.0]), cr.tensor([0.0, 0.0]))
    tensor(2.5000)
    """
    _check_reduction(reduction, "mse_loss")
    _check_broadcast_target(input, target, "mse_loss")
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced; the gradient at 0 is 0.

    >>> import chainrule as cr
    >>> l1_loss(cr.tensor([1.0, -3.0]), cr.tensor([0.0, 0.0]))
    tensor(2.)
    """
    _check_reduction(reduction, "l1_loss")
    _check_broadcast_target(input, target, "l1_loss")
    return _reduce(ops.abs(input - target), reduction)


def huber_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0
) -> Tensor:
    """0.5 d² where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target.

    >>> import chainrule as cr
    >>> huber_loss(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _check_reduction(reduction, "huber_loss")
    if not delta > 0:
        raise DomainError(f"huber_loss: delta must be positive, got {delta!r}")
    _check_broadcast_target(input, target, "huber_loss")
    diff = input - target
    size = ops.abs(diff)
    loss = ops.where(size < delta, diff * diff * 0.5, (size - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


def smooth_l1_loss(
    input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0
) -> Tensor:
    """0.5 d² / beta where |d| < beta, else |d| - 0.5 beta (huber_loss / beta); beta = 0 is L1.

    >>> import chainrule as cr
    >>> smooth_l1_loss(cr.tensor([0.5, 3.0]), cr.tensor([0.0, 0.0]), reduction="none")
    tensor([0.1250, 2.5000])
    """
    _check_reduction(reduction, "smooth_l1_loss")
    if not beta >= 0:
        raise DomainError(f"smooth_l1_loss: beta must be non-negative, got {beta!r}")
    _check_broadcast_target(input, target, "smooth_l1_loss")
    diff = input - target
    size = ops.abs(diff)
    if beta == 0:
        return _reduce(size, reduction)
    loss = ops.where(size < beta, diff * diff * (0.5 / beta), size - 0.5 * beta)
    return _reduce(loss, reduction)


# Attention.


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """softmax(query @ keyᵀ * scale + mask) @ value over the last two dims.

    Shapes (..., L, E), (..., S, E), (..., S, Ev) give (..., L, Ev); ``scale`` defaults to
    1 / sqrt(E). A bool ``attn_mask`` (broadcast to (..., L, S)) marks with True the keys a
    query may attend to; a float one is added to the scores. ``is_causal`` lets query i see
    keys 0..i only. Dropout (probability ``dropout_p``) acts on the attention weights.

    >>> import chainrule as cr
    >>> q = k = v = cr.eye(2)
    >>> scaled_dot_product_attention(q, k, v, is_causal=True)
    tensor([[1.0000, 0.0000],
            [0.3302, 0.6698]])
    """
    q_shape, k_shape, v_shape = np.shape(query), np.shape(key), np.shape(value)
    if len(q_shape) < 2 or len(k_shape) < 2 or len(v_shape) < 2:
        raise ShapeError(
            f"scaled_dot_product_attention: query, key and value need at least 2 dims, got "
            f"shapes {fmt_shape(q_shape)}, {fmt_shape(k_shape)}, {fmt_shape(v_shape)}"
        )
    if q_shape[-1] != k_shape[-1] or k_shape[-2] != v_shape[-2]:
        raise ShapeError(
            f"scaled_dot_product_attention: query {fmt_shape(q_shape)}, key "
            f"{fmt_shape(k_shape)} and value {fmt_shape(v_shape)} do not fit: query and key "
            "need the same last dim, key and value the same second-last"
        )
    dropout_p = _check_probability(dropout_p, "scaled_dot_product_attention", "dropout_p")
    if scale is None:
        scale = 1.0 / math.sqrt(q_shape[-1])
    scores = ops.matmul(query, key.mT) * float(scale)
    if is_causal:
        if attn_mask is not None:
            raise DomainError(
                "scaled_dot_product_attention: pass attn_mask or is_causal=True, not both"
            )
        attn_mask = np.tril(np.ones((q_shape[-2], k_shape[-2]), bool))
    if attn_mask is not None:
        mask_shape = np.shape(attn_mask)
        try:
            np.broadcast_shapes(mask_shape, np.shape(scores))
        except ValueError:
            raise ShapeError(
                f"scaled_dot_product_attention: attn_mask of shape {fmt_shape(mask_shape)} "
                f"does not broadcast to the scores' shape {fmt_shape(np.shape(scores))}"
            ) from None
        if _array(attn_mask).dtype == bool:
            scores = ops.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    weights = ops.softmax(scores, -1)
    if dropout_p:
        weights = dropout(weights, dropout_p)
    return ops.matmul(weights, value)
