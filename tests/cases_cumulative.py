"""Cases for chainrule/ops/cumulative.py: each scan along a first, a last (negative) and a 0-d dim.

cummax and cummin draw distinct elements (a tie is a kink); their index rows also take ties,
where PyTorch's choice (the later index) is deterministic.
"""

from cases import Case
from hypothesis import strategies as st
from strategies import distinct, one, reals

#: Few values, so ties are common.
FEW = st.sampled_from([-1.0, 0.0, 0.5, 2.0])


def along(name, call, domain=None, **options):
    """Variants of an op taking one dim: 0 of a vector, -1 of a matrix or more, a 0-d input."""
    domain = (reals() if domain is None else domain,)
    return {
        name: Case(lambda x: call(x, 0), one(1, 1), domain, **options),
        f"{name}[last]": Case(lambda x: call(x, -1), one(2), domain, **options),
        f"{name}[scalar]": Case(lambda x: call(x, 0), one(0, 0), domain, **options),
    }


CASES = {
    **along("cumsum", lambda x, dim: x.cumsum(dim)),
    **along("cumprod", lambda x, dim: x.cumprod(dim), reals(-1.5, 1.5)),
    # Zeros at fixed places (and wherever hypothesis puts more): the exact gradient there.
    "cumprod[zeros]": Case(
        lambda lib, x: (x * lib.tensor([1.0, 0.0, 1.0, 0.0])[: x.shape[-1]]).cumprod(-1),
        one(1, 2), (reals(-1.5, 1.5),), needs_lib=True),
    **along("logcumsumexp", lambda x, dim: x.logcumsumexp(dim)),
    "logcumsumexp[wide]": Case(lambda x: x.logcumsumexp(-1), one(1, 2), (reals(-500, 500),)),
    **along("cummax", lambda x, dim: x.cummax(dim), distinct()),
    **along("cummin", lambda x, dim: x.cummin(dim), distinct()),
    "cummax_indices": Case(lambda x: x.cummax(-1).indices, one(1), (FEW,)),
    "cummin_indices": Case(lambda x: x.cummin(0).indices, one(1), (FEW,)),
}  # fmt: skip
