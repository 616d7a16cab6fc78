"""Making tensors: ``tensor``, ``from_numpy``, ``zeros``, ``ones``, ``full``, their ``_like``
forms, ``arange``, ``linspace`` and ``eye``. Random ones are in `chainrule.random`."""

from __future__ import annotations

import numbers

import numpy as np

from ._tensor import Tensor, shape_args
from .dtypes import DEFAULT_DTYPE, as_dtype, int64
from .errors import DomainError, ShapeError


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new leaf Tensor holding a copy of ``data`` (Python floats become float32).

    >>> tensor([1.0, 2.0]).dtype
    dtype('float32')
    """
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A Tensor sharing memory with ``array`` (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected a NumPy array, got {type(array).__name__}")
    return Tensor._make(array)


def _new(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(array)
    return t.requires_grad_(True) if requires_grad else t


def _size(size: tuple) -> tuple[int, ...]:
    size = shape_args(size)
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in size):
        raise ShapeError(f"size must be non-negative integers, got {size}")
    return tuple(int(n) for n in size)


def zeros(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (float32 unless ``dtype``)."""
    return _new(np.zeros(_size(size), as_dtype(dtype) or DEFAULT_DTYPE), requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones (float32 unless ``dtype``)."""
    return _new(np.ones(_size(size), as_dtype(dtype) or DEFAULT_DTYPE), requires_grad)


def full(size, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``."""
    dtype = as_dtype(dtype) or (DEFAULT_DTYPE if isinstance(fill_value, float) else None)
    return _new(np.full(_size((size,)), fill_value, dtype), requires_grad)


def zeros_like(x: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Zeros with ``x``'s shape and dtype."""
    return _new(np.zeros(x.shape, as_dtype(dtype) or x.dtype), requires_grad)


def ones_like(x: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Ones with ``x``'s shape and dtype."""
    return _new(np.ones(x.shape, as_dtype(dtype) or x.dtype), requires_grad)


def full_like(x: Tensor, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    """``fill_value`` with ``x``'s shape and dtype."""
    return _new(np.full(x.shape, fill_value, as_dtype(dtype) or x.dtype), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False) -> Tensor:
    """Evenly spaced values in [start, end): int64 for integer arguments, else float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise DomainError(f"arange: step must be nonzero (start {start}, end {end})")
    if (end - start) * step < 0:
        raise DomainError(
            f"arange: the step {step} leads away from end {end} when starting at {start}"
        )
    integral = all(isinstance(v, numbers.Integral) for v in (start, end, step))
    dtype = as_dtype(dtype) or (int64 if integral else DEFAULT_DTYPE)
    return _new(np.arange(start, end, step).astype(dtype), requires_grad)


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from start to end inclusive."""
    array = np.linspace(start, end, steps, dtype=as_dtype(dtype) or DEFAULT_DTYPE)
    return _new(array, requires_grad)


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False) -> Tensor:
    """The n×m identity matrix."""
    return _new(np.eye(n, m, dtype=as_dtype(dtype) or DEFAULT_DTYPE), requires_grad)
