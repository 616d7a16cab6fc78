"""Elementwise math rows beyond the basics: inverse trig, rounding, remainders, bitwise, tests."""

from __future__ import annotations

__all__: list[str] = []
