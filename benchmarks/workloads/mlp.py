"""W3 and W4: one SGD training step of a multilayer perceptron, on every tensor engine.

W3 is small and float64 (64x2 -> 16 tanh -> 1, mean squared error), so per-op overhead
still shows; W4 is medium and float32 (784-512-256-10 ReLU, batch 256, softmax cross-entropy),
so the matrix products dominate and an engine can only lose by copying or upcasting. The
floor is forward and backward written by hand in NumPy. W8 reuses W4's network.
"""

from __future__ import annotations

import numpy as np

from ..suite import Impl, Target, Workload
from . import jax_steps
from .compiled import COMPILED
from .engines import Engine, impls, train_step
from .jax_steps import jax_impl

W3_LR, W4_LR = 0.1, 0.01


def init_params(sizes: tuple[int, ...], dtype, seed: int = 0) -> list[np.ndarray]:
    """[w1, b1, w2, b2, ...] for layers of ``sizes``: He-scaled normal weights, zero biases."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        params.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(dtype))
        params.append(np.zeros(fan_out, dtype))
    return params


def layers(params: list, act) -> list:
    """One function per layer, ``act(t @ w + b)``; the last layer has no activation."""
    n = len(params) // 2

    def layer(w, b, last: bool):
        return (lambda t: t @ w + b) if last else (lambda t: act(t @ w + b))

    return [layer(params[2 * i], params[2 * i + 1], i == n - 1) for i in range(n)]


# W3: 64x2 -> 16 tanh -> 1, MSE, float64.


def w3_data(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (64, 2))
    return x, np.sin(3 * x[:, :1]) * x[:, 1:]


def w3_step(engine: Engine):
    x_array, y_array = w3_data()
    x, y = engine.const(x_array), engine.const(y_array)
    params = [engine.leaf(p) for p in init_params((2, 16, 1), np.float64)]

    def loss_fn(w1, b1, w2, b2):
        d = engine.tanh(x @ w1 + b1) @ w2 + b2 - y
        return (d * d).mean()

    update = engine.sgd(params, W3_LR)
    return lambda: train_step(engine, loss_fn, params, update)


def w3_jax():
    """W3 in ``jax.numpy``, jitted with its gradient and update."""
    x, y = w3_data()

    def loss_fn(params, jnp):
        w1, b1, w2, b2 = params
        d = jnp.tanh(x @ w1 + b1) @ w2 + b2 - y
        return jnp.mean(d * d)

    return jax_steps.sgd_step(loss_fn, init_params((2, 16, 1), np.float64), W3_LR)


def w3_floor():
    x, y = w3_data()
    w1, b1, w2, b2 = init_params((2, 16, 1), np.float64)

    def step():
        h = np.tanh(x @ w1 + b1)
        d = h @ w2 + b2 - y
        loss = np.mean(d * d)
        g_out = (2 / d.size) * d
        g_pre = (g_out @ w2.T) * (1 - h * h)
        grads = (x.T @ g_pre, g_pre.sum(0), h.T @ g_out, g_out.sum(0))
        for p, g in zip((w1, b1, w2, b2), grads):
            p -= W3_LR * g
        return (loss, *grads)

    return step


# W4: 784-512-256-10 ReLU, softmax cross-entropy, float32.


def w4_sizes(quick: bool) -> tuple[tuple[int, ...], int]:
    """(layer sizes, batch)."""
    return ((64, 32, 16, 10), 32) if quick else ((784, 512, 256, 10), 256)


def w4_data(sizes: tuple[int, ...], batch: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    return x, rng.integers(0, sizes[-1], batch)


def w4_loss(engine: Engine, sizes: tuple[int, ...], batch: int, run_layers=None):
    """(loss_fn, params) of W4 on ``engine``; ``run_layers(functions, x)`` (default: one
    after another) lets W8 checkpoint them."""
    x_array, labels_array = w4_data(sizes, batch)
    x, labels = engine.const(x_array), engine.const(labels_array)
    params = [engine.leaf(p) for p in init_params(sizes, np.float32)]

    def loss_fn(*params):
        functions = layers(params, engine.relu)
        if run_layers is not None:
            return engine.cross_entropy(run_layers(functions, x), labels)
        h = x
        for f in functions:
            h = f(h)
        return engine.cross_entropy(h, labels)

    return loss_fn, params


def w4_step(engine: Engine, sizes: tuple[int, ...], batch: int, run_layers=None):
    loss_fn, params = w4_loss(engine, sizes, batch, run_layers)
    update = engine.sgd(params, W4_LR)
    return lambda: train_step(engine, loss_fn, params, update)


def w4_floor(sizes: tuple[int, ...], batch: int):
    x, labels = w4_data(sizes, batch)
    params = init_params(sizes, np.float32)
    rows = np.arange(batch)

    def gradients():
        activations = [x]
        for i in range(0, len(params) - 2, 2):
            activations.append(np.maximum(activations[-1] @ params[i] + params[i + 1], 0))
        logits = activations[-1] @ params[-2] + params[-1]
        shifted = logits - logits.max(1, keepdims=True)
        log_p = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
        loss = -log_p[rows, labels].mean()
        g = np.exp(log_p)  # softmax - one_hot, over the batch
        g[rows, labels] -= 1
        g /= batch
        grads = []
        for i in range(len(params) - 2, -1, -2):
            h = activations[i // 2]
            grads[:0] = [h.T @ g, g.sum(0)]
            if i:
                g = (g @ params[i].T) * (h > 0)
        return loss, grads

    def step():
        loss, grads = gradients()  # the activations are freed before the update, as in W8
        for p, grad in zip(params, grads):
            p -= W4_LR * grad
        return (loss, *grads)

    return step


def workloads(quick: bool) -> list[Workload]:
    """W3 and W4."""
    sizes, batch = w4_sizes(quick)
    shape = "-".join(map(str, sizes))
    return [
        Workload(
            "W3",
            "small MLP step 64x2-16-1 tanh, MSE, float64",
            "ms/step",
            1e3,
            [Impl("numpy", w3_floor), *impls(w3_step, compiled=True), jax_impl(w3_jax)],
            rtol=1e-8,
            targets=[
                Target("chainrule ≤ 2× numpy", 2.0, "numpy"),
                Target("chainrule compiled ≤ 1.3× numpy", 1.3, "numpy", impl=COMPILED),
                Target("chainrule compiled < jax.jit", 1.0, "jax.jit", impl=COMPILED),
            ],
        ),
        Workload(
            "W4",
            f"medium MLP step {shape} ReLU, batch {batch}, float32",
            "ms/step",
            1e3,
            [
                Impl("numpy", lambda: w4_floor(sizes, batch)),
                *impls(
                    lambda engine: w4_step(engine, sizes, batch),
                    torch_threads=(1, 2),
                    compiled=True,
                ),
            ],
            rtol=1e-4,
            atol=1e-6,
            targets=[
                Target("chainrule ≤ 1.15× numpy", 1.15, "numpy"),
                Target("chainrule keeps float32", dtype="float32"),
                Target("chainrule compiled ≤ 1× numpy", 1.0, "numpy", impl=COMPILED),
            ],
        ),
    ]
