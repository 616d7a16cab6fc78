"""The linear functions of `chainrule.nn.functional`: `linear` (x Wᵀ + b) and `bilinear`
(x1ᵀ A x2 + b). Their modules are in `nn.modules.linear` (not ``linear.py`` here: ``F.linear``
is a function)."""

from __future__ import annotations

import numpy as np

from ... import ops
from ..._tensor import Tensor
from ...errors import ShapeError, fmt_shape

__all__ = ["bilinear", "linear"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, with weight of shape (out_features, in_features).

    >>> import chainrule as cr
    >>> linear(cr.ones(2, 3), cr.ones(4, 3), cr.zeros(4)).shape
    (2, 4)
    """
    shape, weight_shape = np.shape(input), np.shape(weight)
    if len(weight_shape) != 2:
        raise ShapeError(
            f"linear: weight must have shape (out_features, in_features), got "
            f"{fmt_shape(weight_shape)}"
        )
    if not shape or shape[-1] != weight_shape[1]:
        raise ShapeError(
            f"linear: input has shape {fmt_shape(shape)} but weight has shape "
            f"{fmt_shape(weight_shape)}; the input's last dim must be in_features = "
            f"{weight_shape[1]}"
        )
    return ops.linalg.products.linear_row(input, weight, bias)  # one pass adds the bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = input1[..., i] weight[o, i, j] input2[..., j] + bias[o].

    >>> import chainrule as cr
    >>> bilinear(cr.tensor([[1.0, 2.0]]), cr.tensor([[3.0]]), cr.ones(4, 2, 1)).shape
    (1, 4)
    """
    shape1, shape2, weight_shape = np.shape(input1), np.shape(input2), np.shape(weight)
    if (len(weight_shape) != 3 or not shape1 or not shape2 or shape1[:-1] != shape2[:-1]
            or (shape1[-1], shape2[-1]) != weight_shape[1:]):  # fmt: skip
        raise ShapeError(
            f"bilinear: input1 {fmt_shape(shape1)}, input2 {fmt_shape(shape2)} and weight "
            f"{fmt_shape(weight_shape)} do not fit: weight must be (out, in1, in2) with in1 and "
            "in2 the inputs' last dims, and the inputs' other dims equal"
        )
    out = ops.einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias
