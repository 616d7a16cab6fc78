"""``torch.testing.assert_close``: whether two tensors (or numbers, or sequences and mappings
of them) are close, with PyTorch's default tolerances per dtype and its checks of shape and
dtype first. An AssertionError says what differs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor

#: PyTorch's default (rtol, atol) per dtype; integers and bools must be equal.
_TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}


def assert_close(actual: Any, expected: Any, *, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = True,
                 msg: str | None = None, **kwargs) -> None:  # fmt: skip
    """Raise AssertionError unless ``|actual - expected| <= atol + rtol * |expected|``
    elementwise, with the same shape (and dtype, unless ``check_dtype=False``).

    >>> import chainrule
    >>> assert_close(chainrule.tensor([1.0, 2.0]), chainrule.tensor([1.0, 2.0000001]))
    >>> assert_close(chainrule.tensor([1.0]), chainrule.tensor([1.1]))
    Traceback (most recent call last):
    AssertionError: Tensor-likes are not close! ...
    """
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {missing}.")  # fmt: skip
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping) or set(actual) != set(expected):
            raise AssertionError(
                msg or f"The mappings' keys differ: {list(actual)} != {list(expected)}"
            )
        for key in expected:
            assert_close(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)  # fmt: skip
        return
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        if not isinstance(actual, Sequence) or len(actual) != len(expected):
            raise AssertionError(msg or "The sequences' lengths differ")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)  # fmt: skip
        return
    _assert_close_arrays(actual, expected, rtol, atol, equal_nan, check_dtype, msg)


def _array(x: Any) -> np.ndarray:
    return x.detach()._array if isinstance(x, Tensor) else np.asarray(x)


def _assert_close_arrays(actual, expected, rtol, atol, equal_nan, check_dtype, msg) -> None:
    both_tensors = isinstance(actual, Tensor) and isinstance(expected, Tensor)
    a, e = _array(actual), _array(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: "
                             f"{a.shape} != {e.shape}.")  # fmt: skip
    if check_dtype and both_tensors and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: "
                             f"{a.dtype} != {e.dtype}.")  # fmt: skip
    if rtol is None:  # the looser of the two dtypes' defaults
        defaults = [_TOLERANCES.get(x.dtype.name, (0.0, 0.0)) for x in (a, e)]
        rtol, atol = max(d[0] for d in defaults), max(d[1] for d in defaults)
    if a.dtype.kind in "fc" or e.dtype.kind in "fc":
        close = np.isclose(a.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                           equal_nan=equal_nan)  # fmt: skip
    else:
        close = np.abs(a.astype(np.int64) - e.astype(np.int64)) <= atol + rtol * np.abs(e)
    if not np.all(close):
        bad = int(close.size - np.count_nonzero(close))
        kind = "Tensor-likes" if both_tensors else "Scalars"
        raise AssertionError(msg or f"{kind} are not close! Mismatched elements: {bad} / "
                             f"{close.size} (rtol={rtol}, atol={atol})")  # fmt: skip


__all__ = ["assert_close"]
