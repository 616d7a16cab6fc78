"""`VonMises`, the circular normal: angles with density exp(kappa cos(x - loc)) /
(2 pi I0(kappa)), drawn by NumPy's sampler (not reparameterised, as in PyTorch)."""

from __future__ import annotations

import math

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
        shape = tuple(self._extended_shape(sample_shape))
        rng = random.numpy_generator(None, "VonMises.sample")
        loc, kappa = self.loc._array, self.concentration._array
        angles = rng.vonmises(loc.astype("float64"), kappa.astype("float64"), size=shape)
        return Tensor._make(angles.astype(loc.dtype))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        kappa = self.concentration
        return kappa * ops.cos(value - self.loc) - math.log(2 * math.pi) - ops.log(ops.i0(kappa))


__all__ = ["VonMises"]
