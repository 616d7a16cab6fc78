"""Numerical gradient checking: central differences against what backward computes.

One `Report` serves both engines: a row per input (for tensors, the input's worst element).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._tensor import Tensor
from .autograd import grad as autograd_grad
from .errors import DTypeError, GraphError
from .scalar.value import Value


@dataclass(frozen=True)
class Check:
    """One compared derivative: which input (and element), both estimates and the verdict."""

    input: str
    index: tuple[int, ...] | None
    analytical: float
    numerical: float
    abs_error: float
    rel_error: float
    tolerance: float
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
    tolerance = atol + rtol * abs(numerical)
    passed = abs_error <= tolerance
    return Check(name, index, analytical, numerical, abs_error, rel_error, tolerance, passed)


def gradcheck(
    fn: Callable,
    inputs: Sequence | Tensor,
    eps: float = 1e-6,
    tol: float | None = None,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = False,
    **switches: Any,
) -> Report:
    """Check ``fn``'s backward against central differences (f(x+eps) - f(x-eps)) / 2eps.

    Scalar engine: ``inputs`` are numbers or Values and ``fn`` returns a Value; one row per
    input. Tensor engine: ``inputs`` are float64 Tensors and ``fn`` returns a Tensor (or a
    tuple); outputs are projected on a fixed random vector, every element of every input
    that requires grad is perturbed, and each input's row is its worst element. A
    derivative passes when |analytical - numerical| <= atol + rtol * |numerical|; ``tol``
    sets both.

    Also ``chainrule.autograd.gradcheck``, with PyTorch's keywords: ``inputs`` may be one
    Tensor; ``raise_exception=True`` raises a GraphError showing the report when a check
    fails (PyTorch's default is True and its result ``True``; here a failing check returns a
    falsy `Report` unless asked to raise). PyTorch's other switches (``nondet_tol``,
    ``check_undefined_grad``, ``check_grad_dtypes``, ``check_batched_grad``, ``fast_mode``,
    ``masked``, ...) are accepted and change nothing: the check is always the full one.

    >>> report = gradcheck(lambda x, y: x * y + x.sin(), [2.0, 3.0])
    >>> bool(report)
    True
    """
    _check_switches(switches, "gradcheck")
    if tol is not None:
        atol = rtol = tol
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if any(isinstance(x, Tensor) for x in inputs):
        checks = _tensor_checks(fn, inputs, eps, atol, rtol)
    else:
        checks = _scalar_checks(fn, inputs, eps, atol, rtol)
    report = Report(checks, eps, atol, rtol)
    if raise_exception and not report:
        raise GraphError(f"gradcheck: backward disagrees with finite differences\n{report}")
    return report


#: PyTorch's gradcheck switches that choose what else to test or how fast; accepted, unused.
_TORCH_SWITCHES = {
    "nondet_tol", "check_undefined_grad", "check_grad_dtypes", "check_batched_grad",
    "check_batched_forward_grad", "check_forward_ad", "check_backward_ad", "fast_mode", "masked",
    "gen_non_contig_grad_outputs", "check_fwd_over_rev", "check_rev_over_rev",
}  # fmt: skip


def _check_switches(switches: dict, op: str) -> None:
    unknown = sorted(set(switches) - _TORCH_SWITCHES)
    if unknown:
        raise TypeError(f"{op}: unexpected keyword arguments {unknown}")


def _scalar_checks(fn, inputs, eps, atol, rtol) -> list[Check]:
    points = []  # (label, number, class): a Value subclass (a text's Value) is kept
    for i, x in enumerate(inputs):
        if isinstance(x, Value):
            points.append((x.label or f"x{i}", x.data, type(x)))
        elif isinstance(x, numbers.Real):
            points.append((f"x{i}", float(x), Value))
        else:
            raise TypeError(f"gradcheck: inputs must be numbers or Values, got {type(x).__name__}")

    def leaf(name: str, number: float, cls: type[Value]) -> Value:
        made = cls(number)
        made.label = name
        return made

    def evaluate(values: list[float]) -> Value:
        out = fn(*(leaf(name, v, cls) for (name, _, cls), v in zip(points, values)))
        return _value_output(out, "gradcheck")

    base = [v for _, v, _ in points]
    leaves = [leaf(*point) for point in points]
    _value_output(fn(*leaves), "gradcheck").backward()
    checks = []
    for i, (name, _, _) in enumerate(points):
        plus, minus = list(base), list(base)
        plus[i] += eps
        minus[i] -= eps
        numerical = (evaluate(plus).data - evaluate(minus).data) / (2 * eps)
        checks.append(make_check(name, None, leaves[i].grad, numerical, atol, rtol))
    return checks


def numerical_gradient_check(
    f: Callable, inputs: Sequence, h: float = 1e-6, tolerance: float = 1e-5
) -> bool:
    """Check ``f``'s backward against central differences, printing a row per input.

    The case study's check: ``inputs`` are Values (or numbers, made into Values), ``f`` takes
    them and returns a Value. Each input's analytical derivative (left in its ``grad``) is
    compared with (f(x + h) - f(x - h)) / 2h; a row passes when |a - n| / (|a| + |n|) is below
    ``tolerance``. Returns whether every row passed. `gradcheck` gives the same comparison as
    a `Report`, with absolute and relative tolerances.

    >>> numerical_gradient_check(lambda a, b: a * b + b.exp(), [Value(2.0), Value(0.0)])
     Input 0: analytical=0.000000, numerical=0.000000, rel_error=... [PASS]
     Input 1: analytical=3.000000, numerical=3.000000, rel_error=... [PASS]
    True
    """
    op = "numerical_gradient_check"
    values = [x if isinstance(x, Value) else Value(_real(x, op)) for x in inputs]
    for v in values:
        v.grad = 0.0
    _value_output(f(*values), op, "f").backward()
    # Both slopes first, then the rows: moving an input's data leaves every grad alone.
    slopes = [(v.grad, _central_slope(f, values, v, h)) for v in values]
    verdicts = []
    for i, (analytical, numerical) in enumerate(slopes):
        gap = abs(analytical - numerical)
        rel_error = gap / (abs(analytical) + abs(numerical) + 1e-15)  # two zero slopes agree
        verdicts.append(rel_error < tolerance)
        print(
            f" Input {i}: analytical={analytical:.6f}, numerical={numerical:.6f}, "
            f"rel_error={rel_error:.2e} [{'PASS' if verdicts[-1] else 'FAIL'}]"
        )
    return all(verdicts)


def _central_slope(f: Callable, values: list[Value], moved: Value, h: float) -> float:
    """(f at moved + h - f at moved - h) / 2h, with ``moved``'s data shifted in place and put
    back (f sees the caller's own Values, as a text's program expects)."""
    start = moved.data
    try:
        moved.data = start + h
        above = f(*values).data
        moved.data = start - h
        below = f(*values).data
    finally:
        moved.data = start
    return (above - below) / (2 * h)


def _value_output(out: object, op: str, fn_name: str = "fn") -> Value:
    if not isinstance(out, Value):
        raise TypeError(f"{op}: {fn_name} must return a Value, got {type(out).__name__}")
    return out


def _real(x: object, op: str) -> float:
    if not isinstance(x, numbers.Real):
        raise TypeError(f"{op}: inputs must be numbers or Values, got {type(x).__name__}")
    return float(x)


def _outputs(fn, inputs) -> list[Tensor]:
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"gradcheck: fn must return Tensors, got {type(o).__name__}")
    return outs


def projection_vectors(outs: list[Tensor], seed: int = 0) -> list[np.ndarray]:
    """Fixed random vectors, one per output, that turn any output into a scalar."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(o.shape) for o in outs]


def _tensor_checks(fn, inputs, eps, atol, rtol) -> list[Check]:
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise GraphError("gradcheck: no input requires grad; pass requires_grad=True tensors")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise DTypeError(
                f"gradcheck: input {i} is {inputs[i].dtype}; finite differences need float64 "
                "(use .double())"
            )
    outs = _outputs(fn, inputs)
    vectors = projection_vectors(outs)
    differentiable = [(o, v) for o, v in zip(outs, vectors) if o.requires_grad]
    if differentiable:
        analytical = autograd_grad(
            [o for o, _ in differentiable],
            [inputs[i] for i in checked],
            grad_outputs=[Tensor._make(v) for _, v in differentiable],
            allow_unused=True,
        )
    else:  # outputs that do not depend on the inputs: the gradient is zero
        analytical = [None] * len(checked)

    def projected() -> float:
        # Not under no_grad: fn may itself differentiate (gradgradcheck's first derivative).
        return sum(float(np.sum(o._array * v)) for o, v in zip(_outputs(fn, inputs), vectors))

    checks = []
    for i, g in zip(checked, analytical):
        x = inputs[i]._array
        g = np.zeros_like(x) if g is None else g._array
        worst = None
        for index in np.ndindex(x.shape):
            original = x[index]
            x[index] = original + eps
            plus = projected()
            x[index] = original - eps
            minus = projected()
            x[index] = original
            check = make_check(f"input {i}", index, float(g[index]), (plus - minus) / (2 * eps),
                               atol, rtol)  # fmt: skip
            if worst is None or _badness(check) > _badness(worst):
                worst = check
        if worst is not None:
            checks.append(worst)
    return checks


def _badness(check: Check) -> float:
    """How far past its tolerance a check is (positive means it failed)."""
    return check.abs_error - check.tolerance


def gradgradcheck(
    fn: Callable,
    inputs: Sequence | Tensor,
    eps: float = 1e-6,
    tol: float | None = None,
    *,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    grad_outputs: Sequence | Tensor | None = None,
    raise_exception: bool = False,
    **switches: Any,
) -> Report:
    """Check second derivatives: gradcheck of the first derivative built with create_graph.

    The first derivative is the vector-Jacobian product of ``fn`` with a fixed random vector,
    computed with ``create_graph=True``; its own backward is compared with central
    differences. ``grad_outputs`` (a keyword here; PyTorch's third positional argument)
    replaces that vector; the other keywords are `gradcheck`'s.

    >>> import chainrule as cr
    >>> x = cr.tensor(np.array([0.3, -1.2]), requires_grad=True)
    >>> bool(gradgradcheck(lambda t: (t.sin() * t).sum(), [x]))
    True
    """
    _check_switches(switches, "gradgradcheck")
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is None:
        vectors = projection_vectors(_outputs(fn, inputs), seed=1)
    else:
        given = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        vectors = [g._array if isinstance(g, Tensor) else np.asarray(g) for g in given]

    def first_derivative(*xs):
        outs = _outputs(fn, xs)
        pairs = [(o, v) for o, v in zip(outs, vectors) if o.requires_grad]
        wanted = [x for x in xs if isinstance(x, Tensor) and x.requires_grad]
        if not pairs:
            return tuple(Tensor._make(np.zeros_like(x._array)) for x in wanted)
        grads = autograd_grad(
            [o for o, _ in pairs], wanted, grad_outputs=[Tensor._make(v) for _, v in pairs],
            create_graph=True, allow_unused=True,
        )  # fmt: skip
        return tuple(
            Tensor._make(np.zeros_like(x._array)) if g is None else g for x, g in zip(wanted, grads)
        )

    report = gradcheck(first_derivative, inputs, eps, tol, atol=atol, rtol=rtol)
    if raise_exception and not report:
        raise GraphError(
            f"gradgradcheck: second derivatives disagree with finite differences\n{report}"
        )
    return report


def gradcheck_as_torch(func: Callable, inputs: Sequence | Tensor, *, eps: float = 1e-6,
                       atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                       **switches: Any) -> bool:  # fmt: skip
    """``torch.autograd.gradcheck`` as PyTorch gives it (``chainrule.autograd.gradcheck``):
    True when backward agrees with central differences; a failing check raises `GraphError`
    (a RuntimeError, as PyTorch's GradcheckError) showing the `Report`, or returns False with
    ``raise_exception=False``. `gradcheck` itself returns the report.

    >>> x = Tensor([0.3, -1.2], dtype="float64", requires_grad=True)
    >>> gradcheck_as_torch(lambda t: t.sin() * t, (x,))
    True
    """
    report = gradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol,
                       raise_exception=raise_exception, **switches)  # fmt: skip
    return bool(report)


def gradgradcheck_as_torch(func: Callable, inputs: Sequence | Tensor,
                           grad_outputs: Sequence | Tensor | None = None, *, eps: float = 1e-6,
                           atol: float = 1e-5, rtol: float = 1e-3, raise_exception: bool = True,
                           **switches: Any) -> bool:  # fmt: skip
    """``torch.autograd.gradgradcheck`` as PyTorch gives it (``grad_outputs`` its third
    positional argument): True, or `GraphError` for a failing check (False with
    ``raise_exception=False``); `gradgradcheck` itself returns the report."""
    report = gradgradcheck(func, inputs, eps=eps, atol=atol, rtol=rtol,
                           grad_outputs=grad_outputs, raise_exception=raise_exception,
                           **switches)  # fmt: skip
    return bool(report)
