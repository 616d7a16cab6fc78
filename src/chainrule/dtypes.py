"""dtypes by their PyTorch names (``chainrule.float32``...), the default floating-point dtype,
reading a dtype argument, and `device` (chainrule has one: the CPU). Any NumPy dtype is
accepted too; ``bfloat16`` has a name but NumPy cannot hold it, so using it is an error.
Also what PyTorch programs ask of dtypes (`finfo`, `iinfo`, `promote_types`, `can_cast`,
`result_type`) and the small value types they name beside them (`Size`, `memory_format`)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import DomainError, DTypeError

# PyTorch's constants (torch.e, torch.pi...), here beside the facts of each dtype.
#: Euler's number, math.e.
e = math.e
#: π, math.pi.
pi = math.pi
#: Positive infinity, math.inf.
inf = math.inf
#: Not a number, math.nan.
nan = math.nan

#: dtypes by their PyTorch names; any NumPy dtype is accepted too. The aliases PyTorch gives
#: (``chainrule.float``, ``int``, ``bool``...) are bound in chainrule's namespace only, so the
#: builtins keep their meaning in every module of the package.
float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
int8, int16, int32, int64 = (np.dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, bool_ = np.dtype("uint8"), np.dtype("bool")
half, double, short, long = float16, float64, int16, int64

#: The class of every dtype above (NumPy's), so ``isinstance(x.dtype, chainrule.dtype)`` holds.
dtype = np.dtype

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


# What PyTorch programs ask of dtypes.


class finfo:
    """The limits of a floating-point dtype (default: the default dtype), as ``torch.finfo``:
    ``bits``, ``eps`` (1.0's distance to the next float), ``max``, ``min``, ``tiny`` (the
    smallest positive normal number, also ``smallest_normal``), ``resolution`` (10 to the
    minus the decimal digits it holds) and ``dtype`` (its name), as Python numbers.

    >>> finfo(float32).eps, finfo(float16).max, finfo().dtype
    (1.1920928955078125e-07, 65504.0, 'float32')
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None) -> None:
        d = get_default_dtype() if type is None else as_dtype(type, "finfo")
        if d.kind != "f":
            raise DTypeError(
                f"finfo: needs a floating-point dtype, got {d.name}; use chainrule.iinfo for "
                "integer dtypes"
            )
        info = np.finfo(d)
        self.bits, self.dtype = int(info.bits), d.name
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self) -> str:
        numbers_ = ", ".join(
            f"{name}={getattr(self, name):g}"
            for name in ("resolution", "min", "max", "eps", "smallest_normal", "tiny")
        )
        return f"finfo({numbers_}, dtype={self.dtype})"


class iinfo:
    """The limits of an integer dtype, as ``torch.iinfo``: ``bits``, ``max``, ``min`` (Python
    ints) and ``dtype`` (its name). bool is refused, as PyTorch refuses it.

    >>> iinfo(int8).min, iinfo(uint8).max, iinfo(int64).bits
    (-128, 255, 64)
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type) -> None:
        d = as_dtype(type, "iinfo")
        if d is None or d.kind not in "iu":
            got = "None" if d is None else d.name
            raise DTypeError(
                f"iinfo: needs an integer dtype, got {got}; use chainrule.finfo for "
                "floating-point dtypes (bool has no iinfo)"
            )
        info = np.iinfo(d)
        self.bits, self.max, self.min, self.dtype = (
            int(info.bits),
            int(info.max),
            int(info.min),
            d.name,
        )

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


#: The order of dtype kinds in PyTorch's promotion and casting: bool < integers < floats.
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2}


def _kind_rank(d: np.dtype, op: str) -> int:
    rank = _KIND_RANK.get(d.kind)
    if rank is None:
        raise DTypeError(f"{op}: chainrule has no {d.name} tensors (bool, integers and floats)")
    return rank


def promote_types(type1, type2) -> np.dtype:
    """The smallest dtype both ``type1`` and ``type2`` convert to without losing their kind,
    as ``torch.promote_types``: the wider float when either is a float (float16 with int64
    is float16, where NumPy says float64), else NumPy's integer promotion, else bool.

    >>> promote_types(float16, int64), promote_types(uint8, int8), promote_types(bool_, int32)
    (dtype('float16'), dtype('int16'), dtype('int32'))
    """
    a, b = as_dtype(type1, "promote_types"), as_dtype(type2, "promote_types")
    rank_a, rank_b = _kind_rank(a, "promote_types"), _kind_rank(b, "promote_types")
    if rank_a != rank_b:
        return a if rank_a > rank_b else b
    return np.promote_types(a, b)


def can_cast(from_, to) -> bool:
    """Whether PyTorch's casting rules let ``from_`` become ``to`` (``torch.can_cast``): never
    to a lower kind (float to integer, integer to bool); within a kind any size goes.

    >>> can_cast(float64, float16), can_cast(float32, int32), can_cast(bool_, uint8)
    (True, False, True)
    """
    source, target = as_dtype(from_, "can_cast"), as_dtype(to, "can_cast")
    return _kind_rank(source, "can_cast") <= _kind_rank(target, "can_cast")


def _category(operand) -> tuple[int, np.dtype]:
    """An operand's place in PyTorch's promotion (2: a tensor with dims, 1: a 0-d tensor,
    0: a Python number) and its dtype (a Python float counts as the default dtype)."""
    if isinstance(operand, (bool, np.bool_)):
        return 0, bool_
    if isinstance(operand, numbers.Integral):
        return 0, int64
    if isinstance(operand, numbers.Real):
        return 0, get_default_dtype()
    if hasattr(operand, "dtype") and hasattr(operand, "ndim"):  # a Tensor (or an array)
        return (2 if operand.ndim else 1), as_dtype(operand.dtype, "result_type")
    raise DTypeError(f"result_type: takes tensors and Python numbers, got {type(operand).__name__}")


def result_type(tensor1, tensor2) -> np.dtype:
    """The dtype of an arithmetic op on ``tensor1`` and ``tensor2`` (tensors or Python
    numbers), by PyTorch's rules: tensors with dims decide, then 0-d tensors, then numbers;
    a lower category counts only when it is of a higher kind (an int tensor plus 2.5 is
    float32, an int8 tensor plus a 0-d int64 tensor stays int8).

    >>> import chainrule
    >>> ints, int8s = chainrule.tensor([1, 2]), chainrule.tensor([1], dtype=int8)
    >>> result_type(ints, 2.5), result_type(int8s, 1000), result_type(int8s, chainrule.tensor(1))
    (dtype('float32'), dtype('int8'), dtype('int8'))
    """
    best: list[np.dtype | None] = [None, None, None]  # by category: numbers, 0-d, dims
    for operand in (tensor1, tensor2):
        level, d = _category(operand)
        best[level] = d if best[level] is None else promote_types(best[level], d)
    result = None
    for d in best:  # lowest category first; each higher one decides unless outranked in kind
        if result is None or d is None:
            result = d if result is None else result
            continue
        higher_rank, lower_rank = _kind_rank(d, "result_type"), _kind_rank(result, "result_type")
        result = promote_types(d, result) if lower_rank > higher_rank else d
    return result


class Size(tuple):
    """A shape, as ``torch.Size``: a tuple of ints that stays a Size when sliced, added to or
    repeated, with ``numel()``.

    Tensors' ``.shape`` and ``.size()`` give plain tuples, which compare equal to a Size:
    wrapping each shape costs about 50 ns on every ``.shape`` read, which the engine does on
    its hot path.

    >>> s = Size([2, 3, 4])
    >>> s, s[1:], s.numel(), s + (5,), s == (2, 3, 4)
    (chainrule.Size([2, 3, 4]), chainrule.Size([3, 4]), 24, chainrule.Size([2, 3, 4, 5]), True)
    """

    __slots__ = ()

    def __new__(cls, sizes=()) -> Size:
        sizes = tuple(sizes)
        for i, n in enumerate(sizes):
            if not isinstance(n, numbers.Integral):
                raise DTypeError(
                    f"Size: takes an iterable of ints (item {i} is {type(n).__name__})"
                )
        return super().__new__(cls, (int(n) for n in sizes))

    def numel(self) -> int:
        """The number of elements a tensor of this shape holds."""
        return math.prod(self)

    def __getitem__(self, index):
        item = super().__getitem__(index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + other)

    def __radd__(self, other):  # other + self
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(other + tuple(self))

    def __mul__(self, times):
        return Size(tuple(self) * times)

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return f"chainrule.Size({list(self)})"


class memory_format:
    """How a tensor's elements are laid out in memory, as ``torch.memory_format``. NumPy
    arrays made by chainrule are row-major: `contiguous_format` is the one layout there is
    (``legacy_contiguous_format`` is PyTorch's old name for it, the same object).

    >>> contiguous_format, legacy_contiguous_format is contiguous_format
    (chainrule.contiguous_format, True)
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"chainrule.{self.name}"


contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format
