"""Statistics methods: aminmax, count_nonzero, nanmean, nansum, cov, corrcoef, diff,
quantile, histogram and friends."""

from __future__ import annotations

from .. import methods


class StatisticsMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    def aminmax(self, *, dim=None, keepdim: bool = False):
        """(min, max) over ``dim`` (every element for None), a named tuple."""
        return methods.ops.aminmax(self, dim=dim, keepdim=keepdim)

    def count_nonzero(self, dim=None):
        """How many elements over ``dim`` are not zero (int64)."""
        return methods.ops.count_nonzero(self, dim)

    def nansum(self, dim=None, keepdim: bool = False, *, dtype=None):
        """The sum over ``dim`` with NaN taken as 0."""
        return methods.ops.nansum(self, dim, keepdim, dtype=dtype)

    def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None):
        """The mean over ``dim`` of the elements that are not NaN."""
        return methods.ops.nanmean(self, dim, keepdim, dtype=dtype)

    def cov(self, *, correction: int = 1, fweights=None, aweights=None):
        """The covariance matrix of the variables in self's rows."""
        return methods.ops.cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self):
        """Pearson's correlation coefficients of the variables in self's rows."""
        return methods.ops.corrcoef(self)

    def diff(self, n: int = 1, dim: int = -1, prepend=None, append=None):
        """The ``n``-th forward difference along ``dim``."""
        return methods.ops.diff(self, n, dim, prepend, append)

    def quantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
        """The ``q``-th quantiles along ``dim`` (of all elements for None)."""
        return methods.ops.quantile(self, q, dim, keepdim, interpolation=interpolation)

    def nanquantile(self, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
        """The ``q``-th quantiles along ``dim`` of the elements that are not NaN."""
        return methods.ops.nanquantile(self, q, dim, keepdim, interpolation=interpolation)

    def histogram(self, bins, *, range=None, weight=None, density: bool = False):
        """(hist, bin_edges): a histogram of self's elements."""
        return methods.ops.histogram(self, bins, range=range, weight=weight, density=density)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim=None):  # fmt: skip
        """The first element of each run of equal consecutive elements."""
        return methods.ops.unique_consecutive(self, return_inverse, return_counts, dim)

    def renorm(self, p: float, dim: int, maxnorm: float):
        """Self with each slice along ``dim`` scaled down to p-norm at most ``maxnorm``."""
        return methods.ops.renorm(self, p, dim, maxnorm)
