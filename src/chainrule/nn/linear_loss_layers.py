"""`LinearCrossEntropyLoss`: a linear layer fused with cross entropy, as a module holding the
layer (`chainrule.nn.linear_losses` has the function and its options)."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from .._tensor import Tensor
from ..errors import DomainError, ShapeError, fmt_shape
from .layers import Linear, _Loss
from .linear_losses import LinearCrossEntropyOptions, linear_cross_entropy

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_Loss):
    """`linear_cross_entropy` with its own `Linear` layer (``self.linear``), which maps
    in_features to ``num_classes`` logits (times ``out_features`` for a K-dimensional loss).

    The layer's weight is stored flat, (num_classes * prod(out_features), in_features), as
    PyTorch's, so state dicts carry over; ``forward`` reshapes it. ``weight`` (per-class
    rescaling, shape (num_classes,)) is a buffer; ``options`` is accepted and ignored (see
    `LinearCrossEntropyOptions`).

    >>> import chainrule as cr
    >>> loss = LinearCrossEntropyLoss(5, 10, out_features=(4, 3))
    >>> loss(cr.randn(2, 5), cr.randint(0, 10, (2, 4, 3))).shape
    ()
    >>> loss.linear.weight.shape
    (120, 5)
    """

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device=None,
        dtype=None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and np.shape(weight) != (num_classes,):
            raise ShapeError(
                f"LinearCrossEntropyLoss: weight must have shape ({num_classes},), one per "
                f"class, got {fmt_shape(np.shape(weight))}"
            )
        if not 0 <= label_smoothing <= 1:
            raise DomainError(
                f"LinearCrossEntropyLoss: label_smoothing must lie in [0, 1], got "
                f"{label_smoothing!r}"
            )
        if device is not None:
            dtypes.device(device)  # only the CPU is accepted
        super().__init__(reduction)
        self.register_buffer("weight", weight)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias)
        if dtype is not None:
            self.linear.to(dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        logical = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return linear_cross_entropy(
            input,
            self.linear.weight.reshape(*logical, self.linear.in_features),
            target,
            linear_bias=None if bias is None else bias.reshape(logical),
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
