"""MultiheadAttention, with PyTorch's parameter names, so that its state dicts load unchanged.
The single-head arithmetic is `functional.scaled_dot_product_attention`'s; this module adds
the projections, heads and PyTorch's mask conventions.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..creation import zeros
from ..errors import DomainError, ShapeError, fmt_shape
from . import functional as F
from . import init
from ._checks import _check_probability
from .layers import Linear
from .module import Module, Parameter

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention with ``num_heads`` heads of size embed_dim / num_heads, as PyTorch's.

    Inputs are (L, N, E) for queries and (S, N, E) for keys and values, or (N, L, E) with
    ``batch_first=True``, or unbatched (L, E). ``forward`` returns the output (shaped like the
    query) and, when ``need_weights``, the attention weights (N, L, S), averaged over heads
    unless ``average_attn_weights=False`` gives (N, num_heads, L, S); else None.

    Masks follow PyTorch: in ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or
    (N * num_heads, L, S), True marks a position *not* to attend to; float masks are added to
    the scores. ``is_causal=True`` without an ``attn_mask`` builds the causal mask (PyTorch
    raises there); with one, it is only a hint and the mask is used.

    Parameters: ``in_proj_weight`` (3E, E) and ``in_proj_bias`` (3E,), or ``q_proj_weight``,
    ``k_proj_weight``, ``v_proj_weight`` when ``kdim`` or ``vdim`` differ from E; ``out_proj``
    is a Linear(E, E). Projections start Xavier-uniform, biases at 0.

    >>> import chainrule as cr
    >>> attention = MultiheadAttention(8, num_heads=2, batch_first=True)
    >>> x = cr.randn(3, 5, 8)
    >>> out, weights = attention(x, x, x)
    >>> out.shape, weights.shape
    ((3, 5, 8), (3, 5, 5))
    >>> [name for name, _ in attention.named_parameters()]
    ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
    ) -> None:
        super().__init__()
        if num_heads <= 0 or embed_dim % num_heads:
            raise DomainError(
                f"MultiheadAttention: embed_dim {embed_dim} must be divisible by num_heads "
                f"{num_heads}"
            )
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = _check_probability(dropout, "MultiheadAttention", "dropout")
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(zeros(3 * embed_dim, embed_dim))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(zeros(embed_dim, embed_dim))
            self.k_proj_weight = Parameter(zeros(embed_dim, self.kdim))
            self.v_proj_weight = Parameter(zeros(embed_dim, self.vdim))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(zeros(3 * embed_dim))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if add_bias_kv:
            self.bias_k = Parameter(zeros(1, 1, embed_dim))
            self.bias_v = Parameter(zeros(1, 1, embed_dim))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projections(self) -> list[tuple[Tensor, Tensor | None]]:
        """(weight, bias) for the query, key and value projections."""
        e = self.embed_dim
        b = self.in_proj_bias
        biases = [None] * 3 if b is None else [b[:e], b[e : 2 * e], b[2 * e :]]
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            weights = [w[:e], w[e : 2 * e], w[2 * e :]]
        else:
            weights = [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        return list(zip(weights, biases))

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        shapes = [np.shape(t) for t in (query, key, value)]
        named = ", ".join(
            f"{name} {fmt_shape(s)}" for name, s in zip(("query", "key", "value"), shapes)
        )
        if len(shapes[0]) not in (2, 3) or any(len(s) != len(shapes[0]) for s in shapes):
            raise ShapeError(
                f"MultiheadAttention: query, key and value must all be 3-D (batched) or 2-D "
                f"(unbatched), got {named}"
            )
        dims = (self.embed_dim, self.kdim, self.vdim)
        if any(s[-1] != d for s, d in zip(shapes, dims)) or shapes[1][:-1] != shapes[2][:-1]:
            raise ShapeError(
                f"MultiheadAttention: got {named}; expected last dims {dims} "
                "(embed_dim, kdim, vdim) and key and value of the same length"
            )

    def _additive_mask(self, mask, dtype, expected: tuple, name: str):
        """A float mask to add to the scores: -inf where a bool mask is True."""
        shape = np.shape(mask)
        if shape not in expected:
            wanted = " or ".join(fmt_shape(s) for s in expected)
            raise ShapeError(
                f"MultiheadAttention: {name} has shape {fmt_shape(shape)}, expected {wanted}"
            )
        if not isinstance(mask, Tensor):
            mask = Tensor._make(np.asarray(mask))
        if mask.dtype == bool:
            return Tensor._make(np.where(mask.data, -np.inf, 0.0).astype(dtype))
        return mask

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        self._check_inputs(query, key, value)
        batched = query.ndim == 3
        # Work in (N, L, E) throughout.
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        elif not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        n, length, _ = query.shape
        source = key.shape[1]
        heads, head_dim = self.num_heads, self.head_dim
        (w_q, b_q), (w_k, b_k), (w_v, b_v) = self._projections()
        q, k, v = F.linear(query, w_q, b_q), F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)

        if is_causal and attn_mask is None:
            attn_mask = np.triu(np.ones((length, source), bool), 1)
        mask = None
        if attn_mask is not None:
            expected = ((length, source), (n * heads, length, source))
            mask = self._additive_mask(attn_mask, q.dtype, expected, "attn_mask")
            mask = mask.reshape(-1, heads, length, source) if mask.ndim == 3 else mask
        if key_padding_mask is not None:
            expected = ((n, source),) if batched else ((source,),)
            padding = self._additive_mask(key_padding_mask, q.dtype, expected, "key_padding_mask")
            padding = padding.reshape(n, 1, 1, source)
            mask = padding if mask is None else mask + padding

        if self.bias_k is not None:
            k = ops.cat([k, self.bias_k.expand(n, 1, self.embed_dim)], dim=1)
            v = ops.cat([v, self.bias_v.expand(n, 1, self.embed_dim)], dim=1)
            mask = None if mask is None else ops.pad(mask, (0, 1))

        def split_heads(t: Tensor) -> Tensor:  # (N, S, E) -> (N, heads, S, head_dim)
            return t.reshape(n, t.shape[1], heads, head_dim).transpose(1, 2)

        q, k, v = split_heads(q), split_heads(k), split_heads(v)
        if self.add_zero_attn:
            empty = zeros(n, heads, 1, head_dim, dtype=k.dtype)
            k, v = ops.cat([k, empty], dim=2), ops.cat([v, empty], dim=2)
            mask = None if mask is None else ops.pad(mask, (0, 1))

        # As PyTorch: scale the queries, then add the mask to the scores.
        scores = ops.matmul(q * math.sqrt(1.0 / head_dim), k.mT)
        if mask is not None:
            scores = scores + mask
        weights = ops.softmax(scores, -1)
        if self.training and self.dropout > 0:
            weights = F.dropout(weights, self.dropout)
        out = ops.matmul(weights, v).transpose(1, 2).reshape(n, length, self.embed_dim)
        out = self.out_proj(out)

        if not batched:
            out = out[0]
        elif not self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        if average_attn_weights:
            weights = weights.mean(1)
        return out, weights if batched else weights[0]
