"""`ExponentialFamily`, the base PyTorch gives the families whose densities have the form
exp(<t(x), theta> - F(theta) + k(x)) (Normal, Gamma, Bernoulli...). Here it only marks them:
each family writes its entropy out in closed form rather than through F's Bregman divergence."""

from __future__ import annotations

from .distribution import Distribution


class ExponentialFamily(Distribution):
    """Base class of the exponential-family distributions (``torch.distributions``' name);
    a marker here, with no methods of its own."""


__all__ = ["ExponentialFamily"]
