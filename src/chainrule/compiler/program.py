"""The compiler's IR: a `Program` is a flat list of `Equation`s over named `Var`s, the record of
one call of a function, forward, backward and updates alike, in the spirit of a jaxpr.

``print(program)`` shows one line per equation; `Program.replay_source` is the Python the
replay runs: straight-line code, one NumPy call per line, over local variables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import accumulate_grad
from ..dispatch import promote

#: What a `Var` holds: an argument's array, a tensor read as it is at each call (a parameter,
#: a buffer), a constant folded into the program, or what an equation computes.
VAR_KINDS = ("input", "state", "const", "temp")

#: What an `Equation` does when replayed.
#: - "op": an op row's forward on arrays (``fn`` is the `Op`);
#: - "call": a function run whole (``fn``), as marked by `observe.replayed_whole`: an
#:   optimizer's step, zero_grad, a random draw;
#: - "write": copy ``ins[1]`` into the array ``ins[0]`` (an in-place op's write);
#: - "grad": add ``ins[0]`` into a leaf's ``.grad`` (``params["leaf"]``), as backward does;
#: - "read": a graph break: the function's Python needs values here (``name`` says what read
#:   them, ``params["at"]`` where), or has just seen a whole call's effects; the replay, a
#:   generator then, hands it the arrays of ``ins`` and waits (`chainrule.compiler.pieces`);
#: - "fused": a chain of elementwise "op" equations computed by one kernel (``fn`` is a
#:   `chainrule.compiler.fusion.FusedGroup`, holding them as its ``members``): ``outs`` are
#:   the members' results read elsewhere; the others are never made.
EQUATION_KINDS = ("op", "call", "write", "grad", "read", "fused")

#: The phase of the equations that compute the gradients of a call's results, run when the
#: caller's backward reaches them (a compiled function whose results require grad).
RESULT_BACKWARD = "backward of the results"

_SHORT_DTYPES = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
                 "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool",
                 "complex64": "c64", "complex128": "c128"}  # fmt: skip


def is_seed(var: Var) -> bool:
    """Whether ``var`` is the gradient of a result, given to the results' backward."""
    return var.kind == "input" and type(var.source) is tuple and var.source[0] == "seed"


class Var:
    """A named array of the program. ``kind`` is one of `VAR_KINDS`; an "input" var reads
    argument ``source`` (its position among the call's tensors), a "state" var reads the
    tensor ``source`` at each call (``value`` is its label, a parameter's name when known),
    a "const" var holds ``value``."""

    __slots__ = ("name", "kind", "shape", "dtype", "source", "value")

    def __init__(self, name: str, kind: str, shape: tuple, dtype, source: Any = None,
                 value: Any = None) -> None:  # fmt: skip
        self.name, self.kind, self.shape, self.dtype = name, kind, tuple(shape), np.dtype(dtype)
        self.source, self.value = source, value

    @property
    def type(self) -> str:
        """Its dtype and shape, as a jaxpr writes them: ``f32[64,2]``."""
        short = _SHORT_DTYPES.get(self.dtype.name, self.dtype.name)
        return f"{short}[{','.join(map(str, self.shape))}]"

    def __repr__(self) -> str:
        return self.name


class Equation:
    """One step of a program: ``outs = fn(*ins, **params)``. ``kind`` is one of
    `EQUATION_KINDS`; ``phase`` is "forward", "backward" or "update" (what ran it while
    tracing); ``ins`` and ``params`` hold Vars or literal values, tuples of them included.

    For an "op": ``promote`` replays `apply_op`'s float promotion, ``scalar`` wraps a NumPy
    scalar result as a 0-d array, ``alias`` says the output shares memory with an input (a
    view: passes must not reuse or reorder around it), ``buffer`` numbers the array the
    memory plan lets its ufunc write into (``out=``); for a "fused" one, a tuple of them, one per
    output (None where it has none)."""

    __slots__ = ("kind", "fn", "name", "ins", "params", "outs", "phase", "promote", "scalar",
                 "alias", "buffer", "c_order", "into")  # fmt: skip

    def __init__(self, kind: str, fn: Any, name: str, ins: tuple, params: dict, outs: tuple,
                 phase: str) -> None:  # fmt: skip
        self.kind, self.fn, self.name, self.ins, self.params = kind, fn, name, ins, params
        self.outs, self.phase = outs, phase
        self.promote = self.scalar = self.alias = False
        self.buffer: int | None = None  # the memory plan's buffer its ufunc writes into
        self.c_order = False  # its result was C-contiguous when recorded
        #: The array its ufunc writes its result into, in place (for a "fused" one, a tuple
        #: of them, one per output, None where it has none).
        self.into: Any = None

    def inputs(self) -> list[Var]:
        """The Vars it reads, in ``ins`` and ``params`` (inside tuples too)."""
        found: list[Var] = []
        _collect(self.ins, found)
        _collect(tuple(self.params.values()), found)
        return found

    def __str__(self) -> str:
        args = [_show(a) for a in self.ins]
        args += [f"{key}={_show(value)}" for key, value in self.params.items()]
        if self.kind == "write":
            return f"{self.ins[0]}[...] = {self.ins[1]}"
        if self.kind == "read":
            held = f" {', '.join(_show(a) for a in self.ins)}" if self.ins else ""
            return f"yield{held}  # {self.name}, {self.params['at']}"
        if self.kind == "grad":
            label = self.params["label"]
            if self.params["mode"] == "add":
                return f"{self.outs[0]}:{self.outs[0].type} = {label}.grad += {self.ins[0]}"
            return f"{label}.grad = {self.ins[0] if self.ins else None}"
        if self.kind == "call":
            return (
                f"{', '.join(f'{v.name}:{v.type}' for v in self.outs)} = " if self.outs else ""
            ) + (f"call {self.name}({', '.join(_show(a) for a in self.ins)})")
        call = f"{self.name}({', '.join(args)})"
        if self.kind == "fused":  # the members below, indented
            members = "".join(f"\n      | {member}" for member in self.fn.members)
            into = ", ".join(f"{v} into {t}" for v, t in zip(self.outs, self.into or ()) if t)
            into = f"  # {into}" if into else ""
            outs = ", ".join(f"{v.name}:{v.type}" for v in self.outs)
            return f"{outs} = {call}{into}{members}"
        if not self.outs:
            return call
        into = f"  # into {self.into}" if self.into is not None else ""
        return f"{', '.join(f'{v.name}:{v.type}' for v in self.outs)} = {call}{into}"


def _buffer(eq: Equation, bound: dict) -> str:
    """The ``out=`` argument of an equation the memory plan gave buffer ``eq.buffer``, the
    buffer made the first time it is named."""
    name = f"B{eq.buffer}"
    if name not in bound:
        bound[name] = np.empty(eq.outs[0].shape, eq.outs[0].dtype)
    return f"out={name}"


def map_structure(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to each item that is not a tuple, list or dict (those are
    rebuilt around the results), as the arguments of a call are walked."""
    if type(value) in (tuple, list):
        mapped = [map_structure(v, fn) for v in value]
        return tuple(mapped) if type(value) is tuple else mapped
    if type(value) is dict:
        return {k: map_structure(v, fn) for k, v in value.items()}
    return fn(value)


def _collect(values: tuple, found: list) -> None:
    for value in values:
        if isinstance(value, Var):
            found.append(value)
        elif type(value) in (tuple, list):
            _collect(tuple(value), found)


def _show(value: Any) -> str:
    if isinstance(value, Var):
        return value.name
    if type(value) in (tuple, list):
        inner = ", ".join(_show(v) for v in value)
        return f"({inner},)" if len(value) == 1 and type(value) is tuple else f"({inner})"
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return np.dtype(value).name
    if isinstance(value, np.ndarray):
        return f"array{list(value.shape)}"
    if callable(value) and hasattr(value, "__qualname__"):
        return value.__qualname__
    return repr(value)


class Program:
    """The record of one call: ``inputs`` (the call's tensors), ``state`` (tensors read at each
    call), ``consts``, the ``equations`` in order, and ``outputs`` (the Vars the call returns,
    in the order of the result's tensors). ``str(program)`` prints it, phase by phase."""

    def __init__(self, name: str, inputs: list[Var], state: list[Var], consts: list[Var],
                 equations: list[Equation], outputs: list[Var],
                 backward_outputs: int = 0) -> None:  # fmt: skip
        self.name, self.inputs, self.state, self.consts = name, inputs, state, consts
        self.equations, self.outputs = equations, outputs
        #: The last this many outputs are gradients that the equations of phase
        #: `RESULT_BACKWARD` compute, later, when the caller's backward reaches the results.
        self.backward_outputs = backward_outputs

    def split(self) -> tuple[list[Equation], list[Equation], list[Var]]:
        """(the equations run by the call, those run by the results' backward, the Vars the
        first part hands to the second)."""
        later = [eq for eq in self.equations if eq.phase == RESULT_BACKWARD]
        now = [eq for eq in self.equations if eq.phase != RESULT_BACKWARD]
        made_later = {v for eq in later for v in eq.outs}
        wanted = [v for eq in later for v in eq.inputs()]
        wanted += self.outputs[len(self.outputs) - self.backward_outputs :]
        saved = {
            id(v): v for v in wanted
            if v not in made_later and v.kind != "const" and not is_seed(v)
        }  # fmt: skip
        return now, later, list(saved.values())

    def counts(self) -> dict[str, int]:
        """Equations per phase."""
        counts: dict[str, int] = {}
        for eq in self.equations:
            counts[eq.phase] = counts.get(eq.phase, 0) + 1
        return counts

    def __str__(self) -> str:
        lines = [f"program {self.name}({', '.join(f'{v}:{v.type}' for v in self.inputs)}):"]
        for v in self.state:
            named = "" if v.value == v.name else f" = {v.value}"  # a parameter's name, if known
            lines.append(f"  state {v}:{v.type}{named}")
        for v in self.consts:
            shown = v.value if np.ndim(v.value) == 0 else f"array{list(np.shape(v.value))}"
            lines.append(f"  const {v}:{v.type} = {shown}")
        phase = None
        for eq in self.equations:
            if eq.phase != phase:
                phase = eq.phase
                lines.append(f"  # {phase}")
            lines.append(f"  {eq}")
        cut = len(self.outputs) - self.backward_outputs
        lines.append(f"  return {', '.join(v.name for v in self.outputs[:cut])}".rstrip())
        if self.backward_outputs:
            lines.append(f"  gradients {', '.join(v.name for v in self.outputs[cut:])}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {phase}" for phase, n in self.counts().items())
        return f"<Program {self.name}: {len(self.equations)} equations ({counts})>"

    # The replay.

    def replay_source(self) -> str:
        """The Python source of the replay: ``replay(tensors) -> arrays``, one line per
        equation, globals named after what they hold."""
        return self._generate()[0]

    def build(self, literals: list | None = None) -> tuple[Callable, Callable | None]:
        """The replay, a function of the call's input tensors returning the results' arrays
        and then the arrays saved for the results' backward; and that backward, a function of
        (the saved arrays, the results' gradients) returning the gradients (None when the
        results need none). A program with "read" equations replays as a generator that
        yields at each of them; ``literals`` is the list its ``L[k]`` read, which a replay in
        pieces fills before running on."""
        source, bound = self._generate()
        namespace = dict(bound, L=literals)
        exec(compile(source, f"<chainrule program {self.name}>", "exec"), namespace)  # noqa: S102
        return namespace["replay"], namespace.get("replay_backward")

    def _generate(self) -> tuple[str, dict]:
        bound: dict[str, Any] = {
            "Tensor": Tensor, "array": np.array, "asarray": np.asarray, "copyto": np.copyto,
            "ascontiguousarray": np.ascontiguousarray,
            "promote": promote,
            "accumulate_grad": accumulate_grad,
        }  # fmt: skip
        counter = [0]

        def bind(value: Any, hint: str, exact: bool = False) -> str:
            """A global of the replay holding ``value``: named ``hint`` (its Var's name, so
            that ``mul_t2`` computes t2), or ``hint_n`` for literals."""
            if exact:
                bound[hint] = value
                return hint
            counter[0] += 1
            name = f"{hint}_{counter[0]}"
            bound[name] = value
            return name

        def expr(value: Any) -> str:
            if isinstance(value, Var):
                return value.name
            if type(value) in (tuple, list):
                inner = "".join(f"{expr(v)}, " for v in value)
                return f"({inner})" if type(value) is tuple else f"[{inner}]"
            if value is None or type(value) in (bool, int) or isinstance(value, str):
                return repr(value)
            return bind(value, "k")

        now, later, saved = self.split()
        results = self.outputs[: len(self.outputs) - self.backward_outputs]
        lines = ["def replay(tensors):"]
        for v in self.inputs:
            lines.append(f"    {v.name} = tensors[{v.source}]._array")
        for v in self.state:
            lines.append(f"    {v.name} = {bind(v.source, f'S_{v.name}', exact=True)}._array")
        for v in self.consts:
            bound[v.name] = v.value
        self._lines(now, lines, bind, expr, bound)
        lines.append(f"    return ({''.join(f'{v.name}, ' for v in (*results, *saved))})")
        if self.backward_outputs:
            lines.append("")
            lines.append("def replay_backward(saved, seeds):")
            lines.append(f"    ({''.join(f'{v.name}, ' for v in saved)}) = saved")
            seeds = sorted({v for eq in later for v in eq.inputs() if is_seed(v)},
                           key=lambda v: v.source[1])  # fmt: skip
            for v in seeds:
                lines.append(f"    {v.name} = seeds[{v.source[1]}]")
            self._lines(later, lines, bind, expr, bound)
            grads = self.outputs[len(self.outputs) - self.backward_outputs :]
            lines.append(f"    return ({''.join(f'{v.name}, ' for v in grads)})")
        return "\n".join(lines) + "\n", bound

    @staticmethod
    def _lines(equations: list[Equation], lines: list, bind, expr, bound: dict) -> None:
        # Arrays known C-ordered, that a fused kernel reads as they are: a kernel's results
        # (NumPy makes them C-ordered, or they are the memory plan's), and an op's 1-d result
        # of its own (a new array; an op giving back an input, or a view, is an alias).
        ordered: set[Var] = set()
        for eq in equations:
            if eq.kind == "fused" or (eq.kind == "op" and not eq.alias):
                ordered.update(v for v in eq.outs if eq.kind == "fused" or len(v.shape) == 1)
            args = [expr(a) for a in eq.ins]
            if eq.kind == "op":
                out = eq.outs[0].name
                args += [f"{k}={expr(v)}" for k, v in eq.params.items()]
                fn = bind(eq.fn.forward, f"{eq.fn.name.replace('.', '_')}_{out}", exact=True)
                if eq.fn.check is not None:
                    check = bind(eq.fn.check, f"check_{out}", exact=True)
                    lines.append(f"    {check}({', '.join(args)})")
                if eq.buffer is not None:
                    args.append(_buffer(eq, bound))
                elif eq.into is not None:
                    args.append(f"out={eq.into.name}")
                lines.append(f"    {out} = {fn}({', '.join(args)})")
                if eq.scalar:
                    lines.append(f"    {out} = asarray({out})")
                if eq.promote:
                    arrays = "".join(f"{expr(a)}, " for a in eq.ins)
                    params = "{" + ", ".join(f"{k!r}: {expr(v)}" for k, v in eq.params.items())
                    op = bind(eq.fn, f"op_{out}", exact=True)
                    lines.append(f"    {out} = promote({op}, {out}, ({arrays}), {params}}})")
            elif eq.kind == "call":
                fn = (
                    bind(eq.fn, f"call_{eq.outs[0].name}", exact=True)
                    if eq.outs
                    else bind(eq.fn, "call")
                )
                outs = "".join(f"{v.name}, " for v in eq.outs)
                call = f"{fn}({', '.join(args)})"
                lines.append(f"    {outs}= {call}" if eq.outs else f"    {call}")
            elif eq.kind == "fused":
                group = eq.fn
                fn = bind(group.kernel, f"fused_{eq.outs[0].name}", exact=True)
                outs = "".join(f"{v.name}, " for v in eq.outs)
                args = group.arguments(args, ordered) + [bind(w, "W") for w in group.scratch]
                if eq.buffer is not None or eq.into is not None:
                    # the memory plan's arrays, or the arrays written in place; None elsewhere
                    planned = ""
                    buffers = eq.buffer or (None,) * len(eq.outs)
                    for v, b, t in zip(eq.outs, buffers, eq.into or (None,) * len(eq.outs)):
                        if b is not None and f"B{b}" not in bound:
                            bound[f"B{b}"] = np.empty(v.shape, v.dtype)
                        row = "[..., 0]" if group.is_row(v) else ""  # given without that axis
                        if t is not None:
                            planned += f"{t.name}, "
                        else:
                            planned += "None, " if b is None else f"B{b}{row}, "
                    args.append(f"out=({planned})")
                lines.append(f"    {outs if len(eq.outs) > 1 else eq.outs[0].name} = "
                             f"{fn}({', '.join(args)})")  # fmt: skip
                for v in eq.outs:
                    if group.is_row(v):
                        lines.append(f"    {v.name} = {v.name}[..., None]")
            elif eq.kind == "write":
                lines.append(f"    copyto({args[0]}, {args[1]}, casting='same_kind')")
            elif eq.kind == "read":
                lines.append(f"    yield ({''.join(f'{a}, ' for a in args)})")
            elif eq.kind == "grad":
                leaf = eq.params["leaf"]
                label = eq.params["label"]
                if type(leaf) is int:
                    target = f"tensors[{leaf}]"
                elif bound.get(f"S_{label}") is leaf:
                    target = f"S_{label}"  # the state tensor the replay reads
                else:
                    target = bind(leaf, "leaf")
                if eq.params["mode"] == "add" and eq.params.get("fresh"):
                    # .grad was just cleared: set it (a copy unless the program owns the array)
                    out = eq.outs[0].name
                    value = args[0] if eq.params["owned"] else f"array({args[0]})"
                    lines.append(f"    {out} = {value}")
                    lines.append(f"    {target}._grad = Tensor._make({out})")
                elif eq.params["mode"] == "add":
                    owned = eq.params["owned"]
                    out = eq.outs[0].name
                    lines.append(f"    {out} = accumulate_grad({target}, {args[0]}, {owned})")
                else:
                    value = f"Tensor._make({args[0]})" if args else "None"
                    lines.append(f"    {target}._grad = {value}")


__all__ = [
    "EQUATION_KINDS", "Equation", "Program", "RESULT_BACKWARD", "VAR_KINDS", "Var", "is_seed",
    "map_structure",
]  # fmt: skip
