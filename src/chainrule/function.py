"""Graph nodes for the tensor engine: `Op` rows, `elementwise()`, and the `Function` API.

An `Op` is one row: a NumPy forward plus one VJP rule per input and a JVP. A rule asks by
name for what it needs (``g``, inputs ``x``/``y``, ``out``, ``x_shape``, op parameters), and
a node saves exactly that. A `Function` subclass is the user-facing way to add an op whose
forward and backward work on arrays. The backward engine is in `chainrule.autograd`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from operator import itemgetter

import numpy as np

from . import counting
from .autograd import Node, VersionCounter, _sequence, _user_frames, state
from .errors import DTypeError, GraphError, ShapeError, fmt_dtype, fmt_shape
from .tensor import Tensor

#: JVP marker for ops that are linear in their differentiable inputs: the JVP is the op
#: itself applied to the tangents (reshape, sum, transpose, indexing...).
LINEAR = "linear"


class Rule:
    """A VJP or JVP function with the names of what it asks for, resolved once."""

    __slots__ = ("fn", "names", "fetch", "spread")

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.names = tuple(inspect.signature(fn).parameters)
        self._resolve(self.names)

    def _resolve(self, names: tuple[str, ...]) -> None:
        # ``itemgetter`` reads every argument in one C call; for one name it returns the
        # bare value, hence ``spread`` (unpack the tuple) only for two or more.
        self.fetch = itemgetter(*names) if names else None
        self.spread = len(names) > 1

    def __call__(self, env: dict):
        if self.spread:
            return self.fn(*self.fetch(env))
        return self.fn(self.fetch(env)) if self.fetch else self.fn()


class Scaled(Rule):
    """The VJP of one input of an elementwise op: ``g * partial``, where ``partial`` is the
    local derivative ∂out/∂input and asks by name for what it needs (``x``, ``y``, ``out``)."""

    __slots__ = ()

    def __init__(self, partial: Callable) -> None:
        super().__init__(partial)
        self.names = ("g", *self.names)  # what a node saves for it: the partial's arguments

    def __call__(self, env: dict):
        if self.spread:
            return env["g"] * self.fn(*self.fetch(env))
        return env["g"] * (self.fn(self.fetch(env)) if self.fetch else self.fn())


class ScaledBySaved(Rule):
    """``g * value`` for an elementwise input whose local derivative is one of the values the
    node saves, named (for mul, ∂(x*y)/∂x is ``"y"``): no partial function to call."""

    __slots__ = ("saved_name",)

    def __init__(self, saved_name: str) -> None:
        self.saved_name = saved_name
        self.names = ("g", saved_name)  # what a node saves for it (no function to fetch for)

    def __call__(self, env: dict):
        return env["g"] * env[self.saved_name]


#: The VJP that hands the output's gradient straight to the input (x + y, for both).
PASS = Rule(lambda g: g)


class NodePlan:
    """What a node of one op does when a given set of its inputs needs gradients, worked out
    once per op and set: ``vjps`` (the rule for each input, None for one that gets no
    gradient), the inputs it saves (index, name), the input shapes it saves (index,
    ``x_shape``), and whether it saves ``out``. ``every_input`` says the saved inputs are
    all of them, so a node watches its arguments as they came for in-place changes."""

    __slots__ = ("vjps", "inputs", "shapes", "out", "every_input")

    def __init__(self, vjps: tuple, inputs: tuple, shapes: tuple, out: bool, n: int) -> None:
        self.vjps, self.inputs, self.shapes, self.out = vjps, inputs, shapes, out
        self.every_input = len(inputs) == n

    def sources(self, args: tuple) -> tuple:
        """The arguments whose arrays a node saves (to watch for in-place changes), when
        they are not all of them (`apply_op` keeps ``args`` itself then)."""
        return tuple([args[i] for i, _ in self.inputs])


def _as_rule(fn: Callable | Rule | None) -> Rule | None:
    return fn if fn is None or isinstance(fn, Rule) else Rule(fn)


class Op:
    """One differentiable tensor op: forward on arrays, a VJP per input, and a JVP.

    ``inputs`` names the array operands in order (``("x", "y")`` by default for two
    VJPs); any other keyword is an op parameter handed to ``forward`` and to rules that ask
    for it. A VJP of None marks an input that gets no gradient (a condition, an index);
    ``vjp=None`` makes the whole op non-differentiable (comparisons, argmax). ``view=True``
    says the output shares memory with the first input, so both share a version counter.
    ``check(*arrays, **params)`` may raise a clear error before NumPy runs. Calling an Op
    runs it on tensors: ``__call__`` is `apply_op`.

    >>> twice = Op("twice", lambda x: 2 * x, vjp=(lambda g: 2 * g,), jvp=LINEAR)
    >>> y = twice(Tensor([1.0, 2.0], requires_grad=True)); y
    tensor([2., 4.], grad_fn=<TwiceBackward>)
    """

    def __init__(
        self,
        name: str,
        forward: Callable,
        vjp: Sequence[Callable | None] | None,
        jvp: Sequence[Callable | None] | str | None = None,
        inputs: Sequence[str] | None = None,
        view: bool = False,
        check: Callable | None = None,
    ) -> None:
        self.name = name
        self.forward = forward
        n_inputs = len(vjp) if vjp else len(inspect.signature(forward).parameters)
        self.inputs = tuple(inputs or ("x", "y", "z")[:n_inputs])
        self.vjp = tuple(_as_rule(fn) for fn in vjp) if vjp else None
        self.jvp = jvp if jvp in (None, LINEAR) else tuple(_as_rule(fn) for fn in jvp)
        self.view = view
        self.check = check
        self.backward_name = "".join(part.capitalize() for part in name.split("_")) + "Backward"
        self._plans: dict[int, NodePlan] = {}

    def plan(self, needs_grad: int) -> NodePlan:
        """The plan of a node whose inputs flagged in ``needs_grad`` (bit i for input i) get
        gradients. Only the VJPs that will run count, so ``x * 3`` saves 3 but not x."""
        plan = self._plans.get(needs_grad)
        if plan is None:
            vjps = tuple(rule if needs_grad >> i & 1 else None for i, rule in enumerate(self.vjp))
            asked = {name for rule in vjps if rule for name in rule.names}
            named = list(enumerate(self.inputs))
            plan = self._plans[needs_grad] = NodePlan(
                vjps,
                tuple((i, n) for i, n in named if n in asked),
                tuple((i, f"{n}_shape") for i, n in named if f"{n}_shape" in asked),
                "out" in asked,
                len(self.inputs),
            )
        return plan

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


def _scaled(partial: Callable | float | str) -> Rule:
    """The VJP g * partial for an elementwise op; constants 1 and -1 pass g through."""
    if isinstance(partial, str):
        return ScaledBySaved(partial)
    if partial == 1:
        return PASS
    if partial == -1:
        return Rule(lambda g: -g)
    if not callable(partial):
        if partial == 0:
            return Rule(lambda g: g * 0)
        raise TypeError(f"elementwise: a constant partial must be 0, 1 or -1, got {partial}")
    return Scaled(partial)


def _tangent_term(partial: Callable | float | str, input_name: str) -> Callable:
    """The JVP term partial * d<input> for an elementwise op."""
    tangent = "d" + input_name
    if isinstance(partial, str):
        return lambda **env: env[partial] * env[tangent]
    if not callable(partial):
        if partial == 0:
            return lambda **env: env[tangent] * 0
        return (lambda **env: env[tangent]) if partial == 1 else (lambda **env: -env[tangent])
    local = Rule(partial)
    return lambda **env: local(env) * env[tangent]


def elementwise(name: str, forward: Callable, *partials: Callable | float | str, **options) -> Op:
    """An elementwise Op from its local derivatives: one per input, asking for x, y, out.

    The VJP for input i is ``g * partial_i`` and the JVP is ``sum(partial_i * d_i)``;
    the engine sums each VJP back to its input's broadcast shape. A constant partial (1, -1
    or 0) saves nothing; a name (``"y"`` for mul's x) is that saved value itself.

    >>> sin = elementwise("sin_example", np.sin, lambda x: np.cos(x))
    >>> sin.vjp[0].names
    ('g', 'x')
    """
    inputs = options.pop("inputs", ("x", "y", "z")[: len(partials)])
    vjp = [_scaled(p) for p in partials]
    terms = [_tangent_term(p, n) for p, n in zip(partials, inputs)]
    op = Op(name, forward, vjp, jvp=None, inputs=inputs, **options)
    op.jvp = ElementwiseJVP(terms, inputs)
    return op


class ElementwiseJVP:
    """The JVP of an elementwise op: the sum of partial * tangent over inputs with tangents."""

    __slots__ = ("terms", "inputs")

    def __init__(self, terms, inputs) -> None:
        self.terms, self.inputs = terms, inputs

    def __call__(self, env: dict):
        total = None
        for term, name in zip(self.terms, self.inputs):
            if env.get("d" + name) is not None:
                value = term(**env)
                total = value if total is None else total + value
        return total


#: Set by `chainrule.batching` while vmap runs a function on batched tensors: it runs an op
#: with a batched argument through the op's batching rule (None otherwise: one check per op).
batch_hook: Callable | None = None

#: Makes an object without running its class's ``__init__`` (for apply_op's results and nodes).
_new = object.__new__


def apply_op(op: Op, *args, **params) -> Tensor:
    """Run ``op`` on Tensors (or Python numbers) and, when needed, record a graph node.

    It is also `Op.__call__` (``mul(x, y)`` is ``apply_op(mul, x, y)``). This runs once per
    op, so it makes the result Tensor and the `OpNode` itself, field by field, instead of
    calling their constructors: those two calls would add about 5% to W2's per-op time.
    """
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
            arrays.append(arg.data)
            if arg.requires_grad:
                parent = arg.grad_fn
                edges.append(arg if parent is None else (parent, arg._output_nr))
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
    try:
        out = op.forward(*arrays, **params) if params else op.forward(*arrays)
    except (ValueError, IndexError, TypeError) as exc:
        raise _explain(op, arrays, exc) from None
    if type(out) is not np.ndarray and not isinstance(out, np.ndarray):
        out = np.asarray(out)
    counter = args[0]._version_counter if op.view else None  # a view shares its base's

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
        node.watched = watched

    # The result, as `Tensor._make` would make it.
    result = _new(Tensor)
    result.data = out
    result.grad = result._hooks = result._tangent = None
    result.grad_fn = node
    result.requires_grad = node is not None
    result._output_nr = 0
    result._counter = counter
    if modes.forward_ad and op.vjp is not None:
        _propagate_tangent(op, args, arrays, params, result)
    if counting.active is not None:
        flops = counting.FLOPS.get(op.name)
        counting.active.record_forward(op.name, flops(*map(np.shape, arrays)) if flops else 0)
    return result


Op.__call__ = apply_op


def _explain(op: Op, arrays: Sequence, exc: Exception) -> Exception:
    """A clear error from a NumPy failure: the op, the operands' shapes and dtypes, the cause."""
    described = ", ".join(
        f"{fmt_shape(np.shape(a))} {fmt_dtype(getattr(a, 'dtype', type(a)))}" for a in arrays
    )
    reason = str(exc).split("\n")[0]
    if "broadcast" in reason:
        shapes = " and ".join(fmt_shape(np.shape(a)) for a in arrays)
        return ShapeError(f"{op.name}: shapes {shapes} do not broadcast together")
    kind = DTypeError if isinstance(exc, TypeError) else ShapeError
    return kind(f"{op.name}: cannot apply to {described}: {reason}")


def _edge(tensor: Tensor):
    """Where the gradient of ``tensor`` goes: the leaf itself, or (its node, output index)."""
    if tensor.grad_fn is None:
        return tensor
    return (tensor.grad_fn, tensor._output_nr)


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
    parameters) to its value; `Rule` reads its arguments from it by name. `apply_op` makes
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
        # Without create_graph the rules read the saved dict itself, "g" added for the call.
        env = self._as_tensors() if create_graph else self.saved
        g = env["g"] = grads[0]
        in_grads = []  # a loop, not a comprehension: that would be one more frame per node
        for rule in self.plan.vjps:
            in_grads.append(None if rule is None else g if rule is PASS else rule(env))
        if release and (self.plan.inputs or self.plan.out):
            self.saved, self.watched = None, ()  # `release`, inlined
        else:
            del env["g"]
        return in_grads

    def _as_tensors(self) -> dict:
        """The saved values as Tensors connected to the graph, so rules record ops."""
        env = dict(self.saved)
        for i, name in self.plan.inputs:
            edge = self.edges[i]
            if isinstance(edge, Tensor):
                env[name] = edge
            elif edge is not None:
                env[name] = Tensor._make(env[name], grad_fn=edge[0], output_nr=edge[1])
        if self.plan.out:
            env["out"] = Tensor._make(env["out"], grad_fn=self, output_nr=0)
        return env

    def release(self) -> None:
        if self.plan.inputs or self.plan.out:
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
        results = [Tensor._make(o) for o in outs]
        if needs_grad:
            node.edges = tuple(
                _edge(a) if isinstance(a, Tensor) and a.requires_grad else None for a in args
            )
            node.out_meta = tuple((o.shape, o.dtype) for o in outs)
            # Saved inputs and outputs alike: an output changed in place breaks backward too.
            # Outputs by their counters (`Node.watched` says why).
            saved = node._saved or ()
            node.watched = tuple(
                a for a in args if isinstance(a, Tensor) and any(a.data is s for s in saved)
            ) + tuple(r._version_counter for r in results if any(r.data is s for s in saved))
            for i, result in enumerate(results):
                result.requires_grad = True
                result.grad_fn = node
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
        if isinstance(op.jvp, ElementwiseJVP):
            tangent = op.jvp(env)
        else:
            tangent = _sum_jvp(op.jvp, env, tangents)
    if tangent is not None:
        tangent = np.asarray(tangent)
        if tangent.shape != result.shape:
            tangent = np.broadcast_to(tangent, result.shape).copy()
        result._tangent = tangent.astype(result.dtype, copy=False)


def _sum_jvp(rules, env: dict, tangents: list):
    """Sum the JVP terms of the inputs that carry a tangent."""
    total = None
    for rule, tangent in zip(rules, tangents):
        if rule is None or tangent is None:
            continue
        value = rule(env)
        total = value if total is None else total + value
    return total
