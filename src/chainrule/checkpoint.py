"""Gradient checkpointing: keep only a block's inputs, recompute its forward during backward.

Trades one extra forward pass for not storing the block's intermediate activations; works on
Tensors (a graph node) and on scalar Values (a node with a ``_backward`` closure).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from ._tensor import Tensor
from .autograd import Node, enable_grad, no_grad, run_backward, state
from .errors import GraphError
from .random import default_generator
from .scalar.value import Value, topological_order


@contextmanager
def _same_random_numbers(rng_state: tuple) -> Iterator[None]:
    """Draw from the default generator as from ``rng_state`` (dropout inside a block replays
    the same masks), then put the generator back where it was."""
    current = default_generator.snapshot()
    default_generator.restore(rng_state)
    try:
        yield
    finally:
        default_generator.restore(current)


class CheckpointNode(Node):
    """The single node that stands for a checkpointed block in the graph."""

    def __init__(self, fn: Callable, args: tuple, kwargs: dict, rng_state: dict) -> None:
        edges = tuple(
            (a if a.grad_fn is None else (a.grad_fn, a._output_nr))
            if isinstance(a, Tensor) and a.requires_grad
            else None
            for a in args
        )
        super().__init__(edges, (), ())
        self.fn, self.args, self.kwargs, self.rng_state = fn, args, kwargs, rng_state

    @property
    def name(self) -> str:
        return "checkpoint"

    def __repr__(self) -> str:
        return "<CheckpointBackward>"

    def propagate(self, grads: list, create_graph: bool, release: bool) -> list:
        if create_graph:
            raise GraphError(
                "checkpoint: differentiating a checkpointed block twice is not supported"
            )
        if self.args is None:
            raise GraphError(
                "checkpoint: trying to backward through a checkpoint a second time; pass "
                "retain_graph=True to the first backward()"
            )
        inputs = [
            a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
            for a in self.args
        ]
        with _same_random_numbers(self.rng_state), enable_grad():
            outs = self.fn(*inputs, **self.kwargs)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if pairs:
            # Parameters used inside the block receive their .grad here, directly.
            run_backward([o for o, _ in pairs], [g for _, g in pairs], False, False)
        if release:
            self.release()
        return [
            x.grad._array if isinstance(x, Tensor) and x.grad is not None else None for x in inputs
        ]

    def release(self) -> None:
        self.args = None


def _values_in(arg) -> list[Value]:
    """The Values an argument holds: itself, or those inside a list or tuple (at any depth)."""
    if isinstance(arg, Value):
        return [arg]
    if type(arg) in (list, tuple):
        return [v for item in arg for v in _values_in(item)]
    return []


def _fresh(arg):
    """``arg`` with each Value in it replaced by a new leaf of its class holding its number
    (a text's Value subclass stays itself inside the block); lists and tuples are rebuilt."""
    if isinstance(arg, Value):
        return type(arg)(arg.data)
    if type(arg) in (list, tuple) and _values_in(arg):
        return type(arg)(_fresh(item) for item in arg)
    return arg  # passed through as it is (a list without Values stays the same object)


def _checkpoint_values(fn: Callable, args: tuple, kwargs: dict, rng_state: dict, result) -> Value:
    """`checkpoint` on scalar Values: one node, op "checkpoint", whose ``_backward`` closure
    recomputes the block and sends its gradients to the Values among the arguments.
    ``result`` is the block's first run (its graph is dropped: only the number stays)."""
    if not isinstance(result, Value):
        raise TypeError(
            f"checkpoint: a block of Values must return one Value, got {type(result).__name__}"
        )
    inputs = [v for a in (*args, *kwargs.values()) for v in _values_in(a)]
    parents = tuple({id(v): v for v in inputs}.values())
    if not parents:  # a block reading only Values from outside: they order its node
        parents = tuple(v for v in topological_order(result) if not v._prev)
    out = type(result)(result.data, parents, "checkpoint")

    def _backward() -> None:
        leaves, kwarg_leaves = _fresh(args), _fresh(tuple(kwargs.values()))
        with _same_random_numbers(rng_state):
            inner = fn(*leaves, **dict(zip(kwargs, kwarg_leaves)))
        # Value.backward's steps, seeded with out.grad. The order also holds Values the block
        # read from outside (captured, not arguments); the outer backward may still be adding
        # into their grads, so those are put back afterwards: the block's share reaches their
        # ancestors here, through this walk, and only once.
        order = topological_order(inner, leaves=False)
        saved = [node.grad for node in order]
        for node in order:
            node.grad = 0.0
        inner.grad += out.grad
        for node in reversed(order):
            node._backward()
        for node, grad in zip(order, saved):
            node.grad = grad
        for value, leaf in zip(inputs, _values_in((leaves, kwarg_leaves))):
            value.grad += leaf.grad

    out._backward = _backward
    return out


def checkpoint(fn: Callable, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` without storing its intermediate values for backward.

    Backward recomputes the forward (with the same random numbers) and differentiates it.
    Gradients equal the plain run's. Parameters used inside ``fn`` get their ``.grad`` during
    that recomputation, so use it with ``backward()``, not ``autograd.grad``.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> checkpoint(lambda t: (t.exp() * t).sum(), x).backward()
    >>> [round(g, 4) for g in x.grad.tolist()]
    [5.4366, 22.1672]

    On scalar Values ``fn`` returns one Value, and the result is one node (op
    ``"checkpoint"``) whose parents are the Value arguments (positional or keyword, or inside
    lists and tuples); ``fn`` gets new leaves holding their numbers, and everything else
    unchanged.
    Values ``fn`` reads from outside get their gradients too, as parameters do; one made by
    an op passes the block's share straight on to its own inputs, so its ``.grad`` leaves
    that share out. Tensors and Values cannot be mixed in one call.

    >>> x = cr.Value(0.5)
    >>> y = checkpoint(lambda v: ((v * v).tanh() * 3).exp(), x)
    >>> (y * 2).backward()
    >>> y._op, round(x.grad, 4)
    ('checkpoint', 11.7594)
    """
    inputs = (*args, *kwargs.values())
    rng_state = default_generator.snapshot()
    if any(_values_in(a) for a in inputs):
        if any(isinstance(a, Tensor) for a in inputs):
            raise TypeError(
                "checkpoint: the arguments mix Tensors and Values; a checkpointed block runs "
                "on one engine, so pass only Tensors or only Values"
            )
        result = fn(*_fresh(args), **dict(zip(kwargs, _fresh(tuple(kwargs.values())))))
        return _checkpoint_values(fn, args, kwargs, rng_state, result)
    if not state.grad_enabled:
        return fn(*args, **kwargs)
    with no_grad():
        outs = fn(*args, **kwargs)
    if isinstance(outs, Value):  # a block of Values read from outside (no Value arguments)
        return _checkpoint_values(fn, args, kwargs, rng_state, outs)
    is_tuple = isinstance(outs, (tuple, list))
    results = list(outs) if is_tuple else [outs]
    if not all(isinstance(r, Tensor) for r in results):
        got = ", ".join(sorted({type(r).__name__ for r in results if not isinstance(r, Tensor)}))
        raise TypeError(
            f"checkpoint: the block must return a Tensor or a tuple of Tensors (or one Value), "
            f"got {got}"
        )
    node = CheckpointNode(fn, args, kwargs, rng_state)
    node.out_meta = tuple((r.shape, r.dtype) for r in results)
    wrapped = []
    for i, r in enumerate(results):
        t = Tensor._make(r._array, grad_fn=node if r.dtype.kind == "f" else None, output_nr=i)
        wrapped.append(t)
    return type(outs)(wrapped) if is_tuple else wrapped[0]


def checkpoint_sequential(functions: Sequence[Callable], segments: int, x, **kwargs):
    """Run ``functions`` one after another in ``segments`` checkpointed segments.

    Only each segment's input is kept; the last segment runs normally (its activations are
    needed right away), as in PyTorch. With sqrt(n) segments, memory grows like sqrt(n).
    """
    functions = list(functions)
    if not 1 <= segments <= len(functions):
        raise ValueError(f"checkpoint_sequential: segments must be in 1..{len(functions)}, "
                         f"got {segments}")  # fmt: skip
    bounds = np.linspace(0, len(functions), segments + 1).round().astype(int)

    def run(start: int, end: int) -> Callable:
        def segment(t):
            for f in functions[start:end]:
                t = f(t)
            return t

        return segment

    for k in range(segments - 1):
        x = checkpoint(run(bounds[k], bounds[k + 1]), x, **kwargs)
    return run(bounds[-2], bounds[-1])(x)


__all__ = ["checkpoint", "checkpoint_sequential"]
