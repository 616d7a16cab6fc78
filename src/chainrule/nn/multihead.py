"""``multi_head_attention_forward``: the functional core of multi-head attention with PyTorch's
long signature (projections, heads, masks, extra key/value rows), composed from ops. The
module that owns the weights is `chainrule.nn.attention.MultiheadAttention`."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from .dropouts import dropout

__all__ = ["multi_head_attention_forward"]


def _project(x: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    out = ops.matmul(x, weight.mT)
    return out if bias is None else out + bias


def _additive(mask, dtype) -> Tensor:
    """A float mask to add to scores: -inf where a bool mask is True."""
    if not isinstance(mask, Tensor):
        mask = Tensor._make(np.asarray(mask))
    if mask.dtype == bool:
        return Tensor._make(np.where(mask.data, -np.inf, 0.0).astype(dtype))
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
