"""Matrix factorizations and solvers beyond ops.decompositions: LU (lu, lu_factor, lu_solve,
lu_unpack), triangular and Cholesky solves, lstsq, matrix_exp, householder_product."""

from __future__ import annotations

__all__: list[str] = []
