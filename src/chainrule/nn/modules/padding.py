"""Padding layers: ZeroPad1d/2d/3d, ConstantPad1d/2d/3d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, each `chainrule.ops.padding.pad` with a fixed
mode and amounts."""

from __future__ import annotations

from ..._tensor import Tensor
from ...errors import ShapeError
from ...ops import pad
from .module import Module

__all__ = [
    "CircularPad1d", "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d",
    "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "ZeroPad1d", "ZeroPad2d",
    "CircularPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d", "ZeroPad3d",
]  # fmt: skip


class _PadNd(Module):
    """An int pads every side; a tuple gives (left, right[, top, bottom]) as in `pad`."""

    _spatial = 1
    _mode = "constant"

    def __init__(self, padding, value: float = 0.0) -> None:
        super().__init__()
        n = 2 * self._spatial
        if isinstance(padding, int):
            padding = (padding,) * n
        if len(tuple(padding)) != n:
            raise ShapeError(
                f"{type(self).__name__}: padding must be an int or {n} ints, got {padding!r}"
            )
        self.padding = tuple(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        if self._mode == "constant":
            return pad(input, self.padding, "constant", self.value)
        return pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        if self._mode == "constant" and not isinstance(self, (ZeroPad1d, ZeroPad2d, ZeroPad3d)):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


class ConstantPad1d(_PadNd):
    """Pad the last dim with ``value``.

    >>> import chainrule
    >>> ConstantPad1d((1, 2), 9.0)(chainrule.zeros(1, 1))
    tensor([[9., 0., 9., 9.]])
    """

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding, value)


class ConstantPad2d(ConstantPad1d):
    """Pad the last two dims with ``value``.

    >>> ConstantPad2d(1, 0.5)
    ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)
    """

    _spatial = 2


class ZeroPad1d(_PadNd):
    """Pad the last dim with zeros.

    >>> ZeroPad1d(2)
    ZeroPad1d((2, 2))
    """


class ZeroPad2d(_PadNd):
    """Pad the last two dims with zeros: (left, right, top, bottom).

    >>> import chainrule
    >>> ZeroPad2d((1, 0, 0, 1))(chainrule.ones(1, 1, 1)).tolist()
    [[[0.0, 1.0], [0.0, 0.0]]]
    """

    _spatial = 2


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge not repeated).

    >>> import chainrule
    >>> ReflectionPad1d(2)(chainrule.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 2., 1., 2., 3., 2., 1.]])
    """

    _mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pad the last two dims with their reflection.

    >>> ReflectionPad2d(1)
    ReflectionPad2d((1, 1, 1, 1))
    """

    _spatial = 2


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values.

    >>> import chainrule
    >>> ReplicationPad1d((2, 1))(chainrule.tensor([[1.0, 2.0]]))
    tensor([[1., 1., 1., 2., 2.]])
    """

    _mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pad the last two dims by repeating their edges.

    >>> ReplicationPad2d(1)
    ReplicationPad2d((1, 1, 1, 1))
    """

    _spatial = 2


class CircularPad1d(_PadNd):
    """Pad the last dim by wrapping around.

    >>> import chainrule
    >>> CircularPad1d(1)(chainrule.tensor([[1.0, 2.0, 3.0]]))
    tensor([[3., 1., 2., 3., 1.]])
    """

    _mode = "circular"


class CircularPad2d(CircularPad1d):
    """Pad the last two dims by wrapping around.

    >>> CircularPad2d(1)
    CircularPad2d((1, 1, 1, 1))
    """

    _spatial = 2


class ConstantPad3d(ConstantPad1d):
    """Pad the last three dims with ``value``: (left, right, top, bottom, front, back).

    >>> ConstantPad3d(1, 2.0)
    ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=2.0)
    """

    _spatial = 3


class ZeroPad3d(_PadNd):
    """Pad the last three dims with zeros.

    >>> import chainrule
    >>> ZeroPad3d((1, 0, 0, 0, 0, 1))(chainrule.ones(1, 1, 1, 1)).shape
    (1, 2, 1, 2)
    """

    _spatial = 3


class ReflectionPad3d(ReflectionPad1d):
    """Pad the last three dims with their reflection.

    >>> ReflectionPad3d(1)
    ReflectionPad3d((1, 1, 1, 1, 1, 1))
    """

    _spatial = 3


class ReplicationPad3d(ReplicationPad1d):
    """Pad the last three dims by repeating their edges.

    >>> import chainrule
    >>> ReplicationPad3d(1)(chainrule.ones(1, 1, 1, 1)).shape
    (1, 3, 3, 3)
    """

    _spatial = 3


class CircularPad3d(CircularPad1d):
    """Pad the last three dims by wrapping around.

    >>> CircularPad3d(1)
    CircularPad3d((1, 1, 1, 1, 1, 1))
    """

    _spatial = 3
