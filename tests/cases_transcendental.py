"""Cases for chainrule/ops/transcendental.py (the gamma family, i0, igamma, sinc, logit,
xlogy...) and the integer and float-bits rows of chainrule/ops/numeric.py (gcd, frexp, isin...).

Domains keep finite differences off the poles of the gamma family (0 and the negative
integers), off sinc's removable point 0 (tests/test_special_functions.py checks it there) and
off the jumps of frexp's mantissa at powers of two. igamma's gradient to a is not implemented
(as in PyTorch), so its cases detach a.
"""

import math

import torch
from cases import Case
from strategies import away_from_zero, broadcastable, positive, reals

from chainrule.ops.transcendental import i1

pair = broadcastable(2)

# Away from the poles at 0, -1, -2, -3 by at least 0.1.
OFF_POLES = reals(-3, 4).filter(lambda v: v > 0.1 or abs(v - round(v)) > 0.1)
INTEGERS = reals(-40, 40)  # cast with .long() in the cases
# |x| in [0.1, 3], at least 1e-3 (relative) from a power of two, where the mantissa jumps.
OFF_POWERS_OF_TWO = away_from_zero().filter(
    lambda v: abs(math.log2(abs(v)) - round(math.log2(abs(v)))) > 1e-3
)


def off(*points, lo=0.01, hi=0.99):
    """Reals in [lo, hi] at least 1e-3 from each of ``points`` (where a clamp kinks)."""
    return reals(lo, hi).filter(lambda v: min(abs(v - p) for p in points) > 1e-3)


CASES = {
    "lgamma": Case(lambda x: x.lgamma(), domain=(OFF_POLES,)),
    "digamma": Case(lambda x: x.digamma(), domain=(OFF_POLES,), rtol=1e-8),  # torch's trigamma
    "polygamma": Case(
        lambda lib, x: lib.polygamma(1, x), needs_lib=True, domain=(OFF_POLES,), rtol=1e-8
    ),  # fmt: skip
    "polygamma[3]": Case(lambda x: x.polygamma(3), domain=(positive(0.3, 6),)),
    "polygamma[0]": Case(lambda x: x.polygamma(0), domain=(positive(),), rtol=1e-8),
    "mvlgamma": Case(lambda x: x.mvlgamma(3), domain=(positive(1.1, 5),)),
    "i0": Case(lambda x: x.i0()),
    "i1": Case(lambda x: i1(x), torch_fn=lambda x: torch.special.i1(x)),
    "igamma": Case(
        lambda a, x: a.detach().igamma(x),
        pair,
        (positive(0.3, 5), positive(0.1, 8)),
        grad_inputs=(1,),
    ),  # fmt: skip
    "igammac": Case(
        lambda a, x: a.detach().igammac(x),
        pair,
        (positive(0.3, 5), positive(0.1, 8)),
        grad_inputs=(1,),
    ),  # fmt: skip
    "sinc": Case(lambda x: x.sinc(), domain=(away_from_zero(),)),
    "logit": Case(lambda x: x.logit(), domain=(reals(0.05, 0.95),)),
    "logit[eps]": Case(lambda x: x.logit(eps=0.2), domain=(off(0.2, 0.8),)),
    "xlogy": Case(lambda x, y: x.xlogy(y), pair, (reals(), positive())),
    "xlogy[number_self]": Case(
        lambda lib, y: lib.xlogy(2.5, y), needs_lib=True, domain=(positive(),)
    ),  # fmt: skip
    "logaddexp2": Case(lambda x, y: x.logaddexp2(y), pair),
    "logaddexp2[far]": Case(lambda x, y: (x * 300).logaddexp2(y * 300), pair),
    # the exponent off 0, as pow's (cases_elementwise.py says why)
    "float_power": Case(
        lambda x, y: x.float_power(y), pair, (positive(), away_from_zero()), keeps_dtype=False
    ),  # fmt: skip
    "float_power[number]": Case(lambda x: x.float_power(3), keeps_dtype=False),
    "ldexp": Case(lambda x, y: x.ldexp(y), pair),
    "gcd": Case(lambda x, y: x.long().gcd(y.long()), pair, (INTEGERS,)),
    "lcm": Case(lambda x, y: x.long().lcm(y.long()), pair, (INTEGERS,)),
    "nextafter": Case(lambda x, y: x.nextafter(y), pair),
    "signbit": Case(lambda x: x.signbit()),
    "isreal": Case(lambda x: x.isreal()),
    "frexp": Case(lambda x: x.frexp().mantissa, domain=(OFF_POWERS_OF_TWO,)),
    "frexp_exponent": Case(lambda x: x.frexp().exponent),
    "isin": Case(lambda lib, x, y: lib.isin(x.round(), y.round()), pair, needs_lib=True),
    "isin[invert]": Case(
        lambda lib, x, y: lib.isin(x.round(), y.round(), invert=True), pair, needs_lib=True
    ),  # fmt: skip
}
