"""`Value`: reverse-mode automatic differentiation on single floats.

Each Value keeps its number, its gradient, the parents it was computed from and the op row
(from `chainrule.rules`) whose partial derivatives carry gradients back to those parents.
Scalar networks built from Values live in `chainrule.scalar_nn`.
"""

from __future__ import annotations

import numbers

from . import counting
from .rules import ARITHMETIC_ERRORS, Rule, ScalarOps


class Value(ScalarOps):
    """A float that remembers how it was computed, so ``backward()`` can find its gradient.

    ``data`` is the number, ``grad`` the derivative of the last ``backward()`` root with
    respect to it (0.0 until then). ``_prev`` holds the parents and ``_op`` the op symbol, the
    names graph-drawing code from the teaching material reads.

    >>> x, y = Value(2.0, label="x"), Value(3.0, label="y")
    >>> z = x * y + x
    >>> z.backward()
    >>> z.data, x.grad, y.grad
    (8.0, 4.0, 2.0)
    """

    __slots__ = ("data", "grad", "label", "_prev", "_op", "_rule", "_args", "__weakref__")

    def __init__(self, data: float, label: str = "") -> None:
        if not isinstance(data, numbers.Real):
            raise TypeError(f"Value: data must be a real number, got {type(data).__name__}")
        self.data = float(data)
        self.grad = 0.0
        self.label = label
        self._prev: tuple[Value, ...] = ()
        self._op = ""
        self._rule: Rule | None = None
        self._args: tuple = ()

    @classmethod
    def apply(cls, rule: Rule, x: Value, y: Value | float | None = None) -> Value:
        """Apply an op row (a `chainrule.rules.Rule`) to Values: the custom-op entry point.

        ``y`` is a second Value, a float constant (not differentiated) or None for unary ops.

        >>> from chainrule.rules import Rule
        >>> cube = Rule("cube", "³", lambda x: x**3, lambda x: 3 * x**2)
        >>> x = Value(2.0); y = Value.apply(cube, x); y.backward(); (y.data, x.grad)
        (8.0, 12.0)
        """
        if not isinstance(x, Value):
            x = cls(x)
        if y is not None and not isinstance(y, Value):
            y = Value._constant(y, rule.name)
        return cls._apply(rule, x, y)

    @staticmethod
    def _apply(rule: Rule, x: Value, y: Value | float | None) -> Value:
        if isinstance(y, Value):
            args, parents = (x.data, y.data), (x, y)
        else:
            args, parents = ((x.data,) if y is None else (x.data, y)), (x,)
        try:
            data = rule.forward(*args)
        except ARITHMETIC_ERRORS:
            raise rule.undefined(args, tuple(p.label for p in parents)) from None
        out = Value.__new__(Value)
        out.data = data
        out.grad = 0.0
        out.label = ""
        out._prev = parents
        out._op = rule.symbol
        out._rule = rule
        out._args = args if len(args) == 2 else (args[0], None)
        if counting.active is not None:
            counting.active.record_forward(rule.name)
        return out

    @staticmethod
    def _lift(other: object, op: str) -> Value:
        if isinstance(other, Value):
            return other
        if isinstance(other, numbers.Real):
            return Value(other)
        raise TypeError(f"{op}: cannot combine a Value with {type(other).__name__}")

    def backward(self) -> None:
        """Fill ``grad`` of every Value this one depends on with d(self)/d(that Value).

        The seed is 1.0. Leaves (Values made by the user) accumulate: a second call adds to
        their ``grad``, as in PyTorch, so zero them between steps (``zero_grad``). Interior
        nodes hold this call's gradient. The topological order is built without recursion,
        so graphs a million ops deep work.
        """
        order = topological_order(self)
        for node in order:
            if node._rule is not None:
                node.grad = 0.0
        self.grad += 1.0
        counter = counting.active
        for node in reversed(order):
            rule = node._rule
            if rule is None:
                continue
            x, y = node._args
            g = node.grad
            try:
                for parent, partial in zip(node._prev, rule.partials):
                    parent.grad += partial(x, y, node.data) * g
            except ARITHMETIC_ERRORS:
                labels = tuple(p.label for p in node._prev)
                raise rule.undefined(node._args, labels, "derivative undefined") from None
            if counter is not None:
                counter.record_backward(rule.name, len(node._prev))

    def zero_grad(self) -> None:
        """Set ``grad`` to 0.0 on this Value and every Value it was computed from."""
        for node in topological_order(self):
            node.grad = 0.0

    def __float__(self) -> float:
        return self.data

    def __repr__(self) -> str:
        label = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data:.6g}, grad={self.grad:.6g}{label})"


#: The teaching material's name for `Value`: the same class, not a copy (``Scalar is Value``).
Scalar = Value


def topological_order(root: Value) -> list[Value]:
    """Every Value ``root`` depends on, parents before children, ``root`` last.

    Iterative depth-first search, so the depth of the graph is not bounded by Python's
    recursion limit.
    """
    order: list[Value] = []
    visited: set[int] = set()
    stack: list[tuple[Value, bool]] = [(root, False)]
    while stack:
        node, parents_done = stack.pop()
        if parents_done:
            order.append(node)
            continue
        if id(node) in visited:
            continue
        visited.add(id(node))
        stack.append((node, True))
        for parent in node._prev:
            if id(parent) not in visited:
                stack.append((parent, False))
    return order
