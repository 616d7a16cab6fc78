"""An optimizer step one parameter at a time against the same step in packs (small parameters'
values, gradients and state laid end to end, each formula line once per pack), for every
elementwise optimizer, on two sets of parameters: 20 of mixed sizes (about 1M floats) and 120
small ones (about 60K floats, where the fixed cost of each NumPy call dominates).
Run: python -m benchmarks.optim_group [--quick] [--dtype float32|float64]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import chainrule as cr
from chainrule import optim

OPTIMIZERS = [
    ("SGD", {"lr": 0.01}),
    ("SGD", {"lr": 0.01, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}),
    ("RMSprop", {"lr": 0.01, "centered": True, "momentum": 0.9}),
    ("Adagrad", {"lr": 0.01}),
    ("Adadelta", {}),
    ("Adam", {"lr": 1e-3}),
    ("AdamW", {"lr": 1e-3, "amsgrad": True}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("RAdam", {}),
    ("ASGD", {}),
    ("Rprop", {}),
]

# 20 parameters of a few layers' weights and biases (1,076,122 floats), and 120 small ones.
MIXED = [(256, 256), (256,), (512, 256), (512,), (256, 512), (256,)] * 3 + [(300, 300), (10,)]
SMALL = [(16, 32), (32,), (32, 16), (16,)] * 30


def _params(shapes: list[tuple], dtype: np.dtype, rng: np.random.Generator) -> list[cr.Tensor]:
    params = [cr.nn.Parameter(cr.tensor(rng.normal(size=s).astype(dtype))) for s in shapes]
    for p in params:
        p.grad = cr.tensor(rng.normal(size=p.shape).astype(dtype) * 1e-3)
    return params


def _median_step(optimizer: optim.Optimizer, steps: int) -> float:
    optimizer.step()  # the state is made (and the packs laid out) outside the timing
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    args = parser.parse_args(argv)
    dtype, steps = np.dtype(args.dtype), 10 if args.quick else 40
    print(f"per-step time in ms ({args.dtype}); ratio = packs / one at a time")
    for label, shapes in [("20 mixed (~1M floats)", MIXED), ("120 small (~60K floats)", SMALL)]:
        total = sum(int(np.prod(s)) for s in shapes)
        print(f"\n{label}: {len(shapes)} parameters, {total} floats")
        print(f"{'optimizer':<34}{'one at a time':>14}{'packs':>10}{'ratio':>8}")
        for name, options in OPTIMIZERS:
            rng = np.random.default_rng(0)
            best = {True: np.inf, False: np.inf}
            for _ in range(3):  # alternate the two paths, keep each one's best median
                for packed in (False, True):
                    optimizer = getattr(optim, name)(_params(shapes, dtype, rng), **options)
                    optimizer._pack_small_params = packed
                    best[packed] = min(best[packed], _median_step(optimizer, steps))
            title = f"{name} {options}" if options else name
            print(
                f"{title[:33]:<34}{best[False] * 1e3:>14.3f}{best[True] * 1e3:>10.3f}"
                f"{best[True] / best[False]:>8.2f}"
            )


if __name__ == "__main__":
    main()
