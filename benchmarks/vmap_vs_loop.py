"""Per-example gradients of a small MLP: vmap(grad(loss)) against a Python loop of grad(loss).

The loop runs the graph once per example (batch-size times the Python overhead of every op);
vmap runs each op once on the whole batch through its batching rule. Both give the same
gradients, one per example and parameter. The ratio printed is vmap time / loop time.
Run: python -m benchmarks.vmap_vs_loop [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import chainrule as cr
from chainrule import func


def _timed(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def mlp_loss(w1, b1, w2, b2, x, target):
    """Cross-entropy of a one-hidden-layer tanh MLP on one example (one-hot ``target``)."""
    h = (x @ w1 + b1).tanh()
    return -((h @ w2 + b2).log_softmax(-1) * target).sum()


def make_problem(batch: int, n_in: int, hidden: int, n_out: int, seed: int = 0):
    """Float64 parameters (w1, b1, w2, b2), inputs and one-hot targets for ``batch`` examples."""
    rng = np.random.default_rng(seed)
    params = [
        cr.tensor(rng.standard_normal(shape) / np.sqrt(shape[0]))
        for shape in [(n_in, hidden), (hidden,), (hidden, n_out), (n_out,)]
    ]
    x = cr.tensor(rng.standard_normal((batch, n_in)))
    target = cr.tensor(np.eye(n_out)[rng.integers(0, n_out, batch)])
    return params, x, target


def run(quick: bool = False) -> list[dict]:
    """Time both ways for a few MLP widths at batch 64; return one row per width."""
    batch, repeats = (8, 1) if quick else (64, 7)
    per_example = func.grad(mlp_loss, argnums=(0, 1, 2, 3))
    vmapped = func.vmap(per_example, in_dims=(None, None, None, None, 0, 0))

    def loop(params, x, target):
        grads = [per_example(*params, x[b], target[b]) for b in range(x.shape[0])]
        return [cr.stack([g[k] for g in grads]) for k in range(len(params))]

    rows = []
    for n_in, hidden, n_out in ((10, 32, 4), (32, 128, 10)):
        params, x, target = make_problem(batch, n_in, hidden, n_out)
        for ours, theirs in zip(vmapped(*params, x, target), loop(params, x, target)):
            np.testing.assert_allclose(
                ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12
            )
        t_vmap = _timed(lambda p=params, x=x, t=target: vmapped(*p, x, t), repeats)
        t_loop = _timed(lambda p=params, x=x, t=target: loop(p, x, t), repeats)
        rows.append({"sizes": f"{n_in}-{hidden}-{n_out}", "batch": batch,
                     "vmap_ms": 1e3 * t_vmap, "loop_ms": 1e3 * t_loop,
                     "vmap_over_loop": t_vmap / t_loop})  # fmt: skip
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 8, one repeat")
    args = parser.parse_args()
    print(f"{'MLP':<10} {'batch':>5} {'vmap ms':>9} {'loop ms':>9} {'vmap/loop':>10}")
    for r in run(args.quick):
        print(f"{r['sizes']:<10} {r['batch']:>5} {r['vmap_ms']:>9.2f} {r['loop_ms']:>9.2f} "
              f"{r['vmap_over_loop']:>10.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
