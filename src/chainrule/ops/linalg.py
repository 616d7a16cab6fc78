"""Linear algebra rows: matmul (1-D, 2-D, batched), dot, outer, einsum."""

from __future__ import annotations

import numpy as np

from ..function import Op

__all__ = ["matmul"]

# fmt: off
matmul = Op("matmul", np.matmul,
            vjp=(lambda g, y: g @ y.mT, lambda g, x: x.mT @ g),
            jvp=(lambda dx, y: dx @ y, lambda dy, x: x @ dy))
# fmt: on
