"""Linear algebra methods: mm, bmm, mv, addmm, baddbmm, addmv, inner, kron, cross, det,
inverse, slogdet, logdet, pinverse, matrix_power."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist: the rows make Tensors, so
#: they cannot be imported while Tensor's bases are (the one upward seam, written once there).
ops = None


class LinalgMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    def mm(self, mat2):
        """The product of two matrices (2-D only)."""
        return ops.mm(self, mat2)

    def bmm(self, mat2):
        """Products of two batches of matrices (3-D, no broadcasting)."""
        return ops.bmm(self, mat2)

    def mv(self, vec):
        """The product of this matrix and a vector."""
        return ops.mv(self, vec)

    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        """beta * self + alpha * (mat1 @ mat2)."""
        return ops.addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        """beta * self + alpha * bmm(batch1, batch2)."""
        return ops.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)

    def addmv(self, mat, vec, *, beta=1, alpha=1):
        """beta * self + alpha * mv(mat, vec)."""
        return ops.addmv(self, mat, vec, beta=beta, alpha=alpha)

    def inner(self, other):
        """Sums of products over the last dims of self and other."""
        return ops.inner(self, other)

    def kron(self, other):
        """The Kronecker product of self and other."""
        return ops.kron(self, other)

    def cross(self, other, dim=None):
        """The cross product along dim (None: the first dim of size 3, as torch.cross)."""
        return ops.cross(self, other, dim)

    def det(self):
        """The determinant of each square matrix."""
        return ops.det(self)

    def inverse(self):
        """The inverse of each square matrix."""
        return ops.inverse(self)

    def slogdet(self):
        """(sign, logabsdet) of each square matrix's determinant."""
        return ops.slogdet(self)

    def logdet(self):
        """log(det) of each square matrix (nan for a negative determinant)."""
        return ops.logdet(self)

    def pinverse(self, rcond: float = 1e-15):
        """The pseudoinverse, dropping singular values at or below rcond * the largest."""
        return ops.pinverse(self, rcond)

    def matrix_power(self, n: int):
        """This square matrix multiplied by itself n times (n < 0: of its inverse)."""
        return ops.matrix_power(self, n)
