"""Cases for chainrule/ops/aliases.py: the functions with logic of their own (plain aliases
such as ``absolute`` are the rows themselves, tested under their first names).

divide's rounded quotients jump where x / y is an integer: the quotients here stay between
1.1 and 1.9 in size, where the rounding is flat and finite differences see its 0 gradient.
"""

from cases import Case
from hypothesis import strategies as st
from strategies import broadcastable, distinct, one, reals, shapes


def magnitudes(lo, hi):
    """Reals with lo <= |v| <= hi, of either sign."""
    return st.one_of(reals(lo, hi), reals(-hi, -lo))


pair = broadcastable(2)
DIVIDEND, DIVISOR = magnitudes(1.05, 1.45), magnitudes(0.76, 0.95)

CASES = {
    "divide[trunc]": Case(
        lambda lib, x, y: lib.divide(x, y, rounding_mode="trunc") * x,
        pair, (DIVIDEND, DIVISOR), needs_lib=True,
    ),
    "divide[floor]": Case(
        lambda lib, x, y: lib.divide(x, y, rounding_mode="floor") * x,
        pair, (DIVIDEND, DIVISOR), needs_lib=True,
    ),
    "subtract[alpha]": Case(
        lambda lib, x, y: lib.subtract(x, y, alpha=2.5), pair, (reals(), reals()), needs_lib=True
    ),
    "ravel": Case(lambda x: x.ravel()),
    "fliplr": Case(lambda x: x.fliplr(), one(min_dims=2)),
    "flipud": Case(lambda x: x.flipud(), one(min_dims=1)),
    "msort": Case(lambda x: x.msort(), one(min_dims=1), (distinct(),)),
    "trace": Case(lambda x: x.trace(), one(min_dims=2, max_dims=2)),
    "fill[tensor]": Case(
        lambda lib, x, v: lib.fill(x, v) * x,
        st.tuples(shapes(), st.just(())), (reals(), reals()), needs_lib=True,
    ),
}  # fmt: skip
