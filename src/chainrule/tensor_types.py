"""PyTorch's legacy typed-tensor classes (`FloatTensor`, `LongTensor`, ...): each builds a tensor
of its dtype (``FloatTensor(2, 3)``, ``LongTensor([1, 2])``), is an ``isinstance`` target for
tensors of that dtype, and names a type for ``Tensor.type``. No tensor is an instance of one
of these classes in the ordinary sense; ``isinstance`` asks the tensor's dtype. Also
`set_default_tensor_type`, which takes them."""

from __future__ import annotations

import numbers

import numpy as np

from ._tensor import Tensor
from .creation import tensor, zeros
from .dtypes import Size, as_device, set_default_dtype
from .errors import DTypeError, fmt_dtype
from .methods.factories import _TYPE_NAMES, _TYPES_BY_NAME


class LegacyTensorType(type):
    """The class of `FloatTensor` and its siblings (PyTorch's ``torch.tensortype``): calling one
    makes a tensor of its dtype, and ``isinstance(x, FloatTensor)`` asks whether ``x`` is a
    float32 Tensor.

    >>> import chainrule
    >>> chainrule.LongTensor([1, 2]).dtype, isinstance(chainrule.zeros(2), chainrule.FloatTensor)
    (dtype('int64'), True)
    >>> chainrule.zeros(2).type(chainrule.DoubleTensor).type()
    'torch.DoubleTensor'
    """

    dtype: np.dtype

    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None) -> Tensor:
        as_device(device, cls.__name__)
        if not args:
            return zeros(0, dtype=cls.dtype)
        if all(isinstance(n, numbers.Integral) and not isinstance(n, bool) for n in args):
            return zeros(*args, dtype=cls.dtype)  # PyTorch leaves the memory uninitialised
        if len(args) > 1:
            raise TypeError(
                f"{cls.__name__}: give sizes as integers or one sequence of data, "
                f"not {tuple(type(a).__name__ for a in args)}"
            )
        (data,) = args
        if isinstance(data, Size):
            return zeros(*data, dtype=cls.dtype)
        if isinstance(data, Tensor):
            if data.dtype != cls.dtype:
                raise DTypeError(
                    f"{cls.__name__}: expected a {fmt_dtype(cls.dtype)} tensor, got "
                    f"{fmt_dtype(data.dtype)}; convert it with .to() first"
                )
            return data  # PyTorch returns a tensor sharing its argument's data
        if isinstance(data, (numbers.Number, str, bytes)):
            raise TypeError(f"{cls.__name__}: data must be a sequence (got {type(data).__name__})")
        return tensor(data, dtype=cls.dtype)


def _legacy(name: str, dtype: np.dtype) -> LegacyTensorType:
    doc = (
        f"PyTorch's legacy class for {dtype.name} tensors: ``{name}(2, 3)`` is a {dtype.name} "
        f"tensor of that size (zeros), ``{name}([1, 2])`` one of that data; "
        f"``isinstance(x, {name})`` asks whether ``x`` is a {dtype.name} Tensor."
    )
    return LegacyTensorType(name, (), {"__doc__": doc, "__module__": "chainrule", "dtype": dtype})


def set_default_tensor_type(t: LegacyTensorType | str) -> None:
    """PyTorch's older way to set the default dtype: ``set_default_tensor_type(DoubleTensor)``
    (or ``"torch.DoubleTensor"``) is ``set_default_dtype(float64)``; floating types only.

    >>> import chainrule
    >>> set_default_tensor_type("torch.DoubleTensor")
    >>> chainrule.zeros(1).dtype
    dtype('float64')
    >>> set_default_tensor_type(FloatTensor)
    """
    name = t if isinstance(t, str) else f"torch.{t.__name__}"
    dtype = _TYPES_BY_NAME.get(name)
    if dtype is None or dtype.kind != "f":
        raise DTypeError(f"set_default_tensor_type: only floating-point types are supported as "
                         f"the default type, not {name}")  # fmt: skip
    set_default_dtype(dtype)


_CLASSES = {name.removeprefix("torch."): _legacy(name.removeprefix("torch."), dtype)
            for dtype, name in _TYPE_NAMES.items()}  # fmt: skip
FloatTensor = _CLASSES["FloatTensor"]
DoubleTensor = _CLASSES["DoubleTensor"]
HalfTensor = _CLASSES["HalfTensor"]
LongTensor = _CLASSES["LongTensor"]
IntTensor = _CLASSES["IntTensor"]
ShortTensor = _CLASSES["ShortTensor"]
CharTensor = _CLASSES["CharTensor"]
ByteTensor = _CLASSES["ByteTensor"]
BoolTensor = _CLASSES["BoolTensor"]

__all__ = ["LegacyTensorType", "set_default_tensor_type", *_CLASSES]
