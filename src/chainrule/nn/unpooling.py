"""Unpooling and fractional pooling layers: MaxUnpool1d/2d/3d (the inverse of max pooling
with indices) and FractionalMaxPool2d/3d, each calling a function of `chainrule.ops.pooling`."""

from __future__ import annotations

from .._tensor import Tensor
from ..errors import DomainError
from ..ops.pooling import (
    fractional_max_pool2d,
    fractional_max_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from .module import Module

__all__ = [
    "FractionalMaxPool2d", "FractionalMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
]  # fmt: skip


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
