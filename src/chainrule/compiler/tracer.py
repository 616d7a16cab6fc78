"""Tracing: run a function eagerly once while recording what the tensor engine does, as the
equations of a `Program`.

The `Tracer` is the engine's observer (`chainrule.observe`, the seam the profiler uses too)
while the function runs. Each op that `apply_op` runs becomes an "op" equation; backward runs
its rules on Tensors (as for create_graph), so their ops are recorded as well, and the
gradients reaching leaves become "grad" equations; in-place writes become "write" equations;
an optimizer's step becomes the equations of its update (`chainrule.compiler.update`); what
is marked `observe.replayed_whole` (zero_grad to zeros, a scheduler's step, a random draw)
becomes one "call".

A tensor's values read into Python (``.item()``, ``bool(t)``, ``print(t)``, ``.numpy()``)
is a *graph break* that the record goes on past: a "read" equation marks where the
function's Python needs values, with the tensors it still holds, and a whole call is
followed by one too. Alongside the equations the tracer keeps the *events*, what the
function's own Python did (an op called, a whole call, a write, a ``.grad`` set, a backward
pass, a read, a module called): a replay in pieces (`chainrule.compiler.pieces`) matches
the function's Python against them. What the record cannot see ends it: a `Function`
subclass (its rules work on arrays), tensor hooks, forward mode, vmap. The call goes on
eagerly from there.
"""

from __future__ import annotations

import functools
import sys
import threading
from typing import Any

import numpy as np

from .. import dispatch, observe
from .._tensor import Tensor
from ..autograd import accumulate_grad, deliver, run_backward
from ..errors import ChainruleError, CompileError
from ..graph import Node, edge_of, state, user_line
from ..observe import PLAIN, Observer
from ..signatures import TRANSLATED, translate
from .program import RESULT_BACKWARD, Equation, Var
from .update import run_step


class InputEdge(Node):
    """The ``grad_fn`` of a stand-in for an input of a traced call that has gradient history
    (a generator's output given to a compiled discriminator): backward passes the gradient on
    to the input's own graph, while the record stops there (its gradient is the results'
    backward's output for that input, as for a leaf)."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return "input"

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        return [grads[0]]


def stand_in(tensor: Tensor) -> Tensor:
    """``tensor`` (an input with a ``grad_fn``) as the traced call sees it: the same array
    and version counter, its history one `InputEdge` away."""
    node = InputEdge((edge_of(tensor),), ((tensor._array.shape, tensor._array.dtype),), ())
    stand = Tensor._make(tensor._array, grad_fn=node)
    stand._counter = tensor._version_counter
    return stand


class Event:
    """One thing the traced function's Python did: ``kind`` is "op" (``key`` the op row),
    "call" (a whole call, ``key`` the function), "write", "grad" (``.grad`` set, ``key`` the
    tensor), "backward", "read" (``key`` what read values), "inplace" (``key`` its name) or
    "module" (``key`` the module; the events of its forward follow); ``ins`` and ``params`` hold
    Vars where the call had tensors; ``outs`` the Vars of what it gave back; ``info`` what a
    replay needs to make the same Python objects (requires grad, a view, a call's template);
    ``arrays`` the arrays of ``outs`` (which of them the Python still holds at the next
    read, through a tensor or another tensor over the same memory, `Tracer._barrier` tells by
    their reference counts)."""

    __slots__ = ("kind", "key", "ins", "params", "outs", "info", "arrays")

    def __init__(self, kind: str, key: Any, ins: tuple, params: dict, outs: tuple,
                 info: dict, arrays: tuple) -> None:  # fmt: skip
        self.kind, self.key, self.ins, self.params = kind, key, ins, params
        self.outs, self.info, self.arrays = outs, info, arrays

    def __repr__(self) -> str:
        return f"<event {self.kind} {getattr(self.key, 'name', self.key)!s}>"


class Tracer(Observer):
    """Records one call of a function; the engine's observer (`observe.current`) while it runs.

    After the call: ``equations``; ``inputs`` (a Var per input tensor); ``free``, the
    tensors read that were neither inputs nor computed in the record, each as
    ``(var, tensor, snapshot)`` (`compiled` decides, from two records, which are state read
    at each call and which are constants); ``raw``, plain arrays given to ops, as
    ``(var, snapshot)``; ``modules`` called; ``broken``, why the record ended early (None
    when it did not).
    """

    def __init__(self, tensors: list[Tensor], fullgraph: bool = False) -> None:
        super().__init__()
        self.fullgraph = fullgraph
        self.equations: list[Equation] = []
        self.vars: dict[int, Var] = {}  # id(array) -> its Var
        self._keep: dict[int, np.ndarray] = {}  # what `vars` names by id stays alive
        self.inputs: list[Var] = []
        self.input_index: dict[int, int] = {}  # id(tensor) -> position among the inputs
        self.free: list[tuple[Var, Tensor, np.ndarray]] = []
        self.raw: list[tuple[Var, np.ndarray]] = []
        self.modules: list = []
        #: (function, value) per guard of what the record's Python decided (an optimizer's
        #: branches, `Optimizer.update_guard`): it replays while each function gives the value.
        self.checks: list[tuple] = []
        self.broken: str | None = None
        self.phase = "forward"
        self.grad_results: list[Tensor] = []  # results that require grad (`compiled`)
        self.result_grads: list = []  # Vars (None: no gradient), from `trace_result_backward`
        self.result_leaves: list = []
        #: What the function's own Python did, in order (`Event`); ``reads``: how many graph
        #: breaks it went on past; ``unsafe``: why the record cannot replay in pieces.
        self.events: list[Event] = []
        self.reads = 0
        self.first_read: str | None = None  # the first graph break, for messages
        self.unsafe: str | None = None
        self._segment = 0  # the first event since the last read
        self._nested = 0  # inside an op's decomposition or a traced backward: no events
        self._pass: Event | None = None  # the backward event whose pass runs now
        self._count = 0
        # The observer is global: another thread's ops (a data loader's) run as usual, never
        # recorded, and so do this thread's while it runs an op or a whole call (`unobserved`).
        self._thread = threading.get_ident()
        #: The inputs' values when the call began (`compiled` compares two records' inputs).
        self.input_values = [np.array(t._array, copy=True) for t in tensors]
        #: The inputs that stand in for ones with gradient history (`stand_in`).
        self.stand_ins = [t for t in tensors if type(t._grad_fn) is InputEdge]
        for i, tensor in enumerate(tensors):
            var = Var(f"x{i}", "input", tensor.shape, tensor.dtype, source=i)
            self._name(tensor._array, var)
            self.inputs.append(var)
            self.input_index[id(tensor)] = i

    # Starting and stopping.

    def __enter__(self) -> Tracer:
        self.attach()
        return self

    def __exit__(self, *exc_info) -> None:
        self.detach()

    def graph_break(self, reason: str) -> None:
        """End the record here (the call goes on eagerly); with fullgraph, raise instead."""
        where = user_line()
        if self.fullgraph:
            raise CompileError(f"compile(fullgraph=True): {reason}, at {where}")
        if self.broken is None:
            self.broken = f"{reason}, at {where}"
        self.detach()

    # Vars.

    def _name(self, array: np.ndarray, var: Var) -> Var:
        self.vars[id(array)] = var
        self._keep[id(array)] = array
        return var

    def _temp(self, array: np.ndarray) -> Var:
        self._count += 1
        return self._name(array, Var(f"t{self._count}", "temp", array.shape, array.dtype))

    def var_of(self, value: Any) -> Any:
        """The Var for a Tensor or array the record reads (naming it if it is new), or the
        value itself for a literal; tuples and lists are mapped element by element."""
        if isinstance(value, Tensor):
            data = value._array
            var = self.vars.get(id(data))
            if var is None:
                self._count += 1
                var = self._name(data, Var(f"s{self._count}", "state", data.shape, data.dtype))
                self.free.append((var, value, np.array(data, copy=True)))
            return var
        if isinstance(value, np.ndarray):
            var = self.vars.get(id(value))
            if var is None:
                self._count += 1
                var = self._name(value, Var(f"c{self._count}", "const", value.shape, value.dtype))
                self.raw.append((var, np.array(value, copy=True)))
            return var
        if type(value) in (tuple, list):
            mapped = [self.var_of(v) for v in value]
            return tuple(mapped) if type(value) is tuple else mapped
        return value

    def _record(self, eq: Equation) -> None:
        self.equations.append(eq)

    # What the engine reports (`chainrule.observe.Observer`).

    def recording(self) -> bool:
        """Whether what the calling thread does now is recorded: it is the traced thread, and
        not inside an op being recorded or a whole call; and the record has not ended."""
        return observe.current is self and threading.get_ident() == self._thread and not self.busy()

    def run_op(self, op, args: tuple, params: dict):
        """`apply_op` while tracing: the op runs, and its equation is recorded."""
        if not self.recording():
            return PLAIN  # another thread's op, or one inside what is recorded
        if dispatch.batch_hook is not None or state.forward_ad:
            self.graph_break(f"{op.name} under vmap or forward mode (jvp) is not traced")
            return PLAIN
        result = self.unobserved(dispatch.apply_op, op, *args, **params)
        if params and not TRANSLATED.isdisjoint(params):
            params = translate(op.name, params)
        data = result._array
        promoted = _was_promoted(op, args, params, data)
        if op.decomposition is not None and not promoted:
            self._nested += 1
            try:
                decomposed = self._decompose(op, args, params, result)
            finally:
                self._nested -= 1
            if decomposed:
                ins = tuple(self.var_of(a) for a in args)
                mapped = {key: self.var_of(value) for key, value in params.items()}
                self._op_event(op, ins, mapped, result)
                return result
        ins = tuple(self.var_of(a) for a in args)
        mapped = {key: self.var_of(value) for key, value in params.items()}
        eq = Equation("op", op, op.name, ins, mapped, (self._temp(data),), self.phase)
        eq.promote = promoted
        eq.scalar = data.ndim == 0
        eq.c_order = data.flags.c_contiguous
        eq.alias = any(isinstance(a, Tensor) and np.may_share_memory(data, a._array) for a in args)
        self._record(eq)
        self._op_event(op, ins, mapped, result)
        return result

    def _op_event(self, op, ins: tuple, mapped: dict, result: Tensor) -> None:
        if self._nested:
            return
        data = result._array
        info = {
            "grad": result._grad_fn is not None,
            "view": result._view is not None,
            # Its layout: the Python may ask (``.contiguous()`` copies only when it is not).
            "strides": None if data.flags.c_contiguous else data.strides,
        }
        self._event("op", op, ins, mapped, (self.vars[id(data)],), info, (result,))

    def _event(self, kind: str, key: Any, ins: tuple, params: dict, outs: tuple, info: dict,
               tensors: tuple = ()) -> Event:  # fmt: skip
        arrays = tuple(t._array if isinstance(t, Tensor) else t for t in tensors)
        event = Event(kind, key, ins, params, outs, info, arrays)
        self.events.append(event)
        return event

    def _barrier(self, what: str, where: str, call: bool = False) -> None:
        """A "read" equation and event: the function's Python needs values here; it hands
        over the Vars of this segment's results that the Python still holds."""
        held: dict[int, Var] = {}
        for event in self.events[self._segment :]:
            for k, var in enumerate(event.outs):
                array = event.arrays[k]
                # Held by `_keep`, the event, ``array`` and getrefcount: anything more is the
                # Python's (a tensor, a detached one over it) or a graph's (saved for backward).
                if sys.getrefcount(array) > 4:
                    held.setdefault(id(var), var)
                del array
        visible = tuple(held.values())
        self._record(Equation("read", None, what, visible, {"at": where}, (), self.phase))
        self._event("read", what, visible, {}, (), {"at": where, "call": call})
        self._segment = len(self.events)

    def _barrier_before(self, where: int, name: str) -> None:
        """A barrier (`_barrier`) placed before the equations from ``where`` on (a call's)."""
        after = self.equations[where:]
        del self.equations[where:]
        self._barrier(name, user_line())
        self.equations += after

    def drop_python_calls(self) -> None:
        """Remove the whole calls that change Python numbers only (``python_only``): a
        record replayed in pieces runs them in the function's Python instead."""
        self.equations = [
            eq for eq in self.equations if not (eq.kind == "call" and eq.params.get("python_only"))
        ]

    def drop_barriers(self) -> None:
        """Remove the "read" equations: a record that never went past a graph break replays
        whole, and its passes need not stop at them."""
        self.equations = [eq for eq in self.equations if eq.kind != "read"]

    def end(self) -> None:
        """The call returned: the last read, of what its Python still holds (a record that
        went on past a graph break)."""
        self._barrier("the end of the call", "return")

    def _decompose(self, op, args: tuple, params: dict, result: Tensor) -> bool:
        """Record ``op`` as the ops of its decomposition, run on the same inputs, if they give
        ``result``'s array exactly; the row's own node stays for backward."""
        start, previous = len(self.equations), state.grad_enabled
        inputs = [Tensor._make(a._array) if isinstance(a, Tensor) else a for a in args]
        state.grad_enabled = False  # the decomposition's ops make no nodes
        try:
            value = op.decomposition(*inputs, **params)
        finally:
            state.grad_enabled = previous
        data = value._array if isinstance(value, Tensor) else None
        if (
            observe.current is not self
            or data is None
            or data.dtype != result._array.dtype
            or not np.array_equal(data, result._array, equal_nan=True)
        ):
            del self.equations[start:]  # the row's own equation is recorded instead
            return False
        self._name(result._array, self.vars[id(data)])
        return True

    def run_function(self, cls, args: tuple, kwargs: dict):
        """A `Function` subclass ends the record: its rules work on arrays."""
        if self.recording():
            self.graph_break(f"{cls.__name__} (a Function subclass) is not traced")
        return PLAIN

    def run_node(self, node, grads: list, create_graph: bool, release: bool) -> list:
        """A graph node's backward; its rules' ops are recorded through `run_op`."""
        if type(node) is InputEdge and self.recording():
            if self.phase == RESULT_BACKWARD:
                return [None]  # the results' backward ends at the call's inputs
            self.graph_break("the call's backward reaches the history of an input made "
                             "outside it, which the record cannot follow")  # fmt: skip
        if self.recording():
            if node.hooks or node.retained:
                self.graph_break(f"{node.name}: hooks on a non-leaf tensor are not traced")
            elif not hasattr(node, "op"):
                self.graph_break(f"{node.name}'s backward (a Function's) is not traced")
        if self.recording():
            try:
                return node.propagate(grads, create_graph, release)
            except ChainruleError as exc:  # a rule that works on arrays only
                if not self.recording():
                    raise
                self.graph_break(f"{node.name}'s backward rules on tensors failed ({exc})")
        # The record has ended: the rest of the pass runs as eager mode runs it, on arrays.
        grads = [g._array if isinstance(g, Tensor) else g for g in grads]
        return node.propagate(grads, False, release)

    def run_whole(self, fn, args: tuple, kwargs: dict, pure: bool = False):
        """An `observe.replayed_whole` function: run untraced, recorded as one call."""
        if not self.recording():
            return fn(*args, **kwargs)
        barrier = pure and not self._nested and _reads_temps((args, kwargs), self)
        if barrier:
            where = len(self.equations)  # a read before it, if the Python must run it (below)
        result = self.unobserved(fn, *args, **kwargs)
        slots: list[Var] = []
        template = _template((args, kwargs), self, slots)
        outs: list[np.ndarray] = []
        shape = _result_shape(result, outs)
        out_vars = tuple(self._temp(a) for a in outs)

        call = _caller(fn, template, shape)

        name = getattr(fn, "__qualname__", repr(fn))
        eq = Equation("call", call, name, tuple(slots), {}, out_vars, self.phase)
        eq.params = {"fn": fn, "template": template, "pure": pure}  # verification compares
        # Numbers in Python changed, no tensor given or made: in pieces the Python runs it.
        python_only = getattr(fn, "python_only", False) and not slots and not outs
        if python_only:
            eq.params["python_only"] = True
        self._record(eq)
        if not self._nested:
            if shape is None and result is not None and not pure:
                self.unsafe = self.unsafe or f"{name} returns a {type(result).__name__}"
            made = _result_objects(result)
            grads = [isinstance(r, Tensor) and r._requires_grad for r in made]
            # A pure call with other results than arrays runs in the Python of a replay in
            # pieces, which then needs its arguments' values first: a read before it.
            python = pure and shape != _arrays_only(shape)
            if python and barrier:
                self._barrier_before(where, name)
            alias = [next(j for j in range(i + 1) if outs[j] is outs[i]) for i in range(len(outs))]
            info = {"template": template, "shape": shape, "grad": grads, "python": python,
                    "alias": alias, "pure": pure, "python_only": python_only}  # fmt: skip
            self._event("call", fn, tuple(slots), {}, out_vars, info, made)
            if not pure and not python_only:  # the Python after it sees its effects
                self._barrier(name, user_line(), call=True)
        return result

    def run_update(self, fn, args: tuple, kwargs: dict):
        """An optimizer's step: its update recorded as equations (`update.run_step`), unless
        the optimizer's update is not written for that (``records_update``) or a closure is
        given: then a whole call."""
        closure = args[1] if len(args) > 1 else kwargs.get("closure")
        if not self.recording() or closure is not None or not args[0].records_update:
            return self.run_whole(fn, args, kwargs, False)
        return run_step(self, fn, args, _template((args, kwargs), self, []))

    def inplace_begins(self, write, tensor: Tensor, op, other, name: str) -> None:
        """An in-place op: an "inplace" event before those of its op and its writes (a
        diverging replay runs it again whole)."""
        if self.recording() and not self._nested:
            ins = (self.var_of(tensor), self.var_of(other))
            self._event("inplace", name, ins, {}, (), {})  # by name: ``op`` may be made anew

    def write(self, target: np.ndarray, source: np.ndarray) -> bool:
        """An in-place op writes ``source`` into ``target``: a "write" equation (the engine
        writes, as usual)."""
        if not self.recording():
            return False
        ins = (self.var_of(target), self.var_of(source))
        self._record(Equation("write", None, "write", ins, {}, (), self.phase))
        if not self._nested:
            self._event("write", None, ins, {}, (), {})
        return False

    def data_read(self, tensor: Tensor, copy: Tensor) -> None:
        """The function's own code read ``tensor.data``, a new Tensor over the same array:
        the array's Var is named after ``tensor`` itself now, so that a record whose first
        sight of a state tensor is its ``.data`` (``p.data.add_(-lr * p.grad)``) still reads
        and writes that tensor at each replay. What is done with ``.data`` is recorded as
        with any tensor (taking its values into NumPy ends the record, `values_read`)."""
        if self.recording():
            self.var_of(tensor)

    def data_assigned(self, tensor: Tensor) -> None:
        """The function's own code assigned ``tensor.data``: the record ends."""
        if self.recording():
            self.graph_break("assigning a tensor's .data is not traced")

    def run_backward(self, outputs, seeds, retain_graph: bool, create_graph: bool, inputs):
        """A backward pass of the function's own Python: a "backward" event (the pass itself
        is traced as usual; its rules' ops are no events)."""
        if self.recording() and not self._nested:
            if inputs is not None:
                self.unsafe = self.unsafe or "autograd.grad() is called"
            ins = tuple(self.var_of(o) for o in outputs)
            info = {"seeds": tuple(None if g is None else self.var_of(g) for g in seeds),
                    "retain": retain_graph, "create": create_graph, "leaves": []}  # fmt: skip
            self._pass = self._event("backward", None, ins, {}, (), info)
        return PLAIN

    def backward_begins(self, create_graph: bool, to_leaves: bool) -> bool:
        """`run_backward` starts: its rules' ops are the backward phase. Returns whether it
        is recorded."""
        if not self.recording():
            return False
        if create_graph:
            self.graph_break("backward with create_graph=True is not traced")
        if self.phase != RESULT_BACKWARD:
            self.phase = "backward"
        self._nested += 1
        return True

    def backward_ends(self, begun: bool) -> None:
        """`run_backward` ended: what follows (an optimizer's step) is the update phase."""
        if begun:
            self._nested -= 1
            self._pass = None
        if begun and self.phase != RESULT_BACKWARD:
            self.phase = "update"

    def deliver(self, leaves: dict) -> None:
        """The leaves' gradients, from a traced backward, into their ``.grad``: one "grad"
        equation each. (Hooks on leaves end the record; they run as in eager mode.)"""
        tracing = observe.current is self
        if tracing and any(leaf._hooks for leaf in leaves):
            self.graph_break("hooks on a leaf tensor are not traced")
            tracing = False
        if not tracing:
            arrays = {
                leaf: [total._array if isinstance(total, Tensor) else total, owned]
                for leaf, (total, owned) in leaves.items()
            }
            deliver(arrays, False)
            return
        for leaf, (total, owned) in leaves.items():
            array = total._array if isinstance(total, Tensor) else np.asarray(total)
            var = self.var_of(total if isinstance(total, Tensor) else array)
            new = accumulate_grad(leaf, array, bool(owned))
            eq = self._grad_equation(leaf, "add", (var,), bool(owned), (self._temp(new),))
            eq.params["writeable"] = array.flags.writeable  # may the leaf keep it (a pass)
            if self._pass is not None:  # the backward event: which .grad Python sees next
                self._pass.info["leaves"].append((leaf, eq.outs[0]))
                self._pass.outs += (eq.outs[0],)
                self._pass.arrays += (leaf._grad._array,)

    def grad_assigned(self, tensor: Tensor, value: Tensor | None) -> None:
        """``tensor.grad = value`` ran: a "grad" equation that sets it at each replay."""
        if not self.recording():
            return
        ins = () if value is None else (self.var_of(value),)
        self._grad_equation(tensor, "set", ins, False, ())
        if not self._nested:
            self._event("grad", tensor, ins, {}, (), {})

    def _grad_equation(
        self, leaf: Tensor, mode: str, ins: tuple, owned: bool, outs: tuple
    ) -> Equation:
        target = self.input_index.get(id(leaf), leaf)
        label = self.var_of(leaf).name  # named like its reads, even before the first
        params = {"leaf": target, "mode": mode, "owned": owned, "label": label}
        eq = Equation("grad", None, "grad", ins, params, outs, self.phase)
        self._record(eq)
        return eq

    def trace_result_backward(self, results: list[Tensor]) -> list:
        """Record the gradients of ``results`` (the call's results that require grad) with
        respect to every leaf they depend on, as equations of phase `RESULT_BACKWARD` that take
        the results' gradients as inputs (seeds ``g0, g1, ...``); the eager graph is kept for
        this call's own backward. Returns the leaves: input positions, or tensors."""
        leaves: dict[int, Tensor] = {}
        reached: set[int] = set()  # the nodes, up to the inputs' stand-ins
        stack = [r._grad_fn for r in results]
        while stack:
            node = stack.pop()
            if node is None or id(node) in reached:
                continue
            reached.add(id(node))
            if isinstance(node, InputEdge):
                continue
            for edge in node.edges:
                if isinstance(edge, Tensor):
                    leaves.setdefault(id(edge), edge)
                elif edge is not None:
                    stack.append(edge[0])
        for tensor in self.stand_ins:
            if id(tensor._grad_fn) in reached:
                leaves.setdefault(id(tensor), tensor)
        seeds = []
        for k, result in enumerate(results):
            array = np.zeros(result.shape, result.dtype)
            self._name(array, Var(f"g{k}", "input", array.shape, array.dtype, source=("seed", k)))
            seeds.append(Tensor._make(array))
        self.phase = RESULT_BACKWARD
        try:
            with self:
                grads = run_backward(results, seeds, True, False, list(leaves.values()))
        except ChainruleError as exc:
            self.broken = self.broken or f"the results' backward failed on tensors ({exc})"
            return []
        self.result_grads = [None if g is None else self.var_of(g) for g in grads]
        self.result_leaves = [self.input_index.get(i, leaf) for i, leaf in leaves.items()]
        return self.result_leaves

    def values_read(self, what: str) -> None:
        """``what`` takes a tensor's values into Python or NumPy: a graph break, which the
        record goes on past with a "read" (with fullgraph, an error). Inside a backward pass
        or an op's decomposition the record ends."""
        if not self.recording():
            return
        reason = f"{what} reads a tensor's values"
        if self.fullgraph or self._nested or self.phase == RESULT_BACKWARD:
            self.graph_break(f"{reason}, which the record cannot follow")
            return
        self.reads += 1
        self.first_read = self.first_read or f"{reason}, at {user_line()}"
        self._barrier(what, user_line())

    def module_called(self, module) -> None:
        """A module was called: its mode (train or eval) guards the record."""
        if self.recording():
            self.modules.append(module)

    def run_module(self, module, args: tuple, kwargs: dict):
        """A module's ``forward``: a "module" event before the events of its ops, which says
        whether a replay in pieces may skip its Python and give its results at once. It may
        when the forward only ran ops (no value read, whole call, backward pass or ``.grad``
        set), changed none of its modules' attributes, got no list or dict to fill, and
        returned tensors it made (or tuples of them)."""
        if not self.recording() or self._nested:
            return module.forward(*args, **kwargs)
        start = len(self.events)
        before = _attributes(module)
        result = module.forward(*args, **kwargs)
        if not self.recording():
            return result
        inner = self.events[start:]
        made = {id(v) for event in inner for v in event.outs}
        shape = _result_shape(result, [])
        outputs = _result_objects(result)
        out_vars = tuple(self.vars.get(id(t._array)) if isinstance(t, Tensor) else None
                         for t in outputs)  # fmt: skip
        skip = (
            shape is not None
            and shape == _arrays_only(shape)
            and all(isinstance(t, Tensor) for t in outputs)
            and all(v is not None and id(v) in made for v in out_vars)
            and all(
                event.kind in ("op", "inplace", "write", "module")
                or (event.kind == "call" and event.info["pure"] and not event.info["python"])
                for event in inner
            )
            and not any(type(a) in (list, dict, set) for a in (*args, *kwargs.values()))
            and _attributes(module) == before
        )
        slots: list[Var] = []
        template = _template((args, kwargs), self, slots)
        info = {
            "skip": skip, "count": len(inner), "template": template, "shape": shape,
            "grad": [t._requires_grad for t in outputs],
            "alias": [next(j for j in range(i + 1) if outputs[j] is outputs[i])
                      for i in range(len(outputs))],
            "strides": [None if t._array.flags.c_contiguous else t._array.strides
                        for t in outputs],
            # a write into what the forward did not make (a buffer): it must not run twice
            "state": any(event.kind == "write" and id(event.ins[0]) not in made
                         for event in inner),
        }  # fmt: skip
        arrays = tuple(t._array for t in outputs)
        event = Event("module", module, tuple(slots), {}, out_vars if skip else (), info,
                      arrays if skip else ())  # fmt: skip
        self.events.insert(start, event)
        if self._segment > start:
            self._segment += 1
        return result


def _attributes(module) -> list:
    """What the attributes of ``module`` and of the modules in it are, by identity: a forward
    that rebinds one (``self.attention = weights``, ``self.calls += 1``) changes this."""
    return [(name, id(value)) for m in module.modules() for name, value in vars(m).items()]


def _reads_temps(value: Any, tracer: Tracer) -> bool:
    """Whether ``value`` holds a tensor or array the record computed."""
    if isinstance(value, (Tensor, np.ndarray)):
        var = tracer.vars.get(id(value._array if isinstance(value, Tensor) else value))
        return var is not None and var.kind == "temp"
    if type(value) in (tuple, list):
        return any(_reads_temps(v, tracer) for v in value)
    if type(value) is dict:
        return any(_reads_temps(v, tracer) for v in value.values())
    return False


def _arrays_only(shape: Any) -> Any:
    """A `_result_shape` with None for anything but arrays and tensors: equal to ``shape``
    when the result is made of them alone."""
    if shape in ("tensor", "array"):
        return shape
    if type(shape) is tuple:
        return tuple(_arrays_only(part) for part in shape)
    return "other"


def _result_objects(result: Any) -> tuple:
    """The Tensors and arrays among a whole call's results, in `_result_shape`'s order."""
    if isinstance(result, (Tensor, np.ndarray)):
        return (result,)
    if type(result) in (tuple, list):
        return tuple(t for r in result for t in _result_objects(r))
    return ()


def _was_promoted(op, args: tuple, params: dict, out: np.ndarray) -> bool:
    """Whether `apply_op` gave the op's float result PyTorch's dtype (`dispatch.promote`), so
    that the replay must too: only a float result whose dtype is not its first operand's can
    have been, and then NumPy's own dtype tells."""
    first = args[0]._array if isinstance(args[0], Tensor) else args[0]
    if out.dtype.kind != "f" or (type(first) is np.ndarray and first.dtype == out.dtype):
        return False
    arrays = [a._array if isinstance(a, Tensor) else a for a in args]
    return np.asarray(op.forward(*arrays, **params)).dtype != out.dtype


class _Slot:
    """A placeholder for the i-th array a "call" equation receives at replay."""

    __slots__ = ("index", "is_tensor")

    def __init__(self, index: int, is_tensor: bool) -> None:
        self.index, self.is_tensor = index, is_tensor

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Slot) and (other.index, other.is_tensor) == (
            self.index,
            self.is_tensor,
        )

    __hash__ = None  # type: ignore[assignment]


def _template(value: Any, tracer: Tracer, slots: list) -> Any:
    """``value`` with each Tensor or array the record computed replaced by a `_Slot`. A leaf
    that requires grad (a parameter) stays itself: the call may use its ``.grad``."""
    if (
        isinstance(value, Tensor)
        and value._requires_grad
        and value._grad_fn is None
        and id(value) not in tracer.input_index
    ):
        return value
    if isinstance(value, (Tensor, np.ndarray)):
        slots.append(tracer.var_of(value))
        return _Slot(len(slots) - 1, isinstance(value, Tensor))
    if type(value) in (tuple, list):
        mapped = [_template(v, tracer, slots) for v in value]
        return tuple(mapped) if type(value) is tuple else mapped
    if type(value) is dict:
        return {key: _template(v, tracer, slots) for key, v in value.items()}
    return value


def _fill(template: Any, arrays: tuple) -> Any:
    if isinstance(template, _Slot):
        array = arrays[template.index]
        return Tensor._make(array) if template.is_tensor else array
    if type(template) in (tuple, list):
        filled = [_fill(v, arrays) for v in template]
        return tuple(filled) if type(template) is tuple else filled
    if type(template) is dict:
        return {key: _fill(v, arrays) for key, v in template.items()}
    return template


def _caller(fn, template: tuple, shape: Any):
    """A function of the slots' arrays that calls ``fn`` as ``template`` says and returns the
    arrays of its result laid out as ``shape``: made once, as straight as the template allows
    (a whole call runs at every replay)."""
    args, kwargs = template
    has_slots = _has_slot(template)
    if shape is None:
        out = _no_arrays
    elif shape == "tensor":
        out = _tensor_array
    elif type(shape) is tuple and all(part == "array" for part in shape):
        out = tuple
    else:
        out = functools.partial(_flatten, shape=shape)
    if not has_slots:
        return lambda: out(fn(*args, **kwargs))
    if not kwargs and not any(type(a) in (tuple, list, dict) for a in args):
        parts = [(a.index, a.is_tensor) if isinstance(a, _Slot) else None for a in args]
        constants = list(args)

        def positional(*arrays):
            values = constants.copy()
            for i, part in enumerate(parts):
                if part is not None:
                    array = arrays[part[0]]
                    values[i] = Tensor._make(array) if part[1] else array
            return out(fn(*values))

        return positional

    def general(*arrays):
        call_args, call_kwargs = _fill(template, arrays)
        return out(fn(*call_args, **call_kwargs))

    return general


def _has_slot(template: Any) -> bool:
    if isinstance(template, _Slot):
        return True
    if type(template) in (tuple, list):
        return any(_has_slot(v) for v in template)
    if type(template) is dict:
        return any(_has_slot(v) for v in template.values())
    return False


def _no_arrays(result: Any) -> tuple:
    return ()


def _tensor_array(result: Tensor) -> tuple:
    return (result._array,)


def _result_shape(result: Any, arrays: list) -> Any:
    """What a call returned, with its arrays (a Tensor's array) appended to ``arrays``."""
    if isinstance(result, Tensor):
        arrays.append(result._array)
        return "tensor"
    if isinstance(result, np.ndarray):
        arrays.append(result)
        return "array"
    if type(result) in (tuple, list):
        return tuple(_result_shape(r, arrays) for r in result)
    return None


def _flatten(result: Any, shape: Any) -> tuple:
    """The arrays of ``result``, laid out as `_result_shape` found them."""
    if shape == "tensor":
        return (result._array,)
    if shape == "array":
        return (result,)
    if type(shape) is tuple:
        return tuple(a for r, s in zip(result, shape) for a in _flatten(r, s))
    return ()


__all__ = ["Event", "Tracer"]
