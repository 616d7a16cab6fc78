"""Elementwise rows: arithmetic, exp/log/trig, activations, comparisons, where, casts; their
other PyTorch names (absolute, multiply, greater...), and the arithmetic composed with
PyTorch's extra arguments (subtract's alpha, positive, addcmul, addcdiv) and detach.

Each row states its local derivative once (`elementwise`); VJP and JVP follow from it. Rows
whose gradient is cheaper written directly (maximum, where, leaky_relu) give VJPs and JVPs.
"""

from __future__ import annotations

import math

import numpy as np

from .. import xp
from .._tensor import Tensor
from ..errors import DomainError, DTypeError, ShapeError, fmt_dtype, fmt_shape
from ..op import LINEAR, Loops, Op, comparison, elementwise
from .arguments import shape_of

__all__ = [
    "abs", "absolute", "add", "addcdiv", "addcmul", "cast", "clamp", "clip", "clone", "cos",
    "cosh", "detach", "div", "eq", "erf", "exp", "expm1", "ge", "gelu", "greater",
    "greater_equal", "gt", "le", "leaky_relu", "less", "less_equal", "log", "log1p",
    "logical_and", "logical_not", "logical_or", "lt", "maximum", "minimum", "mul", "multiply",
    "ne", "neg", "negative", "not_equal", "positive", "pow", "reciprocal", "relu", "rsqrt",
    "sigmoid", "sign", "silu", "sin", "sinh", "softplus", "sqrt", "sub", "subtract", "tan",
    "tanh", "true_divide", "where",
]  # fmt: skip


def _power(x, y, out=None):
    """x ** y as np.power, except a floating array raised to a Python number in `_POWERS`:
    then by multiplication, division and sqrt, as PyTorch computes those exponents (np.power
    with a float exponent is over ten times slower on float32). ``out``: the array to write."""
    if type(x) is np.ndarray and type(y) in (int, float) and x.dtype.kind == "f":
        short_cut = _POWERS.get(y)
        if short_cut is not None:
            return short_cut(x, out)
    return np.power(x, y, out=out)


# x ** y for exponents PyTorch computes without pow, each giving PyTorch's numbers bit for bit;
# and 0.5, where PyTorch runs pow: sqrt is correctly rounded, within an ulp of PyTorch's pow.
# Each reads x before it writes ``out``, which may be x itself.
_POWERS = {
    1: lambda x, out: np.positive(x, out=out),
    2: lambda x, out: np.multiply(x, x, out=out),
    3: lambda x, out: np.multiply(x * x, x, out=out),
    0.5: lambda x, out: np.add(np.sqrt(x), 0.0, out=out),  # + 0.0: pow(-0.0, 0.5) is +0.0
    -0.5: lambda x, out: np.divide(1, np.sqrt(x), out=out),
    -1: lambda x, out: np.divide(1, x, out=out),
    -2: lambda x, out: np.divide(1, x * x, out=out),
}


def _gelu_scalar(x, approximate: str):
    """gelu of one element, in float64 (a fused kernel rounds it to x's dtype once)."""
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)
        return x * (0.5 * (1.0 + math.tanh(inner)))
    return x * (0.5 * (1.0 + math.erf(float(x) * _SQRT_HALF)))


def _clamp_scalar(x, min, max):
    """clamp of one element, as np.clip: maximum then minimum, nan stays nan."""
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


# fmt: off
add = elementwise("add", np.add, 1, 1,
                  doc="x + y, broadcasting; the gradient is summed back to each input's shape.")
sub = elementwise("sub", np.subtract, 1, -1, doc="x - y, broadcasting.")
mul = elementwise("mul", np.multiply, "y", "x", doc="x * y, broadcasting.")
# d(x/y)/dy from x and y, not from the output: as PyTorch saves them, so an in-place change to
# the quotient leaves backward free and one to x is refused (when y needs a gradient).
div = elementwise("div", np.divide, lambda y: 1 / y, lambda x, y: -x / (y * y),
                  doc="x / y, true division, broadcasting.")
# PyTorch's pow_backward, so every zero case agrees: see _pow_x_grad and _pow_y_slope. The
# forward (`_power`) takes PyTorch's short cuts for small whole and half exponents.
pow = Op("pow", _power, writes_out=True, scalar=lambda x, y: x**y,
         vjp=(lambda g, x, y: _pow_x_grad(g, x, y),
              lambda g, x, y, out: g * _pow_y_slope(x, y, out)),
         jvp=(lambda dx, x, y: _pow_x_grad(dx, x, y),
              lambda dy, x, y, out: dy * _pow_y_slope(x, y, out)),
         kind="elementwise",
         doc="x ** y, broadcasting; the gradient to x is 0 where y == 0, the gradient to y "
             "x ** y * log(x), 0 where x == 0 and y >= 0.")
neg = elementwise("neg", np.negative, -1, method=True, doc="-x.")
exp = elementwise("exp", np.exp, "out", method=True, doc="e ** x, elementwise.")
log = elementwise("log", np.log, lambda x: 1 / x,
                  method=True, doc="Natural logarithm, elementwise (-inf at 0, nan below).")
log1p = elementwise("log1p", np.log1p, lambda x: 1 / (1 + x),
                    method=True, doc="log(1 + x), accurate for small x.")
expm1 = elementwise("expm1", np.expm1, lambda out: out + 1,
                    method=True, doc="exp(x) - 1, accurate for small x.")
sqrt = elementwise("sqrt", np.sqrt, lambda out: 0.5 / out,
                   method=True, doc="Square root, elementwise.")
# 1 / x as its own row, so that c / x saves only its output, as PyTorch's reciprocal does.
reciprocal = elementwise("reciprocal", lambda x: 1 / x, lambda out: -out * out,
                         scalar=lambda x: 1 / x, method=True,
                         doc="1 / x, elementwise (true division).")
rsqrt = elementwise("rsqrt", lambda x: 1 / np.sqrt(x), lambda out: -0.5 * out * out * out,
                    scalar=lambda x: 1 / np.sqrt(x), method=True, doc="1 / sqrt(x), elementwise.")
sin = elementwise("sin", np.sin, lambda x: xp.cos(x), method=True, doc="Sine, elementwise.")
cos = elementwise("cos", np.cos, lambda x: -xp.sin(x), method=True, doc="Cosine, elementwise.")
tan = elementwise("tan", np.tan, lambda out: 1 + out * out,
                  method=True, doc="Tangent, elementwise.")
# Each is the other's derivative: the rule runs the other row (`xp.run`), so it records
# under create_graph and higher derivatives follow.
sinh = elementwise("sinh", np.sinh, lambda x: xp.run(cosh, x),
                   method=True, doc="Hyperbolic sine, elementwise.")
cosh = elementwise("cosh", np.cosh, lambda x: xp.run(sinh, x),
                   method=True, doc="Hyperbolic cosine, elementwise.")
tanh = elementwise("tanh", np.tanh, lambda out: 1 - out * out,
                   method=True, doc="Hyperbolic tangent, elementwise.")
sigmoid = elementwise("sigmoid", xp.sigmoid, lambda out: out * (1 - out),
                      scalar=lambda x: 1 / (1 + np.exp(-x)), method=True,
                      doc="1 / (1 + exp(-x)), elementwise, finite for large |x|.")
# The derivative from the output (out > 0 exactly where x > 0), as PyTorch saves it: an
# in-place change to x afterwards leaves backward free, one to the output is refused.
relu = elementwise("relu", lambda x: np.maximum(x, 0), lambda out: out > 0,
                   scalar=lambda x: np.maximum(x, 0), method=True,
                   doc="max(x, 0); derivative 0 at 0, as in PyTorch.")
# log(1 + exp(x)) as logaddexp(0, x): finite at ±1000; a row because composing it is not.
softplus = elementwise("softplus", lambda x: np.logaddexp(0, x), lambda x: xp.sigmoid(x),
                       scalar=lambda x: np.logaddexp(0, x), method=True,
                       doc="log(1 + exp(x)), finite for large |x|.")
# NumPy has no erf: the forward is Cody's rational approximation (chainrule.special). One
# element is libm's erf in float64 (as the forward, a float32 input is widened and rounded once).
erf = elementwise("erf", xp.erf, lambda x: _TWO_OVER_SQRT_PI * xp.exp(-x * x), method=True,
                  scalar=lambda x: math.erf(float(x)),
                  doc="The error function, elementwise (see `chainrule.special.erf`).")
# A row, not x * 0.5 * (1 + erf(x / sqrt(2))) composed: that would be five nodes saving
# four arrays; this saves x and Phi(x), which its slope needs (erf is the costly part).
# Its slope is built from rows, so it differentiates again.
gelu_row = elementwise("gelu", lambda x, approximate: _gelu(x, approximate),
                       lambda x, cdf, approximate: _gelu_slope(x, cdf, approximate),
                       decomposition=lambda x, approximate: _gelu(x, approximate),
                       residuals={"cdf": lambda x, approximate: _gelu_cdf(x, approximate)},
                       forward_saving=lambda x, approximate: _gelu_saving(x, approximate),
                       scalar=_gelu_scalar,
                       doc="x * Phi(x) (``approximate='none'``) or its tanh approximation.")
abs = elementwise("abs", np.abs, lambda x: xp.sign(x),  # sign(0) = 0: subgradient 0 at 0
                  method=True, doc="|x|; derivative sign(x), so 0 at 0.")
sign = elementwise("sign", np.sign, 0,
                   method=True, doc="-1, 0 or 1 by the sign of x; its derivative is 0.")
clone = Op("clone", np.copy, vjp=(lambda g: g,), jvp=LINEAR, kind="elementwise",
           method=True, doc="A copy of x that stays in the graph.")
# The engine casts each gradient back to its input's dtype, so cast's VJP is the identity.
cast = Op("cast", lambda x, dtype: x.astype(dtype), vjp=(lambda g: g,), jvp=LINEAR,
          kind="elementwise", doc="x in another dtype (``dtype=``); the gradient is cast back.")

leaky_relu_row = Op(
    "leaky_relu", lambda x, negative_slope: _leaky_relu(x, negative_slope),
    vjp=(lambda g, x, negative_slope: xp.where(x > 0, g, g * negative_slope),),
    jvp=(lambda dx, x, negative_slope: xp.where(x > 0, dx, dx * negative_slope),),
    kind="elementwise", scalar=lambda x, negative_slope: x if x > 0 else x * negative_slope,
    doc="x where positive, else negative_slope * x.")
# Ties send half the gradient to each side, as PyTorch does.
maximum = Op(
    "maximum", np.maximum,
    vjp=(lambda g, x, y: xp.where(x == y, g * 0.5, g * (x > y)),
         lambda g, x, y: xp.where(x == y, g * 0.5, g * (x < y))),
    jvp=(lambda dx, x, y: xp.where(x == y, dx * 0.5, dx * (x > y)),
         lambda dy, x, y: xp.where(x == y, dy * 0.5, dy * (x < y))),
    kind="elementwise", doc="Elementwise maximum of x and y; at ties each gets half the gradient.")
minimum = Op(
    "minimum", np.minimum,
    vjp=(lambda g, x, y: xp.where(x == y, g * 0.5, g * (x < y)),
         lambda g, x, y: xp.where(x == y, g * 0.5, g * (x > y))),
    jvp=(lambda dx, x, y: xp.where(x == y, dx * 0.5, dx * (x < y)),
         lambda dy, x, y: xp.where(x == y, dy * 0.5, dy * (x > y))),
    kind="elementwise", doc="Elementwise minimum of x and y; at ties each gets half the gradient.")
where_row = Op(
    "where", np.where, inputs=("cond", "x", "y"),
    # 0, not 0 * g: an infinite g sends 0 to the branch not taken, as in PyTorch (not nan).
    vjp=(None, lambda g, cond: xp.where(cond, g, 0), lambda g, cond: xp.where(cond, 0, g)),
    jvp=(None, lambda dx, cond: xp.where(cond, dx, 0), lambda dy, cond: xp.where(cond, 0, dy)),
    kind="elementwise", scalar=lambda cond, x, y: x if cond else y,
    doc="x where cond is true, else y; no gradient flows to cond.")
clamp_row = Op(
    "clamp", lambda x, min, max: np.clip(x, min, max),
    vjp=(lambda g, x, min, max: g * _inside(x, min, max),),
    jvp=(lambda dx, x, min, max: dx * _inside(x, min, max),),
    kind="elementwise", scalar=_clamp_scalar,
    doc="x limited to [min, max]; the gradient passes where min <= x <= max.")
# The two rows behind in-place writes (fill_, zero_, copy_). A batched tensor is never written
# in place (vmap loops for that), so they need no batching rule.
fill = Op("fill", lambda x, value: np.full_like(x, value),
          vjp=(lambda g: 0 * g,), jvp=(lambda dx: 0 * dx,), kind="elementwise",
          batch=Loops("in-place writes run per example"), doc="x with every element set to value.")
copy_into = Op("copy_into", lambda x, source: np.broadcast_to(source, x.shape).astype(x.dtype),
               vjp=(lambda g: 0 * g, lambda g: g), jvp=(lambda dx: 0 * dx, lambda dy: dy),
               kind="elementwise", batch=Loops("in-place writes run per example"),
               doc="source broadcast to x's shape and dtype (what copy_ writes).")

lt = comparison("lt", np.less, doc="x < y as a bool tensor (no gradient).")
le = comparison("le", np.less_equal, doc="x <= y as a bool tensor (no gradient).")
gt = comparison("gt", np.greater, doc="x > y as a bool tensor (no gradient).")
ge = comparison("ge", np.greater_equal, doc="x >= y as a bool tensor (no gradient).")
eq = comparison("eq", np.equal, doc="x == y as a bool tensor (no gradient).")
ne = comparison("ne", np.not_equal, doc="x != y as a bool tensor (no gradient).")
logical_not = comparison("logical_not", np.logical_not, method=True,
                         doc="not x, elementwise, as a bool tensor.")
logical_and = comparison("logical_and", np.logical_and,
                         doc="x and y, elementwise, as a bool tensor.")
logical_or = comparison("logical_or", np.logical_or, doc="x or y, elementwise, as a bool tensor.")
# fmt: on


_TWO_OVER_SQRT_PI = 1.1283791670955126
_INV_SQRT_2PI = 0.3989422804014327
_SQRT_HALF = 0.7071067811865476
_SQRT_2_OVER_PI = 0.7978845608028654
_GELU_CUBIC = 0.044715


def _gelu_cdf(x, approximate: str):
    """Phi(x), the standard normal CDF; or PyTorch's tanh approximation of it. On a float
    array, the same operations in place on one new array (the same numbers)."""
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.ndim:
        if approximate == "tanh":
            cdf = x * _GELU_CUBIC
            cdf *= x
            cdf *= x
            cdf += x
            cdf *= _SQRT_2_OVER_PI
            np.tanh(cdf, out=cdf)
        else:
            cdf = xp.erf(x * _SQRT_HALF)
        cdf += 1
        cdf *= 0.5
        return cdf
    if approximate == "tanh":
        return 0.5 * (1 + xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x)))
    return 0.5 * (1 + xp.erf(x * _SQRT_HALF))


def _gelu(x, approximate: str):
    """x * Phi(x) (x * 0.5 * (1 + erf(x / sqrt 2)) as PyTorch, halving being exact)."""
    return x * _gelu_cdf(x, approximate)


def _gelu_saving(x, approximate: str):
    cdf = _gelu_cdf(x, approximate)
    return x * cdf, {"cdf": cdf}


def _gelu_slope(x, cdf, approximate: str):
    """d gelu / dx: Phi(x) + x * phi(x) (phi the normal density), or the tanh form's. Phi
    comes from the forward (a residual), not from the output, which may be changed in place
    after the forward."""
    if approximate == "tanh":
        t = xp.tanh(_SQRT_2_OVER_PI * (x + _GELU_CUBIC * x * x * x))
        inner_slope = _SQRT_2_OVER_PI * (1 + 3 * _GELU_CUBIC * x * x)
        return cdf + 0.5 * x * (1 - t * t) * inner_slope
    if type(x) is np.ndarray and x.dtype.kind == "f" and x.ndim and type(cdf) is np.ndarray:
        slope = x * x  # the same numbers in place: scaling by -0.5 is exact
        slope *= -0.5
        np.exp(slope, out=slope)
        slope *= x
        slope *= _INV_SQRT_2PI
        slope += cdf
        return slope
    return cdf + x * xp.exp(-0.5 * x * x) * _INV_SQRT_2PI


def _pow_x_grad(g, x, y):
    """g * d(x ** y)/dx = g * y * x ** (y - 1), and 0 wherever y == 0: x ** 0 is 1 for every
    x, so its gradient is 0 even at x == 0, where the product is 0 * inf. As PyTorch's
    pow_backward: g is inside the where, so an infinite g gives 0 there too, and a second
    derivative through it is 0 where y == 0 (not nan)."""
    # x ** (y - 1) through the row: its short cuts (x * x for y == 3) in the backward too.
    if isinstance(y, (int, float)):  # a Python exponent (x ** 2): no elementwise choice
        return xp.zeros_like(g) if y == 0 else g * (y * xp.run(pow, x, y - 1))
    return xp.where(y == 0, 0, g * (y * xp.run(pow, x, y - 1)))


def _pow_y_slope(x, y, out):
    """d(x ** y)/dy = x ** y * log(x), taken as 0 at x == 0 for y >= 0 (0 ** y is flat as y
    grows from there) and -inf at x == 0 for y < 0 (out * log(x) = inf * -inf), as PyTorch's
    pow_backward_exponent."""
    if isinstance(x, (int, float)):  # a Python base (2 ** t)
        return out * np.log(x) if x != 0 else xp.where(y >= 0, 0, out * -np.inf)
    return xp.where((x == 0) & (y >= 0), 0, out * xp.log(x))


def _inside(x, min, max):
    """Where clamp passes the gradient: min <= x <= max (inclusive, as PyTorch)."""
    if min is None:
        return x <= max
    if max is None:
        return x >= min
    return (x >= min) & (x <= max)


def _leaky_relu(x, negative_slope):
    """x where x > 0, else x * negative_slope. With a slope in (0, 1] that is the larger of x
    and x * slope (the smaller for a slope above 1), one ufunc instead of a comparison and a
    select; a slope of 0 is left to the select, as inf * 0 would give nan."""
    if type(negative_slope) is float or type(negative_slope) is int:
        if 0 < negative_slope <= 1:
            return np.maximum(x, x * negative_slope)
        if negative_slope > 1:
            return np.minimum(x, x * negative_slope)
    return np.where(x > 0, x, x * negative_slope)


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


# Sums of products and quotients, as PyTorch's addcmul and addcdiv.


def _pointwise(op: str, tensors: tuple) -> None:
    shapes = [shape_of(t) for t in tensors]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        shown = ", ".join(fmt_shape(s) for s in shapes)
        raise ShapeError(f"{op}: shapes {shown} do not broadcast") from None


def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2, all three broadcast.

    >>> import chainrule as cr
    >>> cr.addcmul(cr.ones(2), cr.tensor([1.0, 2.0]), cr.tensor([3.0, 4.0]), value=0.5).tolist()
    [2.5, 5.0]
    """
    _pointwise("addcmul", (input, tensor1, tensor2))
    return input + value * (tensor1 * tensor2)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2, all three broadcast; integer tensor1 and tensor2
    are a DTypeError, as in PyTorch (whose old addcdiv divided integers by truncation).

    >>> import chainrule as cr
    >>> cr.addcdiv(cr.ones(2), cr.tensor([1.0, 2.0]), cr.tensor([4.0, 4.0]), value=2).tolist()
    [1.5, 2.0]
    """
    _pointwise("addcdiv", (input, tensor1, tensor2))
    dtypes = [np.dtype(t.dtype if isinstance(t, Tensor) else np.asarray(t).dtype)
              for t in (tensor1, tensor2)]  # fmt: skip
    if all(d.kind in "biu" for d in dtypes):
        raise DTypeError(
            f"addcdiv: tensor1 and tensor2 are integers ({fmt_dtype(dtypes[0])}, "
            f"{fmt_dtype(dtypes[1])}); convert them to a floating dtype, or write "
            "input + value * trunc(tensor1 / tensor2) for the old integer division"
        )
    return input + value * (tensor1 / tensor2)


# The same ops under PyTorch's other names: a plain alias is the op itself (``absolute`` runs
# the ``abs`` row, whose errors name ``abs``).
absolute = abs
multiply = mul
true_divide = div
negative = neg
greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne


# Arithmetic with PyTorch's extra arguments, and copies without history.


def subtract(input, other, *, alpha=1):
    """input - alpha * other, broadcasting (`sub` with PyTorch's ``alpha``).

    >>> import chainrule as cr
    >>> cr.subtract(cr.tensor([5.0, 6.0]), cr.tensor([1.0, 2.0]), alpha=2)
    tensor([3., 2.])
    """
    return sub(input, other if alpha == 1 else other * alpha)


def positive(input):
    """input itself, as ``torch.positive`` (unary ``+``); bool tensors are refused, as there.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, -2.0])
    >>> cr.positive(x) is x
    True
    """
    if input.dtype.kind == "b":
        raise DTypeError("positive: unary + is not defined for bool tensors")
    return input


def detach(input):
    """input's data (shared) without its history, as ``Tensor.detach``."""
    return input.detach()
