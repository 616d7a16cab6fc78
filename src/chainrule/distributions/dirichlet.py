"""`Dirichlet` on the probability simplex, reparameterised through normalised gamma draws
(each differentiable by implicit reparameterisation, `gamma.standard_gamma`)."""

from __future__ import annotations

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..dtypes import finfo, float64
from ..nn.functional import one_hot
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma


class Dirichlet(ExponentialFamily):
    """Dirichlet distributions over the last dim of ``concentration`` (the event).

    >>> import chainrule as cr
    >>> Dirichlet(cr.tensor([1.0, 2.0, 3.0])).mean
    tensor([0.1667, 0.3333, 0.5000])
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("Dirichlet: concentration must have at least one dimension")
        self.concentration = concentration
        shape = tuple(concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        shifted = (self.concentration - 1).clamp(min=0)
        mode = shifted / shifted.sum(-1, keepdim=True)
        # With every concentration below 1 the density peaks at the corner of the largest.
        corner = one_hot(self.concentration.argmax(-1), shifted.shape[-1]).to(mode.dtype)
        below_one = (self.concentration < 1).all(-1, keepdim=True)
        return ops.where(below_one, corner, mode)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        c = self.concentration
        return c * (total - c) / (total**2 * (total + 1))

    def rsample(self, sample_shape=()) -> Tensor:
        # PyTorch's: the gamma draws and their ratios in float64, then rounded to the dtype
        # and kept inside (0, 1).
        shape = tuple(self._extended_shape(sample_shape))
        dtype = self.concentration.dtype
        gammas = standard_gamma(self.concentration.expand(shape).to(float64))
        x = (gammas / gammas.sum(-1, keepdim=True)).to(dtype)
        below_one = float(np.nextafter(dtype.type(1), dtype.type(0)))
        return x.clamp(min=finfo(dtype).tiny, max=below_one)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return ops.xlogy(c - 1, value).sum(-1) + ops.lgamma(c.sum(-1)) - ops.lgamma(c).sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return (
            ops.lgamma(c).sum(-1)
            - ops.lgamma(total)
            - (k - total) * ops.digamma(total)
            - ((c - 1) * ops.digamma(c)).sum(-1)
        )


__all__ = ["Dirichlet"]
