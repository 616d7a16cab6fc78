"""The Transformer of "Attention Is All You Need" with PyTorch's names: encoder and decoder
layers (attention, a feed-forward block, residual connections and layer norms), their stacks
and the whole encoder-decoder model. Attention itself is `nn.modules.activation`'s
MultiheadAttention, where PyTorch keeps it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np

from ..._tensor import Tensor
from ...creation import tensor
from ...dtypes import DEFAULT_DTYPE, as_dtype
from ...errors import DomainError, ShapeError, fmt_shape
from .. import functional as F
from .. import init
from .activation import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = [
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
]  # fmt: skip


_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation, owner: str) -> Callable[[Tensor], Tensor]:
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise DomainError(
                f"{owner}: activation should be 'relu', 'gelu' or a callable, got {activation!r}"
            )
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise DomainError(
            f"{owner}: activation should be 'relu', 'gelu' or a callable, got "
            f"{type(activation).__name__}"
        )
    return activation


class _FeedForward:
    """What both layer kinds share: the feed-forward block and its submodules."""

    def _add_feed_forward(
        self, d_model: int, dim_feedforward: int, dropout: float, bias: bool
    ) -> None:
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)

    def _ff_block(self, x: Tensor, dropout: Dropout) -> Tensor:
        return dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_FeedForward, Module):
    """Self-attention, then a feed-forward block (linear1, activation, linear2), each with a
    residual connection and a LayerNorm: after the sum (post-norm, the default) or on the
    block's input (``norm_first=True``, pre-norm).

    ``src`` is (S, N, E), (N, S, E) with ``batch_first``, or unbatched (S, E). ``src_mask``
    and ``src_key_padding_mask`` follow `MultiheadAttention` (True or -inf marks a position
    not to attend to). ``is_causal=True`` without a mask applies the causal mask (PyTorch
    raises there); with a mask it is only a hint. Submodules and parameter names are PyTorch's,
    so its state dicts load unchanged.

    >>> import chainrule as cr
    >>> layer = TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    >>> layer(cr.randn(5, 3, 8)).shape
    (5, 3, 8)
    >>> [name for name, _ in layer.named_parameters()][:3]
    ['self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight']
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first
        )
        self._add_feed_forward(d_model, dim_feedforward, dropout, bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerEncoderLayer")

    def _sa_block(self, x: Tensor, mask, key_padding_mask, is_causal: bool) -> Tensor:
        out, _ = self.self_attn(
            x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask, need_weights=False,
            is_causal=is_causal,
        )  # fmt: skip
        return self.dropout1(out)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff_block(self.norm2(x), self.dropout2)
        x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff_block(x, self.dropout2))


class TransformerDecoderLayer(_FeedForward, Module):
    """Self-attention over the target, attention from the target to the encoder's output
    (``memory``), then a feed-forward block; residuals and LayerNorms as in
    `TransformerEncoderLayer` (norm1, norm2, norm3).

    ``tgt`` is (T, N, E) and ``memory`` (S, N, E) (batch first with ``batch_first``), or
    unbatched (T, E) and (S, E). Masks as `MultiheadAttention`'s: ``tgt_mask`` (T, T),
    ``memory_mask`` (T, S), key padding masks (N, T) and (N, S).

    >>> import chainrule as cr
    >>> layer = TransformerDecoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    >>> layer(cr.randn(3, 4, 8), cr.randn(3, 6, 8), tgt_is_causal=True).shape
    (3, 4, 8)
    """

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first
        )
        self._add_feed_forward(d_model, dim_feedforward, dropout, bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, "TransformerDecoderLayer")

    def _sa_block(self, x: Tensor, mask, key_padding_mask, is_causal: bool) -> Tensor:
        out, _ = self.self_attn(
            x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask, need_weights=False,
            is_causal=is_causal,
        )  # fmt: skip
        return self.dropout1(out)

    def _mha_block(
        self, x: Tensor, memory: Tensor, mask, key_padding_mask, is_causal: bool
    ) -> Tensor:
        out, _ = self.multihead_attn(
            x, memory, memory, attn_mask=mask, key_padding_mask=key_padding_mask,
            need_weights=False, is_causal=is_causal,
        )  # fmt: skip
        return self.dropout2(out)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        x = tgt
        self_args = (tgt_mask, tgt_key_padding_mask, tgt_is_causal)
        cross_args = (memory_mask, memory_key_padding_mask, memory_is_causal)
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), *self_args)
            x = x + self._mha_block(self.norm2(x), memory, *cross_args)
            return x + self._ff_block(self.norm3(x), self.dropout3)
        x = self.norm1(x + self._sa_block(x, *self_args))
        x = self.norm2(x + self._mha_block(x, memory, *cross_args))
        return self.norm3(x + self._ff_block(x, self.dropout3))


def _clones(module: Module, num_layers: int) -> ModuleList:
    """``num_layers`` independent deep copies of ``module`` (as PyTorch: the layer passed in is
    only a template, and no weights are shared)."""
    return ModuleList([copy.deepcopy(module) for _ in range(num_layers)])


class TransformerEncoder(Module):
    """``num_layers`` copies of ``encoder_layer`` applied in turn, then ``norm`` if given.

    ``is_causal`` (None means False here) and the masks go to every layer.
    ``enable_nested_tensor`` and ``mask_check`` are accepted for PyTorch's signature and do
    nothing (chainrule has no nested tensors, so padded positions are computed, not zeroed).

    >>> import chainrule as cr
    >>> layer = TransformerEncoderLayer(8, 2, dim_feedforward=16)
    >>> encoder = TransformerEncoder(layer, num_layers=3)
    >>> len(encoder.layers), encoder.layers[0] is layer
    (3, False)
    >>> encoder(cr.randn(5, 2, 8)).shape
    (5, 2, 8)
    """

    def __init__(
        self,
        encoder_layer: Module,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        output = src
        for layer in self.layers:
            output = layer(
                output, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                is_causal=bool(is_causal),
            )  # fmt: skip
        return output if self.norm is None else self.norm(output)


class TransformerDecoder(Module):
    """``num_layers`` copies of ``decoder_layer`` applied in turn to the target (each attending
    to the same ``memory``), then ``norm`` if given.

    >>> import chainrule as cr
    >>> decoder = TransformerDecoder(TransformerDecoderLayer(8, 2, 16), 2, norm=LayerNorm(8))
    >>> decoder(cr.randn(4, 8), cr.randn(6, 8)).shape  # unbatched
    (4, 8)
    """

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        output = tgt
        for layer in self.layers:
            output = layer(
                output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal,
            )  # fmt: skip
        return output if self.norm is None else self.norm(output)


class Transformer(Module):
    """An encoder-decoder Transformer: `TransformerEncoder` over ``src`` (with a final
    LayerNorm), then `TransformerDecoder` over ``tgt`` attending to the encoder's output.

    Every parameter with two or more dims starts Xavier-uniform (PyTorch's reset); biases and
    norms keep their layers' starts. ``src`` is (S, N, E) and ``tgt`` (T, N, E) (batch first
    with ``batch_first``), or unbatched; the output is shaped like ``tgt``.
    ``custom_encoder`` and ``custom_decoder`` replace the stacks.

    >>> import chainrule as cr
    >>> model = Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
    ...                     dim_feedforward=16, dropout=0.0)
    >>> src, tgt = cr.randn(6, 2, 8), cr.randn(4, 2, 8)
    >>> model(src, tgt, tgt_mask=Transformer.generate_square_subsequent_mask(4)).shape
    (4, 2, 8)
    """

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
    ) -> None:
        super().__init__()
        options = dict(
            dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
            layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first,
            bias=bias,
        )  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(d_model, nhead, **options),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(d_model, nhead, **options),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias),
            )
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def _reset_parameters(self) -> None:
        for param in self.parameters():
            if param.ndim > 1:
                init.xavier_uniform_(param)

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        batch_dim = 0 if self.batch_first else 1
        if src.ndim == 3 and (tgt.ndim != 3 or src.shape[batch_dim] != tgt.shape[batch_dim]):
            raise ShapeError(
                f"Transformer: src {fmt_shape(src.shape)} and tgt {fmt_shape(tgt.shape)} must "
                f"have the same batch size (dim {batch_dim}, batch_first={self.batch_first})"
            )
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ShapeError(
                f"Transformer: src {fmt_shape(src.shape)} and tgt {fmt_shape(tgt.shape)} must "
                f"both have d_model = {self.d_model} features (last dim)"
            )
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )  # fmt: skip
        return self.decoder(
            tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )  # fmt: skip

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
        """A (sz, sz) float mask: 0 on and below the diagonal, -inf above (a position sees
        itself and earlier ones). ``device`` is accepted for PyTorch's signature ('cpu' only).

        >>> Transformer.generate_square_subsequent_mask(3)
        tensor([[  0., -inf, -inf],
                [  0.,   0., -inf],
                [  0.,   0.,   0.]])
        """
        if device not in (None, "cpu"):
            raise DomainError(
                f"generate_square_subsequent_mask: device {device!r} is not available; "
                "chainrule runs on the CPU"
            )
        dtype = as_dtype(dtype) or DEFAULT_DTYPE
        return tensor(np.triu(np.full((sz, sz), -np.inf, dtype), 1), dtype=dtype)
