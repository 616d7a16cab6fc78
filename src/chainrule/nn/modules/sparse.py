"""Lookup tables: Embedding and EmbeddingBag, with PyTorch's arguments and initialisation.
Their functions (`embedding`, `embedding_bag`) are in `chainrule.nn.functional.sparse`."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...autograd import no_grad
from ...creation import zeros
from ...errors import DomainError, ShapeError, fmt_shape
from .. import init
from ..functional.sparse import _padding_row, embedding, embedding_bag
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, looked up by index.

    The weight starts N(0, 1), with the ``padding_idx`` row (if any) zero; that row gets no
    gradient. ``max_norm``, ``norm_type``, ``scale_grad_by_freq`` and ``sparse`` act as in
    `embedding`; ``_weight`` gives the initial table and ``_freeze`` stops its gradient.

    >>> import chainrule as cr
    >>> table = Embedding(10, 3, padding_idx=0)
    >>> table(cr.tensor([[0, 4]])).shape
    (1, 2, 3)
    >>> table.weight[0]
    tensor([0., 0., 0.], grad_fn=<GetitemBackward>)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        dtype=None,
    ) -> None:
        super().__init__()
        padding_idx = _padding_row(padding_idx, num_embeddings, "Embedding")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(zeros(num_embeddings, embedding_dim, dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(np.shape(_weight)) != (num_embeddings, embedding_dim):
                raise ShapeError(
                    f"Embedding: _weight has shape {fmt_shape(np.shape(_weight))}, expected "
                    f"({num_embeddings}, {embedding_dim})"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose table is the 2-D ``embeddings`` (frozen unless ``freeze=False``).

        >>> import chainrule as cr
        >>> Embedding.from_pretrained(cr.eye(2))(cr.tensor([1]))
        tensor([[0., 1.]])
        """
        if np.ndim(embeddings) != 2:
            raise ShapeError(
                f"Embedding.from_pretrained: embeddings must be 2-D, got shape "
                f"{fmt_shape(np.shape(embeddings))}"
            )
        rows, dim = np.shape(embeddings)
        return cls(rows, dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings, _freeze=freeze)  # fmt: skip

    def reset_parameters(self) -> None:
        """Draw the weight from N(0, 1) again and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input: Tensor) -> Tensor:
        return embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                         self.scale_grad_by_freq, self.sparse)  # fmt: skip

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text


class EmbeddingBag(Module):
    """A table of vectors, looked up in bags and reduced per bag (`embedding_bag`): the
    weight (num_embeddings, embedding_dim) starts N(0, 1), the padding row zero.

    >>> import chainrule as cr
    >>> bags = EmbeddingBag(10, 3, mode="max")
    >>> bags(cr.tensor([[1, 2], [4, 5]])).shape
    (2, 3)
    >>> bags
    EmbeddingBag(10, 3, mode='max')
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        dtype=None,
    ) -> None:
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise DomainError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        padding_idx = _padding_row(padding_idx, num_embeddings, "EmbeddingBag")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = Parameter(zeros(num_embeddings, embedding_dim, dtype=dtype))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self) -> None:
        """Draw the weight from N(0, 1) again and zero the padding row."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(
        self,
        input: Tensor,
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        return embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
            self.include_last_offset, self.padding_idx,
        )  # fmt: skip

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        text += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        return text
