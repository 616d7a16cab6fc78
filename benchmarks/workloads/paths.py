"""W11: single ops that real programs lean on, each forward and backward against PyTorch on
one thread (the floor), so a slow path in the engine shows as its own ratio: nn.Linear on a
3-D input (contiguous, and a transposed view), pow(x, 3.0) as GPT-2's GELU writes it, and
nn.Embedding's backward.
"""

from __future__ import annotations

import numpy as np

from ..suite import Impl, Target, Workload


def _library(on_chainrule: bool):
    if on_chainrule:
        import chainrule

        return chainrule
    import torch

    return torch


def _grads(tensors) -> list[np.ndarray]:
    return [t.grad.numpy().copy() for t in tensors]


def linear_step(on_chainrule: bool, shape: tuple, transposed: bool, features: int = 64):
    """nn.Linear(in, ``features``) on a float32 input of ``shape`` (batch, tokens, in), sum
    of the outputs, backward to the input, weight and bias. ``transposed``: the input is a
    (tokens, batch, in) array seen as (batch, tokens, in), as a sequence-first model hands it."""
    lib = _library(on_chainrule)
    rng = np.random.default_rng(0)
    batch, tokens, width = shape
    if transposed:
        x_array = rng.standard_normal((tokens, batch, width)).astype(np.float32)
    else:
        x_array = rng.standard_normal(shape).astype(np.float32)
    layer = lib.nn.Linear(width, features)
    with lib.no_grad():
        layer.weight.copy_(
            lib.tensor(rng.uniform(-0.03, 0.03, (features, width)), dtype=lib.float32)
        )
        layer.bias.copy_(lib.tensor(rng.uniform(-0.03, 0.03, features), dtype=lib.float32))
    x = lib.from_numpy(x_array).requires_grad_()

    def step():
        layer.zero_grad()
        x.grad = None
        out = layer(x.transpose(0, 1) if transposed else x)
        loss = out.sum()
        loss.backward()
        return (loss.item(), *_grads((x, layer.weight, layer.bias)))

    return step


def pow_step(on_chainrule: bool, shape: tuple, exponent: float = 3.0):
    """x ** ``exponent`` on a float32 tensor of ``shape`` and its backward (GELU's cube)."""
    lib = _library(on_chainrule)
    x = lib.from_numpy(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    x.requires_grad_()
    g = lib.ones(shape)

    def step():
        x.grad = None
        out = lib.pow(x, exponent)
        out.backward(g)
        return out.detach().numpy().copy(), *_grads((x,))

    return step


def embedding_step(on_chainrule: bool, vocab: int, width: int, indices_shape: tuple):
    """nn.Embedding(vocab, width) looked up at random indices (repeats included), the sum of
    the rows times fixed weights, backward to the table."""
    lib = _library(on_chainrule)
    rng = np.random.default_rng(2)
    table = lib.nn.Embedding(vocab, width)
    with lib.no_grad():
        table.weight.copy_(lib.tensor(rng.standard_normal((vocab, width)), dtype=lib.float32))
    indices = lib.tensor(rng.integers(0, vocab, indices_shape))
    weights = lib.tensor(rng.standard_normal((*indices_shape, width)), dtype=lib.float32)

    def step():
        table.zero_grad()
        loss = (table(indices) * weights).sum()
        loss.backward()
        return (loss.item(), *_grads((table.weight,)))

    return step


def _pair(make) -> list[Impl]:
    """PyTorch on one thread (the floor), then chainrule, from ``make(on_chainrule)``."""
    return [
        Impl("pytorch", lambda: make(False), "torch", "torch==2.13.0", torch_threads=1),
        Impl("chainrule", lambda: make(True)),
    ]


def workloads(quick: bool) -> list[Workload]:
    """W11a to W11d."""
    linear_shape = (4, 8, 64) if quick else (32, 16, 1024)
    pow_shape = (4, 8, 16) if quick else (16, 32, 256)
    vocab, width, indices = (50, 8, (4, 8)) if quick else (1000, 64, (32, 16))
    b, t, n = linear_shape
    rows = [
        ("W11a", f"nn.Linear({n}, 64) on ({b}, {t}, {n}) float32",
         lambda on: linear_step(on, linear_shape, transposed=False)),
        ("W11b", f"nn.Linear({n}, 64) on a transposed ({t}, {b}, {n}) input",
         lambda on: linear_step(on, linear_shape, transposed=True)),
        ("W11c", f"pow(x, 3.0) on {pow_shape} float32", lambda on: pow_step(on, pow_shape)),
        ("W11d", f"nn.Embedding({vocab}, {width}) at {indices} indices",
         lambda on: embedding_step(on, vocab, width, indices)),
    ]  # fmt: skip
    return op_rows(rows, "ms/step", 1e3, tolerance=1e-5, at_most=1.2)


def op_rows(rows: list, unit: str, factor: float, tolerance: float, at_most: float,
            min_time: float = 0.05) -> list[Workload]:  # fmt: skip
    """A workload per ``(key, title, make)``: ``make(on_chainrule)`` builds one step of an op,
    forward and backward, on PyTorch (one thread, the floor) and on chainrule, whose ratio is
    to stay at most ``at_most``."""
    return [
        Workload(
            key,
            f"{title}, forward and backward",
            unit,
            factor,
            _pair(make),
            rtol=tolerance,
            atol=tolerance,
            min_time=min_time,
            targets=[Target(f"chainrule ≤ {at_most}× pytorch", at_most, "pytorch")],
        )
        for key, title, make in rows
    ]
