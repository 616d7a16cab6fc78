"""Elementwise math methods: trigonometry, rounding, remainders, bitwise ops, float tests,
addcmul and addcdiv.

The rows of one tensor (asin, floor, isnan...) are methods by ``method=True``; these take
more arguments, or call a public function of `chainrule.ops.numeric` (or
`ops.elementwise`: addcmul, addcdiv). In-place variants
(``floor_``, ``lerp_``...) write the out-of-place result back (`chainrule.inplace`).
"""

from __future__ import annotations

from .. import methods


class NumericMethods:
    """Mixed into `chainrule.Tensor`; see the module docstring.

    >>> import chainrule as cr
    >>> x = cr.tensor([-1.75, 0.5, 2.25])
    >>> x.round(decimals=1), x.clamp_min(0.0), x.fmod(1.0), x.lerp(cr.zeros(3), 0.5)
    (tensor([-1.8000,  0.5000,  2.2000]), tensor([0.0000, 0.5000, 2.2500]), tensor([-0.7500,  \
0.5000,  0.2500]), tensor([-0.8750,  0.2500,  1.1250]))
    >>> cr.tensor([12, 10]) & cr.tensor([10, 6]), cr.tensor([1, -8]) << 2, ~cr.tensor([0, 5])
    (tensor([8, 2]), tensor([  4, -32]), tensor([-1, -6]))
    """

    __slots__ = ()

    # Functions of two tensors.

    def atan2(self, other):
        """atan(self / other) in the quadrant of the point (other, self)."""
        return methods.ops.atan2(self, other)

    arctan2 = atan2

    def hypot(self, other):
        """sqrt(self**2 + other**2), elementwise, without overflow."""
        return methods.ops.hypot(self, other)

    def logaddexp(self, other):
        """log(exp(self) + exp(other)), elementwise, computed stably."""
        return methods.ops.logaddexp(self, other)

    def copysign(self, other):
        """|self| with the sign of other, elementwise."""
        return methods.ops.copysign(self, other)

    def fmod(self, other):
        """The remainder of self / other with the sign of self."""
        return methods.ops.fmod(self, other)

    def remainder(self, other):
        """The remainder of self / other with the sign of other (Python's %)."""
        return methods.ops.remainder(self, other)

    def floor_divide(self, other):
        """self / other rounded down (Python's //); not differentiable."""
        return methods.ops.floor_divide(self, other)

    def __mod__(self, other):
        return methods.ops.remainder(self, other)

    def __rmod__(self, other):  # other % self
        return methods.ops.remainder(other, self)

    def __floordiv__(self, other):
        return methods.ops.floor_divide(self, other)

    def __rfloordiv__(self, other):  # other // self
        return methods.ops.floor_divide(other, self)

    def __imod__(self, other):
        return self._inplace(methods.ops.remainder, other, "remainder_")

    def __ifloordiv__(self, other):
        return self._inplace(methods.ops.floor_divide, other, "floor_divide_")

    def addcmul(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 * tensor2."""
        return methods.ops.addcmul(self, tensor1, tensor2, value=value)

    def addcdiv(self, tensor1, tensor2, *, value=1):
        """self + value * tensor1 / tensor2 (floating tensor1 and tensor2)."""
        return methods.ops.addcdiv(self, tensor1, tensor2, value=value)

    def lerp(self, end, weight):
        """self + weight * (end - self); weight is a number or a tensor."""
        return methods.ops.lerp(self, end, weight)

    def fmax(self, other):
        """The larger of self and other, elementwise, ignoring nan."""
        return methods.ops.fmax(self, other)

    def fmin(self, other):
        """The smaller of self and other, elementwise, ignoring nan."""
        return methods.ops.fmin(self, other)

    def heaviside(self, values):
        """0 where self < 0, values where self == 0, 1 where self > 0."""
        return methods.ops.heaviside(self, values)

    def clamp_min(self, min):
        """self limited from below by min (a number or a tensor)."""
        return methods.ops.clamp_min(self, min)

    def clamp_max(self, max):
        """self limited from above by max (a number or a tensor)."""
        return methods.ops.clamp_max(self, max)

    def round(self, *, decimals: int = 0):
        """self rounded to ``decimals`` places, halves to even; derivative 0."""
        return methods.ops.round(self, decimals=decimals)

    def nan_to_num(self, nan: float = 0.0, posinf=None, neginf=None):
        """self with nan, inf and -inf replaced by finite numbers."""
        return methods.ops.nan_to_num(self, nan, posinf, neginf)

    def square(self):
        """self * self, elementwise."""
        return methods.ops.square(self)

    def sgn(self):
        """The sign of each element: -1, 0 or 1."""
        return methods.ops.sgn(self)

    def deg2rad(self):
        """Degrees to radians, elementwise."""
        return methods.ops.deg2rad(self)

    def rad2deg(self):
        """Radians to degrees, elementwise."""
        return methods.ops.rad2deg(self)

    # NumPy's names for the inverse functions, as PyTorch has them.

    def arcsin(self):
        """Inverse sine (`asin`)."""
        return methods.ops.asin(self)

    def arccos(self):
        """Inverse cosine (`acos`)."""
        return methods.ops.acos(self)

    def arctan(self):
        """Inverse tangent (`atan`)."""
        return methods.ops.atan(self)

    def arcsinh(self):
        """Inverse hyperbolic sine (`asinh`)."""
        return methods.ops.asinh(self)

    def arccosh(self):
        """Inverse hyperbolic cosine (`acosh`)."""
        return methods.ops.acosh(self)

    def arctanh(self):
        """Inverse hyperbolic tangent (`atanh`)."""
        return methods.ops.atanh(self)

    def fix(self):
        """self rounded toward 0 (`trunc`)."""
        return methods.ops.trunc(self)

    # Bitwise (integer and bool tensors) and logical.

    def bitwise_and(self, other):
        """self & other, bit by bit."""
        return methods.ops.bitwise_and(self, other)

    def bitwise_or(self, other):
        """self | other, bit by bit."""
        return methods.ops.bitwise_or(self, other)

    def bitwise_xor(self, other):
        """self ^ other, bit by bit."""
        return methods.ops.bitwise_xor(self, other)

    def bitwise_not(self):
        """~self, every bit flipped (not, for bool tensors)."""
        return methods.ops.bitwise_not(self)

    def bitwise_left_shift(self, other):
        """self << other, elementwise."""
        return methods.ops.bitwise_left_shift(self, other)

    def bitwise_right_shift(self, other):
        """self >> other, elementwise, keeping the sign."""
        return methods.ops.bitwise_right_shift(self, other)

    def logical_xor(self, other):
        """Whether exactly one of self and other is true (non-zero), elementwise."""
        return methods.ops.logical_xor(self, other)

    def __xor__(self, other):  # bitwise, as & and | (logical on bool tensors)
        return methods.ops.bitwise_xor(self, other)

    def __rxor__(self, other):  # other ^ self
        return methods.ops.bitwise_xor(other, self)

    def __lshift__(self, other):
        return methods.ops.bitwise_left_shift(self, other)

    def __rshift__(self, other):
        return methods.ops.bitwise_right_shift(self, other)

    def __rlshift__(self, other):  # other << self
        return methods.ops.bitwise_left_shift(other, self)

    def __rrshift__(self, other):  # other >> self
        return methods.ops.bitwise_right_shift(other, self)

    def __ixor__(self, other):
        return self._inplace(methods.ops.bitwise_xor, other, "bitwise_xor_")

    def __ilshift__(self, other):
        return self._inplace(methods.ops.bitwise_left_shift, other, "bitwise_left_shift_")

    def __irshift__(self, other):
        return self._inplace(methods.ops.bitwise_right_shift, other, "bitwise_right_shift_")

    # Comparisons giving Python bools.

    def isclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
        """Whether self and other are close, elementwise (see `chainrule.isclose`)."""
        return methods.ops.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan=False) -> bool:
        """Whether every element of self is close to other's, as a Python bool."""
        return methods.ops.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other) -> bool:
        """Whether self and other have the same shape and values, as a Python bool."""
        return methods.ops.equal(self, other)

    # In place: the result written back into self (`chainrule.inplace`).

    def floor_(self):
        """floor, in place."""
        return self._inplace(lambda x, _: methods.ops.floor(x), None, "floor_")

    def ceil_(self):
        """ceil, in place."""
        return self._inplace(lambda x, _: methods.ops.ceil(x), None, "ceil_")

    def trunc_(self):
        """trunc, in place."""
        return self._inplace(lambda x, _: methods.ops.trunc(x), None, "trunc_")

    def frac_(self):
        """frac, in place."""
        return self._inplace(lambda x, _: methods.ops.frac(x), None, "frac_")

    def round_(self, *, decimals: int = 0):
        """round, in place."""
        return self._inplace(lambda x, _: methods.ops.round(x, decimals=decimals), None, "round_")

    def nan_to_num_(self, nan: float = 0.0, posinf=None, neginf=None):
        """nan_to_num, in place."""
        return self._inplace(lambda x, _: methods.ops.nan_to_num(x, nan, posinf, neginf), None,
                             "nan_to_num_")  # fmt: skip

    def clamp_min_(self, min):
        """clamp_min, in place."""
        return self._inplace(methods.ops.clamp_min, min, "clamp_min_")

    def clamp_max_(self, max):
        """clamp_max, in place."""
        return self._inplace(methods.ops.clamp_max, max, "clamp_max_")

    def fmod_(self, other):
        """fmod, in place."""
        return self._inplace(methods.ops.fmod, other, "fmod_")

    def remainder_(self, other):
        """remainder, in place."""
        return self._inplace(methods.ops.remainder, other, "remainder_")

    def lerp_(self, end, weight):
        """lerp, in place: ``ema.lerp_(param, 0.1)`` moves ema a tenth of the way."""
        if getattr(weight, "requires_grad", False):  # the write records for weight's sake
            return self._inplace(methods.ops.lerp, (end, weight), "lerp_")
        return self._inplace(lambda x, e: methods.ops.lerp(x, e, weight), end, "lerp_")

    # Activations PyTorch has as methods too (`chainrule.ops.activations`).

    def hardshrink(self, lambd: float = 0.5):
        """self where |self| > lambd, else 0."""
        return methods.ops.hardshrink(self, lambd)

    def prelu(self, weight):
        """self where positive, else weight * self (one slope, or one per channel of dim 1)."""
        return methods.ops.prelu(self, weight)
