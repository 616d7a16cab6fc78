"""An optimizer's step as equations: `Recorder` is the `chainrule.optim.arithmetic.Arithmetic`
a tracer hands to the step, and `record_step` puts what it recorded into the program.

Each line of the update formula runs as in eager mode and becomes an "op" equation; a line
that changes an array in place (``exp_avg *= β1``) is recorded as a new value, and the last
value of each parameter and state array is written back once, after its update ("write"
equations), so that a parameter's whole update is one chain that fusion makes one kernel.

The numbers the formula takes from Python (``lr``, ``1 - β2``, ``lr / (1 - β1^t)``) are
not constants of the program: one "call" equation before the update runs the step's Python
again at each replay, arrays untouched (`chainrule.optim.arithmetic.Collector`), which counts
the steps, reads the learning rate a scheduler set, and gives those numbers to the equations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..errors import GraphError
from ..ops import elementwise
from ..optim.arithmetic import NUMPY, OPERATIONS, Arithmetic, Collector, is_number
from .program import Equation, Var

#: The op row each operation of `Arithmetic` is recorded as (in place or not).
ROWS = {"add": elementwise.add, "sub": elementwise.sub, "mul": elementwise.mul,
        "div": elementwise.div, "maximum": elementwise.maximum, "sqrt": elementwise.sqrt,
        "abs": elementwise.abs, "neg": elementwise.neg}  # fmt: skip


class Recorder(Arithmetic):
    """Eager arithmetic that also records each operation as an equation of ``tracer``."""

    def __init__(self, tracer) -> None:
        self.tracer = tracer
        self.numbers: list[Var] = []  # a Var per number the formula passed, in order
        self.called: list[str] = []  # the operations, in order (the replay checks them)
        self._now: dict[int, Var] = {}  # id(array) -> its value's Var, after in-place lines
        self._changed: dict[int, np.ndarray] = {}  # arrays changed in place, to write back
        self._made: set[int] = set()  # arrays the update made itself (never written back)
        self._param: Tensor | None = None
        self._state: dict = {}

    def begin(self, param: Tensor, state: dict) -> None:
        self._param, self._state = param, state

    def end(self) -> None:
        tracer = self.tracer
        for key in self._changed:
            if key not in self._made:
                ins = (tracer.vars[key], self._now[key])
                tracer._record(Equation("write", None, "write", ins, {}, (), tracer.phase))
        self._now.clear()
        self._changed.clear()
        self._made.clear()
        self._param, self._state = None, {}

    # Naming what the formula reads.

    def _var(self, value: Any, like: np.ndarray) -> Any:
        """The Var of an operand: its value now, for an array; for a number, a new input of
        the program (0-d, in the dtype NumPy rounds it to: ``like``'s)."""
        if is_number(value):
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

    def _record(self, name: str, operands: tuple, result: np.ndarray, into: Any = None) -> Var:
        """An equation of row ``ROWS[name]`` on ``operands`` giving ``result`` (``into``: the
        array it changed in place, whose Var it becomes)."""
        self.called.append(name if into is None else f"{name}_")
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
        row = ROWS[name]
        eq = Equation("op", row, row.name, ins, {}, (var,), tracer.phase)
        eq.scalar = result.ndim == 0
        eq.c_order = result.flags.c_contiguous
        tracer._record(eq)
        return var

    def _new(self, name: str, *operands: Any) -> np.ndarray:
        result = getattr(NUMPY, name)(*operands)
        self._record(name, operands, result)
        return result

    def _in_place(self, name: str, target: np.ndarray, b: Any) -> np.ndarray:
        # Read before the eager line changes ``target``: what the equation takes is its
        # value now.
        self._record(name, (target, b), target, into=target)
        getattr(NUMPY, f"{name}_")(target, b)
        return target

    def assign_(self, target: Any, b: Any) -> np.ndarray:
        if not isinstance(b, np.ndarray) or b.shape != target.shape or b.dtype != target.dtype:
            raise GraphError("compile: an optimizer's update assigns what the record cannot "
                             "follow (a number, or another shape or dtype)")  # fmt: skip
        self.called.append("assign_")
        self._now[id(target)] = self._var(b, target)
        self._changed[id(target)] = target
        NUMPY.assign_(target, b)
        return target


def _recording(name: str):
    """`Recorder`'s ``name`` (an operation of `OPERATIONS`): eager mode's, recorded."""
    if name.endswith("_"):

        def operation(self, target, b):
            return self._in_place(name[:-1], target, b)
    else:

        def operation(self, *operands):
            return self._new(name, *operands)

    operation.__name__ = name
    operation.__doc__ = getattr(Arithmetic, name).__doc__
    return operation


for _name in OPERATIONS:
    if _name != "assign_":
        setattr(Recorder, _name, _recording(_name))


def record_step(tracer, optimizer, name: str, template: Any, fn: Any) -> None:
    """Run ``optimizer``'s update once with a `Recorder`, and put before its equations the
    "call" that gives them their numbers at each replay (``fn``, ``template``: the step's
    own, which two records compare)."""
    start = len(tracer.equations)
    recorder = Recorder(tracer)
    optimizer.apply_update(recorder)
    expected = tuple(recorder.called)

    def numbers() -> tuple:
        collector = Collector(expected, name)
        optimizer.apply_update(collector)
        if len(collector.called) != len(expected):
            collector._note("the end", ())  # raises: the record has more
        return tuple(collector.numbers)

    numbers.__qualname__ = f"{name} numbers"
    params = {"fn": fn, "template": template, "pure": False, "called": expected}
    eq = Equation("call", numbers, f"{name} numbers", (), params, tuple(recorder.numbers),
                  tracer.phase)  # fmt: skip
    tracer.equations.insert(start, eq)


__all__ = ["ROWS", "Recorder", "record_step"]
