"""Running tensor ops: `apply_op` records an `OpNode` per op, forward mode carries tangents,
and `Function` is the user-facing way to add an op whose forward and backward see arrays.

What an op is (its row) is declared in `chainrule.op`; the backward pass that runs the nodes
is in `chainrule.autograd`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import counting
from ._tensor import Tensor
from .dtypes import get_default_dtype
from .errors import ChainruleError, DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from .graph import Node, VersionCounter, _sequence, _user_frames, edge_of, state
from .numpy_warnings import rerun_quietly
from .op import LINEAR, NOT_COUNTED, PASS, Op
from .signatures import TRANSLATED, translate
from .tensor_base import ViewOf, current_view

#: Set by `chainrule.func.batching` while vmap runs a function on batched tensors: it runs an op
#: with a batched argument through the op's batching rule (None otherwise: one check per op).
batch_hook: Callable | None = None

#: Set when `apply_op` gives a float result PyTorch's dtype (`_promoted`): the compiler's
#: tracer clears it before an op and reads it after, to replay the same promotion.
promoted = False

#: Makes an object without running its class's ``__init__`` (for apply_op's results and nodes).
_new = object.__new__
_ndarray = np.ndarray  # a module global: one lookup, not np's attribute, per op


def apply_op(op: Op, *args, **params) -> Tensor:
    """Run ``op`` on Tensors (or Python numbers) and, when needed, record a graph node.

    It is also `Op.__call__` (``mul(x, y)`` is ``apply_op(mul, x, y)``). This is the engine's
    speed seam: it runs once per op, so it builds edges (`edge_of`), the result Tensor
    (`Tensor._make`) and the `OpNode` itself, field by field, instead of calling them (a test
    pins these fields to their classes' slots; docs/guides/performance.md has the numbers).
    """
    if counting.intercept is not None:
        # The profiler times this call and the tracer records it, each calling here again to
        # run it, when they answer PLAIN.
        result = counting.intercept.run_op(op, args, params)
        if result is not counting.PLAIN:
            return result
    if params and not TRANSLATED.isdisjoint(params):
        params = translate(op.name, params)  # axis= for dim=, keepdims=, a refused out=
    if batch_hook is not None:
        batched = batch_hook(op, args, params)
        if batched is not None:
            return batched

    # The inputs: arrays for the forward, and where each one's gradient goes.
    arrays = []
    edges = []  # `Node.edges`, when a node is recorded
    needs_grad = 0  # bit i set: input i requires grad
    bit = 1
    for arg in args:
        if isinstance(arg, Tensor):
            view = arg._view
            if view is not None and view.version != arg._counter.value:
                current_view(arg)  # its memory changed in place: its history follows the base's
            arrays.append(arg.data)
            if arg._requires_grad:
                # `edge_of(arg)`, inlined: it runs for every input of every op.
                node = arg._grad_fn
                edges.append(arg if node is None else (node, arg._output_nr))
                needs_grad |= bit
                bit <<= 1
                continue
        else:
            arrays.append(arg)
        edges.append(None)
        bit <<= 1

    # The forward, with NumPy's failures turned into errors that name the op.
    if op.check is not None:
        op.check(*arrays, **params)
    residuals = None
    try:
        if op.forward_saving is not None and needs_grad and state.grad_enabled:
            out, residuals = op.forward_saving(*arrays, **params)  # kept for the backward
        else:
            out = op.forward(*arrays, **params) if params else op.forward(*arrays)
    except (ValueError, IndexError, TypeError) as exc:
        raise _explain(op, arrays, exc) from None
    except RuntimeWarning:  # a filter made NumPy's warning an error; PyTorch warns of none
        out, residuals = rerun_quietly(op, arrays, params, needs_grad and state.grad_enabled)
    if type(out) is not _ndarray and not isinstance(out, _ndarray):
        out = np.asarray(out)
    # A float result whose dtype is not the first operand's: NumPy's promotion, which may not
    # be PyTorch's (one identity test when it is, as in float workloads).
    first = arrays[0]
    if (type(first) is not _ndarray or out.dtype is not first.dtype) and out.dtype.kind == "f":
        out = _promoted(op, out, arrays, params)
    counter = view = None
    if op.view and np.may_share_memory(out, arrays[0]):  # reshape may have had to copy
        # A view shares its base's version counter and remembers how it was made from it.
        source = args[0]
        counter = source._version_counter
        step = ((op, args[1:], params),)
        parent = source._view
        view = (
            ViewOf(source, step, counter.value)
            if parent is None
            else ViewOf(parent.base, parent.steps + step, counter.value)
        )

    # The node: what the rules that will run ask for, and what backward watches.
    node = None
    modes = state
    if needs_grad and op.vjp is not None and modes.grad_enabled and out.dtype.kind in "fc":
        node = _new(OpNode)
        node.sequence = next(_sequence)
        node.hooks = node.retained = None
        node.trace = _user_frames() if modes.anomaly else None
        node.edges = tuple(edges)
        key = (out.shape, out.dtype)
        node.out_meta = _OUT_META.get(key) or _out_meta(key)
        node.op = op
        node.plan = plan = op._plans.get(needs_grad) or op.plan(needs_grad)
        node.saved = saved = dict(params) if params else {}
        # `Node.watched`: the arguments whose arrays are saved, and the output's counter
        # when the rules read the output (tanh's does).
        watched = ()
        if plan.inputs:
            for i, name in plan.inputs:
                saved[name] = arrays[i]
            watched = args if plan.every_input else plan.sources(args)
        if plan.shapes:
            for i, name in plan.shapes:
                saved[name] = np.shape(arrays[i])
        if plan.out:
            saved["out"] = out
            if counter is None:
                counter = VersionCounter()
            watched += (counter,)
        for name in plan.residuals:
            saved[name] = residuals[name]
        node.watched = watched

    # The result, as `Tensor._make` would make it.
    result = _new(Tensor)
    result.data = out
    result._grad = result._hooks = result._tangent = None
    result._grad_fn = node
    result._requires_grad = node is not None
    result._output_nr = 0
    result._counter = counter
    result._view = view
    if modes.forward_ad and op.vjp is not None:
        _propagate_tangent(op, args, arrays, params, result)
    if counting.active is not None:
        flops = op.flops
        counted = flops(*map(np.shape, arrays), **params) if flops is not NOT_COUNTED else 0
        counting.active.record_forward(op.name, counted)
    return result


Op.__call__ = apply_op


def _promoted(op: Op, out: np.ndarray, arrays: Sequence, params: dict) -> np.ndarray:
    """A float result in PyTorch's dtype. NumPy gives integers (and Python floats meeting
    them) float64, or float16 for bool and 8-bit ones; PyTorch gives the widest float
    operand's dtype, else the default float dtype. So ``int_tensor * 2.5``,
    ``int_tensor.exp()``, ``int_tensor / 2`` and ``bool_tensor.sin()`` are float32, and
    ``int_tensor + float32_tensor`` is float32, as in PyTorch. The result is kept when an
    operand array has its dtype, the op was asked for a dtype (``cast``) or the row says the
    dtype is its own choice (``keeps_float64``)."""
    global promoted
    if op.keeps_float64 or "dtype" in params:
        return out
    floats = [a.dtype for a in arrays if type(a) is np.ndarray and a.dtype.kind == "f"]
    if out.dtype in floats:
        return out
    target = max(floats, key=lambda d: d.itemsize) if floats else get_default_dtype()
    if out.dtype.char == "e":  # float16 from bools or 8-bit integers: too coarse to round up
        exact = [a.astype(target) if type(a) is np.ndarray and a.dtype.kind in "biu" else a
                 for a in arrays]  # fmt: skip
        promoted = True
        return np.asarray(op.forward(*exact, **params))
    if target == out.dtype:
        return out
    promoted = True
    return out.astype(target)


def _explain(op: Op, arrays: Sequence, exc: Exception) -> Exception:
    """A clear error from a NumPy failure: the op, the operands' shapes and dtypes, the cause."""
    if isinstance(exc, ChainruleError):
        return exc  # raised by the forward itself, already naming the op (inv of a singular A)
    described = ", ".join(
        f"{fmt_shape(np.shape(a))} {fmt_dtype(getattr(a, 'dtype', type(a)))}" for a in arrays
    )
    reason = str(exc).split("\n")[0]
    if "broadcast" in reason:
        shapes = " and ".join(fmt_shape(np.shape(a)) for a in arrays)
        return ShapeError(f"{op.name}: shapes {shapes} do not broadcast together")
    kind = DTypeError if isinstance(exc, TypeError) else ShapeError
    return kind(f"{op.name}: cannot apply to {described}: {reason}")


_OUT_META: dict[tuple, tuple] = {}


def _out_meta(key: tuple) -> tuple:
    """``((shape, dtype),)`` for a node with one output of that ``key`` (shape, dtype), made
    once per key and shared: a graph holds thousands, and fewer objects means less work for
    Python's cyclic garbage collector."""
    meta = _OUT_META.get(key)
    if meta is None:
        meta = _OUT_META[key] = (key,)
    return meta


class OpNode(Node):
    """The graph node an Op row leaves behind: its edges and exactly what its rules asked for.

    ``saved`` maps each name a VJP that will run asks for (inputs, ``x_shape``, ``out``, op
    parameters) to its value; `TensorRule` reads its arguments from it by name. `apply_op` makes
    these nodes and fills in every field (those of `Node` too) itself.
    """

    __slots__ = ("op", "saved", "plan")

    @property
    def name(self) -> str:
        return self.op.name

    def __repr__(self) -> str:
        return f"<{self.op.backward_name}>"

    def _backward(self, grads: list, create_graph: bool, release: bool) -> list:
        if self.saved is None:
            raise GraphError(
                f"{self.op.name}: trying to backward through the graph a second time, but its "
                "saved arrays were freed; pass retain_graph=True to the first backward()"
            )
        # Without create_graph the rules read the saved dict itself (and never change it).
        env = self._as_tensors() if create_graph else self.saved
        g = grads[0]
        in_grads = []  # a loop, not a comprehension: that would be one more frame per node
        for rule in self.plan.vjps:
            in_grads.append(None if rule is None else g if rule is PASS else rule(g, env))
        if release and self.plan.frees:  # a node that saved no array has nothing to free
            self.release()
        return in_grads

    def _as_tensors(self) -> dict:
        """The saved values as Tensors connected to the graph, so rules record ops."""
        env = dict(self.saved)
        # While the compiler traces, an input without gradient is a Tensor too, so that what
        # the rules do with it (x.mT) is recorded rather than done in NumPy out of sight.
        tracer = counting.intercept
        tracing = tracer is not None and tracer.traces and tracer.records()
        for i, name in self.plan.inputs:
            edge = self.edges[i]
            if isinstance(edge, Tensor):
                env[name] = edge
            elif edge is not None:
                env[name] = Tensor._make(env[name], grad_fn=edge[0], output_nr=edge[1])
            elif tracing and isinstance(env[name], _ndarray):
                env[name] = Tensor._make(env[name])
        if self.plan.out:
            env["out"] = Tensor._make(env["out"], grad_fn=self, output_nr=0)
        for name in self.plan.residuals:  # computed again with ops, to be differentiated
            env[name] = self.op.residuals[name](None, env)
        return env

    def release(self) -> None:
        """Free the saved arrays (a node that saved none stays runnable: nothing was lost)."""
        if self.plan.frees:
            self.saved, self.watched = None, ()


class Function(Node):
    """Base class for user-defined ops whose forward and backward work on NumPy arrays.

    Subclass it, write ``forward(self, *arrays, **kwargs)`` returning an array (or a tuple
    of arrays) and ``backward(self, *grads)`` returning one gradient per input (None for an
    input without one), then call ``MyOp.apply(*tensors, **kwargs)``. Save arrays for
    backward with ``self.save_for_backward(...)`` and read them from ``self.saved_tensors``.
    Backward sees arrays, so a Function cannot be differentiated twice (create_graph=True
    raises); build the op from tensor ops or an `Op` row when you need that.

    >>> class Cube(Function):
    ...     def forward(self, x):
    ...         self.save_for_backward(x)
    ...         return x**3
    ...     def backward(self, g):
    ...         (x,) = self.saved_tensors
    ...         return 3 * x**2 * g
    >>> x = Tensor([1.0, 2.0], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad
    tensor([ 3., 12.])
    """

    def __init__(self) -> None:
        super().__init__((), (), ())
        self._saved: tuple | None = ()
        self._inputs: tuple = ()

    def forward(self, *args, **kwargs):
        """Compute the output array(s) from input arrays."""
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def backward(self, *grads):
        """Return one gradient array per forward input, given one per output."""
        raise NotImplementedError(f"{type(self).__name__} must define backward()")

    def save_for_backward(self, *arrays) -> None:
        """Keep arrays for ``backward``; an input modified in place later is detected."""
        self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The arrays given to ``save_for_backward``."""
        if self._saved is None:
            raise GraphError(
                f"{type(self).__name__}: its saved arrays were freed by an earlier backward; "
                "pass retain_graph=True to the first backward()"
            )
        return self._saved

    @property
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{type(self).__name__}Backward>"

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the op on Tensors and record it in the graph; returns a Tensor (or a tuple)."""
        if counting.intercept is not None:
            result = counting.intercept.run_function(cls, args, kwargs)
            if result is not counting.PLAIN:
                return result
        if batch_hook is not None:
            batch_hook(cls, args, kwargs)  # no batching rule: vmap loops over examples
        node = cls()
        arrays = [arg.data if isinstance(arg, Tensor) else arg for arg in args]
        outputs = node.forward(*arrays, **kwargs)
        is_tuple = isinstance(outputs, tuple)
        outs = [np.asarray(o) for o in (outputs if is_tuple else (outputs,))]
        needs_grad = state.grad_enabled and any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        )
        # Results are of the first input Tensor's class, so a Tensor subclass (a teaching
        # text's) keeps its kind through the Functions it defines.
        kind = next((type(a) for a in args if isinstance(a, Tensor)), Tensor)
        results = [kind._make(o) for o in outs]
        if needs_grad:
            node.edges = tuple(
                edge_of(a) if isinstance(a, Tensor) and a.requires_grad else None for a in args
            )
            node.out_meta = tuple((o.shape, o.dtype) for o in outs)
            # Saved inputs and outputs alike: an output changed in place breaks backward too.
            # Outputs by their counters (`Node.watched` says why).
            saved = node._saved or ()
            node.watched = tuple(
                a for a in args if isinstance(a, Tensor) and any(a.data is s for s in saved)
            ) + tuple(r._version_counter for r in results if any(r.data is s for s in saved))
            for i, result in enumerate(results):
                result._requires_grad = True
                result._grad_fn = node
                result._output_nr = i
        return tuple(results) if is_tuple else results[0]

    def _backward(self, grads: list, create_graph: bool, release: bool) -> list:
        if create_graph:
            raise GraphError(
                f"{self.name}: a Function's backward works on arrays, so it cannot be "
                "differentiated twice (create_graph=True); write it with tensor ops instead"
            )
        out = self.backward(*grads)
        out = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(out) != len(self.edges):
            raise GraphError(
                f"{self.name}: backward returned {len(out)} gradients for {len(self.edges)} inputs"
            )
        if release:
            self.release()
        return out

    def release(self) -> None:
        if self._saved:
            self._saved, self.watched = None, ()


def _propagate_tangent(op: Op, args, arrays, params, result: Tensor) -> None:
    """Forward mode: give ``result`` the tangent of ``op`` from its inputs' tangents."""
    tangents = [a._tangent if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return
    if op.jvp is None:
        raise GraphError(f"{op.name}: forward mode (jvp) is not implemented for this op")
    if op.jvp == LINEAR:
        inputs = [
            (t if t is not None else np.zeros_like(a)) if isinstance(arg, Tensor) else a
            for arg, a, t in zip(args, arrays, tangents)
        ]
        tangent = op.forward(*inputs, **params)
    else:
        env = dict(params)
        for name, a, t in zip(op.inputs, arrays, tangents):
            env[name] = a
            env["d" + name] = t
            env[name + "_shape"] = np.shape(a)
        env["out"] = result.data
        for name, rule in (op.residuals or {}).items():  # no node kept them: computed here
            env[name] = rule(None, env)
        tangent = op.jvp(env)
    if tangent is not None:
        tangent = np.asarray(tangent)
        if tangent.shape != result.shape:
            tangent = np.broadcast_to(tangent, result.shape).copy()
        result._tangent = tangent.astype(result.dtype, copy=False)
