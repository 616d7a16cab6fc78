"""Exercise 2: f(x, y) = x²y + sin(xy) by forward mode (dual numbers) and by reverse mode.

Forward mode needs one pass per input, seeding that input's tangent with 1; reverse mode gets
both partial derivatives from one forward and one backward pass. The op counts follow
`chainrule.count_ops`' convention: 1 per op for the value, 2 per derivative carried along an
edge (a multiply by the partial and an add), in whichever direction it travels.
"""

from __future__ import annotations

import math
from collections import Counter

from chainrule import DualNumber, Scalar, count_ops, forward_gradient

X, Y = 2.0, 3.0

#: Work done by `CountingDual` ops since the last reset.
TALLY: Counter[str] = Counter()


def f(x, y):
    """x²y + sin(xy), for Values and dual numbers alike."""
    return x**2 * y + (x * y).sin()


def by_hand(x: float, y: float) -> tuple[float, float]:
    """(∂f/∂x, ∂f/∂y) = (2xy + y cos(xy), x² + x cos(xy))."""
    return 2 * x * y + y * math.cos(x * y), x**2 + x * math.cos(x * y)


class CountingDual(DualNumber):
    """A dual number that tallies its work in TALLY: 1 per op for the value, and 2 per
    non-zero tangent it carries (the Dual engine skips zero tangents)."""

    __slots__ = ()

    @staticmethod
    def _apply(rule, x, y):
        out = DualNumber._apply(rule, x, y)
        tangents = [x.deriv] + ([y.deriv] if isinstance(y, DualNumber) else [])
        TALLY["value"] += 1
        TALLY["tangent"] += 2 * sum(t != 0.0 for t in tangents)
        return CountingDual(out.value, out.deriv)


def forward_mode(x: float, y: float) -> tuple[list[float], list[int]]:
    """The gradient by one dual-number pass per input, and the ops each pass ran."""
    gradient, ops = [], []
    for seed in ((1.0, 0.0), (0.0, 1.0)):
        TALLY.clear()
        out = f(CountingDual(x, seed[0]), CountingDual(y, seed[1]))
        gradient.append(out.deriv)
        ops.append(TALLY["value"] + TALLY["tangent"])
    return gradient, ops


def reverse_mode(x: float, y: float) -> tuple[float, list[float], int, int]:
    """f, its gradient by one backward pass, and the forward and backward op counts."""
    with count_ops() as counts:
        xs, ys = Scalar(x, label="x"), Scalar(y, label="y")
        out = f(xs, ys)
        out.backward()
    return out.data, [xs.grad, ys.grad], counts.forward_total, counts.backward_total


def run(x: float = X, y: float = Y) -> dict:
    """Both gradients, the hand computation, and the op counts of each mode."""
    forward_grad, forward_ops = forward_mode(x, y)
    value, reverse_grad, reverse_forward, reverse_backward = reverse_mode(x, y)
    return {
        "value": value,
        "by_hand": by_hand(x, y),
        "forward_gradient": forward_grad,
        "plain_dual_gradient": forward_gradient(f, x, y),
        "forward_ops_per_pass": forward_ops,
        "forward_ops": sum(forward_ops),
        "reverse_gradient": reverse_grad,
        "reverse_ops": (reverse_forward, reverse_backward),
    }


def main() -> None:
    r = run()
    print(f"f({X}, {Y}) = x²y + sin(xy) = {r['value']:.6f}")
    print(f"by hand:        ∂f/∂x = {r['by_hand'][0]:.6f}  ∂f/∂y = {r['by_hand'][1]:.6f}")
    print(f"forward mode:   ∂f/∂x = {r['forward_gradient'][0]:.6f}  "
          f"∂f/∂y = {r['forward_gradient'][1]:.6f}   (2 passes)")  # fmt: skip
    print(f"reverse mode:   ∂f/∂x = {r['reverse_gradient'][0]:.6f}  "
          f"∂f/∂y = {r['reverse_gradient'][1]:.6f}   (1 forward + 1 backward)")  # fmt: skip
    a, b = r["forward_ops_per_pass"]
    fwd, bwd = r["reverse_ops"]
    print(f"ops, forward mode: {a} + {b} = {r['forward_ops']}")
    print(f"ops, reverse mode: {fwd} forward + {bwd} backward = {fwd + bwd}")


if __name__ == "__main__":
    main()
