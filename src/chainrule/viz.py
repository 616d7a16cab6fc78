"""Pictures and tables of a computation graph: `draw_graph` (through Graphviz) and `trace_table`.

Both take a `Value` or a `Tensor` root. Graphviz is optional and imported inside `draw_graph`,
so ``import chainrule`` never needs it.
"""

from __future__ import annotations

import contextlib
import functools
import html
import math
import operator
import re
import shutil
import warnings
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ._tensor import Tensor
from .autograd import Node, node_order
from .errors import ChainruleError, fmt_dtype, fmt_shape
from .scalar.value import Value, topological_order

_INSTALL_DOT = (
    "install Graphviz's dot program (Debian/Ubuntu: apt-get install graphviz, "
    "macOS: brew install graphviz, conda: conda install graphviz)"
)

# Past max_nodes the walk only counts, and stops counting here so that a graph of millions of
# values returns in about 0.1 s; the notice then says "at least 100,000 more".
_COUNT_LIMIT = 100_000

_RANKDIRS = ("LR", "RL", "TB", "BT")


# Numbers and arrays as short strings.


def _fmt(x: float) -> str:
    """Four decimals; scientific notation where four decimals would hide or bloat the number."""
    x = float(x)
    if x != 0 and math.isfinite(x) and not 1e-4 <= abs(x) < 1e6:
        return f"{x:.4e}"
    return f"{x:.4f}"


def _summary(array: np.ndarray) -> str:
    """A few elements of a small array, or its mean, min and max."""
    a = np.asarray(array)
    if a.ndim == 0:
        return _fmt(a.item())
    if a.size == 0:
        return "[]"
    if a.size <= 4:
        return "[" + " ".join(_fmt(x) for x in a.ravel().tolist()) + "]"
    f = a.astype(np.float64)
    return f"mean {_fmt(f.mean())} min {_fmt(f.min())} max {_fmt(f.max())}"


# Walking the graph: the same breadth-first walk serves both engines.


_value_parents = operator.attrgetter("_prev")


def _tensor_parents(item: Node | Tensor) -> list:
    if isinstance(item, Tensor):
        return []
    return [edge[0] if type(edge) is tuple else edge for edge in item.edges if edge is not None]


def _nearest(root: Any, parents: Callable, max_nodes: int) -> tuple[list, int, bool]:
    """The ``max_nodes`` items nearest ``root`` (breadth first), how many more there are, and
    whether that count is only a lower bound (counting stops at ``_COUNT_LIMIT``)."""
    seen = {id(root)}
    queue = deque([root])
    drawn = []
    while queue and len(drawn) < max_nodes:
        item = queue.popleft()
        drawn.append(item)
        for parent in parents(item):
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
    hidden = len(queue)
    stack = list(queue)
    push, pop, mark = stack.append, stack.pop, seen.add  # the hot loop over huge graphs
    while stack and hidden < _COUNT_LIMIT:
        for parent in parents(pop()):
            key = id(parent)
            if key not in seen:
                mark(key)
                push(parent)
                hidden += 1
    return drawn, hidden, bool(stack)


# Drawing.


def _record(*fields: str) -> str:
    """A Graphviz record label (fields side by side with rankdir LR), special characters escaped."""
    escaped = [re.sub(r"([{}|<>\\])", r"\\\1", field) for field in fields if field]
    return "{ " + " | ".join(escaped) + " }"


def _op_label(v: Value) -> str:
    """The op symbol, with a constant operand where the op has one: ``**2``."""
    constant = v._args[1] if len(v._prev) == 1 and len(v._args) == 2 else None
    if constant is None or v._op.endswith(f"{constant:g}"):  # a text's label may show it
        return v._op
    return f"{v._op}{constant:g}" if v._op == "**" else f"{v._op} {constant:g}"


def _draw_values(dot, root: Value, show_grad: bool, max_nodes: int) -> tuple[list, int, bool]:
    drawn, hidden, at_least = _nearest(root, _value_parents, max_nodes)
    names = {id(v): f"v{i}" for i, v in enumerate(drawn)}
    cut = []
    for v in drawn:
        name = names[id(v)]
        grad = f"grad {_fmt(v.grad)}" if show_grad else ""
        dot.node(name, _record(v.label, f"data {_fmt(v.data)}", grad), shape="record")
        if not v._prev:
            continue
        dot.node(name + "op", _op_label(v), shape="circle")
        dot.edge(name + "op", name)
        for parent in v._prev:
            if id(parent) in names:
                dot.edge(names[id(parent)], name + "op")
            elif name + "op" not in cut:
                cut.append(name + "op")
    return cut, hidden, at_least


def _tensor_fields(title: str, shape: tuple, dtype, tensor: Tensor | None, show_grad: bool):
    fields = [title, f"{fmt_shape(shape)} {fmt_dtype(dtype)}"]
    if tensor is not None:
        fields.append(f"data {_summary(tensor._array)}")
        if show_grad and tensor.grad is not None:
            fields.append(f"grad {_summary(_grad_array(tensor))}")
    return fields


def _known_output(node: Node, index: int, root: Tensor) -> Tensor | None:
    """The Tensor for output ``index`` of ``node`` if it is the root or retains its grad."""
    if root.grad_fn is node and root._output_nr == index:
        return root
    ref = (node.retained or {}).get(index)
    return ref() if ref is not None else None


def _draw_tensors(dot, root: Tensor, show_grad: bool, max_nodes: int) -> tuple[list, int, bool]:
    start = root if root.grad_fn is None else root.grad_fn
    drawn, hidden, at_least = _nearest(start, _tensor_parents, max_nodes)
    names = {id(item): f"t{i}" for i, item in enumerate(drawn)}
    cut = []
    for item in drawn:
        name = names[id(item)]
        if isinstance(item, Tensor):
            title = "leaf" if item.requires_grad else "tensor"
            fields = _tensor_fields(title, item.shape, item.dtype, item, show_grad)
            dot.node(name, _record(*fields), shape="record")
            continue
        op = name + "op"
        dot.node(op, item.name, shape="circle")
        several = len(item.out_meta) > 1
        for i, (shape, dtype) in enumerate(item.out_meta):
            title = f"{item.name}[{i}]" if several else item.name
            tensor = _known_output(item, i, root)
            fields = _tensor_fields(title, shape, dtype, tensor, show_grad)
            dot.node(f"{name}_{i}", _record(*fields), shape="record")
            dot.edge(op, f"{name}_{i}")
        for edge in item.edges:
            if edge is None:
                continue
            parent, index = edge if type(edge) is tuple else (edge, None)
            if id(parent) not in names:
                if op not in cut:
                    cut.append(op)
            elif index is None:
                dot.edge(names[id(parent)], op)
            else:
                dot.edge(f"{names[id(parent)]}_{index}", op)
    return cut, hidden, at_least


class DotText:
    """The DOT text of a graph, written without the graphviz package (`draw_graph`'s
    fallback): ``.source`` is what ``graphviz.Digraph.source`` would be.

    >>> dot = DotText(graph_attr={"rankdir": "LR"})
    >>> dot.node("a", "x * y", shape="circle"); dot.edge("b", "a")
    >>> print(dot.source)
    digraph {
    \tgraph [rankdir=LR]
    \ta [label="x * y" shape=circle]
    \tb -> a
    }
    <BLANKLINE>
    """

    def __init__(self, format: None = None, graph_attr: dict[str, str] | None = None) -> None:
        self.format = format
        attrs = _dot_attrs(graph_attr or {})
        self.body = [f"\tgraph [{attrs}]\n"] if attrs else []

    def node(self, name: str, label: str | None = None, **attrs: str) -> None:
        """Add a node, its label and attributes."""
        attrs = _dot_attrs({"label": label, **attrs} if label is not None else attrs)
        self.body.append(f"\t{_dot_id(name)} [{attrs}]\n" if attrs else f"\t{_dot_id(name)}\n")

    def edge(self, tail: str, head: str, **attrs: str) -> None:
        """Add an edge from ``tail`` to ``head``."""
        line = f"\t{_dot_id(tail)} -> {_dot_id(head)}"
        self.body.append(f"{line} [{_dot_attrs(attrs)}]\n" if attrs else line + "\n")

    @property
    def source(self) -> str:
        """The DOT text."""
        return "digraph {\n" + "".join(self.body) + "}\n"

    def __str__(self) -> str:
        return self.source


_DOT_PLAIN = re.compile(
    r"[A-Za-z_\x80-\uffff][A-Za-z_0-9\x80-\uffff]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?)"
)
_DOT_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


def _dot_id(text: str) -> str:
    """``text`` as a DOT identifier: bare when DOT allows it, else quoted (as graphviz does)."""
    if _DOT_PLAIN.fullmatch(text) and text.lower() not in _DOT_KEYWORDS:
        return text
    return '"' + text.replace('"', '\\"') + '"'


def _dot_attrs(attrs: dict[str, str]) -> str:
    return " ".join(f"{key}={_dot_id(str(value))}" for key, value in attrs.items())


@functools.cache
def _graph_class(graphviz) -> tuple[type, type]:
    """A Digraph subclass whose rendering explains a missing ``dot``, and that error's class."""

    class DotNotFoundError(ChainruleError, graphviz.ExecutableNotFound):
        """Graphviz's ``dot`` program is not installed (also a graphviz.ExecutableNotFound)."""

        def __init__(self, message: str) -> None:
            RuntimeError.__init__(self, message)

    @contextlib.contextmanager
    def explain_missing_dot(what: str):
        try:
            yield
        except graphviz.ExecutableNotFound as exc:
            if isinstance(exc, DotNotFoundError):
                raise
            raise DotNotFoundError(
                f"{what}: Graphviz's dot program was not found on PATH; {_INSTALL_DOT}. "
                "The DOT text is in .source without it"
            ) from None

    class Graph(graphviz.Digraph):
        """A graphviz.Digraph from draw_graph; rendering without ``dot`` says how to install it."""

        def pipe(self, *args, **kwargs):
            with explain_missing_dot("pipe"):
                return super().pipe(*args, **kwargs)

        def render(self, *args, **kwargs):
            with explain_missing_dot("render"):
                return super().render(*args, **kwargs)

    return Graph, DotNotFoundError


def draw_graph(
    root: Value | Tensor,
    format: str | None = "auto",
    rankdir: str = "LR",
    show_grad: bool = True,
    max_nodes: int = 200,
):
    """The graph that computed ``root``, as a ``graphviz.Digraph`` (shown inline in Jupyter).

    Values are boxes (label, data and grad to 4 decimals), ops are circles between them, and
    arrows run from inputs to results. A Value used several times appears once. For a Tensor
    root the boxes show shape and dtype; leaves, the root and tensors that called
    ``retain_grad()`` also show a summary of their data and ``.grad`` (the engine keeps no
    other intermediate values). Inputs that need no gradient are not part of the graph.

    Only the ``max_nodes`` values nearest the root are drawn (Values; for tensors, ops and
    leaves); a note says how many more were left out (counted up to 100,000, past that it
    says "at least 100,000"), so huge graphs return at once.

    ``format`` is what ``.render()``, ``.pipe()`` and Jupyter produce; rendering needs
    Graphviz's ``dot`` program. The default, ``"auto"``, is ``"svg"`` when ``dot`` is on PATH;
    without it ``draw_graph`` warns (one line, saying how to install it) and returns the graph
    as ``format=None`` does: unrendered, its DOT text in ``.source``. ``format=None`` gives that
    graph without the warning. A format named explicitly (``format="svg"``) with no ``dot`` is
    an error.

    Without the ``graphviz`` Python package, ``"auto"`` warns (one line) and ``None`` is silent;
    both return a `DotText`, whose ``.source`` is the same DOT text.

    Raises:
        ImportError: a format is named but the ``graphviz`` Python package is missing
            (``pip install chainrule[viz]``).
        RuntimeError: ``format`` is named (not ``"auto"`` or None) but ``dot`` is not on PATH
            (also raised by ``.render()`` and ``.pipe()`` later, as a
            ``graphviz.ExecutableNotFound``).

    Warns:
        UserWarning: ``format="auto"`` and ``dot`` (or the graphviz package) is missing.

    >>> from chainrule import Value
    >>> x = Value(2.0, label="x")
    >>> y = x * x; y.label = "y"; y.backward()
    >>> dot = draw_graph(y, format=None)
    >>> print(dot.source)  # doctest: +ELLIPSIS
    digraph {
    ...
    v0 [label="{ y | data 4.0000 | grad 1.0000 }" shape=record]
    v0op [label="*" shape=circle]
    ...
    """
    try:
        import graphviz
    except ImportError:
        if format not in ("auto", None):
            raise ImportError(
                f"draw_graph: format={format!r} needs the graphviz Python package; "
                "pip install chainrule[viz] (or pip install graphviz)"
            ) from None
        graphviz = None
    if not isinstance(root, (Value, Tensor)):
        raise TypeError(f"draw_graph: expected a Value or Tensor root, got {type(root).__name__}")
    if rankdir not in _RANKDIRS:
        raise ValueError(f"draw_graph: rankdir must be one of {_RANKDIRS}, got {rankdir!r}")
    if isinstance(max_nodes, bool) or not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"draw_graph: max_nodes must be a positive integer, got {max_nodes!r}")
    if graphviz is None:
        if format == "auto":
            warnings.warn(
                "draw_graph: the graphviz Python package is missing, so the graph cannot be "
                "rendered; pip install chainrule[viz]. The DOT text is in .source",
                stacklevel=2,
            )
        graph_class, format, has_dot = DotText, None, False
    else:
        graph_class, missing_dot = _graph_class(graphviz)
        has_dot = shutil.which("dot") is not None
    if format == "auto":
        format = "svg" if has_dot else None
        if not has_dot:
            warnings.warn(
                f"draw_graph: Graphviz's dot program is not on PATH, so the graph cannot be "
                f"rendered; {_INSTALL_DOT}. The DOT text is in .source",
                stacklevel=2,
            )
    elif format is not None and not has_dot:
        raise missing_dot(
            f"draw_graph: format={format!r} needs Graphviz's dot program, which is not on "
            f"PATH; {_INSTALL_DOT}, or pass format=None to get the DOT text (.source) without it"
        )
    dot = graph_class(format=format, graph_attr={"rankdir": rankdir})
    draw = _draw_values if isinstance(root, Value) else _draw_tensors
    cut, hidden, at_least = draw(dot, root, show_grad, max_nodes)
    if hidden:
        count = f"at least {hidden:,}" if at_least else f"{hidden:,}"
        notice = f"… {count} more nodes not drawn (max_nodes={max_nodes})"
        dot.node("more", notice, shape="note", style="filled", fillcolor="lightyellow")
        for op in cut:
            dot.edge("more", op, style="dashed")
    return dot


# The trace table.


class TraceRow(NamedTuple):
    """One row of a `trace_table`: a value's name, how it was computed, its value and gradient.

    For Values, ``value`` and ``grad`` are floats. For tensors they are arrays, or None where
    the engine kept no copy (intermediate tensors that did not call ``retain_grad()``), and
    ``shape`` is the output's shape; several outputs give a tuple of shapes.
    """

    node: str
    expression: str
    value: Any
    grad: Any
    shape: tuple = ()


def _cell(x: Any, shape: tuple) -> str:
    """A table cell: the number, or the shape (and mean) of a non-scalar array."""
    if isinstance(x, float):
        return _fmt(x)
    if x is None:
        if shape and isinstance(shape[0], tuple):
            return "shapes " + ", ".join(fmt_shape(s) for s in shape)
        return f"shape {fmt_shape(shape)}"
    if np.ndim(x) == 0:
        return _fmt(float(x))
    mean = _fmt(np.asarray(x, dtype=np.float64).mean()) if np.size(x) else "-"
    return f"shape {fmt_shape(np.shape(x))}, mean {mean}"


class Trace:
    """The forward and backward pass as a table: one `TraceRow` per value, inputs first.

    ``str()`` gives aligned text, ``to_markdown()`` a Markdown table, and Jupyter shows an
    HTML table; ``rows`` holds the `TraceRow` tuples.
    """

    columns = ("node", "expression", "value", "gradient")

    def __init__(self, rows: list[TraceRow]) -> None:
        self.rows = rows

    def _cells(self) -> list[tuple[str, str, str, str]]:
        return [
            (
                row.node,
                row.expression,
                _cell(row.value, row.shape),
                "" if row.grad is None else _cell(row.grad, ()),
            )
            for row in self.rows
        ]

    def __str__(self) -> str:
        cells = self._cells()
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]

        def line(row) -> str:
            parts = [
                text.ljust(width) if i < 2 else text.rjust(width)
                for i, (text, width) in enumerate(zip(row, widths))
            ]
            return "  ".join(parts).rstrip()

        rule = tuple("-" * width for width in widths)
        return "\n".join(line(row) for row in [self.columns, rule, *cells])

    def __repr__(self) -> str:
        return str(self)

    def to_markdown(self) -> str:
        """The table in Markdown (GitHub style); expressions are code, so ``*`` stays literal.

        >>> x = Value(3.0, label="x"); y = x * x; y.backward()
        >>> print(trace_table(y).to_markdown())
        | node | expression | value | gradient |
        |:--|:--|--:|--:|
        | x | leaf | 3.0000 | 6.0000 |
        | v1 | `x*x` | 9.0000 | 1.0000 |
        """

        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        lines = ["| " + " | ".join(self.columns) + " |", "|:--|:--|--:|--:|"]
        for node, expression, value, grad in self._cells():
            if expression != "leaf":
                expression = f"`{expression}`"
            lines.append(f"| {cell(node)} | {cell(expression)} | {value} | {grad} |")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{c}</th>" for c in self.columns)
        body = []
        for node, expression, value, grad in self._cells():
            if expression != "leaf":
                expression = f"<code>{html.escape(expression)}</code>"
            body.append(
                f"<tr><td>{html.escape(node)}</td><td>{expression}</td>"
                f'<td style="text-align:right">{html.escape(value)}</td>'
                f'<td style="text-align:right">{html.escape(grad)}</td></tr>'
            )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


_INFIX = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "pow_var": "**"}


def _expression(v: Value, names: dict) -> str:
    """``w1*x1``, ``w1**2``, ``-a``, ``sigmoid(a)``, ``leaky_relu(a, 0.01)``; leaves: ``leaf``."""
    if not v._prev:
        return "leaf"
    name = v._rule.name if v._rule is not None else v._op
    args = [names[id(parent)] for parent in v._prev]
    if len(v._prev) == 1 and len(v._args) == 2 and v._args[1] is not None:
        args.append(f"{v._args[1]:g}")
    if name in _INFIX and len(args) == 2:
        return f"{args[0]}{_INFIX[name]}{args[1]}"
    if name == "neg":
        return f"-{args[0]}"
    return f"{name}({', '.join(args)})"


def _value_rows(root: Value) -> list[TraceRow]:
    names: dict[int, str] = {}
    rows = []
    for i, v in enumerate(topological_order(root)):
        names[id(v)] = v.label or f"v{i}"
        rows.append(TraceRow(names[id(v)], _expression(v, names), v.data, v.grad))
    return rows


def _tensor_rows(root: Tensor) -> list[TraceRow]:
    if root.grad_fn is None:
        return [TraceRow("t0", "leaf", root._array, _grad_array(root), root.shape)]
    names: dict[int, str] = {}
    rows = []
    for node in reversed(node_order([root.grad_fn])):
        args = []
        for edge in node.edges:
            if edge is None:
                args.append("const")
            elif type(edge) is tuple:
                parent, index = edge
                several = len(parent.out_meta) > 1
                args.append(f"{names[id(parent)]}[{index}]" if several else names[id(parent)])
            else:
                if id(edge) not in names:
                    names[id(edge)] = f"t{len(rows)}"
                    rows.append(
                        TraceRow(
                            names[id(edge)], "leaf", edge._array, _grad_array(edge), edge.shape
                        )
                    )
                args.append(names[id(edge)])
        names[id(node)] = f"t{len(rows)}"
        expression = f"{node.name}({', '.join(args)})"
        if len(node.out_meta) == 1:
            tensor = _known_output(node, 0, root)
            value = None if tensor is None else tensor._array
            grad = None if tensor is None else _grad_array(tensor)
            rows.append(TraceRow(names[id(node)], expression, value, grad, node.out_meta[0][0]))
        else:
            shapes = tuple(shape for shape, _ in node.out_meta)
            rows.append(TraceRow(names[id(node)], expression, None, None, shapes))
    return rows


def _grad_array(t: Tensor) -> np.ndarray | None:
    """``t``'s gradient as an array (a teaching text's Tensor keeps its gradient as one)."""
    grad = t.grad
    return grad._array if isinstance(grad, Tensor) else grad


def trace_table(root: Value | Tensor) -> Trace:
    """The forward and backward trace of ``root``: each value in topological order (inputs
    first, root last), with the expression that made it, its value and its gradient.

    Values are named by their label, or ``v<row>``; tensors ``t<row>``. Call it after
    ``backward()`` to see gradients. For tensors the value column shows the shape (and mean)
    of non-scalars; intermediate tensors show only their shape unless they called
    ``retain_grad()``.

    >>> x, y = Value(2.0, label="x"), Value(3.0, label="y")
    >>> z = (x * y).sigmoid(); z.label = "z"; z.backward()
    >>> print(trace_table(z))
    node  expression    value  gradient
    ----  -----------  ------  --------
    y     leaf         3.0000    0.0049
    x     leaf         2.0000    0.0074
    v2    x*y          6.0000    0.0025
    z     sigmoid(v2)  0.9975    1.0000
    """
    if isinstance(root, Value):
        return Trace(_value_rows(root))
    if isinstance(root, Tensor):
        return Trace(_tensor_rows(root))
    raise TypeError(f"trace_table: expected a Value or Tensor root, got {type(root).__name__}")


__all__ = ["Trace", "TraceRow", "draw_graph", "trace_table"]
