"""Elementwise rows: arithmetic, exp/log/trig, activations, comparisons, where, casts.

Each row states its local derivative once (`elementwise`); VJP and JVP follow from it. Rows
whose gradient is cheaper written directly (maximum, where, leaky_relu) give VJPs and JVPs.
"""

from __future__ import annotations

import numpy as np

from .. import xp
from ..errors import DomainError
from ..function import LINEAR, Op, elementwise

__all__ = [
    "abs", "add", "cast", "clamp", "clip", "clone", "cos", "div", "eq", "erf", "exp", "expm1",
    "ge", "gelu", "gt", "le", "leaky_relu", "log", "log1p", "logical_and", "logical_not",
    "logical_or", "lt", "maximum", "minimum", "mul", "ne", "neg", "pow", "relu", "rsqrt",
    "sigmoid", "sign", "silu", "sin", "softplus", "sqrt", "sub", "tan", "tanh", "where",
]  # fmt: skip

# fmt: off
add = elementwise("add", np.add, 1, 1)
sub = elementwise("sub", np.subtract, 1, -1)
mul = elementwise("mul", np.multiply, "y", "x")
div = elementwise("div", np.divide, lambda y: 1 / y, lambda y, out: -out / y)
# d(x**y)/dy = out * log(x), taken as 0 where x == 0 (as PyTorch does).
pow = elementwise("pow", np.power, lambda x, y: y * x ** (y - 1),
                  lambda x, out: xp.where(x == 0, 0 * out, out * xp.log(xp.where(x == 0, 1, x))))
neg = elementwise("neg", np.negative, -1)
exp = elementwise("exp", np.exp, "out")
log = elementwise("log", np.log, lambda x: 1 / x)
log1p = elementwise("log1p", np.log1p, lambda x: 1 / (1 + x))
expm1 = elementwise("expm1", np.expm1, lambda out: out + 1)
sqrt = elementwise("sqrt", np.sqrt, lambda out: 0.5 / out)
rsqrt = elementwise("rsqrt", lambda x: 1 / np.sqrt(x), lambda out: -0.5 * out * out * out)
sin = elementwise("sin", np.sin, lambda x: xp.cos(x))
cos = elementwise("cos", np.cos, lambda x: -xp.sin(x))
tan = elementwise("tan", np.tan, lambda out: 1 + out * out)
tanh = elementwise("tanh", np.tanh, lambda out: 1 - out * out)
sigmoid = elementwise("sigmoid", xp.sigmoid, lambda out: out * (1 - out))
relu = elementwise("relu", lambda x: np.maximum(x, 0), lambda x: x > 0)  # 0 at 0, as PyTorch
# log(1 + exp(x)) as logaddexp(0, x): finite at ±1000; a row because composing it is not.
softplus = elementwise("softplus", lambda x: np.logaddexp(0, x), lambda x: xp.sigmoid(x))
# NumPy has no erf: the forward is Cody's rational approximation (chainrule.special).
erf = elementwise("erf", xp.erf, lambda x: _TWO_OVER_SQRT_PI * xp.exp(-x * x))
# A row, not x * 0.5 * (1 + erf(x / sqrt(2))) composed: that would be five nodes saving
# four arrays; this saves x alone. Its slope is built from rows, so it differentiates again.
gelu_row = elementwise("gelu", lambda x, approximate: _gelu(x, approximate),
                       lambda x, approximate: _gelu_slope(x, approximate))
abs = elementwise("abs", np.abs, lambda x: xp.sign(x))  # sign(0) = 0: subgradient 0 at 0
sign = elementwise("sign", np.sign, 0)
clone = Op("clone", np.copy, vjp=(lambda g: g,), jvp=LINEAR)
# The engine casts each gradient back to its input's dtype, so cast's VJP is the identity.
cast = Op("cast", lambda x, dtype: x.astype(dtype), vjp=(lambda g: g,), jvp=LINEAR)

leaky_relu_row = Op(
    "leaky_relu", lambda x, negative_slope: np.where(x > 0, x, x * negative_slope),
    vjp=(lambda g, x, negative_slope: xp.where(x > 0, g, g * negative_slope),),
    jvp=(lambda dx, x, negative_slope: xp.where(x > 0, dx, dx * negative_slope),))
# Ties send half the gradient to each side, as PyTorch does.
maximum = Op(
    "maximum", np.maximum,
    vjp=(lambda g, x, y: xp.where(x == y, g * 0.5, g * (x > y)),
         lambda g, x, y: xp.where(x == y, g * 0.5, g * (x < y))),
    jvp=(lambda dx, x, y: xp.where(x == y, dx * 0.5, dx * (x > y)),
         lambda dy, x, y: xp.where(x == y, dy * 0.5, dy * (x < y))))
minimum = Op(
    "minimum", np.minimum,
    vjp=(lambda g, x, y: xp.where(x == y, g * 0.5, g * (x < y)),
         lambda g, x, y: xp.where(x == y, g * 0.5, g * (x > y))),
    jvp=(lambda dx, x, y: xp.where(x == y, dx * 0.5, dx * (x < y)),
         lambda dy, x, y: xp.where(x == y, dy * 0.5, dy * (x > y))))
where_row = Op(
    "where", np.where, inputs=("cond", "x", "y"),
    vjp=(None, lambda g, cond: xp.where(cond, g, 0 * g),
         lambda g, cond: xp.where(cond, 0 * g, g)),
    jvp=(None, lambda dx, cond: xp.where(cond, dx, 0 * dx),
         lambda dy, cond: xp.where(cond, 0 * dy, dy)))
clamp_row = Op(
    "clamp", lambda x, min, max: np.clip(x, min, max),
    vjp=(lambda g, x, min, max: g * _inside(x, min, max),),
    jvp=(lambda dx, x, min, max: dx * _inside(x, min, max),))
fill = Op("fill", lambda x, value: np.full_like(x, value),
          vjp=(lambda g: 0 * g,), jvp=(lambda dx: 0 * dx,))
copy_into = Op("copy_into", lambda x, source: np.broadcast_to(source, x.shape).astype(x.dtype),
               vjp=(lambda g: 0 * g, lambda g: g), jvp=(lambda dx: 0 * dx, lambda dy: dy))

lt = Op("lt", np.less, vjp=None, inputs=("x", "y"))
le = Op("le", np.less_equal, vjp=None, inputs=("x", "y"))
gt = Op("gt", np.greater, vjp=None, inputs=("x", "y"))
ge = Op("ge", np.greater_equal, vjp=None, inputs=("x", "y"))
eq = Op("eq", np.equal, vjp=None, inputs=("x", "y"))
ne = Op("ne", np.not_equal, vjp=None, inputs=("x", "y"))
logical_not = Op("logical_not", np.logical_not, vjp=None, inputs=("x",))
logical_and = Op("logical_and", np.logical_and, vjp=None, inputs=("x", "y"))
logical_or = Op("logical_or", np.logical_or, vjp=None, inputs=("x", "y"))
# fmt: on


_TWO_OVER_SQRT_PI = 1.1283791670955126
_INV_SQRT_2PI = 0.3989422804014327
_SQRT_HALF = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654
_GELU_CUBIC = 0.044715


def _gelu(x, approximate: str):
    """x * Phi(x), Phi the standard normal CDF; or PyTorch's tanh approximation of it."""
    if approximate == "tanh":
        return 0.5 * x * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)))
    return 0.5 * x * (1 + xp.erf(x * _SQRT_HALF))


def _gelu_slope(x, approximate: str):
    """d gelu / dx: Phi(x) + x * phi(x) (phi the normal density), or the tanh form's."""
    if approximate == "tanh":
        t = xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        inner_slope = _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * inner_slope
    return 0.5 * (1 + xp.erf(x * _SQRT_HALF)) + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _inside(x, min, max):
    """Where clamp passes the gradient: min <= x <= max (inclusive, as PyTorch)."""
    if min is None:
        return x <= max
    if max is None:
        return x >= min
    return (x >= min) & (x <= max)


def leaky_relu(x, negative_slope: float = 0.01):
    """x where positive, else negative_slope * x; the derivative at 0 is negative_slope."""
    return leaky_relu_row(x, negative_slope=negative_slope)


def where(condition, x, y):
    """Elements of x where condition is true, else of y; no gradient flows to condition."""
    return where_row(condition, x, y)


def clamp(x, min=None, max=None):
    """Limit x to [min, max]; the gradient passes where min <= x <= max."""
    if min is None and max is None:
        raise DomainError("clamp: give at least one of min and max")
    return clamp_row(x, min=min, max=max)


clip = clamp


def gelu(x, approximate: str = "none"):
    """Gaussian error linear unit x * Phi(x), Phi the standard normal CDF (via erf).

    ``approximate="tanh"`` gives PyTorch's 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    >>> import chainrule as cr
    >>> [round(v, 6) for v in cr.gelu(cr.tensor([-1.0, 0.0, 1.0], dtype=cr.float64)).tolist()]
    [-0.158655, 0.0, 0.841345]
    """
    if approximate not in ("none", "tanh"):
        raise DomainError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return gelu_row(x, approximate=approximate)


def silu(x):
    """x * sigmoid(x) (also called swish), composed from rows."""
    return x * sigmoid(x)


# One line per public row: what it computes and, where it matters, its derivative's choice.
_ROW_DOCS = {
    "add": "x + y, broadcasting; the gradient is summed back to each input's shape.",
    "sub": "x - y, broadcasting.",
    "mul": "x * y, broadcasting.",
    "div": "x / y, true division, broadcasting.",
    "pow": "x ** y, broadcasting; the gradient to y is y's share of x ** y * log(x).",
    "neg": "-x.",
    "exp": "e ** x, elementwise.",
    "log": "Natural logarithm, elementwise (-inf at 0, nan below).",
    "log1p": "log(1 + x), accurate for small x.",
    "expm1": "exp(x) - 1, accurate for small x.",
    "sqrt": "Square root, elementwise.",
    "rsqrt": "1 / sqrt(x), elementwise.",
    "sin": "Sine, elementwise.",
    "cos": "Cosine, elementwise.",
    "tan": "Tangent, elementwise.",
    "tanh": "Hyperbolic tangent, elementwise.",
    "sigmoid": "1 / (1 + exp(-x)), elementwise, finite for large |x|.",
    "relu": "max(x, 0); derivative 0 at 0, as in PyTorch.",
    "softplus": "log(1 + exp(x)), finite for large |x|.",
    "erf": "The error function, elementwise (see `chainrule.special.erf`).",
    "abs": "|x|; derivative sign(x), so 0 at 0.",
    "sign": "-1, 0 or 1 by the sign of x; its derivative is 0.",
    "clone": "A copy of x that stays in the graph.",
    "cast": "x in another dtype (``dtype=``); the gradient is cast back.",
    "maximum": "Elementwise maximum of x and y; at ties each gets half the gradient.",
    "minimum": "Elementwise minimum of x and y; at ties each gets half the gradient.",
    "lt": "x < y as a bool tensor (no gradient).",
    "le": "x <= y as a bool tensor (no gradient).",
    "gt": "x > y as a bool tensor (no gradient).",
    "ge": "x >= y as a bool tensor (no gradient).",
    "eq": "x == y as a bool tensor (no gradient).",
    "ne": "x != y as a bool tensor (no gradient).",
    "logical_not": "not x, elementwise, as a bool tensor.",
    "logical_and": "x and y, elementwise, as a bool tensor.",
    "logical_or": "x or y, elementwise, as a bool tensor.",
}
for _name, _doc in _ROW_DOCS.items():
    globals()[_name].__doc__ = _doc
