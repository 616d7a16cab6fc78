"""Scan rows: cumulative sums, products, maxima and log-sum-exps along one dim."""

from __future__ import annotations

__all__: list[str] = []
