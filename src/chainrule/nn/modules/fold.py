"""Unfold (every sliding window as a column, im2col) and Fold (columns summed back into an
image, col2im), the layers of `chainrule.nn.functional.unfold` and ``fold``."""

from __future__ import annotations

from ..._tensor import Tensor
from ...ops.conv import fold, unfold
from .module import Module

__all__ = ["Fold", "Unfold"]


class Unfold(Module):
    """Every sliding window of (N, C, H, W) inputs as a column, as ``torch.nn.Unfold`` (see
    `chainrule.nn.functional.unfold`).

    >>> import chainrule
    >>> Unfold(2)
    Unfold(kernel_size=2, dilation=1, padding=0, stride=1)
    >>> Unfold(2)(chainrule.zeros(1, 3, 4, 4)).shape
    (1, 12, 9)
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
            f"stride={self.stride}"
        )


class Fold(Unfold):
    """Columns summed back into an image of ``output_size``, as ``torch.nn.Fold`` (see
    `chainrule.nn.functional.fold`).

    >>> import chainrule
    >>> Fold(3, 2)
    Fold(output_size=3, kernel_size=2, dilation=1, padding=0, stride=1)
    >>> Fold(3, 2)(chainrule.ones(1, 4, 4))[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)  # fmt: skip

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, " + super().extra_repr()
