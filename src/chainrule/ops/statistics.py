"""Statistics over tensors: aminmax, count_nonzero, nanmean, nansum, cov, corrcoef, diff,
gradient, quantile, histogram, trapezoid, unique_consecutive, renorm, windows."""

from __future__ import annotations

__all__: list[str] = []
