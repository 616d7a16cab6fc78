"""JAX as a peer: W2's chain and W3's SGD step written in ``jax.numpy`` under ``jax.jit``.

Each step is the whole unit of work in one jitted function (the loss, ``jax.value_and_grad``
and, for W3, the update), on the CPU and in float64 like the floor, so its values are
checked against the floor's with the workload's tolerance. The first call compiles (the
row's compile cost); ``jax.block_until_ready`` makes each timed call wait for its results.
"""

from __future__ import annotations

import os

import numpy as np

from ..suite import Impl
from .chain import chain

#: What to install (the "bench" extra pins 0.10.2 on Python 3.11, 0.12.0.1 from 3.12 on).
PIP = "jax jaxlib"


def jax_impl(build) -> Impl:
    """The "jax.jit" row: ``build`` imports JAX; its first call compiles."""
    return Impl("jax.jit", build, "jax", PIP, warmup=1)


def _jax():
    """JAX on the CPU with float64 arrays enabled (the W2 and W3 floors are float64)."""
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def chain_step(x: np.ndarray, a: np.ndarray, b: np.ndarray, n_ops: int):
    """W2: the chain's sum and its gradient with respect to x, a and b, stacked."""
    jax, jnp = _jax()

    def loss(x, a, b):
        return chain(x, a, b, n_ops, jnp.tanh).sum()

    value_and_grad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    args = [jnp.asarray(v) for v in (x, a, b)]

    def step():
        value, grads = jax.block_until_ready(value_and_grad(*args))
        return np.asarray(value), np.stack([np.asarray(g) for g in grads])

    return step


def sgd_step(loss_fn, params: list[np.ndarray], lr: float):
    """One SGD step of ``loss_fn(params, jnp)``, jitted: returns the loss and the gradients
    (taken before the update), as the eager engines do; the parameters are updated."""
    jax, jnp = _jax()

    @jax.jit
    def train(params):
        value, grads = jax.value_and_grad(lambda ps: loss_fn(ps, jnp))(params)
        return [p - lr * g for p, g in zip(params, grads)], value, grads

    state = [[jnp.asarray(p) for p in params]]

    def step():
        state[0], value, grads = jax.block_until_ready(train(state[0]))
        return (np.asarray(value), *(np.asarray(g) for g in grads))

    return step
