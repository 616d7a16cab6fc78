"""Sorting and order-statistic rows: sort, argsort, topk, kthvalue, median, mode, unique..."""

from __future__ import annotations

__all__: list[str] = []
