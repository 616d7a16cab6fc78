"""Gradient checkpointing: keep only a block's inputs, recompute its forward during backward.

Trades one extra forward pass for not storing the block's intermediate activations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ._tensor import Tensor
from .autograd import Node, enable_grad, no_grad, run_backward, state
from .errors import GraphError
from .random import default_generator


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

    def _backward(self, grads: list, create_graph: bool, release: bool) -> list:
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
        generator = default_generator().bit_generator
        current = generator.state
        generator.state = self.rng_state  # dropout inside the block draws the same masks
        try:
            with enable_grad():
                outs = self.fn(*inputs, **self.kwargs)
        finally:
            generator.state = current
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if pairs:
            # Parameters used inside the block receive their .grad here, directly.
            run_backward([o for o, _ in pairs], [g for _, g in pairs], False, False)
        if release:
            self.release()
        return [
            x.grad.data if isinstance(x, Tensor) and x.grad is not None else None for x in inputs
        ]

    def release(self) -> None:
        self.args = None


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
    """
    if not state.grad_enabled:
        return fn(*args, **kwargs)
    rng_state = default_generator().bit_generator.state
    with no_grad():
        outs = fn(*args, **kwargs)
    is_tuple = isinstance(outs, (tuple, list))
    results = list(outs) if is_tuple else [outs]
    node = CheckpointNode(fn, args, kwargs, rng_state)
    node.out_meta = tuple((r.shape, r.dtype) for r in results)
    wrapped = []
    for i, r in enumerate(results):
        t = Tensor._make(r.data, grad_fn=node if r.dtype.kind == "f" else None, output_nr=i)
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
