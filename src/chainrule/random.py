"""chainrule's random number generator and the tensors drawn from it (``rand``, ``randn``,
``randint``); ``nn.init``, dropout and the data loaders draw from it too.

One documented hook, `swap_generator`, lets vmap stand a guard in for the generator while it
runs a function on batched tensors (draws there must be batched or refused).
"""

from __future__ import annotations

import numpy as np

from ._tensor import Tensor
from .creation import _new, _size
from .dtypes import DEFAULT_DTYPE, as_dtype, int64
from .errors import DomainError

_generator = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed chainrule's random number generator (rand, randn, randint, init, dropout)."""
    global _generator
    _generator = np.random.default_rng(seed)


def default_generator() -> np.random.Generator:
    """The NumPy Generator behind chainrule's random functions."""
    return _generator


def swap_generator(generator) -> np.random.Generator:
    """Make ``generator`` the one every draw uses; returns the one it replaces (vmap's hook)."""
    global _generator
    previous, _generator = _generator, generator
    return previous


def rand(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) from chainrule's generator."""
    array = _generator.random(_size(size)).astype(as_dtype(dtype) or DEFAULT_DTYPE)
    return _new(array, requires_grad)


def randn(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples from chainrule's generator."""
    array = _generator.standard_normal(_size(size)).astype(as_dtype(dtype) or DEFAULT_DTYPE)
    return _new(array, requires_grad)


def randint(low: int, high=None, size=None, dtype=None) -> Tensor:
    """Integers uniform in [low, high), int64 by default, as PyTorch takes them:
    ``randint(high, size)`` or ``randint(low, high, size)``.

    >>> randint(10, (16,)).shape, randint(3, 5, (2, 2)).shape
    ((16,), (2, 2))
    """
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high  # randint(high, size)
    elif high is None:
        low, high = 0, low
    if not low < high:
        raise DomainError(f"randint: low ({low}) must be less than high ({high})")
    size = () if size is None else size
    array = _generator.integers(low, high, size=_size((size,))).astype(as_dtype(dtype) or int64)
    return Tensor._make(array)
