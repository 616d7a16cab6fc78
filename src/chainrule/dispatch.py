"""Running op rows: `apply_op` runs a row on Tensors and records an `OpNode` when gradients
are needed; forward mode carries tangents; `promote` gives a float result PyTorch's dtype.

What a row is, is declared in `chainrule.op` (calling a row is `apply_op`); the backward pass
that runs the nodes is in `chainrule.autograd`; `chainrule.function` holds `Function`, the
user-facing way to add an op whose forward and backward see arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import counting, observe
from ._tensor import Tensor
from .dtypes import get_default_dtype
from .errors import ChainruleError, DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from .graph import Node, VersionCounter, _sequence, _user_frames, state
from .numpy_warnings import rerun_quietly
from .signatures import TRANSLATED, translate
from .tensor_base import ViewOf, current_view
from .tensor_rules import LINEAR, NOT_COUNTED, PASS

# ``op`` below is an `Op` row: `chainrule.op` declares rows and imports this module (calling
# a row is `apply_op`), so the class is named here in prose, not imported.

#: Set by `chainrule.func.batching` while vmap runs a function on batched tensors: it runs an op
#: with a batched argument through the op's batching rule (None otherwise: one check per op).
batch_hook: Callable | None = None

#: Makes an object without running its class's ``__init__`` (for apply_op's results and nodes).
_new = object.__new__
_ndarray = np.ndarray  # a module global: one lookup, not np's attribute, per op


def view_of(op, args: tuple, params: dict) -> tuple:
    """(the version counter, the `ViewOf` record) of the result of the view row ``op`` on
    ``args``: a view shares its base's counter and remembers how it was made from it."""
    source = args[0]
    counter = source._version_counter
    step = ((op, args[1:], params),)
    parent = source._view
    if parent is None:
        return counter, ViewOf(source, step, counter.value)
    return counter, ViewOf(parent.base, parent.steps + step, counter.value)


def apply_op(op, *args, **params) -> Tensor:
    """Run ``op`` on Tensors (or Python numbers) and, when needed, record a graph node.

    It is also `Op.__call__` (``mul(x, y)`` is ``apply_op(mul, x, y)``). This is the engine's
    speed seam: it runs once per op, so it builds edges (`edge_of`), the result Tensor
    (`Tensor._make`) and the `OpNode` itself, field by field, instead of calling them (a test
    pins these fields to their classes' slots; docs/guides/performance.md has the numbers).
    """
    if observe.current is not None:
        # The observer may run the op itself (to time or record it), calling here again
        # unobserved, or answer PLAIN to let it run as usual.
        result = observe.current.run_op(op, args, params)
        if result is not observe.PLAIN:
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
            arrays.append(arg._array)
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
        out = promote(op, out, arrays, params)
    counter = view = None
    if op.view and np.may_share_memory(out, arrays[0]):  # reshape may have had to copy
        counter, view = view_of(op, args, params)

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
                shaped = arrays[i]
                saved[name] = shaped.shape if type(shaped) is _ndarray else np.shape(shaped)
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
    result._array = out
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


def promote(op, out: np.ndarray, arrays: Sequence, params: dict) -> np.ndarray:
    """A float result in PyTorch's dtype. NumPy gives integers (and Python floats meeting
    them) float64, or float16 for bool and 8-bit ones; PyTorch gives the widest float
    operand's dtype, else the default float dtype. So ``int_tensor * 2.5``,
    ``int_tensor.exp()``, ``int_tensor / 2`` and ``bool_tensor.sin()`` are float32, and
    ``int_tensor + float32_tensor`` is float32, as in PyTorch. The result is kept when an
    operand array has its dtype, the op was asked for a dtype (``cast``) or the row says the
    dtype is its own choice (``keeps_float64``). A compiled program replays it after the
    forward of each op whose result may need it."""
    if op.keeps_float64 or "dtype" in params:
        return out
    floats = [a.dtype for a in arrays if type(a) is np.ndarray and a.dtype.kind == "f"]
    if out.dtype in floats:
        return out
    target = max(floats, key=lambda d: d.itemsize) if floats else get_default_dtype()
    if out.dtype.char == "e":  # float16 from bools or 8-bit integers: too coarse to round up
        exact = [a.astype(target) if type(a) is np.ndarray and a.dtype.kind in "biu" else a
                 for a in arrays]  # fmt: skip
        return np.asarray(op.forward(*exact, **params))
    if target == out.dtype:
        return out
    return out.astype(target)


def _explain(op, arrays: Sequence, exc: Exception) -> Exception:
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

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
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
        # While the compiler records, an input without gradient is a Tensor too, so that what
        # the rules do with it (x.mT) is recorded rather than done in NumPy out of sight.
        observer = observe.current
        tracing = observer is not None and observer.recording()
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


def _propagate_tangent(op, args, arrays, params, result: Tensor) -> None:
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
        env["out"] = result._array
        for name, rule in (op.residuals or {}).items():  # no node kept them: computed here
            env[name] = rule(None, env)
        tangent = op.jvp(env)
    if tangent is not None:
        tangent = np.asarray(tangent)
        if tangent.shape != result.shape:
            tangent = np.broadcast_to(tangent, result.shape).copy()
        result._tangent = tangent.astype(result.dtype, copy=False)
