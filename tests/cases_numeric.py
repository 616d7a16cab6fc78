"""Cases for chainrule/ops/numeric.py.

Rounding and remainders jump at some inputs, where finite differences cannot see their
derivative: their domains stay off those points (`off_grid`, and remainders' quotients kept
between two integers). Integer and bitwise rows take float inputs cast with ``.long()``;
tests/test_numeric.py checks edge values (nan, inf, ties, shifts out of range) and dtypes.
"""

from cases import Case
from hypothesis import strategies as st
from strategies import away_from_zero, broadcastable, positive, reals, shapes


def _nan_to_zero(x):
    from chainrule.ops.numeric import nan_to_zero_row

    return nan_to_zero_row(x)


pair = broadcastable(2)
triple = broadcastable(3)


def off_grid(step=1.0, offset=0.0, lo=-3.0, hi=3.0):
    """Reals at least 1e-3 * step away from every offset + k * step (where rounding jumps)."""

    def clear(v):
        position = (v - offset) / step
        return abs(position - round(position)) > 1e-3

    return reals(lo, hi).filter(clear)


def magnitudes(lo, hi):
    """Reals with lo <= |v| <= hi, of either sign."""
    return st.one_of(reals(lo, hi), reals(-hi, -lo))


# |x / y| in [1.1, 1.9]: x / y is never an integer, so fmod and remainder are smooth there and
# their gradient to y (-trunc or -floor of x / y) is not 0.
DIVIDEND, DIVISOR = magnitudes(1.05, 1.45), magnitudes(0.76, 0.95)
UNIT = reals(-0.9, 0.9)
INTEGERS = reals(-40, 40)  # cast with .long() in the cases


CASES = {
    "asin": Case(lambda x: x.asin(), domain=(UNIT,)),
    "acos": Case(lambda x: x.acos(), domain=(UNIT,)),
    "atan": Case(lambda x: x.atan()),
    "asinh": Case(lambda x: x.asinh()),
    "acosh": Case(lambda x: x.acosh(), domain=(positive(1.1, 4.0),)),
    "atanh": Case(lambda x: x.atanh(), domain=(UNIT,)),
    "atan2": Case(lambda x, y: x.atan2(y), pair, (away_from_zero(), away_from_zero())),
    "erfc": Case(lambda x: x.erfc()),
    "erfinv": Case(lambda x: x.erfinv(), domain=(reals(-0.95, 0.95),)),
    "log2": Case(lambda x: x.log2(), domain=(positive(),)),
    "log10": Case(lambda x: x.log10(), domain=(positive(),)),
    "exp2": Case(lambda x: x.exp2()),
    "hypot": Case(lambda x, y: x.hypot(y), pair, (away_from_zero(), reals())),
    "logaddexp": Case(lambda x, y: x.logaddexp(y), pair),
    "logaddexp[far]": Case(lambda x, y: (x * 300).logaddexp(y * 300), pair),
    "copysign": Case(lambda x, y: x.copysign(y), pair, (away_from_zero(), away_from_zero())),
    "copysign[number]": Case(lambda x: x.copysign(-1.0), domain=(away_from_zero(),)),
    "square": Case(lambda x: x.square()),
    "sgn": Case(lambda x: x.sgn() * x, domain=(away_from_zero(),)),
    "deg2rad": Case(lambda x: x.deg2rad()),
    "rad2deg": Case(lambda x: x.rad2deg()),
    "floor": Case(lambda x: x.floor() * x, domain=(off_grid(),)),
    "ceil": Case(lambda x: x.ceil() * x, domain=(off_grid(),)),
    "trunc": Case(lambda x: x.trunc() * x, domain=(off_grid(),)),
    "round": Case(lambda x: x.round() * x, domain=(off_grid(offset=0.5),)),
    "round[decimals]": Case(
        lambda x: x.round(decimals=2) * x, domain=(off_grid(0.01, 0.005),)
    ),  # fmt: skip
    "round[negative_decimals]": Case(
        lambda x: x.round(decimals=-1) + x, domain=(off_grid(10, 5, -40, 40),)
    ),  # fmt: skip
    "frac": Case(lambda x: x.frac(), domain=(off_grid(),)),
    "nan_to_num": Case(lambda x: x.nan_to_num()),
    "nan_to_zero": Case(lambda x: _nan_to_zero(x), torch_fn=lambda x: x.nan_to_num(0.0)),
    "fmod": Case(lambda x, y: x.fmod(y), pair, (DIVIDEND, DIVISOR)),
    "fmod[number]": Case(lambda x: x.fmod(0.8), domain=(DIVIDEND,)),
    "remainder": Case(lambda x, y: x % y, pair, (DIVIDEND, DIVISOR)),
    "floor_divide": Case(lambda x, y: x // y, pair, (DIVIDEND, DIVISOR)),
    "floor_divide[number]": Case(lambda x: x.floor_divide(0.8), domain=(DIVIDEND,)),
    "lerp": Case(lambda x, y, w: x.lerp(y, w), triple),
    "lerp[number]": Case(lambda x, y: x.lerp(y, 0.3) + x.lerp(y, 0.8), pair),
    "fmax": Case(lambda x, y: x.fmax(y), pair, (reals(-3, 0), reals(0.1, 3))),
    "fmin": Case(lambda x, y: x.fmin(y), pair, (reals(-3, 0), reals(0.1, 3))),
    "heaviside": Case(lambda x, y: x.heaviside(y), pair),
    "clamp_min": Case(lambda x: x.clamp_min(0.5), domain=(off_grid(3.0, 0.5),)),
    "clamp_min[tensor]": Case(
        lambda x, y: x.clamp_min(y), pair, (away_from_zero(), reals(-0.05, 0.05))
    ),  # fmt: skip
    "clamp_max": Case(lambda x: x.clamp_max(0.5), domain=(off_grid(3.0, 0.5),)),
    "clamp_max[tensor]": Case(
        lambda x, y: x.clamp_max(y), pair, (away_from_zero(), reals(-0.05, 0.05))
    ),  # fmt: skip
    "bitwise_and": Case(lambda x, y: x.long().bitwise_and(y.long()), pair, (INTEGERS,)),
    "bitwise_or": Case(lambda x, y: x.long() | y.long(), pair, (INTEGERS,)),
    "bitwise_xor": Case(lambda x, y: x.long() ^ y.long(), pair, (INTEGERS,)),
    "bitwise_not": Case(lambda x: ~x.long(), domain=(INTEGERS,)),
    "bitwise_left_shift": Case(
        lambda x, y: x.long() << y.long(), pair, (INTEGERS, reals(-2, 70))
    ),  # fmt: skip
    "bitwise_right_shift": Case(
        lambda x, y: x.long() >> y.long(), pair, (INTEGERS, reals(-2, 70))
    ),  # fmt: skip
    "isnan": Case(lambda x: (x.log() * 0).isnan(), domain=(positive(),)),
    "isinf": Case(lambda x, y: (x.exp() * y).isinf(), pair),
    "isfinite": Case(lambda x: x.isfinite()),
    "isposinf": Case(lambda x: x.isposinf()),
    "isneginf": Case(lambda x: x.isneginf()),
    "logical_xor": Case(lambda x, y: (x > 0) ^ (y > 0), pair),
    "isclose": Case(lambda x, y: x.isclose(y, rtol=0.5, atol=0.1), pair),
}


# divide's rounded quotients (x / y never an integer, see DIVIDEND) and fill.
CASES.update({
    "divide[trunc]": Case(
        lambda lib, x, y: lib.divide(x, y, rounding_mode="trunc") * x,
        pair, (DIVIDEND, DIVISOR), needs_lib=True,
    ),
    "divide[floor]": Case(
        lambda lib, x, y: lib.divide(x, y, rounding_mode="floor") * x,
        pair, (DIVIDEND, DIVISOR), needs_lib=True,
    ),
    "fill[tensor]": Case(
        lambda lib, x, v: lib.fill(x, v) * x,
        st.tuples(shapes(), st.just(())), (reals(), reals()), needs_lib=True,
    ),
})  # fmt: skip
