"""Special functions as rows: the gamma family (lgamma, digamma, polygamma, mvlgamma), i0,
the regularized incomplete gammas, sinc, logit, xlogy, logaddexp2, float_power."""

from __future__ import annotations

__all__: list[str] = []
