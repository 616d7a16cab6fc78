"""`RelaxedOneHotCategorical` (the Concrete or Gumbel-softmax distribution): exp of
`ExpRelaxedCategorical`, a softmax of (logits + Gumbel noise) / temperature on the simplex,
reparameterised and tending to OneHotCategorical as ``temperature`` -> 0."""

from __future__ import annotations

from .. import ops, random
from .._tensor import Tensor
from ..creation import as_tensor, full_like
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log-softmax((logits + G) / temperature),
    G standard Gumbel noise."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}  # fmt: skip
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        if not isinstance(temperature, Tensor):
            temperature = as_tensor(temperature, dtype=self._categorical._param.dtype)
        self.temperature = temperature
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]), validate_args)

    def expand(self, batch_shape, _instance=None) -> ExpRelaxedCategorical:
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(random.rand(shape, dtype=self.logits.dtype))
        gumbels = -ops.log(-ops.log(u))
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        t = self.temperature
        log_scale = ops.lgamma(full_like(t, float(k))) + (k - 1) * ops.log(t)
        score = logits - value * t
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Relaxed one-hot categorical distributions on the simplex, with ``temperature`` and
    ``probs`` or ``logits``.

    >>> import chainrule as cr
    >>> d = RelaxedOneHotCategorical(cr.tensor(0.5), probs=cr.tensor([0.2, 0.8]))
    >>> d.rsample((3,)).shape
    (3, 2)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}  # fmt: skip
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None) -> None:
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs


__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
