"""PyTorch's samplers that draw one element at a time, as many words as each element needs:
Poisson counts, binomial counts and standard gamma variates (the gamma family of
distributions builds on the last). Each walks its tensor in order and takes float64 uniforms
(and for gamma, normals from the one-at-a-time path) from a `Generator` exactly as PyTorch's
CPU kernels do, the parameters held in their tensor's dtype, the C library's functions
through `math`; so under one seed the counts and variates are PyTorch's.
"""

from __future__ import annotations

import math

import numpy as np

from . import vector_math
from .generator import Generator


def poisson_one(rate: float, g: Generator) -> int:
    """One Poisson count as PyTorch's CPU sampler draws it: by multiplying float64 uniforms
    below rate 10, else Hoermann's transformed rejection (1993), the C library's functions."""
    if rate == 0:
        return 0
    if rate < 10:
        limit, count, product = math.exp(-rate), 0, 1.0
        while True:
            product *= g.unit(1, np.float64)[0]
            if product <= limit:
                return count
            count += 1
    root, log_rate = math.sqrt(rate), math.log(rate)
    b = 0.931 + 2.53 * root
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        u, v = g.unit(2, np.float64).tolist()
        u -= 0.5
        u_s = 0.5 - abs(u)
        k = math.floor((2 * a / u_s + b) * u + rate + 0.43)
        if u_s >= 0.07 and v <= v_r:
            return k
        if k < 0 or (u_s < 0.013 and v > u_s):
            continue
        accept = -rate + k * log_rate - math.lgamma(k + 1.0)
        if math.log(v) + math.log(inv_alpha) - math.log(a / (u_s * u_s) + b) <= accept:
            return k


def standard_gamma_values(alpha: np.ndarray, g: Generator) -> np.ndarray:
    """Gamma(alpha, 1) samples, one per element in order, as PyTorch's CPU ``_standard_gamma``
    draws them: Marsaglia and Tsang's method (2000) on float64 normals (the one-at-a-time
    path, its cached second value included) and uniforms, alpha below 1 boosted by a
    uniform's power; the result at least the dtype's smallest normal number."""
    dtype = alpha.dtype
    single = dtype != np.float64
    out = [_gamma_one(a, g, single) for a in alpha.astype(np.float64).ravel().tolist()]
    tiny = np.finfo(dtype).tiny
    return np.maximum(np.array(out).astype(dtype), tiny).reshape(alpha.shape)


_THIRD = float(np.float32(1.0) / np.float32(3.0))  # PyTorch's float constants, widened
_SQUEEZE = float(np.float32(0.0331))


def _gamma_one(alpha: float, g: Generator, single: bool) -> float:
    # alpha stays in the tensor's dtype until d, as PyTorch's template keeps it.
    f = np.float32 if single else float
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= (1 - g.unit(1, np.float64)[0]) ** float(f(1.0) / f(alpha))
        alpha = float(f(alpha) + f(1.0))
    d = float(f(alpha) - f(_THIRD))
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = g.normals(1)[0]
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1 - g.unit(1, np.float64)[0]
        xx = x * x
        if u < 1.0 - _SQUEEZE * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def binomial_values(count: np.ndarray, prob: np.ndarray, g: Generator) -> np.ndarray:
    """Binomial(count, prob) samples, one per element of ``count``'s shape in order, as
    PyTorch's CPU ``binomial`` draws them: inversion by geometric jumps below a mean of 10,
    else Hormann's BTRS rejection, on float64 uniforms, the parameters in their dtype."""
    dtype = count.dtype
    prob = np.broadcast_to(prob, count.shape).astype(dtype)
    f = float if dtype == np.float64 else np.float32
    pairs = zip(count.ravel().tolist(), prob.ravel().tolist())
    draws = [_binomial_one(f(n), f(p), g, f) for n, p in pairs]
    return np.array(draws, np.float64).astype(dtype).reshape(count.shape)


def _binomial_one(count, prob, g: Generator, f) -> float:
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return float(count)
    flip = prob > 0.5
    q = f(1.0 - float(prob)) if flip else prob
    k = _btrs(count, q, g, f) if count * q >= 10.0 else _binomial_inversion(count, q, g, f)
    return float(count) - k if flip else k


def _log1p_in(f):
    """log1p in the parameters' precision (the C library's log1pf for float32)."""
    if f is float:
        return math.log1p
    return lambda v: float(vector_math.libm_float("log1pf")(float(v)))


def _binomial_inversion(count, prob, g: Generator, f) -> float:
    log_q = float(_log1p_in(f)(-prob))
    total, successes = 0.0, 0
    while True:
        jump = math.ceil(math.log(g.unit(1, np.float64)[0]) / log_q)
        total += jump
        if total > count:
            return float(successes)
        successes += 1


def _stirling_tail(k: float) -> float:
    """The tail of Stirling's series for log k!, tabulated below 10."""
    if k < 10:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


_STIRLING_TAIL = (
    0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
    0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
    0.00925546218271273, 0.00833056343336287,
)  # fmt: skip


def _btrs(count, prob, g: Generator, f) -> float:
    # Products of the parameters stay in their dtype (f), the rest is float64, as PyTorch.
    stddev = float(np.sqrt(f(count * prob * f(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(prob)
    c = float(f(count * prob)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(f(prob / f(1 - prob)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = float(math.floor(f(f(count + 1) * prob)))
    n = float(count)
    while True:
        u, v = g.unit(2, np.float64).tolist()
        u -= 0.5
        u_s = 0.5 - abs(u)
        k = float(f(math.floor((2 * a / u_s + b) * u + c)))
        if k < 0 or k > n:
            continue
        if u_s >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (u_s * u_s) + b))
        n_plus, n_k = float(f(count + 1)), float(f(f(count - f(k)) + 1))
        bound = (
            (m + 0.5) * math.log((m + 1) / (r * (n - m + 1)))
            + n_plus * math.log((n - m + 1) / n_k)
            + (k + 0.5) * math.log(r * n_k / (k + 1))
            + _stirling_tail(m) + _stirling_tail(n - m)
            - _stirling_tail(k) - _stirling_tail(float(f(count - f(k))))
        )  # fmt: skip
        if v <= bound:
            return k
