"""Statistics methods: aminmax, count_nonzero, nanmean, nansum, cov, corrcoef, diff,
quantile, histogram and friends."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist (the one upward seam).
ops = None


class StatisticsMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()
