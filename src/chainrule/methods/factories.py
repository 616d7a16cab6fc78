"""Methods that make or fill tensors: dtype and device conversion (``to``, ``type``,
``float``...), ``new_zeros`` and its kin, sizes in bytes, and the random fills (``normal_``,
``uniform_``...), which write in place through `chainrule.inplace` as ``fill_`` does: refused
on a leaf that requires grad outside ``no_grad``, and counted by the version counter."""

from __future__ import annotations

import numbers

import numpy as np

from .. import methods
from ..dtypes import (
    as_device,
    as_dtype,
    bool_,
    device,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from ..errors import DomainError, ShapeError

#: PyTorch's legacy type names, which ``Tensor.type()`` returns and takes.
_TYPE_NAMES = {
    float32: "torch.FloatTensor", float64: "torch.DoubleTensor", float16: "torch.HalfTensor",
    int64: "torch.LongTensor", int32: "torch.IntTensor", int16: "torch.ShortTensor",
    int8: "torch.CharTensor", uint8: "torch.ByteTensor", bool_: "torch.BoolTensor",
}  # fmt: skip
_TYPES_BY_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _is_device(x) -> bool:
    """Whether a positional argument of ``to`` names a device rather than a dtype."""
    return isinstance(x, device) or (
        isinstance(x, str) and x.partition(":")[0] in ("cpu", "cuda", "mps", "xpu", "meta")
    )


def _shape(size: tuple, op: str) -> tuple[int, ...]:
    """``f(2, 3)`` or ``f((2, 3))`` as a shape of non-negative integers."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in size):
        raise ShapeError(f"{op}: size must be non-negative integers, got {size}")
    return tuple(int(n) for n in size)


class FactoryMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    # Dtype and device conversion.

    def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy=False):
        """This tensor in another dtype, as PyTorch's ``to(dtype)``, ``to(device, dtype)``
        or ``to(other)`` (other's dtype): itself when nothing changes and not ``copy``,
        else a new tensor; differentiable. The device can only be the CPU.

        >>> import chainrule
        >>> x = chainrule.zeros(2)
        >>> x.to("cpu") is x, x.to(chainrule.float64).dtype, x.to("cpu", "int64").dtype
        (True, dtype('float64'), dtype('int64'))
        """
        if len(args) > 2:
            raise TypeError(f"to: takes at most 2 positional arguments, got {len(args)}")
        for arg in args:
            if isinstance(arg, FactoryMethods):
                dtype = arg.dtype
            elif _is_device(arg):
                device = arg
            else:
                dtype = arg
        as_device(device, "to")
        dtype = as_dtype(dtype, "to")
        if dtype is not None and dtype != self.dtype:
            return methods.ops.cast(self, dtype=dtype)
        return methods.ops.clone(self) if copy else self

    def type(self, dtype=None, non_blocking: bool = False):
        """Without ``dtype``, PyTorch's name for this tensor's type ('torch.FloatTensor');
        with one (a dtype, such a name or a class such as `chainrule.FloatTensor`), the tensor
        in that dtype (`to`).

        >>> import chainrule
        >>> chainrule.zeros(1).type(), chainrule.zeros(1).type("torch.IntTensor").dtype
        ('torch.FloatTensor', dtype('int32'))
        """
        if dtype is None:
            return _TYPE_NAMES.get(self.dtype, f"numpy.{self.dtype.name}")
        if isinstance(dtype, type) and dtype.__name__.endswith("Tensor"):
            dtype = f"torch.{dtype.__name__}"  # a legacy class (chainrule.tensor_types)
        return self.to(_TYPES_BY_NAME.get(dtype, dtype) if isinstance(dtype, str) else dtype)

    def type_as(self, other):
        """This tensor in ``other``'s dtype."""
        return self.to(other.dtype)

    def double(self):
        """This tensor as float64."""
        return self.to(float64)

    def half(self):
        """This tensor as float16."""
        return self.to(float16)

    def long(self):
        """This tensor as int64."""
        return self.to(int64)

    def short(self):
        """This tensor as int16."""
        return self.to(int16)

    def char(self):
        """This tensor as int8."""
        return self.to(int8)

    def byte(self):
        """This tensor as uint8."""
        return self.to(uint8)

    def cpu(self):
        """This tensor (its data is always on the CPU)."""
        return self

    def cuda(self, device=None, non_blocking: bool = False):
        """Refused: chainrule computes with NumPy, on the CPU."""
        raise DomainError(
            "cuda: chainrule computes with NumPy on the CPU and has no GPU (CUDA) support; "
            "keep the tensor on the CPU"
        )

    @property
    def is_cuda(self) -> bool:
        """False: chainrule's tensors live on the CPU."""
        return False

    @property
    def is_cpu(self) -> bool:
        """True: chainrule's tensors live on the CPU."""
        return True

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one."""
        return self.dtype.kind == "f"

    def is_complex(self) -> bool:
        """False: chainrule has no complex dtypes."""
        return False

    # Sizes in memory.

    def element_size(self) -> int:
        """Bytes per element.

        >>> import chainrule
        >>> chainrule.zeros(3).element_size(), chainrule.zeros(3).nbytes
        (4, 12)
        """
        return self._array.itemsize

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self._array.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of all the elements."""
        return self._array.nbytes

    # New tensors like this one: its dtype unless ``dtype``.

    def _new_like(self, array: np.ndarray, requires_grad: bool, device_arg, op: str):
        as_device(device_arg, op)
        t = type(self)._make(array)
        return t.requires_grad_(True) if requires_grad else t

    def _new_dtype(self, dtype, op: str):
        return self.dtype if dtype is None else as_dtype(dtype, op)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """Zeros of ``size``, in this tensor's dtype unless ``dtype``.

        >>> import chainrule
        >>> chainrule.arange(2).new_zeros(2, 3).dtype
        dtype('int64')
        """
        array = np.zeros(_shape(size, "new_zeros"), self._new_dtype(dtype, "new_zeros"))
        return self._new_like(array, requires_grad, device, "new_zeros")

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """Ones of ``size``, in this tensor's dtype unless ``dtype``."""
        array = np.ones(_shape(size, "new_ones"), self._new_dtype(dtype, "new_ones"))
        return self._new_like(array, requires_grad, device, "new_ones")

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
        """A tensor of ``size`` not to be read before written (zeros here, see ``empty``)."""
        array = np.zeros(_shape(size, "new_empty"), self._new_dtype(dtype, "new_empty"))
        return self._new_like(array, requires_grad, device, "new_empty")

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        """``fill_value`` everywhere in ``size``, in this tensor's dtype unless ``dtype``."""
        shape, dtype = _shape((size,), "new_full"), self._new_dtype(dtype, "new_full")
        return self._new_like(np.full(shape, fill_value, dtype), requires_grad, device, "new_full")

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False):
        """A copy of ``data`` in this tensor's dtype unless ``dtype``, with no history."""
        data = data._array if isinstance(data, FactoryMethods) else data
        array = np.array(data, dtype=self._new_dtype(dtype, "new_tensor"))
        return self._new_like(array, requires_grad, device, "new_tensor")

    # Random fills, in place; ``generator=`` a `chainrule.Generator` (default: the default).

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
        """Fill with samples of the normal distribution N(mean, std²)."""
        values = methods.random.normal_values(self, mean, std, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "normal_")

    def uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None):
        """Fill with samples uniform in [from_, to) (PyTorch's ``from``, a Python keyword)."""
        values = methods.random.uniform_values(self, from_, to, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "uniform_")

    def log_normal_(self, mean: float = 1.0, std: float = 2.0, *, generator=None):
        """Fill with exp of samples of N(mean, std²)."""
        values = methods.random.log_normal_values(self, mean, std, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "log_normal_")

    def exponential_(self, lambd: float = 1.0, *, generator=None):
        """Fill with samples of the exponential distribution of rate ``lambd``."""
        values = methods.random.exponential_values(self, lambd, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "exponential_")

    def cauchy_(self, median: float = 0.0, sigma: float = 1.0, *, generator=None):
        """Fill with samples of the Cauchy distribution."""
        values = methods.random.cauchy_values(self, median, sigma, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "cauchy_")

    def geometric_(self, p: float, *, generator=None):
        """Fill with the number of trials to the first success (1, 2, ...), success ``p``."""
        values = methods.random.geometric_values(self, p, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "geometric_")

    def bernoulli_(self, p=0.5, *, generator=None):
        """Fill with 0 or 1, 1 with probability ``p`` (a number, or a tensor broadcast to this
        one's shape)."""
        values = methods.random.bernoulli_values(self, p, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "bernoulli_")

    def random_(self, from_=..., to=..., *, generator=None):
        """Fill with integers uniform in [from_, to): ``random_(to)`` draws from [0, to),
        ``random_()`` and ``random_(from_, None)`` up to the largest the dtype holds exactly.

        >>> import chainrule
        >>> x = chainrule.zeros(100).random_(3)
        >>> sorted(set(x.tolist())) == [0.0, 1.0, 2.0]
        True
        """
        if to is ...:  # random_() or random_(to)
            from_, to = (0, None) if from_ is ... else (0, from_)
        elif from_ is ...:
            from_ = 0
        values = methods.random.random_values(self, from_, to, generator)
        return self._inplace(methods.ops.elementwise.copy_into, values, "random_")

    # Last: once defined, these names are the methods for the rest of the class body.

    def float(self):
        """This tensor as float32."""
        return self.to(float32)

    def int(self):
        """This tensor as int32."""
        return self.to(int32)

    def bool(self):
        """This tensor as bool."""
        return self.to(bool_)
