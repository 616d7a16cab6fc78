"""Cases for the activation functions: chainrule/ops/activations.py (hardshrink, prelu) and the
composed ones of chainrule/nn/functional/activation.py, run through ``lib.nn.functional`` on
both libraries. Domains keep finite differences off each function's kinks."""

from cases import Case
from hypothesis import strategies as st
from strategies import away_from_zero, fixed, one, reals


def _off(*kinks, lo=-4.0, hi=4.0, gap=0.1):
    """Reals in [lo, hi] at least ``gap`` away from each kink."""
    edges = [lo, *sorted(kinks), hi]
    return st.one_of(
        *[reals(a + (gap if a in kinks else 0), b - (gap if b in kinks else 0))
          for a, b in zip(edges, edges[1:])]
    )  # fmt: skip


def _f(name, *args, **kwargs):
    """``lib.nn.functional.<name>(x, *args, **kwargs)`` as a case function."""
    return lambda lib, x: getattr(lib.nn.functional, name)(x, *args, **kwargs)


CASES = {
    "hardshrink": Case(lambda x: x.hardshrink(), domain=(_off(-0.5, 0.5),)),
    "hardshrink[lambd]": Case(
        lambda lib, x: lib.hardshrink(x, 1.5), domain=(_off(-1.5, 1.5),), needs_lib=True
    ),
    "prelu": Case(
        lambda x, w: x.prelu(w), fixed((2, 3, 2), (3,)), (away_from_zero(), reals(0.0, 1.0))
    ),
    "prelu[shared]": Case(lambda x, w: x.prelu(w), fixed((4,), (1,)), (away_from_zero(), reals())),
    "celu": Case(_f("celu", 0.5), domain=(away_from_zero(),), needs_lib=True),
    "softshrink": Case(_f("softshrink", 0.3), domain=(_off(-0.3, 0.3),), needs_lib=True),
    "tanhshrink": Case(_f("tanhshrink"), needs_lib=True),
    "logsigmoid": Case(_f("logsigmoid"), domain=(reals(-20, 20),), needs_lib=True),
    # PyTorch's float64 hardsigmoid backward multiplies by 1/6 rounded to float32.
    "hardsigmoid": Case(
        _f("hardsigmoid"), domain=(_off(-3, 3, lo=-5, hi=5),), needs_lib=True, rtol=1e-7
    ),
    "hardswish": Case(_f("hardswish"), domain=(_off(-3, 3, lo=-5, hi=5),), needs_lib=True),
    "threshold": Case(_f("threshold", 0.5, -2.0), domain=(_off(0.5),), needs_lib=True),
    "softmin": Case(_f("softmin", dim=-1), one(min_dims=1), needs_lib=True),
    "rrelu[eval]": Case(_f("rrelu", 0.1, 0.3), domain=(away_from_zero(),), needs_lib=True),
    "selu": Case(_f("selu"), domain=(away_from_zero(),), needs_lib=True),
}
