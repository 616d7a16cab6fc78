"""Flatten (dimensions merged into one) and Unflatten (one dimension split), the shape
layers."""

from __future__ import annotations

import numpy as np

from ..._tensor import Tensor
from ...errors import DomainError, fmt_shape
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Merges dimensions ``start_dim``..``end_dim`` into one (by default all but the batch).

    >>> import chainrule
    >>> Flatten()(chainrule.zeros(2, 3, 4)).shape
    (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Tensor) -> Tensor:
        shape = x.shape
        ndim = max(len(shape), 1)
        start, end = self.start_dim % ndim, self.end_dim % ndim
        if start > end:
            raise DomainError(
                f"Flatten: start_dim {self.start_dim} comes after end_dim {self.end_dim} for "
                f"an input of shape {fmt_shape(shape)}"
            )
        merged = int(np.prod(shape[start : end + 1], dtype=np.int64))
        return x.reshape(*shape[:start], merged, *shape[end + 1 :])

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dimension ``dim`` into ``unflattened_size`` (one entry may be -1).

    >>> import chainrule
    >>> Unflatten(1, (2, 3))(chainrule.zeros(4, 6)).shape
    (4, 2, 3)
    """

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self.dim = dim
        self.unflattened_size = tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
