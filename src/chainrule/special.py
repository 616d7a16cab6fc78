"""Special functions on NumPy arrays, for op forwards that NumPy itself lacks: erf, erfc,
erfinv; the gamma family (lgamma, digamma, polygamma, the Hurwitz zeta); the Bessel function
i1; the regularized incomplete gammas.

Vectorized NumPy only (no SciPy, no loop over elements; loops run over series terms and
recurrence steps). The differentiable tensor ops (`chainrule.erf`, `chainrule.lgamma`...)
are rows built on these.
"""

from __future__ import annotations

import math
from fractions import Fraction

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
    """P(t) / Q(t) by Horner's rule, each step in place on the two arrays it made."""
    num = t * p[0]
    num += p[1]
    den = t * q[0]
    den += q[1]
    for a, b in zip(p[2:], q[2:]):
        num *= t
        num += a
        den *= t
        den += b
    num /= den
    return num


def _rational(pair: np.ndarray, t: np.ndarray) -> np.ndarray:
    """P(t) / Q(t) for float64 ``t`` >= 0, P and Q the rows of ``pair`` (constant term first),
    for results rounded to single precision.

    On arrays of a few thousand elements each NumPy call costs about as much as its
    arithmetic, so instead of Horner's two calls per coefficient this takes the powers of t
    into the rows of one array (by doubling: t^2, then t^3 and t^4 from t^2...) and both
    polynomials from one matrix product. The fitted coefficients are positive but a small
    last one, so the sums have no cancellation: within an ulp or two of Horner's in float64,
    far below float32's rounding.
    """
    degree = pair.shape[1] - 1
    powers = np.empty((degree + 1, t.size))
    powers[0] = 1
    powers[1] = t.ravel()
    done = 1
    while done < degree:
        for k in range(1, min(done, degree - done) + 1):
            np.multiply(powers[k], powers[done], out=powers[done + k])
        done += min(done, degree - done)
    num, den = pair @ powers
    num /= den
    return num.reshape(t.shape)


def _exp_minus_square(y: np.ndarray) -> np.ndarray:
    """exp(-y^2) as exp(-r^2) * exp(-(y - r)(y + r)) with r = y rounded down to 1/16.

    r^2 is exact, so the rounding error of y^2 (amplified by up to y^2 ~ 100 in exp) is
    avoided: Cody's trick. (Scaling by 16 and 1/16 is exact.)
    """
    r = y * 16.0
    np.floor(r, out=r)
    r *= 0.0625
    near = r - y
    near *= y + r  # -(y - r)(y + r)
    np.exp(near, out=near)
    np.multiply(r, r, out=r)
    np.negative(r, out=r)
    np.exp(r, out=r)
    r *= near
    return r


# erf(x) / x = P(x^2) / Q(x^2) on |x| <= 4 to 2.5e-9 relative, fitted by tools/fit_erf.py: for
# float32 and float16 inputs, whose results then round to within half a unit in the last place
# of the true value; past |x| = 4, erf rounds to +-1 in float32. Constant term first.
_SINGLE_P = [1.1283791699552914, 0.18505351493887437, 0.0543693924225459,
             0.003853090832593188, 0.0003826560427220209, 4.768405016949279e-06,
             -1.3618908251133988e-08]  # fmt: skip
_SINGLE_Q = [1.0, 0.497332838973848, 0.11396060978961657, 0.015479382526748183,
             0.0013124131455773838, 6.390792801266865e-05]  # fmt: skip


_SINGLE = np.array([_SINGLE_P, _SINGLE_Q + [0.0]])


def _erf_single(x: np.ndarray) -> np.ndarray:
    """erf for float32 or float16 ``x``: one rational function over the whole array (no
    branches to gather and scatter), evaluated in float64 and rounded back once."""
    y = x.astype(np.float64)  # nan stays nan, +-inf gives +-1
    np.clip(y, -4.0, 4.0, out=y)
    num = _rational(_SINGLE, y * y)
    num *= y
    return num.astype(x.dtype)


def erf(x) -> np.ndarray:
    """The error function 2/sqrt(pi) * integral from 0 to x of exp(-t^2) dt, elementwise.

    Cody's rational approximations, relative error about 1e-16 in float64 over the whole
    real line; erf(+-0) = +-0, erf(+-inf) = +-1, nan stays nan. Float inputs keep their
    dtype (computed in float64); other inputs give float64. float32 and float16 inputs take
    one fitted rational function instead, as accurate at their precision and several times
    faster (`_erf_single`).

    >>> erf(np.array([0.0, 0.5, -3.0])).round(12).tolist()
    [0.0, 0.520499877813, -0.999977909503]
    """
    x = np.asarray(x)
    if x.dtype == np.float32 or x.dtype == np.float16:
        return _erf_single(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    x64 = x.astype(np.float64, copy=False)
    y = np.abs(x64)
    out = np.empty_like(x64)

    small = y <= 0.46875
    xs = x64[small]
    out[small] = xs * _ratio(_SMALL_P, _SMALL_Q, xs * xs)  # odd in x: keeps the sign of 0

    rest = ~small  # y > 0.46875, and nan
    tail = _erfc_tail(np.minimum(y[rest], _SATURATED))  # inf would give inf - inf
    np.subtract(0.5, tail, out=tail)
    tail += 0.5
    out[rest] = np.copysign(tail, x64[rest], out=tail)
    return out.astype(dtype, copy=False)


def _erfc_tail(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y > 0.46875 (and nan), to full relative precision: Cody's two ranges."""
    mid = y <= 4.0
    if mid.all():  # no tail beyond 4, the common case: no gather and scatter
        out = _exp_minus_square(y)
        out *= _ratio(_MID_P, _MID_Q, y)
        return out
    out = np.empty_like(y)
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


# The gamma family. lgamma and digamma push x into the range of an asymptotic (Stirling)
# series by their recurrences; the polygammas of order n >= 1 are Hurwitz zeta values.

# B_2k for k = 1..12: the Bernoulli numbers behind Stirling's and Euler-Maclaurin's series.
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30),
              Fraction(5, 66), Fraction(-691, 2730), Fraction(7, 6), Fraction(-3617, 510),
              Fraction(43867, 798), Fraction(-174611, 330), Fraction(854513, 138),
              Fraction(-236364091, 2730)]  # fmt: skip
# lgamma(x) ~ (x - 1/2) log x - x + log(2 pi) / 2 + sum B_2k / (2k (2k - 1) x^(2k - 1)).
_STIRLING = [float(b / (2 * k * (2 * k - 1))) for k, b in enumerate(_BERNOULLI[:8], 1)]
# digamma(x) ~ log x - 1 / (2x) - sum B_2k / (2k x^2k).
_DIGAMMA_TAIL = [float(b / (2 * k)) for k, b in enumerate(_BERNOULLI[:7], 1)]
# Euler-Maclaurin's tail of the Hurwitz zeta: B_2k / (2k)!.
_EULER_MACLAURIN = [float(b / math.factorial(2 * k)) for k, b in enumerate(_BERNOULLI, 1)]
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_EULER_GAMMA = 0.5772156649015329


def _as_float64(x) -> tuple[np.ndarray, np.dtype]:
    """x as a float64 array, and the dtype to give the result (float inputs keep theirs)."""
    x = np.asarray(x)
    return x.astype(np.float64, copy=False), x.dtype if x.dtype.kind == "f" else np.dtype("f8")


def hurwitz_zeta(s, q) -> np.ndarray:
    """The Hurwitz zeta function sum over k >= 0 of (q + k) ** -s, for s > 1 and q > 0.

    Euler-Maclaurin summation: the first terms directly, until q + N >= s + 10, then the
    integral of the rest and 12 Bernoulli corrections; relative error about 1e-16. A q that
    is 0 or a negative integer gives inf; float64 results.

    >>> round(float(hurwitz_zeta(2.0, 1.0)), 15), round(math.pi**2 / 6, 15)
    (1.644934066848226, 1.644934066848226)
    """
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    n_direct = int(max(10, np.max(s, initial=0) + 10))
    with np.errstate(all="ignore"):
        total = np.zeros(s.shape)
        for k in range(n_direct):
            total = total + (q + k) ** -s
        a = q + n_direct
        total += a ** (1 - s) / (s - 1) + 0.5 * a**-s
        rising = s.copy()  # s (s + 1) ... (s + 2k - 2)
        power = a ** (-s - 1)  # a ** (-s - 2k + 1)
        for k, coefficient in enumerate(_EULER_MACLAURIN, 1):
            total += coefficient * rising * power
            rising = rising * (s + 2 * k - 1) * (s + 2 * k)
            power = power / (a * a)
        return np.where((q <= 0) & (q == np.floor(q)), np.inf, total)


# lgamma(2 + z) = (1 - euler_gamma) z + sum over k >= 2 of (-1)^k (zeta(k) - 1) z^k / k, for
# |z| < 2: near the zeros of lgamma at 1 and 2 its relative error stays small.
_NEAR_TWO = [1 - _EULER_GAMMA] + [
    (-1) ** k * float(v) / k for k, v in enumerate(hurwitz_zeta(np.arange(2.0, 29.0), 2.0), 2)
]


def _lgamma_near_two(z: np.ndarray) -> np.ndarray:
    """lgamma(2 + z) for |z| <= 1/2, by the series above (Horner, highest power first)."""
    out = np.zeros_like(z)
    for c in reversed(_NEAR_TWO):
        out = (out + c) * z
    return out


def lgamma(x) -> np.ndarray:
    """log |Gamma(x)|, elementwise: inf at 0 and the negative integers, inf at +-inf.

    Below 0 by reflection, log(pi / |sin(pi x)|) - lgamma(1 - x); on [0, 10) by the
    recurrence down or up to a series about 2 (accurate next to the zeros at 1 and 2);
    from 10 on by Stirling's series. Float inputs keep their dtype, others give float64.

    >>> [round(float(v), 10) for v in lgamma(np.array([0.5, 1.0, 3.0, -2.5, 100.0]))]
    [0.5723649429, 0.0, 0.6931471806, -0.0562437165, 359.1342053696]
    """
    x, dtype = _as_float64(x)
    with np.errstate(all="ignore"):
        negative = x < 0
        y = np.where(negative, 1 - x, x)  # y >= 0 (or nan)
        out = np.full(y.shape, np.nan)
        big = y >= 10
        yb = y[big]
        inner = np.zeros_like(yb)  # sum of c_k / y^(2k - 2), by Horner in 1 / y^2
        for c in reversed(_STIRLING):
            inner = inner / (yb * yb) + c
        out[big] = (
            np.where(np.isinf(yb), np.inf, yb * (np.log(yb) - 1) - 0.5 * np.log(yb))
            + _HALF_LOG_2PI
            + inner / yb
        )
        small = y < 1.5  # lgamma(y) = lgamma(y + 2) - log(y (y + 1)), or up by one from 1/2
        ys = y[small]
        up_two = ys < 0.5
        out[small] = np.where(
            up_two, _lgamma_near_two(ys) - np.log(ys) - np.log1p(ys),
            _lgamma_near_two(ys - 1) - np.log(ys),
        )  # fmt: skip
        middle = (y >= 1.5) & (y < 10)  # lgamma(y) = lgamma(y - k) + log((y - 1)...(y - k))
        ym = y[middle]
        steps = np.floor(ym - 1.5)
        product = np.ones_like(ym)
        for k in range(1, 9):
            product = np.where(steps >= k, product * (ym - k), product)
        out[middle] = _lgamma_near_two(ym - steps - 2) + np.log(product)
        r = x - np.round(x)  # sin(pi x) = +-sin(pi r), with r exact
        reflected = np.log(np.pi / np.abs(np.sin(np.pi * r))) - out
        out = np.where(negative, np.where((r == 0) | np.isinf(x), np.inf, reflected), out)
    return out.astype(dtype, copy=False)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """digamma for x > 0 (and inf, nan): up to 10 by digamma(x) = digamma(x + 1) - 1 / x,
    then the asymptotic series."""
    shift = np.zeros_like(x)
    for _ in range(10):
        low = x < 10
        shift = np.where(low, shift - 1 / np.where(low, x, 1), shift)
        x = np.where(low, x + 1, x)
    z = 1 / (x * x)
    tail = np.zeros_like(x)
    for c in reversed(_DIGAMMA_TAIL):
        tail = (tail + c) * z
    return shift + np.log(x) - 0.5 / x - tail


def digamma(x) -> np.ndarray:
    """The logarithmic derivative of Gamma, Gamma'(x) / Gamma(x), elementwise.

    As PyTorch: -inf at +0 (inf at -0), nan at the negative integers and at -inf. Below 0
    by reflection, digamma(1 - x) - pi / tan(pi x). Float inputs keep their dtype, others
    give float64.

    >>> [round(float(v), 10) for v in digamma(np.array([1.0, 0.5, -2.5, 30.0]))]
    [-0.5772156649, -1.963510026, 1.1031566406, 3.3844381327]
    """
    x, dtype = _as_float64(x)
    with np.errstate(all="ignore"):
        negative = x < 0
        out = _digamma_positive(np.where(negative, 1 - x, x))
        fraction = x - np.trunc(x)
        out = np.where(negative, out - np.pi / np.tan(np.pi * fraction), out)
        out = np.where(negative & (fraction == 0), np.nan, out)
        out = np.where(x == 0, np.copysign(np.inf, -x), out)
    return out.astype(dtype, copy=False)


def _cot_derivative(n: int) -> np.ndarray:
    """Coefficients (highest power first) of P_n with d^n/dt^n cot(t) = P_n(cot(t)):
    P_0(c) = c and P_{k+1}(c) = -(1 + c^2) P_k'(c)."""
    p = np.array([1.0, 0.0])
    for _ in range(n):
        p = np.polymul([-1.0, 0.0, -1.0], np.polyder(p))
    return p


def polygamma(n: int, x) -> np.ndarray:
    """The n-th derivative of digamma, elementwise (n = 0 is `digamma`).

    For n >= 1, (-1)^(n + 1) n! zeta(n + 1, x) with `hurwitz_zeta`; below 0 by reflection,
    (-1)^n polygamma(n, 1 - x) - pi^(n + 1) P_n(cot(pi x)) (P_n from `_cot_derivative`).
    At 0 and the negative integers (-1)^(n + 1) inf, as PyTorch's gives for n >= 2.

    >>> [round(float(v), 12) for v in polygamma(1, np.array([1.0, 0.5, -0.5]))]
    [1.644934066848, 4.934802200545, 8.934802200545]
    """
    if n == 0:
        return digamma(x)
    x, dtype = _as_float64(x)
    sign = (-1) ** (n + 1)
    with np.errstate(all="ignore"):
        negative = x < 0
        out = sign * math.factorial(n) * hurwitz_zeta(n + 1.0, np.where(negative, 1 - x, x))
        r = x - np.round(x)
        cot = 1 / np.tan(np.pi * r)
        reflected = (-1) ** n * out - np.pi ** (n + 1) * np.polyval(_cot_derivative(n), cot)
        pole = x == np.floor(x)
        out = np.where(negative, np.where(pole, sign * np.inf, reflected), out)
    return out.astype(dtype, copy=False)


# Modified Bessel functions of the first kind. NumPy has i0 (Cephes' Chebyshev series); i1,
# the derivative of i0, is written here.

_BESSEL_SERIES_LIMIT = 20.0  # power series below, asymptotic series above


def i0(x) -> np.ndarray:
    """The modified Bessel function of the first kind of order 0, elementwise (NumPy's
    `np.i0`); float inputs keep their dtype, others give float64.

    >>> [round(float(v), 12) for v in i0(np.array([0.0, 1.0, -2.0]))]
    [1.0, 1.266065877752, 2.279585302336]
    """
    x, dtype = _as_float64(x)
    with np.errstate(over="ignore"):
        return np.i0(x).astype(dtype, copy=False)


def i1(x) -> np.ndarray:
    """The modified Bessel function of the first kind of order 1, elementwise: odd, with
    i1'(x) = i0(x) - i1(x) / x.

    For |x| <= 20 the power series sum (x/2)^(2k+1) / (k! (k+1)!) (all terms positive);
    beyond, the asymptotic series e^|x| / sqrt(2 pi |x|) (1 - 3/(8|x|) - 15/(128 x^2) ...),
    whose terms have shrunk below 1e-17 by then. Float inputs keep their dtype, others give
    float64.

    >>> [round(float(v), 10) for v in i1(np.array([0.0, 1.0, -2.0, 25.0]))]
    [0.0, 0.565159104, -1.5906368546, 5657865129.878701]
    """
    x, dtype = _as_float64(x)
    y = np.abs(x)
    out = np.empty_like(y)
    near = ~(y > _BESSEL_SERIES_LIMIT)  # nan goes here too
    half = y[near] / 2
    term = half.copy()
    total = half.copy()
    for k in range(1, 60):  # the 60th term is below 1e-17 of the sum at |x| = 20
        term = term * half * half / (k * (k + 1))
        total += term
    out[near] = total
    far = y[~near]
    series = np.ones_like(far)
    term = np.ones_like(far)
    for k in range(1, 30):  # term k: prod over j <= k of ((2j - 1)^2 - 4) / (8 j |x|)
        term = term * ((2 * k - 1) ** 2 - 4) / (8 * k * far)
        series += term
    with np.errstate(over="ignore", invalid="ignore"):
        # e^|x| as (e^(|x|/2))^2, each half applied in turn: finite up to |x| ~ 713
        half_exp = np.exp(far / 2)
        out[~near] = half_exp * (half_exp * series / np.sqrt(2 * np.pi * far))
    return np.copysign(out, x).astype(dtype, copy=False)


# The regularized incomplete gamma functions P(a, x) and Q(a, x) = 1 - P(a, x).

_MAX_TERMS = 5000  # the series and the fraction need about 9 sqrt(a) terms near x = a
_TINY = 1e-300


def _gamma_prefactor(a: np.ndarray, x: np.ndarray, shift: int = 0) -> np.ndarray:
    """x^a e^(-x) / Gamma(a + shift), from logarithms (the terms alone overflow)."""
    return np.exp(a * np.log(x) - x - lgamma(a + shift))


def _lower_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x^a e^(-x) / Gamma(a + 1) * sum over n of x^n / ((a + 1) ... (a + n))."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    for n in range(1, _MAX_TERMS):
        term = term * x / (a + n)
        total += term
        if np.all(term <= total * 1e-17):
            break
    # Gamma(a + 1), not a Gamma(a): lgamma(a + 1) is near 0 for small a, lgamma(a) is not.
    return np.minimum(_gamma_prefactor(a, x, shift=1) * total, 1.0)


def _upper_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) = x^a e^(-x) / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)), the
    continued fraction evaluated front to back by Lentz's method."""
    b = x + 1 - a
    c = np.full_like(x, 1 / _TINY)
    d = 1 / b
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1) < 1e-16):
            break
    return np.minimum(_gamma_prefactor(a, x) * h, 1.0)


def _incomplete_gamma(a, x, upper: bool) -> np.ndarray:
    """P(a, x) (``upper=False``) or Q(a, x), with PyTorch's values at the edges: nan for
    a < 0 or x < 0 or a = x = 0 or a = x = inf; P = 1 for a = 0 or x = inf, P = 0 for
    x = 0 or a = inf."""
    a, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, x)))
    out = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        inside = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
        # The series converges fast below x = a (and x = 1), the fraction above.
        by_series = inside & ((x <= 1) | (x <= a))
        by_fraction = inside & ~by_series
        p = _lower_series(a[by_series], x[by_series])
        q = _upper_fraction(a[by_fraction], x[by_fraction])
        out[by_series] = 1 - p if upper else p
        out[by_fraction] = q if upper else 1 - q
        lower_is_one = ((a == 0) & (x > 0)) | ((x == np.inf) & np.isfinite(a) & (a >= 0))
        lower_is_zero = ((x == 0) & (a > 0)) | ((a == np.inf) & np.isfinite(x) & (x >= 0))
    out[lower_is_one] = 0.0 if upper else 1.0
    out[lower_is_zero] = 1.0 if upper else 0.0
    return out


def igamma(a, x) -> np.ndarray:
    """The regularized lower incomplete gamma function P(a, x), elementwise: the integral of
    t^(a-1) e^(-t) from 0 to x, over Gamma(a). Float inputs keep their dtype (the wider of
    the two), others give float64.

    >>> p = igamma(np.array([1.0, 2.0, 0.5]), np.array([1.0, 3.0, 4.0]))
    >>> [round(float(v), 12) for v in p]
    [0.632120558829, 0.800851726529, 0.995322265019]
    """
    return _incomplete_gamma(a, x, upper=False).astype(_pair_dtype(a, x), copy=False)


def igammac(a, x) -> np.ndarray:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), elementwise,
    computed directly where it is small (x beyond a). Dtypes as `igamma`.

    >>> q = igammac(np.array([1.0, 2.0, 0.5]), np.array([1.0, 3.0, 40.0]))
    >>> [round(float(v), 12) for v in q]
    [0.367879441171, 0.199148273471, 0.0]
    """
    return _incomplete_gamma(a, x, upper=True).astype(_pair_dtype(a, x), copy=False)


def _pair_dtype(a, x) -> np.dtype:
    dtype = np.result_type(a, x)
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


__all__ = [
    "digamma", "erf", "erfc", "erfinv", "hurwitz_zeta", "i0", "i1", "igamma", "igammac",
    "lgamma", "polygamma",
]  # fmt: skip
