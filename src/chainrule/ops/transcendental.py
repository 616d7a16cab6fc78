"""Special functions as rows: the gamma family (lgamma, digamma, polygamma, mvlgamma), i0,
the regularized incomplete gammas, sinc, logit, xlogy, logaddexp2, float_power.

The forwards are `chainrule.special`'s NumPy functions. Each derivative is another row
(lgamma's is digamma, digamma's polygamma(1, x), i0's i1...), run through `xp.run`, so
derivatives of every order follow. Integer inputs give the default float dtype, as in PyTorch.

>>> import chainrule as cr
>>> x = cr.tensor([0.5, 1.0, 3.0], dtype=cr.float64)
>>> x.lgamma(), x.digamma(), cr.polygamma(1, x)
(tensor([0.5724, 0.0000, 0.6931], dtype=float64), tensor([-1.9635, -0.5772,  0.9228], \
dtype=float64), tensor([4.9348, 1.6449, 0.3949], dtype=float64))
>>> cr.igamma(cr.tensor([1.0, 2.0]), cr.tensor([1.0, 3.0])), cr.i0(cr.tensor([0.0, 1.0]))
(tensor([0.6321, 0.8009]), tensor([1.0000, 1.2661]))
>>> cr.logaddexp2(cr.tensor([1.0, 3.0]), cr.tensor([1.0, 0.0]))
tensor([2.0000, 3.1699])
>>> cr.sinc(cr.tensor([0.0, 0.5, 1.5])), cr.igammac(cr.tensor([1.0]), cr.tensor([1.0]))
(tensor([ 1.0000,  0.6366, -0.2122]), tensor([0.3679]))
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import special, xp
from .._tensor import Tensor
from ..dtypes import float64
from ..errors import DomainError, DTypeError, GraphError
from ..op import Op, elementwise
from .elementwise import pow
from .numeric import _quiet

__all__ = [
    "digamma", "float_power", "i0", "igamma", "igammac", "lgamma", "logaddexp2", "logit",
    "mvlgamma", "polygamma", "sinc", "xlogy",
]  # fmt: skip

_LN2 = math.log(2)
_LOG_PI = math.log(math.pi)


def _no_derivative_for_a(name: str):
    """The partial of igamma and igammac with respect to a: not implemented, as in PyTorch
    (an error when a gradient or tangent would flow to a)."""

    def partial():
        raise GraphError(
            f"{name}: the derivative with respect to input (a) is not implemented, as in "
            f"PyTorch; differentiate with respect to other (x) only, or detach input"
        )

    return partial


# fmt: off
# The gamma family: each row's derivative is the next row (polygamma's is itself, n + 1).
lgamma = elementwise("lgamma", _quiet(special.lgamma), lambda x: xp.run(digamma, x),
                     method=True,
                     doc="log |Gamma(x)|, elementwise; inf at 0 and the negative integers.")
digamma = elementwise("digamma", _quiet(special.digamma),
                      lambda x: xp.run(polygamma_row, x, n=1), method=True,
                      doc="Gamma'(x) / Gamma(x), elementwise; -inf at 0, nan at the negative "
                          "integers.")
polygamma_row = elementwise("polygamma", lambda x, n: special.polygamma(n, x),
                            lambda x, n: xp.run(polygamma_row, x, n=n + 1),
                            doc="The n-th derivative of digamma, elementwise (``n=``).")
# d/dx i0 = i1 and d/dx i1 = i0 - i1 / x (1/2 at 0). i1 is torch.special.i1, not torch.i1:
# a row of its own here, not public.
i0 = elementwise("i0", _quiet(special.i0), lambda x: xp.run(i1, x), method=True,
                 doc="The modified Bessel function of the first kind of order 0, elementwise.")
i1 = elementwise("i1", _quiet(special.i1), lambda x: _i1_slope(x),
                 doc="The modified Bessel function of the first kind of order 1, elementwise.")
# dP/dx = x^(a-1) e^(-x) / Gamma(a) = -dQ/dx, as PyTorch computes it.
igamma = elementwise("igamma", special.igamma, _no_derivative_for_a("igamma"),
                     lambda a, x: _igamma_slope(a, x), inputs=("a", "x"),
                     doc="The regularized lower incomplete gamma function P(a, x), "
                         "elementwise; no gradient flows to a.")
igammac = elementwise("igammac", special.igammac, _no_derivative_for_a("igammac"),
                      lambda a, x: -_igamma_slope(a, x), inputs=("a", "x"),
                      doc="The regularized upper incomplete gamma function Q(a, x) = "
                          "1 - P(a, x), elementwise; no gradient flows to a.")
# sin(pi x) / (pi x), 1 at 0; the derivative (cos(pi x) - sinc(x)) / x, 0 at 0 as in PyTorch.
sinc = elementwise("sinc", lambda x: _sinc(x), lambda x, out: _sinc_slope(x, out),
                   method=True, doc="The normalized sinc sin(pi x) / (pi x), elementwise; 1 at 0.")
logit_row = elementwise("logit", lambda x, eps: _logit(x, eps),
                        lambda x, eps: _logit_slope(x, eps),
                        doc="log(x / (1 - x)), elementwise, x clamped to [eps, 1 - eps] when "
                            "eps is given.")
# d/dx log2(2^x + 2^y) = 2^x / (2^x + 2^y) = sigmoid((x - y) log 2): finite at +-1000.
logaddexp2 = elementwise("logaddexp2", _quiet(np.logaddexp2),
                         lambda x, y: xp.sigmoid((x - y) * _LN2),
                         lambda x, y: xp.sigmoid((y - x) * _LN2),
                         doc="log2(2**x + 2**y), elementwise, finite for large |x| and |y|.")
# As PyTorch: 0 where x == 0 (even at y = 0 or inf), nan where y is nan. The gradient to x is
# xlogy(g, y), 0 where x == 0 and y <= 0; to y, g x / y.
xlogy_row = Op("xlogy", lambda x, y: _xlogy(x, y),
               vjp=(lambda g, x, y: _xlogy_x_slope(g, x, y), lambda g, x, y: _quotient(g * x, y)),
               jvp=(lambda dx, x, y: _xlogy_x_slope(dx, x, y),
                    lambda dy, x, y: _quotient(dy * x, y)),
               kind="elementwise",
               doc="x * log(y), elementwise; 0 where x == 0, nan where y is nan.")
# fmt: on


def _i1_slope(x):
    """i0(x) - i1(x) / x; below |x| = 1e-3 its series 1/2 + 3 x^2 / 16 + 5 x^4 / 384, as
    the quotient's own derivative loses every digit there (and is 0 / 0 at 0)."""
    small = xp.abs(x) < 1e-3
    safe = xp.where(small, 1, x)
    x2 = x * x
    series = 0.5 + x2 * (3 / 16 + x2 * (5 / 384))
    return xp.where(small, series, xp.run(i0, x) - xp.run(i1, safe) / safe)


def _igamma_slope(a, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.exp((a - 1) * xp.log(x) - x - xp.run(lgamma, a))


def _sinc(x):
    with np.errstate(invalid="ignore"):
        pi_x = np.pi * np.where(x == 0, 1, x)
        return np.where(x == 0, 1, np.sin(pi_x) / pi_x)


def _sinc_slope(x, out):
    safe = xp.where(x == 0, 1, x)
    return xp.where(x == 0, 0, (xp.cos(np.pi * safe) - out) / safe)


def _logit(x, eps):
    z = x if eps is None else np.clip(x, eps, 1 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(z / (1 - z))


def _logit_slope(x, eps):
    """1 / (x (1 - x)); outside [0, 1] nan, or with eps 0 outside [eps, 1 - eps] (where the
    clamp holds the output still), as PyTorch's."""
    if eps is None:
        outside, fill = (x < 0) | (x > 1), np.nan
    else:
        outside, fill = (x < eps) | (x > 1 - eps), 0
    with np.errstate(divide="ignore"):
        return xp.where(outside, fill, 1 / (x * (1 - x)))


def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(x == 0, 0, x * np.log(y))
    return np.where(np.isnan(y), y, out)


def _xlogy_x_slope(g, x, y):
    return xp.where((x == 0) & (y <= 0), 0, xp.run(xlogy_row, g, y))


def _quotient(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return a / b


# Public functions with PyTorch's arguments, for the rows that take more than tensors.


def polygamma(n: int, input):
    """The ``n``-th derivative of `digamma` at ``input``, elementwise (``n = 0`` is digamma,
    1 the trigamma function). Its derivative is polygamma(n + 1, input).

    At 0 and the negative integers the result is (-1)^(n + 1) inf for every n >= 1
    (PyTorch's trigamma gives large finite numbers there). Float64 results agree with the
    true values to about 1e-15, closer than PyTorch's trigamma (about 5e-10).

    >>> import chainrule as cr
    >>> cr.polygamma(2, cr.tensor([1.0, 0.5], dtype=cr.float64))
    tensor([ -2.4041, -16.8288], dtype=float64)
    """
    if not isinstance(n, numbers.Integral) or isinstance(n, bool):
        raise DTypeError(f"polygamma: n must be an int, got {type(n).__name__} {n!r}")
    if n < 0:
        raise DomainError(
            f"polygamma: n must be >= 0 (the order of the derivative of digamma), got {n}"
        )
    return polygamma_row(input, n=int(n))


def mvlgamma(input, p: int):
    """The log of the multivariate gamma function of dimension ``p``, elementwise:
    p (p - 1) / 4 log(pi) + the sum over j < p of lgamma(input - j / 2).

    Every element must exceed (p - 1) / 2 (PyTorch leaves the result undefined there;
    chainrule raises a DomainError, which is also a RuntimeError).

    >>> import chainrule as cr
    >>> cr.mvlgamma(cr.tensor([2.5, 3.0]), 2)
    tensor([0.8570, 1.5502])
    """
    if not isinstance(p, numbers.Integral) or isinstance(p, bool):
        raise DTypeError(f"mvlgamma: p must be an int, got {type(p).__name__} {p!r}")
    if p < 1:
        raise DomainError(f"mvlgamma: p has to be greater than or equal to 1, got {p}")
    low = (p - 1) / 2
    values = np.asarray(input._array if isinstance(input, Tensor) else input)
    if np.any(values <= low):
        raise DomainError(
            f"mvlgamma: all elements must be greater than (p - 1) / 2 = {low} for p = {p}, "
            f"got {values.min()!r}"
        )
    total = lgamma(input)
    for j in range(1, p):
        total = total + lgamma(input - j / 2)
    return total + p * (p - 1) / 4 * _LOG_PI


def logit(input, eps: float | None = None):
    """log(input / (1 - input)), elementwise: -inf at 0, inf at 1, nan outside [0, 1].

    With ``eps``, input is first clamped to [eps, 1 - eps], and the gradient is 0 where the
    clamp held it (without, nan outside [0, 1]), as in PyTorch.

    >>> import chainrule as cr
    >>> cr.logit(cr.tensor([0.0, 0.25, 1.0])), cr.logit(cr.tensor([0.0, 0.25]), eps=0.1)
    (tensor([   -inf, -1.0986,     inf]), tensor([-2.1972, -1.0986]))
    """
    return logit_row(input, eps=None if eps is None else float(eps))


def xlogy(input, other):
    """input * log(other), elementwise, but 0 where input is 0 (even where other is 0 or
    inf) and nan where other is nan. Either may be a number.

    The gradient to input is log(other), 0 where input is 0 and other <= 0; to other,
    input / other (nan at input = other = 0), as in PyTorch.

    >>> import chainrule as cr
    >>> cr.xlogy(cr.tensor([0.0, 0.0, 2.0]), cr.tensor([0.0, float("nan"), 3.0]))
    tensor([0.0000,    nan, 2.1972])
    """
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise DTypeError(
            f"xlogy: expected a tensor for input or other, got {type(input).__name__} and "
            f"{type(other).__name__}"
        )
    return xlogy_row(input, other)


def float_power(input, exponent):
    """input ** exponent computed in float64, whatever the dtypes: the result is float64,
    as in PyTorch (the gradient of a float32 input comes back float32). Either may be a
    number; composed from `chainrule.pow`, so its derivatives are pow's.

    >>> import chainrule as cr
    >>> cr.float_power(cr.tensor([1, 2, 3]), 2)
    tensor([1., 4., 9.], dtype=float64)
    """
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise DTypeError(
            f"float_power: expected a tensor for input or exponent, got "
            f"{type(input).__name__} and {type(exponent).__name__}"
        )
    return pow(_double(input), _double(exponent))


def _double(value):
    """A tensor in float64, or a number as a Python float."""
    return value.to(float64) if isinstance(value, Tensor) else float(value)
