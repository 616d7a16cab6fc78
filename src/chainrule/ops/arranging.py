"""Arranging elements: block_diag, rot90, tensor_split and the h/v/d splits, atleast_Nd,
take, put, index_reduce, cartesian_prod, combinations, vander, diagflat."""

from __future__ import annotations

__all__: list[str] = []
