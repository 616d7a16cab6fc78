"""`OneHotCategorical`: a `Categorical` whose draws are one-hot vectors of length K; and
`OneHotCategoricalStraightThrough`, its straight-through reparameterisation."""

from __future__ import annotations

from .._tensor import Tensor
from ..creation import eye
from ..nn.functional import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """Categorical distributions with one-hot events (event shape ``(K,)``).

    >>> import chainrule as cr
    >>> d = OneHotCategorical(probs=cr.tensor([0.25, 0.75]))
    >>> d.log_prob(cr.tensor([0.0, 1.0]))
    tensor(-0.2877)
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(
        constraints.real, 1)}  # fmt: skip
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        param = self._categorical._param
        super().__init__(tuple(param.shape[:-1]), tuple(param.shape[-1:]), validate_args)

    def expand(self, batch_shape, _instance=None) -> OneHotCategorical:
        new = super().expand(batch_shape, _instance)
        new._categorical = self._categorical.expand(batch_shape)
        return new

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self) -> Tensor:
        return self._categorical.probs

    @property
    def mode(self) -> Tensor:
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self) -> Tensor:
        probs = self._categorical.probs
        return probs * (1 - probs)

    def sample(self, sample_shape=()) -> Tensor:
        probs = self._categorical.probs
        index = self._categorical.sample(sample_shape)
        return one_hot(index, probs.shape[-1]).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.event_shape[0]
        values = eye(n, dtype=self._categorical._param.dtype)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose ``rsample`` is the straight-through estimator: the one-hot
    draw forward, the gradient of ``probs`` backward (Bengio et al., 2013).

    >>> import chainrule as cr
    >>> logits = cr.tensor([0.0, 1.0], requires_grad=True)
    >>> OneHotCategoricalStraightThrough(logits=logits).rsample().sum().backward()
    >>> logits.grad
    tensor([0., 0.])
    """

    has_rsample = True

    def rsample(self, sample_shape=()) -> Tensor:
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
