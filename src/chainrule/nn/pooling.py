"""Pooling layers: max, average and adaptive pooling in 1-D and 2-D, each calling a function
of `chainrule.ops.pool` (where the window and tie rules are described)."""

from __future__ import annotations

from .._tensor import Tensor
from ..ops.pool import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d",
]  # fmt: skip


class MaxPool2d(Module):
    """The maximum over each window, as ``torch.nn.MaxPool2d``; see `chainrule.ops.pool.max_pool2d`
    for the tie rule.

    >>> import chainrule
    >>> pool = MaxPool2d(2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(chainrule.zeros(1, 3, 5, 5)).shape
    (1, 3, 2, 2)
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        dilation=1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor):
        return max_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class AvgPool2d(Module):
    """The mean over each window, as ``torch.nn.AvgPool2d``.

    >>> import chainrule
    >>> pool = AvgPool2d(3, stride=1, padding=1)
    >>> pool
    AvgPool2d(kernel_size=3, stride=1, padding=1)
    >>> pool(chainrule.ones(2, 4, 4)).shape
    (2, 4, 4)
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool2d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to a fixed ``output_size`` (None keeps a size), as
    ``torch.nn.AdaptiveAvgPool2d``.

    >>> import chainrule
    >>> pool = AdaptiveAvgPool2d((None, 1))
    >>> pool
    AdaptiveAvgPool2d(output_size=(None, 1))
    >>> pool(chainrule.ones(2, 3, 5, 7)).shape
    (2, 3, 5, 1)
    """

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """The maximum over each window of (N, C, L) or (C, L) inputs, as ``torch.nn.MaxPool1d``.

    >>> import chainrule
    >>> pool = MaxPool1d(3, stride=2)
    >>> pool
    MaxPool1d(kernel_size=3, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(chainrule.zeros(2, 4, 9)).shape
    (2, 4, 4)
    """

    def forward(self, input: Tensor):
        return max_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip


def _single(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class AvgPool1d(Module):
    """The mean over each window of (N, C, L) or (C, L) inputs, as ``torch.nn.AvgPool1d``.

    >>> import chainrule
    >>> pool = AvgPool1d(2)
    >>> pool
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> pool(chainrule.ones(1, 5)).shape
    (1, 2)
    """

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling of (N, C, L) or (C, L) inputs to ``output_size`` windows.

    >>> import chainrule
    >>> AdaptiveAvgPool1d(3)(chainrule.ones(2, 4, 7)).shape
    (2, 4, 3)
    """

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(Module):
    """Max pooling to a fixed ``output_size`` (None keeps a size), as
    ``torch.nn.AdaptiveMaxPool2d``; ``return_indices`` also returns the flat positions.

    >>> import chainrule
    >>> pool = AdaptiveMaxPool2d((2, None))
    >>> pool
    AdaptiveMaxPool2d(output_size=(2, None))
    >>> pool(chainrule.ones(1, 3, 5, 4)).shape
    (1, 3, 2, 4)
    """

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input: Tensor):
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max pooling of (N, C, L) or (C, L) inputs to ``output_size`` windows.

    >>> import chainrule
    >>> AdaptiveMaxPool1d(2)(chainrule.ones(3, 5)).shape
    (3, 2)
    """

    def forward(self, input: Tensor):
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)
