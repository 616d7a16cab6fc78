"""Special functions on NumPy arrays, for op forwards that NumPy itself lacks: erf, erfc, erfinv.

Vectorized NumPy only (no SciPy, no loop over elements). The differentiable tensor op is
`chainrule.erf`, an elementwise row built on this.
"""

from __future__ import annotations

import numpy as np

# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
# (1969) 631-638, as in his CALERF routine (netlib specfun). Each list runs from the
# coefficient of the highest power of the variable down to the constant term.
# erf(y) = y * P(y^2) / Q(y^2) for |y| <= 0.46875.
_SMALL_P = [1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
            3.77485237685302021e02, 3.20937758913846947e03]  # fmt: skip
_SMALL_Q = [1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
            2.84423683343917062e03]  # fmt: skip
# erfc(y) = exp(-y^2) * P(y) / Q(y) for 0.46875 < y <= 4.
_MID_P = [2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
          6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
          1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03]  # fmt: skip
_MID_Q = [1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
          1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
          3.43936767414372164e03, 1.23033935480374942e03]  # fmt: skip
# erfc(y) = exp(-y^2) / y * (1/sqrt(pi) - z * P(z) / Q(z)) with z = 1 / y^2, for y > 4.
_BIG_P = [1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
          1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4]  # fmt: skip
_BIG_Q = [1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
          6.05183413124413191e-2, 2.33520497626869185e-3]  # fmt: skip
_INV_SQRT_PI = 0.56418958354775628695
# Past this, erfc(y) < 1e-44, so erf(y) rounds to +-1 even in float64 (it does from 5.93 on).
_SATURATED = 10.0


def _ratio(p: list[float], q: list[float], t: np.ndarray) -> np.ndarray:
    """P(t) / Q(t) by Horner's rule."""
    num = np.full_like(t, p[0])
    den = np.full_like(t, q[0])
    for a, b in zip(p[1:], q[1:]):
        num = num * t + a
        den = den * t + b
    return num / den


def _exp_minus_square(y: np.ndarray) -> np.ndarray:
    """exp(-y^2) as exp(-r^2) * exp(-(y - r)(y + r)) with r = y rounded down to 1/16.

    r^2 is exact, so the rounding error of y^2 (amplified by up to y^2 ~ 100 in exp) is
    avoided: Cody's trick.
    """
    r = np.floor(y * 16) / 16
    return np.exp(-r * r) * np.exp(-(y - r) * (y + r))


def erf(x) -> np.ndarray:
    """The error function 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt, elementwise.

    Cody's rational approximations, relative error about 1e-16 in float64 over the whole
    real line; erf(+-0) = +-0, erf(+-inf) = +-1, nan stays nan. Float inputs keep their
    dtype (computed in float64); other inputs give float64.

    >>> erf(np.array([0.0, 0.5, -3.0])).round(12).tolist()
    [0.0, 0.520499877813, -0.999977909503]
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x64 = x.astype(np.float64, copy=False)
    y = np.abs(x64)
    out = np.empty_like(x64)

    small = y <= 0.46875
    xs = x64[small]
    out[small] = xs * _ratio(_SMALL_P, _SMALL_Q, xs * xs)  # odd in x: keeps the sign of 0

    rest = ~small  # y > 0.46875, and nan
    tail = _erfc_tail(np.minimum(y[rest], _SATURATED))  # inf would give inf - inf
    out[rest] = np.copysign((0.5 - tail) + 0.5, x64[rest])
    return out.astype(dtype, copy=False)


def _erfc_tail(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y > 0.46875 (and nan), to full relative precision: Cody's two ranges."""
    out = np.empty_like(y)
    mid = y <= 4.0
    ym = y[mid]
    out[mid] = _exp_minus_square(ym) * _ratio(_MID_P, _MID_Q, ym)
    yb = y[~mid]
    z = 1 / (yb * yb)
    out[~mid] = _exp_minus_square(yb) / yb * (_INV_SQRT_PI - z * _ratio(_BIG_P, _BIG_Q, z))
    return out


# erfc(y) < 1e-320 from here on: float64 holds 0 (and inf - inf is avoided).
_UNDERFLOW = 27.3


def erfc(x) -> np.ndarray:
    """The complementary error function 1 - erf(x), elementwise, without the cancellation
    of computing 1 - erf(x): erfc(10) is about 2e-45, not 0.

    Cody's approximations, as `erf`; float inputs keep their dtype, others give float64.

    >>> [float(v) for v in erfc(np.array([0.0, -1.0, 10.0]))]
    [1.0, 1.8427007929497148, 2.088487583762545e-45]
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x64 = x.astype(np.float64, copy=False)
    y = np.abs(x64)
    out = np.empty_like(x64)
    small = y <= 0.46875
    xs = x64[small]
    out[small] = 1 - xs * _ratio(_SMALL_P, _SMALL_Q, xs * xs)
    rest = ~small
    tail = _erfc_tail(np.minimum(y[rest], _UNDERFLOW))
    out[rest] = np.where(x64[rest] < 0, 2 - tail, tail)  # erfc(-y) = 2 - erfc(y)
    return out.astype(dtype, copy=False)


# M. Giles, "Approximating the erfinv function", GPU Computing Gems Jade Edition (2011):
# erfinv(x) ~ x * P(t), single precision, with w = -log((1 - x)(1 + x)) and t = w - 2.5 for
# w < 5, t = sqrt(w) - 3 beyond. Highest power first, as above.
_GILES_CENTRAL = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  2.1858087e-04, -1.25372503e-03, -4.17768164e-03, 2.46640727e-01,
                  1.50140941e00]  # fmt: skip
_GILES_TAIL = [-2.00214257e-04, 1.00950558e-04, 1.34934322e-03, -3.67342844e-03,
               5.73950773e-03, -7.6224613e-03, 9.43887047e-03, 1.00167406e00,
               2.83297682e00]  # fmt: skip
_TWO_OVER_SQRT_PI = 1.1283791670955126
_SQRT_PI = 1.7724538509055159


def _polynomial(coefficients: list[float], t: np.ndarray) -> np.ndarray:
    out = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        out = out * t + c
    return out


def erfinv(x) -> np.ndarray:
    """The inverse error function: erfinv(erf(y)) = y, elementwise; +-inf at +-1, nan
    outside [-1, 1].

    A first guess (Giles' polynomial, 7 digits, or for 1 - |x| < 1e-7 the tail's
    asymptotic form) refined by Newton steps in float64: on erf(y) = |x| near 0, and on
    log erfc(y) = log(1 - |x|) near +-1, where 1 - |x| is exact and erf itself cannot
    resolve the difference. Relative error about 1e-15; float inputs keep their dtype,
    others give float64.

    >>> [round(float(v), 12) for v in erfinv(np.array([0.0, 0.5, -0.999]))]
    [0.0, 0.476936276204, -2.326753765514]
    """
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x64 = x.astype(np.float64, copy=False)
    a = np.abs(x64)
    inside = a < 1  # False for nan
    a_in = a[inside]
    r = 1 - a_in  # exact for a_in >= 0.5
    w = -np.log(r * (1 + a_in))
    y = np.where(w < 5, _polynomial(_GILES_CENTRAL, w - 2.5),
                 _polynomial(_GILES_TAIL, np.sqrt(w) - 3)) * a_in  # fmt: skip
    # Past Giles' range: erfc(y) ~ exp(-y^2) / (y sqrt(pi)), solved for y by two rounds.
    deep = w > 16
    log_r = np.log(r[deep])
    guess = np.sqrt(-log_r)
    for _ in range(2):
        guess = np.sqrt(-log_r - np.log(guess * _SQRT_PI))
    y[deep] = guess
    near_one = a_in > 0.5
    for _ in range(3):  # each step about doubles the digits
        slope = _TWO_OVER_SQRT_PI * np.exp(-y * y)  # d erf / dy
        tail = erfc(y)
        step = np.where(near_one, np.log(tail / r) * tail, a_in - erf(y))
        y = y + step / slope
    out = np.where(a == 1, np.inf, np.nan)
    out[inside] = y
    return np.copysign(out, x64).astype(dtype, copy=False)  # keeps -0.0 and nan


__all__ = ["erf", "erfc", "erfinv"]
