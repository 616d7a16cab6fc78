"""`LowRankMultivariateNormal`: a Gaussian on vectors whose covariance is a low-rank part plus
a diagonal, W W^T + diag(D), drawn as loc + W e1 + sqrt(D) e2 with e1, e2 standard normal.
Densities go through the full covariance's Cholesky factor (O(n^3), not PyTorch's
capacitance O(n k^2): the values are the same; the cost matters only for large n)."""

from __future__ import annotations

from .. import ops, random
from .._tensor import Tensor
from . import constraints
from .distribution import Distribution
from .multivariate_normal import MultivariateNormal


class LowRankMultivariateNormal(Distribution):
    """Multivariate normal distributions with covariance ``cov_factor @ cov_factor.mT +
    diag(cov_diag)``; ``cov_factor`` has shape (..., n, k), ``cov_diag`` (..., n).

    >>> import chainrule as cr
    >>> d = LowRankMultivariateNormal(cr.zeros(2), cr.ones(2, 1), cr.ones(2))
    >>> d.covariance_matrix
    tensor([[2., 1.],
            [1., 2.]])
    """

    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("LowRankMultivariateNormal: loc must be at least one-dimensional")
        n = loc.shape[-1]
        if cov_factor.dim() < 2 or cov_factor.shape[-2] != n:
            raise ValueError(
                f"LowRankMultivariateNormal: cov_factor must have shape (..., {n}, rank), "
                f"got {tuple(cov_factor.shape)}"
            )
        if cov_diag.shape[-1:] != (n,):
            raise ValueError(
                f"LowRankMultivariateNormal: cov_diag must end in {n}, got {tuple(cov_diag.shape)}"
            )
        batch = tuple(
            ops.broadcast_shapes(
                tuple(loc.shape[:-1]), tuple(cov_factor.shape[:-2]), tuple(cov_diag.shape[:-1])
            )
        )
        self.loc = loc.expand(batch + (n,))
        self.cov_factor = cov_factor.expand(batch + tuple(cov_factor.shape[-2:]))
        self.cov_diag = cov_diag.expand(batch + (n,))
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        super().__init__(batch, (n,), validate_args)
        covariance = cov_factor @ cov_factor.mT + ops.diag_embed(cov_diag)
        self._full = MultivariateNormal(self.loc, covariance_matrix=covariance, validate_args=False)

    def expand(self, batch_shape, _instance=None) -> LowRankMultivariateNormal:
        new = super().expand(batch_shape, _instance)
        new._full = self._full.expand(batch_shape)
        return new

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        shape = tuple(self.batch_shape) + tuple(self.event_shape)
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return ((w**2).sum(-1) + d).expand(shape)

    @property
    def scale_tril(self) -> Tensor:
        return self._full.scale_tril

    @property
    def covariance_matrix(self) -> Tensor:
        return self._full.covariance_matrix

    @property
    def precision_matrix(self) -> Tensor:
        return self._full.precision_matrix

    def rsample(self, sample_shape=()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        rank = self.cov_factor.shape[-1]
        dtype = self.loc.dtype
        e_factor = random.randn(shape[:-1] + (rank,), dtype=dtype)
        e_diag = random.randn(shape, dtype=dtype)
        w, d = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return self.loc + (w @ e_factor.unsqueeze(-1)).squeeze(-1) + ops.sqrt(d) * e_diag

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return self._full.log_prob(value)

    def entropy(self) -> Tensor:
        return self._full.entropy()


__all__ = ["LowRankMultivariateNormal"]
