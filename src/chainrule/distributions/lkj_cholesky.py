"""`LKJCholesky`: the LKJ distribution over n x n correlation matrices, seen through their
lower Cholesky factors; drawn by the onion method (Lewandowski, Kurowicka and Joe, 2009),
vectorised over rows as PyTorch does."""

from __future__ import annotations

import math

import numpy as np

from .. import ops, random
from .._tensor import Tensor
from ..dtypes import finfo
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all


class LKJCholesky(Distribution):
    """LKJ distributions on Cholesky factors of ``dim`` x ``dim`` correlation matrices, with
    density proportional to det(L L^T)**(concentration - 1) on the correlation matrix.

    >>> import chainrule as cr
    >>> LKJCholesky(3, 2.0).sample((4,)).shape
    (4, 3, 3)
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"LKJCholesky: dim must be at least 2, got {dim}")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # Row i's squared off-diagonal norm is Beta(i / 2, eta + (n - 2 - (i - 1)) / 2).
        dtype = self.concentration.dtype
        offset = Tensor._make(np.concatenate([[0.0], np.arange(dim - 1)]).astype(dtype))
        marginal = self.concentration + 0.5 * (dim - 2)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None) -> LKJCholesky:
        new = super().expand(batch_shape, _instance)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=()) -> Tensor:
        y = self._beta.sample(sample_shape)._array[..., None]
        normal = random.randn(self._extended_shape(sample_shape), dtype=y.dtype)._array
        normal = np.tril(normal, -1)
        with np.errstate(invalid="ignore"):
            direction = normal / np.linalg.norm(normal, axis=-1, keepdims=True)
        direction[..., 0, :] = 0  # the first row has no off-diagonal part
        w = np.sqrt(y) * direction
        diagonal = np.sqrt(np.maximum(1 - (w**2).sum(-1), finfo(w.dtype).tiny))
        rows = np.arange(self.dim)
        w[..., rows, rows] = diagonal
        return Tensor._make(w.astype(y.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.dim
        diagonal = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = Tensor._make(np.arange(2, n + 1, dtype=diagonal.dtype))
        order = 2 * (self.concentration - 1).unsqueeze(-1) + n - order
        unnormalised = (order * ops.log(diagonal)).sum(-1)
        alpha = self.concentration + 0.5 * (n - 1)
        log_normaliser = (
            0.5 * (n - 1) * math.log(math.pi)
            + ops.mvlgamma(alpha - 0.5, n - 1)
            - ops.lgamma(alpha) * (n - 1)
        )
        return unnormalised - log_normaliser


__all__ = ["LKJCholesky"]
