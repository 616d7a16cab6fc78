"""What the scalar texts' modules share: naming a row-made node's op the way a text does."""

from __future__ import annotations

from ..scalar.value import Value

# The slot that holds a node's op symbol; a text's `_op` property reads and writes through it.
_OP_SLOT = Value._op


def _number(x: float) -> str:
    """An exponent as a text writes it in an op label: 2 for 2.0, 0.5 for 0.5."""
    return str(int(x)) if float(x).is_integer() else repr(x)


def op_labels(labels: dict[str, str]) -> property:
    """An ``_op`` property showing the text's label for the rows named in ``labels``.

    A label may mention the constant operand as ``{y}`` (``"**{y}"`` shows ``x ** 2`` as
    ``**2``). Other nodes show chainrule's own symbol, and a node made by the constructor shows
    the op it was given.
    """

    def get(self: Value) -> str:
        rule = self._rule
        if rule is not None and rule.name in labels:
            y = self._args[1]
            return labels[rule.name].format(y="" if y is None else _number(y))
        return _OP_SLOT.__get__(self)

    def set_(self: Value, op: str) -> None:
        _OP_SLOT.__set__(self, op)

    return property(get, set_, doc="The op that made this Value, named as the text names it.")


def parent_set(doc: str) -> property:
    """A property holding the Values one was computed from as the set the texts keep: read,
    a new set from ``_prev``; assigned, it replaces ``_prev`` (an empty set cuts the graph
    there, as in the texts)."""

    def get(self: Value) -> set[Value]:
        return set(self._prev)

    def set_(self: Value, parents) -> None:
        self._prev = tuple(parents)

    return property(get, set_, doc=doc)
