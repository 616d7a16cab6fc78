"""Exercise 3: the graph of f(x, y, z) = (x + y)·z + exp(x·z) at x = 1, y = 2, z = -1.

By hand, with a = x + y = 3, b = x·z = -1 and f = a·z + exp(b):
    ∂f/∂x = z + z·exp(xz) = -1 - e⁻¹      (x reaches f through a and through b)
    ∂f/∂y = z = -1
    ∂f/∂z = (x + y) + x·exp(xz) = 3 + e⁻¹
`chainrule.draw_graph` draws every node with its value and gradient; the picture is saved
as SVG (this needs Graphviz's ``dot`` program).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from chainrule import Scalar, draw_graph

POINT = {"x": 1.0, "y": 2.0, "z": -1.0}


def f(x, y, z):
    """(x + y)·z + exp(x·z)."""
    return (x + y) * z + (x * z).exp()


def by_hand(x: float, y: float, z: float) -> dict[str, float]:
    """The value and the three partial derivatives, worked out above."""
    return {
        "f": (x + y) * z + math.exp(x * z),
        "x": z + z * math.exp(x * z),
        "y": z,
        "z": (x + y) + x * math.exp(x * z),
    }


def run(svg_path: str | Path | None = None) -> dict:
    """Build and differentiate f at POINT; draw the graph, saving it as SVG when asked."""
    inputs = {name: Scalar(v, label=name) for name, v in POINT.items()}
    out = f(**inputs)
    out.label = "f"
    out.backward()
    graph = draw_graph(out, format="svg" if svg_path is not None else None)
    if svg_path is not None:
        Path(svg_path).write_bytes(graph.pipe())
    return {
        "f": out.data,
        "gradient": {name: v.grad for name, v in inputs.items()},
        "by_hand": by_hand(**POINT),
        "dot_source": graph.source,
    }


def main(svg_path: str = "exercise3_graph.svg") -> None:
    r = run(svg_path)
    hand = r["by_hand"]
    print(f"f(1, 2, -1) = {r['f']:.6f}   (by hand {hand['f']:.6f})")
    for name, g in r["gradient"].items():
        print(f"∂f/∂{name} = {g:+.6f}   (by hand {hand[name]:+.6f})")
    print(f"graph saved to {svg_path}")


if __name__ == "__main__":
    main(*sys.argv[1:])
