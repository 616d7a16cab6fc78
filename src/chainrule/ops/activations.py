"""The activations PyTorch also has as tensor methods (``x.hardshrink()``, ``x.prelu(w)``),
composed from rows; the rest of the activation functions are in `chainrule.nn.functional`."""

from __future__ import annotations

import numpy as np

from ..errors import ShapeError, fmt_shape
from .elementwise import abs, where

__all__ = ["hardshrink", "prelu"]


def hardshrink(input, lambd: float = 0.5):
    """x where |x| > lambd, else 0; the gradient is 1 outside [-lambd, lambd], 0 inside
    (and at the edges, as PyTorch).

    >>> import chainrule as cr
    >>> hardshrink(cr.tensor([-1.0, 0.25, 0.5, 2.0]))
    tensor([-1.,  0.,  0.,  2.])
    """
    return where(abs(input) > lambd, input, 0.0)


def prelu(input, weight):
    """x where x > 0, else weight * x, with one learned slope (weight of 1 element) or one
    per channel (dim 1 of the input, or dim 0 of a 1-D input).

    >>> import chainrule as cr
    >>> prelu(cr.tensor([[-2.0, 2.0]]), cr.tensor([0.25]))
    tensor([[-0.5000,  2.0000]])
    """
    shape, count = np.shape(input), int(np.prod(np.shape(weight), dtype=np.int64))
    channels = 1 if not shape else shape[1] if len(shape) >= 2 else shape[0]
    if count not in (1, channels) or np.ndim(weight) > 1:
        raise ShapeError(
            f"prelu: weight of shape {fmt_shape(np.shape(weight))} must have 1 element or one "
            f"per channel ({channels}) of the input of shape {fmt_shape(shape)}"
        )
    if count > 1 and len(shape) >= 2:
        weight = weight.reshape((-1,) + (1,) * (len(shape) - 2))
    return where(input > 0, input, input * weight)
