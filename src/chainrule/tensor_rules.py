"""How a tensor row's rules take their arguments: `TensorRule` (a VJP or JVP that asks for
saved values by name) and its kinds, the JVP that sums one term per input, and the markers a
row's fields take. `chainrule.op` declares rows with them; `chainrule.dispatch` runs them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from operator import itemgetter

#: JVP marker for ops that are linear in their differentiable inputs: the JVP is the op
#: itself applied to the tangents (reshape, sum, transpose, indexing...).
LINEAR = "linear"

#: FLOP marker: the op's arithmetic is not counted. `chainrule.count_ops` counts FLOPs of
#: contractions only (matmul, einsum), where multiply-adds dominate; every other kind of row
#: gets this marker unless it gives a formula.
NOT_COUNTED = "not counted"


class TensorRule:
    """A VJP or JVP function with the names of what it asks for, resolved once.

    A VJP asks for ``g`` (the output's gradient) first, then by name for saved values:
    inputs (``x``, ``y``), ``out``, ``x_shape``, op parameters. Called as ``rule(g, env)``:
    ``g`` is passed as it is and the other names are read from ``env``, which the rule never
    changes. A JVP asks for tangents (``dx``) and values, all from ``env`` (pass g=None).
    """

    __slots__ = ("fn", "names", "fetch", "takes_g", "count")

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.names = tuple(inspect.signature(fn).parameters)
        if "g" in self.names[1:]:
            raise TypeError(f"rule {fn}: g must be the first parameter, got {self.names}")
        self.takes_g = self.names[:1] == ("g",)
        self._resolve(self.names[self.takes_g :])

    def _resolve(self, names: tuple[str, ...]) -> None:
        # ``itemgetter`` reads every argument in one C call; for one name it returns the
        # bare value, hence ``count`` (unpack the tuple only for two or more).
        self.fetch = itemgetter(*names) if names else None
        self.count = len(names)

    def __call__(self, g, env: dict):
        count = self.count
        if self.takes_g:
            if count > 1:
                return self.fn(g, *self.fetch(env))
            return self.fn(g, self.fetch(env)) if count else self.fn(g)
        if count > 1:
            return self.fn(*self.fetch(env))
        return self.fn(self.fetch(env)) if count else self.fn()


class Scaled(TensorRule):
    """The VJP of one input of an elementwise op: ``g * partial``, where ``partial`` is the
    local derivative ∂out/∂input and asks by name for what it needs (``x``, ``y``, ``out``)."""

    __slots__ = ()

    def __init__(self, partial: Callable) -> None:
        super().__init__(partial)
        self.names = ("g", *self.names)  # what a node saves for it: the partial's arguments

    def __call__(self, g, env: dict):
        count = self.count
        if count > 1:
            return g * self.fn(*self.fetch(env))
        return g * (self.fn(self.fetch(env)) if count else self.fn())


class ScaledBySaved(TensorRule):
    """``g * value`` for an elementwise input whose local derivative is one of the values the
    node saves, named (for mul, ∂(x*y)/∂x is ``"y"``): no partial function to call."""

    __slots__ = ("saved_name",)

    def __init__(self, saved_name: str) -> None:
        self.saved_name = saved_name
        self.names = ("g", saved_name)  # what a node saves for it (no function to fetch for)

    def __call__(self, g, env: dict):
        return g * env[self.saved_name]


#: The VJP that hands the output's gradient straight to the input (x + y, for both).
PASS = TensorRule(lambda g: g)


class SummedJVP:
    """A row's JVP: the sum of one term per input that carries a tangent (``d<name>`` in the
    env), each term a `TensorRule` that asks for that tangent and the values it needs."""

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[TensorRule | None], inputs: Sequence[str]) -> None:
        self.terms = tuple((term, "d" + name) for term, name in zip(terms, inputs) if term)

    def __call__(self, env: dict):
        total = None
        for term, tangent in self.terms:
            if env[tangent] is not None:
                value = term(None, env)
                total = value if total is None else total + value
        return total
