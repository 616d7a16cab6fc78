"""`Value`: reverse-mode automatic differentiation on single floats.

Each Value keeps its number, its gradient, the parents it was computed from and the op row
(from `chainrule.scalar.rules`) whose partial derivatives carry gradients back to those parents.
Scalar networks built from Values live in `chainrule.scalar.nn`.
"""

from __future__ import annotations

from .. import counting
from .rules import ARITHMETIC_ERRORS, Rule, ScalarOps, is_real


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

    A new op can also be written the way the teaching texts write one: make the output with
    its children and op name, and give it a ``_backward`` closure that adds each child's
    share of ``out.grad``; ``backward()`` runs it in its place in the graph.

    >>> import math
    >>> def sigmoid(v):
    ...     out = Value(1 / (1 + math.exp(-v.data)), (v,), "sigmoid")
    ...     def _backward():
    ...         v.grad += out.data * (1 - out.data) * out.grad
    ...     out._backward = _backward
    ...     return out
    >>> x = Value(0.0); y = sigmoid(x) * 3; y.backward(); (y._prev[0]._op, x.grad)
    ('sigmoid', 0.75)
    """

    __slots__ = (
        "data", "grad", "label", "_prev", "_op", "_rule", "_args", "_closure", "__weakref__",
    )  # fmt: skip

    def __init__(self, data: float, _children=(), _op: str = "", label: str = "") -> None:
        if type(data) is not float and not is_real(data):  # a float is the common case
            raise TypeError(f"Value: data must be a real number, got {type(data).__name__}")
        if _children and (
            isinstance(_children, str) or not all(isinstance(c, Value) for c in _children)
        ):
            raise TypeError(
                f"Value: children must be Values (Value(data, children, op, label=...)), got "
                f"{_children!r}; pass a label by name: Value({data!r}, label=...)"
            )
        self.data = float(data)
        self.grad = 0.0
        self.label = label
        self._prev: tuple[Value, ...] = tuple(_children) if _children else ()
        self._op = _op
        self._rule: Rule | None = None
        self._args: tuple = ()
        self._closure = None

    @property
    def _backward(self):
        """This node's step of backward, as a function of no arguments: it adds
        d(self)/d(child) * ``self.grad`` to each child's ``grad``. It is the closure assigned
        to it, if one was (the teaching texts' way to add an op), else the op row's rule."""
        closure = getattr(self, "_closure", None)
        return self._propagate if closure is None else closure

    @_backward.setter
    def _backward(self, fn) -> None:
        # A node an op row made loses its row: backward runs a node's closure exactly when it
        # has no rule, so row-made nodes need no closure slot test (W1). Its op name stays.
        if self._rule is not None:
            op = self._op
            self._rule = None
            self._op = op
        self._closure = fn

    def _propagate(self) -> None:
        """The op row's step of backward (nothing for a leaf or a node with no rule)."""
        rule = self._rule
        if rule is None:
            return
        x, y = self._args
        out, g, parents = self.data, self.grad, self._prev
        try:
            parents[0].grad += rule.partials[0](x, y, out) * g
            if len(parents) == 2:
                parents[1].grad += rule.partials[1](x, y, out) * g
        except ARITHMETIC_ERRORS:
            labels = tuple(p.label for p in parents)
            raise rule.undefined(self._args, labels, "derivative undefined") from None
        if counting.active is not None:
            counting.active.record_backward(rule.name, len(parents))

    @classmethod
    def apply(cls, rule: Rule, x: Value, y: Value | float | None = None) -> Value:
        """Apply an op row (a `chainrule.scalar.rules.Rule`) to Values: the custom-op entry point.

        ``y`` is a second Value, a float constant (not differentiated) or None for unary ops.

        >>> from chainrule.scalar.rules import Rule
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
        if y is None:
            parents, args = (x,), (x.data,)
        elif isinstance(y, Value):
            parents, args = (x, y), (x.data, y.data)
        else:  # a constant such as pow's exponent: an argument of the rule, not a parent
            parents, args = (x,), (x.data, y)
        try:
            data = rule.forward(*args)
        except ARITHMETIC_ERRORS:
            raise rule.undefined(args, tuple(p.label for p in parents)) from None
        out = _new(x.__class__)  # a subclass's ops make its own kind (a text's Value)
        out.data = data
        out.grad = 0.0
        out.label = ""
        out._prev = parents
        out._op = rule.symbol
        out._rule = rule
        out._args = args if y is not None else (args[0], None)
        # `_closure` stays unset: only constructor-made nodes have one (read with getattr).
        if counting.active is not None:
            counting.active.record_forward(rule.name)
        return out

    @classmethod
    def _lift(cls, other: object, op: str) -> Value:
        if isinstance(other, Value):
            return other
        try:
            return cls(other)  # a constant operand: a leaf nobody differentiates
        except TypeError:
            raise TypeError(f"{op}: cannot combine a Value with {type(other).__name__}") from None

    def backward(self) -> None:
        """Fill ``grad`` of every Value this one depends on with d(self)/d(that Value).

        The seed is 1.0. Leaves (Values made by the user) accumulate: a second call adds to
        their ``grad``, as in PyTorch, so zero them between steps (``zero_grad``). Interior
        nodes hold this call's gradient. The topological order is built without recursion,
        so graphs a million ops deep work.
        """
        order = topological_order(self, leaves=False)
        for node in order:
            node.grad = 0.0
        self.grad += 1.0
        counter = counting.active
        for node in reversed(order):
            rule = node._rule
            if rule is None:  # made by the constructor: its closure, if it has one
                closure = getattr(node, "_closure", None)
                if closure is not None:
                    closure()
                continue
            # `_propagate`'s step, inline: a call per node would cost W1 about 4%.
            x, y = node._args
            out, g = node.data, node.grad
            # One or two parents (a constant operand is no parent); partial i is d(out)/d(parent i).
            parents = node._prev
            try:
                parents[0].grad += rule.partials[0](x, y, out) * g
                if len(parents) == 2:
                    parents[1].grad += rule.partials[1](x, y, out) * g
            except ARITHMETIC_ERRORS:
                labels = tuple(p.label for p in parents)
                raise rule.undefined(node._args, labels, "derivative undefined") from None
            if counter is not None:
                counter.record_backward(rule.name, len(parents))

    def zero_grad(self) -> None:
        """Set ``grad`` to 0.0 on this Value and every Value it was computed from."""
        for node in topological_order(self):
            node.grad = 0.0

    def __float__(self) -> float:
        return self.data

    def __repr__(self) -> str:
        label = f", label={self.label!r}" if self.label else ""
        return f"Value(data={self.data:.6g}, grad={self.grad:.6g}{label})"


_new = object.__new__  # Value.__new__ without two attribute lookups per op

#: The teaching material's name for `Value`: the same class, not a copy (``Scalar is Value``).
Scalar = Value


# Pushed above a node while its parents are visited: popping it means they are all in order.
# A marker, not a (node, flag) tuple per push: a million-deep walk then allocates nothing for
# Python's cyclic GC to scan (with tuples, GC took about a quarter of a million-op backward).
_PARENTS_DONE = object()


def topological_order(root: Value, leaves: bool = True) -> list[Value]:
    """Every Value ``root`` depends on, parents before children, ``root`` last; without the
    leaves (Values no op made) when ``leaves`` is false, as backward wants them.

    Iterative depth-first search, so the depth of the graph is not bounded by Python's
    recursion limit.
    """
    order: list[Value] = []
    visited: set[Value] = set()  # Values hash by identity
    stack: list = [root]
    while stack:
        node = stack.pop()
        if node is _PARENTS_DONE:
            order.append(stack.pop())  # the node below the marker
        elif node not in visited:
            visited.add(node)
            if node._prev:
                stack += (node, _PARENTS_DONE)
                stack += node._prev
            elif leaves:
                order.append(node)  # no parents to wait for
    return order
