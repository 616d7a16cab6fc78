"""Declaring a tensor op: the `Op` row, the `elementwise` and `comparison` builders, the markers
a row uses and the default batching rules.

A row is everything there is to know about one op: its NumPy forward, a VJP per input, a
JVP, its batching rule for vmap, its FLOP count and its docstring. Calling a row runs it:
``Op.__call__`` is `chainrule.dispatch.apply_op`. How rules take their arguments is
`chainrule.tensor_rules`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np

from .dispatch import apply_op
from .tensor_rules import (
    LINEAR,
    NOT_COUNTED,
    PASS,
    Scaled,
    ScaledBySaved,
    SummedJVP,
    TensorRule,
)

#: What a row can be. The kind chooses defaults (an elementwise row batches by broadcasting;
#: only a contraction must give its FLOPs) and groups the op table in the docs.
KINDS = (
    "elementwise",  # one output element from the same element of each input (broadcasting)
    "comparison",  # elementwise, with a bool result and no gradient
    "reduction",  # over ``dim``: sum, mean, softmax...
    "shape",  # moves or copies elements: reshape, permute, cat, pad...
    "indexing",  # picks or writes elements by index
    "contraction",  # sums of products: matmul, einsum
    "window",  # sliding windows for convolution and pooling
    "decomposition",  # factorisations and solves: inv, solve, cholesky, qr, svd, eigh...
    "cell",  # a recurrent cell's gate arithmetic: elementwise per gate of the last dim
)


class NeedsValues(Exception):
    """vmap level ``level`` cannot go on with one batched run; vmap catches this and runs its
    function once per example. A batching rule raises it (level None: the running level)
    for arguments it cannot batch; the engine raises it where a batched tensor's values are
    read, for an op whose row loops, and for in-place changes of a batched tensor."""

    def __init__(self, level: int | None, reason: str) -> None:
        super().__init__(reason)
        self.level = level


class Loops:
    """The batching rule of a row that has none on purpose: under vmap, the function runs
    once per example, for the ``reason`` given (shown when vmap falls back)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"Loops({self.reason!r})"


class PerSeed:
    """A residual through which the rules of one node share their work: ``once(g, work)``
    runs ``work()`` for the first rule that asks with the gradient ``g`` and hands its result
    to the others (a scan's backward through time, batch norm's channel sums serve every
    input's rule). A new ``g`` (a second backward with retain_graph) works it out anew; a
    backward on Tensors computes the residual again, so it never sees arrays' results."""

    __slots__ = ("seed", "result")

    def __init__(self) -> None:
        self.seed = self.result = None

    def once(self, g, work: Callable):
        """``work()``'s result for the gradient ``g``, computed at the first call with it."""
        if self.seed is not g:
            self.result = work()
            self.seed = g
        return self.result


class NodePlan:
    """What a node of one op does when a given set of its inputs needs gradients, worked out
    once per op and set: ``vjps`` (the rule for each input, None for one that gets no
    gradient), the inputs it saves (index, name), the input shapes it saves (index,
    ``x_shape``), whether it saves ``out``, and the names of the row's residuals it saves.
    ``every_input`` says the saved inputs are all of them, so a node watches its arguments
    as they came for in-place changes; ``frees`` that the node holds arrays to free once its
    backward has run."""

    __slots__ = ("vjps", "inputs", "shapes", "out", "residuals", "every_input", "frees")

    def __init__(
        self, vjps: tuple, inputs: tuple, shapes: tuple, out: bool, residuals: tuple, n: int
    ) -> None:
        self.vjps, self.inputs, self.shapes, self.out = vjps, inputs, shapes, out
        self.residuals = residuals
        self.every_input = len(inputs) == n
        # arrays to free after backward (shapes are tiny)
        self.frees = bool(inputs) or out or bool(residuals)

    def sources(self, args: tuple) -> tuple:
        """The arguments whose arrays a node saves (to watch for in-place changes), when
        they are not all of them (`apply_op` keeps ``args`` itself then)."""
        return tuple([args[i] for i, _ in self.inputs])


def _as_rule(fn: Callable | TensorRule | None) -> TensorRule | None:
    return fn if fn is None or isinstance(fn, TensorRule) else TensorRule(fn)


class Op:
    """One tensor op: its forward on arrays and everything else known about it.

    - ``vjp``: one rule per input (None for an input without gradient, a condition or an
      index); ``vjp=None`` makes the whole op non-differentiable (comparisons, argmax).
    - ``jvp``: one rule per input, summed over the inputs with tangents, or `LINEAR` (the
      op applied to the tangents), or None (no forward mode).
    - ``inputs`` names the array operands in order (``("x", "y")`` by default for two VJPs);
      any other keyword is an op parameter handed to ``forward`` and to rules that ask.
    - ``kind``: one of `KINDS` (every row of chainrule's own table says it; a row of yours
      may leave it out, and then vmap runs it per example).
    - ``batch(op, values, batched, params)``: the batching rule vmap runs the op through,
      given the arguments (batched ones with the batch dim first), which of them are batched
      and the params; it returns the batched result, batch dim first. `Loops` says there is
      none on purpose; None (a row of yours that does not say) loops too. Elementwise and
      comparison rows default to `batch_elementwise`.
    - ``flops(*input_shapes)``: the FLOPs `chainrule.count_ops` records, or `NOT_COUNTED`
      (the default, except for contractions, which must give a formula).
    - ``doc``: what the row computes, in one line; it becomes the row's docstring (the
      table's rows all have one; a test checks every fact above for every row).
    - ``method=True``: a row of one input is also a Tensor method of its name (``x.exp()``
      is ``exp(x)``), as PyTorch's ``variants: method``; `chainrule._tensor` binds these
      when it is imported. Methods with more arguments are written in `chainrule._tensor`,
      where their arguments get PyTorch's names (``other``...).
    - ``keeps_float64=True``: a float64 result is the op's own choice even from operands that
      are not float64 (bincount of integer weights, as PyTorch); otherwise the engine gives
      such a result the default float dtype, as PyTorch promotes integers.
    - ``view=True``: the output shares memory with the first input (one version counter);
      ``check(*arrays, **params)`` may raise a clear error before NumPy runs.
    - ``writes_out=True``: ``forward`` takes ``out=``, an array of the result's shape and
      dtype to write the result into (a NumPy ufunc always does); a compiled program's memory
      plan then reuses arrays for it (`chainrule.compiler.passes.plan_memory`).
    - ``decomposition(*inputs, **params)``: the forward written with ops, so that given
      Tensors it records them; the compiler records these instead of the row when they give
      the same array, so that work the backward repeats is found and shared (GELU's backward
      computes erf again).
    - ``residuals``: values the VJPs ask for by name besides inputs, ``out`` and params, as
      ``{name: fn}``, each ``fn`` asking by name for inputs and params (as a rule does) and
      written with `chainrule.xp`; with ``forward_saving(*arrays, **params) -> (out,
      {name: array})``, the forward that computes them on the way. A node keeps the arrays
      ``forward_saving`` made, so its backward need not compute them again (GELU's erf,
      layer norm's mean and deviation); a backward on Tensors (``create_graph=True``, the
      compiler's record) computes them again from the inputs with ops, so that they are
      differentiated and recorded. Residuals are the node's own arrays: the output may still
      be changed in place, as in PyTorch.
    - ``scalar``: for an elementwise row whose ``forward`` is not a NumPy ufunc, the same
      function on one element of each input (params by keyword), written with `math` and
      NumPy scalars so that Numba compiles it; a fused kernel calls it per element
      (`chainrule.compiler.fusion`) and casts its result to the row's output dtype. A ufunc
      forward already says what one element is.

    Calling an Op runs it on tensors: ``Op.__call__`` is `chainrule.dispatch.apply_op`.

    >>> import chainrule as cr
    >>> twice = Op("twice", lambda x: 2 * x, vjp=(lambda g: 2 * g,), jvp=LINEAR,
    ...            kind="elementwise", doc="2 * x.")
    >>> y = twice(cr.tensor([1.0, 2.0], requires_grad=True)); y
    tensor([2., 4.], grad_fn=<TwiceBackward>)
    """

    def __init__(
        self,
        name: str,
        forward: Callable,
        vjp: Sequence[Callable | None] | None,
        jvp: Sequence[Callable | None] | str | SummedJVP | None = None,
        *,
        kind: str | None = None,
        doc: str = "",
        batch: Callable | Loops | None = None,
        flops: Callable | str | None = None,
        inputs: Sequence[str] | None = None,
        method: bool = False,
        view: bool = False,
        check: Callable | None = None,
        keeps_float64: bool = False,
        writes_out: bool = False,
        decomposition: Callable | None = None,
        residuals: dict[str, Callable] | None = None,
        forward_saving: Callable | None = None,
        scalar: Callable | None = None,
    ) -> None:
        if kind is not None and kind not in KINDS:
            raise ValueError(f"Op {name!r}: kind must be one of {KINDS}, got {kind!r}")
        if flops is None and kind == "contraction":
            raise ValueError(f"Op {name!r}: a contraction must give its flops formula")
        if (residuals is None) != (forward_saving is None):
            raise ValueError(f"Op {name!r}: residuals and forward_saving go together")
        self.name = name
        self.forward = forward
        n_inputs = len(vjp) if vjp else len(inspect.signature(forward).parameters)
        self.inputs = tuple(inputs or ("x", "y", "z")[:n_inputs])
        if method and len(self.inputs) != 1:
            raise ValueError(f"Op {name!r}: method=True is for rows of one input")
        self.vjp = tuple(_as_rule(fn) for fn in vjp) if vjp else None
        if jvp is None or jvp == LINEAR or isinstance(jvp, SummedJVP):
            self.jvp = jvp
        else:
            self.jvp = SummedJVP([_as_rule(fn) for fn in jvp], self.inputs)
        self.kind = kind
        elementwise = kind in ("elementwise", "comparison")
        self.batch = batch_elementwise if batch is None and elementwise else batch
        self.flops = NOT_COUNTED if flops is None else flops
        self.__doc__ = doc
        self.method = method
        self.view = view
        self.check = check
        self.keeps_float64 = keeps_float64
        self.writes_out = writes_out or isinstance(forward, np.ufunc)
        self.decomposition = decomposition
        self.residuals = (
            None if residuals is None else {n: _as_rule(fn) for n, fn in residuals.items()}
        )
        self.forward_saving = forward_saving
        self.scalar = scalar
        self.backward_name = "".join(part.capitalize() for part in name.split("_")) + "Backward"
        self._plans: dict[int, NodePlan] = {}

    def plan(self, needs_grad: int) -> NodePlan:
        """The plan of a node whose inputs flagged in ``needs_grad`` (bit i for input i) get
        gradients. Only the VJPs that will run count, so ``x * 3`` saves 3 but not x."""
        plan = self._plans.get(needs_grad)
        if plan is None:
            vjps = tuple(rule if needs_grad >> i & 1 else None for i, rule in enumerate(self.vjp))
            asked = {name for rule in vjps if rule for name in rule.names}
            residuals = tuple(n for n in self.residuals or () if n in asked)
            for n in residuals:  # a backward on Tensors computes them again from these
                asked.update(self.residuals[n].names)
            named = list(enumerate(self.inputs))
            plan = self._plans[needs_grad] = NodePlan(
                vjps,
                tuple((i, n) for i, n in named if n in asked),
                tuple((i, f"{n}_shape") for i, n in named if f"{n}_shape" in asked),
                "out" in asked,
                residuals,
                len(self.inputs),
            )
        return plan

    #: ``row(*tensors, **params)`` runs the row: the dispatcher itself, not a method that calls
    #: it (one frame less on every op).
    __call__ = apply_op

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


# Elementwise rows.


def _scaled(partial: Callable | float | str) -> TensorRule:
    """The VJP g * partial for an elementwise op; constants 1 and -1 pass g through."""
    if isinstance(partial, str):
        return ScaledBySaved(partial)
    if partial == 1:
        return PASS
    if partial == -1:
        return TensorRule(lambda g: -g)
    if not callable(partial):
        if partial == 0:
            return TensorRule(lambda g: g * 0)
        raise TypeError(f"elementwise: a constant partial must be 0, 1 or -1, got {partial}")
    return Scaled(partial)


class _TimesTangent(TensorRule):
    """The JVP term partial * d<input> of one input of an elementwise op."""

    __slots__ = ("partial", "tangent")

    def __init__(self, partial: Callable | float | str, input_name: str) -> None:
        self.partial, self.tangent = partial, "d" + input_name
        if callable(partial):
            super().__init__(partial)
        else:
            self.fn, self.names, self.takes_g = None, (), False
            self._resolve(())

    def __call__(self, g, env: dict):
        partial, tangent = self.partial, env[self.tangent]
        if isinstance(partial, str):
            return env[partial] * tangent
        if not callable(partial):
            return tangent * partial if partial != 1 else tangent
        return super().__call__(None, env) * tangent


def elementwise(name: str, forward: Callable, *partials: Callable | float | str, **row) -> Op:
    """An elementwise Op from its local derivatives: one per input, asking for x, y, out.

    The VJP for input i is ``g * partial_i`` and the JVP is ``sum(partial_i * d_i)``;
    the engine sums each VJP back to its input's broadcast shape. A constant partial (1, -1
    or 0) saves nothing; a name (``"y"`` for mul's x) is that saved value itself. The row
    batches by broadcasting (`batch_elementwise`); ``row`` takes `Op`'s other keywords
    (``doc`` is required).

    >>> sin = elementwise("sin_example", np.sin, lambda x: np.cos(x), doc="sin(x).")
    >>> sin.vjp[0].names, sin.kind
    (('g', 'x'), 'elementwise')
    """
    inputs = row.pop("inputs", ("x", "y", "z")[: len(partials)])
    vjp = [_scaled(p) for p in partials]
    jvp = SummedJVP([_TimesTangent(p, n) for p, n in zip(partials, inputs)], inputs)
    return Op(name, forward, vjp, jvp, inputs=inputs, kind="elementwise", **row)


def comparison(name: str, forward: np.ufunc, **row) -> Op:
    """A comparison or logical row from its NumPy ufunc: a bool result, no gradient, one
    input per ufunc operand (``x``, ``y``); it batches by broadcasting, as elementwise rows do.

    >>> lt = comparison("lt_example", np.less, doc="x < y.")
    >>> lt.inputs, lt.vjp, lt.kind
    (('x', 'y'), None, 'comparison')
    """
    return Op(name, forward, vjp=None, inputs=("x", "y")[: forward.nin], kind="comparison",
              **row)  # fmt: skip


# The batching rules that builders and kinds fill in. Rows of other kinds write theirs beside
# the row (reshape's moves its shape past the batch dim...). The batched values are Tensors,
# so a rule reshapes them with Tensor methods: no import of the engine.


def with_rank(x, rank: int):
    """A batched ``x`` with size-1 dims after the batch dim, so one example has ``rank`` dims
    and broadcasts against unbatched operands the way one example would."""
    missing = rank - (x.ndim - 1)
    if missing <= 0:
        return x
    return x.reshape((x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))


def batch_elementwise(op: Op, values: list, batched: list, params: dict):
    """The batching rule of an elementwise row: broadcasting aligns dims from the right, so
    give every batched operand the full rank of one example and the batch dim lands first."""
    ranks = [np.ndim(v) - b for v, b in zip(values, batched)]
    ranks += [np.ndim(p) for p in params.values() if hasattr(p, "shape")]
    rank = max(ranks)
    return op(*[with_rank(v, rank) if b else v for v, b in zip(values, batched)], **params)


def shifted(dims) -> tuple:
    """Dimension numbers of one example as numbers in the batch (one more: batch dim first)."""
    return tuple(d + 1 for d in dims)
