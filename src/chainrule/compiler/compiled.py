"""`compile`: record a function's call once, check the record on a second call, then replay it
without the engine's bookkeeping; `make_program` gives the record itself.

How a call is served:

1. Its *signature* (the input tensors' shapes, dtypes and requires_grad, the other
   arguments' values, grad mode) picks a cache entry; a record also checks its *guards* (the
   shapes and requires_grad of the tensors it reads as state, the train/eval mode of the
   modules it called).
2. The first call with a signature runs eagerly while a `Tracer` records it. The second runs
   eagerly and is recorded again; the two records must agree, equation for equation. This is
   how the compiler tells state (the same tensor both times: a parameter, read at each call)
   from constants (equal values: a mask made inside the function) and finds what the record
   cannot replay (a tensor made from data outside the record, which differs between calls).
3. From then on the program, after `optimize`, is replayed: whole, without the function's
   Python, or, when the function reads values into Python (``.item()``, ``print``), *in
   pieces* (`chainrule.compiler.pieces`): its Python runs again and its tensor work is the
   program's, matched op by op; a call that goes another way runs eagerly from there.

What the record cannot follow (a `Function` subclass, hooks), a disagreement between the
records, or more signatures than the cache holds makes the function run eagerly for that
signature, with one warning that says why.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import observe
from .._tensor import Tensor
from ..autograd import node_order
from ..errors import GraphError
from ..graph import Node, edge_of, state
from ..numpy_warnings import restore, silence
from .fusion import passes
from .passes import optimize
from .pieces import Pieces, Unrunnable
from .program import Program, Var, map_structure
from .tracer import Tracer, _Slot, stand_in
from .update import numbers_in_python

#: Signatures a compiled function keeps records for before running new ones eagerly
#: (``torch.compile``'s recompile limit).
CACHE_SIZE = 8


class _Eager(Exception):
    """A record cannot be replayed: the reason, for the warning."""


class _Record:
    """A verified program for one signature, ready to replay, with its guards."""

    def __init__(self, program: Program, spec: Any, guards: list, modules: list,
                 values: list, literals: list, checks: list = ()) -> None:  # fmt: skip
        self.program, self.spec = program, spec
        self._checks = list(checks)  # (function, value): what the record's Python decided
        self.replay, self.replay_backward = program.build(literals)
        self.results = len(program.outputs) - program.backward_outputs
        self.leaves: list = []  # where the results' gradients go: input positions or tensors
        self.has_grad: list[bool] = []  # per leaf, whether the results' backward reaches it
        self.result_meta: tuple = ()  # (shape, dtype) per result that requires grad
        self._guards = guards  # (tensor, shape, dtype, requires_grad) per state tensor
        self._modules = modules  # (module, training) per module called
        self._values = values  # (position, array) per input that must keep its values
        self._seen = [None] * len(guards)  # per state tensor, its array when last checked
        #: The record's events, when it replays in pieces (it went on past graph breaks),
        #: and the numbers its program reads from the Python at each call (``L[k]``).
        self.events: list | None = None
        self.literals = literals
        self.placeholders: dict = {}  # id(Var) -> the array its pending tensors start with
        self.warned = False  # whether a call that left the record was warned about
        self.mailbox: list = []  # in pieces: numbers gathered by the Python for the program

    def holds(self, tensors: list[Tensor]) -> bool:
        """Whether the state, the modules and the inputs are still as they were recorded."""
        for i, values in self._values:
            if not np.array_equal(tensors[i]._array, values):
                return False
        seen = self._seen
        for i, (tensor, shape, dtype, requires_grad) in enumerate(self._guards):
            data = tensor._array
            if tensor._requires_grad is not requires_grad:
                return False
            if data is not seen[i]:  # updated in place, the usual case, it is the same array
                if data.shape != shape or data.dtype != dtype:
                    return False
                seen[i] = data
        if not all(module.training is training for module, training in self._modules):
            return False
        return all(check() == value for check, value in self._checks)

    def run(self, tensors: list[Tensor]) -> Any:
        quiet = silence()  # NumPy's RuntimeWarnings silent, as in eager (numpy_warnings)
        try:
            arrays = self.replay(tensors)
        finally:
            restore(quiet)
        if self.replay_backward is None:
            return _rebuild(self.spec, arrays, tensors)
        node = ReplayedBackward(self, arrays[self.results :], tensors)
        return _rebuild(self.spec, arrays, tensors, node)


class ReplayedBackward(Node):
    """The graph node of a replayed call's results: its backward runs the program's
    equations of phase `RESULT_BACKWARD` on the arrays the replay saved, and sends the
    gradients to the leaves the record found (parameters, the call's input tensors)."""

    __slots__ = ("record", "saved")

    @property
    def name(self) -> str:
        return "CompiledBackward"

    def __repr__(self) -> str:
        return "<CompiledBackward>"

    def __init__(self, record: _Record, saved: tuple, tensors: list[Tensor]) -> None:
        edges = tuple(edge_of(tensors[leaf]) if type(leaf) is int else leaf
                      for leaf in record.leaves)  # fmt: skip
        super().__init__(edges, record.result_meta, ())
        self.record, self.saved = record, saved

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        if create_graph:
            raise GraphError(
                "compiled backward: the gradients of a compiled function's results cannot be "
                "differentiated again (create_graph=True); call the function uncompiled"
            )
        if self.saved is None:
            raise GraphError(
                "compiled backward: trying to backward through the graph a second time, but "
                "its saved arrays were freed; pass retain_graph=True to the first backward()"
            )
        arrays = [g._array if isinstance(g, Tensor) else g for g in grads]
        computed = iter(self.record.replay_backward(self.saved, arrays))
        if release:
            self.saved = None
        return [next(computed) if has else None for has in self.record.has_grad]

    def release(self) -> None:
        self.saved = None


class _Entry:
    """What a compiled function knows about one signature."""

    def __init__(self) -> None:
        self.records: list[_Record] = []
        self.pending: tuple | None = None  # the first trace, waiting for a second to agree
        self.eager: str | None = None  # why this signature runs eagerly
        self.retried = False  # whether the last two records disagreed (a third is made)


class CompiledFunction:
    """A function that records its first calls and replays them (see `compile`).

    ``program`` is the last program built (None before the second call with a signature);
    ``stats`` counts traces, replays and eager calls.
    """

    def __init__(self, fn: Callable, fullgraph: bool = False, name: str | None = None,
                 fuse: bool = True) -> None:  # fmt: skip
        self.fn = fn
        self.fullgraph = fullgraph
        self.fuse = fuse  # group elementwise chains into Numba kernels (when it is installed)
        self.name = name or getattr(fn, "__name__", type(fn).__name__)
        self.program: Program | None = None
        self.stats = {"traced": 0, "replayed": 0, "eager": 0}
        self._entries: dict[tuple, _Entry] = {}
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args, **kwargs):
        observer = observe.current
        if observer is None:
            return self._call(args, kwargs)
        if observer.recording():  # inside another record: its ops are that record's
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        # Inside a profile: the call is one span, "compiled <name>", its own work unwatched
        # (torch.compile's regions show so in PyTorch's profiler).
        span = observer.span_begins(f"compiled {self.name}", "user")
        observer.detach()
        try:
            return self._call(args, kwargs)
        finally:
            observer.attach()
            observer.span_ends(span)

    def _call(self, args: tuple, kwargs: dict):
        tensors: list[Tensor] = []
        try:
            if kwargs or not all(type(a) is Tensor for a in args):
                key = (state.grad_enabled, _signature((args, kwargs), tensors))
            else:  # tensors alone: the usual step(x, y), keyed without the general walk
                tensors = list(args)
                key = (state.grad_enabled, *[(a._array.shape, a._array.dtype, a._requires_grad)
                                             for a in args])  # fmt: skip
        except TypeError:  # an argument that cannot be told apart by value (unhashable)
            key = None
        if key is None:
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        entry = self._entries.get(key)
        if entry is None:
            if len(self._entries) >= CACHE_SIZE:
                self._warn(f"more than {CACHE_SIZE} signatures were recorded")
                self.stats["eager"] += 1
                return self.fn(*args, **kwargs)
            entry = self._entries[key] = _Entry()
        if entry.eager is None:
            for record in entry.records:
                if record.holds(tensors):
                    if record.events is not None:
                        return self._in_pieces(record, args, kwargs, tensors)
                    self.stats["replayed"] += 1
                    return record.run(tensors)
        if entry.eager is not None:
            self.stats["eager"] += 1
            return self.fn(*args, **kwargs)
        return self._trace(entry, args, kwargs, tensors)

    def _in_pieces(self, record: _Record, args: tuple, kwargs: dict, tensors: list[Tensor]):
        """Run the function's Python again, its tensor work from the record (`pieces`)."""
        pieces = Pieces(record, tensors)
        result = pieces.call(self.fn, args, kwargs)
        if pieces.diverged is None:
            self.stats["replayed"] += 1
            return result
        self.stats["eager"] += 1
        if not record.warned:
            record.warned = True
            warnings.warn(
                f"compile({self.name}): a call did {pieces.diverged}, where the record went "
                "another way; it ran eagerly from there (each call that does so will)",
                stacklevel=3,
            )
        return result

    def _trace(self, entry: _Entry, args: tuple, kwargs: dict, tensors: list[Tensor]):
        if any(t._grad_fn is not None for t in tensors):  # inputs with gradient history
            stands = {id(t): stand_in(t) for t in tensors if t._grad_fn is not None}
            args, kwargs = _replaced((args, kwargs), stands)
            tensors = [stands.get(id(t), t) for t in tensors]
        tracer = Tracer(tensors, self.fullgraph)
        with tracer:
            result = self.fn(*args, **kwargs)
        self.stats["traced"] += 1
        try:
            if tracer.broken is not None:
                raise _Eager(f"graph break: {tracer.broken}")
            if tracer.reads:
                tracer.drop_python_calls()
                spec = _pieces_spec(result, tracer)
            else:
                tracer.drop_barriers()
                spec = _output_spec(result, tracer)
            if tracer.grad_results:
                tracer.trace_result_backward(tracer.grad_results)
                if tracer.broken is not None:
                    raise _Eager(f"graph break in the results' backward: {tracer.broken}")
            first, entry.pending = entry.pending, (tracer, spec)
            if first is not None:
                try:
                    record = _verified(first, (tracer, spec), self.name, self.fuse)
                except _Eager:
                    if entry.retried:
                        raise
                    # The first call may do what later ones do not (an optimizer's first
                    # step makes its state, a module builds a buffer lazily): the second and
                    # third records decide, as torch.compile compiles again once.
                    entry.retried = True
                    return result
                entry.records.append(record)
                entry.pending = None
                entry.retried = False  # a later recording (a guard changed) may retry too
                self.program = record.program
        except _Eager as reason:
            entry.eager = str(reason)
            entry.pending = None
            self._warn(str(reason))
        return result

    def _warn(self, reason: str) -> None:
        warnings.warn(f"compile({self.name}): {reason}; this signature runs eagerly", stacklevel=4)

    def __getattr__(self, name: str):
        """What the compiled module has (``parameters()``, ``state_dict()``, ``eval()``...),
        as ``torch.compile``'s wrapper forwards them."""
        if name.startswith("__") or name in ("fn", "_entries"):
            raise AttributeError(name)
        return getattr(self.fn, name)

    def __get__(self, obj, objtype=None):
        """Bound to an instance when used as a method decorator."""
        return self if obj is None else functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<compiled {self.name}: {self.stats}>"


def _signature(value: Any, tensors: list[Tensor]) -> Any:
    """A hashable key for the call's arguments; their tensors are appended to ``tensors``."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return ("T", value._array.shape, value._array.dtype, value._requires_grad)
    if type(value) in (tuple, list):
        return (type(value).__name__, tuple(_signature(v, tensors) for v in value))
    if type(value) is dict:
        return ("dict", tuple((k, _signature(v, tensors)) for k, v in value.items()))
    if value is None or type(value) in (bool, int, float, str, complex):
        return (type(value).__name__, value)
    if isinstance(value, np.ndarray):
        raise TypeError("a NumPy array argument")  # its values would be baked in: eager
    # The object itself, not its id: the key keeps it alive, so a new object cannot take an
    # old one's id and its record (a model passed as an argument).
    return ("object", value)


def _replaced(value: Any, stands: dict) -> Any:
    """``value`` (a call's arguments) with each tensor of ``stands`` (by id) replaced."""
    return map_structure(value, lambda item: stands.get(id(item), item))


def _output_spec(result: Any, tracer: Tracer) -> Any:
    """How to rebuild the call's result from the replay's output arrays."""
    if isinstance(result, Tensor):
        var = tracer.vars.get(id(result._array))
        if result._grad_fn is not None and var is not None and var.kind == "temp":
            spent = _spent_node(result)
            if spent is not None:  # backward already ran through it, freeing what it saved
                return ("spent", var, spent)
            tracer.grad_results.append(result)  # its gradient is recorded after the call
            return ("grad", var, len(tracer.grad_results) - 1)
        if var is None or var.kind == "state":  # the same tensor, or equal ones, each call
            return ("object", result, np.array(result._array, copy=True))
        if var.kind == "input":
            return ("input", var.source)
        return ("var", var)
    if isinstance(result, np.ndarray):  # a tensor's array, returned as it is
        var = tracer.vars.get(id(result))
        if var is None or var.kind != "temp":
            raise _Eager("it returns an array the record did not compute")
        return ("array", var)
    if type(result) in (tuple, list):
        return (type(result).__name__, tuple(_output_spec(r, tracer) for r in result))
    if type(result) is dict:
        return ("dict", tuple((k, _output_spec(v, tracer)) for k, v in result.items()))
    if result is None or type(result) in (bool, int, float, str):
        return ("literal", result)
    raise _Eager(f"it returns a {type(result).__name__}, which the replay cannot rebuild")


def _pieces_spec(result: Any, tracer: Tracer) -> tuple:
    """The spec of a record that replays in pieces (the Python gives the results itself),
    after the last read; or `_Eager` when it cannot."""
    tracer.end()
    if tracer.unsafe is not None:
        raise _Eager(
            f"graph break: {tracer.first_read}; the call cannot replay in pieces around it, "
            f"because {tracer.unsafe}"
        )
    if _needs_gradients(result, tracer):
        raise _Eager(
            f"graph break: {tracer.first_read}; the call's results require grad, and a "
            "replay in pieces keeps their gradient history inside the program (compile the "
            "whole training step, or move the read out of the compiled function)"
        )
    return ("pieces", None)


def _needs_gradients(result: Any, tracer: Tracer) -> bool:
    """Whether ``result`` holds a tensor computed in the record whose graph a later backward
    could still run (not spent by the call's own backward)."""
    if isinstance(result, Tensor):
        var = tracer.vars.get(id(result._array))
        return (
            result._grad_fn is not None
            and var is not None
            and var.kind == "temp"
            and _spent_node(result) is None
        )
    if type(result) in (tuple, list):
        return any(_needs_gradients(r, tracer) for r in result)
    if type(result) is dict:
        return any(_needs_gradients(r, tracer) for r in result.values())
    return False


def _spent_node(result: Tensor) -> str | None:
    """The name of the first node in ``result``'s graph whose saved arrays a backward pass
    freed (the step's own ``loss.backward()``), or None while its graph can still run."""
    for node in node_order([result._grad_fn]):
        if getattr(node, "saved", ()) is None:
            return node.name
    return None


class SpentBackward(Unrunnable):
    """The graph node of a replayed result whose graph the call's own backward already used:
    a second backward raises as it does after an eager call."""

    __slots__ = ()

    message = (
        "trying to backward through the graph a second time, but its saved arrays were freed "
        "(the compiled call's own backward used them); pass retain_graph=True to that "
        "backward() to differentiate the result again"
    )

    @property
    def name(self) -> str:
        return f"{self.op} (compiled)"


def _spec_vars(spec: Any, found: list[Var]) -> None:
    kind, value = spec[:2]
    if kind in ("var", "array", "grad", "spent"):
        found.append(value)
    elif kind in ("tuple", "list", "dict"):
        for item in value:
            _spec_vars(item[1] if kind == "dict" else item, found)


def _rebuild(spec: Any, arrays: tuple, tensors: list[Tensor], node=None) -> Any:
    kind, value = spec[:2]
    if kind == "var":
        return Tensor._make(arrays[value])
    if kind == "grad":  # a result the replayed backward differentiates
        return Tensor._make(arrays[value], grad_fn=node, output_nr=spec[2])
    if kind == "spent":
        array = arrays[value]
        return Tensor._make(array, grad_fn=SpentBackward(spec[2], (array.shape, array.dtype)))
    if kind == "array":
        return arrays[value]
    if kind == "input":
        return tensors[value]
    if kind in ("object", "literal"):
        return value
    if kind == "constant":
        return Tensor._make(value.copy())
    if kind == "dict":
        return {k: _rebuild(v, arrays, tensors, node) for k, v in value}
    items = [_rebuild(v, arrays, tensors, node) for v in value]
    return tuple(items) if kind == "tuple" else items


# Verification: two records of one signature must agree.


def _verified(first: tuple, second: tuple, name: str, fuse: bool = False) -> _Record:
    """The program of two agreeing records (``(tracer, spec)`` each), optimized and built."""
    a, spec_a = first
    b, spec_b = second
    if [(e.kind, e.key) for e in a.events if e.kind != "grad"] != [
        (e.kind, e.key) for e in b.events if e.kind != "grad"
    ]:
        raise _Eager("two calls did different things (Python control flow on other values?)")
    if len(a.equations) != len(b.equations):
        raise _Eager(
            f"two calls recorded {len(a.equations)} and {len(b.equations)} equations (Python "
            "control flow that depends on values outside the arguments?)"
        )
    if [value for _, value in a.checks] != [value for _, value in b.checks]:
        raise _Eager("an optimizer's step took other branches in two calls")
    pairs: dict[Var, Var] = {}
    literals: list = []  # a replay in pieces takes these numbers from the Python, each call
    events = {id(e.ins): e for e in b.events if e.kind == "op"}
    for eq_a, eq_b in zip(a.equations, b.equations):
        if (eq_a.kind, eq_a.name, eq_a.phase) != (eq_b.kind, eq_b.name, eq_b.phase) or (
            eq_a.kind == "op" and eq_a.fn is not eq_b.fn
        ):
            raise _Eager(f"two calls recorded {eq_a.name} and {eq_b.name} at one place")
        if b.reads and eq_a.kind == "op" and id(eq_b.ins) in events:
            _dynamic(eq_a, eq_b, events[id(eq_b.ins)], literals)
        if not _agree(eq_a.ins, eq_b.ins, pairs) or not _agree(eq_a.params, eq_b.params, pairs):
            raise _Eager(f"{eq_a.name}'s arguments differ between two calls")
        for out_a, out_b in zip(eq_a.outs, eq_b.outs):
            pairs[out_a] = out_b
        if (eq_a.promote, eq_a.scalar) != (eq_b.promote, eq_b.scalar):
            raise _Eager(f"{eq_a.name} returned different dtypes in two calls")
    if not _agree(_spec_key(spec_a), _spec_key(spec_b), pairs):
        raise _Eager("two calls returned results of different structure")
    spec_b = _objects(spec_a, spec_b)

    # State or constant: what the second record read, decided by comparing with the first.
    snapshots = {var: (tensor, snap) for var, tensor, snap in a.free}
    snapshots.update({var: (None, snap) for var, snap in a.raw})
    labels = _labels(b.modules)
    first_of = {id(w): v for v, w in pairs.items()}  # the first record's Var of each Var
    states, consts = [], []
    for var_b, tensor_b, snap_b in b.free:
        var_a = first_of.get(id(var_b))
        if var_a is None:  # only an event reads it (an argument no equation reads)
            continue
        tensor_a, snap_a = snapshots[var_a]
        if tensor_a is tensor_b:
            var_b.source, var_b.value = tensor_b, labels.get(id(tensor_b), var_b.name)
            states.append(var_b)
        elif _same_array(snap_a, snap_b):
            var_b.kind, var_b.value, var_b.name = "const", snap_b, "c" + var_b.name[1:]
            consts.append(var_b)
        else:
            raise _Eager(_unstable(b, var_b))
    for var_b, snap_b in b.raw:
        var_a = first_of.get(id(var_b))
        if var_a is None:
            continue
        if not _same_array(snapshots[var_a][1], snap_b):
            raise _Eager(_unstable(b, var_b))
        var_b.value = snap_b
        consts.append(var_b)
    if len(a.result_leaves) != len(b.result_leaves) or not all(
        x is y or (type(x) is int and x == y) for x, y in zip(a.result_leaves, b.result_leaves)
    ):
        raise _Eager("the results' gradients reach different tensors in two calls")
    outputs: list[Var] = []
    _spec_vars(spec_b, outputs)
    grads = [v for v in b.result_grads if v is not None]
    program = Program(name, b.inputs, states, consts, b.equations, outputs + grads, len(grads))
    program = optimize(program, passes(fuse))
    spec = _renumber(spec_b, outputs)
    guards = [(v.source, v.shape, v.dtype, v.source._requires_grad) for v in program.state]
    modules = list({id(m): (m, m.training) for m in b.modules}.values())
    # An input with the same values in both calls did not show whether a constant was made
    # from it (class indices worked out in NumPy): the record replays while it keeps them.
    values = [
        (i, snap)
        for i, (first, snap) in enumerate(zip(a.input_values, b.input_values))
        if program.consts and _same_array(first, snap)
    ]
    mailbox: list = []  # the numbers a replay in pieces gathers in the Python, per step
    if spec[0] == "pieces":
        numbers_in_python(program, mailbox)
    record = _Record(program, spec, guards, modules, values, literals, b.checks)
    record.mailbox = mailbox
    record.leaves = b.result_leaves
    record.has_grad = [v is not None for v in b.result_grads]
    record.result_meta = tuple((r.shape, r.dtype) for r in b.grad_results)
    if spec[0] == "pieces":
        record.events = b.events
        record.literals = literals
    return record


def _dynamic(eq_a, eq_b, event, literals: list) -> None:
    """Where two records of a call replayed in pieces passed an op different numbers
    (``loss < best`` as ``best`` improves), make each such argument a *literal* of the
    program, ``L[k]``, that the replay takes from the Python at each call."""
    ins_a, ins_b = list(eq_a.ins), list(eq_b.ins)
    for i, (x, y) in enumerate(zip(ins_a, ins_b)):
        if type(x) in (int, float) and type(x) is type(y) and x != y and x == x:
            var = Var(f"L[{len(literals)}]", "input", (), np.dtype(type(x)),
                      source=("literal", len(literals)), value=type(x))  # fmt: skip
            literals.append(y)
            ins_a[i] = ins_b[i] = var
    if ins_b != list(eq_b.ins):
        eq_a.ins, eq_b.ins = tuple(ins_a), tuple(ins_b)
        event.ins = eq_b.ins


def _renumber(spec: Any, outputs: list[Var]) -> Any:
    """``spec`` reading output arrays by position in the replay's return value (the passes
    keep the outputs' order: a renamed output is still at its position)."""
    position = {id(v): i for i, v in enumerate(outputs)}

    def walk(s):
        kind, value = s[:2]
        if kind in ("var", "array"):
            return (kind, position[id(value)])
        if kind in ("grad", "spent"):
            return (kind, position[id(value)], s[2])
        if kind == "dict":
            return ("dict", tuple((k, walk(v)) for k, v in value))
        if kind in ("tuple", "list"):
            return (kind, tuple(walk(v) for v in value))
        return s

    return walk(spec)


def _objects(spec_a: Any, spec_b: Any) -> Any:
    """``spec_b`` with each tensor returned as it was (not computed by the record) decided
    from the two calls: the same tensor both times is returned itself; equal values made anew
    (a constant made inside the function) become a copy of those values at each replay."""
    kind = spec_b[0]
    if kind == "object":
        (_, a, snap_a), (_, b, snap_b) = spec_a, spec_b
        if a is b:
            return ("object", b)
        if _same_array(snap_a, snap_b) and not b._requires_grad:
            return ("constant", snap_b)
        raise _Eager("it returns a tensor made outside the record, with other values each call")
    if kind in ("tuple", "list"):
        return (kind, tuple(_objects(u, v) for u, v in zip(spec_a[1], spec_b[1])))
    if kind == "dict":
        return (kind, tuple((k, _objects(u, v)) for (_, u), (k, v) in zip(spec_a[1], spec_b[1])))
    return spec_b


def _spec_key(spec: Any) -> Any:
    kind, value = spec[:2]
    if kind == "object":
        return ("object",)  # compared by `_objects`
    if kind in ("grad", "spent"):
        return spec[:3]
    if kind in ("tuple", "list"):
        return (kind, tuple(_spec_key(v) for v in value))
    if kind == "dict":
        return (kind, tuple((k, _spec_key(v)) for k, v in value))
    return spec


def _agree(x: Any, y: Any, pairs: dict) -> bool:
    """Whether two records' arguments agree: Vars in the same places, equal literals."""
    if isinstance(x, Var) or isinstance(y, Var):
        if not (isinstance(x, Var) and isinstance(y, Var)) or x.kind != y.kind:
            return False
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        known = pairs.get(x)
        if known is None:
            if x.kind == "input" and x.source != y.source:
                return False
            pairs[x] = y
            return True
        return known is y
    if type(x) is not type(y):
        return False
    if type(x) in (tuple, list):
        return len(x) == len(y) and all(_agree(u, v, pairs) for u, v in zip(x, y))
    if type(x) is dict:
        return x.keys() == y.keys() and all(_agree(x[k], y[k], pairs) for k in x)
    if isinstance(x, np.ndarray):
        return _same_array(x, y)
    if isinstance(x, (Tensor, _Slot)) or callable(x):
        return x is y or (isinstance(x, _Slot) and x == y)
    if type(x) is float and x != x:  # nan is nan, here
        return y != y
    try:
        return bool(x == y)
    except (TypeError, ValueError):
        return x is y


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def _reader(tracer: Tracer, var: Var) -> str:
    """The name of the first equation that reads ``var`` (for messages)."""
    return next((eq.name for eq in tracer.equations if var in eq.inputs()), "an op")


def _unstable(tracer: Tracer, var: Var) -> str:
    return (
        f"the values of a tensor that {_reader(tracer, var)} reads differ between two calls, "
        "and the record does not say how they were made (a tensor made from Python or NumPy "
        "values that change)"
    )


def _labels(modules: list) -> dict[int, str]:
    """Parameter and buffer names by tensor, from the outermost module called."""
    if not modules:
        return {}
    top = modules[0]
    named = list(top.named_parameters()) + list(top.named_buffers())
    return {id(tensor): name for name, tensor in named}


def make_program(fn: Callable, *, optimized: bool = True) -> Callable[..., Program]:
    """A function that runs ``fn`` once on its arguments (eagerly, with its effects) and
    returns the `Program` recorded: ``print(make_program(f)(x))``, as ``jax.make_jaxpr``.

    Tensors read that are not arguments (parameters) are shown as state; plain arrays and
    tensors made inside ``fn`` as constants. ``optimized=False`` shows the record before
    the passes.
    """

    def run(*args, **kwargs) -> Program:
        tensors: list[Tensor] = []
        _signature((args, kwargs), tensors)
        tracer = Tracer(tensors, fullgraph=True)
        with tracer:
            result = fn(*args, **kwargs)
        tracer.drop_barriers()
        outputs = _result_vars(result, tracer)
        labels = _labels(tracer.modules)
        states, consts = [], []
        for var, tensor, snap in tracer.free:
            if tensor._requires_grad or id(tensor) in labels:
                var.source, var.value = tensor, labels.get(id(tensor), var.name)
                states.append(var)
            else:
                var.kind, var.value, var.name = "const", snap, "c" + var.name[1:]
                consts.append(var)
        for var, snap in tracer.raw:
            var.value = snap
            consts.append(var)
        name = getattr(fn, "__name__", type(fn).__name__)
        program = Program(name, tracer.inputs, states, consts, tracer.equations, outputs)
        return optimize(program) if optimized else program

    return run


def _result_vars(result: Any, tracer: Tracer) -> list[Var]:
    """The computed arrays among a call's result tensors: `make_program`'s outputs."""
    if isinstance(result, Tensor):
        var = tracer.vars.get(id(result._array))
        return [var] if var is not None and var.kind == "temp" else []
    if type(result) in (tuple, list):
        return [v for r in result for v in _result_vars(r, tracer)]
    return []


def compile(
    model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
    backend: str | Callable | None = "inductor", mode: str | None = None,
    options: dict[str, Any] | None = None, name: str | None = None, disable: bool = False,
    recompile_limit: int | None = None, isolate_recompiles: bool = False, shapes_spec: Any = None,
) -> Callable:  # fmt: skip
    """Compile ``model`` (a function or a module), as ``torch.compile``: its first call runs
    eagerly while the tensor engine's work is recorded; the second is recorded again and
    checked against the first; later calls replay the program without building graphs.

    Compile a whole training step (forward, ``backward()``, the optimizer's step), or just a
    model: results that require grad are then replayed with a graph node whose backward runs
    the recorded gradients of the results (the eager graph's work, as one program).
    ``fullgraph=True`` makes a graph break an error (`CompileError`); ``disable=True``
    returns ``model`` itself. ``backend="inductor"`` (the default) fuses chains of
    elementwise ops into Numba kernels when Numba is installed (`chainrule.compiler.fusion`);
    ``"eager"``, ``"aot_eager"``, ``"numpy"`` or ``options={"fuse": False}`` replay plain
    NumPy, bit for bit as eager. The other keywords are PyTorch's and change nothing here.

    >>> import chainrule as cr
    >>> w = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> @compile
    ... def step(x):
    ...     loss = ((x * w).sum() - 1) ** 2
    ...     loss.backward()
    ...     with cr.no_grad():
    ...         w.sub_(0.1 * w.grad)
    ...         w.grad = None
    ...     return loss.detach()
    >>> [round(step(cr.tensor([1.0, 1.0])).item(), 4) for _ in range(4)]
    [4.0, 1.44, 0.5184, 0.1866]
    >>> step.stats
    {'traced': 2, 'replayed': 2, 'eager': 0}
    """
    if model is None:
        return lambda fn: compile(
            fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
            options=options, name=name, disable=disable,
        )  # fmt: skip
    if disable:
        return model
    fuse = backend not in ("eager", "aot_eager", "numpy") and (options or {}).get("fuse", True)
    return CompiledFunction(model, fullgraph=fullgraph, name=name, fuse=fuse)


#: JAX's name for it.
jit = compile


__all__ = ["CACHE_SIZE", "CompiledFunction", "compile", "jit", "make_program"]
