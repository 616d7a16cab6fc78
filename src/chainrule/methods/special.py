"""Special-function methods: the gamma family, i0, igamma, sinc, logit, xlogy and the
integer helpers (gcd, lcm, ldexp...)."""

from __future__ import annotations

#: `chainrule.ops`, set by `chainrule._tensor` once the ops exist (the one upward seam).
ops = None


class SpecialMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring."""

    __slots__ = ()
