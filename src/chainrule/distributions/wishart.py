"""`Wishart`: positive-definite matrices, the scatter of ``df`` Gaussian vectors of a given
covariance; drawn by the Bartlett decomposition, reparameterised through its chi-squared
(implicit) and normal draws."""

from __future__ import annotations

import math

import numpy as np

from .. import linalg, ops, random
from .._tensor import Tensor
from ..linalg.triangular import cholesky_solve
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import lazy_property


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The multivariate digamma: sum over i < p of digamma(x - i / 2)."""
    halves = Tensor._make(np.arange(p, dtype=x.dtype) / 2)
    return ops.digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(Distribution):
    """Wishart distributions with ``df`` degrees of freedom and exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (the scale matrix).

    ``rsample`` draws as PyTorch's: a Bartlett factor, then up to 10 redraws of the samples
    PyTorch's check flags. That check is the support's (true for a positive-definite
    sample), so each sample is in practice drawn twice and the second kept; a sample that
    still comes out singular (for df near the dimension) has ``log_prob`` -inf.

    >>> import chainrule as cr
    >>> Wishart(cr.tensor(4.0), covariance_matrix=cr.eye(2)).mean
    tensor([[4., 0.],
            [0., 4.]])
    """

    arg_constraints = {
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
        "df": constraints.greater_than(0),
    }
    support = constraints.positive_definite
    has_rsample = True

    def __init__(
        self,
        df,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError(
                "Wishart: give exactly one of covariance_matrix, precision_matrix or scale_tril"
            )
        matrix = given[0]
        if matrix.dim() < 2:
            raise ValueError("Wishart: the scale matrix must be at least two-dimensional")
        p = matrix.shape[-1]
        df = df if isinstance(df, Tensor) else Tensor._make(np.asarray(df, matrix.dtype))
        batch = tuple(ops.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(df.shape)))
        self.df = df.expand(batch)
        if (self.df._array <= p - 1).any():
            raise ValueError(f"Wishart: df must be greater than ndim - 1 = {p - 1}, got {df}")
        if scale_tril is not None:
            self.scale_tril = matrix.expand(batch + (p, p))
        elif covariance_matrix is not None:
            self.covariance_matrix = matrix.expand(batch + (p, p))
        else:
            self.precision_matrix = matrix.expand(batch + (p, p))
        super().__init__(batch, (p, p), validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))
        self._chi2 = self._make_chi2()

    def _make_chi2(self) -> Chi2:
        """The chi-squared draws of the Bartlett factor's diagonal: df - i for row i."""
        p = self.event_shape[-1]
        steps = Tensor._make(np.arange(p, dtype=self.df.dtype))
        return Chi2(self.df.unsqueeze(-1) - steps)

    def expand(self, batch_shape, _instance=None) -> Wishart:
        new = super().expand(batch_shape, _instance)
        new.df = self.df.expand(tuple(batch_shape))
        new._chi2 = new._make_chi2()
        return new

    @lazy_property
    def scale_tril(self) -> Tensor:
        """The lower Cholesky factor of the scale matrix."""
        shape = tuple(self.batch_shape) + tuple(self.event_shape)
        return self._unbroadcasted_scale_tril.expand(shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """The scale matrix L L^T."""
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(tuple(self.batch_shape) + tuple(self.event_shape))

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """The inverse of the scale matrix."""
        L = self._unbroadcasted_scale_tril
        eye = Tensor._make(np.eye(L.shape[-1], dtype=L.dtype))
        return cholesky_solve(eye, L).expand(tuple(self.batch_shape) + tuple(self.event_shape))

    def _df_matrix(self, value: Tensor) -> Tensor:
        return value.reshape(tuple(self.batch_shape) + (1, 1))

    @property
    def mean(self) -> Tensor:
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.event_shape[-1] - 1
        factor = ops.where(factor <= 0, float("nan"), factor)
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (V**2 + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape: tuple) -> Tensor:
        """L A A^T L^T: A lower triangular, sqrt of chi-squared draws (at least eps) on its
        diagonal, then normal draws below it, row by row, as PyTorch draws them."""
        p = self.event_shape[-1]
        root = ops.sqrt(self._chi2.rsample(sample_shape))
        root = root.clamp(min=float(np.finfo(root.dtype).eps))
        shape = sample_shape + tuple(self.batch_shape)
        noise = random.randn(shape + (p * (p - 1) // 2,), dtype=root.dtype)._array
        below = np.zeros(shape + (p, p), root.dtype)
        below[(..., *np.tril_indices(p, -1))] = noise
        factor = self._unbroadcasted_scale_tril @ (ops.diag_embed(root) + Tensor._make(below))
        return factor @ factor.mT

    def _flags(self, sample: Tensor) -> np.ndarray:
        """PyTorch's redraw flags, one per sample: its support check, any over the batch."""
        valid = self.support.check(sample)._array
        return valid.any(tuple(range(valid.ndim - len(self.batch_shape), valid.ndim)))

    def rsample(self, sample_shape=()) -> Tensor:
        sample_shape = tuple(sample_shape)
        sample = self._bartlett(sample_shape)
        flags = self._flags(sample).reshape(-1)
        rest = tuple(self.batch_shape) + tuple(self.event_shape)
        for _ in range(10):
            if not flags.any():
                break
            redo = np.flatnonzero(flags)
            fresh = self._bartlett((len(redo),))
            slot = np.zeros(len(flags), np.int64)
            slot[redo] = np.arange(len(redo))
            chosen = Tensor._make(flags.reshape((-1,) + (1,) * len(rest)))
            flat = ops.where(chosen, fresh[slot], sample.reshape((-1,) + rest))
            sample = flat.reshape(sample_shape + rest)
            flags[redo] = ~self._flags(fresh)
        return sample

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self.event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det_scale = ops.log(L.diagonal(dim1=-2, dim2=-1)).sum(-1)
        trace = cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        _, log_det_value = linalg.slogdet(value)
        return (
            -nu * (p * math.log(2) / 2 + half_log_det_scale)
            - ops.mvlgamma(nu / 2, p)
            + (nu - p - 1) / 2 * log_det_value
            - trace / 2
        )

    def entropy(self) -> Tensor:
        nu, p = self.df, self.event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_log_det_scale = ops.log(L.diagonal(dim1=-2, dim2=-1)).sum(-1)
        return (
            (p + 1) * (p * math.log(2) / 2 + half_log_det_scale)
            + ops.mvlgamma(nu / 2, p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
            + nu * p / 2
        )


__all__ = ["Wishart"]
