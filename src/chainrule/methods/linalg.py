"""Linear algebra methods: products (mm, bmm, mv, addmm, baddbmm, addmv, addbmm, addr, inner,
vdot, kron, cross), det, inverse, slogdet, logdet, pinverse, matrix_power, matrix_exp, and
factorizations by PyTorch's older names (cholesky and its solves, lu, lu_solve,
triangular_solve, qr, svd, orgqr). Each calls its function in `chainrule.linalg` (the
modules there hold torch's names too), as `chainrule.ops` exports it."""

from __future__ import annotations

from .. import methods


class LinalgMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    def mm(self, mat2):
        """The product of two matrices (2-D only)."""
        return methods.ops.mm(self, mat2)

    def bmm(self, mat2):
        """Products of two batches of matrices (3-D, no broadcasting)."""
        return methods.ops.bmm(self, mat2)

    def mv(self, vec):
        """The product of this matrix and a vector."""
        return methods.ops.mv(self, vec)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """beta * self + alpha * (mat1 @ mat2)."""
        return methods.ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * bmm(batch1, batch2)."""
        return methods.ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """beta * self + alpha * mv(mat, vec)."""
        return methods.ops.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def inner(self, other):
        """Sums of products over the last dims of self and other."""
        return methods.ops.inner(self, other)

    def kron(self, other):
        """The Kronecker product of self and other."""
        return methods.ops.kron(self, other)

    def cross(self, other, dim=None):
        """The cross product along dim (None: the first dim of size 3, as torch.cross)."""
        return methods.ops.cross(self, other, dim)

    def det(self):
        """The determinant of each square matrix."""
        return methods.ops.det(self)

    def inverse(self):
        """The inverse of each square matrix."""
        return methods.ops.inverse(self)

    def slogdet(self):
        """(sign, logabsdet) of each square matrix's determinant."""
        return methods.ops.slogdet(self)

    def logdet(self):
        """log(det) of each square matrix (nan for a negative determinant)."""
        return methods.ops.logdet(self)

    def pinverse(self, rcond: float = 1e-15):
        """The pseudoinverse, dropping singular values at or below rcond * the largest."""
        return methods.ops.pinverse(self, rcond)

    def matrix_power(self, n: int):
        """This square matrix multiplied by itself n times (n < 0: of its inverse)."""
        return methods.ops.matrix_power(self, n)

    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * (the sum of the products batch1[i] @ batch2[i])."""
        return methods.ops.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        """beta * self + alpha * outer(vec1, vec2)."""
        return methods.ops.addr(self, vec1, vec2, beta=beta, alpha=alpha)

    def vdot(self, other):
        """The inner product of two 1-D tensors of one length."""
        return methods.ops.vdot(self, other)

    def matrix_exp(self):
        """The matrix exponential of each square matrix."""
        return methods.ops.matrix_exp(self)

    def cholesky(self, upper: bool = False):
        """The Cholesky factor, lower (A = L Lᵀ) or upper (A = Uᵀ U)."""
        return methods.ops.cholesky(self, upper)

    def cholesky_inverse(self, upper: bool = False):
        """The inverse of A from this Cholesky factor of A."""
        return methods.ops.cholesky_inverse(self, upper)

    def cholesky_solve(self, input2, upper: bool = False):
        """X with A X = self, given A's Cholesky factor input2."""
        return methods.ops.cholesky_solve(self, input2, upper)

    def lu(self, pivot: bool = True, get_infos: bool = False):
        """(LU, pivots[, infos]) of the LU factorisation with partial pivoting."""
        return methods.ops.lu(self, pivot, get_infos)

    def lu_solve(self, LU_data, LU_pivots):
        """X with A X = self, from A's packed LU and pivots."""
        return methods.ops.lu_solve(self, LU_data, LU_pivots)

    def triangular_solve(self, A, upper: bool = True, transpose: bool = False,
                         unitriangular: bool = False):  # fmt: skip
        """(X, A) with A X = self (transpose: Aᵀ X = self) for triangular A."""
        return methods.ops.triangular_solve(self, A, upper, transpose, unitriangular)

    def qr(self, some: bool = True):
        """(Q, R) with self = QR (some=False: complete Q)."""
        return methods.ops.qr(self, some)

    def svd(self, some: bool = True, compute_uv: bool = True):
        """(U, S, V) with self = U diag(S) Vᵀ (V, not Vh)."""
        return methods.ops.svd(self, some, compute_uv)

    def orgqr(self, input2):
        """The product of the Householder reflectors packed in self, scaled by input2."""
        return methods.ops.orgqr(self, input2)
