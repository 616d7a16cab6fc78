"""Exercise 4: gradient checkpointing on a deep scalar chain, h ← tanh(w_k · h), k = 1..n.

`chainrule.checkpoint` works on Tensors only, so this solution checkpoints Values by segment
recomputation, written out here. The forward pass runs the chain in segments and keeps only
each segment's input number, dropping the segment's graph; backward walks the segments in
reverse, rebuilds one segment's graph from its saved input and backpropagates through it the
gradient that arrived from the segment after it. With n layers in about sqrt(n) segments the
graph held at any moment shrinks from n layers to sqrt(n), for one extra forward pass.
"""

from __future__ import annotations

import math
import random
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import partial

from chainrule import Scalar, count_ops
from chainrule.scalar.value import topological_order

DEPTH = 4096
SEGMENTS = 64


def make_weights(depth: int = DEPTH, seed: int = 0) -> list[Scalar]:
    """One weight Value per layer, uniform in [0.9, 1.1] so the gradient does not vanish."""
    rng = random.Random(seed)
    return [Scalar(rng.uniform(0.9, 1.1)) for _ in range(depth)]


def run_layers(h: Scalar, weights: Sequence[Scalar]) -> Scalar:
    """The chain h ← tanh(w · h) through ``weights``."""
    for w in weights:
        h = (h * w).tanh()
    return h


def plain_backward(x0: float, weights: Sequence[Scalar], count_nodes: bool = False) -> dict:
    """Build the whole chain's graph, then backpropagate: d(out)/dx and the nodes held
    (counted only when asked, as counting walks the graph once more)."""
    x = Scalar(x0)
    out = run_layers(x, weights)
    held = len(topological_order(out)) if count_nodes else None
    out.backward()
    return {"out": out.data, "x_grad": x.grad, "nodes_held": held}


def checkpointed_backward(
    x0: float, weights: Sequence[Scalar], segments: int = SEGMENTS, count_nodes: bool = False
) -> dict:
    """The same gradients, keeping only each segment's input between forward and backward."""
    bounds = [round(k * len(weights) / segments) for k in range(segments + 1)]
    pieces = [weights[a:b] for a, b in zip(bounds, bounds[1:])]
    saved = []  # the number entering each segment: all the forward pass keeps
    h = x0
    for piece in pieces:
        saved.append(h)
        h = run_layers(Scalar(h), piece).data  # the segment's graph is freed here
    out, g, held = h, 1.0, None
    for h_in, piece in zip(reversed(saved), reversed(pieces)):
        x = Scalar(h_in)
        # Chain rule across the cut: d(out)/d(piece) = g · d(piece's output)/d(piece).
        surrogate = run_layers(x, piece) * g
        if count_nodes:
            held = max(held or 0, len(saved) + len(topological_order(surrogate)))
        surrogate.backward()
        g = x.grad
    return {"out": out, "x_grad": g, "nodes_held": held}


def measure(fn: Callable[..., dict], weights: Sequence[Scalar], repeats: int = 3) -> dict:
    """One run of ``fn`` from zeroed weight gradients (its result, the weights' gradients and
    forward op count), then its peak traced memory in bytes and its best time."""
    for w in weights:
        w.grad = 0.0
    with count_ops() as counts:
        result = fn(count_nodes=True)
    weight_grads = [w.grad for w in weights]
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seconds = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        seconds = min(seconds, time.perf_counter() - start)
    return {**result, "weight_grads": weight_grads, "forward_ops": counts.forward_total,
            "peak_bytes": peak, "seconds": seconds}  # fmt: skip


def run(depth: int = DEPTH, segments: int = SEGMENTS, repeats: int = 3) -> dict:
    """Both strategies on the same chain of ``depth`` layers."""
    weights = make_weights(depth)
    plain = partial(plain_backward, 1.0, weights)
    checkpointed = partial(checkpointed_backward, 1.0, weights, segments)
    return {
        "plain": measure(plain, weights, repeats),
        "checkpointed": measure(checkpointed, weights, repeats),
    }


def main() -> None:
    r = run()
    print(f"chain of {DEPTH} layers tanh(w·h), {SEGMENTS} checkpointed segments")
    print(f"{'':14}{'nodes held':>11}{'peak memory':>14}{'forward ops':>13}{'time':>10}")
    for name, m in r.items():
        print(f"{name:14}{m['nodes_held']:>11}{m['peak_bytes'] / 1e6:>11.2f} MB"
              f"{m['forward_ops']:>13}{m['seconds'] * 1e3:>8.1f} ms")  # fmt: skip
    plain, ckpt = r["plain"], r["checkpointed"]
    print(f"memory {plain['peak_bytes'] / ckpt['peak_bytes']:.0f}x smaller, "
          f"time {ckpt['seconds'] / plain['seconds']:.2f}x longer; "
          f"d(out)/dx {plain['x_grad']:.6e} both ways")  # fmt: skip


if __name__ == "__main__":
    main()
