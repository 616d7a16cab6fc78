"""dtypes by their PyTorch names (``chainrule.float32``...), the default floating-point dtype,
reading a dtype argument, and `device` (chainrule has one: the CPU). Any NumPy dtype is
accepted too; ``bfloat16`` has a name but NumPy cannot hold it, so using it is an error."""

from __future__ import annotations

import numpy as np

from .errors import DomainError, DTypeError

#: dtypes by their PyTorch names; any NumPy dtype is accepted too. The aliases PyTorch gives
#: (``chainrule.float``, ``int``, ``bool``...) are bound in chainrule's namespace only, so the
#: builtins keep their meaning in every module of the package.
float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
int8, int16, int32, int64 = (np.dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, bool_ = np.dtype("uint8"), np.dtype("bool")
half, double, short, long = float16, float64, int16, int64

#: PyTorch's default floating-point dtype, what chainrule starts with; the one in force now
#: is `get_default_dtype()`.
DEFAULT_DTYPE = float32
_default_dtype = float32


class _Unrepresentable:
    """A PyTorch dtype NumPy has no type for: its name exists, any use raises DTypeError."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"chainrule.{self.name}"

    def refuse(self, op: str) -> DTypeError:
        return DTypeError(
            f"{op}: {self.name} is not supported: chainrule keeps its data in NumPy arrays and "
            f"NumPy cannot carry {self.name}; use float32 (or float16) instead"
        )

    @property
    def dtype(self):  # what np.dtype(obj) reads, so NumPy refuses it as clearly
        raise self.refuse("dtype")


bfloat16 = _Unrepresentable("bfloat16")


def as_dtype(dtype, op: str = "Tensor") -> np.dtype | None:
    """``dtype`` as a NumPy dtype (None stays None), or a DTypeError naming ``op``.

    >>> as_dtype("float64"), as_dtype(None)
    (dtype('float64'), None)
    """
    if dtype is None:
        return None
    if isinstance(dtype, _Unrepresentable):
        raise dtype.refuse(op)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{op}: {dtype!r} is not a dtype") from None


def get_default_dtype() -> np.dtype:
    """The dtype of tensors made from Python floats and of floating-point factories (zeros,
    rand, linspace...): float32 unless `set_default_dtype` changed it.

    >>> get_default_dtype()
    dtype('float32')
    """
    return _default_dtype


def set_default_dtype(d) -> None:
    """Make ``d`` (a floating-point dtype: float16, float32 or float64) the default dtype.

    >>> set_default_dtype(float64); get_default_dtype()
    dtype('float64')
    >>> set_default_dtype(float32)
    """
    global _default_dtype
    dtype = as_dtype(d, "set_default_dtype")
    if dtype is None or dtype.kind != "f":
        raise DTypeError(
            f"set_default_dtype: only floating-point dtypes can be the default, got {d!r}"
        )
    _default_dtype = dtype


#: Device types PyTorch knows; chainrule runs on NumPy, so only "cpu" is usable.
_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla", "ipu", "hpu", "mtia", "vulkan")


class device:
    """Where a tensor's data lives, as ``torch.device``: chainrule has only ``device("cpu")``
    (optionally ``"cpu:0"``). It compares equal to the string too (PyTorch's does not).
    GPU types raise: chainrule computes with NumPy, on the CPU.

    >>> d = device("cpu")
    >>> d.type, d.index, str(d), d, d == "cpu"
    ('cpu', None, 'cpu', device(type='cpu'), True)
    """

    __slots__ = ("type", "index")

    def __init__(self, type: str | device, index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise DTypeError(f"device: expected a string such as 'cpu', got {type!r}")
        kind, _, number = type.partition(":")
        if number:
            if index is not None or not number.isdigit():
                raise DomainError(f"device: cannot read the device string {type!r}")
            index = int(number)
        if kind not in _DEVICE_TYPES:
            raise DomainError(f"device: unknown device type {kind!r}; chainrule has 'cpu'")
        if kind != "cpu":
            raise DomainError(
                f"device: {kind!r} is not available: chainrule computes with NumPy on the CPU "
                "and has no GPU (or other accelerator) support; use device='cpu'"
            )
        if index is not None and index != 0:
            raise DomainError(f"device: there is one CPU, index 0, not {index}")
        self.type, self.index = kind, index

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        extra = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{extra})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def as_device(where, op: str) -> device:
    """``where`` (None, a string or a `device`) as a device; any but the CPU raises,
    naming ``op``."""
    if where is None:
        return CPU
    try:
        return device(where)
    except (DomainError, DTypeError) as exc:
        raise type(exc)(f"{op}: {str(exc).removeprefix('device: ')}") from None
