"""Reduction, scan and sorting methods: cumsum, sort, topk, median, unique..."""

from __future__ import annotations

from .. import methods


class ReductionMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()

    # Scans.

    def cumsum(self, dim: int, *, dtype=None):
        """Running sums along ``dim`` (integers add up in int64)."""
        return methods.ops.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype=None):
        """Running products along ``dim``; exact gradients where self has zeros."""
        return methods.ops.cumprod(self, dim, dtype=dtype)

    def cummax(self, dim: int):
        """(values, indices) of the running maximum along ``dim``."""
        return methods.ops.cummax(self, dim)

    def cummin(self, dim: int):
        """(values, indices) of the running minimum along ``dim``."""
        return methods.ops.cummin(self, dim)

    def logcumsumexp(self, dim: int):
        """Running log(sum(exp(self))) along ``dim``, without overflow."""
        return methods.ops.logcumsumexp(self, dim)

    # Sorting and order statistics.

    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False):
        """(values, indices) sorted along ``dim`` (always stable)."""
        return methods.ops.sort(self, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False):
        """The indices (int64) that sort self along ``dim``."""
        return methods.ops.argsort(self, dim, descending, stable=stable)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
        """(values, indices) of the ``k`` largest (or smallest) elements along ``dim``."""
        return methods.ops.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False):
        """(values, indices) of the ``k``-th smallest element along ``dim``."""
        return methods.ops.kthvalue(self, k, dim, keepdim)

    def median(self, dim=None, keepdim: bool = False):
        """The lower median, or (values, indices) along ``dim``."""
        return methods.ops.median(self, dim, keepdim)

    def nanmedian(self, dim=None, keepdim: bool = False):
        """The lower median ignoring NaN, or (values, indices) along ``dim``."""
        return methods.ops.nanmedian(self, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False):
        """(values, indices) of the most frequent value along ``dim``."""
        return methods.ops.mode(self, dim, keepdim)

    # Counting and distances.

    def unique(self, sorted: bool = True, return_inverse: bool = False,
               return_counts: bool = False, dim=None):  # fmt: skip
        """The sorted unique elements (with inverse indices and counts when asked)."""
        return methods.ops.unique(self, sorted, return_inverse, return_counts, dim)

    def bincount(self, weights=None, minlength: int = 0):
        """How often each non-negative integer occurs (or the sums of its ``weights``)."""
        return methods.ops.bincount(self, weights, minlength)

    def histc(self, bins: int = 100, min: float = 0, max: float = 0):
        """A histogram: counts in ``bins`` equal bins over [min, max]."""
        return methods.ops.histc(self, bins, min, max)

    def dist(self, other, p: float = 2):
        """The p-norm of self - other over all elements."""
        return methods.ops.dist(self, other, p)
