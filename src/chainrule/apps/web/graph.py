"""A `Value` graph as the page shows it: nodes with values and gradients, an SVG drawing by
Graphviz when its ``dot`` program is present, and the trace table as HTML. No HTTP here.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping, Sequence

from ...scalar.value import Value, topological_order
from ...viz import draw_graph, trace_table

#: The teaching example the sliders drive, with its starting values.
TEACHING_FUNCTION = "f = sigmoid(w1*x1 + w2*x2) + 0.5*(w1**2 + w2**2)"
TEACHING_VALUES = {"w1": 0.2, "w2": 0.4, "x1": -0.4, "x2": 0.5}
SLIDER_RANGE = (-3.0, 3.0)


def teaching_graph(values: Mapping[str, float]) -> Value:
    """f = sigmoid(w1*x1 + w2*x2) + 0.5*(w1**2 + w2**2) at ``values``, after ``backward()``.

    Every intermediate Value is labelled, so the graph and the trace read like the lesson.

    >>> f = teaching_graph({"w1": 0.2, "w2": 0.4, "x1": -0.4, "x2": 0.5})
    >>> round(f.data, 4), f.label, [round(v.grad, 4) for v in f._prev]
    (0.63, 'f', [1.0, 1.0])
    """
    w1, w2 = Value(values["w1"], label="w1"), Value(values["w2"], label="w2")
    x1, x2 = Value(values["x1"], label="x1"), Value(values["x2"], label="x2")
    a = w1 * x1
    b = w2 * x2
    z = a + b
    s = z.sigmoid()
    q1, q2 = w1**2, w2**2
    q = q1 + q2
    r = Value(0.5, label="0.5") * q
    f = s + r
    named = {"a": a, "b": b, "z": z, "s": s, "q1": q1, "q2": q2, "q": q, "r": r, "f": f}
    for label, node in named.items():
        node.label = label
    f.backward()
    return f


def has_dot() -> bool:
    """Whether Graphviz can draw here: the ``graphviz`` package and the ``dot`` program."""
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


def describe(root: Value, variables: Sequence[str], use_graphviz: bool) -> dict:
    """Everything the page shows about the graph of ``root`` (after ``backward()``), as JSON.

    ``nodes`` lists each Value in topological order (inputs first) with its name (as in the
    trace), op, data, grad, parents (indices into ``nodes``) and depth (longest path from an
    input), from which the page lays the graph out itself when ``svg`` is None. ``gradients``
    maps each of ``variables`` (input labels) to its gradient. ``svg_ms`` is the time Graphviz took.
    """
    order = topological_order(root)
    index = {id(node): i for i, node in enumerate(order)}
    table = trace_table(root)
    rows = table.rows
    nodes, depth = [], []
    for i, node in enumerate(order):
        parents = [index[id(parent)] for parent in node._prev]
        depth.append(1 + max((depth[p] for p in parents), default=-1))
        nodes.append(
            {
                "name": rows[i].node,
                "expression": rows[i].expression,
                "op": node._op,
                "data": node.data,
                "grad": node.grad,
                "parents": parents,
                "depth": depth[i],
            }
        )
    svg, svg_ms = None, 0.0
    if use_graphviz:
        start = time.perf_counter()
        dot = draw_graph(root, format="svg")
        dot.node_attr.update(fontname="Helvetica,Arial,sans-serif", fontsize="12")
        svg = _svg(dot.pipe(format="svg"))
        svg_ms = (time.perf_counter() - start) * 1e3
    return {
        "value": root.data,
        "gradients": {
            node.label: node.grad for node in order if not node._prev and node.label in variables
        },
        "nodes": nodes,
        "svg": svg,
        "svg_ms": svg_ms,
        "trace_html": table._repr_html_(),
        "renderer": "graphviz" if use_graphviz else "builtin",
    }


def _svg(data: bytes) -> str:
    """The <svg> element alone, without the XML prolog and DOCTYPE, to place inside the page."""
    text = data.decode("utf-8")
    return text[text.index("<svg") :]
