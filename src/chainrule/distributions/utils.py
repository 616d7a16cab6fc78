"""Helpers the distributions share: broadcasting parameters to tensors, moving between
probabilities and logits, clamping probabilities away from 0 and 1, summing the rightmost
dims, `lazy_property` (a parameter computed from the other one on first use), and
`BinaryParameters`, the ``probs``-or-``logits`` pair of the families built on coin flips."""

from __future__ import annotations

import numbers

import numpy as np

from .. import ops
from .._tensor import Tensor
from ..creation import as_tensor
from ..dtypes import finfo, get_default_dtype
from ..errors import DTypeError

euler_constant = 0.57721566490153286060  # Euler-Mascheroni, the mean of a standard Gumbel


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """``values`` (tensors and Python numbers) as tensors of one broadcast shape; numbers take
    the first tensor's dtype, or the default dtype when there is none.

    >>> [tuple(t.shape) for t in broadcast_all(Tensor([1.0, 2.0]), 0.5)]
    [(2,), (2,)]
    """
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), get_default_dtype())
    tensors = []
    for v in values:
        if isinstance(v, Tensor):
            tensors.append(v)
        elif isinstance(v, (numbers.Number, np.ndarray)):
            tensors.append(as_tensor(v, dtype=dtype))
        else:
            raise DTypeError(f"broadcast_all: expected tensors or numbers, got {type(v).__name__}")
    return tuple(ops.broadcast_tensors(*tensors))


def sum_rightmost(value, dim: int):
    """``value`` summed over its ``dim`` rightmost dims (unchanged for ``dim == 0``)."""
    if dim == 0 or not isinstance(value, Tensor):
        return value
    return value.reshape(tuple(value.shape[: value.ndim - dim]) + (-1,)).sum(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to [eps, 1 - eps] of its dtype, so their logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: sigmoid for binary ones, else a softmax over the last dim."""
    return ops.sigmoid(logits) if is_binary else ops.softmax(logits, -1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities (clamped first): log-odds for binary ones, else logs."""
    clamped = clamp_probs(probs)
    if is_binary:
        return ops.log(clamped) - ops.log1p(-clamped)
    return ops.log(clamped)


class lazy_property:
    """A property computed on first read and then stored on the instance (so Categorical's
    ``probs`` is computed from ``logits`` only when asked for, and once)."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        instance.__dict__[self.wrapped.__name__] = value
        return value


def require_one(name: str, probs, logits) -> None:
    """Raise ValueError unless exactly one of ``probs`` and ``logits`` is given."""
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: give either probs or logits, not both and not neither")


class BinaryParameters:
    """Mixin for families with a success probability given as ``probs`` or as ``logits``
    (Bernoulli, Geometric, Binomial...): the one given is stored, the other computed on use."""

    def _set_binary(self, probs, logits, *others) -> tuple:
        """Store ``probs`` or ``logits`` broadcast with ``others``; return ``others`` so."""
        require_one(type(self).__name__, probs, logits)
        *others, param = broadcast_all(*others, probs if probs is not None else logits)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        return tuple(others)

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new

    @lazy_property
    def logits(self) -> Tensor:
        """The log-odds log(p / (1 - p))."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """The probability of success."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape


__all__ = [
    "BinaryParameters", "broadcast_all", "clamp_probs", "euler_constant", "lazy_property",
    "logits_to_probs", "probs_to_logits", "require_one", "sum_rightmost",
]  # fmt: skip
