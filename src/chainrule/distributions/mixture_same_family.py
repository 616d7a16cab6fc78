"""`MixtureSameFamily`: a mixture whose components are one batched distribution, with the
mixing weights a `Categorical` over the component batch's last dim."""

from __future__ import annotations

from .. import ops
from .._tensor import Tensor
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class MixtureSameFamily(Distribution):
    """A mixture of the components along the last batch dim of ``component_distribution``,
    weighted by ``mixture_distribution`` (a Categorical with as many categories).

    >>> import chainrule as cr
    >>> from chainrule.distributions import Categorical, Normal
    >>> mix = MixtureSameFamily(Categorical(cr.tensor([0.5, 0.5])),
    ...                         Normal(cr.tensor([-1.0, 1.0]), 1.0))
    >>> mix.mean, mix.variance
    (tensor(0.), tensor(2.))
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("MixtureSameFamily: mixture_distribution must be a Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("MixtureSameFamily: component_distribution must be a Distribution")
        mixture_batch = tuple(mixture_distribution.batch_shape)
        component_batch = tuple(component_distribution.batch_shape)
        k = mixture_distribution.logits.shape[-1]
        if not component_batch or component_batch[-1] != k:
            raise ValueError(
                f"MixtureSameFamily: the mixture has {k} components but the component "
                f"distribution's batch shape is {component_batch}"
            )
        try:
            batch = tuple(ops.broadcast_shapes(mixture_batch, component_batch[:-1]))
        except Exception:
            raise ValueError(
                f"MixtureSameFamily: batch shapes {mixture_batch} (mixture) and "
                f"{component_batch[:-1]} (components) do not broadcast"
            ) from None
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(batch, tuple(component_distribution.event_shape), validate_args)

    def expand(self, batch_shape, _instance=None) -> MixtureSameFamily:
        new = super().expand(batch_shape, _instance)
        k = self._mixture_distribution.logits.shape[-1]
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._component_distribution = self._component_distribution.expand(tuple(batch_shape) + (k,))
        return new

    @constraints.dependent_property
    def support(self):
        return self._component_distribution.support

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture_distribution

    @property
    def component_distribution(self) -> Distribution:
        return self._component_distribution

    def _weights(self) -> Tensor:
        """The mixing probabilities, with a trailing 1 per event dim."""
        probs = self._mixture_distribution.probs
        return probs.reshape(tuple(probs.shape) + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        dim = -1 - self._event_ndims
        return (self._weights() * self._component_distribution.mean).sum(dim)

    @property
    def variance(self) -> Tensor:
        # The law of total variance: E[Var] + Var[E].
        dim = -1 - self._event_ndims
        weights = self._weights()
        means = self._component_distribution.mean
        mean_of_variances = (weights * self._component_distribution.variance).sum(dim)
        centred = means - self.mean.unsqueeze(dim)
        return mean_of_variances + (weights * centred**2).sum(dim)

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def log_prob(self, x: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_weights = ops.log_softmax(self._mixture_distribution.logits, -1)
        return ops.logsumexp(log_prob_x + log_weights, -1)

    def cdf(self, x: Tensor) -> Tensor:
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def sample(self, sample_shape=()) -> Tensor:
        sample_shape = tuple(sample_shape)
        index = self._mixture_distribution.sample(sample_shape)  # sample + batch
        components = self._component_distribution.sample(sample_shape)  # ... + (k,) + event
        index = index.reshape(tuple(index.shape) + (1,) * (1 + self._event_ndims))
        index = index.expand(
            tuple(index.shape[: len(index.shape) - 1 - self._event_ndims])
            + (1,)
            + tuple(self.event_shape)
        )
        return components.gather(-1 - self._event_ndims, index).squeeze(-1 - self._event_ndims)

    def __repr__(self) -> str:
        return (
            f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n"
            f"  {self._component_distribution!r})"
        )


__all__ = ["MixtureSameFamily"]
