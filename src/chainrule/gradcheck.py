"""Numerical gradient checking: central differences against what backward computes.

One `Report` serves both engines: a row per input (for tensors, the input's worst element).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .value import Value


@dataclass(frozen=True)
class Check:
    """One compared derivative: which input (and element), both estimates and the verdict."""

    input: str
    index: tuple[int, ...] | None
    analytical: float
    numerical: float
    abs_error: float
    rel_error: float
    passed: bool


class Report:
    """The result of `gradcheck`: truthy only when every check passed; prints as a table."""

    def __init__(self, checks: Sequence[Check], eps: float, atol: float, rtol: float) -> None:
        self.checks = list(checks)
        self.eps, self.atol, self.rtol = eps, atol, rtol

    def __bool__(self) -> bool:
        return all(check.passed for check in self.checks)

    @property
    def worst(self) -> Check:
        """The check with the largest relative error."""
        return max(self.checks, key=lambda check: check.rel_error)

    def __str__(self) -> str:
        header = ("input", "index", "analytical", "numerical", "rel. error", "ok")
        rows = [header] + [
            (
                c.input,
                "" if c.index is None else str(c.index),
                f"{c.analytical:.8g}",
                f"{c.numerical:.8g}",
                f"{c.rel_error:.2e}",
                "yes" if c.passed else "NO",
            )
            for c in self.checks
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        verdict = "passed" if self else "FAILED"
        lines.append(
            f"gradcheck {verdict} (eps={self.eps:g}, atol={self.atol:g}, rtol={self.rtol:g})"
        )
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def make_check(
    name: str,
    index: tuple[int, ...] | None,
    analytical: float,
    numerical: float,
    atol: float,
    rtol: float,
) -> Check:
    """Compare two derivative estimates: passed when |a - n| <= atol + rtol * |n|."""
    abs_error = abs(analytical - numerical)
    scale = max(abs(analytical), abs(numerical))
    rel_error = abs_error / scale if scale > 0 else 0.0
    passed = abs_error <= atol + rtol * abs(numerical)
    return Check(name, index, analytical, numerical, abs_error, rel_error, passed)


def gradcheck(
    fn: Callable,
    inputs: Sequence,
    eps: float = 1e-6,
    tol: float | None = None,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> Report:
    """Check ``fn``'s backward against central differences (f(x+eps) - f(x-eps)) / 2eps.

    ``inputs`` are numbers or Values; ``fn`` takes Values and returns a Value. A derivative
    passes when |analytical - numerical| <= atol + rtol * |numerical|; ``tol`` sets both.

    >>> report = gradcheck(lambda x, y: x * y + x.sin(), [2.0, 3.0])
    >>> bool(report)
    True
    """
    if tol is not None:
        atol = rtol = tol
    return Report(_scalar_checks(fn, inputs, eps, atol, rtol), eps, atol, rtol)


def _scalar_checks(fn, inputs, eps, atol, rtol) -> list[Check]:
    points = []
    for i, x in enumerate(inputs):
        if isinstance(x, Value):
            points.append((x.label or f"x{i}", x.data))
        elif isinstance(x, numbers.Real):
            points.append((f"x{i}", float(x)))
        else:
            raise TypeError(f"gradcheck: inputs must be numbers or Values, got {type(x).__name__}")

    def evaluate(values: list[float]) -> Value:
        out = fn(*(Value(v, label=name) for (name, _), v in zip(points, values)))
        if not isinstance(out, Value):
            raise TypeError(f"gradcheck: fn must return a Value, got {type(out).__name__}")
        return out

    base = [v for _, v in points]
    leaves = [Value(v, label=name) for name, v in points]
    out = fn(*leaves)
    if not isinstance(out, Value):
        raise TypeError(f"gradcheck: fn must return a Value, got {type(out).__name__}")
    out.backward()
    checks = []
    for i, (name, _) in enumerate(points):
        plus, minus = list(base), list(base)
        plus[i] += eps
        minus[i] -= eps
        numerical = (evaluate(plus).data - evaluate(minus).data) / (2 * eps)
        checks.append(make_check(name, None, leaves[i].grad, numerical, atol, rtol))
    return checks
