"""Matrix decomposition rows with their gradients: det, inv, solve, cholesky, qr, svd, eigh..."""

from __future__ import annotations

__all__: list[str] = []
