"""Random samples as ops: ``binomial`` (a draw per element of a count and a probability), and
the generator's ``bernoulli`` and ``multinomial``, which Tensor's methods of those names call
here. The generator and the factories of random tensors are in `chainrule.random`.
"""

from __future__ import annotations

import numpy as np

from .. import random, rejection_sampling
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..random import bernoulli, multinomial  # noqa: F401  (Tensor.bernoulli/multinomial call them)
from .arguments import as_tensor

__all__ = ["binomial"]


def binomial(count, prob, generator=None) -> Tensor:
    """Samples of Binomial(``count``, ``prob``), elementwise (broadcasting), in ``count``'s
    floating-point dtype, drawn from ``generator`` or the default one (`manual_seed`).

    No gradient (PyTorch's backward raises). Unlike PyTorch, a ``prob`` outside [0, 1] or a
    negative ``count`` is an error (PyTorch returns meaningless numbers); a fractional count
    is truncated.

    >>> import chainrule as cr
    >>> cr.binomial(cr.tensor([3.0, 0.0]), cr.tensor([1.0, 0.5]))
    tensor([3., 0.])
    """
    n, p = as_tensor(count, "binomial"), as_tensor(prob, "binomial")
    if n.dtype.kind != "f" or p.dtype.kind != "f":
        raise DTypeError(
            f"binomial: count and prob must be floating-point, got {fmt_dtype(n.dtype)} and "
            f"{fmt_dtype(p.dtype)}"
        )
    if not np.all((p._array >= 0) & (p._array <= 1)):
        raise DomainError("binomial: prob must lie in [0, 1] (and not be NaN)")
    if not np.all(n._array >= 0):
        raise DomainError("binomial: count must be non-negative (and not NaN)")
    try:
        shape = np.broadcast_shapes(n.shape, p.shape)
    except ValueError:
        raise ShapeError(
            f"binomial: count of shape {fmt_shape(n.shape)} and prob of shape "
            f"{fmt_shape(p.shape)} do not broadcast"
        ) from None
    count = np.broadcast_to(n._array, shape)
    g = random.resolve(generator, "binomial")
    return Tensor._make(rejection_sampling.binomial_values(count, p._array, g))
