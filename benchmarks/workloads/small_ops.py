"""W12: the small ops the corpus's programs are made of, one row each, forward and backward
against PyTorch on one thread: at the sizes those programs run them (a few thousand elements),
what an op costs is mostly the engine's own work per op, which this family watches (issue 35).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..suite import Workload
from .paths import _grads, _library, op_rows


def _leaf(lib, rng, shape: tuple, scale: float = 1.0):
    """A float32 leaf of ``shape`` from ``rng``, requiring grad."""
    array = (rng.standard_normal(shape) * scale).astype(np.float32)
    return lib.tensor(array).requires_grad_()


def op_step(on_chainrule: bool, build: Callable):
    """One op's forward, the sum of its output times fixed weights, and the backward to its
    leaves; ``build(lib, F, rng)`` gives (the op as a function of no arguments, its leaves)."""
    lib = _library(on_chainrule)
    rng = np.random.default_rng(12)
    run, leaves = build(lib, lib.nn.functional, rng)
    shape = tuple(run().shape)
    weights = lib.tensor(rng.standard_normal(shape).astype(np.float32))

    def step():
        for leaf in leaves:
            leaf.grad = None
        loss = (run() * weights).sum()
        loss.backward()
        return (loss.item(), *_grads(leaves))

    return step


def _linear(lib, F, rng):
    x, w, b = _leaf(lib, rng, (32, 64)), _leaf(lib, rng, (128, 64), 0.1), _leaf(lib, rng, (128,))
    return (lambda: F.linear(x, w, b)), [x, w, b]


def _cross_entropy(lib, F, rng):
    x = _leaf(lib, rng, (32, 64))
    target = lib.tensor(rng.integers(0, 64, 32))
    return (lambda: F.cross_entropy(x, target).reshape(1)), [x]


def _unary(name: str, shape: tuple = (32, 64)):
    def build(lib, F, rng):
        x = _leaf(lib, rng, shape)
        return (lambda: getattr(F, name)(x)), [x]

    return build


def _along_last(name: str):
    def build(lib, F, rng):
        x = _leaf(lib, rng, (32, 64))
        return (lambda: getattr(F, name)(x, -1)), [x]

    return build


def _layer_norm(lib, F, rng):
    x, w, b = _leaf(lib, rng, (32, 64)), _leaf(lib, rng, (64,)), _leaf(lib, rng, (64,))
    return (lambda: F.layer_norm(x, (64,), w, b)), [x, w, b]


def _gates(lib, F, rng):
    gates, c = _leaf(lib, rng, (32, 192)), _leaf(lib, rng, (32, 64))

    def run():
        i, f, g = gates.chunk(3, 1)
        return lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)

    return run, [gates, c]


def _unbind(lib, F, rng):
    x = _leaf(lib, rng, (24, 16, 48))
    return (lambda: lib.stack([t * t for t in x.unbind(0)], 1)), [x]


def _embedding(lib, F, rng):
    table, index = _leaf(lib, rng, (100, 64)), lib.tensor(rng.integers(0, 100, (32, 16)))
    return (lambda: F.embedding(index, table)), [table]


def _conv(lib, F, rng):
    x, w = _leaf(lib, rng, (8, 16, 14, 14)), _leaf(lib, rng, (16, 16, 3, 3), 0.1)
    return (lambda: F.conv2d(x, w, padding=1)), [x, w]


def _batch_norm(lib, F, rng):
    x, w, b = _leaf(lib, rng, (8, 16, 14, 14)), _leaf(lib, rng, (16,)), _leaf(lib, rng, (16,))
    mean, var = lib.zeros(16), lib.ones(16)
    return (lambda: F.batch_norm(x, mean, var, w, b, training=True)), [x, w, b]


def _pool(name: str, *args):
    def build(lib, F, rng):
        x = _leaf(lib, rng, (8, 16, 14, 14))
        return (lambda: getattr(F, name)(x, *args)), [x]

    return build


def _recurrent(kind: str):
    def build(lib, F, rng):
        lib.manual_seed(0)
        layer = getattr(lib.nn, kind)(16, 48, batch_first=True)
        x = _leaf(lib, rng, (16, 24, 16))
        return (lambda: layer(x)[0]), [x, *layer.parameters()]

    return build


#: (key, what, build): the ops, at the sizes of the corpus's programs.
OPS = [
    ("W12a", "F.linear (32, 64) -> 128", _linear),
    ("W12b", "F.cross_entropy (32, 64), class targets", _cross_entropy),
    ("W12c", "F.softmax (32, 64)", _along_last("softmax")),
    ("W12d", "F.log_softmax (32, 64)", _along_last("log_softmax")),
    ("W12e", "F.layer_norm (32, 64)", _layer_norm),
    ("W12f", "F.gelu (32, 64)", _unary("gelu")),
    ("W12g", "an LSTM cell's gates: chunk, sigmoid, tanh (32, 192)", _gates),
    ("W12h", "unbind (24, 16, 48), then stack", _unbind),
    ("W12i", "F.embedding (100, 64) at (32, 16)", _embedding),
    ("W12j", "F.conv2d (8, 16, 14, 14), 3x3, padding 1", _conv),
    ("W12k", "F.batch_norm (8, 16, 14, 14), training", _batch_norm),
    ("W12l", "F.max_pool2d (8, 16, 14, 14), 2", _pool("max_pool2d", 2)),
    ("W12m", "F.adaptive_avg_pool2d (8, 16, 14, 14) -> 1", _pool("adaptive_avg_pool2d", 1)),
    ("W12n", "nn.LSTM(16, 48) over (16, 24, 16)", _recurrent("LSTM")),
    ("W12o", "nn.GRU(16, 48) over (16, 24, 16)", _recurrent("GRU")),
]


def workloads(quick: bool) -> list[Workload]:
    """W12a to W12o (the same sizes with ``quick``: they are small already)."""
    rows = [(key, title, lambda on, build=build: op_step(on, build)) for key, title, build in OPS]
    return op_rows(rows, "µs/step", 1e6, tolerance=1e-4, at_most=1.5,
                   min_time=0.02 if quick else 0.05)  # fmt: skip
