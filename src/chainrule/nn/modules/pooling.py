"""Pooling layers: max, average, adaptive and Lp pooling in 1-D, 2-D and 3-D, fractional max
pooling and unpooling (the inverse of max pooling with indices). Each calls a function of
`chainrule.ops.pooling`, where the window and tie rules are described."""

from __future__ import annotations

from ..._tensor import Tensor
from ...errors import DomainError
from ...ops.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    fractional_max_pool2d,
    fractional_max_pool3d,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .module import Module

__all__ = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AvgPool1d", "AvgPool2d", "MaxPool1d", "MaxPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d",
    "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool3d",
    "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
]  # fmt: skip


class MaxPool2d(Module):
    """The maximum over each window, as ``torch.nn.MaxPool2d``; see
    `chainrule.ops.pooling.max_pool2d` for the tie rule.

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


class MaxPool3d(MaxPool2d):
    """The maximum over each window of (N, C, D, H, W) or (C, D, H, W) inputs, as
    ``torch.nn.MaxPool3d``.

    >>> import chainrule
    >>> pool = MaxPool3d(2)
    >>> pool
    MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(chainrule.zeros(1, 2, 4, 5, 6)).shape
    (1, 2, 2, 2, 3)
    """

    def forward(self, input: Tensor):
        return max_pool3d(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip


class AvgPool3d(AvgPool2d):
    """The mean over each window of (N, C, D, H, W) or (C, D, H, W) inputs, as
    ``torch.nn.AvgPool3d``.

    >>> import chainrule
    >>> pool = AvgPool3d(2, stride=1)
    >>> pool
    AvgPool3d(kernel_size=2, stride=1, padding=0)
    >>> pool(chainrule.ones(2, 3, 3, 3)).shape
    (2, 2, 2, 2)
    """

    def forward(self, input: Tensor) -> Tensor:
        return avg_pool3d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) inputs to ``output_size`` (None
    keeps a size).

    >>> import chainrule
    >>> AdaptiveAvgPool3d((1, None, 2))(chainrule.ones(1, 3, 4, 5, 6)).shape
    (1, 3, 1, 5, 2)
    """

    def forward(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Max pooling of (N, C, D, H, W) or (C, D, H, W) inputs to ``output_size``;
    ``return_indices`` also returns flat positions into D*H*W.

    >>> import chainrule
    >>> AdaptiveMaxPool3d(2)(chainrule.ones(3, 4, 5, 6)).shape
    (3, 2, 2, 2)
    """

    def forward(self, input: Tensor):
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    """(sum of x**norm_type over each window) ** (1 / norm_type); see `lp_pool1d`."""

    _function = staticmethod(lp_pool1d)

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, self.norm_type, self.kernel_size, self.stride,
                              self.ceil_mode)  # fmt: skip

    def extra_repr(self) -> str:
        return (
            f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
            f"ceil_mode={self.ceil_mode}"
        )


class LPPool1d(_LPPoolNd):
    """Lp pooling of (N, C, L) or (C, L) inputs, as ``torch.nn.LPPool1d``.

    >>> import chainrule
    >>> pool = LPPool1d(2, 2)
    >>> pool
    LPPool1d(norm_type=2, kernel_size=2, stride=None, ceil_mode=False)
    >>> pool(chainrule.tensor([[3.0, 4.0]]))
    tensor([[5.]])
    """


class LPPool2d(_LPPoolNd):
    """Lp pooling of (N, C, H, W) or (C, H, W) inputs, as ``torch.nn.LPPool2d``.

    >>> import chainrule
    >>> LPPool2d(1, (1, 2))(chainrule.ones(1, 2, 4)).tolist()
    [[[2.0, 2.0], [2.0, 2.0]]]
    """

    _function = staticmethod(lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Lp pooling of (N, C, D, H, W) or (C, D, H, W) inputs, as ``torch.nn.LPPool3d``.

    >>> import chainrule
    >>> round(LPPool3d(2, 2)(chainrule.ones(1, 2, 2, 2)).item(), 4)  # sqrt(8)
    2.8284
    """

    _function = staticmethod(lp_pool3d)


# Unpooling and fractional pooling.


def _tuple(value, n: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


class _MaxUnpoolNd(Module):
    """What the unpooling layers share: the pooling's window arguments, stored as tuples."""

    _spatial = 1
    _function = staticmethod(max_unpool1d)

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        n = self._spatial
        self.kernel_size = _tuple(kernel_size, n)
        self.stride = _tuple(stride if stride is not None else kernel_size, n)
        self.padding = _tuple(padding, n)

    def forward(self, input: Tensor, indices: Tensor, output_size=None) -> Tensor:
        return self._function(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)  # fmt: skip

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Puts each value of (N, C, L) or (C, L) inputs back at its index from `MaxPool1d`
    (``return_indices=True``), zeros elsewhere; ``forward(input, indices, output_size)``.

    >>> import chainrule
    >>> unpool = MaxUnpool1d(2)
    >>> unpool
    MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> unpool(chainrule.tensor([[5.0]]), chainrule.tensor([[1]]))
    tensor([[0., 5.]])
    """


class MaxUnpool2d(_MaxUnpoolNd):
    """The inverse of `MaxPool2d` with indices, over (N, C, H, W) or (C, H, W) inputs.

    >>> MaxUnpool2d(2)
    MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))
    """

    _spatial = 2
    _function = staticmethod(max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """The inverse of `MaxPool3d` with indices, over (N, C, D, H, W) or (C, D, H, W) inputs.

    >>> MaxUnpool3d(2, stride=1)
    MaxUnpool3d(kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=(0, 0, 0))
    """

    _spatial = 3
    _function = staticmethod(max_unpool3d)


class _FractionalMaxPoolNd(Module):
    """What the fractional pools share: kernel_size and one of output_size, output_ratio."""

    _function = staticmethod(fractional_max_pool2d)

    def __init__(self, kernel_size, output_size=None, output_ratio=None,
                 return_indices: bool = False, _random_samples=None) -> None:  # fmt: skip
        super().__init__()
        name = type(self).__name__
        if (output_size is None) == (output_ratio is None):
            raise DomainError(f"{name}: give exactly one of output_size and output_ratio")
        self.kernel_size = kernel_size
        self.output_size = output_size
        self.output_ratio = output_ratio
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)

    def forward(self, input: Tensor):
        return self._function(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, self._random_samples)  # fmt: skip


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) inputs (see
    `chainrule.ops.pooling.fractional_max_pool2d`): new window offsets every call, unless
    ``_random_samples`` fixes them.

    >>> import chainrule
    >>> FractionalMaxPool2d(2, output_ratio=0.5)(chainrule.zeros(1, 3, 8, 6)).shape
    (1, 3, 4, 3)
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, D, H, W) or (C, D, H, W) inputs.

    >>> import chainrule
    >>> FractionalMaxPool3d(2, output_size=3)(chainrule.zeros(2, 5, 5, 5)).shape
    (2, 3, 3, 3)
    """

    _function = staticmethod(fractional_max_pool3d)
