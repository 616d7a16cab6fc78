"""Fit the rational function behind `chainrule.special`'s single-precision erf, and print its
coefficients and error.

erf(x) / x is a smooth, completely monotone function of s = x^2, so a low-degree rational
P(s) / Q(s) fits it on s in [0, 16] (|x| <= 4; past that, erf rounds to +-1 in float32). The fit
is linearized least squares on f * Q - P with relative weights, reweighted by 1 / |Q| a few
times (the Sanathanan-Koerner iteration), on Chebyshev nodes; the error is then measured
against math.erf.

    python tools/fit_erf.py
"""

from __future__ import annotations

import math

import numpy as np

NODES, P_DEGREE, Q_DEGREE, ROUNDS = 4000, 6, 5, 30


def fit() -> tuple[np.ndarray, np.ndarray, float]:
    """(p, q, max relative error), coefficients from the constant term up, q[0] = 1."""
    s = 8 - 8 * np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)
    x = np.sqrt(s)
    f = np.array([math.erf(v) / v if v else 2 / math.sqrt(math.pi) for v in x])
    powers_p = np.vander(s, P_DEGREE + 1, increasing=True)
    powers_q = np.vander(s, Q_DEGREE + 1, increasing=True)[:, 1:]
    weight = np.ones(NODES)
    for _ in range(ROUNDS):
        scale = (weight / f)[:, None]
        system = np.hstack([powers_p, -f[:, None] * powers_q]) * scale
        solution = np.linalg.lstsq(system, f * scale[:, 0], rcond=None)[0]
        p, q = solution[: P_DEGREE + 1], np.r_[1.0, solution[P_DEGREE + 1 :]]
        weight = 1 / np.abs(np.polynomial.polynomial.polyval(s, q))
    ratio = np.polynomial.polynomial.polyval(s, p) / np.polynomial.polynomial.polyval(s, q)
    return p, q, float(np.max(np.abs(ratio / f - 1)))


if __name__ == "__main__":
    p, q, error = fit()
    print("P:", [float(c) for c in p])
    print("Q:", [float(c) for c in q])
    print(f"max relative error of erf(x) / x on |x| <= 4: {error:.2e}")
