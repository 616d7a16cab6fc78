"""Making tensors: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``,
``empty``, their ``_like`` forms, ``arange``, ``linspace``, ``logspace`` and ``eye``; and
facts about any object (``is_tensor``, ``numel``, ``is_floating_point``, ``typename``); and
the factories PyTorch keeps among its functions (``scalar_tensor``, ``asarray``, the deprecated
``range``), which `chainrule.ops` exports. Random tensors are in `chainrule.random`.

Floating-point factories make `get_default_dtype()` (float32 unless changed). Each takes
``device=``, which can only be the CPU."""

from __future__ import annotations

import functools
import math
import numbers
import warnings
from collections.abc import Callable

import numpy as np

from ._tensor import Tensor, shape_args
from .dtypes import as_device, as_dtype, get_default_dtype, int64
from .errors import DomainError, DTypeError, ShapeError, fmt_dtype
from .numpy_warnings import keep_first


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf Tensor holding a copy of ``data`` (Python floats get the default dtype).

    >>> tensor([1.0, 2.0]).dtype
    dtype('float32')
    """
    as_device(device, "tensor")
    keep_first()  # NumPy's warnings in chainrule's ops stay silent (chainrule.numpy_warnings)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a Tensor, copying only when it must: a Tensor of that dtype is returned
    itself (another dtype: a differentiable cast), and a NumPy array whose dtype fits shares
    its memory, as ``from_numpy``; other data is copied as `tensor` does.

    >>> import numpy as np
    >>> a = np.zeros(2)
    >>> t = as_tensor(a)
    >>> a[0] = 5.0
    >>> t
    tensor([5., 0.], dtype=float64)
    """
    as_device(device, "as_tensor")
    dtype = as_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtype == data.dtype):
        return from_numpy(data)
    keep_first()
    return Tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A Tensor sharing memory with ``array`` (no copy).

    >>> from_numpy(np.arange(3)).dtype
    dtype('int64')
    """
    if not isinstance(array, np.ndarray):
        raise DTypeError(f"from_numpy: expected a NumPy array, got {type(array).__name__}")
    if array.dtype.kind not in "biuf":
        raise DTypeError(f"from_numpy: cannot make a tensor of {fmt_dtype(array.dtype)} data")
    keep_first()
    return Tensor._make(array)


def _new(array: np.ndarray, requires_grad: bool) -> Tensor:
    keep_first()
    t = Tensor._make(array)
    return t.requires_grad_(True) if requires_grad else t


def _size(size: tuple) -> tuple[int, ...]:
    size = shape_args(size)
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in size):
        raise ShapeError(f"size must be non-negative integers, got {size}")
    return tuple(int(n) for n in size)


def _size_keyword(fn: Callable) -> Callable:
    """``fn`` also taking its shape as ``size=``, as PyTorch's creation functions do
    (``torch.empty(size=(2, 3))``)."""

    @functools.wraps(fn)
    def with_size_keyword(*args, size=None, **kwargs):
        if size is None:
            return fn(*args, **kwargs)
        if args:
            raise TypeError(f"{fn.__name__}(): give the size positionally or as size=, not both")
        return fn(size, **kwargs)

    return with_size_keyword


def _float(dtype, op: str) -> np.dtype:
    """The dtype asked for, else the default floating-point one."""
    return as_dtype(dtype, op) or get_default_dtype()


@_size_keyword
def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (the default dtype unless ``dtype``).

    >>> zeros(2, 3).shape, zeros((2,), device="cpu").dtype
    ((2, 3), dtype('float32'))
    """
    as_device(device, "zeros")
    return _new(np.zeros(_size(size), _float(dtype, "zeros")), requires_grad)


@_size_keyword
def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (the default dtype unless ``dtype``)."""
    as_device(device, "ones")
    return _new(np.ones(_size(size), _float(dtype, "ones")), requires_grad)


@_size_keyword
def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor whose values are not to be read before they are written: chainrule fills it
    with zeros (PyTorch leaves whatever was in memory).

    >>> empty(2).shape
    (2,)
    """
    as_device(device, "empty")
    return _new(np.zeros(_size(size), _float(dtype, "empty")), requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value`` (a float gives the default dtype, an int int64,
    a bool bool).

    >>> full((2,), 7)
    tensor([7, 7])
    """
    as_device(device, "full")
    dtype = as_dtype(dtype, "full")
    if dtype is None and isinstance(fill_value, float):
        dtype = get_default_dtype()
    return _new(np.full(_size((size,)), fill_value, dtype), requires_grad)


def _like(x, dtype, device, op: str) -> np.dtype:
    if not isinstance(x, Tensor):
        raise DTypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    as_device(device, op)
    return as_dtype(dtype, op) or x.dtype


def zeros_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Zeros with ``x``'s shape and dtype."""
    return _new(np.zeros(x.shape, _like(x, dtype, device, "zeros_like")), requires_grad)


def ones_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones with ``x``'s shape and dtype."""
    return _new(np.ones(x.shape, _like(x, dtype, device, "ones_like")), requires_grad)


def empty_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor with ``x``'s shape and dtype: zeros here (see `empty`)."""
    return _new(np.zeros(x.shape, _like(x, dtype, device, "empty_like")), requires_grad)


def full_like(
    x: Tensor, fill_value, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """``fill_value`` with ``x``'s shape and dtype."""
    dtype = _like(x, dtype, device, "full_like")
    return _new(np.full(x.shape, fill_value, dtype), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Evenly spaced values in [start, end): int64 for integer arguments, else the default
    dtype.

    >>> arange(3), arange(0, 1, 0.5)
    (tensor([0, 1, 2]), tensor([0.0000, 0.5000]))
    """
    as_device(device, "arange")
    if end is None:
        start, end = 0, start
    if step == 0:
        raise DomainError(f"arange: step must be nonzero (start {start}, end {end})")
    if (end - start) * step < 0:
        raise DomainError(
            f"arange: the step {step} leads away from end {end} when starting at {start}"
        )
    integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    dtype = as_dtype(dtype, "arange") or (int64 if integral else get_default_dtype())
    return _new(np.arange(start, end, step).astype(dtype), requires_grad)


def linspace(
    start, end, steps: int, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """``steps`` evenly spaced values from start to end inclusive."""
    as_device(device, "linspace")
    _check_steps(steps, "linspace")
    array = np.linspace(start, end, steps, dtype=_float(dtype, "linspace"))
    return _new(array, requires_grad)


def logspace(
    start, end, steps: int, base: float = 10.0, dtype=None, device=None,
    requires_grad: bool = False,
) -> Tensor:  # fmt: skip
    """``steps`` values from base**start to base**end inclusive, evenly spaced in exponent.

    >>> logspace(0, 2, 3), logspace(0, 3, 4, base=2)
    (tensor([  1.,  10., 100.]), tensor([1., 2., 4., 8.]))
    """
    as_device(device, "logspace")
    _check_steps(steps, "logspace")
    dtype = _float(dtype, "logspace")
    exponents = np.linspace(start, end, steps, dtype=np.float64)
    array = np.power(float(base), exponents)
    if dtype.kind in "iu":
        array = np.round(array)  # 10.0**2 is 99.999... in some libms; PyTorch gives 100
    return _new(array.astype(dtype), requires_grad)


def _check_steps(steps, op: str) -> None:
    if not isinstance(steps, numbers.Integral) or steps < 0:
        raise DomainError(f"{op}: steps must be a non-negative integer, got {steps!r}")


def eye(
    n: int, m: int | None = None, dtype=None, device=None, requires_grad: bool = False
) -> Tensor:
    """The n×m identity matrix."""
    as_device(device, "eye")
    return _new(np.eye(n, m, dtype=_float(dtype, "eye")), requires_grad)


# Facts about any object.


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a chainrule Tensor.

    >>> is_tensor(zeros(1)), is_tensor([1.0])
    (True, False)
    """
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    """The number of elements of ``input``.

    >>> numel(zeros(2, 3))
    6
    """
    if not isinstance(input, Tensor):
        raise DTypeError(f"numel: input must be a Tensor, got {type(input).__name__}")
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    """Whether ``input``'s dtype is a floating-point one (float16, float32, float64).

    >>> is_floating_point(zeros(1)), is_floating_point(arange(2))
    (True, False)
    """
    if not isinstance(input, Tensor):
        raise DTypeError(f"is_floating_point: input must be a Tensor, got {type(input).__name__}")
    return input.is_floating_point()


# Factories and facts PyTorch keeps among its functions (chainrule.ops exports them).


def typename(obj, /) -> str:
    """The qualified name of ``obj``'s type, as ``torch.typename``: a tensor's PyTorch type
    name ('torch.FloatTensor', as ``Tensor.type()``), else the module and name of a class or
    function, or of an object's class (builtins by their bare name).

    >>> import chainrule as cr
    >>> cr.typename(cr.zeros(2)), cr.typename(1), cr.typename(cr.nn.Parameter)
    ('torch.FloatTensor', 'int', 'chainrule.nn.parameter.Parameter')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") or hasattr(obj, "__name__") else type(obj)
    module = getattr(named, "__module__", None) or ""
    name = getattr(named, "__qualname__", None) or named.__name__
    return name if module in ("", "builtins") else f"{module}.{name}"


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False):
    """A 0-d tensor holding the number ``s``, in the default float dtype unless ``dtype``
    (integers and bools too, as ``torch.scalar_tensor``).

    >>> import chainrule as cr
    >>> cr.scalar_tensor(1), cr.scalar_tensor(2, dtype=cr.int64)
    (tensor(1.), tensor(2))
    """
    as_device(device, "scalar_tensor")
    if isinstance(s, Tensor) and s.numel() == 1:
        s = s.item()
    if not isinstance(s, numbers.Real):
        raise DTypeError(f"scalar_tensor: expects a number, got {type(s).__name__}")
    wanted = as_dtype(dtype, "scalar_tensor") or get_default_dtype()
    return tensor(s, dtype=wanted, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None, requires_grad=None):
    """``obj`` as a tensor, sharing memory where it can, as ``torch.asarray``: a Tensor of
    that dtype is itself, a NumPy array shares its memory (float64 stays float64) and Python
    data is copied (floats become the default dtype). ``copy=True`` always copies,
    ``copy=False`` refuses to. ``requires_grad`` None keeps a tensor's own; True makes the
    result require grad (the very tensor given, when it is returned itself).

    >>> import numpy as np, chainrule as cr
    >>> a = np.zeros(2)
    >>> t = cr.asarray(a); a[0] = 5.0; t
    tensor([5., 0.], dtype=float64)
    >>> x = cr.ones(2); cr.asarray(x) is x, cr.asarray(x, copy=True) is x
    (True, False)
    """
    as_device(device, "asarray")
    wanted = as_dtype(dtype, "asarray")
    if isinstance(obj, Tensor):
        out = obj
        if wanted is not None and wanted != obj.dtype:
            _refuse_copy(copy, f"a {fmt_dtype(obj.dtype)} tensor into {fmt_dtype(wanted)}")
            out = obj.to(wanted)
        elif copy:
            out = obj.clone()
    elif isinstance(obj, np.ndarray):
        if wanted is not None and wanted != obj.dtype:
            _refuse_copy(copy, f"a {fmt_dtype(obj.dtype)} array into {fmt_dtype(wanted)}")
        array = obj.astype(wanted or obj.dtype, copy=bool(copy))
        out = from_numpy(array)
    else:
        _refuse_copy(copy, f"{type(obj).__name__} data into a tensor")
        out = tensor(obj, dtype=wanted)
    if requires_grad is not None:
        if requires_grad:
            out.requires_grad_(True)
        elif out.requires_grad:
            out = out.detach()
    return out


def _refuse_copy(copy: bool | None, what: str) -> None:
    if copy is False:
        raise DomainError(f"asarray: copy=False, but turning {what} needs a copy")


# Last: from here on, range is PyTorch's deprecated factory in this module (this module
# uses no builtin range after it).


def range(start, end, step=1, *, dtype=None, device=None, requires_grad: bool = False):
    """start, start + step, ... up to and including ``end``, as the deprecated
    ``torch.range`` (it warns, as PyTorch does; `arange` leaves the end out). The default
    float dtype unless ``dtype``, even for integer arguments.

    >>> import warnings, chainrule as cr
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     cr.range(1, 4)
    tensor([1., 2., 3., 4.])
    """
    warnings.warn(
        "range: torch.range is deprecated, as its end is included unlike Python's range; "
        "use chainrule.arange(start, end + step, step)",
        UserWarning,
        stacklevel=2,
    )
    as_device(device, "range")
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    for name, value in (("start", start), ("end", end), ("step", step)):
        if not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise DomainError(f"range: {name} must be a finite number, got {value!r}")
    if step == 0:
        raise DomainError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise DomainError(
            f"range: the bounds {start} and {end} are inconsistent with step {step} (its sign)"
        )
    count = math.floor((end - start) / step) + 1
    values = start + np.arange(count, dtype=np.float64) * step
    wanted = as_dtype(dtype, "range") or get_default_dtype()
    return tensor(values, dtype=wanted, requires_grad=requires_grad)
