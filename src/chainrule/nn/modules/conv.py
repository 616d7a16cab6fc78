"""Convolution layers: Conv1d, Conv2d, Conv3d and ConvTranspose1d/2d/3d.

Each calls a function of `chainrule.ops.conv` and owns a weight and a bias, initialised with
PyTorch's formulas and draws (its numbers under one seed). Unfold and Fold are in `nn.modules.fold`,
pooling layers in `nn.modules.pooling`.
"""

from __future__ import annotations

import math

from ..._tensor import Tensor
from ...creation import zeros
from ...errors import DomainError, DTypeError, ShapeError
from ...ops import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    pad,
)
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
]  # fmt: skip

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
    _transposed = False

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
        shape = (
            (in_channels, out_channels // groups) if self._transposed
            else (out_channels, in_channels // groups)
        )  # fmt: skip
        self.weight = Parameter(zeros(*shape, *self.kernel_size, dtype=dtype))
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


class Conv3d(_ConvNd):
    """3-D convolution over (N, C, D, H, W) or (C, D, H, W) inputs, as ``torch.nn.Conv3d``.

    >>> import chainrule
    >>> layer = Conv3d(1, 2, 3, padding=1)
    >>> layer
    Conv3d(1, 2, kernel_size=(3, 3, 3), stride=(1, 1, 1), padding=(1, 1, 1))
    >>> layer(chainrule.zeros(1, 1, 4, 4, 4)).shape
    (1, 2, 4, 4, 4)
    """

    _spatial = 3
    _function = staticmethod(conv3d)


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: the weight is (in_channels,
    out_channels/groups, *kernel), initialised as PyTorch's (fan_in from that shape)."""

    _transposed = True

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups: int = 1,
        bias: bool = True,
        dilation=1,
        padding_mode: str = "zeros",
        dtype=None,
    ) -> None:
        name = type(self).__name__
        if padding_mode != "zeros":
            raise DomainError(
                f"{name}: only padding_mode='zeros' is supported, got {padding_mode!r}"
            )
        if isinstance(padding, str):
            raise DomainError(f"{name}: padding must be numbers, got {padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, dtype)  # fmt: skip
        self.output_padding = _ntuple(output_padding, self._spatial, name, "output_padding")

    def _output_padding(self, input: Tensor, output_size) -> tuple[int, ...]:
        """``output_padding``, or what makes the output ``output_size`` (its last dims)."""
        if output_size is None:
            return self.output_padding
        n = self._spatial
        wanted = tuple(output_size)[-n:]
        sizes = input.shape[-n:]
        extras = []
        for size, want, k, s, p, d in zip(sizes, wanted, self.kernel_size, self.stride,
                                         self.padding, self.dilation):  # fmt: skip
            smallest = (size - 1) * s - 2 * p + d * (k - 1) + 1
            if not smallest <= want < smallest + s:
                raise ShapeError(
                    f"{type(self).__name__}: output_size {tuple(output_size)} is not reachable: "
                    f"each size must be at least {smallest} and below {smallest + s}"
                )
            extras.append(want - smallest)
        return tuple(extras)

    def forward(self, input: Tensor, output_size=None) -> Tensor:
        return self._function(
            input, self.weight, self.bias, self.stride, self.padding,
            self._output_padding(input, output_size), self.groups, self.dilation,
        )  # fmt: skip

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if any(self.padding):
            text += f", padding={self.padding}"
        if any(d != 1 for d in self.dilation):
            text += f", dilation={self.dilation}"
        if any(self.output_padding):
            text += f", output_padding={self.output_padding}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text


class ConvTranspose1d(_ConvTransposeNd):
    """Transposed 1-D convolution over (N, C, L) or (C, L) inputs, as
    ``torch.nn.ConvTranspose1d``; ``forward(input, output_size)`` may pick the output length.

    >>> import chainrule
    >>> layer = ConvTranspose1d(2, 4, 3, stride=2)
    >>> layer(chainrule.zeros(1, 2, 5)).shape
    (1, 4, 11)
    """

    _spatial = 1
    _function = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Transposed 2-D convolution over (N, C, H, W) or (C, H, W) inputs, as
    ``torch.nn.ConvTranspose2d``: the weight is (in_channels, out_channels/groups, kH, kW).

    >>> import chainrule
    >>> layer = ConvTranspose2d(2, 3, 3, stride=2, output_padding=1)
    >>> layer
    ConvTranspose2d(2, 3, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))
    >>> layer(chainrule.zeros(1, 2, 4, 4)).shape
    (1, 3, 10, 10)
    """

    _spatial = 2
    _function = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Transposed 3-D convolution over (N, C, D, H, W) or (C, D, H, W) inputs, as
    ``torch.nn.ConvTranspose3d``: the weight is (in_channels, out_channels/groups, kD, kH, kW).

    >>> import chainrule
    >>> layer = ConvTranspose3d(2, 3, 2)
    >>> layer
    ConvTranspose3d(2, 3, kernel_size=(2, 2, 2), stride=(1, 1, 1))
    >>> layer(chainrule.zeros(1, 2, 2, 3, 4)).shape
    (1, 3, 3, 4, 5)
    """

    _spatial = 3
    _function = staticmethod(conv_transpose3d)
