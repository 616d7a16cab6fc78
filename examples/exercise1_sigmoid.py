"""Exercise 1: sigmoid on Value, verified by numerical gradient checking.

Two solutions. ``Value.sigmoid`` is one op row, σ(x) = 1 / (1 + exp(-x)) with derivative
σ(x)(1 - σ(x)) read from the saved output; ``sigmoid_composed`` builds it from exp, + and /,
and backward finds the same derivative through four nodes. Both must agree with central
differences, at points from the flat tails to the steep middle.
"""

from __future__ import annotations

from chainrule import Scalar, numerical_gradient_check

POINTS = (-6.0, -1.0, 0.0, 0.5, 2.0, 6.0)


def sigmoid_composed(x: Scalar) -> Scalar:
    """σ(x) written out as 1 / (1 + exp(-x)): four ops instead of one row."""
    return 1 / (1 + (-x).exp())


def run(points=POINTS) -> list[dict]:
    """For each point: σ, its derivative by backward, σ(1 - σ) by hand, and both checks."""
    rows = []
    for x0 in points:
        x = Scalar(x0)
        out = x.sigmoid()
        out.backward()
        rows.append(
            {
                "x": x0,
                "sigmoid": out.data,
                "grad": x.grad,
                "by_hand": out.data * (1 - out.data),
                "row_checked": numerical_gradient_check(lambda v: v.sigmoid(), [x0]),
                "composed_checked": numerical_gradient_check(sigmoid_composed, [x0]),
            }
        )
    return rows


def main() -> None:
    print(f"{'x':>5}  {'sigmoid':>9}  {'backward':>9}  {'σ(1-σ)':>9}  row ok  composed ok")
    for r in run():
        print(
            f"{r['x']:5.1f}  {r['sigmoid']:9.6f}  {r['grad']:9.6f}  {r['by_hand']:9.6f}"
            f"  {str(r['row_checked']):6}  {r['composed_checked']}"
        )


if __name__ == "__main__":
    main()
