"""Elementwise math rows beyond the basics: inverse trig, rounding (and divide's rounded
quotients), remainders, bitwise, tests, and the integer and float-bits helpers (gcd, lcm,
frexp, ldexp, nextafter, signbit, isin); and fill, the fill row with PyTorch's arguments.

Dtypes follow PyTorch: ops defined on real numbers (asin, atan2, erfinv...) turn integer and
bool inputs into float32, the default dtype; rounding and remainders keep integers integers;
the bitwise ops take integers and bools only. (The rows of `chainrule.ops.elementwise` keep
NumPy's float64 for integers.) The predicates (isnan, isclose...) give bool tensors.

>>> import chainrule as cr
>>> x = cr.tensor([-1.5, 0.25, 2.5])
>>> x.floor(), x.frac(), cr.fmod(x, 1.0), cr.remainder(x, 1.0)
(tensor([-2.,  0.,  2.]), tensor([-0.5000,  0.2500,  0.5000]), tensor([-0.5000,  0.2500,  \
0.5000]), tensor([0.5000, 0.2500, 0.5000]))
>>> cr.atan2(cr.tensor([1.0]), cr.tensor([-1.0])), cr.tensor([1, 2]).asin()
(tensor([2.3562]), tensor([1.5708,    nan]))
>>> cr.gcd(cr.tensor([12, -18]), cr.tensor([8, 27])), cr.lcm(cr.tensor([4]), cr.tensor([6]))
(tensor([4, 9]), tensor([12]))
>>> cr.tensor([-0.0, 1.0]).signbit(), cr.tensor([1.0]).isreal()
(tensor([ True, False]), tensor([ True]))
>>> cr.nextafter(cr.tensor([1.0]), cr.tensor([2.0])) > 1
tensor([ True])
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .. import special, xp
from .._tensor import Tensor
from ..dtypes import int64
from ..errors import (
    DomainError,
    DTypeError,
    DTypeNotImplementedError,
    ShapeError,
    fmt_dtype,
    fmt_shape,
)
from ..op import Op, comparison, elementwise
from .elementwise import add, cast, div, pow, sign
from .elementwise import fill as fill_row
from .shape import expand

__all__ = [
    "acos", "acosh", "allclose", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
    "arctanh", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_left_shift",
    "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "clamp_max",
    "clamp_min", "copysign", "deg2rad", "divide", "equal", "erfc", "erfinv", "exp2", "fill",
    "fix", "floor",
    "floor_divide", "fmax", "fmin", "fmod", "frac", "frexp", "gcd", "heaviside", "hypot",
    "isclose", "isfinite", "isin", "isinf", "isnan", "isneginf", "isposinf", "isreal", "lcm",
    "ldexp", "lerp", "log10", "log2", "logaddexp", "logical_xor", "nan_to_num", "nextafter",
    "rad2deg", "remainder", "round", "sgn", "signbit", "square", "trunc",
]  # fmt: skip

_LN2, _LN10 = math.log(2), math.log(10)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2


# Dtypes: what each kind of row does with integers and bools, and the errors it gives.


def _kind(a) -> str:
    """NumPy's kind letter of an operand, array or Python number: b, i, u or f."""
    return a.dtype.kind if isinstance(a, np.ndarray) else np.result_type(a).kind


def _quiet(fn: Callable) -> Callable:
    """``fn`` with NumPy's warnings silenced: nan and inf outside the domain are results here,
    as in PyTorch. Integer operands need nothing: the engine gives a float64 result that no
    float64 operand asked for the default float dtype (torch.asin(int) is float32)."""

    def forward(*args):
        with np.errstate(all="ignore"):
            return fn(*args)

    return forward


def _keep_integers(fn: Callable) -> Callable:
    """A rounding ``fn`` for floats; integers are whole already and come back copied, in
    their dtype (torch.floor(int tensor) is the same int tensor)."""
    return lambda x, **params: fn(x, **params) if x.dtype.kind == "f" else x.copy()


def _described(arrays) -> str:
    """The operands' dtypes for a message; a Python number by its type (``int``, ``float``)."""
    return " and ".join(fmt_dtype(getattr(a, "dtype", type(a))) for a in arrays)


def _refuse(name: str, kinds: str, wanted: str, *, promoted: bool = False) -> Callable:
    """A row's check: a DTypeNotImplementedError (PyTorch's kernels raise NotImplementedError)
    naming the op when an operand's kind is in ``kinds``; with ``promoted``, when the dtype the
    operands promote to is, the dtype PyTorch's kernel runs in (``1 << bool_tensor`` shifts
    int64s; ``bool_tensor << True`` is refused)."""

    def check(*arrays, **params):
        if promoted:
            refused = np.result_type(*arrays).kind in kinds
        else:
            refused = any(_kind(a) in kinds for a in arrays)
        if refused:
            raise DTypeNotImplementedError(f"{name}: {wanted}, got {_described(arrays)}")

    return check


def _division_check(name: str) -> Callable:
    """fmod, remainder, floor_divide: no bools, and integers never divided by zero (as in
    PyTorch, which raises; NumPy would give 0 with a warning)."""
    refuse_bool = _refuse(
        name, "b", "takes numbers, not bool tensors; convert with .long()", promoted=True
    )

    def check(x, y):
        refuse_bool(x, y)
        if np.result_type(x, y).kind in "iu" and np.any(np.asarray(y) == 0):
            raise DomainError(f"{name}: integer division by zero (a divisor is 0)")

    return check


# Functions of real numbers: integers and bools become float32.

# fmt: off
asin = elementwise("asin", _quiet(np.arcsin), lambda x: 1 / xp.sqrt(1 - x * x),
                   method=True, doc="Inverse sine, elementwise; nan outside [-1, 1].")
acos = elementwise("acos", _quiet(np.arccos), lambda x: -1 / xp.sqrt(1 - x * x),
                   method=True, doc="Inverse cosine, elementwise; nan outside [-1, 1].")
atan = elementwise("atan", _quiet(np.arctan), lambda x: 1 / (1 + x * x),
                   method=True, doc="Inverse tangent, elementwise, in (-pi/2, pi/2).")
asinh = elementwise("asinh", _quiet(np.arcsinh), lambda x: 1 / xp.sqrt(x * x + 1),
                    method=True, doc="Inverse hyperbolic sine, elementwise.")
acosh = elementwise("acosh", _quiet(np.arccosh), lambda x: 1 / xp.sqrt(x * x - 1),
                    method=True, doc="Inverse hyperbolic cosine, elementwise; nan below 1.")
atanh = elementwise("atanh", _quiet(np.arctanh), lambda x: 1 / (1 - x * x),
                    method=True, doc="Inverse hyperbolic tangent, elementwise; +-inf at +-1.")
# The angle of the point at height x and abscissa y; its gradient is (y, -x) / (x^2 + y^2).
atan2 = elementwise("atan2", _quiet(np.arctan2), lambda x, y: y / (x * x + y * y),
                    lambda x, y: -x / (x * x + y * y),
                    doc="atan(x / y) in the quadrant of the point (y, x), in [-pi, pi].")
# NumPy has neither: the forwards are chainrule.special's (Cody's erfc; erfinv by Newton).
erfc = elementwise("erfc", _quiet(special.erfc),
                   lambda x: -_TWO_OVER_SQRT_PI * xp.exp(-x * x), method=True,
                   doc="1 - erf(x), elementwise, accurate where erf(x) is near 1.")
erfinv = elementwise("erfinv", _quiet(special.erfinv),
                     lambda out: _SQRT_PI_OVER_TWO * xp.exp(out * out), method=True,
                     doc="The inverse of erf, elementwise; +-inf at +-1, nan outside [-1, 1].")
log2 = elementwise("log2", _quiet(np.log2), lambda x: 1 / (x * _LN2),
                   method=True, doc="Base-2 logarithm, elementwise.")
log10 = elementwise("log10", _quiet(np.log10), lambda x: 1 / (x * _LN10),
                    method=True, doc="Base-10 logarithm, elementwise.")
exp2 = elementwise("exp2", _quiet(np.exp2), lambda out: out * _LN2,
                   method=True, doc="2 ** x, elementwise.")
hypot = elementwise("hypot", _quiet(np.hypot), lambda x, out: x / out,
                    lambda y, out: y / out,
                    doc="sqrt(x**2 + y**2) without overflow; the gradient is nan at (0, 0).")
# d/dx = sigmoid(x - y): finite at +-1000, where exp(x) / (exp(x) + exp(y)) is not.
logaddexp = elementwise("logaddexp", _quiet(np.logaddexp),
                        lambda x, y: xp.sigmoid(x - y), lambda x, y: xp.sigmoid(y - x),
                        doc="log(exp(x) + exp(y)), finite for large |x| and |y|.")
# d/dx = +-1 (the sign of out / x), 0 at x = 0 as in PyTorch; y only gives the sign.
copysign = elementwise("copysign", _quiet(np.copysign),
                       lambda x, out: xp.sign(x) * xp.sign(out), 0,
                       doc="|x| with the sign of y (of -0.0 too); no gradient flows to y.")

# Rounding: the derivative is 0 (frac's is 1), as PyTorch has it. Integers stay integers.

_NOT_BOOL = "takes numbers, not bool tensors"
floor = elementwise("floor", _keep_integers(np.floor), 0, check=_refuse("floor", "b", _NOT_BOOL),
                    method=True, doc="The largest integer <= x, elementwise; derivative 0.")
ceil = elementwise("ceil", _keep_integers(np.ceil), 0, check=_refuse("ceil", "b", _NOT_BOOL),
                   method=True, doc="The smallest integer >= x, elementwise; derivative 0.")
trunc = elementwise("trunc", _keep_integers(np.trunc), 0, check=_refuse("trunc", "b", _NOT_BOOL),
                    method=True, doc="x rounded toward 0, elementwise; derivative 0.")
round_row = elementwise("round", _keep_integers(np.round), 0,
                        check=_refuse("round", "b", _NOT_BOOL),
                        doc="x rounded to ``decimals`` places, halves to even; derivative 0.")
frac = elementwise("frac", lambda x: x - np.trunc(x), 1,
                   check=_refuse("frac", "biu", "takes floating-point tensors"),
                   method=True, doc="x - trunc(x), with the sign of x; derivative 1.")
# Values that are not finite become finite ones, so no gradient reaches them.
nan_to_num_row = elementwise(
    "nan_to_num", lambda x, nan, posinf, neginf: np.nan_to_num(x, nan=nan, posinf=posinf,
                                                               neginf=neginf),
    lambda x: xp.run(isfinite, x), doc="x with nan, inf and -inf replaced by finite numbers.")
# nansum's and nanmean's first step: NaN read as 0, and the gradient masked by multiplying
# (as PyTorch's nansum backward does), so an infinite gradient gives nan at a NaN, not 0.
nan_to_zero_row = elementwise(
    "nan_to_zero", lambda x: np.where(np.isnan(x), 0, x), lambda x: xp.run(isnan, x) == 0,
    doc="x with NaN replaced by 0; the gradient is multiplied by (x is not NaN).")

# Remainders: d/dx = 1 and d/dy = -(x / y rounded), as x - y * round(x / y) says.

fmod = elementwise("fmod", _quiet(np.fmod), 1, lambda x, y: -xp.run(trunc, x / y),
                   check=_division_check("fmod"),
                   doc="The remainder of x / y with the sign of x (C's fmod).")
remainder = elementwise("remainder", _quiet(np.remainder), 1,
                        lambda x, y: -xp.run(floor, x / y), check=_division_check("remainder"),
                        doc="The remainder of x / y with the sign of y (Python's %).")
floor_divide = Op("floor_divide", _quiet(np.floor_divide), vjp=None, kind="elementwise",
                  inputs=("x", "y"), check=_division_check("floor_divide"),
                  doc="x / y rounded down (Python's //); not differentiable, as in PyTorch.")

# lerp in two forms, as PyTorch computes it: the one from the nearer end is exact at that end.
lerp = elementwise(
    "lerp", lambda x, y, weight: np.where(np.abs(weight) < 0.5, x + weight * (y - x),
                                          y - (y - x) * (1 - weight)),
    lambda weight: 1 - weight, "weight", lambda x, y: y - x, inputs=("x", "y", "weight"),
    check=_refuse("lerp", "biu", "takes floating-point tensors"),
    doc="x + weight * (y - x), elementwise, with weight a number or a tensor.")
# fmax/fmin ignore nan. The gradient goes to the chosen operand: x at ties, and x when y is
# nan (where both are nan too), as in PyTorch.
fmax = Op(
    "fmax", np.fmax,
    vjp=(lambda g, x, y: xp.where(_x_chosen(x >= y, y), g, 0 * g),
         lambda g, x, y: xp.where(_x_chosen(x >= y, y), 0 * g, g)),
    jvp=(lambda dx, x, y: xp.where(_x_chosen(x >= y, y), dx, 0 * dx),
         lambda dy, x, y: xp.where(_x_chosen(x >= y, y), 0 * dy, dy)),
    kind="elementwise", doc="The larger of x and y, elementwise, ignoring nan (nan if both are).")
fmin = Op(
    "fmin", np.fmin,
    vjp=(lambda g, x, y: xp.where(_x_chosen(x <= y, y), g, 0 * g),
         lambda g, x, y: xp.where(_x_chosen(x <= y, y), 0 * g, g)),
    jvp=(lambda dx, x, y: xp.where(_x_chosen(x <= y, y), dx, 0 * dx),
         lambda dy, x, y: xp.where(_x_chosen(x <= y, y), 0 * dy, dy)),
    kind="elementwise", doc="The smaller of x and y, elementwise, ignoring nan (nan if both are).")
# One-sided clamps, the bound a number or a tensor: the gradient goes to x where x is inside
# (bound included), to the bound where x is outside, to neither where x is nan.
clamp_min_row = elementwise("clamp_min", _quiet(np.maximum), lambda x, y: x >= y,
                            lambda x, y: x < y, doc="max(x, min), nan where x is nan.")
clamp_max_row = elementwise("clamp_max", _quiet(np.minimum), lambda x, y: x <= y,
                            lambda x, y: x > y, doc="min(x, max), nan where x is nan.")
heaviside_row = Op("heaviside", lambda x, values: _heaviside(x, values), vjp=None,
                   inputs=("x", "values"), kind="elementwise",
                   doc="0 where x < 0, values where x == 0, 1 where x > 0; not differentiable.")

# Bitwise: integers and bools only, no gradient.

_INTEGERS = "takes integer or bool tensors"
bitwise_and = Op("bitwise_and", lambda x, y: np.bitwise_and(x, y), vjp=None, kind="elementwise",
                 check=_refuse("bitwise_and", "f", _INTEGERS, promoted=True),
                 doc="x & y, bit by bit.")
bitwise_or = Op("bitwise_or", lambda x, y: np.bitwise_or(x, y), vjp=None, kind="elementwise",
                check=_refuse("bitwise_or", "f", _INTEGERS, promoted=True),
                doc="x | y, bit by bit.")
bitwise_xor = Op("bitwise_xor", lambda x, y: np.bitwise_xor(x, y), vjp=None, kind="elementwise",
                 check=_refuse("bitwise_xor", "f", _INTEGERS, promoted=True),
                 doc="x ^ y, bit by bit.")
bitwise_not = Op("bitwise_not", lambda x: np.invert(x), vjp=None, kind="elementwise",
                 check=_refuse("bitwise_not", "f", _INTEGERS),
                 doc="~x, every bit flipped (not, for bool tensors).")
bitwise_left_shift = Op(
    "bitwise_left_shift", lambda x, y: _shift(np.left_shift, x, y), vjp=None,
    kind="elementwise",
    check=_refuse("bitwise_left_shift", "fb", "takes integer tensors", promoted=True),
    doc="x << y; shifts by a negative amount or past the width give 0, as in PyTorch.")
bitwise_right_shift = Op(
    "bitwise_right_shift", lambda x, y: _shift(np.right_shift, x, y), vjp=None,
    kind="elementwise",
    check=_refuse("bitwise_right_shift", "fb", "takes integer tensors", promoted=True),
    doc="x >> y, keeping the sign; shifts out of range give 0 or -1, as in PyTorch.")

# Predicates: bool results, no gradient.

isnan = comparison("isnan", np.isnan, method=True, doc="Whether x is nan, elementwise.")
isinf = comparison("isinf", np.isinf, method=True, doc="Whether x is inf or -inf, elementwise.")
isfinite = comparison("isfinite", np.isfinite, method=True,
                      doc="Whether x is neither nan nor infinite, elementwise.")
isposinf = Op("isposinf", lambda x: np.isinf(x) & (x > 0), vjp=None, inputs=("x",),
              kind="comparison", method=True, doc="Whether x is inf, elementwise.")
isneginf = Op("isneginf", lambda x: np.isinf(x) & (x < 0), vjp=None, inputs=("x",),
              kind="comparison", method=True, doc="Whether x is -inf, elementwise.")
logical_xor = comparison("logical_xor", np.logical_xor,
                         doc="Whether exactly one of x and y is true (non-zero), elementwise.")
isclose_row = Op(
    "isclose", lambda x, y, rtol, atol, equal_nan: np.isclose(x, y, rtol, atol, equal_nan),
    vjp=None, inputs=("x", "y"), kind="comparison",
    doc="Whether |x - y| <= atol + rtol * |y|, elementwise (equal infinities count).")
# fmt: on


def _x_chosen(x_wins, y):
    """Where fmax/fmin take x: where x wins the comparison, or y is nan."""
    return x_wins | xp.run(isnan, y)


def _heaviside(x, values):
    """NumPy's heaviside keeps nan; PyTorch's gives 0 there (nan is neither 0 nor > 0)."""
    return np.where(x == 0, values, x > 0).astype(np.result_type(x, values))


def _shift(shift: np.ufunc, x, y):
    """``shift(x, y)`` with PyTorch's results for amounts outside [0, bits): a shift by
    all the bits or more, or by a negative amount, clears x (left, or right for unsigned
    dtypes) or fills it with its sign (right). NumPy leaves those undefined."""
    dtype = np.result_type(x, y)
    bits = dtype.itemsize * 8
    amount = np.asarray(y)
    inside = (amount >= 0) & (amount < bits)
    x = np.asarray(x, dtype)
    if shift is np.left_shift or dtype.kind == "u":
        return np.where(inside, shift(x, np.where(inside, amount, 0).astype(dtype)), 0)
    return shift(x, np.where(inside, amount, bits - 1).astype(dtype))


# Public functions with PyTorch's arguments, for the rows that take more than tensors.


def round(input, *, decimals: int = 0):
    """``input`` rounded to ``decimals`` decimal places (negative: tens, hundreds...), halves
    to even as in PyTorch; integers stay as they are. The derivative is 0.

    >>> import chainrule as cr
    >>> cr.round(cr.tensor([0.5, 1.5, 2.5])), cr.round(cr.tensor([1234.5]), decimals=-2)
    (tensor([0., 2., 2.]), tensor([1200.]))
    """
    if decimals == 0:
        return round_row(input)
    return round_row(input, decimals=decimals)


def nan_to_num(input, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None):  # fmt: skip
    """``input`` with nan, inf and -inf replaced by ``nan``, ``posinf`` and ``neginf``
    (by default 0 and the dtype's largest and smallest finite numbers); the gradient is 0
    where a value was replaced.

    >>> import chainrule as cr
    >>> cr.nan_to_num(cr.tensor([1.0, float("nan"), float("inf")]), posinf=9.0)
    tensor([1., 0., 9.])
    """
    return nan_to_num_row(input, nan=nan, posinf=posinf, neginf=neginf)


def heaviside(input, values):
    """The step function: 0 where ``input`` < 0, ``values`` where it is 0, 1 where it is > 0.

    Not differentiable, as in PyTorch. ``input`` and ``values`` need the same dtype.

    >>> import chainrule as cr
    >>> cr.heaviside(cr.tensor([-2.0, 0.0, 3.0]), cr.tensor(0.5))
    tensor([0.0000, 0.5000, 1.0000])
    """
    if isinstance(values, Tensor) and isinstance(input, Tensor) and values.dtype != input.dtype:
        raise DTypeError(
            f"heaviside: input and values must have the same dtype, got {input.dtype} and "
            f"{values.dtype}; convert one with .to()"
        )
    return heaviside_row(input, values)


def clamp_min(input, min):
    """``input`` limited from below by ``min`` (a number or a tensor); the gradient passes
    to ``input`` where input >= min, and to a tensor ``min`` where input < min (neither
    gets it where input is nan, as in PyTorch).

    >>> import chainrule as cr
    >>> cr.clamp_min(cr.tensor([-1.0, 2.0]), 0.5)
    tensor([0.5000, 2.0000])
    """
    return clamp_min_row(input, min)


def clamp_max(input, max):
    """``input`` limited from above by ``max`` (a number or a tensor); the gradient passes
    to ``input`` where input <= max, and to a tensor ``max`` where input > max.

    >>> import chainrule as cr
    >>> cr.clamp_max(cr.tensor([-1.0, 2.0]), 0.5)
    tensor([-1.0000,  0.5000])
    """
    return clamp_max_row(input, max)


def isclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """Whether |input - other| <= atol + rtol * |other|, elementwise, as a bool tensor;
    infinities of the same sign are close, nan is close to nan only with ``equal_nan``.

    >>> import chainrule as cr
    >>> cr.isclose(cr.tensor([1.0, 2.0]), cr.tensor([1.0 + 1e-9, 2.1]))
    tensor([ True, False])
    """
    return isclose_row(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:  # fmt: skip
    """Whether every element of `isclose` holds, as a Python bool (shapes must broadcast).

    >>> import chainrule as cr
    >>> cr.allclose(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 2.0 + 1e-9]))
    True
    """
    return bool(np.all(isclose(input, other, rtol, atol, equal_nan)._array))


def equal(input, other) -> bool:
    """Whether ``input`` and ``other`` have the same shape and the same values, as a Python
    bool (dtypes may differ, as in PyTorch; nan equals nothing).

    >>> import chainrule as cr
    >>> cr.equal(cr.tensor([1, 2]), cr.tensor([1.0, 2.0]))
    True
    >>> cr.equal(cr.tensor([1]), cr.tensor([[1]]))
    False
    """
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise DTypeError(
            f"equal: expected two tensors, got {type(input).__name__} and {type(other).__name__}"
        )
    return input.shape == other.shape and bool(np.array_equal(input._array, other._array))


def square(input):
    """``input * input``, elementwise (bool tensors give int64, as in PyTorch).

    >>> import chainrule as cr
    >>> cr.square(cr.tensor([-3.0, 0.5]))
    tensor([9.0000, 0.2500])
    """
    return pow(input.to(int64) if input.dtype.kind == "b" else input, 2)


def sgn(input):
    """The sign of each element: -1, 0 or 1 (`sign`, for real tensors); derivative 0.

    >>> import chainrule as cr
    >>> cr.sgn(cr.tensor([-2.0, 0.0, 3.0]))
    tensor([-1.,  0.,  1.])
    """
    return sign(input)


def deg2rad(input):
    """Degrees to radians, elementwise (integers become float32).

    >>> import chainrule as cr
    >>> cr.deg2rad(cr.tensor([180, 90]))
    tensor([3.1416, 1.5708])
    """
    return input * (math.pi / 180)


def rad2deg(input):
    """Radians to degrees, elementwise (integers become float32).

    >>> import chainrule as cr
    >>> cr.rad2deg(cr.tensor([math.pi, -math.pi / 2]))
    tensor([180., -90.])
    """
    return input * (180 / math.pi)


# Integers and float bits: gcd, lcm, frexp, nextafter, signbit, isreal, isin. No gradient,
# except frexp's mantissa, as in PyTorch.

_FLOATS = "takes floating-point tensors"
# fmt: off
gcd = Op("gcd", lambda x, y: np.gcd(x, y), vjp=None, kind="elementwise",
         check=_refuse("gcd", "fb", "takes integer tensors", promoted=True),
         doc="The greatest common divisor of x and y (non-negative), elementwise.")
lcm = Op("lcm", lambda x, y: np.lcm(x, y), vjp=None, kind="elementwise",
         check=_refuse("lcm", "fb", "takes integer tensors", promoted=True),
         doc="The least common multiple of x and y (non-negative), elementwise.")
nextafter = Op("nextafter", lambda x, y: np.nextafter(x, y), vjp=None, kind="elementwise",
               check=_refuse("nextafter", "biu", _FLOATS),
               doc="The next floating-point number after x toward y, elementwise.")
signbit = Op("signbit", np.signbit, vjp=None, inputs=("x",), kind="comparison", method=True,
             doc="Whether the sign bit of x is set (also for -0.0), elementwise.")
isreal = Op("isreal", np.isreal, vjp=None, inputs=("x",), kind="comparison", method=True,
            doc="Whether x has no imaginary part: true everywhere for a real tensor.")
# x = mantissa * 2**exponent with 0.5 <= |mantissa| < 1, so d mantissa / dx = 2**-exponent,
# which is mantissa / x; 1 where the exponent is 0 (at 0, inf and nan), as in PyTorch.
frexp_row = elementwise("frexp", lambda x: np.frexp(x)[0], lambda x, out: _mantissa_slope(x, out),
                        check=_refuse("frexp", "biu", _FLOATS),
                        doc="The mantissa of x, in [0.5, 1) times x's sign (0 at 0), elementwise.")
frexp_exponent = Op("frexp_exponent", lambda x: np.frexp(x)[1].astype(np.int32), vjp=None,
                    inputs=("x",), kind="elementwise", check=_refuse("frexp", "biu", _FLOATS),
                    doc="The int32 exponent e with x = mantissa * 2**e (0 at 0, inf, nan).")
isin_row = Op("isin", lambda x, y, assume_unique, invert: np.isin(x, y, assume_unique=assume_unique,
                                                                   invert=invert),
              vjp=None, inputs=("x", "y"), kind="comparison", batch=lambda *a: _batch_isin(*a),
              doc="Whether each element of x is among the elements of y (any shape).")
# fmt: on


def _mantissa_slope(x, out):
    scaled = xp.run(frexp_exponent, x) != 0
    with np.errstate(over="ignore"):  # 2**1074 for the smallest subnormal: inf, as PyTorch's
        return xp.where(scaled, out / xp.where(scaled, x, 1), 1)


def _batch_isin(op, values, batched, params):
    """isin under vmap: a batched x alone is elementwise; batched test elements are each
    example's own, so every element is compared with every test element of its example."""
    x, y = values
    if not batched[1]:
        return op(x, y, **params)
    size = y.shape[0]
    tests = y.reshape(size, 1, -1)
    shape = tuple(x.shape[1:]) if batched[0] else np.shape(x)
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    found = (x.reshape(size if batched[0] else 1, -1, 1) == tests).any(-1).reshape(size, *shape)
    return ~found if params["invert"] else found


class FrexpResult(NamedTuple):
    """What `frexp` returns, like ``torch.return_types.frexp``."""

    mantissa: Tensor
    exponent: Tensor


def frexp(input) -> FrexpResult:
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, 0.5 <= |mantissa| < 1
    (both 0 at 0; at inf and nan the mantissa is input and the exponent 0). The mantissa
    keeps input's dtype and is differentiable (2 ** -exponent); the exponent is int32.

    >>> import chainrule as cr
    >>> m, e = cr.frexp(cr.tensor([8.0, -3.0, 0.0]))
    >>> m, e
    (tensor([ 0.5000, -0.7500,  0.0000]), tensor([4, 2, 0], dtype=int32))
    """
    return FrexpResult(frexp_row(input), frexp_exponent(input))


def ldexp(input, other):
    """input * 2 ** other, elementwise, composed as PyTorch computes it (mul and pow), so
    the gradient reaches both. Integers give float32; ``other`` may be a number.

    >>> import chainrule as cr
    >>> cr.ldexp(cr.tensor([1.0, 0.75]), cr.tensor([3, -1]))
    tensor([8.0000, 0.3750])
    """
    if isinstance(other, Tensor):
        return input * pow(2.0, other)
    with np.errstate(over="ignore"):
        return input * float(np.exp2(float(other)))


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Whether each element of ``elements`` is among ``test_elements`` (any shape), as a
    bool tensor of elements' shape; ``invert`` gives the opposite. Either may be a number.

    >>> import chainrule as cr
    >>> cr.isin(cr.tensor([1, 2, 3, 4]), cr.tensor([2, 4])), cr.isin(cr.tensor([1, 2]), 2)
    (tensor([False,  True, False,  True]), tensor([False,  True]))
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise DTypeError(
            f"isin: expected a tensor for elements or test_elements, got "
            f"{type(elements).__name__} and {type(test_elements).__name__}"
        )
    return isin_row(elements, test_elements, assume_unique=assume_unique, invert=invert)


# PyTorch's other names (NumPy's): the same rows.
arcsin = asin
arccos = acos
arctan = atan
arctan2 = atan2
arcsinh = asinh
arccosh = acosh
arctanh = atanh
fix = trunc


# Division rounded: a row, since floor_divide's row has no gradient at all and PyTorch's
# div(rounding_mode=...) has a zero one (its output requires grad).


_ROUNDING_MODES = ("trunc", "floor")


def _divide_rounded(x, y, rounding_mode: str):
    """x / y rounded toward 0 ("trunc") or down ("floor"), as PyTorch: integers stay integers
    (C's division for trunc, Python's // for floor), floats divided by 0 give inf or nan."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if rounding_mode == "floor":
            return np.floor_divide(x, y)
        if np.result_type(x, y).kind == "f":
            return np.trunc(np.divide(x, y))
        floor = np.floor_divide(x, y)
        return floor + ((floor < 0) & (floor * y != x))  # a negative inexact quotient: round up


def _divide_check(x, y, rounding_mode: str) -> None:
    kinds = {np.result_type(v).kind for v in (x, y)}
    if "b" in kinds:
        raise DTypeError(
            f"divide: rounding_mode={rounding_mode!r} takes numbers, not bool tensors; convert "
            "with .long() or .float()"
        )
    if kinds <= {"i", "u"} and np.any(np.asarray(y) == 0):
        raise DomainError("divide: integer division by zero (a divisor is 0)")


divide_row = Op(
    "divide", _divide_rounded,
    vjp=(lambda g: 0 * g, lambda g: 0 * g), jvp=(lambda dx: 0 * dx, lambda dy: 0 * dy),
    kind="elementwise", check=_divide_check,
    doc="x / y rounded toward 0 or down (``rounding_mode``); its gradient is 0, as PyTorch's.",
)  # fmt: skip


def divide(input, other, *, rounding_mode: str | None = None):
    """input / other (true division, as `div`), or its quotient rounded toward zero
    (``rounding_mode="trunc"``) or down (``"floor"``), as ``torch.div``. Rounded, integer
    tensors give integers and the gradient is 0 (not the true quotient's).

    >>> import chainrule as cr
    >>> x = cr.tensor([7.0, -7.0])
    >>> cr.divide(x, 2), cr.divide(x, 2, rounding_mode="trunc")
    (tensor([ 3.5000, -3.5000]), tensor([ 3., -3.]))
    >>> cr.divide(x, 2, rounding_mode="floor")
    tensor([ 3., -4.])
    """
    if rounding_mode is None:
        return div(input, other)
    if rounding_mode not in _ROUNDING_MODES:
        raise DomainError(
            f"divide: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}"
        )
    return divide_row(input, other, rounding_mode=rounding_mode)


# fill: the elementwise fill row (behind fill_) with PyTorch's arguments.


def fill(input, value):
    """A new tensor of input's shape and dtype holding ``value`` everywhere (a number or a
    0-d tensor), as ``torch.fill``. input gets a zero gradient and a tensor value the sum of
    the output's gradient.

    >>> import chainrule as cr
    >>> cr.fill(cr.zeros(2, dtype=cr.int64), 3.7), cr.fill(cr.zeros(2), cr.tensor(5.0))
    (tensor([3, 3]), tensor([5., 5.]))
    """
    if not isinstance(value, Tensor):
        return fill_row(input, value=value)
    if value.ndim != 0:
        raise ShapeError(
            f"fill: the value must be a number or a 0-d tensor, got shape {fmt_shape(value.shape)}"
        )
    return add(fill_row(input, value=0), expand(cast(value, dtype=input.dtype), input.shape))
