"""Forward mode (jacfwd) against reverse mode (jacrev) on tall and wide functions.

A function R^n -> R^m costs forward mode n passes (one per input) and reverse mode m passes
(one per output). Tall functions (m >> n) favour forward mode, wide ones (n >> m) reverse.
The jacrev column runs one backward pass per output (``chunk_size=1``); the last column is
jacrev's default, all rows in one batched pass (less Python overhead, the same arithmetic).
Run: python -m benchmarks.forward_vs_reverse [--quick]
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


def make_function(n_in: int, n_out: int, seed: int = 0):
    """tanh(A @ x) with A of shape (n_out, n_in): R^n_in -> R^n_out."""
    a = cr.tensor(np.random.default_rng(seed).standard_normal((n_out, n_in)) / np.sqrt(n_in))
    return lambda x: (a @ x).tanh()


def run(quick: bool = False) -> list[dict]:
    """Time jacfwd and jacrev on a tall and a wide function; return one row per shape."""
    small, large = (4, 32) if quick else (8, 256)
    repeats = 1 if quick else 5
    rows = []
    for label, n_in, n_out in (("tall", small, large), ("wide", large, small)):
        f = make_function(n_in, n_out)
        x = cr.tensor(np.linspace(-1, 1, n_in))
        forward = func.jacfwd(f)(x)
        # chunk_size=1: one backward pass per output, the cost the comparison is about
        reverse = func.jacrev(f, chunk_size=1)(x)
        np.testing.assert_allclose(forward.numpy(), reverse.numpy(), rtol=1e-10, atol=1e-12)
        t_fwd = _timed(lambda f=f, x=x: func.jacfwd(f)(x), repeats)
        t_rev = _timed(lambda f=f, x=x: func.jacrev(f, chunk_size=1)(x), repeats)
        t_batched = _timed(lambda f=f, x=x: func.jacrev(f)(x), repeats)
        rows.append({"function": label, "inputs": n_in, "outputs": n_out,
                     "jacfwd_ms": 1e3 * t_fwd, "jacrev_ms": 1e3 * t_rev,
                     "jacrev_batched_ms": 1e3 * t_batched,
                     "fwd_over_rev": t_fwd / t_rev})  # fmt: skip
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repeat")
    args = parser.parse_args()
    print(f"{'function':<8} {'n in':>5} {'n out':>6} {'jacfwd ms':>10} {'jacrev ms':>10} "
          f"{'fwd/rev':>8} {'batched jacrev ms':>18}")  # fmt: skip
    for r in run(args.quick):
        print(f"{r['function']:<8} {r['inputs']:>5} {r['outputs']:>6} {r['jacfwd_ms']:>10.2f} "
              f"{r['jacrev_ms']:>10.2f} {r['fwd_over_rev']:>8.2f} "
              f"{r['jacrev_batched_ms']:>18.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
