"""Attention's functional forms: `scaled_dot_product_attention` and
`multi_head_attention_forward` (PyTorch's long signature: projections, heads, masks, extra
key/value rows). Its module, MultiheadAttention, is in `nn.modules.activation`, as PyTorch's."""

from __future__ import annotations

import math

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape
from ._checks import _array, _check_probability
from .dropout_functions import dropout

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


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
    blocked = np.all(np.isneginf(scores._array), axis=-1, keepdims=True)
    if blocked.any():
        scores = ops.where(blocked, 0.0, scores)
    weights = ops.softmax(scores, -1)
    if blocked.any():
        weights = ops.where(blocked, 0.0, weights)
    if dropout_p:
        weights = dropout(weights, dropout_p)
    return ops.matmul(weights, value)


# multi_head_attention_forward: the functional core of nn.MultiheadAttention.


def _project(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    out = ops.matmul(x, weight.mT)
    return out if bias is None else out + bias


def _additive(mask, dtype) -> Tensor:
    """A float mask to add to scores: -inf where a bool mask is True."""
    if not isinstance(mask, Tensor):
        mask = Tensor._make(np.asarray(mask))
    if mask.dtype == bool:
        return Tensor._make(np.where(mask._array, -np.inf, 0.0).astype(dtype))
    return mask


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention of (L, N, E) queries over (S, N, E) keys and values (or unbatched
    (L, E), (S, E)), as ``torch.nn.functional.multi_head_attention_forward``: returns the
    output (L, N, E) and, with ``need_weights``, the weights (N, L, S) averaged over heads
    (or (N, num_heads, L, S)), else None.

    Masks: True in a bool ``attn_mask`` ((L, S) or (N * num_heads, L, S)) or
    ``key_padding_mask`` ((N, S)) hides that key; float masks are added to the scores.
    ``is_causal`` is only a hint here: ``attn_mask`` must be given with it (as PyTorch).
    ``bias_k``/``bias_v`` (1, 1, E) add a key/value row; ``add_zero_attn`` a row of zeros;
    ``static_k``/``static_v`` (N * num_heads, S, E / num_heads) replace the projected ones.

    >>> import chainrule as cr
    >>> x = cr.ones(3, 2, 4)
    >>> out, weights = multi_head_attention_forward(x, x, x, 4, 2, cr.ones(12, 4), None, None,
    ...     None, False, 0.0, cr.eye(4), None)
    >>> out.shape, weights.shape
    ((3, 2, 4), (2, 3, 3))
    """
    op = "multi_head_attention_forward"
    batched = query.ndim == 3
    if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ShapeError(
            f"{op}: query, key and value must all be 3-D (L, N, E) or 2-D (L, E), got "
            f"{fmt_shape(query.shape)}, {fmt_shape(key.shape)}, {fmt_shape(value.shape)}"
        )
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = ops.unsqueeze(key_padding_mask, 0)
    length, n, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise ShapeError(f"{op}: expected embed_dim {embed_dim_to_check}, got query {query.shape}")
    if num_heads < 1 or embed_dim % num_heads:
        raise DomainError(f"{op}: embed_dim {embed_dim} must be divisible by num_heads {num_heads}")
    if is_causal and attn_mask is None:
        raise DomainError(f"{op}: is_causal=True needs an attn_mask (it is only a hint)")
    head_dim = embed_dim // num_heads
    biases = [None] * 3 if in_proj_bias is None else list(ops.chunk(in_proj_bias, 3))
    if use_separate_proj_weight:
        weights = [q_proj_weight, k_proj_weight, v_proj_weight]
    else:
        weights = list(ops.chunk(in_proj_weight, 3))
    q = _project(query, weights[0], biases[0])
    k = _project(key, weights[1], biases[1])
    v = _project(value, weights[2], biases[2])
    mask = None if attn_mask is None else _additive(attn_mask, q.dtype)
    if mask is not None and mask.ndim == 2:
        mask = mask.unsqueeze(0)
    if bias_k is not None and bias_v is not None:
        k = ops.cat([k, bias_k.expand(1, n, embed_dim)])
        v = ops.cat([v, bias_v.expand(1, n, embed_dim)])
        mask = None if mask is None else ops.pad(mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = ops.pad(_additive(key_padding_mask, q.dtype), (0, 1))

    def heads(t: Tensor) -> Tensor:  # (S, N, E) -> (N * heads, S, head_dim)
        return t.reshape(t.shape[0], n * num_heads, head_dim).transpose(0, 1)

    q = heads(q)
    k = heads(k) if static_k is None else static_k
    v = heads(v) if static_v is None else static_v
    if add_zero_attn:
        k = ops.cat([k, Tensor._make(np.zeros((n * num_heads, 1, head_dim), k.dtype))], 1)
        v = ops.cat([v, Tensor._make(np.zeros((n * num_heads, 1, head_dim), v.dtype))], 1)
        mask = None if mask is None else ops.pad(mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = ops.pad(_additive(key_padding_mask, q.dtype), (0, 1))
    source = k.shape[1]
    if key_padding_mask is not None:
        padding = _additive(key_padding_mask, q.dtype).reshape(n, 1, 1, source)
        padding = padding.expand(n, num_heads, 1, source).reshape(n * num_heads, 1, source)
        mask = padding if mask is None else mask + padding
    scores = ops.matmul(q * math.sqrt(1.0 / head_dim), k.mT)
    if mask is not None:
        scores = scores + mask
    attention = ops.softmax(scores, -1)
    if training and dropout_p > 0:
        attention = dropout(attention, dropout_p)
    out = ops.matmul(attention, v).transpose(0, 1).reshape(length * n, embed_dim)
    out = _project(out, out_proj_weight, out_proj_bias).reshape(length, n, embed_dim)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    attention = attention.reshape(n, num_heads, length, source)
    if average_attn_weights:
        attention = attention.mean(1)
    return out, attention if batched else attention.squeeze(0)
