"""`TransformedDistribution`: a base distribution pushed through transforms; samples are
the transformed base samples and ``log_prob`` adds the inverse maps' log-Jacobians (the
change of variables). LogNormal, Gumbel and the relaxed distributions are built this way."""

from __future__ import annotations

from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import sum_rightmost


class TransformedDistribution(Distribution):
    """``base_distribution`` followed by ``transforms`` (one Transform or a list, applied in
    order).

    >>> import chainrule as cr
    >>> from chainrule.distributions import ExpTransform, Normal
    >>> d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
    >>> d.log_prob(cr.tensor(1.0))
    tensor(-0.9189)
    """

    arg_constraints: dict = {}

    def __init__(
        self, base_distribution: Distribution, transforms, validate_args: bool | None = None
    ) -> None:
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, list) or not all(
            isinstance(t, Transform) for t in transforms
        ):
            raise ValueError(
                "TransformedDistribution: transforms must be a Transform or a list of them"
            )
        self.transforms = transforms
        chain = ComposeTransform(transforms)
        base_shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        base_event_dim = len(base_distribution.event_shape)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError(
                f"TransformedDistribution: the base's shape {base_shape} has fewer dims than "
                f"the transforms' event dim {chain.domain.event_dim}"
            )
        shape = chain.forward_shape(base_shape)
        needed = chain.inverse_shape(shape)
        if needed != base_shape:  # a transform's parameters broadcast the base up
            base_distribution = base_distribution.expand(needed[: len(needed) - base_event_dim])
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        event_dim = chain.codomain.event_dim + max(base_event_dim - chain.domain.event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args)

    def expand(self, batch_shape, _instance=None) -> TransformedDistribution:
        new = super().expand(batch_shape, _instance)
        shape = tuple(batch_shape) + tuple(self.event_shape)
        chain = ComposeTransform(self.transforms)
        base_shape = chain.inverse_shape(shape)
        base_batch = base_shape[: len(base_shape) - len(self.base_dist.event_shape)]
        new.base_dist = self.base_dist.expand(base_batch)
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support, len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()) -> Tensor:
        x = self.base_dist.sample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x.detach()

    def rsample(self, sample_shape=()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            jacobian = transform.log_abs_det_jacobian(x, y)
            log_prob = log_prob - sum_rightmost(jacobian, event_dim - transform.domain.event_dim)
            y = x
        base = self.base_dist.log_prob(y)
        return log_prob + sum_rightmost(base, event_dim - len(self.base_dist.event_shape))

    def _sign(self):
        """+1 where the transforms increase, -1 where they decrease (a number or a tensor)."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        return sign

    @staticmethod
    def _reflect(prob, sign):
        """prob where the chain increases, 1 - prob where it decreases."""
        return prob if isinstance(sign, int) and sign == 1 else sign * (prob - 0.5) + 0.5

    def cdf(self, value: Tensor) -> Tensor:
        """The base's cdf at the inverse-transformed value (monotone transforms only)."""
        for transform in reversed(self.transforms):
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._reflect(self.base_dist.cdf(value), self._sign())

    def icdf(self, value: Tensor) -> Tensor:
        """The transformed base icdf (monotone transforms only)."""
        value = self.base_dist.icdf(self._reflect(value, self._sign()))
        for transform in self.transforms:
            value = transform(value)
        return value


__all__ = ["TransformedDistribution"]
