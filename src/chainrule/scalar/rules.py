"""The scalar op table: each row is a forward function and one partial derivative per input.

Both float engines read it: `Value` (reverse mode) multiplies each partial by the output's
gradient, `Dual` (forward mode) by the inputs' tangents. Tensor ops live in `chainrule.ops`.
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
from collections.abc import Callable

from ..errors import DomainError, fmt_value

#: The names a partial derivative may ask for: the inputs ``x`` and ``y`` and the output ``out``.
ARG_NAMES = ("x", "y", "out")

# A partial asks by name for what it needs; the engine always calls it as f(x, y, out).
_ADAPTERS: dict[tuple[str, ...], Callable] = {
    ("x",): lambda fn: lambda x, y, out: fn(x),
    ("y",): lambda fn: lambda x, y, out: fn(y),
    ("out",): lambda fn: lambda x, y, out: fn(out),
    ("x", "y"): lambda fn: lambda x, y, out: fn(x, y),
    ("x", "out"): lambda fn: lambda x, y, out: fn(x, out),
    ("y", "out"): lambda fn: lambda x, y, out: fn(y, out),
    ("x", "y", "out"): lambda fn: fn,
}

# Errors Python's float arithmetic raises outside an op's domain; the engines turn them into
# DomainError messages that name the op and the input.
ARITHMETIC_ERRORS = (ValueError, ZeroDivisionError, OverflowError)


def is_real(x: object) -> bool:
    """Whether ``x`` is a real number (a ``numbers.Real``: float, int, bool, NumPy floats ...).

    The exact-type tests settle the usual float or int before the ``numbers.Real`` check, an
    abstract-base-class lookup several times slower that every constant operand would pay.

    >>> is_real(2), is_real(0.5), is_real("2")
    (True, True, False)
    """
    return type(x) is float or type(x) is int or isinstance(x, numbers.Real)


class Rule:
    """One scalar op: its forward function and one partial derivative per differentiable input.

    ``forward`` takes one or two floats. Each partial is a function whose parameter names say
    what it needs from ``x``, ``y`` (second operand, or a constant such as an exponent) and
    ``out`` (the forward result). ``symbol`` is what graphs show; ``domain`` completes the
    message when the op is undefined at its input.

    >>> square = Rule("square", "²", lambda x: x * x, lambda x: 2 * x)
    >>> square.partials[0](3.0, None, 9.0)
    6.0
    """

    __slots__ = ("name", "symbol", "forward", "partials", "domain")

    def __init__(
        self, name: str, symbol: str, forward: Callable, *partials: Callable, domain: str = ""
    ) -> None:
        self.name = name
        self.symbol = symbol
        self.forward = forward
        self.partials = tuple(_positional(fn, name) for fn in partials)
        self.domain = domain

    def __repr__(self) -> str:
        return f"Rule({self.name!r}, {self.symbol!r})"

    def undefined(self, args: tuple, labels: tuple[str, ...] = (), what: str = "undefined"):
        """The DomainError for this op at ``args`` (floats), naming labelled operands."""
        values = [a for a in args if a is not None]
        if len(values) == 1:
            at = fmt_value(values[0])
        else:
            at = ", ".join(f"{n}={fmt_value(a)}" for n, a in zip(ARG_NAMES, values))
        named = [label for label in labels if label]
        msg = f"{self.name}: {what} at {at}"
        if named:
            msg += " for Value " + ", ".join(repr(label) for label in named)
        if self.domain:
            msg += f"; {self.domain}"
        return DomainError(msg)


def _positional(fn: Callable, op: str) -> Callable:
    names = tuple(inspect.signature(fn).parameters)
    if not names:  # a constant (add's 1.0): computed once, so backward calls one function
        value = fn()
        return lambda x, y, out: value
    if names not in _ADAPTERS:
        raise TypeError(f"{op}: a partial may ask for {ARG_NAMES} in that order, got {names}")
    return _ADAPTERS[names](fn)


def _exp(x: float) -> float:
    return math.exp(x)  # raises OverflowError past about 709.78


def _pow(x: float, y: float) -> float:
    out = x**y
    if isinstance(out, complex):
        raise ValueError("complex result")
    return float(out)


def _d_div_divisor(y: float, out: float) -> float:
    return -out / y  # d(x/y)/dy = -x/y² = -out/y


def _d_pow_exponent(x: float, out: float) -> float:
    # d(x**y)/dy = x**y * log(x); PyTorch takes 0 at x == 0, and it is undefined for x < 0.
    return 0.0 if x == 0 else out * math.log(x)


def _sigmoid(x: float) -> float:
    # Two branches so exp never overflows: sigmoid(-1000) is 0.0, not an OverflowError.
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _softplus(x: float) -> float:
    # max(x, 0) + log1p(exp(-|x|)) keeps softplus finite at ±1000.
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _relu(x: float) -> float:
    return x if x > 0 else 0.0


def _leaky_relu(x: float, negative_slope: float) -> float:
    return x if x > 0 else negative_slope * x


def _sign(x: float) -> float:
    return (x > 0) - (x < 0)  # 0 at 0: the subgradient PyTorch uses for abs


_POW_DOMAIN = "x ** y needs x > 0 when y is not an integer, and x != 0 when y < 0"

# fmt: off
RULES: dict[str, Rule] = {rule.name: rule for rule in [
    #    name          symbol        forward               ∂out/∂x                  ∂out/∂y
    Rule("add",        "+",          operator.add,         lambda: 1.0,             lambda: 1.0),
    Rule("sub",        "-",          operator.sub,         lambda: 1.0,             lambda: -1.0),
    Rule("mul",        "*",          operator.mul,         lambda y: y,             lambda x: x),
    Rule("div",        "/",          operator.truediv,     lambda y: 1.0 / y,       _d_div_divisor,
         domain="the divisor must not be 0"),
    Rule("neg",        "neg",        operator.neg,         lambda: -1.0),
    # x ** c with a constant exponent c (x**2, x**-1, x**0.5): only x is differentiated.
    Rule("pow",        "**",         _pow,                 lambda x, y: y * x ** (y - 1),
         domain=_POW_DOMAIN),
    # x ** y with both operands Values (also c ** x, whose constant base becomes a Value).
    Rule("pow_var",    "**",         _pow,                 lambda x, y: y * x ** (y - 1),
         _d_pow_exponent, domain=_POW_DOMAIN),
    Rule("exp",        "exp",        _exp,                 lambda out: out,
         domain="exp overflows a float above about 709.78"),
    Rule("log",        "log",        math.log,             lambda x: 1.0 / x,
         domain="log needs a positive input"),
    Rule("sqrt",       "sqrt",       math.sqrt,            lambda out: 0.5 / out,
         domain="sqrt needs a non-negative input and has no derivative at 0"),
    Rule("sin",        "sin",        math.sin,             lambda x: math.cos(x)),
    Rule("cos",        "cos",        math.cos,             lambda x: -math.sin(x)),
    Rule("tan",        "tan",        math.tan,             lambda out: 1.0 + out * out),
    Rule("tanh",       "tanh",       math.tanh,            lambda out: 1.0 - out * out),
    Rule("sigmoid",    "σ",          _sigmoid,             lambda out: out * (1.0 - out)),
    Rule("relu",       "relu",       _relu,                lambda x: float(x > 0)),  # 0 at 0
    # leaky_relu's y is its negative slope, a constant.
    Rule("leaky_relu", "leaky_relu", _leaky_relu,          lambda x, y: 1.0 if x > 0 else y),
    Rule("abs",        "abs",        abs,                  lambda x: float(_sign(x))),
    Rule("softplus",   "softplus",   _softplus,            lambda x: _sigmoid(x)),
]}
# fmt: on


class ScalarOps:
    """The operator surface shared by `Value` and `Dual`: every method is one row of RULES.

    A subclass provides ``_apply(rule, x, y)``: ``x`` is an operand of the subclass, ``y`` is
    another operand, a float constant that is not differentiated (``pow``, ``leaky_relu``), or
    None for unary ops; and ``_lift(other, op)``, which turns a Python number into an operand.
    """

    __slots__ = ()

    # Binary operators lift a Python number to an operand and apply the row, in the order the
    # expression reads: ``2 - x`` is sub(2, x). Where the other operand is usually one of
    # ours, the type test comes first: a training loop of Values would otherwise make a `_lift`
    # call per op.

    def __add__(self, other):
        if type(other) is not type(self):
            other = self._lift(other, "add")
        return self._apply(_ADD, self, other)

    def __radd__(self, other):  # other + self
        return self._apply(_ADD, self._lift(other, "add"), self)

    def __sub__(self, other):
        if type(other) is not type(self):
            other = self._lift(other, "sub")
        return self._apply(_SUB, self, other)

    def __rsub__(self, other):  # other - self
        return self._apply(_SUB, self._lift(other, "sub"), self)

    def __mul__(self, other):
        if type(other) is not type(self):
            other = self._lift(other, "mul")
        return self._apply(_MUL, self, other)

    def __rmul__(self, other):  # other * self
        return self._apply(_MUL, self._lift(other, "mul"), self)

    def __truediv__(self, other):
        if type(other) is not type(self):
            other = self._lift(other, "div")
        return self._apply(_DIV, self, other)

    def __rtruediv__(self, other):  # other / self
        return self._apply(_DIV, self._lift(other, "div"), self)

    def __neg__(self):
        return self._apply(_NEG, self, None)

    def __pos__(self):
        return self

    def __pow__(self, exponent):
        if isinstance(exponent, type(self)):
            return self._apply(_POW_VAR, self, exponent)
        return self._apply(_POW, self, self._constant(exponent, "pow"))

    def __rpow__(self, base):  # base ** self
        return self._apply(_POW_VAR, self._lift(base, "pow_var"), self)

    def __abs__(self):
        return self._apply(RULES["abs"], self, None)

    def exp(self):
        """e to the power of this number."""
        return self._apply(RULES["exp"], self, None)

    def log(self):
        """Natural logarithm; raises DomainError at 0 and below."""
        return self._apply(RULES["log"], self, None)

    def sqrt(self):
        """Square root; raises DomainError below 0 (and when differentiated at 0)."""
        return self._apply(RULES["sqrt"], self, None)

    def sin(self):
        """Sine (radians)."""
        return self._apply(RULES["sin"], self, None)

    def cos(self):
        """Cosine (radians)."""
        return self._apply(RULES["cos"], self, None)

    def tan(self):
        """Tangent (radians)."""
        return self._apply(RULES["tan"], self, None)

    def tanh(self):
        """Hyperbolic tangent."""
        return self._apply(RULES["tanh"], self, None)

    def sigmoid(self):
        """Logistic function 1 / (1 + exp(-x)), finite for any input."""
        return self._apply(RULES["sigmoid"], self, None)

    def relu(self):
        """max(x, 0); the derivative at 0 is taken as 0, as in PyTorch."""
        return self._apply(RULES["relu"], self, None)

    def leaky_relu(self, negative_slope: float = 0.01):
        """x for x > 0, else negative_slope * x; the derivative at 0 is negative_slope."""
        slope = self._constant(negative_slope, "leaky_relu")
        return self._apply(RULES["leaky_relu"], self, slope)

    def abs(self):
        """|x|; the derivative at 0 is taken as 0, as in PyTorch."""
        return self._apply(RULES["abs"], self, None)

    def softplus(self):
        """log(1 + exp(x)), computed so it stays finite for inputs like ±1000."""
        return self._apply(RULES["softplus"], self, None)

    @staticmethod
    def _constant(value: object, op: str) -> float:
        if not is_real(value):
            raise TypeError(f"{op}: expected a Python int or float, got {type(value).__name__}")
        return float(value)


_ADD, _SUB, _MUL, _DIV, _NEG = (RULES[n] for n in ("add", "sub", "mul", "div", "neg"))
_POW, _POW_VAR = RULES["pow"], RULES["pow_var"]
