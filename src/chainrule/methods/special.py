"""Special-function methods: the gamma family, i0, igamma, sinc, logit, xlogy and the
integer and float-bits helpers (gcd, lcm, ldexp, frexp...).

The rows of one tensor (lgamma, digamma, i0, sinc, signbit, isreal) are methods by
``method=True``; these take more arguments. In-place variants are made elsewhere.
"""

from __future__ import annotations

from .. import methods


class SpecialMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring.

    >>> import chainrule as cr
    >>> x = cr.tensor([0.5, 2.0], dtype=cr.float64)
    >>> x.polygamma(1), x.mvlgamma(1), x.logit(), x.xlogy(3.0)
    (tensor([4.9348, 0.6449], dtype=float64), tensor([0.5724, 0.0000], \
dtype=float64), tensor([ 0., nan], dtype=float64), tensor([0.5493, 2.1972], \
dtype=float64))
    >>> cr.tensor([12, 18]).gcd(cr.tensor([8, 27])), cr.tensor([3.0]).frexp()
    (tensor([4, 9]), FrexpResult(mantissa=tensor([0.7500]), exponent=tensor([2], dtype=int32)))
    """

    __slots__ = ()

    def polygamma(self, n: int):
        """The n-th derivative of digamma at self, elementwise."""
        return methods.ops.polygamma(n, self)

    def mvlgamma(self, p: int):
        """The log of the multivariate gamma function of dimension p, elementwise."""
        return methods.ops.mvlgamma(self, p)

    def igamma(self, other):
        """The regularized lower incomplete gamma function P(self, other)."""
        return methods.ops.igamma(self, other)

    def igammac(self, other):
        """The regularized upper incomplete gamma function Q(self, other)."""
        return methods.ops.igammac(self, other)

    def logit(self, eps: float | None = None):
        """log(self / (1 - self)), self clamped to [eps, 1 - eps] when eps is given."""
        return methods.ops.logit(self, eps)

    def xlogy(self, other):
        """self * log(other), 0 where self is 0."""
        return methods.ops.xlogy(self, other)

    def logaddexp2(self, other):
        """log2(2**self + 2**other), elementwise, computed stably."""
        return methods.ops.logaddexp2(self, other)

    def float_power(self, exponent):
        """self ** exponent computed in float64 (a float64 result)."""
        return methods.ops.float_power(self, exponent)

    def gcd(self, other):
        """The greatest common divisor of self and other (integers), elementwise."""
        return methods.ops.gcd(self, other)

    def lcm(self, other):
        """The least common multiple of self and other (integers), elementwise."""
        return methods.ops.lcm(self, other)

    def ldexp(self, other):
        """self * 2 ** other, elementwise."""
        return methods.ops.ldexp(self, other)

    def frexp(self):
        """(mantissa, exponent) with self = mantissa * 2 ** exponent, |mantissa| in [0.5, 1)."""
        return methods.ops.frexp(self)

    def nextafter(self, other):
        """The next floating-point number after self toward other, elementwise."""
        return methods.ops.nextafter(self, other)
