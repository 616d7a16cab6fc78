"""W1 and W6a: graphs of Python floats, on chainrule's `Value`, micrograd and pure Python.

W1 is a 2-4-1 tanh MLP on three samples (95 scalar ops), forward and backward; W6a is the
backward pass alone through a chain of 1,000,000 ops. The floor is the same arithmetic
written by hand, forward and backward, on plain floats. micrograd's package has no tanh, so
the node its author builds in the lecture that introduced it is added here, in its style.
"""

from __future__ import annotations

import math
import random

import numpy as np

from ..suite import Impl, Target, Workload
from .chain import chain, chain_floor

SAMPLES = [((0.5, -1.0), 1.0), ((-0.3, 0.8), -1.0), ((1.2, 0.1), 0.5)]
HIDDEN = 4
#: Scalar ops per W1 step: per sample 4 neurons x (2 mul, 2 add, tanh), the output neuron
#: (4 mul, 4 add, tanh), the error and its square; then the adds that sum the samples.
W1_OPS = len(SAMPLES) * (HIDDEN * 5 + 9 + 2) + len(SAMPLES) - 1


def initial_weights(seed: int = 0) -> list[float]:
    """The 17 weights of the 2-4-1 net, flat: (w0, w1, b) per hidden unit, then w2, b2."""
    rng = random.Random(seed)
    return [rng.uniform(-1.0, 1.0) for _ in range(HIDDEN * 3 + HIDDEN + 1)]


def mlp_loss(params: list, tanh) -> object:
    """Sum of squared errors of the 2-4-1 tanh MLP on SAMPLES; ``params`` as initial_weights."""
    loss = None
    for (x0, x1), y in SAMPLES:
        hidden = []
        for j in range(HIDDEN):
            w0, w1, b = params[3 * j : 3 * j + 3]
            hidden.append(tanh(b + w0 * x0 + w1 * x1))
        out = params[-1]
        for w, h in zip(params[3 * HIDDEN : 3 * HIDDEN + HIDDEN], hidden):
            out = out + w * h
        err = tanh(out) - y
        loss = err * err if loss is None else loss + err * err
    return loss


# The engines.


def micrograd_tanh(v):
    """tanh as a micrograd node, as micrograd's author wrote it in the lecture."""
    from micrograd.engine import Value

    t = math.tanh(v.data)
    out = Value(t, (v,), "tanh")

    def _backward():
        v.grad += (1 - t**2) * out.grad

    out._backward = _backward
    return out


def _value_class(library: str):
    if library == "chainrule":
        from chainrule import Value

        return Value, lambda v: v.tanh()
    from micrograd.engine import Value

    return Value, micrograd_tanh


def _grads(loss, params) -> tuple:
    loss.backward()
    return loss.data, np.array([p.grad for p in params])


def w1_on(library: str):
    """A W1 step on chainrule's or micrograd's Value: zero grads, forward, backward."""
    value, tanh = _value_class(library)
    params = [value(w) for w in initial_weights()]

    def step():
        for p in params:
            p.grad = 0.0
        return _grads(mlp_loss(params, tanh), params)

    return step


def w1_floor():
    """The W1 step written by hand on floats: forward, then the chain rule backward."""
    params = initial_weights()

    def step():
        grads = [0.0] * len(params)
        w2 = params[3 * HIDDEN : 4 * HIDDEN]
        loss = 0.0
        for (x0, x1), y in SAMPLES:
            hidden = [
                math.tanh(params[3 * j + 2] + params[3 * j] * x0 + params[3 * j + 1] * x1)
                for j in range(HIDDEN)
            ]
            out = params[-1]
            for w, h in zip(w2, hidden):
                out += w * h
            out = math.tanh(out)
            err = out - y
            loss += err * err
            d_pre = 2 * err * (1 - out * out)
            grads[-1] += d_pre
            for j, h in enumerate(hidden):
                grads[3 * HIDDEN + j] += d_pre * h
                d_hidden = d_pre * w2[j] * (1 - h * h)
                grads[3 * j] += d_hidden * x0
                grads[3 * j + 1] += d_hidden * x1
                grads[3 * j + 2] += d_hidden
        return loss, np.array(grads)

    return step


def w6a_on(library: str, n_ops: int):
    """(prepare, backward) for chainrule's or micrograd's Value through an n_ops chain."""
    value, tanh = _value_class(library)
    leaves = [value(0.5), value(1.1), value(0.1)]  # x, a, b as in chain_floor

    def prepare():
        for p in leaves:
            p.grad = 0.0
        return chain(*leaves, n_ops, tanh)

    def backward(out):
        out.backward()
        return out.data, np.array([p.grad for p in leaves])

    return prepare, backward


def workloads(quick: bool) -> list[Workload]:
    """W1 and W6a."""
    n_deep = 3_000 if quick else 1_000_000
    return [
        Workload(
            "W1",
            f"scalar 2-4-1 tanh MLP, {W1_OPS} ops",
            "µs/op",
            1e6 / W1_OPS,
            [
                Impl("pure Python", w1_floor),
                Impl("chainrule", lambda: w1_on("chainrule")),
                Impl("micrograd", lambda: w1_on("micrograd"), module="micrograd"),
            ],
            targets=[Target("chainrule ≤ 0.5× micrograd", 0.5, "micrograd")],
        ),
        Workload(
            "W6a",
            f"scalar backward through {n_deep:,} ops",
            "s/backward",
            1.0,
            [
                Impl("pure Python", lambda: chain_floor(0.5, 1.1, 0.1, n_deep, math.tanh)),
                Impl("chainrule", lambda: w6a_on("chainrule", n_deep)),
                Impl("micrograd", lambda: w6a_on("micrograd", n_deep), module="micrograd"),
            ],
            repeats=3,
            targets=[Target("chainrule < 2 s", 2.0)],
        ),
    ]
