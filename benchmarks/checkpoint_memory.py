"""Peak memory and time of a 64-layer MLP step with and without gradient checkpointing.

Peak traced memory (tracemalloc; NumPy reports its allocations to it) of one forward and
backward pass, for no checkpointing, sqrt(n) and other segment counts. The gradient is taken
with respect to the input and the weights are frozen, so the peak is what checkpointing can
change (activations saved for backward, gradients in flight) and is not hidden under the
weights' own gradients, which every variant stores alike.
Run: python -m benchmarks.checkpoint_memory [--quick]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import chainrule as cr
from chainrule import checkpoint_sequential


def make_layers(depth: int, width: int, seed: int = 0):
    """``depth`` tanh layers of ``width`` units as closures over float32 weights."""
    rng = np.random.default_rng(seed)
    scale = 1 / np.sqrt(width)
    weights = [cr.tensor((rng.standard_normal((width, width)) * scale).astype(np.float32))
               for _ in range(depth)]  # fmt: skip
    return weights, [lambda t, w=w: (t @ w).tanh() for w in weights]


def forward_backward(layers, x, segments: int | None) -> np.ndarray:
    """One forward and backward pass; returns the gradient of the input."""
    x.grad = None
    if segments is None:
        out = x
        for f in layers:
            out = f(out)
    else:
        out = checkpoint_sequential(layers, segments, x)
    out.sum().backward()
    return x.grad.numpy().copy()


def measure(layers, x, segments: int | None, repeats: int) -> tuple[float, float, np.ndarray]:
    """(peak MiB, median seconds, gradient of the input); timing runs untraced."""
    forward_backward(layers, x, segments)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        forward_backward(layers, x, segments)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    grad = forward_backward(layers, x, segments)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, float(np.median(times)), grad


def run(quick: bool = False) -> list[dict]:
    """One row per segment count; the plain run comes first."""
    depth, width, batch = (16, 32, 16) if quick else (64, 256, 256)
    repeats = 1 if quick else 5
    _, layers = make_layers(depth, width)
    x = cr.tensor(np.random.default_rng(1).standard_normal((batch, width)).astype(np.float32),
                  requires_grad=True)  # fmt: skip
    base_mem, base_time, base_grad = measure(layers, x, None, repeats)
    rows = [{"segments": "none", "peak_mib": base_mem, "seconds": base_time,
             "memory_ratio": 1.0, "time_ratio": 1.0}]  # fmt: skip
    for segments in (2, int(np.sqrt(depth)), depth // 2):
        mem, seconds, grad = measure(layers, x, segments, repeats)
        np.testing.assert_allclose(grad, base_grad, rtol=1e-5, atol=1e-6)
        rows.append(
            {
                "segments": segments,
                "peak_mib": mem,
                "seconds": seconds,
                "memory_ratio": mem / base_mem,
                "time_ratio": seconds / base_time,
            }
        )
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes")
    args = parser.parse_args()
    print(f"{'segments':>8} {'peak MiB':>9} {'seconds':>8} {'mem ratio':>9} {'time ratio':>10}")
    for r in run(args.quick):
        print(f"{r['segments']!s:>8} {r['peak_mib']:>9.1f} {r['seconds']:>8.3f} "
              f"{r['memory_ratio']:>9.2f} {r['time_ratio']:>10.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
