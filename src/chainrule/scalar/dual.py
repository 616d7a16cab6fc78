"""`Dual`: forward-mode automatic differentiation on floats with dual numbers.

A dual number a + b·ε (ε² = 0) carries a value and a derivative (tangent) together; every op
reads the same row of `chainrule.scalar.rules` as `Value` does and sums partial × tangent.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

from .rules import ARITHMETIC_ERRORS, Rule, ScalarOps


class Dual(ScalarOps):
    """A value with the derivative of that value along one input direction.

    >>> x = Dual(3.0, 1.0)      # seed: dx/dx = 1
    >>> y = x * x + 2 * x
    >>> (y.value, y.deriv)
    (15.0, 8.0)
    """

    __slots__ = ("value", "deriv")

    def __init__(self, value: float, deriv: float = 0.0) -> None:
        for name, number in (("value", value), ("deriv", deriv)):
            if not isinstance(number, numbers.Real):
                raise TypeError(f"Dual: {name} must be a real number, got {type(number).__name__}")
        self.value = float(value)
        self.deriv = float(deriv)

    @staticmethod
    def _apply(rule: Rule, x: Dual, y: Dual | float | None) -> Dual:
        if isinstance(y, Dual):
            args, tangents = (x.value, y.value), (x.deriv, y.deriv)
        else:
            args, tangents = ((x.value,) if y is None else (x.value, y)), (x.deriv,)
        x_arg, y_arg = args if len(args) == 2 else (args[0], None)
        try:
            value = rule.forward(*args)
        except ARITHMETIC_ERRORS:
            raise rule.undefined(args) from None
        try:
            deriv = sum(
                partial(x_arg, y_arg, value) * tangent
                for partial, tangent in zip(rule.partials, tangents)
                if tangent != 0.0
            )
        except ARITHMETIC_ERRORS:
            raise rule.undefined(args, what="derivative undefined") from None
        return type(x)(value, deriv)  # a subclass's ops make its own kind

    @classmethod
    def _lift(cls, other: object, op: str) -> Dual:
        if isinstance(other, Dual):
            return other
        if isinstance(other, numbers.Real):
            return cls(other)
        raise TypeError(f"{op}: cannot combine a Dual with {type(other).__name__}")

    def __float__(self) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"Dual(value={self.value:.6g}, deriv={self.deriv:.6g})"


def derivative(f: Callable[[Dual], Dual | float], x: float) -> float:
    """df/dx at ``x`` for a function of one number, in one forward pass.

    >>> derivative(lambda x: x**3, 2.0)
    12.0
    """
    out = f(Dual(x, 1.0))
    return out.deriv if isinstance(out, Dual) else 0.0


def forward_gradient(f: Callable[..., Dual | float], *xs: float) -> list[float]:
    """The gradient of ``f(*xs)`` by forward mode: one pass per input, seeding each in turn.

    Costs n forward passes for n inputs, where reverse mode (`Value.backward`) costs one.

    >>> forward_gradient(lambda x, y: x * y + x, 2.0, 3.0)
    [4.0, 2.0]
    """
    gradient = []
    for i in range(len(xs)):
        out = f(*(Dual(x, 1.0 if j == i else 0.0) for j, x in enumerate(xs)))
        gradient.append(out.deriv if isinstance(out, Dual) else 0.0)
    return gradient
