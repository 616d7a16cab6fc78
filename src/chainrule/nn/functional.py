"""Functional forms of layers and losses, with PyTorch's names: ``import chainrule.nn.functional
as F``. Each is composed from the differentiable ops in `chainrule.ops` (so higher derivatives
come free); the losses are re-exported from `chainrule.nn.losses`, convolution, ``unfold`` and
``fold`` from `chainrule.ops.conv`, pooling from `chainrule.ops.pool`. The modules that hold
weights are in `chainrule.nn.layers` and its neighbours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..autograd import no_grad
from ..errors import (
    DomainError,
    DTypeError,
    OutOfRangeError,
    ShapeError,
    fmt_dtype,
    fmt_shape,
)
from ..ops.conv import conv1d, conv2d, fold, unfold
from ..ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ..random import default_generator
from ._checks import _array, _check_probability
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)

__all__ = [
    "adaptive_avg_pool2d", "avg_pool2d", "conv1d", "conv2d", "fold", "max_pool2d", "unfold",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "dropout", "elu", "embedding", "gelu", "huber_loss", "l1_loss", "layer_norm", "leaky_relu",
    "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
    "tanh",
]  # fmt: skip

# Shared by the activations (argument checks are in `nn._checks`).


def _in_place(input: Tensor, out: Tensor, inplace: bool) -> Tensor:
    """``out``, written back into ``input`` when ``inplace`` (the graph records the copy)."""
    return input.copy_(out) if inplace else out


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
        raise OutOfRangeError(
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
