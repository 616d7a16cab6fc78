"""`Independent`: a distribution whose rightmost batch dims are read as event dims, so that
``log_prob`` sums over them (a diagonal Normal as one distribution on vectors)."""

from __future__ import annotations

from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims
    moved into the event.

    >>> import chainrule as cr
    >>> from chainrule.distributions import Normal
    >>> d = Independent(Normal(cr.zeros(3, 2), 1.0), 1)
    >>> d.batch_shape, d.event_shape, d.log_prob(cr.zeros(3, 2)).shape
    (chainrule.Size([3]), chainrule.Size([2]), (3,))
    """

    arg_constraints: dict = {}

    def __init__(
        self,
        base_distribution: Distribution,
        reinterpreted_batch_ndims: int,
        validate_args: bool | None = None,
    ) -> None:
        batch = tuple(base_distribution.batch_shape)
        n = reinterpreted_batch_ndims
        if n > len(batch):
            raise ValueError(
                f"Independent: reinterpreted_batch_ndims must be at most the base's "
                f"len(batch_shape) {len(batch)}, got {n}"
            )
        cut = len(batch) - n
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = n
        event = batch[cut:] + tuple(base_distribution.event_shape)
        super().__init__(batch[:cut], event, validate_args)

    def expand(self, batch_shape, _instance=None) -> Independent:
        new = super().expand(batch_shape, _instance)
        inner = tuple(batch_shape) + tuple(self.event_shape[: self.reinterpreted_batch_ndims])
        new.base_dist = self.base_dist.expand(inner)
        return new

    @property
    def has_rsample(self) -> bool:
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self) -> bool:
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        support = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            return constraints.independent(support, self.reinterpreted_batch_ndims)
        return support

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape=()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self) -> Tensor:
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        if self.reinterpreted_batch_ndims:
            raise NotImplementedError("Independent: enumerate over a reinterpreted batch")
        return self.base_dist.enumerate_support(expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"


__all__ = ["Independent"]
