"""Convolution and pooling layers: Conv1d, Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d.

Each calls a function of `chainrule.ops.conv`; the Conv layers own a weight and a bias,
initialised with PyTorch's formulas (the random numbers differ).
"""

from __future__ import annotations

import math

from .._tensor import Tensor
from ..creation import zeros
from ..errors import DomainError, DTypeError, ShapeError
from ..ops.conv import conv1d, conv2d
from ..ops.padding import pad
from ..ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from . import init
from .module import Module, Parameter

__all__ = ["AdaptiveAvgPool2d", "AvgPool2d", "Conv1d", "Conv2d", "MaxPool2d"]

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int, name: str, what: str) -> tuple[int, ...]:
    """An int or a sequence of n ints as a tuple of n ints (PyTorch's _pair for n = 2)."""
    items = (value,) * n if isinstance(value, int) and not isinstance(value, bool) else value
    message = f"{name}: {what} must be an int or a tuple of {n} ints, got {value!r}"
    if not isinstance(items, (tuple, list)):
        raise DTypeError(message)
    if len(items) != n:
        raise ShapeError(message)
    return tuple(items)


class _ConvNd(Module):
    """What Conv1d and Conv2d share: arguments, parameters, initialisation, repr."""

    _spatial = 0
    _function = staticmethod(conv2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        dtype=None,
    ) -> None:
        super().__init__()
        name, n = type(self).__name__, self._spatial
        if not isinstance(groups, int) or groups < 1:
            raise DomainError(f"{name}: groups must be a positive int, got {groups!r}")
        for what, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            if channels % groups:
                raise DomainError(f"{name}: {what}={channels} is not divisible by groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise DomainError(
                f"{name}: padding_mode must be one of {_PADDING_MODES}, got {padding_mode!r}"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n, name, "kernel_size")
        self.stride = _ntuple(stride, n, name, "stride")
        self.dilation = _ntuple(dilation, n, name, "dilation")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise DomainError(
                    f"{name}: padding must be 'valid', 'same' or numbers, got {padding!r}"
                )
            if padding == "same" and any(s != 1 for s in self.stride):
                raise DomainError(
                    f"{name}: padding='same' needs stride 1, got stride {self.stride}"
                )
            self.padding = padding
        else:
            self.padding = _ntuple(padding, n, name, "padding")
        self.groups = groups
        self.padding_mode = padding_mode
        self.weight = Parameter(
            zeros(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype)
        )
        if bias:
            self.bias = Parameter(zeros(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """PyTorch's initialisation: kaiming_uniform_(a=sqrt(5)) for the weight, which is
        U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and the same bounds for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            init.uniform_(self.bias, -bound, bound)

    def _explicit_padding(self) -> tuple[int, ...]:
        """The padding as ``pad`` wants it: (before, after) pairs, last dimension first; for
        "same" an odd total puts the extra one after, as in `chainrule.ops.conv.conv2d`."""
        pairs = []
        for i, (k, d) in enumerate(zip(self.kernel_size, self.dilation)):
            if self.padding == "same":
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
            else:
                p = 0 if self.padding == "valid" else self.padding[i]
                pairs.append((p, p))
        return tuple(n for pair in reversed(pairs) for n in pair)

    def forward(self, input: Tensor) -> Tensor:
        if self.padding_mode == "zeros":
            return self._function(
                input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                self.groups,
            )  # fmt: skip
        padded = pad(input, self._explicit_padding(), mode=self.padding_mode)
        return self._function(
            padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups
        )

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if isinstance(self.padding, str) or any(self.padding):
            text += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode}"
        return text


class Conv1d(_ConvNd):
    """1-D convolution over (N, C, L) or (C, L) inputs, as ``torch.nn.Conv1d``.

    ``padding_mode`` "zeros", "reflect", "replicate" or "circular"; ``padding`` may be
    "same" or "valid".

    >>> import chainrule
    >>> layer = Conv1d(4, 8, 3, padding=1)
    >>> layer
    Conv1d(4, 8, kernel_size=(3,), stride=(1,), padding=(1,))
    >>> layer(chainrule.zeros(2, 4, 10)).shape
    (2, 8, 10)
    """

    _spatial = 1
    _function = staticmethod(conv1d)


class Conv2d(_ConvNd):
    """2-D convolution over (N, C, H, W) or (C, H, W) inputs, as ``torch.nn.Conv2d``.

    The weight has shape (out_channels, in_channels/groups, kH, kW); ``padding_mode`` is
    "zeros", "reflect", "replicate" or "circular"; ``padding`` may be "same" or "valid".

    >>> import chainrule
    >>> layer = Conv2d(3, 16, 3, stride=2, bias=False)
    >>> layer
    Conv2d(3, 16, kernel_size=(3, 3), stride=(2, 2), bias=False)
    >>> layer(chainrule.zeros(1, 3, 9, 9)).shape
    (1, 16, 4, 4)
    """

    _spatial = 2
    _function = staticmethod(conv2d)


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
