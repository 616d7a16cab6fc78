"""One Case per scalar op row: the expression, run on both chainrule and PyTorch, and its domain."""

from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st


def reals(lo=-3.0, hi=3.0):
    """Floats in [lo, hi]."""
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def positive(lo=0.1, hi=4.0):
    """Floats in [lo, hi], lo > 0."""
    return reals(lo, hi)


def away_from_zero(lo=0.05, hi=3.0):
    """Floats with lo <= |x| <= hi: keeps finite differences off kinks and poles."""
    return st.one_of(reals(lo, hi), reals(-hi, -lo))


@dataclass
class Case:
    """How to test one op: ``fn`` works on Values, Duals and torch tensors alike.

    ``torch_fn`` is given only where PyTorch spells the op differently.
    """

    fn: Callable
    domain: tuple = field(default_factory=lambda: (reals(),))
    torch_fn: Callable | None = None


def _torch_softplus(x):
    import torch

    return torch.nn.functional.softplus(x)


def _torch_leaky_relu(x):
    import torch

    return torch.nn.functional.leaky_relu(x, 0.1)


CASES = {
    "add": Case(lambda x, y: x + y, (reals(), reals())),
    "sub": Case(lambda x, y: x - y, (reals(), reals())),
    "mul": Case(lambda x, y: x * y, (reals(), reals())),
    "div": Case(lambda x, y: x / y, (reals(), away_from_zero())),
    "neg": Case(lambda x: -x),
    "pow": Case(lambda x: x**2.5, (positive(),)),
    "pow_var": Case(lambda x, y: x**y, (positive(), reals())),
    "exp": Case(lambda x: x.exp()),
    "log": Case(lambda x: x.log(), (positive(),)),
    "sqrt": Case(lambda x: x.sqrt(), (positive(),)),
    "sin": Case(lambda x: x.sin()),
    "cos": Case(lambda x: x.cos()),
    "tan": Case(lambda x: x.tan(), (reals(-1.3, 1.3),)),
    "tanh": Case(lambda x: x.tanh()),
    "sigmoid": Case(lambda x: x.sigmoid()),
    "relu": Case(lambda x: x.relu(), (away_from_zero(),)),
    "leaky_relu": Case(lambda x: x.leaky_relu(0.1), (away_from_zero(),), _torch_leaky_relu),
    "abs": Case(lambda x: x.abs(), (away_from_zero(),)),
    "softplus": Case(lambda x: x.softplus(), (reals(-20, 20),), _torch_softplus),
}
