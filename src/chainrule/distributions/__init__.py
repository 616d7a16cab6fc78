"""Probability distributions with sampling, reparameterised sampling and log-densities that
differentiate through chainrule's ops: ``torch.distributions``' names and modules
(``chainrule.distributions.normal``, ``.constraints``, ``.kl``, ``.transforms``...).

>>> import chainrule as cr
>>> from chainrule.distributions import Normal, kl_divergence
>>> loc = cr.tensor(0.5, requires_grad=True)
>>> x = Normal(loc, 1.0).rsample((100,))
>>> x.mean().backward()
>>> round(loc.grad.item(), 6)
1.0
"""

from . import constraints, kl, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from .uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform",
    "Dirichlet", "Distribution", "ExpTransform", "Exponential", "ExponentialFamily", "Gamma",
    "Gumbel", "Independent", "Laplace", "LogNormal", "MultivariateNormal", "Normal",
    "OneHotCategorical", "Poisson", "PowerTransform", "RelaxedBernoulli",
    "RelaxedOneHotCategorical", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
    "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints",
    "identity_transform", "kl", "kl_divergence", "register_kl", "transforms",
]  # fmt: skip
