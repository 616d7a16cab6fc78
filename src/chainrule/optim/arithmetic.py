"""`Arithmetic`: the array operations an optimizer's update is written in, so that one copy of
each formula runs three ways.

- `NUMPY` (eager mode) computes with NumPy, in place where the formula says so.
- `Recording` computes the same values and tells a compiler's recorder each line
  (`chainrule.compiler.update`), which makes it an equation of the program; the numbers the
  formula takes from Python (``lr``, ``1 - β2``, the bias corrections of step ``t``) become
  the program's inputs.
- At each replay, `Collector` runs the formula's Python again without touching an array: it
  only gathers those numbers, in order, so that step counts, schedulers and hyperparameters
  changed since the record are the program's at every call.

A formula may branch on Python numbers and flags (``if momentum != 0``), never on array
values; the compiler guards the branches it took (`Optimizer.update_guard`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import GraphError
from ..ops import elementwise

Operand = Any  # an array, a number, or what a recording or collecting `Arithmetic` gives back


def _array(value: Any) -> np.ndarray:
    """``value`` as an array: NumPy gives a scalar for a 0-d operation, and the formula may
    then change it in place."""
    return value if type(value) is np.ndarray else np.asarray(value)


class Arithmetic:
    """Eager arithmetic on NumPy arrays (`NUMPY`): each method is one NumPy call. Names ending
    in ``_`` change their first argument in place and return it; the others return a new
    array. Operands are arrays of the parameter's dtype or Python numbers (rounded to that
    dtype, as NumPy does with a Python number)."""

    def begin(self, param: Any, state: dict) -> None:
        """One parameter's update starts (``state``: its state dict); eager mode has nothing
        to do."""

    def end(self) -> None:
        """The parameter's update is done."""

    def add(self, a: Operand, b: Operand) -> Operand:
        """a + b."""
        return _array(np.add(a, b))

    def sub(self, a: Operand, b: Operand) -> Operand:
        """a - b."""
        return _array(np.subtract(a, b))

    def mul(self, a: Operand, b: Operand) -> Operand:
        """a * b."""
        return _array(np.multiply(a, b))

    def div(self, a: Operand, b: Operand) -> Operand:
        """a / b."""
        return _array(np.divide(a, b))

    def maximum(self, a: Operand, b: Operand) -> Operand:
        """The larger of a and b, elementwise (nan wins)."""
        return _array(np.maximum(a, b))

    def sqrt(self, a: Operand) -> Operand:
        """The square root."""
        return _array(np.sqrt(a))

    def abs(self, a: Operand) -> Operand:
        """|a|."""
        return _array(np.abs(a))

    def neg(self, a: Operand) -> Operand:
        """-a."""
        return _array(np.negative(a))

    def add_(self, target: Operand, b: Operand) -> Operand:
        """target += b."""
        return np.add(target, b, out=target)

    def sub_(self, target: Operand, b: Operand) -> Operand:
        """target -= b."""
        return np.subtract(target, b, out=target)

    def mul_(self, target: Operand, b: Operand) -> Operand:
        """target *= b."""
        return np.multiply(target, b, out=target)

    def div_(self, target: Operand, b: Operand) -> Operand:
        """target /= b."""
        return np.divide(target, b, out=target)

    def maximum_(self, target: Operand, b: Operand) -> Operand:
        """target = max(target, b)."""
        return np.maximum(target, b, out=target)

    def assign_(self, target: Operand, b: Operand) -> Operand:
        """target[...] = b."""
        np.copyto(target, b, casting="same_kind")
        return target

    def lerp_(self, start: Operand, end: Operand, weight: float) -> Operand:
        """start += weight * (end - start), in place, rounded as PyTorch's lerp kernel does:
        from the start for a small weight, from the end for a large one."""
        if weight < 0.5:
            step = self.sub(end, start)
            self.mul_(step, weight)
            return self.add_(start, step)
        return self.assign_(start, self.sub(end, self.mul(self.sub(end, start), 1 - weight)))


#: Eager mode's arithmetic.
NUMPY = Arithmetic()

#: What `Collector` gives back for an array: nothing is computed.
_NOTHING = None

#: The operations a formula can call (the in-place ones end in ``_``).
OPERATIONS = (
    "add", "sub", "mul", "div", "maximum", "sqrt", "abs", "neg",
    "add_", "sub_", "mul_", "div_", "maximum_", "assign_",
)  # fmt: skip


class Collector(Arithmetic):
    """The formula's Python without its arrays: gathers, in order, the numbers it passes to
    operations (``numbers``) and the operations' names (``called``); `check` compares those
    with the record's."""

    def __init__(self) -> None:
        self.numbers: list[float] = []
        self.called: list[str] = []

    def check(self, expected: tuple[str, ...], owner: str) -> None:
        """Raise `GraphError` unless the formulas called the operations ``expected`` (the
        record's), in order: another branch, taken where the guards did not see it."""
        called = self.called
        if len(called) == len(expected) and tuple(called) == expected:
            return
        at = next((i for i, (a, b) in enumerate(zip(called, expected)) if a != b), None)
        at = min(len(called), len(expected)) if at is None else at
        ran = called[at] if at < len(called) else "nothing more"
        recorded = expected[at] if at < len(expected) else "nothing more"
        raise GraphError(
            f"compiled {owner}: the update ran {ran} where the record has {recorded} (the "
            "optimizer's formula took another branch than when it was recorded); compile the "
            "step again or run it uncompiled"
        )


def _collecting(name: str):
    in_place = name.endswith("_")

    # At each replay of a compiled step, for every line of every parameter's update: short.
    def operation(self, *operands):
        self.called.append(name)
        for value in operands:
            kind = type(value)
            if kind is float or kind is int:
                self.numbers.append(value)
            elif kind is np.float64 or kind is np.float32:
                self.numbers.append(float(value))
        return operands[0] if in_place else _NOTHING

    operation.__name__ = name
    operation.__doc__ = f"Note {name} and its numbers; compute nothing."
    return operation


for _name in OPERATIONS:
    setattr(Collector, _name, _collecting(_name))


#: The op row each operation is recorded as (in place or not; ``assign_`` is no op).
ROWS = {"add": elementwise.add, "sub": elementwise.sub, "mul": elementwise.mul,
        "div": elementwise.div, "maximum": elementwise.maximum, "sqrt": elementwise.sqrt,
        "abs": elementwise.abs, "neg": elementwise.neg}  # fmt: skip


class Recording(Arithmetic):
    """Eager arithmetic that tells ``sink`` (a compiler's recorder) each operation: its op
    row, its operands, its result and the array it changed in place (``into``), and ``called``
    the operations' names, in order (what `Collector` checks at each replay)."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.called: list[str] = []

    def begin(self, param: Any, state: dict) -> None:
        self.sink.begin(param, state)

    def end(self) -> None:
        self.sink.end()

    def _new(self, name: str, operands: tuple) -> np.ndarray:
        result = getattr(NUMPY, name)(*operands)
        self.called.append(name)
        self.sink.record(ROWS[name], operands, result, None)
        return result

    def _in_place(self, name: str, target: np.ndarray, b: Any) -> np.ndarray:
        self.called.append(f"{name}_")
        # Told before the eager line changes ``target``: the operands are their values now.
        self.sink.record(ROWS[name], (target, b), target, target)
        return getattr(NUMPY, f"{name}_")(target, b)

    def assign_(self, target: Any, b: Any) -> Any:
        self.called.append("assign_")
        self.sink.assign(target, b)
        return NUMPY.assign_(target, b)


def _recording(name: str):
    if name.endswith("_"):

        def operation(self, target, b):
            return self._in_place(name[:-1], target, b)
    else:

        def operation(self, *operands):
            return self._new(name, operands)

    operation.__name__ = name
    operation.__doc__ = f"{getattr(Arithmetic, name).__doc__} Recorded."
    return operation


for _name in OPERATIONS:
    if _name != "assign_":
        setattr(Recording, _name, _recording(_name))


__all__ = [
    "NUMPY", "OPERATIONS", "ROWS", "Arithmetic", "Collector", "Recording",
]  # fmt: skip
