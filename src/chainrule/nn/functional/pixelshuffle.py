"""`pixel_shuffle` and `pixel_unshuffle`: channels moved into (or out of) the spatial dims.
Their modules are in `chainrule.nn.modules.pixelshuffle`."""

from __future__ import annotations

import numbers

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import DomainError, ShapeError, fmt_shape

__all__ = ["pixel_shuffle", "pixel_unshuffle"]


def _check_factor(op: str, factor) -> int:
    if not isinstance(factor, numbers.Integral) or isinstance(factor, bool) or factor < 1:
        raise DomainError(f"{op}: the factor must be a positive int, got {factor!r}")
    return int(factor)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r², H, W) -> (*, C, H r, W r): each r x r block of outputs comes from r² channels.

    >>> import chainrule as cr
    >>> pixel_shuffle(cr.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = _check_factor("pixel_shuffle", upscale_factor)
    shape = np.shape(input)
    if len(shape) < 3 or shape[-3] % (r * r):
        raise ShapeError(
            f"pixel_shuffle: input of shape {fmt_shape(shape)} needs at least 3 dims and a "
            f"channel count (dim -3) divisible by upscale_factor² = {r * r}"
        )
    *lead, c, h, w = shape
    blocks = input.reshape(*lead, c // (r * r), r, r, h, w)
    k = len(lead)
    order = (*range(k), k, k + 3, k + 1, k + 4, k + 2)
    return ops.permute(blocks, order).reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r², H, W), the inverse of `pixel_shuffle`.

    >>> import chainrule as cr
    >>> pixel_unshuffle(cr.arange(4.0).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = _check_factor("pixel_unshuffle", downscale_factor)
    shape = np.shape(input)
    if len(shape) < 3 or shape[-1] % r or shape[-2] % r:
        raise ShapeError(
            f"pixel_unshuffle: input of shape {fmt_shape(shape)} needs at least 3 dims and "
            f"height and width divisible by downscale_factor = {r}"
        )
    *lead, c, h, w = shape
    blocks = input.reshape(*lead, c, h // r, r, w // r, r)
    k = len(lead)
    order = (*range(k), k, k + 2, k + 4, k + 1, k + 3)
    return ops.permute(blocks, order).reshape(*lead, c * r * r, h // r, w // r)
