"""Functional forms of layers and losses, with PyTorch's names: ``import chainrule.nn.functional
as F``. Each is composed from the differentiable ops in `chainrule.ops` (so higher derivatives
come free). Re-exported here: the activations (`nn.activation_functions`), dropouts (`nn.dropouts`),
the losses (`chainrule.nn.losses`), normalisation
(`nn.norms`), distances (`nn.distance`), lookups (`nn.sparse`), resampling (`nn.sampling`),
convolution, ``unfold`` and ``fold`` (`chainrule.ops.conv`), pooling (`chainrule.ops.pooling`) and
``pad``. The modules that hold weights are in `chainrule.nn.layers` and its neighbours.
"""

from __future__ import annotations

import math

import numpy as np

from .. import counting, ops
from .._tensor import Tensor
from ..counting import replayed_whole
from ..errors import (
    DomainError,
    ShapeError,
    fmt_shape,
)
from ..ops.conv import conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, fold, unfold
from ..ops.padding import pad
from ..ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ._checks import _array, _check_probability
from .activation_functions import (
    celu,
    celu_,
    elu,
    elu_,
    gelu,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh,
    hardtanh_,
    leaky_relu,
    leaky_relu_,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softshrink,
    softsign,
    tanh,
    tanhshrink,
    threshold,
    threshold_,
)
from .ctc import ctc_loss
from .distance import cosine_similarity, normalize, pairwise_distance, pdist
from .dropouts import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .linear_losses import linear_cross_entropy
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
from .losses_margin import (
    gaussian_nll_loss,
    hinge_embedding_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_with_distance_loss,
)
from .norms import batch_norm, group_norm, instance_norm, layer_norm, rms_norm
from .sampling import interpolate, pixel_shuffle, pixel_unshuffle
from .sparse import _indices, embedding, embedding_bag
from .spatial_functions import *  # noqa: F403  (3-D, Lp, fractional pools, grid_sample...)
from .spatial_functions import __all__ as _spatial

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
__all__ += [
    "alpha_dropout", "celu", "celu_", "dropout3d", "elu_", "feature_alpha_dropout", "hardshrink",
    "hardsigmoid", "hardswish", "hardtanh_", "leaky_relu_", "logsigmoid", "relu_", "rrelu",
    "rrelu_", "selu_", "softmin", "softshrink", "tanhshrink", "threshold", "threshold_",
    "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "multi_margin_loss",
    "multilabel_margin_loss", "multilabel_soft_margin_loss", "poisson_nll_loss",
    "soft_margin_loss", "triplet_margin_with_distance_loss", "pdist",
]  # fmt: skip
__all__ += _spatial
__all__ += ["linear_cross_entropy"]

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
    if bias is None or len(shape) < 2:
        out = ops.matmul(input, weight.mT)
        return out if bias is None else out + bias
    return ops.linalg.products.matmul_add_row(input, weight.mT, bias)  # one pass adds the bias


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


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """An int64 tensor with a new last dim of size ``num_classes``: 1 at each index, else 0.

    ``num_classes=-1`` takes the largest index plus one.

    >>> import chainrule as cr
    >>> one_hot(cr.tensor([0, 2]))
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if num_classes == -1:
        index = _indices(tensor, "one_hot", "the input")
        if not index.size:
            raise DomainError("one_hot: cannot infer num_classes from an empty tensor; pass it")
        counting.reads_values("one_hot with num_classes=-1")
        num_classes = int(index.max()) + 1
    return Tensor._make(_one_hot(tensor, num_classes))


@replayed_whole(pure=True)  # a compiled step reads and checks the new classes at each call
def _one_hot(tensor: Tensor, num_classes: int) -> np.ndarray:
    """The checked int64 one-hot array of ``tensor``'s classes."""
    index = _indices(tensor, "one_hot", "the input")
    if index.size and index.min() < 0:
        raise DomainError(f"one_hot: class values must be non-negative, got {int(index.min())}")
    if index.size and index.max() >= num_classes:
        raise DomainError(
            f"one_hot: class value {int(index.max())} is out of range for num_classes={num_classes}"
        )
    return (index[..., None] == np.arange(num_classes)).astype(np.int64)


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
        # Added, not selected with where: -inf where a query may not look; the same gradient
        # (softmax sends none to a weight of 0) for one cheap add instead of a where.
        attn_mask = np.triu(np.full((q_shape[-2], k_shape[-2]), -np.inf, scores.dtype), 1)
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
