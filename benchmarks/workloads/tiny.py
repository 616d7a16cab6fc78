"""W2 and W6b: a chain of elementwise ops on shape (4,) tensors, on every tensor engine.

W2 times forward and backward through 1,000 ops: with four numbers per op, this is the
engine's per-op overhead, the cost that dominates small models. Its last row, the bare
tape (`benchmarks.workloads.bare`), is the least any Python tape engine pays per op.
W6b builds a 100,000-op chain untimed and times the backward pass alone. x, a and b all
need gradients.
"""

from __future__ import annotations

import numpy as np

from ..suite import Impl, Target, Workload
from . import jax_steps
from .bare import bare_engine
from .chain import chain, chain_floor
from .compiled import COMPILED
from .engines import Engine, impls
from .jax_steps import jax_impl

X = np.array([-0.8, -0.1, 0.4, 0.9])
A = np.array([0.9, 1.0, 1.1, 1.2])
B = np.array([0.1, -0.05, 0.02, 0.2])


def _record(engine: Engine, n_ops: int):
    """(prepare, backward) on ``engine``: prepare records the chain, backward differentiates."""
    leaves = [engine.leaf(v) for v in (X, A, B)]

    def loss_fn(x, a, b):
        return chain(x, a, b, n_ops, engine.tanh).sum()

    def backward(run):
        loss, grads = run()
        return loss, engine.stack(grads)

    return lambda: engine.record(loss_fn, leaves), backward


def forward_backward(engine: Engine, n_ops: int):
    """W2's step: record the chain and differentiate it, both timed."""
    prepare, backward = _record(engine, n_ops)
    return lambda: backward(prepare())


def floor(n_ops: int, split: bool):
    """The chain by hand in NumPy; W2 times both passes, W6b only the backward."""
    prepare, backward = chain_floor(X, A, B, n_ops, np.tanh)
    return (prepare, backward) if split else (lambda: backward(prepare()))


def workloads(quick: bool) -> list[Workload]:
    """W2 and W6b."""
    n_w2 = 300 if quick else 1_000
    n_deep = 3_000 if quick else 100_000
    per_op = [
        Target("chainrule ≤ 1× pytorch", 1.0, "pytorch"),
        Target("chainrule ≤ 0.2× autograd", 0.2, "autograd (HIPS)"),
        Target("chainrule ≤ 0.2× mygrad", 0.2, "mygrad"),
        Target("chainrule compiled ≤ 1.5× numpy", 1.5, "numpy", impl=COMPILED),
        Target("chainrule compiled ≤ 0.8× numpy (fused)", 0.8, "numpy", impl=COMPILED),
    ]
    return [
        Workload(
            "W2",
            f"{n_w2:,} elementwise ops on (4,) tensors",
            "µs/op",
            1e6 / n_w2,
            [
                Impl("numpy", lambda: floor(n_w2, split=False)),
                *impls(lambda engine: forward_backward(engine, n_w2), compiled=True),
                jax_impl(lambda: jax_steps.chain_step(X, A, B, n_w2)),
                Impl("bare tape", lambda: forward_backward(bare_engine(), n_w2)),
            ],
            targets=per_op,
        ),
        Workload(
            "W6b",
            f"tensor backward through {n_deep:,} ops",
            "s/backward",
            1.0,
            [
                Impl("numpy", lambda: floor(n_deep, split=True)),
                *impls(lambda engine: _record(engine, n_deep)),
            ],
            repeats=3,
        ),
    ]
