"""dtypes by their PyTorch names (``chainrule.float32``...), the default dtype, and reading a
dtype argument. Any NumPy dtype is accepted too."""

from __future__ import annotations

import numpy as np

from .errors import DTypeError

#: dtypes by their PyTorch names; any NumPy dtype is accepted too.
float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
int8, int16, int32, int64 = (np.dtype(n) for n in ("int8", "int16", "int32", "int64"))
uint8, bool_ = np.dtype("uint8"), np.dtype("bool")
DEFAULT_DTYPE = float32


def as_dtype(dtype, op: str = "Tensor") -> np.dtype | None:
    """``dtype`` as a NumPy dtype (None stays None), or a DTypeError naming ``op``."""
    if dtype is None:
        return None
    try:
        return np.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{op}: {dtype!r} is not a dtype") from None
