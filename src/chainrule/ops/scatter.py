"""Scatter and masked rows: values written at indices or where a mask holds (scatter, ...)."""

from __future__ import annotations

__all__: list[str] = []
