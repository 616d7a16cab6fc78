"""Functional forms of layers and losses, with PyTorch's names: ``import chainrule.nn.functional
as F``. Each is composed from the differentiable ops in `chainrule.ops` (so higher derivatives
come free). Re-exported here: the losses (`chainrule.nn.losses`), normalisation
(`nn.norms`), distances (`nn.distance`), lookups (`nn.sparse`), resampling (`nn.sampling`),
convolution, ``unfold`` and ``fold`` (`chainrule.ops.conv`), pooling (`chainrule.ops.pool`) and
``pad``. The modules that hold weights are in `chainrule.nn.layers` and its neighbours.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..errors import (
    DomainError,
    ShapeError,
    fmt_shape,
)
from ..ops.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, fold, unfold
from ..ops.padding import pad
from ..ops.pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ..random import default_generator
from ._checks import _array, _check_probability
from .distance import cosine_similarity, normalize, pairwise_distance
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cosine_embedding_loss,
    cross_entropy,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
    triplet_margin_loss,
)
from .norms import batch_norm, group_norm, instance_norm, layer_norm, rms_norm
from .sampling import interpolate, pixel_shuffle, pixel_unshuffle
from .sparse import _indices, embedding, embedding_bag

__all__ = [
    "adaptive_avg_pool2d", "avg_pool2d", "conv1d", "conv2d", "fold", "max_pool2d", "unfold",
    "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "dropout", "elu", "embedding", "gelu", "huber_loss", "l1_loss", "layer_norm", "leaky_relu",
    "linear", "log_softmax", "mse_loss", "nll_loss", "one_hot", "relu",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus",
    "tanh",
    "bilinear", "cosine_embedding_loss", "cosine_similarity", "dropout1d", "dropout2d",
    "embedding_bag", "glu", "group_norm", "gumbel_softmax", "hardtanh", "instance_norm", "kl_div",
    "margin_ranking_loss", "mish", "normalize", "pad", "pairwise_distance", "prelu", "relu6",
    "rms_norm", "selu", "softsign", "triplet_margin_loss",
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "interpolate", "max_pool1d", "pixel_shuffle",
    "pixel_unshuffle",
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


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with PyTorch's self-normalising constants (alpha ≈ 1.6733,
    scale ≈ 1.0507).

    >>> import chainrule as cr
    >>> selu(cr.tensor([-1.0, 1.0]))
    tensor([-1.1113,  1.0507])
    """
    return _in_place(input, elu(input, _SELU_ALPHA) * _SELU_SCALE, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x)).

    >>> import chainrule as cr
    >>> mish(cr.tensor([0.0, 1.0]))
    tensor([0.0000, 0.8651])
    """
    return _in_place(input, input * ops.tanh(ops.softplus(input)), inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped to [min_val, max_val]; the gradient is 1 strictly inside, else 0 (so 0 at
    the bounds themselves, as PyTorch's hardtanh and unlike its clamp).

    >>> import chainrule as cr
    >>> hardtanh(cr.tensor([-3.0, 0.5, 3.0]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if min_val > max_val:
        raise DomainError(f"hardtanh: min_val {min_val} is above max_val {max_val}")
    inside = (input > min_val) & (input < max_val)
    bounded = np.clip(_array(input), min_val, max_val)
    return _in_place(input, ops.where(inside, input, bounded), inplace)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): `hardtanh` on [0, 6].

    >>> import chainrule as cr
    >>> relu6(cr.tensor([-1.0, 3.0, 9.0]))
    tensor([0., 3., 6.])
    """
    return hardtanh(input, 0.0, 6.0, inplace)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|).

    >>> import chainrule as cr
    >>> softsign(cr.tensor([-3.0, 1.0]))
    tensor([-0.7500,  0.5000])
    """
    return input / (ops.abs(input) + 1)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """The gated linear unit: a * sigmoid(b), where a and b are the halves of ``dim``.

    >>> import chainrule as cr
    >>> glu(cr.tensor([2.0, 0.0]))
    tensor([1.])
    """
    shape = np.shape(input)
    if not shape or shape[dim] % 2:
        raise ShapeError(
            f"glu: dim {dim} of the input of shape {fmt_shape(shape)} must have an even size"
        )
    a, b = ops.chunk(input, 2, dim)
    return a * ops.sigmoid(b)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, else weight * x, with one learned slope (weight of 1 element) or one
    per channel (dim 1 of the input, or dim 0 of a 1-D input).

    >>> import chainrule as cr
    >>> prelu(cr.tensor([[-2.0, 2.0]]), cr.tensor([0.25]))
    tensor([[-0.5000,  2.0000]])
    """
    shape, count = np.shape(input), int(np.prod(np.shape(weight), dtype=np.int64))
    channels = 1 if not shape else shape[1] if len(shape) >= 2 else shape[0]
    if count not in (1, channels) or np.ndim(weight) > 1:
        raise ShapeError(
            f"prelu: weight of shape {fmt_shape(np.shape(weight))} must have 1 element or one "
            f"per channel ({channels}) of the input of shape {fmt_shape(shape)}"
        )
    if count > 1 and len(shape) >= 2:
        weight = weight.reshape((-1,) + (1,) * (len(shape) - 2))
    return ops.where(input > 0, input, input * weight)


def gumbel_softmax(
    logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1
) -> Tensor:
    """A sample from the Gumbel-softmax (concrete) distribution: softmax((logits + g) / tau)
    with g standard Gumbel noise from `chainrule.default_generator()`.

    With ``hard`` the result is the one-hot of the sample's argmax, while the gradient is the
    soft sample's (the straight-through estimator). ``eps`` is unused, as in PyTorch.

    >>> import chainrule as cr
    >>> sample = gumbel_softmax(cr.zeros(2, 3), tau=0.5, hard=True)
    >>> sample.sum(-1)
    tensor([1., 1.])
    """
    if not tau > 0:
        raise DomainError(f"gumbel_softmax: tau must be positive, got {tau!r}")
    gumbels = -np.log(default_generator().exponential(1.0, np.shape(logits)))
    soft = ops.softmax((logits + gumbels.astype(logits.dtype)) / tau, dim)
    if not hard:
        return soft
    dim %= soft.ndim
    picked = np.expand_dims(np.argmax(soft.data, axis=dim), dim)
    classes = np.arange(soft.shape[dim]).reshape([-1 if d == dim else 1 for d in range(soft.ndim)])
    return soft - soft.detach() + (picked == classes).astype(soft.dtype)


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


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = input1[..., i] weight[o, i, j] input2[..., j] + bias[o].

    >>> import chainrule as cr
    >>> bilinear(cr.tensor([[1.0, 2.0]]), cr.tensor([[3.0]]), cr.ones(4, 2, 1)).shape
    (1, 4)
    """
    shape1, shape2, weight_shape = np.shape(input1), np.shape(input2), np.shape(weight)
    if (len(weight_shape) != 3 or not shape1 or not shape2 or shape1[:-1] != shape2[:-1]
            or (shape1[-1], shape2[-1]) != weight_shape[1:]):  # fmt: skip
        raise ShapeError(
            f"bilinear: input1 {fmt_shape(shape1)}, input2 {fmt_shape(shape2)} and weight "
            f"{fmt_shape(weight_shape)} do not fit: weight must be (out, in1, in2) with in1 and "
            "in2 the inputs' last dims, and the inputs' other dims equal"
        )
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


def _channel_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, spatial: int, op: str
) -> Tensor:
    """Zero whole channels: one draw per (N, C), shared over the last ``spatial`` dims."""
    p = _check_probability(p, op)
    shape = np.shape(input)
    if len(shape) not in (spatial + 1, spatial + 2):
        raise ShapeError(
            f"{op}: input must have {spatial + 1} (unbatched) or {spatial + 2} dims, got shape "
            f"{fmt_shape(shape)}"
        )
    if not training or p == 0:
        return input
    if p == 1:
        return _in_place(input, input * 0.0, inplace)
    mask_shape = shape[:-spatial] + (1,) * spatial
    keep = default_generator().random(mask_shape) >= p
    scale = (keep * (1.0 / (1.0 - p))).astype(input.dtype)
    return _in_place(input, input * scale, inplace)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each channel of an (N, C, L) or (C, L) input with probability ``p`` (the whole
    length at once) and scale the rest by 1 / (1 - p), while training.

    >>> import chainrule as cr
    >>> out = dropout1d(cr.ones(1, 100, 3), p=0.5)
    >>> bool(((out == 0).all(-1) | (out == 2).all(-1)).all())
    True
    """
    return _channel_dropout(input, p, training, inplace, 1, "dropout1d")


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each channel of an (N, C, H, W) or (C, H, W) input with probability ``p`` and
    scale the rest by 1 / (1 - p), while training. (PyTorch reads a 3-D input as (N, C, L)
    for now and warns; here it is one unbatched image.)

    >>> import chainrule as cr
    >>> dropout2d(cr.ones(1, 2, 2, 2), training=False).shape
    (1, 2, 2, 2)
    """
    return _channel_dropout(input, p, training, inplace, 2, "dropout2d")


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


# Attention.


def _repeat_heads(x: Tensor, times: int) -> Tensor:
    """(..., H, S, E) -> (..., H * times, S, E), each head repeated ``times`` times in a row."""
    shape = np.shape(x)
    expanded = ops.expand(ops.unsqueeze(x, -3), (*shape[:-2], times, *shape[-2:]))
    return expanded.reshape(*shape[:-3], shape[-3] * times, *shape[-2:])


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ keyᵀ * scale + mask) @ value over the last two dims.

    Shapes (..., L, E), (..., S, E), (..., S, Ev) give (..., L, Ev); ``scale`` defaults to
    1 / sqrt(E). A bool ``attn_mask`` (broadcast to (..., L, S)) marks with True the keys a
    query may attend to; a float one is added to the scores. ``is_causal`` lets query i see
    keys 0..i only (the top-left causal mask, as PyTorch). A query that may attend to no key
    gets zeros, as PyTorch. Dropout (probability ``dropout_p``) acts on the attention weights
    whenever ``dropout_p`` > 0. ``enable_gqa`` lets key and value have fewer heads (dim -3)
    than the query, each shared by a group of query heads (grouped-query attention).

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
    if enable_gqa and len(q_shape) >= 3 and k_shape[-3] != q_shape[-3]:
        heads, kv_heads = q_shape[-3], k_shape[-3]
        if len(k_shape) < 3 or len(v_shape) < 3 or v_shape[-3] != kv_heads or heads % kv_heads:
            raise ShapeError(
                f"scaled_dot_product_attention: with enable_gqa the query's {heads} heads "
                f"(dim -3) must be a multiple of the key's and value's, got shapes "
                f"{fmt_shape(q_shape)}, {fmt_shape(k_shape)}, {fmt_shape(v_shape)}"
            )
        # Each key/value head serves heads // kv_heads consecutive query heads.
        key = _repeat_heads(key, heads // kv_heads)
        value = _repeat_heads(value, heads // kv_heads)
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
    # A row with every score -inf attends to nothing: its weights are 0, not 0 / 0 (PyTorch's
    # safe softmax); its scores become 0 first so that softmax never sees the row.
    blocked = np.all(np.isneginf(scores.data), axis=-1, keepdims=True)
    if blocked.any():
        scores = ops.where(blocked, 0.0, scores)
    weights = ops.softmax(scores, -1)
    if blocked.any():
        weights = ops.where(blocked, 0.0, weights)
    if dropout_p:
        weights = dropout(weights, dropout_p)
    return ops.matmul(weights, value)
