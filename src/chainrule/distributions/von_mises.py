"""`VonMises`, the circular normal: angles with density exp(kappa cos(x - loc)) /
(2 pi I0(kappa)), drawn by PyTorch's rejection sampler (not reparameterised, as in PyTorch)."""

from __future__ import annotations

import math

import numpy as np

from .. import ops, random
from .._tensor import Tensor
from ..ops.transcendental import i1
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class VonMises(Distribution):
    """Von Mises distributions with mean direction ``loc`` and ``concentration`` kappa.

    Densities use log(I0(kappa)) directly, so they overflow past kappa ~ 700, where PyTorch's
    scaled Bessel approximations keep going.

    >>> import chainrule as cr
    >>> VonMises(cr.tensor(0.0), cr.tensor(1.0)).log_prob(cr.tensor(0.0))
    tensor(-1.0738)
    """

    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        kappa = self.concentration
        return 1 - i1(kappa) / ops.i0(kappa)

    def sample(self, sample_shape=()) -> Tensor:
        """Best and Fisher's rejection sampler, in float64 whatever the dtype, drawing as
        PyTorch's: each round three float64 uniforms per element (``rand((3,) + shape)``)
        until every element has accepted one."""
        shape = tuple(self._extended_shape(sample_shape))
        loc = self.loc._array.astype(np.float64)
        kappa = self.concentration._array.astype(np.float64)
        tau = 1 + np.sqrt(1 + 4 * kappa**2)
        rho = (tau - np.sqrt(2 * tau)) / (2 * kappa)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho**2) / (2 * rho))
        x = np.zeros(shape)
        done = np.zeros(shape, bool)
        while not done.all():
            u1, u2, u3 = random.rand((3,) + shape, dtype=np.float64)._array
            z = np.cos(math.pi * u1)
            f = (1 + r * z) / (r + z)
            c = kappa * (r - f)
            with np.errstate(divide="ignore", invalid="ignore"):
                accept = (c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0)
            x = np.where(accept, np.sign(u3 - 0.5) * np.arccos(f), x)
            done |= accept
        angles = np.mod(x + math.pi + loc, 2 * math.pi) - math.pi
        return Tensor._make(angles.astype(self.loc.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        kappa = self.concentration
        return kappa * ops.cos(value - self.loc) - math.log(2 * math.pi) - ops.log(ops.i0(kappa))


__all__ = ["VonMises"]
