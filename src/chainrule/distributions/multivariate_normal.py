"""`MultivariateNormal`, the Gaussian on vectors given by a covariance, a precision or a
lower Cholesky factor; everything is computed from the Cholesky factor L (cov = L L^T)."""

from __future__ import annotations

import math

from .. import linalg, ops, random
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .utils import lazy_property


def batch_mahalanobis(scale_tril: Tensor, diff: Tensor) -> Tensor:
    """The squared Mahalanobis distance diff^T (L L^T)^{-1} diff = |L^{-1} diff|^2 over the
    last dim, with L and diff broadcast over their batch dims."""
    n = diff.shape[-1]
    batch = ops.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    scale_tril = scale_tril.expand(tuple(batch) + (n, n))
    diff = diff.expand(tuple(batch) + (n,))
    solved = linalg.solve_triangular(scale_tril, diff.unsqueeze(-1), upper=False)
    return (solved.squeeze(-1) ** 2).sum(-1)


def _matrix_batch(name: str, matrix: Tensor) -> tuple:
    if matrix.dim() < 2:
        raise ValueError(
            f"MultivariateNormal: {name} must be at least two-dimensional, "
            f"with optional leading batch dimensions; got shape {tuple(matrix.shape)}"
        )
    return tuple(matrix.shape[:-2])


class MultivariateNormal(Distribution):
    """Multivariate normal distributions with mean ``loc`` (event: its last dim) and exactly
    one of ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``.

    >>> import chainrule as cr
    >>> d = MultivariateNormal(cr.zeros(2), covariance_matrix=cr.eye(2))
    >>> d.log_prob(cr.zeros(2)), d.rsample((3,)).shape
    (tensor(-1.8379), (3, 2))
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(
        self,
        loc: Tensor,
        covariance_matrix: Tensor | None = None,
        precision_matrix: Tensor | None = None,
        scale_tril: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
        if sum(given) != 1:
            raise ValueError(
                "MultivariateNormal: give exactly one of covariance_matrix, precision_matrix "
                "or scale_tril"
            )
        if loc.dim() < 1:
            raise ValueError("MultivariateNormal: loc must be at least one-dimensional")
        if scale_tril is not None:
            batch = ops.broadcast_shapes(_matrix_batch("scale_tril", scale_tril), loc.shape[:-1])
            self.scale_tril = scale_tril.expand(tuple(batch) + tuple(scale_tril.shape[-2:]))
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            matrix = covariance_matrix
            batch = ops.broadcast_shapes(_matrix_batch("covariance_matrix", matrix), loc.shape[:-1])
            self.covariance_matrix = matrix.expand(tuple(batch) + tuple(matrix.shape[-2:]))
        else:
            matrix = precision_matrix
            batch = ops.broadcast_shapes(_matrix_batch("precision_matrix", matrix), loc.shape[:-1])
            self.precision_matrix = matrix.expand(tuple(batch) + tuple(matrix.shape[-2:]))
        self.loc = loc.expand(tuple(batch) + (loc.shape[-1],))
        super().__init__(tuple(batch), tuple(loc.shape[-1:]), validate_args)
        # Factored after validation, so a matrix that is not positive definite is reported
        # as a constraint, not as a failed Cholesky.
        if covariance_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(covariance_matrix)
        elif precision_matrix is not None:
            self._unbroadcasted_scale_tril = linalg.cholesky(linalg.inv(precision_matrix))

    @lazy_property
    def scale_tril(self) -> Tensor:
        """The lower Cholesky factor L of the covariance."""
        shape = tuple(self.batch_shape) + tuple(self.event_shape) * 2
        return self._unbroadcasted_scale_tril.expand(shape)

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        """The covariance L L^T."""
        L = self._unbroadcasted_scale_tril
        shape = tuple(self.batch_shape) + tuple(self.event_shape) * 2
        return (L @ L.mT).expand(shape)

    @lazy_property
    def precision_matrix(self) -> Tensor:
        """The inverse of the covariance."""
        L = self._unbroadcasted_scale_tril
        shape = tuple(self.batch_shape) + tuple(self.event_shape) * 2
        return linalg.inv(L @ L.mT).expand(shape)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        shape = tuple(self.batch_shape) + tuple(self.event_shape)
        return (self._unbroadcasted_scale_tril**2).sum(-1).expand(shape)

    def rsample(self, sample_shape=()) -> Tensor:
        eps = random.randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return ops.log(self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1)).sum(-1)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        n = self.event_shape[0]
        distance = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + distance) - self._half_log_det()

    def entropy(self) -> Tensor:
        n = self.event_shape[0]
        out = 0.5 * n * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return out.expand(tuple(self.batch_shape))


__all__ = ["MultivariateNormal"]
