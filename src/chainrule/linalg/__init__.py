"""``chainrule.linalg``: PyTorch's torch.linalg on chainrule tensors. Norms, decompositions
(inv, solve, cholesky, qr, svd, eigh, pinv, LU...), least squares and products of several
matrices. eig and eigvals are left out: a real matrix's eigenvalues may be complex, and
chainrule has no complex dtypes.

This package is all of chainrule's linear algebra, by concept: `products` (matmul and every
named product), `einsum`, `inverses` (inverses, solves, determinants, least squares),
`decompositions` (Cholesky, QR, SVD, eigh), `lu_factorization`, `triangular` (triangular
and Cholesky solves), `matrix_functions` (matrix_exp, matrix_power), `norms`, `lowrank`
(randomized SVD and PCA) and `structured` (block-diagonal and Vandermonde matrices,
diagonals); `matrices` holds what their rows share. Each module has the rows with their
gradients, torch's spellings (which `chainrule.ops` exports) and torch.linalg's; this module
is the torch.linalg namespace.
"""

from .decompositions import (
    CholeskyExResult,
    EighResult,
    QRResult,
    SVDResult,
    cholesky_ex,
    eigh,
    eigvalsh,
    householder_product,
    svdvals,
)
from .decompositions import linalg_cholesky as cholesky
from .decompositions import linalg_qr as qr
from .decompositions import linalg_svd as svd
from .inverses import (
    InvExResult,
    LstsqResult,
    SlogdetResult,
    SolveExResult,
    det,
    inv,
    inv_ex,
    lstsq,
    matrix_rank,
    pinv,
    slogdet,
    solve,
    solve_ex,
    tensorinv,
    tensorsolve,
)
from .lu_factorization import LUFactorExResult, LUFactorResult, LUResult, lu_factor, lu_factor_ex
from .lu_factorization import linalg_lu as lu
from .lu_factorization import linalg_lu_solve as lu_solve
from .matrix_functions import matrix_exp, matrix_power
from .norms import cond, matrix_norm, vector_norm
from .norms import linalg_norm as norm
from .products import linalg_cross as cross
from .products import matmul, multi_dot, vecdot
from .structured import linalg_diagonal as diagonal
from .structured import linalg_vander as vander
from .triangular import solve_triangular

__all__ = [
    "CholeskyExResult", "EighResult", "InvExResult", "LUFactorExResult", "LUFactorResult",
    "LUResult", "LstsqResult", "QRResult", "SVDResult", "SlogdetResult", "SolveExResult",
    "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh",
    "householder_product", "inv", "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex",
    "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank",
    "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular",
    "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm",
]  # fmt: skip
