"""`ContinuousBernoulli` (Loaiza-Ganem and Cunningham, 2019): the density on [0, 1]
proportional to p**x (1 - p)**(1 - x), reparameterised through its inverse CDF.

Its normaliser C(p) = 2 atanh(1 - 2p) / (1 - 2p) and the moments divide 0 by 0 at p = 1/2;
within ``lims`` of 1/2 they are replaced by their Taylor series in (p - 1/2), as in PyTorch.
"""

from __future__ import annotations

import math

from .. import ops, random
from .._tensor import Tensor
from ..autograd import no_grad
from . import constraints
from .exp_family import ExponentialFamily
from .utils import BinaryParameters, broadcast_all, clamp_probs, logits_to_probs


class ContinuousBernoulli(BinaryParameters, ExponentialFamily):
    """Continuous Bernoulli distributions on [0, 1] with shape ``probs`` (or ``logits``).

    >>> import chainrule as cr
    >>> ContinuousBernoulli(cr.tensor(0.5)).log_prob(cr.tensor(0.3))
    tensor(0.)
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        self._set_binary(probs, logits)
        if probs is not None:
            if validate_args is not None and not (
                constraints.unit_interval.check(self.probs)._array.all()
            ):
                raise ValueError("ContinuousBernoulli: probs must lie in [0, 1]")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(self._param.shape, (), validate_args)

    @property
    def probs(self) -> Tensor:  # from logits: clamped, as the formulas need 0 < p < 1
        if "probs" not in self.__dict__:
            self.__dict__["probs"] = clamp_probs(logits_to_probs(self.logits, is_binary=True))
        return self.__dict__["probs"]

    @probs.setter
    def probs(self, value: Tensor) -> None:
        self.__dict__["probs"] = value

    def _stable(self) -> Tensor:
        """Where p is far enough from 1/2 for the closed forms."""
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut(self) -> Tensor:
        """p where the closed forms hold, else a stand-in (the branch is discarded there)."""
        return ops.where(self._stable(), self.probs, self._lims[0])

    def _log_normaliser(self) -> Tensor:
        p = self._cut()
        # log C(p) = log|log(1-p) - log p| - log|1 - 2p|, with each branch kept finite.
        below = ops.where(p <= 0.5, p, 0.0)
        above = ops.where(p >= 0.5, p, 1.0)
        closed = ops.log((ops.log1p(-p) - ops.log(p)).abs()) - ops.where(
            p <= 0.5, ops.log1p(-2 * below), ops.log(2 * above - 1)
        )
        d2 = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d2) * d2
        return ops.where(self._stable(), closed, taylor)

    @property
    def mean(self) -> Tensor:
        p = self._cut()
        closed = p / (2 * p - 1) + 1 / (ops.log1p(-p) - ops.log(p))
        d = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * d**2) * d
        return ops.where(self._stable(), closed, taylor)

    @property
    def variance(self) -> Tensor:
        p = self._cut()
        closed = p * (p - 1) / (1 - 2 * p) ** 2 + 1 / (ops.log1p(-p) - ops.log(p)) ** 2
        d2 = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * d2) * d2
        return ops.where(self._stable(), closed, taylor)

    def rsample(self, sample_shape=()) -> Tensor:
        u = random.rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        return self.icdf(u)

    def sample(self, sample_shape=()) -> Tensor:
        with no_grad():
            return self.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # value log p + (1 - value) log(1 - p) = value * logits - softplus(logits)
        return logits * value - ops.softplus(logits) + self._log_normaliser()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut()
        closed = (p**value * (1 - p) ** (1 - value) + p - 1) / (2 * p - 1)
        inside = ops.where(self._stable(), closed, value)
        return ops.where(value <= 0, 0.0, ops.where(value >= 1, 1.0, inside))

    def icdf(self, value: Tensor) -> Tensor:
        p = self._cut()
        closed = (ops.log1p(-p + value * (2 * p - 1)) - ops.log1p(-p)) / (
            ops.log(p) - ops.log1p(-p)
        )
        return ops.where(self._stable(), closed, value)

    def entropy(self) -> Tensor:
        log_q, log_p = ops.log1p(-self.probs), ops.log(self.probs)
        return self.mean * (log_q - log_p) - self._log_normaliser() - log_q


__all__ = ["ContinuousBernoulli"]
