"""An optimizer's step as equations: `StepRecorder` makes each line of its update an equation
of the program, and `run_step` is the tracer's `run_update` (the seam an optimizer's ``step``
calls, `chainrule.observe.recorded_update`).

Each line of the update formula runs as in eager mode and becomes an "op" equation; a line
that changes an array in place (``exp_avg *= β1``) is recorded as a new value, and the last
value of each parameter and state array is written back once, after its update ("write"
equations; `passes.write_in_place` turns the last line into an in-place one where it can), so
that a parameter's whole update is one chain that fusion makes one kernel.

The numbers the formula takes from Python (``lr``, ``1 - β2``, ``lr / (1 - β1^t)``) are not
constants of the program: one "call" equation before the update runs the step's Python again
at each replay, arrays untouched (the optimizer's ``collect_numbers``), which counts the
steps, reads the learning rate a scheduler set, and gives those numbers to the equations.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import GraphError
from .program import Equation, Var


class StepRecorder:
    """What an optimizer's ``record_update`` tells, line by line, made equations of
    ``tracer``: ``numbers`` holds a Var per number the formulas passed, in order."""

    def __init__(self, tracer) -> None:
        self.tracer = tracer
        self.numbers: list[Var] = []
        self._now: dict[int, Var] = {}  # id(array) -> its value's Var, after in-place lines
        self._changed: dict[int, np.ndarray] = {}  # arrays changed in place, to write back
        self._made: set[int] = set()  # arrays the update made itself (never written back)
        self._param: Tensor | None = None
        self._state: dict = {}

    def begin(self, param: Tensor, state: dict) -> None:
        """One parameter's update starts."""
        self._param, self._state = param, state

    def end(self) -> None:
        """Its update is done: the arrays it changed get their last values ("write")."""
        tracer = self.tracer
        for key in self._changed:
            if key not in self._made:
                ins = (tracer.vars[key], self._now[key])
                tracer._record(Equation("write", None, "write", ins, {}, (), tracer.phase))
        self._now.clear()
        self._changed.clear()
        self._made.clear()
        self._param, self._state = None, {}

    def record(self, row, operands: tuple, result: np.ndarray, into: Any) -> None:
        """An equation of ``row`` on ``operands`` giving ``result`` (``into``: the array it
        changes in place, whose Var it becomes)."""
        like = next(o for o in operands if isinstance(o, np.ndarray))
        ins = tuple(self._var(o, like) for o in operands)
        tracer = self.tracer
        if into is None:
            var = tracer._temp(result)
            self._made.add(id(result))
        else:
            tracer._count += 1
            var = Var(f"t{tracer._count}", "temp", result.shape, result.dtype)
            self._now[id(into)] = var
            self._changed[id(into)] = into
        eq = Equation("op", row, row.name, ins, {}, (var,), tracer.phase)
        eq.scalar = result.ndim == 0
        eq.c_order = result.flags.c_contiguous
        tracer._record(eq)

    def assign(self, target: np.ndarray, value: Any) -> None:
        """``target[...] = value``: target's value is now value's."""
        if (
            not isinstance(value, np.ndarray)
            or value.shape != target.shape
            or value.dtype != target.dtype
        ):
            raise GraphError("compile: an optimizer's update assigns what the record cannot "
                             "follow (a number, or another shape or dtype)")  # fmt: skip
        if id(target) not in self._now and id(target) not in self.tracer.vars:
            self.tracer.var_of(self._owner(target))  # named, to be written at the end
        self._now[id(target)] = self._var(value, target)
        self._changed[id(target)] = target

    def _var(self, value: Any, like: np.ndarray) -> Any:
        """The Var of an operand: its value now, for an array; for a number, a new input of
        the program (0-d, in the dtype NumPy rounds it to: ``like``'s)."""
        if not isinstance(value, np.ndarray):
            tracer = self.tracer
            tracer._count += 1
            var = Var(f"h{tracer._count}", "temp", (), like.dtype, source="number")
            self.numbers.append(var)
            return var
        key = id(value)
        var = self._now.get(key)
        if var is not None:
            return var
        var = self.tracer.vars.get(key)
        if var is not None:
            return var
        return self.tracer.var_of(self._owner(value))

    def _owner(self, array: np.ndarray) -> Tensor:
        """The tensor whose array the formula reads: the parameter, its gradient, or a state
        tensor (made by this step, as on the first one)."""
        param = self._param
        candidates = [param, param.grad] if param is not None else []
        candidates += [v for v in self._state.values() if isinstance(v, Tensor)]
        for tensor in candidates:
            if tensor is not None and tensor._array is array:
                return tensor
        raise GraphError(
            "compile: an optimizer's update reads an array that is neither its parameter's, "
            "its gradient's nor its state's, so the record cannot name it; run the step "
            "uncompiled"
        )


def run_step(tracer, fn, args: tuple, template: Any) -> None:
    """The tracer's `run_update` for an optimizer that records its update: the "call" that
    gives the numbers at each replay (``fn``, the step, and its template are what two
    records compare), the update's equations after it, and its guard (``update_guard``); and
    the "call" event a replay in pieces matches."""
    optimizer = args[0]
    name = f"{type(optimizer).__name__}.step"
    guard = optimizer.update_guard()  # before the step: what its branches depend on
    start = len(tracer.equations)
    recorder = StepRecorder(tracer)
    tracer._nested += 1
    try:
        expected = optimizer.record_update(recorder)
    finally:
        tracer._nested -= 1

    def numbers() -> tuple:
        return optimizer.collect_numbers(expected)

    numbers.__qualname__ = f"{name} numbers"
    params = {"fn": fn, "template": template, "pure": False, "called": expected}
    eq = Equation("call", numbers, f"{name} numbers", (), params, tuple(recorder.numbers),
                  tracer.phase)  # fmt: skip
    tracer.equations.insert(start, eq)
    # the branches as before the step, the state tensors as after it (the first step makes
    # them): what `update_guard` gives before the next call that may replay
    tracer.checks.append((optimizer.update_guard, (guard[0], optimizer.update_guard()[1])))
    if not tracer._nested:
        # No read after it: a replay in pieces gathers the numbers where the Python calls the
        # step (its step counts and learning rate are the Python's from there on), and the
        # program runs the update at its next stop, with those numbers (`numbers_in_python`).
        info = {"template": template, "shape": None, "grad": [], "python": False,
                "alias": [], "pure": False, "numbers": numbers, "optimizer": optimizer}  # fmt: skip
        tracer._event("call", fn, (), {}, (), info)


def _handed(mailbox: list) -> tuple:
    return mailbox.pop(0)


def numbers_in_python(program, mailbox: list) -> None:
    """Make ``program``'s numbers calls take the numbers from ``mailbox``, where a replay in
    pieces puts those the Python gathered when it called the step."""
    for eq in program.equations:
        if eq.kind == "call" and "called" in eq.params:
            eq.fn = functools.partial(_handed, mailbox)


__all__ = ["StepRecorder", "numbers_in_python", "run_step"]
