"""Window functions for signal processing: bartlett, blackman, hamming, hann and kaiser
windows of a given length (factories: no input, so no gradient to pass back).

Each is computed in float64 and rounded once to ``dtype`` (the default float dtype unless
given), so a float32 window may differ from PyTorch's, computed in float32, in the last bit.
A ``periodic`` window (the default) is the symmetric one of length + 1 without its last
value: the form whose copies tile a signal (for spectral analysis).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from .._tensor import Tensor
from ..dtypes import as_dtype, get_default_dtype
from ..errors import DomainError, DTypeError, fmt_dtype

__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"]


def _window(op: str, shape: Callable, window_length, periodic, dtype, requires_grad) -> Tensor:
    """``shape(n, length)`` at n = 0 .. length - 1 as a tensor; ``length`` is one more for a
    periodic window, whose last value is then dropped."""
    dtype = as_dtype(dtype, op) or get_default_dtype()
    if dtype.kind != "f":
        raise DTypeError(f"{op}: needs a floating-point dtype, got {fmt_dtype(dtype)}")
    if not isinstance(window_length, numbers.Integral) or window_length < 0:
        raise DomainError(f"{op}: window_length must be a non-negative int, got {window_length!r}")
    if window_length <= 1:
        values = np.ones(window_length)
    else:
        length = window_length + 1 if periodic else window_length
        values = shape(np.arange(length, dtype=np.float64), length)[:window_length]
    out = Tensor._make(values.astype(dtype))
    return out.requires_grad_(True) if requires_grad else out


def _cosines(*coefficients: float) -> Callable:
    """The window sum of c_k cos(2 pi k n / (length - 1)), signs alternating from +; summed
    from the highest k down, so the ends of a Blackman window are exactly 0 in float64."""

    def shape(n, length):
        phase = 2 * np.pi * n / (length - 1)
        terms = [(-1) ** k * c * np.cos(k * phase) for k, c in enumerate(coefficients)]
        return sum(terms[::-1])

    return shape


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The triangular window: 1 - |2n / (N - 1) - 1|, rising from 0 to 1 and back.

    >>> import chainrule as cr
    >>> cr.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", lambda n, length: 1 - np.abs(2 * n / (length - 1) - 1),
                   window_length, periodic, dtype, requires_grad)  # fmt: skip


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1)).

    >>> import chainrule as cr
    >>> cr.blackman_window(3, periodic=False)
    tensor([0., 1., 0.])
    """
    return _window("blackman_window", _cosines(0.42, 0.5, 0.08), window_length, periodic,
                   dtype, requires_grad)  # fmt: skip


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The generalised Hamming window: alpha - beta cos(2 pi n / (N - 1)).

    >>> import chainrule as cr
    >>> cr.hamming_window(4)
    tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    return _window("hamming_window", _cosines(alpha, beta), window_length, periodic, dtype,
                   requires_grad)  # fmt: skip


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Hann window: 0.5 - 0.5 cos(2 pi n / (N - 1)), i.e. sin²(pi n / (N - 1)).

    >>> import chainrule as cr
    >>> cr.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", _cosines(0.5, 0.5), window_length, periodic, dtype,
                   requires_grad)  # fmt: skip


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None,
                  requires_grad: bool = False) -> Tensor:  # fmt: skip
    """The Kaiser window: I0(beta sqrt(1 - (2n / (N - 1) - 1)²)) / I0(beta), I0 the modified
    Bessel function of order 0; a larger ``beta`` gives a narrower window.

    >>> import chainrule as cr
    >>> cr.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """

    def shape(n, length):
        ratio = 2 * n / (length - 1) - 1
        return np.i0(beta * np.sqrt(np.clip(1 - ratio * ratio, 0, None))) / np.i0(beta)

    return _window("kaiser_window", shape, window_length, periodic, dtype, requires_grad)
