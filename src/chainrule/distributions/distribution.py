"""`Distribution`, the base class every family extends: batch and event shapes, argument
and value validation, ``sample``/``rsample``, and the defaults (``stddev`` from ``variance``,
``expand`` over the parameters) that families may override."""

from __future__ import annotations

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..autograd import no_grad
from ..dtypes import Size
from . import constraints
from .utils import lazy_property


class Distribution:
    """A batch of probability distributions of one family, ``torch.distributions``' base.

    ``batch_shape`` counts independent distributions, ``event_shape`` the shape of one draw;
    ``sample(sample_shape)`` has shape ``sample_shape + batch_shape + event_shape``.
    ``rsample`` draws reparameterised samples (gradients flow to the parameters) where
    ``has_rsample`` is True. With validation on (the default, as PyTorch's; switch it with
    `set_default_validate_args` or ``validate_args=``), parameters outside
    ``arg_constraints`` raise ValueError when the distribution is made, and values outside
    ``support`` raise ValueError in ``log_prob``, ``cdf`` and ``icdf``.
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = True

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and value validation on or off for distributions made without
        ``validate_args=``."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            self._check_parameters()

    def _check_parameters(self) -> None:
        try:
            arg_constraints = self.arg_constraints
        except NotImplementedError:
            arg_constraints = {}
        for name, constraint in arg_constraints.items():
            if constraints.is_dependent(constraint):
                continue
            if name not in self.__dict__ and isinstance(
                getattr(type(self), name, None), lazy_property
            ):
                continue  # the parameter not given (probs when logits were)
            value = getattr(self, name)
            if not constraint.check(value)._array.all():
                raise ValueError(
                    f"{type(self).__name__}: parameter {name} of shape {tuple(value.shape)} "
                    f"must satisfy the constraint {constraint!r}, but found invalid values:\n"
                    f"{value}"
                )

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single draw."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """Each parameter's name mapped to the constraint it must satisfy."""
        raise NotImplementedError(f"{type(self).__name__} does not define arg_constraints")

    @property
    def support(self):
        """The constraint every value of the distribution satisfies."""
        raise NotImplementedError(f"{type(self).__name__} does not define support")

    @property
    def mean(self) -> Tensor:
        """The mean of each distribution in the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self) -> Tensor:
        """The mode of each distribution in the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        """The variance of each distribution in the batch."""
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self) -> Tensor:
        """The standard deviation: the square root of ``variance``."""
        return self.variance.sqrt()

    def expand(self, batch_shape, _instance=None) -> Distribution:
        """This distribution with its parameters expanded (without copying) to
        ``batch_shape``; a parameter's event dims stay as they are."""
        batch_shape = Size(batch_shape)
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        for name in self.arg_constraints:
            value = self.__dict__.get(name)
            if isinstance(value, Tensor):
                tail = tuple(value.shape[len(self.batch_shape) :])
                new.__dict__[name] = value.expand(tuple(batch_shape) + tail)
        new._batch_shape = batch_shape
        return new

    def _extended_shape(self, sample_shape=()) -> Size:
        """``sample_shape + batch_shape + event_shape``."""
        return Size(tuple(sample_shape) + tuple(self.batch_shape) + tuple(self.event_shape))

    def sample(self, sample_shape=()) -> Tensor:
        """Draw ``sample_shape`` batches of samples (no gradient flows to the parameters)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        """Draw reparameterised samples, through which gradients flow to the parameters."""
        raise NotImplementedError(
            f"{type(self).__name__} has no reparameterised sampler (has_rsample is False); "
            "use sample()"
        )

    def sample_n(self, n: int) -> Tensor:
        """``n`` samples (PyTorch's deprecated spelling of ``sample((n,))``)."""
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of the cumulative distribution function at ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def entropy(self) -> Tensor:
        """The entropy of each distribution in the batch (in nats)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return ops.exp(self.entropy())

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution, along a new leading dim."""
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def _validate_sample(self, value) -> None:
        """Raise ValueError unless ``value`` is a tensor whose shape broadcasts with the
        distribution's and whose events lie in its support."""
        if not isinstance(value, Tensor):
            raise ValueError(
                f"{type(self).__name__}: the value must be a Tensor, got {type(value).__name__}"
            )
        event_dim = len(self.event_shape)
        shape = tuple(value.shape)
        if len(shape) < event_dim or shape[len(shape) - event_dim :] != tuple(self.event_shape):
            raise ValueError(
                f"{type(self).__name__}: the value's shape {shape} must end in the event shape "
                f"{tuple(self.event_shape)}"
            )
        own = tuple(self.batch_shape) + tuple(self.event_shape)
        try:
            np.broadcast_shapes(shape, own)
        except ValueError:
            raise ValueError(
                f"{type(self).__name__}: the value's shape {shape} does not broadcast with the "
                f"distribution's batch and event shape {own}"
            ) from None
        support = self.support
        if support is None or constraints.is_dependent(support):
            return
        if not support.check(value)._array.all():
            raise ValueError(
                f"{type(self).__name__}: the value must lie within the support {support!r}, "
                f"but found invalid values:\n{value}"
            )

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        parts = []
        for name in names:
            value = self.__dict__[name]
            parts.append(f"{name}: {value if value.numel() == 1 else Size(value.shape)}")
        return f"{type(self).__name__}({', '.join(parts)})"


__all__ = ["Distribution"]
